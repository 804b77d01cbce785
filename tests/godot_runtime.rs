//! The process plane against a real Godot (`GODOT_BIN`, a 4.4+ binary; the
//! headless build has no renderer). Skipped with a message without one.
//!
//! In a temporary copy of `godot_project/` with the add-on installed (the
//! GDExtension built here, `addons/godot_mcp/probe/probe.gd`): run_and_capture
//! of a scene whose script errors, then a managed game with the runtime probe —
//! input injection with a hold, the structured no-renderer screenshot error, and
//! the release of held input when the probe loses its server.
//!
//! The renderer tier (`GODOT_RENDER_BIN`, a Godot with X11 + OpenGL 3, under Xvfb):
//! a game started by the server without `--headless` answers game_screenshot with a
//! real frame of the demo scene.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

fn godot() -> Option<PathBuf> {
    support::godot_bin("the real-Godot process-plane tests need a Godot 4.4+ binary")
}

/// Builds the add-on library and installs it into a copy of godot_project.
fn project_with_addon(godot: &Path) -> tempfile::TempDir {
    let dir = support::demo_copy();
    support::install_addon(dir.path());
    std::fs::write(
        dir.path().join("scripts/broken.gd"),
        "extends Node\n\nfunc _ready():\n\tvar n = null\n\tn.explode()\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("scenes/broken.tscn"),
        "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://scripts/broken.gd\" id=\"1\"]\n\n[node name=\"Broken\" type=\"Node\"]\nscript = ExtResource(\"1\")\n",
    )
    .unwrap();
    // One import run creates .godot/ (extension_list.cfg, the class cache). It must
    // succeed: a failed import (a broken add-on library, say) leaves nothing to test.
    let out = std::process::Command::new(godot)
        .args(["--headless", "--path"])
        .arg(dir.path())
        .args(["--import"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "godot --import failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        dir.path().join(".godot/extension_list.cfg").is_file(),
        "godot --import did not register the add-on's GDExtension"
    );
    dir
}

async fn start(project: &Path, state: &Path, godot: &Path) -> (Client, i32) {
    let mut cmd = tokio::process::Command::new(support::bin());
    cmd.arg("serve")
        .arg("--project")
        .arg(project)
        .env("GODOT_BIN", godot)
        .env("GODOT_MCP_TOOLSETS", "all")
        .env("GODOT_MCP_STATE_DIR", state);
    let (t, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = t.id().unwrap() as i32;
    (().serve(t).await.unwrap(), pid)
}

/// A copy of the demo project with the add-on, and a server on it. The state dir is short
/// and under /tmp: a session's control socket path must fit a unix socket address.
async fn served(godot: &Path) -> (tempfile::TempDir, tempfile::TempDir, Client, i32) {
    let p = project_with_addon(godot);
    let s = tempfile::Builder::new()
        .prefix("gr")
        .tempdir_in("/tmp")
        .unwrap();
    let (client, server) = start(p.path(), s.path(), godot).await;
    (p, s, client, server)
}

async fn call(c: &Client, name: &'static str, args: Value) -> rmcp::model::CallToolResult {
    c.call_tool(CallToolRequestParams::new(name).with_arguments(args.as_object().unwrap().clone()))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_run_capture_probe_input_and_release() {
    let Some(godot) = godot() else { return };
    let (_p, s, client, server) = served(&godot).await;

    let r = call(
        &client,
        "run_and_capture",
        json!({"scene": "res://scenes/broken.tscn", "frames": 30, "timeout_ms": 60000}),
    )
    .await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");
    let errs = v["script_errors"].as_array().unwrap();
    assert!(
        errs.iter()
            .any(|e| e["file"] == "res://scripts/broken.gd" && e["line"] == 5),
        "no parsed script error at broken.gd:5: {v}"
    );
    assert_ne!(v["end"]["ended_by"], "timeout", "{v}");

    let r = call(&client, "play_scene", json!({})).await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let r = call(
        &client,
        "simulate_input",
        json!({"event": {"type": "action", "action": "ui_accept"}, "hold_ms": 60000}),
    )
    .await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "input: {v}");
    assert_eq!(v["held"], 1, "{v}");
    let r = call(&client, "game_screenshot", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["required"], "no_renderer", "{e}");
    // Read and sample a real node property through the real probe.
    let r = call(
        &client,
        "monitor_property",
        json!({"node": "/root", "property": "name", "samples": 3, "interval_ms": 20}),
    )
    .await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "monitor: {v}");
    assert_eq!(v["returned"], 3, "{v}");
    assert_eq!(v["samples"][0]["value"], "root", "{v}");

    // The server dies holding input: the probe releases it and quits 15 s later.
    if let Some(pid) = rustix::process::Pid::from_raw(server) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    drop(client);
    let start_wait = Instant::now();
    while !support::group_members(pgid).is_empty() {
        assert!(
            start_wait.elapsed() < Duration::from_secs(30),
            "the game did not quit after losing its server"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = std::fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .flat_map(|d| {
            std::fs::read_dir(d.path().join("sessions"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|d| std::fs::read_to_string(d.path().join("stdout.log")).unwrap_or_default())
        .collect::<String>();
    assert!(
        log.contains("server lost; released 1 held input(s)"),
        "{log}"
    );
    eprintln!(
        "PASSED: process plane and runtime probe against a real Godot ({})",
        godot.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_render_game_screenshot_is_a_real_frame() {
    let Some(godot) = support::godot_render_bin(
        "the renderer tier needs a Godot 4.4+ build with a renderer, under Xvfb",
    ) else {
        return;
    };
    let (_p, _s, client, _server) = served(&godot).await;
    let r = call(&client, "play_scene", json!({"headless": false})).await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");

    // The probe is up once play_scene answers; the capture waits `frames` frames so the
    // scene is drawn (a capture of the very first frames is blank). A real frame of the
    // demo scene (a tinted background sprite, the player, the enemy) has many distinct
    // colours; a blank clear colour has one.
    let r = call(&client, "game_screenshot", json!({"frames": 10})).await;
    let structured = r.structured_content.clone().unwrap();
    assert_ne!(r.is_error, Some(true), "{structured}");
    let wire = serde_json::to_value(&r.content[0]).unwrap();
    assert_eq!(wire["type"], "image", "{wire}");
    assert_eq!(wire["mimeType"], "image/png", "{wire}");
    let bytes = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        wire["data"].as_str().unwrap(),
    )
    .expect("base64 image data");
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    let colours = buf[..info.buffer_size()]
        .chunks(info.color_type.samples())
        .collect::<std::collections::HashSet<_>>()
        .len();
    assert!(
        colours >= 10,
        "only {colours} distinct colours after 10 frames: not a rendered scene"
    );
    assert_eq!(structured["width"], info.width, "{structured}");
    assert_eq!(structured["height"], info.height, "{structured}");
    assert!(info.width >= 64 && info.height >= 64, "{info:?}");
    call(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: game_screenshot from a real renderer: {}x{} PNG, {} colours ({})",
        info.width,
        info.height,
        colours,
        godot.display()
    );
}

/// Issue 10 item 3 with a real Godot 4.4 game: play_scene, the server SIGKILLed, the
/// session's `c.sock` deleted (as a temp-file cleaner would), the server started again
/// (within the 15 s the probe waits before it quits). The game is the launched process
/// by pid and start time but not by full identity: a partial match. It is recorded
/// quarantined (never "gone, boundary proven empty"), the write gate closes, and the
/// game is not signalled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_a_deleted_control_socket_is_quarantined_and_untouched() {
    let Some(godot) = godot() else { return };
    let (p, s, client, server) = served(&godot).await;
    let r = call(&client, "play_scene", json!({})).await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let txn = v["session_id"].as_str().unwrap().to_string();
    struct KillGroup(i32);
    impl Drop for KillGroup {
        fn drop(&mut self) {
            if let Some(p) = rustix::process::Pid::from_raw(self.0) {
                let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
            }
        }
    }
    let _k = KillGroup(pgid);
    support::kill9_and_wait(server as u32);
    drop(client);
    std::fs::remove_file(support::control_socket(s.path())).unwrap();

    let (client, _server) = start(p.path(), s.path(), &godot).await;
    assert!(
        !support::group_members(pgid).is_empty(),
        "the game was signalled on a partial match"
    );
    let r = call(&client, "list_transactions", json!({})).await;
    let t = r.structured_content.unwrap();
    assert_eq!(t["write_gate"]["status"], "closed", "{t}");
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "quarantined", "{row}");
    assert!(
        row["reason"].as_str().unwrap().contains("partial identity"),
        "{row}"
    );
    assert!(
        row["proof_summary"]
            .as_str()
            .unwrap()
            .contains("boundary NOT proven empty"),
        "{row}"
    );
    let r = call(
        &client,
        "create_script",
        json!({"path": "res://scripts/new.gd", "confirm": true}),
    )
    .await;
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["code"], "WRITE_GATE_CLOSED", "{e}");
    assert!(!p.path().join("scripts/new.gd").exists());
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: a real game whose control socket was deleted is a partial match: quarantined, gate closed, game untouched ({})",
        godot.display()
    );
}
