//! The class reference: Godot's own API description, from the project's Godot binary.
//!
//! `godot --headless --doctool <dir>` writes one XML page per class (methods with
//! signatures, properties, signals, constants and enums). The server runs it once per
//! engine version, under the supervisor, into a fresh private folder of its state dir
//! (doctool erases the doc folders of its target, so never anywhere else), parses the
//! pages (`godot_mcp_formats::classdoc`) into one compact JSON cache
//! `classref/<version>.json`, and keeps the parsed table in memory: a lookup after the
//! first is a map access.
//!
//! Descriptions: a bare `--doctool` writes every `<description>` empty (Godot merges
//! descriptions only from XML already in its target, and the compiled-in ones are not
//! exposed to it), so the answers carry none and say so (`descriptions: false`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use godot_mcp_formats::classdoc::{ClassDoc, parse_class_xml};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{Ended, LaunchSpec};
use crate::safety::{EffectKind, SafetyClass, Toolset, find_godot_binary};
use crate::state::AppState;
use crate::tools::{CallFlags, ToolDef, ToolMeta, ToolResult};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "get_class_reference",
                title: "Godot class reference",
                description: "A Godot class's API from the engine (--doctool): inheritance \
                    chain, method signatures, properties with types and defaults, signals, \
                    constants and enums. `member` filters by name.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::ClassRef,
                effect: EffectKind::ProcessLaunch,
            },
            get_class_reference,
        ),
        ToolDef::new(
            ToolMeta {
                name: "search_class_reference",
                title: "Search the class reference",
                description: "Search Godot class, method, property, signal and constant \
                    names (case-insensitive substring); exact and prefix matches first, paged.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::ClassRef,
                effect: EffectKind::ProcessLaunch,
            },
            search_class_reference,
        ),
    ]
}

/// Bumped when the cache's shape changes, so an old cache is rebuilt, not misread.
const CACHE_FORMAT: u32 = 1;
/// Longest a doctool run may take (it takes ~3 s).
const DOCTOOL_TIMEOUT: Duration = Duration::from_secs(120);
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// Every class of one engine version.
#[derive(Debug, Serialize, Deserialize)]
pub struct ClassDb {
    format: u32,
    /// `godot --version`, e.g. `4.4.1.stable.official.49a5bc7b6`.
    pub version: String,
    pub classes: BTreeMap<String, ClassDoc>,
}

impl ClassDb {
    /// Parse every class page under `dir` (recursively: doc/classes, modules/*/doc_classes,
    /// platform/*/doc_classes).
    pub fn from_doctool_dir(version: String, dir: &Path) -> Result<Self, String> {
        let mut classes = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "xml") {
                    let text =
                        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                    let class =
                        parse_class_xml(&text).map_err(|e| format!("{}: {e}", p.display()))?;
                    classes.insert(class.name.clone(), class);
                }
            }
        }
        if classes.is_empty() {
            return Err(format!("no class pages under {}", dir.display()));
        }
        Ok(Self {
            format: CACHE_FORMAT,
            version,
            classes,
        })
    }

    /// `class` and its bases, nearest first.
    pub fn chain(&self, class: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = self.classes.get(class).and_then(|c| c.inherits.clone());
        while let Some(name) = next {
            if out.contains(&name) || out.len() > 64 {
                break; // a cycle would be a broken cache; never loop on it
            }
            next = self.classes.get(&name).and_then(|c| c.inherits.clone());
            out.push(name);
        }
        out
    }
}

/// The loaded table, with the binary it came from (a different binary reloads).
struct Loaded {
    binary: (PathBuf, u64, Option<std::time::SystemTime>),
    db: Arc<ClassDb>,
}

/// One at a time: a second caller waits for the first doctool run, not a second one.
static LOADED: tokio::sync::Mutex<Option<Loaded>> = tokio::sync::Mutex::const_new(None);

pub(crate) fn godot() -> Result<PathBuf, ToolError> {
    find_godot_binary(
        std::env::var_os("GODOT_BIN").as_deref(),
        std::env::var_os("PATH").as_deref(),
    )
}

/// Run `program args…` (purpose = `operation`) under the supervisor (a journaled process_launch) and wait
/// for it, at most `limit`; returns how it ended, its stdout and its stderr.
pub(crate) async fn run_supervised(
    state: &Arc<AppState>,
    program: PathBuf,
    args: Vec<String>,
    operation: &'static str,
    limit: Duration,
) -> Result<(Ended, String, String), ToolError> {
    let session = state
        .process
        .launch(
            state,
            LaunchSpec {
                purpose: operation,
                program,
                args,
                user_args: vec![],
                tool_family: "project.scripts",
                operation,
                parent: None,
                writes_disk: false,
            },
        )
        .await?;
    let ended = match session.wait(limit).await {
        Some(e) => e,
        None => {
            session.kill_for_timeout();
            session
                .wait(Duration::from_secs(10))
                .await
                .ok_or_else(|| ToolError::internal("the killed Godot process did not end"))?
        }
    };
    if ended.timed_out {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "Godot ({operation}) did not finish within {} s",
                limit.as_secs()
            ),
        ));
    }
    let dir = session.output_dir();
    let read = |n: &str| {
        String::from_utf8_lossy(&std::fs::read(dir.join(n)).unwrap_or_default()).into_owned()
    };
    Ok((ended, read("stdout.log"), read("stderr.log")))
}

/// The engine's version line, from `godot --version`.
pub(crate) async fn engine_version(
    state: &Arc<AppState>,
    program: &Path,
) -> Result<String, ToolError> {
    let (_, stdout, stderr) = run_supervised(
        state,
        program.to_path_buf(),
        vec!["--version".into()],
        "engine_version",
        VERSION_TIMEOUT,
    )
    .await?;
    stdout
        .lines()
        .map(str::trim)
        .rfind(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "{} --version printed no version: {}",
                    program.display(),
                    stderr.trim()
                ),
            )
        })
}

/// A version string made safe for a file name.
fn cache_name(version: &str) -> String {
    let safe: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.json")
}

/// The class table for the project's Godot binary: memory, else the disk cache,
/// else one doctool run.
pub(crate) async fn class_db(state: &Arc<AppState>) -> Result<Arc<ClassDb>, ToolError> {
    let program = godot()?;
    let meta = std::fs::metadata(&program).map_err(|e| ToolError::io("GODOT_BIN", &e))?;
    let key = (program.clone(), meta.len(), meta.modified().ok());
    let mut loaded = LOADED.lock().await;
    if let Some(l) = loaded.as_ref()
        && l.binary == key
    {
        return Ok(l.db.clone());
    }
    let version = engine_version(state, &program).await?;
    let dir = state.journal.lock().state_dir().join("classref");
    std::fs::create_dir_all(&dir).map_err(|e| ToolError::internal(e.to_string()))?;
    let cache = dir.join(cache_name(&version));
    let cached = std::fs::read(&cache)
        .ok()
        .and_then(|b| serde_json::from_slice::<ClassDb>(&b).ok())
        .filter(|db| db.format == CACHE_FORMAT && db.version == version);
    let db = match cached {
        Some(db) => db,
        None => build_cache(state, &program, version, &dir, &cache).await?,
    };
    let db = Arc::new(db);
    *loaded = Some(Loaded {
        binary: key,
        db: db.clone(),
    });
    Ok(db)
}

async fn build_cache(
    state: &Arc<AppState>,
    program: &Path,
    version: String,
    dir: &Path,
    cache: &Path,
) -> Result<ClassDb, ToolError> {
    // A fresh private folder: --doctool erases the doc folders of its target.
    let nonce: [u8; 8] = rand_bytes()?;
    let work = dir.join(format!("doctool-{}", hex::encode(nonce)));
    std::fs::create_dir(&work).map_err(|e| ToolError::internal(e.to_string()))?;
    let work_s = work.display().to_string();
    // --path to the empty folder: no project is loaded (nothing of the user's runs).
    let run = run_supervised(
        state,
        program.to_path_buf(),
        vec![
            "--headless".into(),
            "--path".into(),
            work_s.clone(),
            "--doctool".into(),
            work_s,
        ],
        "doctool",
        DOCTOOL_TIMEOUT,
    )
    .await;
    let parsed = run.and_then(|(ended, _, stderr)| {
        if ended.code != Some(0) {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "godot --doctool failed ({:?}): {}",
                    ended.code,
                    tail(&stderr, 600)
                ),
            ));
        }
        ClassDb::from_doctool_dir(version, &work)
            .map_err(|e| ToolError::new(ErrorCode::ParseError, e))
    });
    let _ = std::fs::remove_dir_all(&work);
    let db = parsed?;
    let bytes = serde_json::to_vec(&db).map_err(|e| ToolError::internal(e.to_string()))?;
    // Write-then-rename: a concurrent reader sees the old cache or the whole new one.
    let tmp = cache.with_extension(format!("tmp-{}", hex::encode(rand_bytes::<4>()?)));
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, cache))
        .map_err(|e| ToolError::internal(format!("writing {}: {e}", cache.display())))?;
    Ok(db)
}

fn rand_bytes<const N: usize>() -> Result<[u8; N], ToolError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(b)
}

fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].trim()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberKind {
    Method,
    Property,
    Signal,
    Constant,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetClassArgs {
    /// Class name, e.g. Node2D.
    class: String,
    /// Only members whose name contains this (case-insensitive).
    #[serde(default)]
    member: Option<String>,
    /// Only these kinds of member.
    #[serde(default)]
    kinds: Option<Vec<MemberKind>>,
}

/// Render one class for an agent: signatures as one string each (the shortest exact
/// form), properties and constants as small objects.
pub fn class_json(
    db: &ClassDb,
    class: &ClassDoc,
    member: Option<&str>,
    kinds: &[MemberKind],
) -> Value {
    let needle = member.map(str::to_lowercase);
    let keep = |name: &str| {
        needle
            .as_deref()
            .is_none_or(|n| name.to_lowercase().contains(n))
    };
    let want = |k: MemberKind| kinds.is_empty() || kinds.contains(&k);
    let with_desc = |mut v: Value, d: &str| {
        if !d.is_empty() {
            v["description"] = json!(d);
        }
        v
    };
    let mut out = json!({
        "class": class.name,
        "inherits": db.chain(&class.name),
        "engine_version": db.version,
        "descriptions": !class.brief.is_empty() || !class.description.is_empty(),
    });
    if !class.brief.is_empty() {
        out["brief"] = json!(class.brief);
    }
    if want(MemberKind::Method) {
        let sig = |m: &godot_mcp_formats::classdoc::MethodDoc| {
            with_desc(json!(m.signature()), &m.description)
        };
        let ctors: Vec<Value> = class
            .constructors
            .iter()
            .filter(|m| keep(&m.name))
            .map(sig)
            .collect();
        if !ctors.is_empty() {
            out["constructors"] = json!(ctors);
        }
        out["methods"] = json!(
            class
                .methods
                .iter()
                .filter(|m| keep(&m.name))
                .map(sig)
                .collect::<Vec<_>>()
        );
    }
    if want(MemberKind::Property) {
        let props: Vec<Value> = class
            .members
            .iter()
            .filter(|m| keep(&m.name))
            .map(|m| {
                let mut v = json!({"name": m.name, "type": m.ty.display()});
                if let Some(d) = &m.default {
                    v["default"] = json!(d);
                }
                if let Some(o) = &m.overrides {
                    v["overrides"] = json!(o);
                }
                with_desc(v, &m.description)
            })
            .collect();
        out["properties"] = json!(props);
        let theme: Vec<Value> = class
            .theme_items
            .iter()
            .filter(|t| keep(&t.name))
            .map(|t| json!({"name": t.name, "data_type": t.data_type, "type": t.ty, "default": t.default}))
            .collect();
        if !theme.is_empty() {
            out["theme_items"] = json!(theme);
        }
    }
    if want(MemberKind::Signal) {
        out["signals"] = json!(
            class
                .signals
                .iter()
                .filter(|s| keep(&s.name))
                .map(|s| with_desc(json!(s.signature()), &s.description))
                .collect::<Vec<_>>()
        );
    }
    if want(MemberKind::Constant) {
        // Enum values grouped under their enum; plain constants on their own.
        let mut enums: BTreeMap<&str, serde_json::Map<String, Value>> = BTreeMap::new();
        let mut constants = serde_json::Map::new();
        for c in class.constants.iter().filter(|c| keep(&c.name)) {
            match &c.enum_name {
                Some(e) => {
                    enums
                        .entry(e)
                        .or_default()
                        .insert(c.name.clone(), json!(c.value));
                }
                None => {
                    constants.insert(c.name.clone(), json!(c.value));
                }
            }
        }
        out["constants"] = Value::Object(constants);
        out["enums"] = json!(enums);
    }
    out
}

async fn get_class_reference(
    state: Arc<AppState>,
    args: GetClassArgs,
    _flags: CallFlags,
) -> ToolResult {
    let db = class_db(&state).await?;
    lookup(
        &db,
        &args.class,
        args.member.as_deref(),
        args.kinds.as_deref().unwrap_or(&[]),
    )
}

/// The class reference of one class, or RESOURCE_NOT_FOUND with near names.
pub fn lookup(db: &ClassDb, class: &str, member: Option<&str>, kinds: &[MemberKind]) -> ToolResult {
    match db.classes.get(class) {
        Some(c) => Ok(class_json(db, c, member, kinds)),
        None => {
            let lower = class.to_lowercase();
            let near: Vec<&String> = db
                .classes
                .keys()
                .filter(|k| {
                    let k = k.to_lowercase();
                    k == lower || k.contains(&lower) || (lower.len() > 3 && lower.contains(&k))
                })
                .take(8)
                .collect();
            let mut e = ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("no class named {class:?} in Godot {}", db.version),
            )
            .param("class");
            if !near.is_empty() {
                e = e.hint(format!(
                    "Near names: {}.",
                    near.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            } else {
                e = e.hint("Use search_class_reference to find the name.");
            }
            Err(e)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    Class,
    Method,
    Property,
    Signal,
    Constant,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Name or part of one, e.g. `velocity`.
    #[schemars(length(min = 1, max = 200))]
    query: String,
    /// Only this kind.
    #[serde(default)]
    kind: Option<SearchKind>,
    /// next_cursor of the previous page.
    #[serde(default)]
    cursor: Option<String>,
    /// Page size (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
}

#[derive(Debug, Serialize)]
struct Hit {
    class: String,
    kind: &'static str,
    name: String,
    /// The signature or type, so a hit is usable without a second call.
    #[serde(skip_serializing_if = "String::is_empty")]
    detail: String,
    #[serde(skip)]
    rank: u8,
}

async fn search_class_reference(
    state: Arc<AppState>,
    args: SearchArgs,
    _flags: CallFlags,
) -> ToolResult {
    let db = class_db(&state).await?;
    search(
        &db,
        &args.query,
        args.kind,
        args.cursor.as_deref(),
        args.limit,
    )
}

/// Search `db`: exact name matches first, then prefixes, then substrings; within a
/// rank by class then name, so pages are stable.
pub fn search(
    db: &ClassDb,
    query: &str,
    kind: Option<SearchKind>,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> ToolResult {
    let q = query.trim().to_lowercase();
    if q.is_empty() || q.len() > 200 {
        return Err(ToolError::invalid_params(
            "query",
            "query must be 1–200 characters",
        ));
    }
    let limit = limit.unwrap_or(50) as usize;
    if !(1..=200).contains(&limit) {
        return Err(ToolError::invalid_params("limit", "limit must be 1–200"));
    }
    let start: usize = match cursor {
        None => 0,
        Some(c) => c
            .parse()
            .map_err(|_| ToolError::invalid_params("cursor", "cursor must be a next_cursor"))?,
    };
    let rank = |name: &str| -> Option<u8> {
        let n = name.to_lowercase();
        if n == q {
            Some(0)
        } else if n.starts_with(&q) {
            Some(1)
        } else if n.contains(&q) {
            Some(2)
        } else {
            None
        }
    };
    let want = |k: SearchKind| kind.is_none_or(|w| w == k);
    let mut hits: Vec<Hit> = Vec::new();
    let mut push = |class: &str, k: SearchKind, name: &str, detail: String| {
        if want(k)
            && let Some(rank) = rank(name)
        {
            hits.push(Hit {
                class: class.into(),
                kind: match k {
                    SearchKind::Class => "class",
                    SearchKind::Method => "method",
                    SearchKind::Property => "property",
                    SearchKind::Signal => "signal",
                    SearchKind::Constant => "constant",
                },
                name: name.into(),
                detail,
                rank,
            });
        }
    };
    for (name, c) in &db.classes {
        push(
            name,
            SearchKind::Class,
            name,
            c.inherits
                .clone()
                .map(|i| format!("extends {i}"))
                .unwrap_or_default(),
        );
        for m in &c.methods {
            push(name, SearchKind::Method, &m.name, m.signature());
        }
        for m in &c.members {
            push(
                name,
                SearchKind::Property,
                &m.name,
                m.ty.display().to_string(),
            );
        }
        for s in &c.signals {
            push(name, SearchKind::Signal, &s.name, s.signature());
        }
        for k in &c.constants {
            let detail = match &k.enum_name {
                Some(e) => format!("{e} = {}", k.value),
                None => k.value.clone(),
            };
            push(name, SearchKind::Constant, &k.name, detail);
        }
    }
    hits.sort_by(|a, b| (a.rank, &a.class, &a.name).cmp(&(b.rank, &b.class, &b.name)));
    let total = hits.len();
    let page: Vec<Hit> = hits.into_iter().skip(start).take(limit).collect();
    let end = start + page.len();
    Ok(json!({
        "query": query,
        "engine_version": db.version,
        "total": total,
        "returned": page.len(),
        "results": page,
        "next_cursor": (end < total).then(|| end.to_string()),
    }))
}
