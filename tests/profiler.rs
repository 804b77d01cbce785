//! profile_game_functions end to end: the engine's scripts profiler, turned on over the
//! debugger connection of a play_scene game for a window, then off.
//!
//! Without Godot: the stand-in runs the debugger's sample script
//! (`rust/godot-mcp-protocol/tests/samples/debug_game.gd`: `_process` calls `tick`
//! once a frame) and speaks the profiler's messages as 4.4 does (see its
//! `debug_game.rs`). With a real Godot 4.4 (`GODOT_BIN`): the game runs the script the
//! protocol samples were captured from (`profile_game.gd`: `_process` calls `crunch`
//! 20 times a frame).

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{call, call_err, call_ok};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const PROFILE_SCRIPT: &str =
    include_str!("../rust/godot-mcp-protocol/tests/samples/profile_game.gd");

/// The row of `function`, with every row's shape checked.
fn row<'a>(v: &'a Value, function: &str) -> &'a Value {
    v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["function"] == function)
        .unwrap_or_else(|| panic!("no {function} row: {v}"))
}

/// Rows come most self time first.
fn assert_sorted(v: &Value) {
    let selfs: Vec<f64> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["self_ms"].as_f64().unwrap())
        .collect();
    assert!(selfs.windows(2).all(|w| w[0] >= w[1]), "{v}");
}

async fn standin_served(env: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, Client) {
    support::standin_debug_game("profiler", "prf", env).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standin_profile_sums_the_frames_and_leaves_the_profiler_off() {
    let (_p, _s, client) = standin_served(&[]).await;
    // No game: the debugger tools' own refusal.
    let e = call_err(&client, "profile_game_functions", json!({})).await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    call_ok(&client, "play_scene", json!({})).await;
    for bad in [
        json!({"window_ms": 99}),
        json!({"window_ms": 10001}),
        json!({"limit": 0}),
        json!({"limit": 501}),
    ] {
        let e = call_err(&client, "profile_game_functions", bad.clone()).await;
        assert_eq!(e["code"], "INVALID_PARAMS", "{bad}: {e}");
    }

    let v = call_ok(&client, "profile_game_functions", json!({"window_ms": 300})).await;
    assert_eq!(v["window_ms"], 300, "{v}");
    let frames = v["frames_sampled"].as_i64().unwrap();
    assert!(frames > 0, "{v}");
    let process = row(&v, "_process");
    let tick = row(&v, "tick");
    assert_eq!(process["file"], "res://scripts/debug_game.gd", "{v}");
    // The line GDScript names: the body's first.
    assert_eq!(process["line"], 8, "{v}");
    assert_eq!(tick["line"], 20, "{v}");
    // One _process and one tick a frame, summed over exactly the frames counted.
    assert_eq!(process["calls"].as_i64(), Some(frames), "{v}");
    assert_eq!(tick["calls"].as_i64(), Some(frames), "{v}");
    assert!(
        process["total_ms"].as_f64().unwrap() >= tick["total_ms"].as_f64().unwrap(),
        "{v}"
    );
    assert_eq!(v["functions_seen"], 2, "{v}");
    assert_eq!(v["truncated"], false, "{v}");
    assert_eq!(v["stopped_in_window"], false, "{v}");
    assert_sorted(&v);

    // Off after the window: a second run starts afresh (signature ids from 0 again)
    // and is bounded by its limit.
    let v = call_ok(
        &client,
        "profile_game_functions",
        json!({"window_ms": 200, "limit": 1}),
    )
    .await;
    assert_eq!(v["functions"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["functions_seen"], 2, "{v}");
    assert_eq!(v["truncated"], true, "{v}");
    assert!(v["functions"][0]["calls"].as_i64().unwrap() > 0, "{v}");

    // Stopped in the debugger: it runs no frames, so it is refused.
    call_ok(
        &client,
        "set_breakpoint",
        json!({"path": "res://scripts/debug_game.gd", "line": 14}),
    )
    .await;
    call_ok(&client, "debug_break", json!({})).await;
    let e = call_err(&client, "profile_game_functions", json!({})).await;
    assert_eq!(e["required"], "game_not_breaked", "{e}");
    assert!(
        e["hint"].as_str().unwrap().contains("continue_execution"),
        "{e}"
    );
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standin_game_ending_mid_window_is_a_structured_error() {
    let (_p, _s, client) = standin_served(&[("GODOT_STANDIN_QUIT_WHEN_PROFILED", "1")]).await;
    call_ok(&client, "play_scene", json!({})).await;
    // The game quits at its first frame with the profiler on; the call ends then, not
    // after its window.
    let e = call_err(
        &client,
        "profile_game_functions",
        json!({"window_ms": 10000}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "debugger_connected", "{e}");
    assert_eq!(e["details"]["during_window"], true, "{e}");
    let _ = client.cancel().await;
}

fn project_with_games(godot: &Path) -> tempfile::TempDir {
    let dir = support::demo_copy();
    support::install_addon(dir.path());
    std::fs::write(dir.path().join("scripts/profile_game.gd"), PROFILE_SCRIPT).unwrap();
    // Quits the moment the profiler runs: a game that ends mid-window.
    std::fs::write(
        dir.path().join("scripts/profile_quit.gd"),
        "extends Node\n\n\nfunc _process(_delta: float) -> void:\n\tif EngineDebugger.is_profiling(\"servers\"):\n\t\tget_tree().quit()\n",
    )
    .unwrap();
    for name in ["profile_game", "profile_quit"] {
        support::write_script_scene(dir.path(), name, "Game");
    }
    support::run_godot(godot, dir.path(), &["--import"]);
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_profile_game_functions_names_the_hot_function() {
    let Some(godot) = support::godot_bin("the real-Godot profiler test needs a Godot 4.4+ binary")
    else {
        return;
    };
    let project = project_with_games(&godot);
    let state = support::short_state_dir("prof");
    let (client, _) =
        support::serve_godot(&godot, project.path(), state.path(), &[], Stdio::null()).await;

    call_ok(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/profile_game.tscn"}),
    )
    .await;
    let start = Instant::now();
    let r = call(
        &client,
        "profile_game_functions",
        json!({"window_ms": 1000}),
    )
    .await;
    let wall = start.elapsed();
    let v = r.structured_content.unwrap();
    assert_ne!(r.is_error, Some(true), "{v}");
    eprintln!(
        "profile_game_functions, 1000 ms window: {} ms wall, {} ms over the window, {} frames",
        wall.as_millis(),
        wall.saturating_sub(Duration::from_millis(1000)).as_millis(),
        v["frames_sampled"]
    );
    let frames = v["frames_sampled"].as_i64().unwrap();
    assert!(frames > 0, "{v}");
    let crunch = row(&v, "crunch");
    assert_eq!(crunch["file"], "res://scripts/profile_game.gd", "{v}");
    assert_eq!(crunch["line"], 12, "{v}");
    let process = row(&v, "_process");
    assert_eq!(process["line"], 7, "{v}");
    // Summed over exactly the frames counted: one _process and 20 crunches a frame.
    assert_eq!(process["calls"].as_i64(), Some(frames), "{v}");
    assert_eq!(crunch["calls"].as_i64(), Some(20 * frames), "{v}");
    // Within the window: the frame the profiler started in (whose running calls report
    // time from before it started) is not counted.
    let self_total: f64 = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["self_ms"].as_f64().unwrap())
        .sum();
    assert!(self_total <= 1000.0, "{v}");
    assert_sorted(&v);

    // The profiler went off with the window: a second run answers afresh.
    let v = call_ok(
        &client,
        "profile_game_functions",
        json!({"window_ms": 300, "limit": 1}),
    )
    .await;
    assert_eq!(v["functions"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        v["truncated"],
        v["functions_seen"].as_u64().unwrap() > 1,
        "{v}"
    );
    assert!(v["functions"][0]["calls"].as_i64().unwrap() > 0, "{v}");
    call_ok(&client, "stop_scene", json!({})).await;

    // A game that ends mid-window: a structured error, not a partial profile.
    call_ok(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/profile_quit.tscn"}),
    )
    .await;
    let e = call_err(
        &client,
        "profile_game_functions",
        json!({"window_ms": 10000}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["details"]["during_window"], true, "{e}");
    let _ = client.cancel().await;
    eprintln!(
        "PASSED: the profiler against a real Godot ({})",
        godot.display()
    );
}
