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
//! descriptions only from XML already in its target). The compiled-in descriptions
//! reach disk only through the editor: a headless editor, started on a private empty
//! project with private XDG folders (nothing of the user's settings or caches is read or
//! written), writes its doc cache (`editor_doc_cache-<ver>.res`, a Resource whose meta
//! `classes` holds every class with its descriptions); a `--script` run dumps that to
//! JSON and the descriptions are merged by name. Without an editor build (an export
//! template) or if that fails, the reference has none and says why
//! (`descriptions: false`, `descriptions_note`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use godot_mcp_formats::classdoc::{ClassDoc, clean_text, parse_class_xml};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{Ended, LaunchSpec, Session};
use crate::rules::{EffectKind, SafetyClass, Toolset, find_godot_binary};
use crate::state::AppState;
use crate::tools::{CallFlags, ToolDef, ToolMeta};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "get_class_reference",
                title: "Godot class reference",
                description: "A Godot class's API from the engine (--doctool): inheritance \
                    chain, method signatures, properties with types and defaults, signals, \
                    constants and enums, with the engine's descriptions. `member` filters by name.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::ClassRef,
                effect: Some(EffectKind::ProcessLaunch),
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
                effect: Some(EffectKind::ProcessLaunch),
            },
            search_class_reference,
        ),
    ]
}

/// Bumped when the cache's shape changes, so an old cache is rebuilt, not misread.
const CACHE_FORMAT: u32 = 2;
/// Longest the headless editor may take to write its doc cache (~10 s measured).
const EDITOR_DOCS_TIMEOUT: Duration = Duration::from_secs(120);
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
    /// Why descriptions are absent, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptions_note: Option<String>,
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
            descriptions_note: None,
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

/// A launch of `program args…` with no user arguments and no parent that writes no
/// project file (`purpose` is what the supervisor's control arguments key on).
pub(crate) fn plain_launch(
    purpose: &'static str,
    tool_family: &'static str,
    operation: &'static str,
    program: PathBuf,
    args: Vec<String>,
) -> LaunchSpec {
    LaunchSpec {
        purpose,
        program,
        args,
        user_args: vec![],
        tool_family,
        operation,
        parent: None,
        writes_disk: false,
    }
}

/// Wait for a supervised process to end, killing it after `limit`; `killed` is the
/// internal error should it outlive its kill.
pub(crate) async fn wait_ended(
    session: &Session,
    limit: Duration,
    killed: &'static str,
) -> Result<Ended, ToolError> {
    session
        .wait_or_kill(limit)
        .await
        .ok_or_else(|| ToolError::internal(killed))
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
    let spec = plain_launch(operation, "project.scripts", operation, program, args);
    let session = state.process.launch(state, spec).await?;
    let ended = wait_ended(&session, limit, "the killed Godot process did not end").await?;
    if ended.timed_out {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "Godot ({operation}) did not finish within {} s",
                limit.as_secs()
            ),
        ));
    }
    // A log that cannot be read is an error, never empty output: a parse check
    // reading nothing would report "no errors".
    let dir = session.output_dir();
    let read = |n: &str| {
        let path = dir.join(n);
        std::fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::Io,
                    format!(
                        "Godot ({operation}) ran, but its {n} cannot be read ({}); its output \
                         is unknown, not empty",
                        e.kind()
                    ),
                )
            })
    };
    Ok((ended, read("stdout.log")?, read("stderr.log")?))
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
    let mut db = parsed?;
    match editor_descriptions(state, program, dir).await {
        Ok(dump) => {
            let merged = merge_descriptions(&mut db, &dump);
            if merged == 0 {
                db.descriptions_note =
                    Some("the editor's doc cache matched no class of --doctool".into());
            }
        }
        Err(e) => {
            db.descriptions_note = Some(format!(
                "descriptions come from the editor's doc cache, which could not be read: {}",
                e.message
            ));
        }
    }
    let bytes = serde_json::to_vec(&db).map_err(|e| ToolError::internal(e.to_string()))?;
    // Write-then-rename: a concurrent reader sees the old cache or the whole new one.
    let tmp = cache.with_extension(format!("tmp-{}", hex::encode(rand_bytes::<4>()?)));
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, cache))
        .map_err(|e| ToolError::internal(format!("writing {}: {e}", cache.display())))?;
    Ok(db)
}

/// The compiled-in descriptions, from the headless editor's doc cache (module doc).
async fn editor_descriptions(
    state: &Arc<AppState>,
    program: &Path,
    dir: &Path,
) -> Result<Vec<DumpClass>, ToolError> {
    let work = dir.join(format!("editor-{}", hex::encode(rand_bytes::<8>()?)));
    let result = editor_descriptions_in(state, program, &work).await;
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// GDScript run with `--script`: the doc cache's `classes` meta, as JSON, next to the
/// private project. Godot names the cache `editor_doc_cache-<major.minor>.res`.
const DUMP_GD: &str = r#"extends SceneTree

func _init():
	var root := ProjectSettings.globalize_path("res://")
	var cache_dir := root.path_join("../xdg/cache/godot")
	var found := ""
	for f in DirAccess.get_files_at(cache_dir):
		if f.begins_with("editor_doc_cache") and f.ends_with(".res"):
			found = cache_dir.path_join(f)
	var r = null
	if found != "":
		r = ResourceLoader.load(found, "", ResourceLoader.CACHE_MODE_IGNORE)
	if r == null or not r.has_meta("classes"):
		printerr("godot-mcp: no readable editor doc cache in ", cache_dir)
		quit(3)
		return
	var out := FileAccess.open(root.path_join("../docs.json"), FileAccess.WRITE)
	out.store_string(JSON.stringify(r.get_meta("classes")))
	out.close()
	quit(0)
"#;

async fn editor_descriptions_in(
    state: &Arc<AppState>,
    program: &Path,
    work: &Path,
) -> Result<Vec<DumpClass>, ToolError> {
    let project = work.join("project");
    let xdg = work.join("xdg");
    for d in [
        &project,
        &xdg.join("cache"),
        &xdg.join("config"),
        &xdg.join("data"),
    ] {
        std::fs::create_dir_all(d).map_err(|e| ToolError::internal(e.to_string()))?;
    }
    std::fs::write(project.join("project.godot"), "config_version=5\n")
        .and_then(|()| std::fs::write(project.join("dump.gd"), DUMP_GD))
        .map_err(|e| ToolError::internal(e.to_string()))?;
    // `env` sets the private XDG folders for Godot alone (it execs Godot: same pid,
    // same process group, so the supervisor's proofs hold).
    let env_args = |rest: &[&str]| -> Vec<String> {
        let mut a = vec![
            format!("XDG_CACHE_HOME={}", xdg.join("cache").display()),
            format!("XDG_CONFIG_HOME={}", xdg.join("config").display()),
            format!("XDG_DATA_HOME={}", xdg.join("data").display()),
            program.display().to_string(),
            "--headless".into(),
            "--path".into(),
            project.display().to_string(),
        ];
        a.extend(rest.iter().map(|s| s.to_string()));
        a
    };
    let spec = plain_launch(
        "editor_docs",
        "project.scripts",
        "editor_docs",
        PathBuf::from("/usr/bin/env"),
        env_args(&["--editor"]),
    );
    let session = state.process.launch(state, spec).await?;
    // The editor writes the cache once, from a thread, then keeps running: wait until
    // the file exists and its size held still for a second, then stop the editor.
    let cache_dir = xdg.join("cache/godot");
    let started = std::time::Instant::now();
    let mut last: Option<u64> = None;
    let mut stable = 0;
    let ready = loop {
        if session.ended().is_some() || started.elapsed() > EDITOR_DOCS_TIMEOUT {
            break false;
        }
        let size = std::fs::read_dir(&cache_dir).ok().and_then(|rd| {
            rd.flatten()
                .find(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("editor_doc_cache")
                })
                .and_then(|e| e.metadata().ok())
                .map(|m| m.len())
        });
        if size.is_some_and(|n| n > 0) && size == last {
            stable += 1;
            if stable >= 5 {
                break true;
            }
        } else {
            stable = 0;
        }
        last = size;
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    session.stop(Duration::from_secs(5)).await;
    if !ready {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            "the headless editor wrote no doc cache (is GODOT_BIN an editor build?)",
        ));
    }
    let (ended, _, stderr) = run_supervised(
        state,
        PathBuf::from("/usr/bin/env"),
        env_args(&["--script", "res://dump.gd"]),
        "editor_docs_dump",
        DOCTOOL_TIMEOUT,
    )
    .await?;
    if ended.code != Some(0) {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "dumping the editor's doc cache failed: {}",
                tail(&stderr, 400)
            ),
        ));
    }
    let bytes =
        std::fs::read(work.join("docs.json")).map_err(|e| ToolError::internal(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| ToolError::new(ErrorCode::ParseError, e.to_string()))
}

/// One class of the editor's doc cache (DocData::ClassDoc::to_dict), as far as read.
#[derive(Debug, Deserialize)]
pub struct DumpClass {
    name: String,
    #[serde(default)]
    brief_description: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    constructors: Vec<DumpItem>,
    #[serde(default)]
    methods: Vec<DumpItem>,
    #[serde(default)]
    operators: Vec<DumpItem>,
    #[serde(default)]
    signals: Vec<DumpItem>,
    #[serde(default)]
    properties: Vec<DumpItem>,
    #[serde(default)]
    constants: Vec<DumpItem>,
    #[serde(default)]
    theme_properties: Vec<DumpItem>,
}

#[derive(Debug, Deserialize)]
pub struct DumpItem {
    name: String,
    #[serde(default)]
    description: String,
}

/// Merge the dump's descriptions into `db`: members by name, constructors and
/// operators (whose names repeat) by position when the counts agree. Returns how many
/// classes matched.
pub fn merge_descriptions(db: &mut ClassDb, dump: &[DumpClass]) -> usize {
    fn by_name<T>(items: &mut [T], from: &[DumpItem], get: impl Fn(&mut T) -> (&str, &mut String)) {
        let map: BTreeMap<&str, &str> = from
            .iter()
            .map(|i| (i.name.as_str(), i.description.as_str()))
            .collect();
        for it in items.iter_mut() {
            let (name, desc) = get(it);
            if let Some(d) = map.get(name) {
                *desc = clean_text(d);
            }
        }
    }
    fn by_position(items: &mut [godot_mcp_formats::classdoc::MethodDoc], from: &[DumpItem]) {
        if items.len() == from.len() {
            for (it, d) in items.iter_mut().zip(from) {
                it.description = clean_text(&d.description);
            }
        }
    }
    let mut matched = 0;
    for d in dump {
        let Some(c) = db.classes.get_mut(&d.name) else {
            continue;
        };
        matched += 1;
        c.brief = clean_text(&d.brief_description);
        c.description = clean_text(&d.description);
        by_name(&mut c.methods, &d.methods, |m| {
            (m.name.as_str(), &mut m.description)
        });
        by_name(&mut c.signals, &d.signals, |m| {
            (m.name.as_str(), &mut m.description)
        });
        by_name(&mut c.members, &d.properties, |m| {
            (m.name.as_str(), &mut m.description)
        });
        by_name(&mut c.constants, &d.constants, |m| {
            (m.name.as_str(), &mut m.description)
        });
        by_name(&mut c.theme_items, &d.theme_properties, |m| {
            (m.name.as_str(), &mut m.description)
        });
        by_position(&mut c.constructors, &d.constructors);
        by_position(&mut c.operators, &d.operators);
    }
    matched
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
    /// Member descriptions too (default: only with `member`).
    #[serde(default)]
    descriptions: Option<bool>,
}

/// A method or signal: its signature, with its description when asked for.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Signature {
    Plain(String),
    Described {
        signature: String,
        description: String,
    },
}

/// A property of a class.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyOut {
    name: String,
    r#type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    default: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overrides: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

/// A theme item of a Control class.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ThemeItemOut {
    name: String,
    data_type: String,
    r#type: String,
    default: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

/// One class of the reference; a member kind not asked for is absent.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ClassOut {
    class: String,
    inherits: Vec<String>,
    engine_version: String,
    descriptions: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    descriptions_note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    brief: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    constructors: Option<Vec<Signature>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    methods: Option<Vec<Signature>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<Vec<PropertyOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    theme_items: Option<Vec<ThemeItemOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signals: Option<Vec<Signature>>,
    /// Plain constants by name (their values as written in the reference).
    #[serde(skip_serializing_if = "Option::is_none")]
    constants: Option<BTreeMap<String, String>>,
    /// Enum values grouped under their enum.
    #[serde(skip_serializing_if = "Option::is_none")]
    enums: Option<BTreeMap<String, BTreeMap<String, String>>>,
}

/// Render one class for an agent: signatures as one string each (the shortest exact
/// form), properties and constants as small objects.
pub fn class_out(
    db: &ClassDb,
    class: &ClassDoc,
    member: Option<&str>,
    kinds: &[MemberKind],
    member_descriptions: bool,
) -> ClassOut {
    let needle = member.map(str::to_lowercase);
    let keep = |name: &str| {
        needle
            .as_deref()
            .is_none_or(|n| name.to_lowercase().contains(n))
    };
    let want = |k: MemberKind| kinds.is_empty() || kinds.contains(&k);
    // Member descriptions only when asked for (they are most of a class's bytes).
    let desc = |d: &str| (member_descriptions && !d.is_empty()).then(|| d.to_string());
    let sig = |signature: String, d: &str| match desc(d) {
        None => Signature::Plain(signature),
        Some(description) => Signature::Described {
            signature,
            description,
        },
    };
    let mut out = ClassOut {
        class: class.name.clone(),
        inherits: db.chain(&class.name),
        engine_version: db.version.clone(),
        descriptions: !class.brief.is_empty() || !class.description.is_empty(),
        descriptions_note: db.descriptions_note.clone(),
        brief: (!class.brief.is_empty()).then(|| class.brief.clone()),
        description: (member.is_none() && kinds.is_empty() && !class.description.is_empty())
            .then(|| class.description.clone()),
        constructors: None,
        methods: None,
        properties: None,
        theme_items: None,
        signals: None,
        constants: None,
        enums: None,
    };
    if want(MemberKind::Method) {
        let method =
            |m: &godot_mcp_formats::classdoc::MethodDoc| sig(m.signature(), &m.description);
        let ctors: Vec<Signature> = class
            .constructors
            .iter()
            .filter(|m| keep(&m.name))
            .map(method)
            .collect();
        if !ctors.is_empty() {
            out.constructors = Some(ctors);
        }
        out.methods = Some(
            class
                .methods
                .iter()
                .filter(|m| keep(&m.name))
                .map(method)
                .collect(),
        );
    }
    if want(MemberKind::Property) {
        out.properties = Some(
            class
                .members
                .iter()
                .filter(|m| keep(&m.name))
                .map(|m| PropertyOut {
                    name: m.name.clone(),
                    r#type: m.ty.display().to_string(),
                    default: m.default.clone(),
                    overrides: m.overrides.clone(),
                    description: desc(&m.description),
                })
                .collect(),
        );
        let theme: Vec<ThemeItemOut> = class
            .theme_items
            .iter()
            .filter(|t| keep(&t.name))
            .map(|t| ThemeItemOut {
                name: t.name.clone(),
                data_type: t.data_type.clone(),
                r#type: t.ty.clone(),
                default: t.default.clone(),
                description: desc(&t.description),
            })
            .collect();
        if !theme.is_empty() {
            out.theme_items = Some(theme);
        }
    }
    if want(MemberKind::Signal) {
        out.signals = Some(
            class
                .signals
                .iter()
                .filter(|s| keep(&s.name))
                .map(|s| sig(s.signature(), &s.description))
                .collect(),
        );
    }
    if want(MemberKind::Constant) {
        // Enum values grouped under their enum; plain constants on their own.
        let mut enums: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut constants = BTreeMap::new();
        for c in class.constants.iter().filter(|c| keep(&c.name)) {
            match &c.enum_name {
                Some(e) => {
                    enums
                        .entry(e.clone())
                        .or_default()
                        .insert(c.name.clone(), c.value.clone());
                }
                None => {
                    constants.insert(c.name.clone(), c.value.clone());
                }
            }
        }
        out.constants = Some(constants);
        out.enums = Some(enums);
    }
    out
}

async fn get_class_reference(
    state: Arc<AppState>,
    args: GetClassArgs,
    _flags: CallFlags,
) -> Result<ClassOut, ToolError> {
    let db = class_db(&state).await?;
    let descriptions = args.descriptions.unwrap_or(args.member.is_some());
    lookup_class(
        &db,
        &args.class,
        args.member.as_deref(),
        args.kinds.as_deref().unwrap_or(&[]),
        descriptions,
    )
}

/// The class reference of one class, or RESOURCE_NOT_FOUND with near names.
pub fn lookup_class(
    db: &ClassDb,
    class: &str,
    member: Option<&str>,
    kinds: &[MemberKind],
    member_descriptions: bool,
) -> Result<ClassOut, ToolError> {
    match db.classes.get(class) {
        Some(c) => Ok(class_out(db, c, member, kinds, member_descriptions)),
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

#[derive(Debug, Serialize, JsonSchema)]
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
) -> Result<SearchOut, ToolError> {
    let db = class_db(&state).await?;
    search_classes(
        &db,
        &args.query,
        args.kind,
        args.cursor.as_deref(),
        args.limit,
    )
}

/// A page of class-reference matches.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    query: String,
    engine_version: String,
    total: usize,
    returned: usize,
    results: Vec<Hit>,
    next_cursor: Option<String>,
}

/// Search `db`: exact name matches first, then prefixes, then substrings; within a
/// rank by class then name, so pages are stable.
pub fn search_classes(
    db: &ClassDb,
    query: &str,
    kind: Option<SearchKind>,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<SearchOut, ToolError> {
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
    // The detail (a signature) is built only for a match: most names do not match.
    let mut push = |class: &str, k: SearchKind, name: &str, detail: &dyn Fn() -> String| {
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
                detail: detail(),
                rank,
            });
        }
    };
    for (name, c) in &db.classes {
        push(name, SearchKind::Class, name, &|| {
            c.inherits
                .clone()
                .map(|i| format!("extends {i}"))
                .unwrap_or_default()
        });
        for m in &c.methods {
            push(name, SearchKind::Method, &m.name, &|| m.signature());
        }
        for m in &c.members {
            push(name, SearchKind::Property, &m.name, &|| {
                m.ty.display().to_string()
            });
        }
        for s in &c.signals {
            push(name, SearchKind::Signal, &s.name, &|| s.signature());
        }
        for k in &c.constants {
            let detail = || match &k.enum_name {
                Some(e) => format!("{e} = {}", k.value),
                None => k.value.clone(),
            };
            push(name, SearchKind::Constant, &k.name, &detail);
        }
    }
    hits.sort_by(|a, b| (a.rank, &a.class, &a.name).cmp(&(b.rank, &b.class, &b.name)));
    let total = hits.len();
    let page: Vec<Hit> = hits.into_iter().skip(start).take(limit).collect();
    let end = start + page.len();
    Ok(SearchOut {
        query: query.to_string(),
        engine_version: db.version.clone(),
        total,
        returned: page.len(),
        results: page,
        next_cursor: (end < total).then(|| end.to_string()),
    })
}
