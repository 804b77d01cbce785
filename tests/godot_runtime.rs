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
// Unix only: launches need the process-group boundary (docs/platforms.md).
#![cfg(unix)]

mod support;

use std::os::unix::process::CommandExt;
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
    support::write_script_scene(dir.path(), "broken", "Broken");
    // One import run creates .godot/ (extension_list.cfg, the class cache). It must
    // succeed: a failed import (a broken add-on library, say) leaves nothing to test.
    support::run_godot(godot, dir.path(), &["--import"]);
    assert!(
        dir.path().join(".godot/extension_list.cfg").is_file(),
        "godot --import did not register the add-on's GDExtension"
    );
    dir
}

async fn start(project: &Path, state: &Path, godot: &Path) -> (Client, i32) {
    let mut cmd = support::server_tokio();
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
    served_on(project_with_addon(godot), godot).await
}

/// [`served`] on the project `p`.
async fn served_on(
    p: tempfile::TempDir,
    godot: &Path,
) -> (tempfile::TempDir, tempfile::TempDir, Client, i32) {
    let s = support::short_state_dir("gr");
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
    // Node.name is a StringName, typed as such (docs/values.md).
    assert_eq!(
        v["samples"][0]["value"],
        json!({"$type": "StringName", "value": "root"}),
        "{v}"
    );

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
    let support::Picture {
        width,
        height,
        colours,
        ..
    } = support::png_picture(&r);
    assert!(
        colours >= 10,
        "only {colours} distinct colours after 10 frames: not a rendered scene"
    );
    assert_eq!(structured["width"], width, "{structured}");
    assert_eq!(structured["height"], height, "{structured}");
    assert!(width >= 64 && height >= 64, "{width}x{height}");
    call(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: game_screenshot from a real renderer: {}x{} PNG, {} colours ({})",
        width,
        height,
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

/// The live (not zombie) processes whose environment holds an entry starting with
/// `prefix`.
fn processes_with_env(prefix: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if env
            .split(|b| *b == 0)
            .any(|entry| entry.starts_with(prefix.as_bytes()))
            && alive(pid)
        {
            out.push(pid);
        }
    }
    out
}

/// Whether `pid` is a live process (not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !matches!(
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        )
    })
}

/// Guards against (issue 41, item 7), with the real engine: Godot's
/// `OS.create_process` forks, calls `setsid()` in the child and execs
/// (drivers/unix/os_unix.cpp), so the child leaves the game's process group with
/// the session's nonce in the environment it inherited. stop_scene recorded
/// `boundary_empty: true` while that `/bin/sleep 300` ran on. Now the stop kills it
/// through a pidfd first. Red without `identify_escaped` in `launch::identify_live`.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_a_child_from_create_process_is_killed_before_the_boundary_is_empty() {
    let Some(godot) = godot() else { return };
    let p = project_with_addon(&godot);
    std::fs::write(
        p.path().join("scripts/spawner.gd"),
        "extends Node\n\nfunc _ready():\n\tprint(\"spawned \", OS.create_process(\"/bin/sleep\", [\"300\"]))\n",
    )
    .unwrap();
    support::write_script_scene(p.path(), "spawner", "Spawner");
    let (_p, s, client, _server) = served_on(p, &godot).await;
    let r = call(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/spawner.tscn"}),
    )
    .await;
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let txn = v["session_id"].as_str().unwrap().to_string();
    // The session's nonce starts with its session folder's name.
    let socket = support::control_socket(s.path());
    let nonce_prefix = socket.parent().unwrap().file_name().unwrap();
    let entry = format!("GODOT_MCP_SESSION_NONCE={}", nonce_prefix.to_string_lossy());
    // Kills the sleep if an assertion below fails (a test leaves no stray).
    struct KillSleeps(String);
    impl Drop for KillSleeps {
        fn drop(&mut self) {
            for pid in processes_with_env(&self.0) {
                if let Some(p) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
            }
        }
    }
    let _k = KillSleeps(entry.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    let sleep = loop {
        let outside: Vec<i32> = processes_with_env(&entry)
            .into_iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c == b"/bin/sleep\x00300\x00")
            })
            .collect();
        if let [pid] = outside[..] {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "the game's _ready did not start /bin/sleep"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        !support::group_members(pgid).contains(&sleep),
        "create_process's child stayed in the game's process group"
    );
    let r = call(&client, "stop_scene", json!({"session_id": txn})).await;
    let stop = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{stop}");
    assert!(
        !alive(sleep),
        "the boundary was judged while the game's /bin/sleep runs: {stop}"
    );
    assert_eq!(stop["stopped"][0]["end"]["boundary_empty"], true, "{stop}");
    let r = call(&client, "list_transactions", json!({})).await;
    let t = r.structured_content.unwrap();
    assert_eq!(
        support::transaction_row(&t, &txn)["status"],
        "committed",
        "{t}"
    );
    assert_eq!(t["write_gate"]["status"], "open", "{t}");
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: a real game's OS.create_process child (setsid) is killed before its boundary is called empty ({})",
        godot.display()
    );
}

// ---------------------------------------------------------------------------------------
// Screenshots with a real renderer (issue 15): the editor's 2D view and the game, checked
// pixel by pixel on a scene with one solid magenta box, then moved through MCP.

/// The box: a ColorRect at BOX_POS of BOX_SIZE, pure magenta, on the clear colour.
const BOX_POS: (f64, f64) = (256.0, 192.0);
const BOX_SIZE: f64 = 128.0;
const EYES_SCENE: &str = "res://scenes/eyes.tscn";

/// The demo project with the add-on, a 1280×720 window (no stretch) and the box scene
/// as its main scene.
fn render_project(godot: &Path) -> tempfile::TempDir {
    let dir = project_with_addon(godot);
    let cfg = dir.path().join("project.godot");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(
            "window/size/viewport_width=1152",
            "window/size/viewport_width=1280",
        )
        .replace(
            "window/size/viewport_height=648",
            "window/size/viewport_height=720",
        )
        .replace("window/stretch/mode=\"canvas_items\"\n", "")
        // The main scene: a first editor start opens it, after whatever open_scene did.
        .replace("res://scenes/main_2d.tscn", EYES_SCENE);
    std::fs::write(&cfg, text).unwrap();
    std::fs::write(
        dir.path().join("scenes/eyes.tscn"),
        format!(
            "[gd_scene format=3]\n\n[node name=\"Eyes\" type=\"Node2D\"]\n\n\
             [node name=\"Box\" type=\"ColorRect\" parent=\".\"]\n\
             offset_right = {BOX_SIZE}\noffset_bottom = {BOX_SIZE}\n\
             position = Vector2({}, {})\ncolor = Color(1, 0, 1, 1)\n",
            BOX_POS.0, BOX_POS.1
        ),
    )
    .unwrap();
    dir
}

fn decode_image(r: &rmcp::model::CallToolResult) -> image::RgbaImage {
    let wire = serde_json::to_value(&r.content[0]).unwrap();
    assert_eq!(wire["type"], "image", "{wire}");
    let png = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        wire["data"].as_str().unwrap(),
    )
    .unwrap();
    image::load_from_memory_with_format(&png, image::ImageFormat::Png)
        .unwrap()
        .to_rgba8()
}

fn is_magenta(p: &image::Rgba<u8>) -> bool {
    p[0] > 240 && p[1] < 16 && p[2] > 240
}

/// The pixel at image position (x, y), refusing one outside the image.
fn px(img: &image::RgbaImage, (x, y): (f64, f64)) -> image::Rgba<u8> {
    let (xi, yi) = (x.round() as i64, y.round() as i64);
    assert!(
        xi >= 0 && yi >= 0 && (xi as u32) < img.width() && (yi as u32) < img.height(),
        "({x}, {y}) is outside the {}x{} capture",
        img.width(),
        img.height()
    );
    *img.get_pixel(xi as u32, yi as u32)
}

async fn ok_call(c: &Client, name: &'static str, args: Value) -> rmcp::model::CallToolResult {
    let r = call(c, name, args.clone()).await;
    assert_ne!(
        r.is_error,
        Some(true),
        "{name}({args}): {:?}",
        r.structured_content
    );
    r
}

fn capture_id(r: &rmcp::model::CallToolResult) -> String {
    r.structured_content.as_ref().unwrap()["capture_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A real editor with a renderer (not --headless) on `project`, its output in `log`.
fn render_editor(godot: &Path, project: &Path, log: &Path) -> std::process::Child {
    let log = std::fs::File::create(log).unwrap();
    std::process::Command::new(godot)
        .args(["--editor", "--rendering-driver", "opengl3"])
        .args(["--resolution", "1280x720", "--path"])
        .arg(project)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start the Godot editor")
}

/// Kills a child's process group when dropped.
struct KillOnDrop(std::process::Child);
impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(p) = rustix::process::Pid::from_raw(self.0.id() as i32) {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
        let _ = self.0.wait();
    }
}

/// Opens the box scene once the add-on has connected (it finds the server by itself).
async fn open_when_connected(client: &Client, ed: &mut KillOnDrop, log: &Path) {
    let start = Instant::now();
    loop {
        let r = call(client, "open_scene", json!({"path": EYES_SCENE})).await;
        if r.is_error != Some(true) {
            return;
        }
        if let Ok(Some(status)) = ed.0.try_wait() {
            panic!(
                "the editor exited ({status}):\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(240),
            "the editor never connected: {:?}\n{}",
            r.structured_content,
            std::fs::read_to_string(log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Two 2D captures in a row that are equal by compare_screenshots: the editor has
/// settled (its first frames after opening a scene still lay the view out). Returns the
/// second capture.
async fn settled_2d(client: &Client) -> rmcp::model::CallToolResult {
    let start = Instant::now();
    let mut last = ok_call(client, "capture_editor_screenshot", json!({"view": "2d"})).await;
    loop {
        let next = ok_call(client, "capture_editor_screenshot", json!({"view": "2d"})).await;
        // While the editor lays itself out the view also changes size (a 2×2 view at
        // first, before the 2D editor is shown): not settled either.
        let size = |r: &rmcp::model::CallToolResult| {
            let v = r.structured_content.clone().unwrap();
            (v["width"].clone(), v["height"].clone())
        };
        let laid_out = size(&next).0.as_u64().unwrap() >= 64;

        if laid_out && size(&last) == size(&next) {
            let cmp = ok_call(
                client,
                "compare_screenshots",
                json!({"a": capture_id(&last), "b": capture_id(&next), "threshold": 0.0}),
            )
            .await;
            if cmp.structured_content.unwrap()["equal"] == true {
                return next;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the editor's 2D view never settled"
        );
        last = next;
    }
}

/// Where scene point (x, y) lands in a 2D editor capture (its reported canvas transform
/// and scale).
fn to_image(v: &Value, (x, y): (f64, f64)) -> (f64, f64) {
    let t = &v["canvas_transform"];
    let f = |a: &Value, i: usize| a[i].as_f64().unwrap();
    let s = v["scale"].as_f64().unwrap();
    (
        (f(&t["x_axis"], 0) * x + f(&t["y_axis"], 0) * y + f(&t["origin"], 0)) * s,
        (f(&t["x_axis"], 1) * x + f(&t["y_axis"], 1) * y + f(&t["origin"], 1)) * s,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_render_editor_capture_shows_the_box_and_sees_it_move() {
    let Some(godot) = support::godot_render_bin(
        "the renderer tier needs a Godot 4.4+ build with a renderer, under Xvfb",
    ) else {
        return;
    };
    let (p, s, client, _server) = served_on(render_project(&godot), &godot).await;
    let log = s.path().join("editor.log");
    let mut ed = KillOnDrop(render_editor(&godot, p.path(), &log));
    open_when_connected(&client, &mut ed, &log).await;

    let first = settled_2d(&client).await;
    let v = first.structured_content.clone().unwrap();
    let img = decode_image(&first);
    assert_eq!(v["view"], "2d", "{v}");
    assert_eq!(
        (img.width(), img.height()),
        (
            v["width"].as_u64().unwrap() as u32,
            v["height"].as_u64().unwrap() as u32
        )
    );
    let centre = (BOX_POS.0 + BOX_SIZE / 2.0, BOX_POS.1 + BOX_SIZE / 2.0);
    let at = to_image(&v, centre);

    assert!(
        is_magenta(&px(&img, at)),
        "the box's centre {at:?} is {:?}, not magenta ({v})",
        px(&img, at)
    );
    // Just outside the box (a quarter box beyond its right edge): the background.
    let beside = to_image(&v, (BOX_POS.0 + BOX_SIZE * 1.25, centre.1));
    assert!(
        !is_magenta(&px(&img, beside)),
        "beside the box {beside:?} is magenta"
    );
    // Cropped to the box: the box with a 16-pixel margin of background around it.
    let crop = ok_call(
        &client,
        "capture_editor_screenshot",
        json!({"view": "2d", "node": "Box"}),
    )
    .await;
    let cimg = decode_image(&crop);
    let cv = crop.structured_content.clone().unwrap();
    // The box and its margin, rounded out to whole pixels (the view's origin is fractional).
    for edge in [cimg.width(), cimg.height()] {
        assert!((160..=162).contains(&edge), "{cv}");
    }
    // The reported transform places the box in the crop.
    assert!(is_magenta(&px(&cimg, to_image(&cv, centre))), "{cv}");
    assert!(is_magenta(&px(
        &cimg,
        to_image(&cv, (BOX_POS.0 + 1.0, BOX_POS.1 + 1.0))
    )));
    assert!(!is_magenta(cimg.get_pixel(4, 4)), "{cv}");
    // The same view again: equal.
    let again = ok_call(&client, "capture_editor_screenshot", json!({"view": "2d"})).await;
    let same = ok_call(
        &client,
        "compare_screenshots",
        json!({"a": capture_id(&first), "b": capture_id(&again)}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(same["equal"], true, "{same}");

    // Move the box through MCP, by half a box down and right: the old centre's top-left
    // quarter is background now, the new centre is magenta.
    let moved_pos = (BOX_POS.0 + BOX_SIZE, BOX_POS.1 + BOX_SIZE / 2.0);
    ok_call(
        &client,
        "set_node_property",
        json!({"node": "Box", "property": "position",
               "value": {"$type": "Vector2", "x": moved_pos.0, "y": moved_pos.1}}),
    )
    .await;
    let moved = settled_2d(&client).await;
    let mv = moved.structured_content.clone().unwrap();
    let img2 = decode_image(&moved);
    let new_centre = to_image(
        &mv,
        (moved_pos.0 + BOX_SIZE / 2.0, moved_pos.1 + BOX_SIZE / 2.0),
    );
    assert!(
        is_magenta(&px(&img2, new_centre)),
        "the moved box's centre {new_centre:?} is {:?}",
        px(&img2, new_centre)
    );
    let old_corner = to_image(&mv, (BOX_POS.0 + 8.0, BOX_POS.1 + 8.0));
    assert!(
        !is_magenta(&px(&img2, old_corner)),
        "where the box was {old_corner:?} is still magenta"
    );
    let diff = ok_call(
        &client,
        "compare_screenshots",
        json!({"a": capture_id(&first), "b": capture_id(&moved)}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(diff["equal"], false, "{diff}");
    // The change lies where the box was and where it went, nowhere else.
    let b = diff["changed_bounds"].as_array().unwrap();
    let (bx, by) = (b[0].as_f64().unwrap(), b[1].as_f64().unwrap());
    let (bw, bh) = (b[2].as_f64().unwrap(), b[3].as_f64().unwrap());
    let lo = to_image(&v, BOX_POS);
    let hi = to_image(&mv, (moved_pos.0 + BOX_SIZE, moved_pos.1 + BOX_SIZE));
    assert!(
        (bx - lo.0).abs() <= 2.0
            && (by - lo.1).abs() <= 2.0
            && (bx + bw - hi.0).abs() <= 2.0
            && (by + bh - hi.1).abs() <= 2.0,
        "changed {b:?}, expected from {lo:?} to {hi:?}"
    );

    // Downscaled: the longer edge is max_edge.
    let small = ok_call(
        &client,
        "capture_editor_screenshot",
        json!({"view": "window", "max_edge": 320}),
    )
    .await;
    let sv = small.structured_content.clone().unwrap();
    let simg = decode_image(&small);
    assert_eq!(simg.width().max(simg.height()), 320, "{sv}");
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: editor screenshots from a real renderer: {}x{} 2D view, box found at {at:?} then {new_centre:?} ({})",
        img.width(),
        img.height(),
        godot.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_render_game_capture_shows_the_box_and_sees_it_move() {
    let Some(godot) = support::godot_render_bin(
        "the renderer tier needs a Godot 4.4+ build with a renderer, under Xvfb",
    ) else {
        return;
    };
    let (_p, _s, client, _server) = served_on(render_project(&godot), &godot).await;
    ok_call(
        &client,
        "play_scene",
        json!({"scene": EYES_SCENE, "headless": false}),
    )
    .await;
    let first = ok_call(&client, "game_screenshot", json!({"frames": 10})).await;
    let img = decode_image(&first);
    assert_eq!((img.width(), img.height()), (1280, 720));
    // No camera, no stretch: scene coordinates are pixels.
    let centre = (BOX_POS.0 + BOX_SIZE / 2.0, BOX_POS.1 + BOX_SIZE / 2.0);
    assert!(is_magenta(&px(&img, centre)), "{:?}", px(&img, centre));
    let beside = (BOX_POS.0 + BOX_SIZE * 1.25, centre.1);
    assert!(!is_magenta(&px(&img, beside)), "{:?}", px(&img, beside));
    let again = ok_call(&client, "game_screenshot", json!({"frames": 2})).await;
    let same = ok_call(
        &client,
        "compare_screenshots",
        json!({"a": capture_id(&first), "b": capture_id(&again)}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(same["equal"], true, "{same}");

    // Moved in the running game through MCP.
    ok_call(
        &client,
        "evaluate_expression",
        json!({"expression": "get_node(\"Box\").set(\"position\", Vector2(700, 400))"}),
    )
    .await;
    let moved = ok_call(&client, "game_screenshot", json!({"frames": 2})).await;
    let img2 = decode_image(&moved);
    assert!(is_magenta(&px(&img2, (764.0, 464.0))));
    assert!(!is_magenta(&px(&img2, centre)));
    let diff = ok_call(
        &client,
        "compare_screenshots",
        json!({"a": capture_id(&first), "b": capture_id(&moved)}),
    )
    .await
    .structured_content
    .unwrap();
    assert_eq!(diff["equal"], false, "{diff}");
    assert_eq!(
        diff["changed_bounds"],
        json!([256, 192, 572, 336]),
        "from the old box's corner to the new one's far corner: {diff}"
    );
    // Downscaled in the game.
    let small = ok_call(
        &client,
        "game_screenshot",
        json!({"frames": 1, "max_edge": 640}),
    )
    .await;
    let simg = decode_image(&small);
    assert_eq!((simg.width(), simg.height()), (640, 360));
    ok_call(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: game screenshots from a real renderer: box at {centre:?}, moved to (764, 464) ({})",
        godot.display()
    );
}

/// A headless editor (no renderer) has nothing to capture: the real add-on says so and
/// the server answers with the precondition naming it, never an empty image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_headless_editor_capture_is_no_renderer() {
    let Some(godot) = godot() else { return };
    let (p, s, client, _server) = served_on(render_project(&godot), &godot).await;
    let log = s.path().join("editor.log");
    let file = std::fs::File::create(&log).unwrap();
    let child = std::process::Command::new(&godot)
        .args(["--headless", "--editor", "--path"])
        .arg(p.path())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start the Godot editor");
    let mut ed = KillOnDrop(child);
    open_when_connected(&client, &mut ed, &log).await;
    for view in ["2d", "3d", "window"] {
        let r = call(&client, "capture_editor_screenshot", json!({"view": view})).await;
        assert_eq!(r.is_error, Some(true), "{view}: {:?}", r.structured_content);
        assert!(r.content.iter().all(|c| c.as_image().is_none()), "an image");
        let e = r.structured_content.unwrap()["error"].clone();
        assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
        assert_eq!(e["required"], "no_renderer", "{e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("display server: headless"),
            "{e}"
        );
    }
    client.cancel().await.unwrap();
    eprintln!(
        "PASSED: a headless editor's capture is no_renderer ({})",
        godot.display()
    );
}

/// Capture latency, from the call to the answer, p50 of 20 at 1280×720 for an editor
/// (its whole window) and a game screenshot, and each image's bytes. A measurement, not a
/// test: run it by hand (see docs/screenshots.md):
///
/// `GODOT_RENDER_BIN=… scripts/with-xvfb.sh cargo test -p godot-mcp-server --all-features
/// --locked --test godot_runtime real_godot_render_capture_latency -- --ignored --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run by hand"]
async fn real_godot_render_capture_latency() {
    let Some(godot) = support::godot_render_bin("the latency measurement needs a renderer") else {
        return;
    };
    let (p, s, client, _server) = served_on(render_project(&godot), &godot).await;
    let log = s.path().join("editor.log");
    let mut ed = KillOnDrop(render_editor(&godot, p.path(), &log));
    open_when_connected(&client, &mut ed, &log).await;
    ok_call(
        &client,
        "play_scene",
        json!({"scene": EYES_SCENE, "headless": false}),
    )
    .await;
    ok_call(&client, "game_screenshot", json!({"frames": 10})).await;
    for (tool, args) in [
        ("capture_editor_screenshot", json!({"view": "window"})),
        ("game_screenshot", json!({"frames": 0})),
    ] {
        let mut times = Vec::new();
        let mut sizes = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            let r = ok_call(&client, tool, args.clone()).await;
            times.push(t.elapsed());
            let v = r.structured_content.unwrap();
            sizes.push((
                v["image"]["bytes"].as_u64().unwrap(),
                v["width"].clone(),
                v["height"].clone(),
            ));
        }
        times.sort();
        println!(
            "LATENCY {tool}: p50 {:.1} ms, min {:.1} ms, max {:.1} ms over 20; image {}x{}, {} bytes (median)",
            times[10].as_secs_f64() * 1000.0,
            times[0].as_secs_f64() * 1000.0,
            times[19].as_secs_f64() * 1000.0,
            sizes[10].1,
            sizes[10].2,
            {
                let mut b: Vec<u64> = sizes.iter().map(|s| s.0).collect();
                b.sort();
                b[10]
            }
        );
    }
    ok_call(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

/// The one value model (docs/values.md): a value read from the saved scene
/// (get_scene_tree) and the same value read from the running game (get_game_property,
/// through the add-on's probe, which shares the editor's conversion) are the same JSON —
/// reals as Godot holds them, a built-in sub-resource as its class and properties, a
/// type the model does not type as the same Godot text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_a_value_reads_the_same_from_the_file_and_the_running_game() {
    let Some(godot) = godot() else { return };
    let p = project_with_addon(&godot);
    std::fs::write(
        p.path().join("scenes/values.tscn"),
        "[gd_scene load_steps=2 format=3]\n\n\
         [sub_resource type=\"CanvasItemMaterial\" id=\"M\"]\nblend_mode = 1\n\n\
         [node name=\"Values\" type=\"Node2D\"]\n\
         material = SubResource(\"M\")\n\
         modulate = Color(0.784314, 0.392157, 0.196078, 1)\n\
         position = Vector2(0.1, 576)\n\
         rotation = 0.5\n\
         z_index = 3\n\
         visible = false\n\
         metadata/tags = PackedStringArray(\"dash\", \"b\")\n",
    )
    .unwrap();
    let (_p, _s, client, _server) = served_on(p, &godot).await;
    let tree = call(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/values.tscn"}),
    )
    .await
    .structured_content
    .unwrap();
    let from_file = tree["nodes"][0]["properties"].clone();
    let r = call(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/values.tscn"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);
    // The probe answers from its autoload, before the scene may be in the tree: wait
    // until the scene's root is there (a readiness check, not a guessed delay).
    let start = Instant::now();
    loop {
        let r = call(
            &client,
            "get_game_property",
            json!({"node": "/root/Values", "property": "name"}),
        )
        .await;
        if r.is_error != Some(true) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the scene never entered the game's tree: {:?}",
            r.structured_content
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let props = [
        "material",
        "modulate",
        "position",
        "rotation",
        "z_index",
        "visible",
        "metadata/tags",
    ];
    for prop in props {
        let r = call(
            &client,
            "get_game_property",
            json!({"node": "/root/Values", "property": prop}),
        )
        .await;
        let v = r.structured_content.unwrap();
        assert_ne!(r.is_error, Some(true), "{prop}: {v}");
        assert_eq!(
            v["value"], from_file[prop],
            "{prop}: the game and the file disagree"
        );
    }
    assert_eq!(
        from_file["position"],
        json!({"$type": "Vector2", "x": 0.1, "y": 576.0})
    );
    // The editor's paths work in the game too: "." is the current scene's root (it was
    // the root Window, whose position is another thing).
    let r = call(
        &client,
        "get_game_property",
        json!({"node": ".", "property": "position"}),
    )
    .await;
    let v = r.structured_content.unwrap();
    assert_eq!(v["value"], from_file["position"], "{v}");
    assert_eq!(
        from_file["metadata/tags"],
        json!({"$type": "PackedStringArray", "values": ["dash", "b"]})
    );
    assert_eq!(
        from_file["material"],
        json!({"$type": "Resource", "class": "CanvasItemMaterial", "properties": {"blend_mode": 1}})
    );
    call(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}
