//! The debugger family end to end.
//!
//! Without Godot: the stand-in (`godot-standin`, which runs the same sample script
//! under the engine's remote-debug rules, see its `debug_game.rs`) connects to the
//! server's debugger from a play_scene launch: breakpoints from the command line and
//! over the wire, the stack, variables, each kind of step, a forced break, continue,
//! simulate_input refused while stopped, and a step the game does not confirm in time
//! reported as TIMEOUT, never as stepped.
//!
//! With a real Godot 4.4 (`GODOT_BIN`): a game the supervisor launched (play_scene,
//! headless, with the runtime probe) connects to the server's debugger; a breakpoint set
//! before the launch stops it, the stack and the locals are read, a step moves one
//! line, simulate_input refuses with game_not_breaked meanwhile, an evaluation runs in
//! the frame, and continue resumes: the probe then answers and the script's counter
//! moves on.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{call, call_err, call_ok};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// The game's script: line 14 calls `tick`, line 15 follows it.
const SCRIPT: &str = support::DEBUG_GAME;
const SCRIPT_PATH: &str = "res://scripts/debug_game.gd";

fn project_with_game(godot: &Path) -> tempfile::TempDir {
    let dir = support::demo_copy();
    support::install_addon(dir.path());
    std::fs::write(dir.path().join("scripts/debug_game.gd"), SCRIPT).unwrap();
    support::write_script_scene(dir.path(), "debug_game", "DebugGame");
    std::fs::write(
        dir.path().join("scripts/debug_broken.gd"),
        "extends Node\n\nfunc _ready():\n\tvar n = null\n\tn.explode()\n\tprint(\"after the error\")\n",
    )
    .unwrap();
    support::write_script_scene(dir.path(), "debug_broken", "DebugBroken");
    support::run_godot(godot, dir.path(), &["--import"]);
    dir
}

/// Polls get_stack_frames until the game reports a stop (the client has no other
/// signal for a breakpoint being hit), at most 60 s.
async fn wait_stopped(client: &Client) -> Value {
    let start = Instant::now();
    loop {
        let r = call(client, "get_stack_frames", json!({})).await;
        let v = r.structured_content.unwrap();
        if r.is_error != Some(true) {
            return v;
        }
        assert!(
            ["game_breaked", "debugger_connected"]
                .contains(&v["error"]["required"].as_str().unwrap_or("")),
            "{v}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the game never stopped: {v}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_debugger_breakpoint_stack_step_input_refused_continue() {
    let Some(godot) = support::godot_bin("the real-Godot debugger test needs a Godot 4.4+ binary")
    else {
        return;
    };
    let project = project_with_game(&godot);
    let state = support::short_state_dir("dbg");
    let (client, _) =
        support::serve_godot(&godot, project.path(), state.path(), &[], Stdio::null()).await;

    // Set before the launch: the game gets it on its command line.
    let v = call_ok(
        &client,
        "set_breakpoint",
        json!({"path": SCRIPT_PATH, "line": 14}),
    )
    .await;
    assert_eq!(v["added"], true, "{v}");
    assert_eq!(v["breakpoints"], json!([{"path": SCRIPT_PATH, "line": 14}]));
    let v = call_ok(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/debug_game.tscn"}),
    )
    .await;
    let session = v["session_id"].as_str().unwrap().to_string();

    let v = wait_stopped(&client).await;
    assert_eq!(v["reason"], "Breakpoint", "{v}");
    assert_eq!(
        v["frames"][0],
        json!({"index": 0, "file": SCRIPT_PATH, "line": 14, "function": "_process"})
    );

    let v = call_ok(&client, "get_frame_variables", json!({"frame": 0})).await;
    let local = |name: &str| {
        v["locals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .unwrap_or_else(|| panic!("no local {name}: {v}"))
            .clone()
    };
    assert_eq!(
        local("pos")["value"],
        json!({"$type": "Vector2", "x": 1.5, "y": -2.0})
    );
    assert_eq!(local("pos")["type"], "Vector2");
    assert_eq!(local("tags")["value"]["items"], json!(["a", "bc"]));
    let counter = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "counter")
        .unwrap()["value"]
        .as_i64()
        .unwrap();
    assert!(counter >= 1, "{v}");
    assert_eq!(v["members"][0]["name"], "self", "{v}");

    // Stopped in the debugger: input would be lost, so none is sent, and the hint names
    // the tool that resumes the game.
    let e = call_err(
        &client,
        "simulate_input",
        json!({"event": {"type": "action", "action": "ui_accept"}}),
    )
    .await;
    assert_eq!(e["required"], "game_not_breaked", "{e}");
    assert!(
        e["hint"].as_str().unwrap().contains("continue_execution"),
        "{e}"
    );
    assert!(e["message"].as_str().unwrap().contains("Breakpoint"), "{e}");

    let v = call_ok(
        &client,
        "evaluate_in_frame",
        json!({"expression": "counter * 2 + pos.x"}),
    )
    .await;
    assert_eq!(v["value"], json!(counter as f64 * 2.0 + 1.5), "{v}");
    let e = call_err(&client, "evaluate_in_frame", json!({"expression": "nope("})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");

    // One step over the call: the next line of the same function.
    let v = call_ok(&client, "step_over", json!({})).await;
    assert_eq!(v["location"]["line"], 15, "{v}");
    assert_eq!(v["location"]["function"], "_process", "{v}");
    // Continue: the breakpoint stops the next frame; into tick, then out to the
    // caller's next line.
    let v = call_ok(&client, "continue_execution", json!({})).await;
    assert_eq!(v["resumed"], true, "{v}");
    let v = wait_stopped(&client).await;
    assert_eq!(v["frames"][0]["line"], 14, "{v}");
    let v = call_ok(&client, "step_into", json!({})).await;
    assert_eq!(v["location"]["line"], 20, "{v}");
    assert_eq!(v["location"]["function"], "tick", "{v}");
    let v = call_ok(&client, "get_stack_frames", json!({})).await;
    assert_eq!(v["frames"][1]["line"], 14, "the caller: {v}");
    let v = call_ok(&client, "step_out", json!({})).await;
    assert_eq!(v["location"]["function"], "_process", "{v}");
    assert_eq!(v["location"]["line"], 15, "{v}");

    // Remove the breakpoint (delivered to the stopped game), then continue: it runs on.
    let v = call_ok(
        &client,
        "remove_breakpoint",
        json!({"path": SCRIPT_PATH, "line": 14}),
    )
    .await;
    assert_eq!(v["running_games"][0]["delivered"], true, "{v}");
    let v = call_ok(&client, "continue_execution", json!({})).await;
    assert_eq!(v["resumed"], true, "{v}");
    let v = call_ok(
        &client,
        "monitor_property",
        json!({"session_id": session, "node": "/root/DebugGame", "property": "counter",
               "samples": 3, "interval_ms": 100}),
    )
    .await;
    let samples: Vec<i64> = v["samples"]
        .as_array()
        .unwrap()
        .iter()
        // The probe answers a property in the value model: an int is a JSON integer.
        .map(|s| s["value"].as_i64().unwrap_or_else(|| panic!("{v}")))
        .collect();
    assert!(
        samples.windows(2).all(|w| w[1] > w[0]) && samples[0] > counter,
        "the game does not run on after continue: {samples:?}"
    );
    call_ok(
        &client,
        "simulate_input",
        json!({"event": {"type": "action", "action": "ui_accept"}}),
    )
    .await;
    let e = call_err(&client, "step_into", json!({})).await;
    assert_eq!(e["required"], "game_breaked", "{e}");

    // A forced break stops the running game; continue resumes it again.
    let v = call_ok(&client, "debug_break", json!({})).await;
    assert_eq!(v["stopped"], true, "{v}");
    let v = call_ok(&client, "continue_execution", json!({})).await;
    assert_eq!(v["resumed"], true, "{v}");

    call_ok(&client, "stop_scene", json!({})).await;

    // A script error stops a play_scene game in the debugger, at the failing line,
    // with the engine's error text as the reason; continue lets it run on.
    call_ok(
        &client,
        "play_scene",
        json!({"scene": "res://scenes/debug_broken.tscn"}),
    )
    .await;
    let v = wait_stopped(&client).await;
    assert_eq!(
        (
            v["frames"][0]["file"].clone(),
            v["frames"][0]["line"].clone()
        ),
        (json!("res://scripts/debug_broken.gd"), json!(5)),
        "{v}"
    );
    assert!(v["reason"].as_str().unwrap().contains("explode"), "{v}");
    let v = call_ok(&client, "list_sessions", json!({})).await;
    let game = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["running"] == true)
        .unwrap()
        .clone();
    assert_eq!(game["debugger"]["stopped"], true, "{game}");
    call_ok(&client, "continue_execution", json!({})).await;
    call_ok(&client, "stop_scene", json!({})).await;
    let _ = client.cancel().await;
    eprintln!(
        "PASSED: the debugger against a real Godot ({})",
        godot.display()
    );
}

/// A project with the sample script, served with the stand-in as Godot.
async fn standin_served(env: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, Client) {
    support::standin_debug_game("debugger", "dbs", env).await
}

fn location(v: &Value) -> (i64, String) {
    (
        v["location"]["line"]
            .as_i64()
            .unwrap_or_else(|| panic!("{v}")),
        v["location"]["function"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standin_game_stops_steps_and_resumes_through_the_servers_debugger() {
    let (_p, _s, client) = standin_served(&[]).await;
    let e = call_err(
        &client,
        "set_breakpoint",
        json!({"path": "res://scripts/none.gd", "line": 3}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    let e = call_err(
        &client,
        "set_breakpoint",
        json!({"path": "/etc/passwd", "line": 3}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED", "{e}");
    call_ok(
        &client,
        "set_breakpoint",
        json!({"path": SCRIPT_PATH, "line": 14}),
    )
    .await;
    call_ok(&client, "play_scene", json!({})).await;

    // The probe's hello is kept though no call was waiting for it.
    let start = Instant::now();
    loop {
        let v = call_ok(&client, "list_sessions", json!({})).await;
        if v["sessions"][0]["probe_connected"] == true {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the probe never connected: {v}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let v = wait_stopped(&client).await;
    assert_eq!(v["reason"], "Breakpoint", "{v}");
    assert_eq!(
        v["frames"][0],
        json!({"index": 0, "file": SCRIPT_PATH, "line": 14, "function": "_process"})
    );
    let v = call_ok(&client, "get_frame_variables", json!({})).await;
    assert_eq!(
        v["locals"][0],
        json!({"name": "pos", "type": "Vector2", "value": {"$type": "Vector2", "x": 1.5, "y": -2.0}}),
        "{v}"
    );
    assert_eq!(v["members"][0]["value"]["$type"], "Object", "{v}");
    assert!(v.get("globals").is_none(), "globals only on request: {v}");
    let g = call_ok(
        &client,
        "get_frame_variables",
        json!({"include_globals": true}),
    )
    .await;
    assert_eq!(
        g["globals"].as_array().map(Vec::len),
        g["globals_count"].as_u64().map(|n| n as usize),
        "{g}"
    );
    let e = call_err(&client, "get_frame_variables", json!({"frame": 5})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");

    let e = call_err(
        &client,
        "simulate_input",
        json!({"event": {"type": "key", "key": "A"}}),
    )
    .await;
    assert_eq!(e["required"], "game_not_breaked", "{e}");
    assert!(
        e["hint"].as_str().unwrap().contains("continue_execution"),
        "{e}"
    );

    let v = call_ok(
        &client,
        "evaluate_in_frame",
        json!({"expression": "counter"}),
    )
    .await;
    assert_eq!(v["type"], "int", "{v}");
    let e = call_err(&client, "evaluate_in_frame", json!({"expression": "nope("})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");

    // Into tick, out to the caller's next line.
    let v = call_ok(&client, "step_into", json!({})).await;
    assert_eq!(location(&v), (20, "tick".into()), "{v}");
    let v = call_ok(&client, "get_stack_frames", json!({})).await;
    assert_eq!(v["frames"][1]["line"], 14, "{v}");
    // Godot 4.4 has no step-out: the server steps over until tick returned.
    let v = call_ok(&client, "step_out", json!({})).await;
    assert_eq!(location(&v), (15, "_process".into()), "{v}");
    assert_eq!(v["steps"], 2, "line 21, then the caller's line 15: {v}");
    let e = call_err(&client, "step_out", json!({})).await;
    assert_eq!(
        e["required"], "caller_frame",
        "_process has no script caller: {e}"
    );
    // Continue: the breakpoint stops the next frame; over the call is one line.
    call_ok(&client, "continue_execution", json!({})).await;
    let v = wait_stopped(&client).await;
    assert_eq!(v["frames"][0]["line"], 14, "{v}");
    let v = call_ok(&client, "step_over", json!({})).await;
    assert_eq!(location(&v), (15, "_process".into()), "{v}");

    // Removed over the wire, the game runs on after continue.
    let v = call_ok(&client, "clear_breakpoints", json!({})).await;
    assert_eq!(v["running_games"][0]["delivered"], true, "{v}");
    call_ok(&client, "continue_execution", json!({})).await;
    call_ok(
        &client,
        "simulate_input",
        json!({"event": {"type": "key", "key": "A"}}),
    )
    .await;
    let e = call_err(&client, "step_into", json!({})).await;
    assert_eq!(e["required"], "game_breaked", "{e}");
    let e = call_err(&client, "get_stack_frames", json!({})).await;
    assert_eq!(e["required"], "game_breaked", "{e}");

    // A forced break stops it outside any script.
    let v = call_ok(&client, "debug_break", json!({})).await;
    assert_eq!(
        (v["stopped"].clone(), v["location"].clone()),
        (json!(true), Value::Null),
        "{v}"
    );
    let e = call_err(
        &client,
        "simulate_input",
        json!({"event": {"type": "key", "key": "A"}}),
    )
    .await;
    assert_eq!(e["required"], "game_not_breaked", "{e}");
    call_ok(&client, "continue_execution", json!({})).await;
    call_ok(&client, "stop_scene", json!({})).await;
    let e = call_err(&client, "continue_execution", json!({})).await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "no running game: {e}");
    let _ = client.cancel().await;
}

/// A line that takes longer than the caller waits: the step is a TIMEOUT that says the
/// game left the stop, and the stop it reaches later is reported then, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standin_step_not_confirmed_in_time_is_a_timeout() {
    let (_p, _s, client) = standin_served(&[("GODOT_STANDIN_LINE_MS", "300")]).await;
    call_ok(
        &client,
        "set_breakpoint",
        json!({"path": SCRIPT_PATH, "line": 14}),
    )
    .await;
    call_ok(&client, "play_scene", json!({})).await;
    wait_stopped(&client).await;
    let e = call_err(&client, "step_over", json!({"timeout_ms": 50})).await;
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert_eq!(e["details"]["left_stop"], true, "{e}");
    let v = wait_stopped(&client).await;
    assert_eq!(v["frames"][0]["line"], 15, "{v}");
    let e = call_err(&client, "step_over", json!({"timeout_ms": 0})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    call_ok(&client, "stop_scene", json!({})).await;
    let _ = client.cancel().await;
}

/// A breakpoint set after the launch but before the game connected reaches it when it
/// connects (the launch's command line had only the breakpoints of its time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standin_breakpoint_set_before_the_game_connects_is_sent_when_it_does() {
    let (_p, _s, client) = standin_served(&[("GODOT_STANDIN_DEBUG_CONNECT_MS", "1500")]).await;
    call_ok(&client, "play_scene", json!({})).await;
    let v = call_ok(
        &client,
        "set_breakpoint",
        json!({"path": SCRIPT_PATH, "line": 20}),
    )
    .await;
    assert_eq!(v["running_games"][0]["queued"], true, "{v}");
    assert_eq!(v["running_games"][0]["delivered"], false, "{v}");
    let v = wait_stopped(&client).await;
    assert_eq!(v["frames"][0]["line"], 20, "{v}");
    assert_eq!(v["frames"][0]["function"], "tick", "{v}");
    call_ok(&client, "stop_scene", json!({})).await;
    let _ = client.cancel().await;
}
