//! End to end through a live headless Godot editor: an MCP `set_node_property` call
//! (policy, an `editor_runtime` journal transaction, the bridge, the add-on's
//! EditorUndoRedoManager action, the reply) timed as a stdio MCP client sees it.
//!
//! ```sh
//! GODOT_BIN=/path/to/godot-4.4 cargo bench -p godot-mcp-server --bench editor_set_property
//! ```
//!
//! Prints SKIPPED without GODOT_BIN. The add-on is the one `scripts/install-addon.sh`
//! builds (pass `GODOT_MCP_ADDON_RELEASE=1` to install a release build first).
//! `GODOT_MCP_BENCH_SERVER=/path/to/godot-mcp` times another server binary (an older
//! build, to alternate runs of two versions on a loaded machine);
//! `GODOT_MCP_BENCH_ADDON=/path/to/libgodot_mcp_editor.so` installs that add-on library
//! instead of building one (Linux x86_64).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_name() == ".godot" || e.file_name() == "addons" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let Some(godot) = std::env::var_os("GODOT_BIN").filter(|v| !v.is_empty()) else {
        println!("SKIPPED: GODOT_BIN is not set (this bench needs a Godot 4.4+ editor)");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    copy_dir(&repo().join("godot_project"), &project);
    if let Some(lib) = std::env::var_os("GODOT_MCP_BENCH_ADDON").filter(|v| !v.is_empty()) {
        // A library built earlier (an older add-on, to alternate two versions): the
        // add-on's files as they are, that library in place of a build.
        let addon = project.join("addons/godot_mcp");
        copy_dir(&repo().join("addons/godot_mcp"), &addon);
        let bin = addon.join("bin/linux-x86_64");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(&lib, bin.join("libgodot_mcp_editor.so")).unwrap();
    } else {
        let mut install = std::process::Command::new(repo().join("scripts/install-addon.sh"));
        install.arg("--project").arg(&project);
        if std::env::var_os("GODOT_MCP_ADDON_RELEASE").is_some() {
            install.arg("--release");
        }
        assert!(
            install.status().unwrap().success(),
            "install-addon.sh failed"
        );
    }
    let st = std::process::Command::new(&godot)
        .args(["--headless", "--import", "--path"])
        .arg(&project)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "godot --import failed");

    let server = std::env::var_os("GODOT_MCP_BENCH_SERVER")
        .filter(|v| !v.is_empty())
        .map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_godot-mcp")),
            PathBuf::from,
        );
    let mut cmd = tokio::process::Command::new(&server);
    cmd.args(["serve", "--log-level", "error", "--project"])
        .arg(&project)
        // set_node_property is in scene_edit, outside the default core.
        .env("GODOT_MCP_TOOLSETS", "all")
        .env("GODOT_MCP_STATE_DIR", work.path().join("state"));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let call = |name: &'static str, args: Value| {
        let req =
            CallToolRequestParams::new(name).with_arguments(args.as_object().unwrap().clone());
        let client = &client;
        async move { client.call_tool(req).await.unwrap() }
    };

    let mut editor = std::process::Command::new(&godot)
        .args(["--headless", "--editor", "--path"])
        .arg(&project)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let r = call("open_scene", json!({"path": "res://scenes/main_2d.tscn"})).await;
        if r.is_error != Some(true) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the editor never connected"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let mut samples = Vec::new();
    for i in 0..300 {
        let x = (i % 50) as f64;
        let t = Instant::now();
        let r = call(
            "set_node_property",
            json!({"node": "Background", "property": "position",
                   "value": {"$type": "Vector2", "x": x, "y": 324.0}}),
        )
        .await;
        let dt = t.elapsed();
        assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);
        if i >= 20 {
            samples.push(dt); // the first calls warm the editor up
        }
    }
    let n = samples.len();
    println!(
        "set_node_property through a live headless editor ({n} calls, journaled, on the undo stack): \
         p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms",
        percentile(&mut samples, 0.5).as_secs_f64() * 1e3,
        percentile(&mut samples, 0.9).as_secs_f64() * 1e3,
        percentile(&mut samples, 0.99).as_secs_f64() * 1e3,
    );
    let _ = editor.kill();
    let _ = editor.wait();
    client.cancel().await.unwrap();
}
