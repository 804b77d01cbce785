//! The engine's descriptions, which a bare `--doctool` leaves empty: read from the
//! headless editor's doc cache (see the module doc of `classref`) and merged by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use godot_mcp_formats::classdoc::clean_text;
use serde::Deserialize;

use super::{ClassDb, DOCTOOL_TIMEOUT, EDITOR_DOCS_TIMEOUT};
use crate::error::{ErrorCode, ToolError};
use crate::state::AppState;
use crate::tools::kit::godot_process::{plain_launch, run_supervised, tail, temp_folder};

/// The compiled-in descriptions, from the headless editor's doc cache (module doc).
pub(super) async fn editor_descriptions(
    state: &Arc<AppState>,
    program: &Path,
    dir: &Path,
) -> Result<Vec<DumpClass>, ToolError> {
    let work = temp_folder(dir, "editor-")?;
    editor_descriptions_in(state, program, work.path()).await
}

/// GDScript run with `--script`: the doc cache's `classes` meta, as JSON, next to the
/// private project. Godot names the cache `editor_doc_cache-<major.minor>.res`.
pub(super) const DUMP_GD: &str = r#"extends SceneTree

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

pub(super) async fn editor_descriptions_in(
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
                tail(&stderr, 400).0.trim()
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
pub(crate) struct DumpItem {
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
