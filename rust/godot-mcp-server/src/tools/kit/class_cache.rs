//! What Godot's own file-system scan would write for a `.gd` the server writes, so the
//! project is as the engine's scan would leave it before the call answers: the script's
//! entry in the global class cache (`.godot/global_script_class_cache.cfg`, upserted when
//! it declares `class_name`, removed when a rewrite drops it), and its `.uid` sidecar
//! (engines from 4.4). Written in the same journaled change as the script
//! (`file_write::plan_script`). With an editor connected the cache is the editor's: it
//! is told of the file instead (`file_write::tell_editor`).
//!
//! The cache text is Godot's (measured on 4.4.1 and 4.6.0, `--import`): one dictionary
//! per class, keys sorted, entries `}, {`-separated. 4.4 sorts the entries by class
//! name; 4.6 keeps them in the order it found them (a new one last).

use godot_mcp_formats::{ids, variant::quote};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::ToolError;
use crate::planes::project::{self as plane, CLASS_CACHE};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::common::{head, script_header_gd, script_of_class, walk_scripts};
use crate::tools::kit::ext_ref;

/// What a `.gd` write registers with Godot; reported by the dry run and the real run.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct Registration {
    /// The class_name registered for Godot (class cache, or the connected editor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_registered: Option<String>,
    /// The class_name this rewrite dropped from Godot's class cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_unregistered: Option<String>,
    /// Godot's files written with it (.uid, class cache), in the same transaction.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_written: Vec<String>,
}

/// A file a registration writes: path, bytes, the hash it was planned on (`None`: absent).
pub(crate) type Extra = (ResPath, Vec<u8>, Option<String>);

/// One global class as Godot's cache lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassEntry {
    pub class: String,
    pub base: String,
    pub icon: String,
    pub is_abstract: bool,
    pub is_tool: bool,
    pub path: String,
}

impl ClassEntry {
    /// The entry's text, as Godot writes it.
    pub(crate) fn text(&self) -> String {
        format!(
            "{{\n\"base\": &{},\n\"class\": &{},\n\"icon\": {},\n\"is_abstract\": {},\n\
             \"is_tool\": {},\n\"language\": &\"GDScript\",\n\"path\": {}\n}}",
            quote(&self.base),
            quote(&self.class),
            quote(&self.icon),
            self.is_abstract,
            self.is_tool,
            quote(&self.path)
        )
    }
}

/// The engine the project was last saved with (`config/features`), e.g. `(4, 4)`.
pub(crate) fn engine(state: &AppState) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string(state.project.root().join("project.godot")).ok()?;
    let project = godot_mcp_formats::parse_project(&text).ok()?;
    project
        .features
        .iter()
        .filter_map(|f| {
            let mut parts = f.split('.').map(|p| p.parse::<u32>().ok());
            match (parts.next(), parts.next()) {
                (Some(Some(major)), Some(Some(minor))) => Some((major, minor)),
                _ => None,
            }
        })
        .max()
}

/// Whether Godot `engine` sorts its class cache by class name (4.4 does; 4.6 does not).
fn sorts(engine: Option<(u32, u32)>) -> bool {
    engine.is_none_or(|v| v < (4, 5))
}

/// The entries of a cache text, each as its text; `None` when it is not the form
/// Godot writes (then it is left alone).
pub(crate) fn entries(text: &str) -> Option<Vec<String>> {
    let body = text.trim_end().strip_prefix("list=[")?.strip_suffix(']')?;
    let (mut out, mut depth, mut in_str, mut esc, mut start) = (Vec::new(), 0u32, false, false, 0);
    for (i, c) in body.char_indices() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    out.push(body[start..=i].to_string());
                }
            }
            c if depth == 0 && c != ',' && !c.is_whitespace() => return None,
            _ => {}
        }
    }
    (depth == 0 && !in_str).then_some(out)
}

/// The string value of `"key": …` in an entry's text (`&"…"` or `"…"`).
fn field(entry: &str, key: &str) -> Option<String> {
    let prefix = format!("\"{key}\": ");
    let line = entry.lines().find_map(|l| l.trim().strip_prefix(&prefix))?;
    let v = line.trim_end_matches(',').trim_start_matches('&');
    let v = v.strip_prefix('"')?.strip_suffix('"')?;
    Some(v.replace("\\\"", "\"").replace("\\\\", "\\"))
}

/// `text` (a cache's) with `path`'s entry replaced by `entry` (`None`: removed), every
/// other entry kept byte for byte; sorted by class name when `sorted` (Godot 4.4),
/// else in place (a new one last). `None` when `text` is not Godot's form.
pub(crate) fn with_entry(
    text: &str,
    path: &str,
    entry: Option<&ClassEntry>,
    sorted: bool,
) -> Option<String> {
    let mut list = entries(text)?;
    let at = list
        .iter()
        .position(|e| field(e, "path").as_deref() == Some(path));
    let old_class = at.and_then(|i| field(&list[i], "class"));
    list.retain(|e| field(e, "path").as_deref() != Some(path));
    if let Some(e) = entry {
        // In its old place (4.4: unless renamed); a new one, or a renamed one on 4.4,
        // where Godot 4.4 sorts it (before the first greater class), else last. Every other entry keeps its
        // place: a cache the editor of another engine wrote in its own order is not
        // reordered (CI: a 4.4 project under 4.6 had its cache rewritten for a script
        // with no class_name).
        let new = || match sorted {
            true => list
                .iter()
                .position(|o| field(o, "class").is_some_and(|c| c > e.class))
                .unwrap_or(list.len()),
            false => list.len(),
        };
        let at = match at {
            Some(i) if !sorted || old_class.as_deref() == Some(e.class.as_str()) => {
                i.min(list.len())
            }
            _ => new(),
        };
        list.insert(at, e.text());
    }
    Some(format!("list=[{}]\n", list.join(", ")))
}

/// The class_name the cache text lists for `path`.
fn class_of(text: &str, path: &str) -> Option<String> {
    entries(text)?
        .iter()
        .find(|e| field(e, "path").as_deref() == Some(path))
        .and_then(|e| field(e, "class"))
}

/// The cache entry of the GDScript `text` at `path`, when it declares a class_name.
pub(crate) fn entry_of(
    state: &AppState,
    path: &str,
    text: &str,
    engine: Option<(u32, u32)>,
) -> Option<ClassEntry> {
    let h = script_header_gd(text);
    let class = h.class_name.clone()?;
    let base = match h.extends.as_deref() {
        None => "RefCounted".to_string(),
        Some(e) if e.starts_with("res://") => native_base(state, e, 0),
        Some(e) if e.contains('.') => String::new(),
        Some(e) => e.to_string(),
    };
    let (mut icon, mut is_abstract, mut named) = (String::new(), false, false);
    // The script's annotations: top-level lines before its first member.
    for line in text.lines().filter(|l| !l.starts_with([' ', '\t'])) {
        let code = line.split('#').next().unwrap_or("");
        let first = code.split_whitespace().find(|t| !t.starts_with('@'));
        if matches!(
            first,
            Some("func" | "var" | "const" | "signal" | "enum" | "class")
        ) {
            break;
        }
        if let Some(rest) = code.split("@icon(").nth(1) {
            icon = rest.split('"').nth(1).unwrap_or_default().to_string();
        }
        // `@abstract` (4.5+) before class_name is the class's.
        is_abstract |= !named && code.split_whitespace().any(|t| t == "@abstract");
        named |= code.contains("class_name");
    }
    is_abstract &= engine.is_some_and(|v| v >= (4, 5));
    Some(ClassEntry {
        class,
        base,
        icon,
        is_abstract,
        is_tool: h.tool,
        path: path.to_string(),
    })
}

/// The engine class a script at `path` (`res://…`) finally extends, as Godot lists the
/// base of a class that extends a script by path.
fn native_base(state: &AppState, path: &str, depth: u32) -> String {
    let text = ResPath::parse(path)
        .ok()
        .and_then(|p| state.project.resolve("path", &p).ok())
        .and_then(|real| head(&real));
    let Some(text) = text.filter(|_| depth < 16) else {
        return String::new();
    };
    match script_header_gd(&text).extends {
        None => "RefCounted".into(),
        Some(e) if e.starts_with("res://") => native_base(state, &e, depth + 1),
        Some(e) => match script_of_class(state, &e).ok().flatten() {
            Some(p) => native_base(state, &p.to_string(), depth + 1),
            None => e,
        },
    }
}

/// A cache listing every GDScript class of the project, as a first scan writes it
/// (the cache is missing): every other script's class is as known as this one's.
fn scanned(state: &AppState, skip: &str, engine: Option<(u32, u32)>) -> String {
    let mut list: Vec<ClassEntry> = Vec::new();
    let _ = walk_scripts(state, &mut |res, real| {
        let p = res.to_string();
        if p != skip
            && res.extension().as_deref() == Some("gd")
            && let Some(e) = head(&real).and_then(|t| entry_of(state, &p, &t, engine))
        {
            list.push(e);
        }
    });
    list.sort_by(|a, b| a.path.cmp(&b.path));
    let texts: Vec<String> = list.iter().map(ClassEntry::text).collect();
    format!("list=[{}]\n", texts.join(", "))
}

/// The script's entry as a change of any cache text: what a write inside an agent's
/// change applies to the cache as that change already staged it.
#[derive(Debug, Clone)]
pub(crate) struct CacheEdit {
    script: String,
    entry: Option<ClassEntry>,
    sorted: bool,
}

/// `extra` inside an agent's change, against what `stage` already holds: a sidecar it
/// already makes is left out, and the cache is rebased on its staged text, so several
/// scripts of one change each register their class.
pub(crate) fn rebase_staged(
    extra: Vec<Extra>,
    edit: Option<&CacheEdit>,
    stage: &plane::Stage,
) -> Vec<Extra> {
    extra
        .into_iter()
        .filter_map(|(p, bytes, before)| match stage.staged_bytes(&p) {
            None => Some((p, bytes, before)),
            Some(Some(staged)) if p.is_godot_owned() => {
                let after = edit?.on(&String::from_utf8_lossy(staged))?;
                Some((p, after.into_bytes(), Some(plane::sha256_hex(staged))))
            }
            // A sidecar (or a cache staged for deletion) the change already decides.
            Some(_) => None,
        })
        .collect()
}

impl CacheEdit {
    fn on(&self, text: &str) -> Option<String> {
        with_entry(text, &self.script, self.entry.as_ref(), self.sorted)
    }
}

/// What a write of `bytes` to the `.gd` at `path` registers, and the files that takes:
/// a `.uid` sidecar (engine 4.4+, none yet) and, unless `editor` owns it, the class
/// cache with the script's entry upserted or removed.
pub(crate) fn plan(
    state: &AppState,
    path: &ResPath,
    bytes: &[u8],
    editor: bool,
) -> Result<(Registration, Vec<Extra>, Option<CacheEdit>), ToolError> {
    let mut reg = Registration::default();
    let mut extra: Vec<Extra> = Vec::new();
    let mut edit = None;
    let engine = engine(state);
    let text = String::from_utf8_lossy(bytes);
    let res = path.to_string();
    if engine.is_some_and(|v| v >= (4, 4)) {
        let side = ResPath::parse(&format!("{res}.uid"))
            .map_err(|e| ToolError::invalid_params("path", e.to_string()))?;
        if plane::current(&state.project, "path", &side)?.is_none() {
            let seed = plane::sha256_hex(bytes);
            let uid = ids::uid_text(ext_ref::derived_u64(&["script_uid", &res, &seed]));
            extra.push((side, format!("{uid}\n").into_bytes(), None));
        }
    }
    let entry = entry_of(state, &res, &text, engine);
    reg.class_registered = entry.as_ref().map(|e| e.class.clone());
    if !editor {
        let cache = ResPath::godot_owned(CLASS_CACHE);
        let real = state.project.root().join(CLASS_CACHE);
        let before = std::fs::read_to_string(&real).ok();
        let old_class = before.as_deref().and_then(|t| class_of(t, &res));
        let base = match &before {
            Some(t) => t.clone(),
            None if entry.is_some() => scanned(state, &res, engine),
            None => String::new(),
        };
        let change = CacheEdit {
            script: res.clone(),
            entry: entry.clone(),
            sorted: sorts(engine),
        };
        let after = change.on(&base);
        edit = Some(change);
        if let Some(after) = after.filter(|a| before.as_deref() != Some(a.as_str())) {
            let sha = plane::current(&state.project, "path", &cache)?.map(|(sha, _)| sha);
            extra.push((cache, after.into_bytes(), sha));
        }
        if old_class.is_some() && old_class != reg.class_registered {
            reg.class_unregistered = old_class;
        }
    }
    for (p, b, before) in &extra {
        let expect = before
            .as_deref()
            .map_or(plane::Expect::Absent, plane::Expect::Sha256);
        plane::check_write(&state.project, "path", p, b, expect)?;
        reg.also_written.push(p.to_string());
    }
    Ok((reg, extra, edit))
}

#[cfg(test)]
#[path = "class_cache_tests.rs"]
mod tests;
