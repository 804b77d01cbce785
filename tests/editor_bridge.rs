//! The editor plane end to end: the real `godot-mcp` binary, a real MCP client, and a
//! protocol peer in the add-on's place that can answer, stall or drop on demand (the
//! faults a real editor cannot be made to produce). The real-editor tier is
//! tests/godot/run_editor_tests.sh.

mod support;

use std::time::Duration;

use godot_mcp_protocol::{Discovery, Request};
use serde_json::{Value, json};
use support::*;

/// A peer that plays a healthy editor with main_2d.tscn open, and `special` for one command.
fn editor(
    d: &Discovery,
    special: &'static str,
    act: fn() -> Act,
) -> std::thread::JoinHandle<Vec<Request>> {
    addon_peer_with(d, move |r| {
        if r.cmd == special {
            return act();
        }
        Act::Answer(match r.cmd.as_str() {
            "editor.state" => {
                json!({"active_scene": "res://scenes/main_2d.tscn", "open_scenes": ["res://scenes/main_2d.tscn"]})
            }
            "node.persistence" => {
                json!({"exists": true, "scene": "res://scenes/main_2d.tscn", "persisted": false,
                "reason": "the edit is in the scene open in the editor, not on disk", "hint": "Save the scene (save_scene) to persist it.", "undoable": true})
            }
            "scene.tree" => {
                json!({"scene": "res://scenes/main_2d.tscn", "node_count": 2, "offset": 0, "type_names": ["Node2D"], "names": ["Main", "A"], "types": [0, 0], "depths": [0, 1]})
            }
            // Like the real add-on: a node command's reply carries the verdict its probe
            // would (exec.rs stamps both with the same rule).
            _ => json!({"undoable": true, "persisted": false,
                "reason": "the edit is in the scene open in the editor, not on disk",
                "hint": "Save the scene (save_scene) to persist it."}),
        })
    })
}

async fn transactions(client: &Client) -> Vec<Value> {
    let v = call_ok(client, "list_transactions", json!({})).await;
    v["transactions"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_editor_the_tools_say_bridge_connected_and_disk_reads_still_work() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    wait_discovery(project.path());
    let e = call_err(
        &client,
        "create_node",
        json!({"parent": ".", "type": "Node2D", "name": "X"}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED");
    assert_eq!(e["required"], "bridge_connected");
    let e = call_err(&client, "get_scene_tree", json!({})).await;
    assert_eq!(e["required"], "bridge_connected");
    let v = call_ok(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/main_2d.tscn"}),
    )
    .await;
    assert_eq!(v["source"], "disk");
    client.cancel().await.unwrap();
    // Clean shutdown removes the discovery file.
    let path = project.path().join(".godot/godot_mcp/bridge.json");
    for _ in 0..200 {
        if !path.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("discovery file left behind after a clean shutdown");
}

/// One hello with `token`; the server's first answer line.
fn hello_answer(d: &Discovery, token: &str) -> String {
    support::bridge_hello(d, token).2
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hello_with_a_wrong_token_is_refused() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    // Same length with one digit changed, a prefix, longer, and empty: all refused.
    let mut flipped = d.token.clone().into_bytes();
    flipped[10] = if flipped[10] == b'0' { b'1' } else { b'0' };
    let flipped = String::from_utf8(flipped).unwrap();
    let longer = format!("{}0", d.token);
    for token in [flipped.as_str(), &d.token[..32], longer.as_str(), ""] {
        let answer = hello_answer(&d, token);
        assert!(
            answer.contains("wrong or missing token") && !answer.contains("accepted"),
            "token {token:?}: {answer}"
        );
    }
    assert!(hello_answer(&d, &d.token).contains("accepted"));
    client.cancel().await.unwrap();
}

/// Guards the lean start: a stdio server answers `initialize` on its one thread (the
/// bridge accepts on its runtime, the dock's publisher waits for an add-on: each thread
/// created at start was a large part of it), and an add-on that connects is served.
#[cfg(target_os = "linux")]
#[test]
fn a_stdio_server_answers_initialize_on_one_thread_and_still_serves_the_addon() {
    use std::io::{BufRead, BufReader, Write};
    let project = demo_copy();
    let state = tempfile::tempdir().unwrap();
    let (mut child, _) = start_and_read_gate(project.path(), state.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdin
        .write_all(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
"#,
        )
        .unwrap();
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    assert!(answer.contains(r#""id":1,"result""#), "{answer}");
    let threads = std::fs::read_dir(format!("/proc/{}/task", child.id()))
        .unwrap()
        .count();
    assert_eq!(threads, 1, "threads of a server that answered initialize");
    let d = wait_discovery(project.path());
    assert!(hello_answer(&d, &d.token).contains("accepted"));
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_applied_edit_is_a_committed_editor_transaction_and_the_tree_is_live() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let _peer = editor(&d, "none", || Act::Drop);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let dry = call_ok(
        &client,
        "create_node",
        json!({"parent": ".", "type": "Node2D", "name": "X", "dry_run": true}),
    )
    .await;
    assert_eq!(dry["persisted"], false);
    assert_eq!(dry["applied"], false);
    let real = call_ok(
        &client,
        "create_node",
        json!({"parent": ".", "type": "Node2D", "name": "X"}),
    )
    .await;
    assert_eq!(
        real["persisted"], dry["persisted"],
        "preview and real run agree"
    );
    assert_eq!(real["reason"], dry["reason"]);
    assert_eq!(real["applied"], true);
    let txn = real["transaction_id"].as_str().unwrap().to_string();
    let all = transactions(&client).await;
    let row = all
        .iter()
        .find(|t| t["transaction_id"] == txn.as_str())
        .unwrap();
    assert_eq!(row["status"], "committed");
    assert_eq!(row["effect_kind"], "editor_runtime");
    let tree = call_ok(&client, "get_scene_tree", json!({})).await;
    assert_eq!(tree["source"], "editor");
    assert_eq!(tree["names"], json!(["Main", "A"]));
    let tree = call_ok(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/main_2d.tscn"}),
    )
    .await;
    assert_eq!(
        tree["source"], "editor",
        "the scene being edited is read live"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_slower_than_the_timeout_may_have_applied_and_stays_unresolved() {
    let project = demo_copy();
    let client = connect_with(project.path(), &[("GODOT_MCP_EDITOR_TIMEOUT_MS", "300")]).await;
    let d = wait_discovery(project.path());
    let _peer = editor(&d, "node.set_property", || {
        Act::Late(Duration::from_millis(900), json!({"undoable": true}))
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let e = call_err(
        &client,
        "set_node_property",
        json!({"node": "A", "property": "visible", "value": false}),
    )
    .await;
    assert_eq!(e["code"], "TIMEOUT");
    assert_eq!(e["details"]["may_have_applied"], true);
    assert!(e["hint"].as_str().unwrap().contains("Re-read"), "{e}");
    assert_eq!(e["details"]["transaction_status"], "unresolved");
    let txn = e["details"]["transaction_id"].as_str().unwrap().to_string();
    let row = transactions(&client)
        .await
        .into_iter()
        .find(|t| t["transaction_id"] == txn.as_str())
        .unwrap();
    assert_eq!(row["status"], "open");
    assert!(row["reason"].as_str().unwrap().contains("never resent"));
    // An unresolved in-memory edit does not block file writes.
    call_ok(
        &client,
        "create_script",
        json!({"path": "res://scripts/after.gd", "confirm": true}),
    )
    .await;
    // The late reply (never a resend) settles it from the editor's answer.
    let mut row = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        row = transactions(&client)
            .await
            .into_iter()
            .find(|t| t["transaction_id"] == txn.as_str())
            .unwrap();
        if row["status"] == "committed" {
            break;
        }
    }
    assert_eq!(row["status"], "committed", "{row}");
    assert!(
        row["proof_summary"].as_str().unwrap().contains("late"),
        "{row}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_answer_to_a_save_is_never_resent_and_quarantines() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let first = editor(&d, "scene.save", || Act::Drop);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let e = call_err(&client, "save_scene", json!({"confirm": true})).await;
    assert_eq!(e["code"], "TIMEOUT");
    assert_eq!(e["details"]["may_have_applied"], true);
    assert_eq!(e["details"]["timed_out"], false);
    assert_eq!(e["details"]["transaction_status"], "quarantined");
    let seen = first.join().unwrap();
    assert_eq!(seen.iter().filter(|r| r.cmd == "scene.save").count(), 1);
    // Writes are blocked until an operator resolves it.
    let e = call_err(
        &client,
        "create_script",
        json!({"path": "res://scripts/blocked.gd", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "WRITE_GATE_CLOSED");
    // The add-on reconnects: the save is not sent again.
    let second = editor(&d, "none", || Act::Drop);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let e = call_err(
        &client,
        "set_node_property",
        json!({"node": "A", "property": "visible", "value": false}),
    )
    .await;
    assert_eq!(
        e["code"], "WRITE_GATE_CLOSED",
        "editor effects are writes too"
    );
    client.cancel().await.unwrap();
    let seen = second.join().unwrap();
    assert!(
        seen.iter().all(|r| r.cmd != "scene.save"),
        "{:?}",
        seen.iter().map(|r| &r.cmd).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_server_refused_by_the_lease_leaves_the_discovery_file_alone() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let before = wait_discovery(project.path());
    let second = server_std()
        .args(["serve", "--project"])
        .arg(project.path())
        .env("GODOT_MCP_STATE_DIR", client.state_dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(3));
    assert_eq!(wait_discovery(project.path()), before);
    let mode = godot_mcp_os::fs::mode(
        &std::fs::metadata(project.path().join(".godot/godot_mcp/bridge.json")).unwrap(),
    ) & 0o777;
    assert_eq!(mode, 0o600);
    client.cancel().await.unwrap();
}

/// Through the real binary: a resource save that fails. With the add-on's rollback report
/// and the file's bytes untouched the agent is told nothing was changed and the row is
/// `compensated`; the same error without the report (an older add-on) is `quarantined`,
/// closes the write gate, and never says nothing was changed.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_save_is_compensated_only_with_its_pre_state_proven() {
    let project = demo_copy();
    let res = project.path().join("resources/player_stats.tres");
    let bytes = std::fs::read(&res).unwrap();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let _peer = editor(&d, "resource.set_property", || {
        Act::Fail(json!({"code": "failed", "message": "saving failed", "effect": "rolled_back"}))
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let args =
        json!({"path": "res://resources/player_stats.tres", "property": "max_health", "value": 1});
    let e = call_err(&client, "set_resource_property", args.clone()).await;
    assert_eq!(e["details"]["status"], "compensated", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .starts_with("Nothing was changed"),
        "{e}"
    );
    let txn = e["details"]["transaction_id"].as_str().unwrap().to_string();
    let row = transactions(&client)
        .await
        .into_iter()
        .find(|t| t["transaction_id"] == txn.as_str())
        .unwrap();
    assert_eq!(row["status"], "compensated");
    let hash = godot_mcp_journal::FileState::of(&bytes).to_string();
    assert!(
        row["proof_summary"].as_str().unwrap().contains(&format!(
            "editor rolled_back; file {hash} before, {hash} after"
        )),
        "{row}"
    );
    client.cancel().await.unwrap();

    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let _peer = editor(&d, "resource.set_property", || {
        Act::Fail(json!({"code": "failed", "message": "saving failed"}))
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let e = call_err(&client, "set_resource_property", args).await;
    assert_eq!(e["code"], "EDITOR_ERROR");
    assert_eq!(e["details"]["status"], "quarantined", "{e}");
    assert_eq!(e["details"]["may_have_applied"], true);
    let hint = e["hint"].as_str().unwrap();
    assert!(
        !hint.to_lowercase().contains("nothing was changed"),
        "{hint}"
    );
    assert!(hint.contains("not reported"), "{hint}");
    let e = call_err(
        &client,
        "create_script",
        json!({"path": "res://scripts/blocked.gd", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "WRITE_GATE_CLOSED");
    assert_eq!(std::fs::read(&res).unwrap(), bytes);
    client.cancel().await.unwrap();
}

/// A scene command's dry run carries the undo verdict its tool knows better than the
/// rule: a batch over the limit bypasses the history, and a save is not on it.
#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_reports_the_undo_its_tool_decided() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let _peer = editor(&d, "none", || Act::Drop);
    let sets: Vec<Value> = (0..=20)
        .map(|i| json!({"node": format!("N{i}"), "property": "visible", "value": false}))
        .collect();
    let args = json!({"sets": sets, "dry_run": true});
    // Until the peer has said hello the answer is `required: bridge_connected`.
    let batch = loop {
        let r = call(&client, "apply_scene_batch", args.clone()).await;
        let content = r.structured_content.unwrap_or_default();
        if content["error"]["required"] != "bridge_connected" {
            break content;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(batch["undoable"], false, "{batch}");
    let hint = batch["undo_hint"].as_str().unwrap_or_default();
    assert!(hint.starts_with("More than 20 nodes"), "{batch}");
    let save = call_ok(
        &client,
        "save_scene",
        json!({"dry_run": true, "confirm": true}),
    )
    .await;
    let hint = save["undo_hint"].as_str().unwrap_or_default();
    assert!(
        hint.starts_with("Saving is not on the undo history"),
        "{save}"
    );
    client.cancel().await.unwrap();
}

/// The bridge requests the server sends for a set of editor tools, as captured from the
/// server (the insta snapshot tests/snapshots/editor_bridge__bridge_wire.snap).
/// The params are the wire contract with the add-on: a change here is a protocol change.
#[tokio::test(flavor = "multi_thread")]
async fn the_bridge_requests_the_server_sends_are_the_pinned_wire() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let peer = editor(&d, "none", || Act::Drop);
    let calls = [
        (
            "create_node",
            json!({"parent": ".", "type": "Node2D", "name": "X"}),
        ),
        ("rename_node", json!({"node": "A", "new_name": "B"})),
        ("move_node", json!({"node": "A", "new_parent": "C"})),
        ("duplicate_node", json!({"node": "A"})),
        ("duplicate_node", json!({"node": "A", "new_name": "A2"})),
        ("delete_node", json!({"node": "A", "confirm": true})),
        (
            "get_node_property",
            json!({"node": "A", "property": "position"}),
        ),
        (
            "set_node_property",
            json!({"node": "A", "property": "position",
                   "value": {"$type": "Vector2", "x": 1.5, "y": -2.25}}),
        ),
        (
            "apply_scene_batch",
            json!({"sets": [
                {"node": "A", "property": "visible", "value": false},
                {"node": "B", "property": "modulate",
                 "value": {"$type": "Color", "r": 0.5, "g": 0.25, "b": 1.0, "a": 1.0}}]}),
        ),
        (
            "attach_script",
            json!({"node": "A", "script": "res://scripts/player.gd"}),
        ),
        ("detach_script", json!({"node": "A"})),
        (
            "connect_signal",
            json!({"from": "A", "signal": "ready", "to": ".", "method": "go"}),
        ),
        ("editor_undo", json!({})),
        ("editor_redo", json!({})),
        ("editor_history", json!({})),
        ("reload_scene", json!({"confirm": true})),
        // One call of every authoring command (the table's rows from `node.instance` on), optional fields
        // both absent and given where the server sends them differently.
        (
            "instance_scene",
            json!({"parent": ".", "scene": "res://scenes/player.tscn"}),
        ),
        (
            "instance_scene",
            json!({"parent": "A", "scene": "res://scenes/player.tscn", "name": "P2"}),
        ),
        ("add_to_group", json!({"node": "A", "group": "enemies"})),
        (
            "remove_from_group",
            json!({"node": "A", "group": "enemies", "confirm": true}),
        ),
        (
            "set_editable_children",
            json!({"node": "A", "editable": true, "confirm": true}),
        ),
        ("select_nodes", json!({"nodes": ["A", "B"]})),
        ("get_selected_nodes", json!({})),
        ("save_all_scenes", json!({"confirm": true})),
        ("list_editor_signal_connections", json!({"node": "A"})),
        ("get_editor_node_properties", json!({"node": "A"})),
        (
            "get_editor_property_list",
            json!({"node": "A", "offset": 2, "limit": 10}),
        ),
        (
            "add_animation",
            json!({"player": "AP", "name": "walk", "length": 1.5, "loop_mode": "pingpong"}),
        ),
        (
            "add_animation",
            json!({"player": "AP", "name": "run", "library": "moves", "length": 2}),
        ),
        (
            "remove_animation",
            json!({"player": "AP", "animation": "walk", "confirm": true}),
        ),
        (
            "set_animation",
            json!({"player": "AP", "animation": "run", "length": 2.5, "loop_mode": "linear"}),
        ),
        (
            "add_animation_track",
            json!({"player": "AP", "animation": "walk", "track_type": "position_3d",
                   "path": "Mesh"}),
        ),
        (
            "remove_animation_track",
            json!({"player": "AP", "animation": "walk", "track": 1, "confirm": true}),
        ),
        (
            "insert_animation_key",
            json!({"player": "AP", "animation": "walk", "track": 0, "time": 0.5,
                   "value": {"$type": "Vector2", "x": 1, "y": 2.5}}),
        ),
        (
            "insert_animation_key",
            json!({"player": "AP", "animation": "walk", "track": 2, "time": 1,
                   "value": 3, "transition": 0.5}),
        ),
        (
            "remove_animation_key",
            json!({"player": "AP", "animation": "walk", "track": 0, "time": 0.5,
                   "confirm": true}),
        ),
        (
            "get_editor_animation",
            json!({"player": "AP", "animation": "walk"}),
        ),
        (
            "get_editor_animation",
            json!({"player": "AP", "animation": "moves/run", "max_keys": 5}),
        ),
        (
            "add_state_machine_state",
            json!({"tree": "AT", "name": "Idle", "animation": "idle"}),
        ),
        (
            "add_blend_tree_node",
            json!({"tree": "AT", "graph": "Mixer", "name": "Blend",
                   "node_type": "AnimationNodeBlend2", "position": [10, 20.5]}),
        ),
        (
            "connect_state_machine_states",
            json!({"tree": "AT", "from": "Start", "to": "Idle"}),
        ),
        (
            "connect_state_machine_states",
            json!({"tree": "AT", "state_machine": "Sub", "from": "Idle", "to": "End",
                   "switch_mode": "at_end", "advance_mode": "auto",
                   "advance_condition": "done", "xfade_time": 0.25}),
        ),
        (
            "connect_blend_tree_nodes",
            json!({"tree": "AT", "to": "output", "port": 0, "from": "Blend"}),
        ),
        (
            "set_theme_item",
            json!({"path": "res://resources/ui_theme.tres", "theme_type": "Button",
                   "kind": "stylebox", "name": "normal",
                   "value": {"bg_color": {"$type": "Color", "r": 1, "g": 0, "b": 0, "a": 1}}}),
        ),
        (
            "set_theme_override",
            json!({"node": "L", "kind": "font_size", "name": "font_size", "value": 20}),
        ),
        (
            "set_theme_override",
            json!({"node": "L", "kind": "color", "name": "font_color", "value": null}),
        ),
        (
            "set_anchors_preset",
            json!({"node": "L", "preset": "full_rect"}),
        ),
        (
            "add_container",
            json!({"parent": ".", "type": "GridContainer", "name": "G", "columns": 3,
                   "separation": 4}),
        ),
        (
            "add_container",
            json!({"parent": ".", "type": "MarginContainer", "name": "M", "margin": 8}),
        ),
        // The other commands still built as JSON: audio, the live reads of the
        // family tools, a recipe's `scene.steps`, the editor screenshot.
        ("add_audio_player", json!({"parent": ".", "name": "Music"})),
        (
            "add_audio_player",
            json!({"parent": ".", "name": "Sfx", "type": "AudioStreamPlayer2D",
                   "stream": "res://icon.svg", "bus": "Fx", "autoplay": true,
                   "volume_db": -6}),
        ),
        ("get_used_tile_cells", json!({"node": "T"})),
        (
            "get_gridmap_cells",
            json!({"node": "G", "offset": 5, "limit": 20}),
        ),
        (
            "list_mesh_library_items",
            json!({"path": "res://resources/lib.tres"}),
        ),
        (
            "create_nodes",
            json!({"steps": [
                {"op": "create", "parent": ".", "type": "Sprite2D", "name": "S"},
                {"op": "set", "node": "$0", "property": "position",
                 "value": {"$type": "Vector2", "x": 3, "y": 4}},
                {"op": "group", "node": "$0", "group": "props"}]}),
        ),
        // A path naming a node an earlier step makes is sent as that step's "$N"
        // (agent trial, ui-grid-inventory: "node Slots does not exist").
        (
            "create_nodes",
            json!({"steps": [
                {"op": "create", "parent": ".", "type": "GridContainer", "name": "Slots"},
                {"op": "create", "parent": "Slots", "type": "Panel", "name": "Slot1"},
                {"op": "connect", "node": "Slots/Slot1", "signal": "gui_input", "to": ".",
                 "method": "_on_slot"}]}),
        ),
        (
            "set_gridmap_cells",
            json!({"node": "G", "cells": [{"coords": [1, 2, 3], "item": 4}]}),
        ),
        ("capture_editor_screenshot", json!({})),
        (
            "capture_editor_screenshot",
            json!({"view": "2d", "max_edge": 256, "node": "A"}),
        ),
        ("capture_editor_screenshot", json!({"view": "window"})),
    ];
    for (tool, args) in calls {
        // The replies of the stand-in editor do not matter here, only what was sent.
        let _ = call(&client, tool, args).await;
    }
    client.cancel().await.unwrap();
    let seen = peer.join().unwrap();
    let sent: Vec<Value> = seen
        .iter()
        .filter(|r| r.cmd != "editor.state" && r.cmd != "node.persistence")
        .map(|r| json!({"cmd": r.cmd, "params": r.params}))
        .collect();
    use godot_mcp_protocol::commands::{NODE_INSTANCE, TABLE};
    let first = TABLE.iter().position(|(c, _)| *c == NODE_INSTANCE).unwrap();
    for (c, _) in &TABLE[first..] {
        assert!(sent.iter().any(|r| r["cmd"] == *c), "{c} was not sent");
    }
    // One snapshot mechanism for the whole contract (insta, like tests/contract.rs):
    // scripts/test.sh sets INSTA_UPDATE=no, so a change or a missing snapshot fails.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/snapshots"),
    );
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_json_snapshot!("bridge_wire", Value::Array(sent)));
}

/// create_nodes takes the wire's step type, whose schema offers only the node steps
/// (create, set, group): a family tool's step is refused as the agent's error before
/// anything is sent, and so is a value the value model refuses.
#[tokio::test(flavor = "multi_thread")]
async fn create_nodes_refuses_a_family_step_and_a_bad_value_before_sending() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let d = wait_discovery(project.path());
    let peer = editor(&d, "none", || Act::Drop);
    let e = call_err(
        &client,
        "create_nodes",
        json!({"steps": [
            {"op": "create", "parent": ".", "type": "Node2D", "name": "N"},
            {"op": "bake_navigation", "node": "$0"}]}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert_eq!(e["param"], "steps[1].op", "{e}");
    let e = call_err(
        &client,
        "create_nodes",
        json!({"steps": [{"op": "set", "node": "A", "property": "position",
                          "value": {"$type": "Vector2", "x": 1}}]}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert!(
        e["param"].as_str().unwrap_or("").starts_with("steps[0]"),
        "{e}"
    );
    client.cancel().await.unwrap();
    let seen = peer.join().unwrap();
    assert!(
        seen.iter().all(|r| r.cmd != "scene.steps"),
        "sent: {:?}",
        seen.iter().map(|r| &r.cmd).collect::<Vec<_>>()
    );
}

/// An agent's set_theme_item on a Theme file with no scene open was refused (agent trials,
/// ui-theme-resource, runs 4 and 5): Godot's undo histories belong to open scenes, so the
/// edit goes outside any, and the dry run says so before anything is sent (`undoable:
/// false`, no scene). Red with the server's
/// no-scene branch in `authoring_plan` gone (PRECONDITION_FAILED).
#[tokio::test(flavor = "multi_thread")]
async fn a_theme_file_edit_with_no_scene_open_goes_outside_any_undo_history() {
    let project = demo_copy();
    let client = connect_with(project.path(), &[("GODOT_MCP_TOOLSETS", "theme")]).await;
    let d = wait_discovery(project.path());
    let peer = addon_peer_with(&d, |r| {
        Act::Answer(match r.cmd.as_str() {
            "editor.state" => json!({"active_scene": null, "open_scenes": []}),
            _ => json!({}),
        })
    });
    let v = call_ok(
        &client,
        "set_theme_item",
        json!({"path": "res://ui_theme.tres", "theme_type": "Button", "kind": "color",
               "name": "font_color", "value": "#ff0000", "dry_run": true}),
    )
    .await;
    assert_eq!(
        (&v["applied"], &v["persisted"], &v["undoable"]),
        (&json!(false), &json!(false), &json!(false)),
        "{v}"
    );
    assert!(v.get("scene").is_none(), "{v}");
    // A dry run writes nothing; its reason says what applying it does.
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("a dry run writes nothing; applied: ")
            && reason.contains("no undo history"),
        "{v}"
    );
    client.cancel().await.unwrap();
    let seen = peer.join().unwrap();
    assert!(
        seen.iter().all(|r| r.cmd == "editor.state"),
        "sent: {:?}",
        seen.iter().map(|r| &r.cmd).collect::<Vec<_>>()
    );
}

/// The refusal of an editor tool with no editor names the call that starts one (an agent
/// read "open the project in the Godot editor" and did not find start_editor: agent trial
/// 2, particles-smoke).
#[tokio::test(flavor = "multi_thread")]
async fn without_an_editor_the_refusal_names_start_editor() {
    let project = demo_copy();
    let client = connect(project.path()).await;
    let e = call_err(
        &client,
        "create_node",
        json!({"parent": ".", "type": "Node2D", "name": "X"}),
    )
    .await;
    assert_eq!(e["required"], "bridge_connected", "{e}");
    let hint = e["hint"].as_str().unwrap();
    assert!(
        hint.contains("start_editor") && hint.contains("\"enable\": [\"editor_process\"]"),
        "{e}"
    );
    client.cancel().await.unwrap();
}
