//! The add-on installed, a real engine exits 0 — on every engine the run names.
//!
//! `godot --headless --import` is the first step of every headless CI of a Godot project,
//! and the session that runs it on a fresh checkout is the one that finds the add-on's
//! GDExtension (no `.godot/extension_list.cfg` yet). On Godot 4.5+ such a session crashed
//! at exit (signal 11, godotengine/godot#111048) until the add-on waited for the editor's
//! class reference (rust/godot-mcp-editor/src/docs_settle.rs). For each engine: a fresh
//! copy of the demo project with the add-on installed, then `--import` and
//! `--editor --quit` after it; and a second fresh copy whose first session is
//! `--editor --quit`. Each must exit 0, with the add-on loaded.
//!
//! Engines: `GODOT_MCP_ENGINES` (paths, `:`-separated; .ci/run lists every engine it has),
//! else `GODOT_BIN`. Prints SKIPPED without either; with GODOT_MCP_REQUIRE_GODOT=1 that is
//! a failure.
#![cfg(unix)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;

fn engines() -> Vec<PathBuf> {
    if let Some(list) = std::env::var_os("GODOT_MCP_ENGINES").filter(|v| !v.is_empty()) {
        let list: Vec<PathBuf> = std::env::split_paths(&list).collect();
        for p in &list {
            assert!(
                p.is_file(),
                "GODOT_MCP_ENGINES names {}, not a file",
                p.display()
            );
        }
        return list;
    }
    support::godot_bin("the engine-exit test needs a Godot 4.4+ binary")
        .into_iter()
        .collect()
}

/// Runs one headless session to its end; its exit status and its log.
fn session(godot: &Path, project: &Path, args: &[&str]) -> (std::process::ExitStatus, String) {
    let out = std::process::Command::new(godot)
        .args(["--headless", "--path"])
        .arg(project)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run Godot");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, log)
}

fn fresh_project() -> tempfile::TempDir {
    let dir = support::demo_copy();
    support::install_addon(dir.path());
    assert!(
        !dir.path().join(".godot").exists(),
        "the copy must be fresh: its first session is the one that finds the add-on"
    );
    dir
}

#[test]
fn real_godot_import_and_quit_exit_0_with_the_addon_on_every_engine() {
    let engines = engines();
    if engines.is_empty() {
        return;
    }
    let mut failures = Vec::new();
    for godot in &engines {
        let version = support::engine_version(godot);
        eprintln!("engine: {version} ({})", godot.display());
        let import_first = fresh_project();
        let quit_first = fresh_project();
        let runs: [(&str, &Path, &[&str]); 3] = [
            (
                "--import (first session)",
                import_first.path(),
                &["--import"],
            ),
            (
                "--editor --quit (after the import)",
                import_first.path(),
                &["--editor", "--quit"],
            ),
            (
                "--editor --quit (first session)",
                quit_first.path(),
                &["--editor", "--quit"],
            ),
        ];
        for (what, project, args) in runs {
            let (status, log) = session(godot, project, args);
            let loaded = log.contains("godot-mcp: extension loaded");
            eprintln!("  {what}: {status}, add-on loaded: {loaded}");
            if !status.success() || !loaded {
                let tail: String = log
                    .lines()
                    .rev()
                    .take(40)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                failures.push(format!(
                    "Godot {version}: {what}: {status} (add-on loaded: {loaded}); log tail:\n{tail}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("PASSED on {} engine(s)", engines.len());
}
