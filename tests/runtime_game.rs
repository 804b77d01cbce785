//! The developer's-loop tools of `tools/runtime/game.rs`, end to end through the real
//! `godot-mcp` binary:
//!
//! - with the stand-in `godot` (no Godot needed): performance monitors, the game's scene
//!   tree and UI search, per-frame samples, record_input → stop_recording → replay, and a
//!   cancelled play_input_sequence releasing everything at once (recovery.md);
//! - import_asset's source rule (a `~/.ssh`-like source and a symlink out are refused,
//!   an operator-allowed folder is read) and get_import_status from disk;
//! - with a real Godot (`GODOT_BIN`, tests `real_godot_*`): the same against a real
//!   headless game through the real probe, and rescan/import against a real editor.
// Unix only: launches need the process-group boundary (docs/platforms.md).
#![cfg(unix)]

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::{PeerRequestOptions, RunningService};
use serde_json::{Value, json};
use support::{call_err as err, call_ok as ok};

type Client = RunningService<rmcp::RoleClient, ()>;

/// Kills whatever a failed test left behind (never a process outside `needle`).
struct Cleanup(String);
impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in support::processes_with(&self.0) {
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

async fn standin_game(
    env: &[(&str, &str)],
) -> (tempfile::TempDir, tempfile::TempDir, Cleanup, Client) {
    let p = support::tiny_project("rm");
    let s = support::short_state_dir("rm");
    let c = Cleanup(s.path().display().to_string());
    let mut all = vec![("GODOT_STANDIN_HANG", "1")];
    all.extend_from_slice(env);
    let (client, _) = support::serve_standin(p.path(), s.path(), &all, Stdio::null()).await;
    ok(&client, "play_scene", json!({})).await;
    (p, s, c, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_game_answers_monitors_tree_ui_and_samples() {
    let (_p, _s, _c, client) = standin_game(&[]).await;

    let m = ok(
        &client,
        "get_performance_monitors",
        json!({"samples": 3, "interval_ms": 10}),
    )
    .await;
    assert_eq!(m["target"], "game", "{m}");
    assert_eq!(m["samples"], 3, "{m}");
    let fps = &m["monitors"]["fps"];
    assert!(
        fps["min"].as_f64().unwrap() <= fps["avg"].as_f64().unwrap(),
        "{m}"
    );
    assert!(m["monitors"]["draw_calls"].is_object(), "{m}");

    let t = ok(&client, "get_game_scene_tree", json!({"limit": 2})).await;
    assert_eq!(t["total"], 6, "{t}");
    assert_eq!(t["next_offset"], 2, "{t}");
    assert_eq!(t["nodes"][1]["path"], "/root/Main", "{t}");
    let rest = ok(&client, "get_game_scene_tree", json!({"offset": 2})).await;
    assert_eq!(rest["nodes"].as_array().unwrap().len(), 4, "{rest}");
    assert_eq!(rest["next_offset"], Value::Null, "{rest}");
    let shallow = ok(
        &client,
        "get_game_scene_tree",
        json!({"root": "/root/Main", "max_depth": 1}),
    )
    .await;
    assert_eq!(shallow["total"], 3, "{shallow}");

    let u = ok(&client, "find_ui_elements", json!({"text": "START"})).await;
    assert_eq!(u["matched"], 1, "{u}");
    assert_eq!(
        u["elements"][0]["path"], "/root/Main/HUD/StartButton",
        "{u}"
    );
    assert!(u["elements"][0]["rect"]["w"].as_f64().unwrap() > 0.0, "{u}");
    let labels = ok(&client, "find_ui_elements", json!({"type": "Label"})).await;
    assert_eq!(labels["matched"], 1, "{labels}");
    assert_eq!(labels["elements"][0]["text"], "Score: 0", "{labels}");

    let s = ok(
        &client,
        "sample_game_property",
        json!({"node": "/root/Main", "property": "ticks", "frames": 5}),
    )
    .await;
    assert_eq!(s["returned"], 5, "{s}");
    assert!(s["distinct_values"].as_u64().unwrap() > 1, "{s}");

    // Bad input: refused before anything reaches the game.
    let e = err(&client, "find_ui_elements", json!({"type": "Button; x"})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    let e = err(
        &client,
        "sample_game_property",
        json!({"node": "Main", "property": "x"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    let e = err(
        &client,
        "get_game_scene_tree",
        json!({"root": "/root/Nope"}),
    )
    .await;
    assert_eq!(e["required"], "node_not_found", "{e}");
    let e = err(
        &client,
        "get_performance_monitors",
        json!({"target": "editor"}),
    )
    .await;
    assert_eq!(e["required"], "bridge_connected", "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_comes_back_as_a_sequence_that_plays() {
    let (_p, _s, _c, client) = standin_game(&[]).await;
    let e = err(&client, "stop_recording", json!({})).await;
    assert_eq!(e["required"], "not_recording", "{e}");

    ok(&client, "record_input", json!({})).await;
    ok(
        &client,
        "simulate_input",
        json!({"event": {"type": "key", "key": "A"}, "hold_ms": 40}),
    )
    .await;
    ok(
        &client,
        "play_input_sequence",
        json!({"steps": [
            {"event": {"type": "action", "action": "jump"}, "wait_ms": 30},
            {"event": {"type": "mouse_button", "button": 1, "x": 5.0, "y": 6.0}}
        ]}),
    )
    .await;
    let r = ok(&client, "stop_recording", json!({})).await;
    let steps = r["steps"].as_array().unwrap();
    let events: Vec<&Value> = steps.iter().filter_map(|s| s.get("event")).collect();
    assert_eq!(events.len(), 3, "{r}");
    assert_eq!(events[0], &json!({"type": "key", "key": "A"}), "{r}");
    assert_eq!(steps[0]["hold_ms"], 40, "{r}");
    assert_eq!(events[1]["action"], "jump", "{r}");
    assert_eq!(events[2]["button"], 1, "{r}");
    assert_eq!(r["releases_without_press"], 0, "{r}");

    // What stop_recording returns is what play_input_sequence takes.
    let played = ok(&client, "play_input_sequence", json!({"steps": r["steps"]})).await;
    assert_eq!(played["events_sent"], 3, "{played}");

    let e = err(&client, "play_input_sequence", json!({"steps": []})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    let e = err(
        &client,
        "play_input_sequence",
        json!({"steps": [{"hold_ms": 5}]}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
}

/// The probe's held-input count, through is_playing.
async fn held(client: &Client) -> u64 {
    let v = ok(client, "is_playing", json!({})).await;
    assert_eq!(v["playing"], true, "{v}");
    v["held_inputs"].as_u64().unwrap_or(u64::MAX)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_sequence_releases_everything_at_once() {
    let (_p, _s, _c, client) = standin_game(&[]).await;
    assert_eq!(held(&client).await, 0);
    // Holds A for 60 s and then waits 60 s: only a cancellation ends it sooner.
    let args = json!({"steps": [
        {"event": {"type": "key", "key": "A"}, "hold_ms": 60000, "wait_ms": 60000},
        {"event": {"type": "key", "key": "B"}}
    ]});
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("play_input_sequence")
            .with_arguments(args.as_object().unwrap().clone()),
    ));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let start = Instant::now();
    while held(&client).await != 1 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "A was never pressed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    handle
        .cancel(Some("the agent changed its mind".into()))
        .await
        .unwrap();
    // Released on cancellation, long before the hold (60 s) would end it.
    let start = Instant::now();
    while held(&client).await != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the cancelled sequence left its input held"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let v = ok(&client, "is_playing", json!({})).await;
    assert_eq!(v["probe"], "answering", "{v}");
}

/// Issue 40 item 3: audio `finished` never fired while an agent stepped a held game, and
/// nothing said so. Every step's answer says what stepping does not advance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_says_plainly_what_it_does_not_advance() {
    let (_p, _s, _c, client) = standin_game(&[]).await;
    let v = ok(&client, "game_step", json!({"frames": 3})).await;
    assert_eq!(v["advanced"], 3, "{v}");
    let note = v["not_stepped"].as_str().unwrap_or_default();
    assert!(
        note.contains("audio") && note.contains("finished"),
        "the answer says audio does not advance: {v}"
    );
    ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn is_playing_without_a_game_is_false() {
    let p = support::tiny_project("rm");
    let s = support::short_state_dir("rm");
    let (client, _) = support::serve_standin(p.path(), s.path(), &[], Stdio::null()).await;
    let v = ok(&client, "is_playing", json!({})).await;
    assert_eq!(v, json!({"playing": false, "session_id": null}));
}

fn tiny_png() -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_asset_reads_only_allowed_folders() {
    let p = support::tiny_project("imp");
    let allowed = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(
        home.path().join(".ssh/id_ed25519.png"),
        b"-----BEGIN KEY-----",
    )
    .unwrap();
    std::fs::write(allowed.path().join("hero.png"), tiny_png()).unwrap();
    // A link in the allowed folder to the key: decided by where it points.
    std::os::unix::fs::symlink(
        home.path().join(".ssh/id_ed25519.png"),
        allowed.path().join("looks_fine.png"),
    )
    .unwrap();
    let client = support::connect_with(
        p.path(),
        &[("GODOT_MCP_IMPORT_DIRS", allowed.path().to_str().unwrap())],
    )
    .await;
    let before = support::files_under(p.path(), &[]);
    for source in [
        home.path().join(".ssh/id_ed25519.png"),
        allowed.path().join("looks_fine.png"),
    ] {
        let e = err(
            &client,
            "import_asset",
            json!({"source": source, "dest": "res://art/key.png", "confirm": true}),
        )
        .await;
        assert_eq!(e["code"], "PATH_REFUSED", "{source:?}: {e}");
        assert_eq!(e["param"], "source", "{e}");
    }
    assert_eq!(
        support::files_under(p.path(), &[]),
        before,
        "a refusal wrote something"
    );

    let src = allowed.path().join("hero.png");
    let dry = ok(
        &client,
        "import_asset",
        json!({"source": src, "dest": "res://art/hero.png", "dry_run": true}),
    )
    .await;
    assert!(
        !p.path().join("art/hero.png").exists(),
        "a dry run wrote: {dry}"
    );
    let e = err(
        &client,
        "import_asset",
        json!({"source": src, "dest": "res://art/hero.jpg", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    let v = ok(
        &client,
        "import_asset",
        json!({"source": src, "dest": "res://art/hero.png", "confirm": true}),
    )
    .await;
    assert_eq!(
        std::fs::read(p.path().join("art/hero.png")).unwrap(),
        tiny_png()
    );
    assert!(v["transaction_id"].is_string(), "{v}");
    assert_eq!(v["import"]["status"], "pending", "{v}");
    assert_eq!(v["import"]["editor_connected"], false, "{v}");
    assert_eq!(dry["source"], v["source"], "{dry} vs {v}");

    // Never imported: its .import file is missing.
    let s = ok(&client, "get_import_status", json!({})).await;
    assert_eq!(
        s["files"],
        json!([{"path": "res://art/hero.png", "status": "missing"}]),
        "{s}"
    );
    let e = err(&client, "rescan_filesystem", json!({})).await;
    assert_eq!(e["required"], "bridge_connected", "{e}");
}

/// An imported file's state, from a fixture written the way Godot 4.4 writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_status_tells_current_stale_failed_and_missing_outputs() {
    let p = support::tiny_project("ist");
    let root = p.path();
    let hash = "0123456789abcdef0123456789abcdef";
    let write = |name: &str, body: &[u8]| {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    };
    let md5 = |b: &[u8]| {
        use md5::Digest;
        hex::encode(md5::Md5::digest(b))
    };
    for (name, valid) in [
        ("ok.png", true),
        ("stale.png", true),
        ("gone.png", true),
        ("bad.png", false),
    ] {
        write(name, name.as_bytes());
        let dest = format!("res://.godot/imported/{name}-{hash}.ctex");
        write(
            &format!("{name}.import"),
            format!(
                "[remap]\n\nimporter=\"texture\"\ntype=\"CompressedTexture2D\"\nuid=\"uid://x\"\npath=\"{dest}\"\n{}\n[deps]\n\nsource_file=\"res://{name}\"\ndest_files=[\"{dest}\"]\n",
                if valid { "" } else { "valid=false\n" }
            )
            .as_bytes(),
        );
        if name != "gone.png" {
            write(&format!(".godot/imported/{name}-{hash}.ctex"), b"tex");
        }
        write(
            &format!(".godot/imported/{name}-{hash}.md5"),
            format!("source_md5=\"{}\"\ndest_md5=\"x\"\n", md5(name.as_bytes())).as_bytes(),
        );
    }
    write("stale.png", b"changed since");
    let client = support::connect(root).await;
    let s = ok(&client, "get_import_status", json!({"all": true})).await;
    let status: Vec<(String, String)> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().into(),
                f["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("res://bad.png", "failed"),
        ("res://gone.png", "output_missing"),
        ("res://ok.png", "imported"),
        ("res://stale.png", "stale"),
    ];
    assert_eq!(
        status,
        want.map(|(a, b)| (a.to_string(), b.to_string())),
        "{s}"
    );
    let problems = ok(&client, "get_import_status", json!({})).await;
    assert_eq!(problems["total"], 3, "{problems}");
}

// ---- real Godot ---------------------------------------------------------------------

const UI_SCENE: &str = "[gd_scene load_steps=2 format=3]

[ext_resource type=\"Script\" path=\"res://scripts/ui.gd\" id=\"1\"]

[node name=\"UI\" type=\"Control\"]
layout_mode = 3
anchors_preset = 0
offset_right = 400.0
offset_bottom = 300.0
script = ExtResource(\"1\")

[node name=\"StartButton\" type=\"Button\" parent=\".\"]
layout_mode = 0
offset_left = 10.0
offset_top = 20.0
offset_right = 130.0
offset_bottom = 60.0
text = \"Start Game\"

[node name=\"Score\" type=\"Label\" parent=\".\"]
layout_mode = 0
offset_left = 10.0
offset_top = 80.0
offset_right = 200.0
offset_bottom = 110.0
text = \"Score: 0\"
";

/// The recorded steps' events, in order.
fn step_events(r: &Value) -> Vec<Value> {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("event").cloned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_game_monitors_tree_ui_samples_and_a_replayed_recording() {
    let Some(godot) = support::godot_bin("the real game tests need a Godot 4.4+ binary") else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    support::install_addon(p);
    std::fs::write(p.join("scenes/ui.tscn"), UI_SCENE).unwrap();
    std::fs::write(
        p.join("scripts/ui.gd"),
        "extends Control\n\nvar frames := 0\n\nfunc _process(_delta: float) -> void:\n\tframes += 1\n",
    )
    .unwrap();
    support::run_godot(&godot, p, &["--import"]);
    let s = support::short_state_dir("rmg");
    let _c = Cleanup(s.path().display().to_string());
    let client = support::connect_in(p, s, &[("GODOT_BIN", godot.to_str().unwrap())]).await;
    ok(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/ui.tscn"}),
    )
    .await;

    let v = ok(&client, "is_playing", json!({})).await;
    assert_eq!(
        (&v["playing"], &v["probe"], &v["breaked"]),
        (&json!(true), &json!("answering"), &json!(false)),
        "{v}"
    );

    let m = ok(
        &client,
        "get_performance_monitors",
        json!({"samples": 3, "interval_ms": 50}),
    )
    .await;
    assert!(
        m["monitors"]["nodes"]["max"].as_f64().unwrap() >= 3.0,
        "{m}"
    );
    assert!(
        m["monitors"]["objects"]["min"].as_f64().unwrap() > 0.0,
        "{m}"
    );
    assert!(m["monitors"]["fps"].is_object(), "{m}");

    let t = ok(&client, "get_game_scene_tree", json!({"max_depth": 2})).await;
    let button = t["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["path"] == "/root/UI/StartButton")
        .unwrap_or_else(|| panic!("no StartButton in {t}"));
    assert_eq!(button["class"], "Button", "{t}");
    assert_eq!(button["depth"], 2, "{t}");

    let u = ok(&client, "find_ui_elements", json!({"text": "start"})).await;
    assert_eq!(u["matched"], 1, "{u}");
    assert_eq!(u["elements"][0]["path"], "/root/UI/StartButton", "{u}");
    // Where the scene puts it; a Button grows to its theme's minimum height.
    let rect = &u["elements"][0]["rect"];
    assert_eq!(
        (&rect["x"], &rect["y"], &rect["w"]),
        (&json!(10.0), &json!(20.0), &json!(120.0)),
        "{u}"
    );
    assert!(rect["h"].as_f64().unwrap() >= 40.0, "{u}");
    let labels = ok(&client, "find_ui_elements", json!({"type": "Label"})).await;
    assert_eq!(labels["elements"][0]["text"], "Score: 0", "{labels}");

    let smp = ok(
        &client,
        "sample_game_property",
        json!({"node": "/root/UI", "property": "frames", "frames": 5}),
    )
    .await;
    assert_eq!(smp["returned"], 5, "{smp}");
    assert_eq!(smp["distinct_values"], 5, "one value a frame: {smp}");

    // Record what the game receives, then replay it and record the replay.
    ok(&client, "record_input", json!({})).await;
    ok(
        &client,
        "simulate_input",
        json!({"event": {"type": "key", "key": "A"}}),
    )
    .await;
    ok(
        &client,
        "play_input_sequence",
        json!({"steps": [{"event": {"type": "action", "action": "ui_accept"}, "hold_ms": 30, "wait_ms": 200}]}),
    )
    .await;
    let first = ok(&client, "stop_recording", json!({})).await;
    assert_eq!(
        step_events(&first),
        vec![
            json!({"type": "key", "key": "A"}),
            json!({"type": "action", "action": "ui_accept"})
        ],
        "{first}"
    );
    assert_eq!(first["releases_without_press"], 0, "{first}");
    ok(&client, "record_input", json!({})).await;
    let played = ok(
        &client,
        "play_input_sequence",
        json!({"steps": first["steps"]}),
    )
    .await;
    assert_eq!(played["events_sent"], 2, "{played}");
    let second = ok(&client, "stop_recording", json!({})).await;
    assert_eq!(step_events(&second), step_events(&first), "{second}");
    ok(&client, "stop_scene", json!({})).await;
    eprintln!("PASSED: monitors, tree, UI, samples and a replayed recording against a real game");
}

/// A second, different PNG (2×1), as Godot would see a re-exported image.
fn other_png() -> Vec<u8> {
    let img = image::RgbaImage::from_pixel(2, 1, image::Rgba([200, 10, 10, 255]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_editor_rescan_import_status_and_monitors() {
    let Some(godot) =
        support::godot_bin("the real editor file-system tests need a Godot 4.4+ binary")
    else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    support::install_addon(p);
    support::run_godot(&godot, p, &["--import"]);
    let allowed = tempfile::tempdir().unwrap();
    std::fs::write(allowed.path().join("hero.png"), tiny_png()).unwrap();
    let client = support::connect_with(
        p,
        &[("GODOT_MCP_IMPORT_DIRS", allowed.path().to_str().unwrap())],
    )
    .await;
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("editor.log");
    let mut editor = support::start_godot_editor(&godot, p, &log);

    let r =
        support::call_once_connected(&client, &mut editor, &log, "rescan_filesystem", json!({}))
            .await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");
    assert_eq!(v["finished"], true, "{v}");

    let m = ok(
        &client,
        "get_performance_monitors",
        json!({"target": "editor", "samples": 2, "interval_ms": 20}),
    )
    .await;
    assert!(m["monitors"]["nodes"]["max"].as_f64().unwrap() > 0.0, "{m}");

    let started = Instant::now();
    let v = ok(
        &client,
        "import_asset",
        json!({"source": allowed.path().join("hero.png"), "dest": "res://art/hero.png", "confirm": true}),
    )
    .await;
    eprintln!(
        "import_asset answered in {} ms",
        started.elapsed().as_millis()
    );
    assert_eq!(v["import"]["status"], "imported", "{v}");
    assert!(p.join("art/hero.png.import").is_file(), "{v}");
    let s = ok(
        &client,
        "get_import_status",
        json!({"path": "res://art", "all": true}),
    )
    .await;
    assert_eq!(
        s["files"],
        json!([{"path": "res://art/hero.png", "status": "imported"}]),
        "{s}"
    );

    // Changed behind Godot's back (a newer mtime, as an export from a paint program):
    // stale on disk until a rescan reimports it.
    let f = std::fs::File::create(p.join("art/hero.png")).unwrap();
    std::io::Write::write_all(&mut &f, &other_png()).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(f);
    let s = ok(&client, "get_import_status", json!({"path": "res://art"})).await;
    assert_eq!(
        s["files"],
        json!([{"path": "res://art/hero.png", "status": "stale"}]),
        "{s}"
    );
    let started = Instant::now();
    let v = ok(&client, "rescan_filesystem", json!({})).await;
    eprintln!(
        "rescan_filesystem answered in {} ms",
        started.elapsed().as_millis()
    );
    assert_eq!(v["finished"], true, "{v}");
    let s = ok(&client, "get_import_status", json!({"path": "res://art"})).await;
    assert_eq!(s["files"], json!([]), "reimported: {s}");
    support::kill_godot_editor(&mut editor);
    eprintln!(
        "PASSED: rescan, import_asset, import status and editor monitors against a real editor"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_that_does_not_finish_is_a_timeout_not_a_success() {
    let project = support::tiny_project("scan");
    let client = support::connect(project.path()).await;
    let d = support::wait_discovery(project.path());
    // The add-on of an editor whose file-system scan never ends (a fault a real editor
    // cannot be made to produce on demand).
    let peer = support::addon_peer(&d, |r| match r.cmd.as_str() {
        "filesystem.scan" => json!({"started": true, "scanning": true, "scans_finished": 0}),
        _ => json!({"scanning": true, "progress": 0.5, "scans_finished": 0}),
    });
    let r = support::call(&client, "rescan_filesystem", json!({"timeout_ms": 1000})).await;
    assert_eq!(r.is_error, Some(true), "{:?}", r.structured_content);
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert_eq!(e["details"]["finished"], false, "{e}");
    assert_eq!(e["details"]["progress"], 0.5, "{e}");
    drop(client);
    let seen: Vec<String> = peer.join().unwrap().into_iter().map(|r| r.cmd).collect();
    assert_eq!(seen[0], "filesystem.scan", "{seen:?}");
    assert!(
        seen[1..].iter().all(|c| c == "filesystem.status"),
        "{seen:?}"
    );
}

/// Issue 40 item 3 against a real editor and game: stop_scene without a session stopped
/// the editor too. Here a managed editor (start_editor answers once its add-on said
/// hello, so the editor call right after it is served) and a game run side by side;
/// stop_scene stops the game and the editor survives; a second stop_scene names the
/// editor and stop_editor instead of stopping it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_stop_scene_stops_the_game_and_the_editor_survives() {
    let Some(godot) = support::godot_bin("the real process tests need a Godot 4.4+ binary") else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    support::install_addon(p);
    support::run_godot(&godot, p, &["--import"]);
    let s = support::short_state_dir("rse");
    let _c = Cleanup(s.path().display().to_string());
    let client = support::connect_in(p, s, &[("GODOT_BIN", godot.to_str().unwrap())]).await;
    let editor = ok(&client, "start_editor", json!({})).await;
    eprintln!("start_editor: {editor}");
    let editor_id = editor["session_id"].clone();
    if editor["ready"] == true {
        // Ready means the editor takes a call now: this one is answered by it (one that
        // needs no open scene: Godot 4.6 starts with none, 4.4 reopens the last one).
        ok(
            &client,
            "open_scene",
            json!({"path": "res://scenes/main_2d.tscn"}),
        )
        .await;
    }
    let game = ok(&client, "play_scene", json!({"headless": true})).await;
    assert_eq!(game["display"]["headless"], true, "{game}");
    let stop = ok(&client, "stop_scene", json!({})).await;
    assert_eq!(
        stop["stopped"][0]["session_id"], game["session_id"],
        "{stop}"
    );
    let l = ok(&client, "list_sessions", json!({})).await;
    let editor_running = l["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["session_id"] == editor_id && s["running"] == true);
    assert!(editor_running, "the editor was stopped with the game: {l}");
    let e = err(&client, "stop_scene", json!({})).await;
    assert!(
        e["message"].as_str().unwrap().contains("stop_editor"),
        "{e}"
    );
    // The editor still serves calls (waited for if it was still loading).
    ok(&client, "editor_history", json!({})).await;
    ok(&client, "stop_editor", json!({})).await;
    client.cancel().await.unwrap();
}

/// Issue 40 item 3, the renderer tier (GODOT_RENDER_BIN under Xvfb): play_scene was
/// headless unless told, so an agent's first screenshot failed, and the managed editor
/// was always headless, so editor screenshots never worked there. With a display, a
/// game renders by default (its screenshot is a frame), and `start_editor {headless:
/// false}` opens a window whose editor captures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_render_a_game_and_a_windowed_editor_render_on_the_display() {
    let Some(godot) =
        support::godot_render_bin("the renderer tier needs a Godot build with a renderer")
    else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    support::install_addon(p);
    support::run_godot(&godot, p, &["--import"]);
    let s = support::short_state_dir("rrd");
    let _c = Cleanup(s.path().display().to_string());
    let client = support::connect_in(p, s, &[("GODOT_BIN", godot.to_str().unwrap())]).await;
    let v = ok(&client, "play_scene", json!({})).await;
    assert_eq!(v["display"]["headless"], false, "{v}");
    assert!(
        v["display"]["why"].as_str().unwrap().contains("DISPLAY="),
        "{v}"
    );
    ok(&client, "game_screenshot", json!({"frames": 10})).await;
    ok(&client, "stop_scene", json!({})).await;

    let v = ok(
        &client,
        "start_editor",
        json!({"headless": false, "rendering_driver": "opengl3"}),
    )
    .await;
    eprintln!("start_editor: {v}");
    assert_eq!(v["display"]["headless"], false, "{v}");
    ok(
        &client,
        "open_scene",
        json!({"path": "res://scenes/main_2d.tscn"}),
    )
    .await;
    let shot = ok(&client, "capture_editor_screenshot", json!({"view": "2d"})).await;
    assert!(shot["width"].as_u64().unwrap_or(0) > 0, "{shot}");
    ok(&client, "stop_editor", json!({})).await;
    client.cancel().await.unwrap();
}

/// A scene whose root counts its physics frames.
const COUNTER_SCENE: &str = "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://scripts/counter.gd\" id=\"1\"]\n\n[node name=\"Counter\" type=\"Node2D\"]\nscript = ExtResource(\"1\")\n\n[node name=\"Tag\" type=\"Label\" parent=\".\"]\ntext = \"tagged\"\n";

/// Expressions with the engine, judged by a real game through the real probe: the
/// engine's singletons (ProjectSettings, Time) are reachable by name from
/// evaluate_expression, game_run_until and watches; a parse error, an execution failure
/// and a method read as a property are errors carrying Godot's own text, in the call's
/// answer and in a watch row, never a null value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_expressions_reach_the_engine_singletons_and_fail_with_godots_text() {
    let Some(godot) = support::godot_bin("the real game tests need a Godot 4.4+ binary") else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    support::install_addon(p);
    std::fs::write(p.join("scenes/counter.tscn"), COUNTER_SCENE).unwrap();
    std::fs::write(
        p.join("scripts/counter.gd"),
        "extends Node2D\n\nvar n := 0\n\nfunc _physics_process(_delta: float) -> void:\n\tn += 1\n",
    )
    .unwrap();
    support::run_godot(&godot, p, &["--import"]);
    let name = std::fs::read_to_string(p.join("project.godot"))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("config/name=\"")?
                .strip_suffix('"')
                .map(str::to_string)
        })
        .unwrap();
    let s = support::short_state_dir("rmx");
    let _c = Cleanup(s.path().display().to_string());
    let client = support::connect_in(p, s, &[("GODOT_BIN", godot.to_str().unwrap())]).await;
    ok(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/counter.tscn"}),
    )
    .await;
    let eval = |e: &str| json!({"expression": e});

    // The singletons, by name.
    let v = ok(
        &client,
        "evaluate_expression",
        eval("ProjectSettings.get_setting(\"application/config/name\")"),
    )
    .await;
    assert_eq!(v["value"], json!(name), "{v}");
    let v = ok(
        &client,
        "evaluate_expression",
        eval("Time.get_ticks_msec() >= 0"),
    )
    .await;
    assert_eq!(v["value"], json!(true), "{v}");
    let v = ok(
        &client,
        "evaluate_expression",
        eval("Input.is_action_pressed(\"ui_accept\")"),
    )
    .await;
    assert_eq!(v["value"], json!(false), "{v}");
    // GDScript's node shorthand, as an agent writes it (agent trial audio-music-player:
    // `$Music` met "Expected number after '$'"): `$Path` and `$"path"` are get_node.
    let v = ok(
        &client,
        "evaluate_expression",
        eval("$\"Tag\".text + \"/\" + str($Tag.visible and n >= 0)"),
    )
    .await;
    assert_eq!(v["value"], json!("tagged/true"), "{v}");

    // Failures: Godot's own text, on the call's expression.
    let failure = |e: &Value, text: &str| {
        assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
        assert_eq!(e["param"], "expression", "{e}");
        assert!(e["message"].as_str().unwrap().contains(text), "{e}");
    };
    let e = err(&client, "evaluate_expression", eval("1 +")).await;
    failure(&e, "Expected expression.");
    let e = err(&client, "evaluate_expression", eval("n + []")).await;
    failure(&e, "Invalid operands to operator +, int and Array.");
    let e = err(&client, "evaluate_expression", eval("Time.get_ticks_msec")).await;
    failure(
        &e,
        "Time.get_ticks_msec is a method, not a property: call it, Time.get_ticks_msec()",
    );

    // game_run_until with a singleton; watches with one, and a failing one carrying
    // Godot's text in its row.
    let run = ok(
        &client,
        "game_run_until",
        json!({"expression": "Time.get_ticks_msec() >= 0 and n >= 3", "max_frames": 100,
               "watch": [{"expression": "Engine.get_physics_frames() > 0"},
                         {"expression": "nope.x"},
                         {"node": "/root/Gone", "property": "x"}],
               "every": 1}),
    )
    .await;
    assert_eq!(run["met"], json!(true), "{run}");
    let row = &run["rows"][0]["values"];
    assert_eq!(row[0], json!(true), "{run}");
    assert_eq!(row[1]["$error"], "execute_failed", "{run}");
    assert!(
        row[1]["message"]
            .as_str()
            .unwrap()
            .contains("Invalid named index 'nope'"),
        "{run}"
    );
    assert_eq!(row[2]["$error"], "node_not_found", "{run}");
    let frame = run["frame"].as_u64().unwrap();

    // An until that does not parse runs no frame; one that fails stops where it failed.
    let e = err(
        &client,
        "game_run_until",
        json!({"expression": "n >=", "max_frames": 10}),
    )
    .await;
    failure(&e, "until: Expected expression.");
    let e = err(
        &client,
        "game_step",
        json!({"frames": 1, "watch": [{"expression": "n +"}]}),
    )
    .await;
    assert_eq!(e["param"], "watch[0]", "{e}");
    let still = ok(&client, "game_step", json!({"frames": 1})).await;
    assert_eq!(
        still["frame"],
        json!(frame + 1),
        "a refused step ran frames: {still}"
    );
    let e = err(
        &client,
        "game_run_until",
        json!({"expression": "n + []", "max_frames": 10}),
    )
    .await;
    failure(
        &e,
        &format!(
            "until failed after frame {} (the clock holds there): Invalid operands",
            frame + 2
        ),
    );
    ok(&client, "stop_scene", json!({})).await;
    eprintln!("PASSED: expressions with the engine's singletons and Godot's errors");
}
