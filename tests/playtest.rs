//! The game's clock held by the agent, and playtests (docs/playtesting.md), end to end
//! through the real `godot-mcp` binary:
//!
//! - with the stand-in `godot` (no Godot needed): pause, step, run_until, input on
//!   frames, watches and digests, a playtest file run twice (deterministic values agree,
//!   wall-clock ones are named at their first diverging frame), bad input refused;
//! - with a real Godot (`GODOT_BIN`, tests `real_godot_*`), on the small scenes of
//!   `tests/fixtures/playtest/` (a ball falling onto a floor, a character driven by
//!   input, a script reading the wall clock): the clock against a frame counter, and
//!   the playtests run N times headless from a cold start.
// Unix only: launches need the process-group boundary (docs/platforms.md).
#![cfg(unix)]

mod support;

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use support::{call_err as err, call_ok as ok};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

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

/// Copies the playtest fixtures into `project/playtest`.
fn add_fixtures(project: &Path) {
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/playtest"),
        &project.join("playtest"),
    );
}

/// A tiny project with the probe script in place (the stand-in plays it) and the
/// playtest fixtures, served with the stand-in as Godot.
async fn standin_project() -> (tempfile::TempDir, tempfile::TempDir, Cleanup, Client) {
    let p = support::tiny_project("pt");
    std::fs::create_dir_all(p.path().join("addons/godot_mcp/probe")).unwrap();
    std::fs::write(
        p.path().join("addons/godot_mcp/probe/probe.gd"),
        "extends GodotMcpProbe\n",
    )
    .unwrap();
    add_fixtures(p.path());
    let s = support::short_state_dir("pt");
    let c = Cleanup(s.path().display().to_string());
    let (client, _) = support::serve_standin(
        p.path(),
        s.path(),
        &[("GODOT_STANDIN_HANG", "1")],
        Stdio::null(),
    )
    .await;
    (p, s, c, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_clock_steps_runs_until_and_samples_watches() {
    let (_p, _s, _c, client) = standin_project().await;
    ok(&client, "play_scene", json!({"paused": true})).await;
    // Held from frame 0: reads do not move.
    let a = ok(
        &client,
        "get_game_property",
        json!({"node": "/root/Main", "property": "frame"}),
    )
    .await;
    assert_eq!(a["value"], 0, "{a}");
    let st = ok(
        &client,
        "game_step",
        json!({"frames": 10, "watch": [{"node": "/root/Main", "property": "y"}, {"expression": "frame >= 5"}], "every": 5, "at": [3]}),
    )
    .await;
    assert_eq!(
        (st["frame"].as_u64(), st["advanced"].as_u64()),
        (Some(10), Some(10)),
        "{st}"
    );
    let rows = st["rows"].as_array().unwrap();
    let frames: Vec<u64> = rows.iter().map(|r| r["frame"].as_u64().unwrap()).collect();
    assert_eq!(frames, [3, 5, 10], "{st}");
    assert_eq!(rows[1]["values"], json!([1.25, true]), "{st}");
    assert_eq!(rows[0]["digest"].as_str().unwrap().len(), 16, "{st}");
    let b = ok(
        &client,
        "get_game_property",
        json!({"node": "/root/Main", "property": "frame"}),
    )
    .await;
    assert_eq!(b["value"], 10, "{b}");

    let u = ok(
        &client,
        "game_run_until",
        json!({"expression": "frame >= 37", "max_frames": 100}),
    )
    .await;
    assert_eq!(
        (u["met"].as_bool(), u["frame"].as_u64()),
        (Some(true), Some(37)),
        "{u}"
    );
    let capped = ok(
        &client,
        "game_run_until",
        json!({"expression": "frame == 1", "max_frames": 5}),
    )
    .await;
    assert_eq!(
        (capped["met"].as_bool(), capped["advanced"].as_u64()),
        (Some(false), Some(5)),
        "{capped}"
    );

    // Input on a frame: scheduled, held until its release frame, and recorded on it.
    ok(&client, "record_input", json!({})).await;
    let s = ok(
        &client,
        "play_input_sequence",
        json!({"steps": [{"event": {"type": "action", "action": "jump"}, "at_frame": 2, "hold_frames": 3}]}),
    )
    .await;
    assert_eq!(s["frame"], 42 + 5, "{s}");
    assert_eq!(s["held_at_end"], 0, "{s}");
    let rec = ok(&client, "stop_recording", json!({})).await;
    assert_eq!(
        rec["frame_steps"],
        json!([{"event": {"type": "action", "action": "jump"}, "at_frame": 1, "hold_frames": 3}]),
        "{rec}"
    );

    let r = ok(&client, "game_resume", json!({})).await;
    assert_eq!(r["paused"], false, "{r}");
    let p = ok(&client, "game_pause", json!({})).await;
    assert!(p["frame"].as_u64().unwrap() >= 47, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_clock_and_playtest_input_is_refused() {
    let (p, _s, _c, client) = standin_project().await;
    ok(&client, "play_scene", json!({"paused": true})).await;
    let e = err(&client, "game_step", json!({"frames": 0})).await;
    assert_eq!(e["param"], "frames", "{e}");
    let e = err(&client, "game_step", json!({"frames": 10001})).await;
    assert_eq!(e["param"], "frames", "{e}");
    let e = err(
        &client,
        "game_step",
        json!({"every": 0, "watch": [{"expression": "1"}]}),
    )
    .await;
    assert_eq!(e["param"], "every", "{e}");
    let e = err(&client, "game_run_until", json!({"expression": " "})).await;
    assert_eq!(e["param"], "expression", "{e}");
    // Frames and milliseconds do not mix in one sequence.
    let e = err(
        &client,
        "play_input_sequence",
        json!({"steps": [{"event": {"type": "key", "key": "A"}, "at_frame": 2, "hold_ms": 5}]}),
    )
    .await;
    assert_eq!(e["param"], "steps[0].hold_ms", "{e}");
    let e = err(
        &client,
        "run_playtest",
        json!({"path": "res://playtest/fall.tscn"}),
    )
    .await;
    assert_eq!(e["param"], "path", "{e}");
    std::fs::write(
        p.path().join("playtest/bad.playtest.json"),
        r#"{"scene": "res://playtest/fall.tscn", "frames": 10, "input": [{"at_frame": 11, "event": {"type": "key", "key": "A"}}]}"#,
    )
    .unwrap();
    let e = err(
        &client,
        "run_playtest",
        json!({"path": "res://playtest/bad.playtest.json"}),
    )
    .await;
    assert!(
        e["message"].as_str().unwrap().contains("input[0].at_frame"),
        "{e}"
    );
    // Nothing ran: the clock is where it was.
    let f = ok(&client, "game_pause", json!({})).await;
    assert_eq!(f["frame"], 0, "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_playtest_names_the_first_diverging_frame() {
    let (p, _s, _c, client) = standin_project().await;
    std::fs::write(
        p.path().join("playtest/standin.playtest.json"),
        r#"{"scene": "res://playtest/fall.tscn", "seed": 3, "frames": 20,
            "input": [{"at_frame": 4, "event": {"type": "action", "action": "jump"}}],
            "watch": [{"node": "/root/Main", "property": "y"}], "at": [2, 20], "every": 5,
            "expect": [{"frame": 20, "expression": "frame == 20"}, {"frame": 20, "expression": "frame == 3"}]}"#,
    )
    .unwrap();
    let v = ok(
        &client,
        "run_playtest",
        json!({"path": "res://playtest/standin.playtest.json", "runs": 3}),
    )
    .await;
    assert_eq!(v["deterministic"], true, "{v}");
    assert_eq!(v["expectations"][0]["passed"], true, "{v}");
    assert_eq!(v["expectations"][1]["passed"], false, "{v}");
    assert_eq!(v["expectations"][1]["failed_runs"], json!([0, 1, 2]), "{v}");
    assert_eq!(v["passed"], false, "{v}");
    let frames: Vec<u64> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, [2, 5, 10, 15, 20], "{v}");
    assert_eq!(v["stats"].as_array().unwrap().len(), 3, "{v}");

    // `wall_ns` is the wall clock: the runs differ, first on the first sampled frame.
    std::fs::write(
        p.path().join("playtest/wall.playtest.json"),
        r#"{"scene": "res://playtest/fall.tscn", "frames": 10, "every": 2,
            "watch": [{"node": "/root/Main", "property": "frame"}, {"node": "/root/Main", "property": "wall_ns"}]}"#,
    )
    .unwrap();
    let v = ok(
        &client,
        "run_playtest",
        json!({"path": "res://playtest/wall.playtest.json"}),
    )
    .await;
    assert_eq!(v["deterministic"], false, "{v}");
    let d = &v["divergence"];
    assert_eq!(
        (d["run"].as_u64(), d["frame"].as_u64(), d["watch"].as_u64()),
        (Some(1), Some(2), Some(1)),
        "{v}"
    );
    // Every playtest game is stopped.
    let l = ok(&client, "list_sessions", json!({})).await;
    assert!(
        l["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["running"] == false),
        "{l}"
    );
}

// ---- real Godot ----------------------------------------------------------------------

fn godot() -> Option<std::path::PathBuf> {
    support::godot_bin("the clock and playtest tests need a Godot 4.4+ binary")
}

/// The demo project with the add-on and the playtest fixtures, imported once.
fn real_project(godot: &Path) -> tempfile::TempDir {
    let dir = support::demo_copy();
    support::install_addon(dir.path());
    add_fixtures(dir.path());
    support::run_godot(godot, dir.path(), &["--import"]);
    assert!(dir.path().join(".godot/extension_list.cfg").is_file());
    dir
}

async fn real_served(godot: &Path) -> (tempfile::TempDir, tempfile::TempDir, Cleanup, Client) {
    let p = real_project(godot);
    let s = support::short_state_dir("rp");
    let c = Cleanup(s.path().display().to_string());
    let (client, _) = support::serve_godot(godot, p.path(), s.path(), &[], Stdio::null()).await;
    (p, s, c, client)
}

async fn n_of(client: &Client) -> Value {
    ok(
        client,
        "get_game_property",
        json!({"node": "/root/Fall", "property": "n"}),
    )
    .await["value"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_the_clock_steps_a_counter_exactly() {
    let Some(godot) = godot() else { return };
    let (_p, _s, _c, client) = real_served(&godot).await;
    ok(
        &client,
        "play_scene",
        json!({"scene": "res://playtest/fall.tscn", "paused": true}),
    )
    .await;
    // Held at frame 0: the scene is loaded and no physics frame has run.
    assert_eq!(n_of(&client).await, 0);
    let ball = json!({"node": "/root/Fall/Ball", "property": "position"});
    let y0 = ok(&client, "get_game_property", ball.clone()).await;
    let st = ok(&client, "game_step", json!({"frames": 10})).await;
    assert_eq!(st["frame"], 10, "{st}");
    assert_eq!(n_of(&client).await, 10);
    // Held: two reads are the same frame.
    let y1 = ok(&client, "get_game_property", ball.clone()).await;
    let y2 = ok(&client, "get_game_property", ball.clone()).await;
    assert_eq!(y1, y2);
    assert_ne!(y0, y1, "the ball did not fall in 10 frames");
    assert_eq!(n_of(&client).await, 10);

    // run_until stops on the frame the condition became true: not one later.
    let u = ok(
        &client,
        "game_run_until",
        json!({"expression": "n >= 37", "max_frames": 600, "watch": [{"expression": "n"}], "every": 1}),
    )
    .await;
    assert_eq!(
        (u["met"].as_bool(), u["frame"].as_u64()),
        (Some(true), Some(37)),
        "{u}"
    );
    assert_eq!(n_of(&client).await, 37);
    let rows = u["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 27, "{u}");
    assert!(rows.iter().all(|r| r["values"][0] == r["frame"]), "{u}");
    let p = ok(
        &client,
        "game_step",
        json!({"frames": 5, "unit": "process"}),
    )
    .await;
    assert_eq!(p["frame"], 42, "{p}");
    assert_eq!(n_of(&client).await, 42);

    // Free again, the counter runs on; paused, frame and counter agree.
    ok(&client, "game_resume", json!({})).await;
    let mut n = 0;
    for _ in 0..200 {
        n = n_of(&client).await.as_i64().unwrap();
        if n > 60 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(n > 60, "the game did not run after game_resume: n = {n}");
    let paused = ok(&client, "game_pause", json!({})).await;
    assert_eq!(n_of(&client).await, paused["frame"]);
    eprintln!(
        "PASSED: the clock against a real Godot ({})",
        godot.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_input_on_frames_drives_a_character() {
    let Some(godot) = godot() else { return };
    let (_p, _s, _c, client) = real_served(&godot).await;
    ok(
        &client,
        "play_scene",
        json!({"scene": "res://playtest/walker.tscn", "paused": true}),
    )
    .await;
    let hero = |p: &str| json!({"node": "/root/Walk/Hero", "property": p});
    ok(&client, "game_step", json!({"frames": 30})).await;
    let x0 = ok(&client, "get_game_property", hero("position")).await["value"]["x"].clone();
    ok(&client, "record_input", json!({})).await;
    let s = ok(
        &client,
        "play_input_sequence",
        json!({"steps": [
            {"event": {"type": "action", "action": "ui_right"}, "at_frame": 1, "hold_frames": 30},
            {"event": {"type": "action", "action": "ui_accept"}, "at_frame": 5, "hold_frames": 1}
        ]}),
    )
    .await;
    // The clock was at 30; the last release is on frame 1 + 30 after it.
    assert_eq!(s["frame"], 61, "{s}");
    assert_eq!(s["held_at_end"], 0, "{s}");
    let x1 = ok(&client, "get_game_property", hero("position")).await["value"]["x"].clone();
    // 30 frames at 200 px/s, one 60th of a second each.
    let moved = x1.as_f64().unwrap() - x0.as_f64().unwrap();
    // (29 frames would be 96.7 px, 31 frames 103.3 px; the rest is the body's safe margin.)
    assert!((moved - 100.0).abs() < 0.5, "moved {moved}");
    let jumps = ok(&client, "get_game_property", hero("jumps")).await;
    assert_eq!(jumps["value"], 1, "{jumps}");
    // The recorder saw each input on the frame it reached the game: a frame-exact replay.
    let rec = ok(&client, "stop_recording", json!({})).await;
    let got: Vec<(Value, Value)> = rec["frame_steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no frame_steps: {rec}"))
        .iter()
        .map(|s| (s["at_frame"].clone(), s["hold_frames"].clone()))
        .collect();
    assert_eq!(got, [(json!(1), json!(30)), (json!(5), json!(1))], "{rec}");
    // Landed again (a jump lasts ~49 frames), the replay jumps once more.
    ok(&client, "game_step", json!({"frames": 60})).await;
    let replay = ok(
        &client,
        "play_input_sequence",
        json!({"steps": rec["frame_steps"]}),
    )
    .await;
    assert_eq!(replay["frame"], 121 + 31, "{replay}");
    let jumps = ok(&client, "get_game_property", hero("jumps")).await;
    assert_eq!(jumps["value"], 2, "{jumps}");
}

/// Runs of each physics playtest (the issue asks for 20; each run is a cold start of
/// a headless Godot, ~1 s here, so 20 keeps this test near a minute).
const RUNS: u32 = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_playtests_give_the_same_digests_run_after_run() {
    let Some(godot) = godot() else { return };
    let (_p, _s, _c, client) = real_served(&godot).await;
    for (file, runs) in [("fall", RUNS), ("walker", RUNS)] {
        let v = ok(
            &client,
            "run_playtest",
            json!({"path": format!("res://playtest/{file}.playtest.json"), "runs": runs}),
        )
        .await;
        assert_eq!(v["deterministic"], true, "{file}: {}", v["divergence"]);
        assert_eq!(
            v["passed"],
            true,
            "{file}: {} rows 36-45: {:?}",
            v["expectations"],
            &v["rows"].as_array().unwrap()[35..45]
        );
        assert_eq!(v["stats"].as_array().unwrap().len(), runs as usize);
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len() as u64, v["frames"].as_u64().unwrap(), "{file}");
        let fps: Vec<f64> = v["stats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["frames_per_second"].as_f64().unwrap())
            .collect();
        eprintln!(
            "{file}: {runs} runs, identical digests on {} frames; stepped fps {fps:?}",
            rows.len()
        );
    }
    // Wall-clock reads from frame 30 on: named at frame 30, its third watch.
    let v = ok(
        &client,
        "run_playtest",
        json!({"path": "res://playtest/noisy.playtest.json", "runs": 2}),
    )
    .await;
    assert_eq!(v["deterministic"], false, "{v}");
    let d = &v["divergence"];
    assert_eq!(
        (d["frame"].as_u64(), d["watch"].as_u64()),
        (Some(30), Some(2)),
        "{d}"
    );
    assert_eq!(v["passed"], true, "{}", v["expectations"]);
}

/// Not a test: the numbers docs/playtesting.md reports. Run with
/// `GODOT_BIN=… cargo test -p godot-mcp-server --all-features --locked --test playtest
/// -- --ignored --nocapture bench_clock`. Prints, asserts nothing about time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: run by hand"]
async fn bench_clock() {
    let Some(godot) = godot() else { return };
    let (_p, _s, _c, client) = real_served(&godot).await;
    ok(
        &client,
        "play_scene",
        json!({"scene": "res://playtest/fall.tscn", "paused": true}),
    )
    .await;
    let mut ms = Vec::new();
    for _ in 0..300 {
        let t = std::time::Instant::now();
        ok(&client, "game_step", json!({"frames": 1})).await;
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    let q = |p: f64| ms[((ms.len() - 1) as f64 * p) as usize];
    eprintln!(
        "BENCH game_step(1) over MCP, 300 calls: p50 {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        q(0.5),
        q(0.9),
        q(1.0)
    );
    let t = std::time::Instant::now();
    let st = ok(&client, "game_step", json!({"frames": 6000})).await;
    let s = t.elapsed().as_secs_f64();
    eprintln!(
        "BENCH game_step(6000) held, --fixed-fps, headless: {:.0} frames/s ({:.2} s) {}",
        6000.0 / s,
        s,
        st["frame"]
    );
    ok(&client, "stop_scene", json!({})).await;
    // The same scene running free (no held clock, no --fixed-fps): real time.
    ok(
        &client,
        "play_scene",
        json!({"scene": "res://playtest/fall.tscn"}),
    )
    .await;
    let a = ok(&client, "game_pause", json!({})).await["frame"]
        .as_u64()
        .unwrap();
    ok(&client, "game_resume", json!({})).await;
    let t = std::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let b = ok(&client, "game_pause", json!({})).await["frame"]
        .as_u64()
        .unwrap();
    eprintln!(
        "BENCH free run: {:.1} frames/s",
        (b - a) as f64 / t.elapsed().as_secs_f64()
    );
    let t = std::time::Instant::now();
    let v = ok(
        &client,
        "run_playtest",
        json!({"path": "res://playtest/fall.playtest.json", "runs": 5}),
    )
    .await;
    eprintln!(
        "BENCH run_playtest fall x5: {:.2} s in all; stats {}",
        t.elapsed().as_secs_f64(),
        v["stats"]
    );
}

/// Issue 29 (renderer tier): a screenshot of a held game at frame N is the same picture
/// in two cold runs, and the picture follows the clock. `drawn.tscn` is the falling
/// ball with a visible square on the ball and on the floor: held at frame 0, stepped to
/// frame 30 and captured, stepped once more and captured again. Frame 30's pixels agree
/// between the runs; frames 30 and 31 differ (the ball fell), so the capture is the
/// held frame, not whatever was drawn last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_render_a_held_frame_is_the_same_picture_run_after_run() {
    let Some(godot) = support::godot_render_bin(
        "the held-frame screenshot needs a Godot 4.4+ build with a renderer, under Xvfb",
    ) else {
        return;
    };
    let mut frame30 = Vec::new();
    for run in 0..2 {
        let (_p, _s, _c, client) = real_served(&godot).await;
        ok(
            &client,
            "play_scene",
            json!({"scene": "res://playtest/drawn.tscn", "headless": false, "paused": true}),
        )
        .await;
        let st = ok(&client, "game_step", json!({"frames": 30})).await;
        assert_eq!(st["frame"], 30, "{st}");
        let at30 = held_picture(&client).await;
        ok(&client, "game_step", json!({"frames": 1})).await;
        let at31 = held_picture(&client).await;
        assert_eq!(ok(&client, "game_pause", json!({})).await["frame"], 31);
        assert_ne!(
            at30, at31,
            "run {run}: frames 30 and 31 are the same picture"
        );
        ok(&client, "stop_scene", json!({})).await;
        client.cancel().await.unwrap();
        frame30.push(at30);
    }
    let (a, b) = (&frame30[0], &frame30[1]);
    assert_eq!((a.0, a.1), (b.0, b.1));
    let differing = a.2.iter().zip(&b.2).filter(|(x, y)| x != y).count();
    assert_eq!(
        differing, 0,
        "{differing} bytes of frame 30 differ between two runs"
    );
    eprintln!(
        "PASSED: frame 30 of a held game is the same {}x{} picture in two runs, and frame 31 another ({})",
        a.0,
        a.1,
        godot.display()
    );
}

/// A capture of the held game: width, height and the decoded pixels.
async fn held_picture(client: &Client) -> (u32, u32, Vec<u8>) {
    let r = support::call_ok_result(client, "game_screenshot", json!({"frames": 2})).await;
    let support::Picture {
        width,
        height,
        pixels,
        colours,
    } = support::png_picture(&r);
    assert!(
        colours >= 3,
        "only {colours} colours: the ball and floor are not drawn"
    );
    (width, height, pixels)
}
