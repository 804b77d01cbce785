//! The class table: Godot's own API description, from the project's Godot binary, for
//! every domain that needs it (the class-reference tools, attach_script's rule for a
//! `.cs`, a resource's properties, a setting's declared type).
//!
//! `godot --headless --doctool <dir>` writes one XML page per class (methods with
//! signatures, properties, signals, constants and enums). The server runs it once per
//! engine version, under the supervisor, into a fresh private folder of its state dir
//! (doctool erases the doc folders of its target, so never anywhere else), parses the
//! pages (`godot_mcp_formats::classdoc`) into one compact JSON cache
//! `classref/<version>.json`, and keeps the parsed table in memory (the server's
//! `AppState::class_reference`): a lookup after the first is a map access.
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

mod descriptions;

pub use descriptions::*;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use godot_mcp_formats::classdoc::ClassDb;
use godot_mcp_formats::classdoc::parse_class_xml;

use crate::error::{ErrorCode, ToolError};
use crate::state::{AppState, LoadedClassDb};
use crate::tools::kit::godot_process::{doctool, engine_version, godot, tail, temp_folder};

/// Longest the headless editor may take to write its doc cache (~10 s measured).
const EDITOR_DOCS_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest a doctool run may take (it takes ~3 s).
const DOCTOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// Parse every class page under `dir` (recursively: doc/classes, modules/*/doc_classes,
/// platform/*/doc_classes) into the reference of engine `version`.
pub fn read_doctool_dir(version: String, dir: &Path) -> Result<ClassDb, String> {
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
                let class = parse_class_xml(&text).map_err(|e| format!("{}: {e}", p.display()))?;
                classes.insert(class.name.clone(), class);
            }
        }
    }
    if classes.is_empty() {
        return Err(format!("no class pages under {}", dir.display()));
    }
    Ok(ClassDb::new(version, classes))
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
    let program = godot(state)?;
    let meta = std::fs::metadata(&program).map_err(|e| ToolError::io("GODOT_BIN", &e))?;
    let key = (program.clone(), meta.len(), meta.modified().ok());
    let mut loaded = state.class_reference.lock().await;
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
        .filter(|db| db.is_current(&version));
    let db = match cached {
        Some(db) => db,
        None => build_cache(state, &program, version, &dir, &cache).await?,
    };
    let db = Arc::new(db);
    *loaded = Some(LoadedClassDb {
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
    let guard = temp_folder(dir, "doctool-")?;
    let work = guard.path();
    let run = doctool(state, program, work, DOCTOOL_TIMEOUT).await;
    let parsed = run.and_then(|(ended, _, stderr)| {
        if ended.code != Some(0) {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "godot --doctool failed ({:?}): {}",
                    ended.code,
                    tail(&stderr, 600).0.trim()
                ),
            ));
        }
        read_doctool_dir(version, work).map_err(|e| ToolError::new(ErrorCode::ParseError, e))
    });
    drop(guard);
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

fn rand_bytes<const N: usize>() -> Result<[u8; N], ToolError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(b)
}
