//! The safety model end to end: a real MCP client drives the real binary over stdio.
//! Every refusal is checked to change nothing on disk (the whole project tree is
//! compared byte for byte), and every effect is checked on disk.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use support::{call, call_err, call_ok, connect, connect_with};

pub const PROJECT_GODOT: &str = "; Engine configuration file.\n; It's best edited using the editor UI and not directly,\n; since the parameters that go here are not all obvious.\n\nconfig_version=5\n\n[application]\n\nconfig/name=\"Safety Fixture\"\nrun/main_scene=\"res://main.tscn\"\nconfig/features=PackedStringArray(\"4.4\", \"Forward Plus\")\n\n[autoload]\n\nGame=\"*res://scripts/game.gd\"\n\n[input]\n\njump={\n\"deadzone\": 0.5,\n\"events\": [Object(InputEventKey,\"resource_local_to_scene\":false,\"resource_name\":\"\",\"device\":-1,\"window_id\":0,\"alt_pressed\":false,\"shift_pressed\":false,\"ctrl_pressed\":false,\"meta_pressed\":false,\"pressed\":false,\"keycode\":0,\"physical_keycode\":32,\"key_label\":0,\"unicode\":32,\"location\":0,\"echo\":false,\"script\":null)\n]\n}\n\n[rendering]\n\nrenderer/rendering_method=\"gl_compatibility\"\n";

/// A small project: settings with an autoload and an input action, two scripts, a resource.
pub fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("scripts")).unwrap();
    std::fs::create_dir_all(p.join("resources")).unwrap();
    std::fs::write(p.join("project.godot"), PROJECT_GODOT).unwrap();
    std::fs::write(p.join("scripts/game.gd"), "extends Node\n").unwrap();
    std::fs::create_dir_all(p.join("art")).unwrap();
    std::fs::write(
        p.join("art/icon.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    )
    .unwrap();
    std::fs::write(p.join("scripts/player.gd"), "extends CharacterBody2D\n").unwrap();
    // A VisualShader as Godot 4.4.1 saved it (tests/fixtures/visual_shader).
    std::fs::write(
        p.join("resources/graph.tres"),
        include_str!("fixtures/visual_shader/godot_saved.tres"),
    )
    .unwrap();
    std::fs::write(p.join("scripts/player.gd.uid"), "uid://b3x2k\n").unwrap();
    std::fs::write(
        p.join("resources/stats.tres"),
        "[gd_resource type=\"Resource\" format=3]\n\n[resource]\nhp = 10\n",
    )
    .unwrap();
    // Not as Godot writes it (trailing blanks): canonicalize_resource changes it.
    std::fs::write(
        p.join("resources/messy.tres"),
        "[gd_resource type=\"Resource\" format=3]  \n\n[resource]\nhp = 10\n\n\n",
    )
    .unwrap();
    // Family C: a bus layout with one effect, a shader, a scene.
    std::fs::write(
        p.join("default_bus_layout.tres"),
        "[gd_resource type=\"AudioBusLayout\" load_steps=2 format=3]\n\n\
         [sub_resource type=\"AudioEffectReverb\" id=\"AudioEffectReverb_a1b2c\"]\n\n\
         [resource]\nbus/1/name = &\"SFX\"\nbus/1/solo = false\nbus/1/mute = false\n\
         bus/1/bypass_fx = false\nbus/1/volume_db = 0.0\nbus/1/send = &\"\"\n\
         bus/1/effect/0/effect = SubResource(\"AudioEffectReverb_a1b2c\")\n\
         bus/1/effect/0/enabled = true\n",
    )
    .unwrap();
    std::fs::write(p.join("scripts/a.gdshader"), "shader_type canvas_item;\n").unwrap();
    std::fs::write(
        p.join("resources/level.tscn"),
        "[gd_scene format=3]\n\n[node name=\"Root\" type=\"Node2D\"]\n\n\
         [node name=\"S\" type=\"Sprite2D\" parent=\".\"]\n",
    )
    .unwrap();
    dir
}

/// Every file under `root` with its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                out.insert(
                    format!("{}/", path.strip_prefix(root).unwrap().display()),
                    Vec::new(),
                );
                walk(root, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(root).unwrap().display().to_string(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A save's confirm refusal: it overwrites the file, it discards nothing unsaved.
const SAVE_MESSAGE: &str = "This call overwrites the scene's file on disk; undo cannot restore it. Set confirm=True to proceed.";
/// A file or settings write's confirm refusal: it discards nothing unsaved either.
const FILE_MESSAGE: &str = "This call changes project files (or settings) on disk, which undo does not restore. Set confirm=True to proceed.";

/// Valid arguments (without flags) for every tool that takes dry_run. The preview
/// test fails when a tool that takes dry_run has no entry here.
fn valid_args(tool: &str) -> Option<Value> {
    Some(match tool {
        "create_script" => json!({"path": "res://scripts/enemy.gd", "extends": "Node2D"}),
        "write_script" => json!({"path": "res://scripts/player.gd", "content": "extends Node2D\n"}),
        // The hash is of scripts/game.gd as fixture() writes it ("extends Node\n").
        "patch_script" => json!({"path": "res://scripts/game.gd",
            "patch": "@@ -1 +1 @@\n-extends Node\n+extends Node2D\n",
            "expected_sha256": "006c373933f8e49903c974a70b81864df932f34b72076a11916696e4577e804a"}),
        "create_resource" => {
            json!({"path": "res://resources/new.tres", "type": "Resource", "properties": {"speed": 1.5, "name": "x"}})
        }
        "delete_resource_file" => json!({"path": "res://scripts/player.gd"}),
        "import_asset" => json!({"source": "res://art/icon.svg", "dest": "res://art/copy.svg"}),
        "add_audio_bus" => json!({"name": "Music"}),
        "remove_audio_bus" => json!({"bus": "SFX"}),
        "set_audio_bus" => json!({"bus": "SFX", "mute": true}),
        "add_audio_bus_effect" => json!({"bus": "SFX", "effect": "AudioEffectDelay"}),
        "remove_audio_bus_effect" => json!({"bus": "SFX", "index": 0}),
        "create_shader" => json!({"path": "res://scripts/b.gdshader", "shader_type": "sky"}),
        "create_visual_shader" => {
            json!({"path": "res://resources/new_graph.tres", "mode": "canvas_item"})
        }
        "add_visual_shader_node" => json!({"path": "res://resources/graph.tres",
            "class": "VisualShaderNodeFloatConstant", "properties": {"constant": 0.25}}),
        "remove_visual_shader_node" => json!({"path": "res://resources/graph.tres", "id": 3}),
        "connect_visual_shader_nodes" => json!({"path": "res://resources/graph.tres",
            "from_node": 3, "from_port": 0, "to_node": 0, "to_port": 3}),
        "disconnect_visual_shader_nodes" => json!({"path": "res://resources/graph.tres",
            "from_node": 2, "from_port": 0, "to_node": 0, "to_port": 0}),
        "set_visual_shader_node_property" => json!({"path": "res://resources/graph.tres",
            "id": 3, "property": "constant", "value": 0.75}),
        // The hash is of scripts/a.gdshader as fixture() writes it.
        "edit_shader" => {
            json!({"path": "res://scripts/a.gdshader", "code": "shader_type spatial;\n",
            "expected_sha256": "6c80174ba8497932ea05d3eef2b0d0329ee599d826eaeefa40fea35fb0bc18db"})
        }
        "cross_scene_set_property" => {
            json!({"type": "Sprite2D", "property": "visible", "value": false})
        }
        "create_project_scaffold" => json!({"name": "Scaffolded"}),
        "set_setting" => json!({"name": "application/config/name", "value": "Renamed"}),
        "register_autoload" => json!({"name": "Music", "path": "res://scripts/player.gd"}),
        "unregister_autoload" => json!({"name": "Game"}),
        "add_input_action" => {
            json!({"name": "move_left", "events": [{"type": "key", "physical_keycode": 65}]})
        }
        "remove_input_action" => json!({"name": "jump"}),
        "canonicalize_resource" => json!({"path": "res://resources/messy.tres"}),
        "save_screenshot" => json!({"capture_id": "cap-0-1", "path": "res://shot.png"}),
        "clear_input_action_events" => json!({"action": "jump"}),
        "add_input_event" => {
            json!({"action": "jump", "event": {"type": "joypad_button", "button_index": 0}})
        }
        // Editor-plane tools (their preview needs an editor: see tests/editor_bridge.rs).
        "create_node" => json!({"parent": ".", "type": "Node2D", "name": "N"}),
        "rename_node" | "delete_node" | "detach_script" | "duplicate_node" => {
            json!({"node": "Player"})
        }
        "move_node" => json!({"node": "Player", "new_parent": "."}),
        "set_node_property" => json!({"node": "Player", "property": "visible", "value": false}),
        "apply_scene_batch" => {
            json!({"sets": [{"node": "Player", "property": "visible", "value": false}]})
        }
        "attach_script" => json!({"node": "Player", "script": "res://scripts/player.gd"}),
        "connect_signal" | "disconnect_signal" => {
            json!({"from": "Button", "signal": "pressed", "to": ".", "method": "go"})
        }
        "set_resource_property" => {
            json!({"path": "res://resources/stats.tres", "property": "hp", "value": 3})
        }
        "open_scene" => json!({"path": "res://scenes/main.tscn"}),
        "create_scene" => json!({"path": "res://scenes/new.tscn", "root_type": "Node2D"}),
        "save_scene" | "close_scene" | "reload_scene" | "editor_undo" | "editor_redo" => json!({}),
        "manage_toolsets" => json!({"disable": ["input_map"]}),
        "clear_tile_cells" => json!({"node": "Ground", "coords": [[0, 0]]}),
        "clear_gridmap_cells" => json!({"node": "Grid", "coords": [[0, 0, 0]]}),
        "remove_from_group" => json!({"node": "Player", "group": "g"}),
        "set_editable_children" => json!({"node": "Player", "editable": false}),
        "save_all_scenes" => json!({}),
        "remove_animation" => json!({"player": "AP", "animation": "walk"}),
        "remove_animation_track" => json!({"player": "AP", "animation": "walk", "track": 0}),
        "remove_animation_key" => {
            json!({"player": "AP", "animation": "walk", "track": 0, "time": 0.5})
        }
        "set_layer_names" => json!({"kind": "2d_physics", "names": {"1": "World"}}),
        "create_material" => json!({"path": "res://materials/m.tres", "albedo_color": [1, 0, 0]}),
        "move_file" => json!({"from": "res://scripts/player.gd", "to": "res://scripts/hero.gd"}),
        "duplicate_file" => {
            json!({"from": "res://resources/stats.tres", "to": "res://resources/copy.tres"})
        }
        "create_folder" => json!({"path": "res://levels/forest"}),
        "delete_folder" => json!({"path": "res://resources", "recursive": true}),
        "run_commands" => {
            json!({"commands": [{"tool": "create_script", "arguments": {"path": "res://a.gd", "confirm": true}}]})
        }
        _ => return None,
    })
}

fn with(args: &Value, extra: Value) -> Value {
    let mut a = args.clone();
    a.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    a
}

const ALL: &[(&str, &str)] = &[("GODOT_MCP_TOOLSETS", "all")];

/// Every toolset, and the stand-in godot for tools that launch one.
fn all_with_godot() -> [(&'static str, String); 2] {
    [
        ("GODOT_MCP_TOOLSETS", "all".to_string()),
        ("GODOT_BIN", support::standin().display().to_string()),
    ]
}

#[tokio::test]
async fn destructive_without_confirm_is_refused_with_the_exact_text_and_changes_nothing() {
    let project = fixture();
    let client = connect_with(project.path(), ALL).await;
    let before = snapshot(project.path());
    let tools = client.list_all_tools().await.unwrap();
    let mut checked = 0;
    // Both texts are met: the spec's (editor edits) and the file tools'.
    let mut by_text = std::collections::BTreeMap::<&str, usize>::new();
    for tool in tools
        .iter()
        .filter(|t| t.meta.as_ref().unwrap().0["safety_class"] == "destructive")
    {
        let args =
            valid_args(&tool.name).unwrap_or_else(|| panic!("no valid_args for {}", tool.name));
        for flags in [json!({}), json!({"confirm": false})] {
            let r = call(&client, &tool.name, with(&args, flags)).await;
            assert_eq!(r.is_error, Some(true), "{}", tool.name);
            let text = r.content[0].as_text().unwrap().text.clone();
            let err = &r.structured_content.as_ref().unwrap()["error"];
            assert_eq!(err["code"], "PRECONDITION_FAILED");
            assert_eq!(err["required"], "confirm");
            // A save discards nothing unsaved: its refusal says what it does (issue 40).
            if matches!(tool.name.as_ref(), "save_scene" | "save_all_scenes") {
                assert_eq!(
                    text.lines().next().unwrap(),
                    format!("PRECONDITION_FAILED: {SAVE_MESSAGE} [required=confirm]"),
                    "{}",
                    tool.name
                );
                assert_eq!(err["message"], SAVE_MESSAGE, "{}", tool.name);
                continue;
            }
            // The spec's text speaks of unsaved changes; a tool that writes files or
            // settings says what it does instead (agent run 7: five agents creating a
            // script, a bus layout or a setting read the spec's text as a wrong refusal).
            let hint = err["hint"].as_str().unwrap();
            let meta = &tool.meta.as_ref().unwrap().0;
            let message = if meta["effect_kind"] == "file" {
                FILE_MESSAGE
            } else {
                "This call discards unsaved changes. Set confirm=True to proceed."
            };
            assert_eq!(
                text.lines().next().unwrap(),
                format!("PRECONDITION_FAILED: {message} [required=confirm]"),
                "{}",
                tool.name
            );
            assert_eq!(err["message"], message, "{}", tool.name);
            *by_text.entry(message).or_default() += 1;
            assert_eq!(
                hint.starts_with("The journal records each file it changes."),
                meta["effect_kind"] == "file",
                "{}: {hint}",
                tool.name
            );
            assert!(hint.ends_with("call again with confirm=true."), "{hint}");
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} destructive tools");
    assert_eq!(by_text.len(), 2, "{by_text:?}");
    assert_eq!(
        snapshot(project.path()),
        before,
        "a refused call changed the project"
    );
    client.cancel().await.unwrap();
}

/// For every tool that takes dry_run: the preview changes nothing, and every field it
/// reports is what the real run then reports.
#[tokio::test]
async fn preview_and_real_run_agree_for_every_tool_that_takes_dry_run() {
    let probe = fixture();
    let client = connect_with(probe.path(), ALL).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    let mut checked = Vec::new();
    // Editor-plane tools preview through the add-on's persistence probe; with no editor
    // they fail bridge_connected. tests/editor_bridge.rs checks their agreement against
    // a protocol peer.
    for tool in tools.iter().filter(|t| {
        t.input_schema
            .get("properties")
            .unwrap()
            .get("dry_run")
            .is_some()
            && t.meta.as_ref().unwrap().0["effect_kind"] != "editor_runtime"
            // Its capture lives in a server's memory: tests/screenshots.rs checks it.
            && t.name != "save_screenshot"
            // A session's change: the previews report the open change and end nothing
            // (tools::change::tests::previews_report_the_open_change_and_end_nothing).
            && !["begin_change", "commit_change", "abandon_change"].contains(&t.name.as_ref())
    }) {
        let args = valid_args(&tool.name)
            .unwrap_or_else(|| panic!("no valid_args for {}: add one", tool.name));
        let project = fixture();
        let env = all_with_godot();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let client = connect_with(project.path(), &env).await;
        let confirm = if tool.meta.as_ref().unwrap().0["safety_class"] == "destructive" {
            json!({"confirm": true})
        } else {
            json!({})
        };
        let before = snapshot(project.path());
        let preview = call_ok(
            &client,
            &tool.name,
            with(&with(&args, confirm.clone()), json!({"dry_run": true})),
        )
        .await;
        assert_eq!(
            snapshot(project.path()),
            before,
            "{}: the dry run changed the project",
            tool.name
        );
        assert_eq!(preview["dry_run"], true, "{}", tool.name);
        let real = call_ok(&client, &tool.name, with(&args, confirm)).await;
        assert_eq!(real["dry_run"], false);
        if tool.meta.as_ref().unwrap().0["effect_kind"] == "none" {
            // manage_toolsets changes the server's tool surface, never the project.
            assert_eq!(snapshot(project.path()), before, "{}", tool.name);
        } else {
            assert_ne!(
                snapshot(project.path()),
                before,
                "{}: the real run changed nothing",
                tool.name
            );
        }
        // A dry run writes nothing and says so: where the real run is on disk, the
        // preview is persisted: false, its reason naming the real run's.
        let agrees = |k: &str, p: &Value, real: &Value| -> bool {
            match k {
                "persisted" if real["persisted"] == true => *p == json!(false),
                "reason" if real["persisted"] == true => {
                    *p == json!(format!(
                        "a dry run writes nothing; applied: {}",
                        real["reason"].as_str().unwrap_or_default()
                    ))
                }
                // manage_toolsets: a dry run changes no toolset (tests/e2e_stdio.rs
                // checks its `enabled` is the set now and `would_enable` the difference).
                "changed" if real["changed"] == true => *p == json!(false),
                "enabled" | "would_enable" if tool.name == "manage_toolsets" => true,
                _ => real[k] == *p,
            }
        };
        for (k, v) in preview.as_object().unwrap() {
            if ["dry_run", "applied", "confirm_required"].contains(&k.as_str()) {
                continue;
            }
            if k == "results" {
                // run_commands: each entry's preview agrees with its real result.
                for (p, r) in v
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(real["results"].as_array().unwrap())
                {
                    for (pk, pv) in p["result"].as_object().unwrap() {
                        if !["dry_run", "applied", "confirm_required"].contains(&pk.as_str()) {
                            assert!(
                                agrees(pk, pv, &r["result"]),
                                "{}: entry field {pk}: {pv} against {}",
                                tool.name,
                                r["result"]
                            );
                        }
                    }
                }
                continue;
            }
            assert!(
                agrees(k, v, &real),
                "{}: preview and real run disagree on {k}: {v} against {}",
                tool.name,
                real[k]
            );
        }
        if let Some(sha) = real.get("sha256_after").and_then(Value::as_str) {
            let path = real["path"]
                .as_str()
                .unwrap()
                .strip_prefix("res://")
                .unwrap();
            let bytes = std::fs::read(project.path().join(path)).unwrap();
            assert_eq!(
                hex_sha(&bytes),
                sha,
                "{}: sha256_after is not what is on disk",
                tool.name
            );
        }
        checked.push(tool.name.to_string());
        client.cancel().await.unwrap();
    }
    assert!(checked.len() >= 11, "{checked:?}");
}

fn hex_sha(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[tokio::test]
async fn project_godot_edits_keep_every_other_byte() {
    let project = fixture();
    let client = connect_with(project.path(), ALL).await;
    let read = || std::fs::read_to_string(project.path().join("project.godot")).unwrap();
    call_ok(
        &client,
        "set_setting",
        json!({"name": "application/config/name", "value": "A \"quoted\" name", "confirm": true}),
    )
    .await;
    assert_eq!(
        read(),
        PROJECT_GODOT.replace(
            "config/name=\"Safety Fixture\"",
            "config/name=\"A \\\"quoted\\\" name\""
        )
    );
    let project_text = read();
    call_ok(&client, "set_setting", json!({"name": "display/window/size/viewport_width", "value_text": "1280", "confirm": true})).await;
    assert_eq!(
        read(),
        format!("{project_text}\n[display]\n\nwindow/size/viewport_width=1280\n")
    );
    let e = call_err(
        &client,
        "set_setting",
        json!({"name": "a/b", "value_text": "Vector2(1, 2\n[x]", "confirm": true}),
    )
    .await;
    assert_eq!(e["param"], "value_text");
    // An autoload is set here too, its file checked (tests/files.rs sets one).
    let e = call_err(
        &client,
        "set_setting",
        json!({"name": "autoload/X", "value": "res://x.gd", "confirm": true}),
    )
    .await;
    assert_eq!(
        (&e["code"], &e["param"]),
        (&json!("RESOURCE_NOT_FOUND"), &json!("value")),
        "{e}"
    );
    // Autoloads.
    let before = read();
    call_ok(
        &client,
        "register_autoload",
        json!({"name": "Music", "path": "res://scripts/player.gd", "confirm": true}),
    )
    .await;
    assert_eq!(
        read(),
        before.replace(
            "Game=\"*res://scripts/game.gd\"\n",
            "Game=\"*res://scripts/game.gd\"\nMusic=\"*res://scripts/player.gd\"\n"
        )
    );
    call_ok(
        &client,
        "unregister_autoload",
        json!({"name": "Music", "confirm": true}),
    )
    .await;
    assert_eq!(read(), before);
    let e = call_err(
        &client,
        "unregister_autoload",
        json!({"name": "Nope", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    let e = call_err(
        &client,
        "register_autoload",
        json!({"name": "X", "path": "res://missing.gd", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    // Input map.
    call_ok(&client, "add_input_action", json!({"name": "fire", "deadzone": 0.2, "events": [{"type": "mouse_button", "button_index": 1}], "confirm": true})).await;
    call_ok(&client, "add_input_event", json!({"action": "fire", "event": {"type": "key", "physical_keycode": 70}, "confirm": true})).await;
    let text = read();
    let fire = text
        .find("fire={\n\"deadzone\": 0.2,\n\"events\": [Object(InputEventMouseButton,")
        .expect(&text);
    assert!(text[fire..].contains("\"button_index\":1,"));
    assert!(text[fire..].contains("\n, Object(InputEventKey,"));
    assert!(text[fire..].contains("\"physical_keycode\":70,"));
    call_ok(
        &client,
        "remove_input_action",
        json!({"name": "fire", "confirm": true}),
    )
    .await;
    assert_eq!(read(), before);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn writes_are_compare_and_swap() {
    let project = fixture();
    let client = connect(project.path()).await;
    let read = call_ok(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/player.gd"}),
    )
    .await;
    let sha = read["sha256"].as_str().unwrap().to_string();
    std::fs::write(
        project.path().join("scripts/player.gd"),
        "extends Node # edited by a human\n",
    )
    .unwrap();
    let e = call_err(&client, "write_script", json!({"path": "res://scripts/player.gd", "content": "x", "expected_sha256": sha, "confirm": true})).await;
    assert_eq!(e["code"], "STALE");
    assert_eq!(
        std::fs::read_to_string(project.path().join("scripts/player.gd")).unwrap(),
        "extends Node # edited by a human\n"
    );
    let now = call_ok(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/player.gd"}),
    )
    .await;
    let r = call_ok(&client, "write_script", json!({"path": "res://scripts/player.gd", "content": "x", "expected_sha256": now["sha256"], "confirm": true})).await;
    assert_eq!(r["sha256_before"], now["sha256"]);
    assert_eq!(r["persisted"], true);
    assert_eq!(r["undoable"], false);
    let e = call_err(
        &client,
        "create_script",
        json!({"path": "res://scripts/player.gd", "confirm": true}),
    )
    .await;
    assert_eq!(e["param"], "path");
    // delete takes Godot's sidecars with it.
    let r = call_ok(
        &client,
        "delete_resource_file",
        json!({"path": "res://scripts/player.gd", "confirm": true}),
    )
    .await;
    assert_eq!(r["sidecars"][0]["path"], "res://scripts/player.gd.uid");
    assert!(!project.path().join("scripts/player.gd").exists());
    assert!(!project.path().join("scripts/player.gd.uid").exists());
    let e = call_err(
        &client,
        "delete_resource_file",
        json!({"path": "res://project.godot", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn run_commands_refuses_bad_entries_before_running_any() {
    let project = fixture();
    // Everything the entries need, and input_map left out (the disabled-toolset case).
    let client = connect_with(project.path(), &[("GODOT_MCP_TOOLSETS", "all,-input_map")]).await;
    let before = snapshot(project.path());
    let ok_entry = json!({"tool": "create_script", "arguments": {"path": "res://scripts/new.gd", "confirm": true}});
    let cases = [
        (
            "destructive entry without confirm",
            json!({"tool": "delete_resource_file", "arguments": {"path": "res://resources/stats.tres"}}),
            "PRECONDITION_FAILED",
            "commands[1].arguments.confirm",
        ),
        (
            "entry from a disabled toolset",
            json!({"tool": "add_input_action", "arguments": {"name": "x", "confirm": true}}),
            "TOOL_DISABLED",
            "commands[1].tool",
        ),
        (
            "unknown command",
            json!({"tool": "cmd_format_disk", "arguments": {}}),
            "INVALID_PARAMS",
            "commands[1].tool",
        ),
        (
            "path escape",
            json!({"tool": "write_script", "arguments": {"path": "res://../outside.gd", "content": "x", "confirm": true}}),
            "PATH_REFUSED",
            "commands[1].arguments.path",
        ),
        (
            "absolute path",
            json!({"tool": "scripts_read", "arguments": {"path": "/etc/passwd"}}),
            "PATH_REFUSED",
            "commands[1].arguments.path",
        ),
        (
            "nested batch",
            json!({"tool": "run_commands", "arguments": {"commands": []}}),
            "INVALID_PARAMS",
            "commands[1].tool",
        ),
        (
            "bad entry arguments",
            json!({"tool": "create_script", "arguments": {"path": 7, "confirm": true}}),
            "INVALID_PARAMS",
            "commands[1].arguments.path",
        ),
    ];
    for (label, bad, code, param) in cases {
        let e = call_err(
            &client,
            "run_commands",
            json!({"commands": [ok_entry, bad]}),
        )
        .await;
        assert_eq!(e["code"], code, "{label}: {e}");
        assert_eq!(e["param"], param, "{label}: {e}");
        if code == "PRECONDITION_FAILED" {
            // delete_resource_file removes a file: the file tools' text.
            assert_eq!(e["required"], "confirm");
            assert_eq!(e["message"], FILE_MESSAGE);
        }
        assert_eq!(
            snapshot(project.path()),
            before,
            "{label}: something was applied"
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn run_commands_stops_at_a_failure_and_says_what_ran_and_what_was_skipped() {
    let project = fixture();
    let client = connect(project.path()).await;
    let entry =
        |p: &str| json!({"tool": "create_script", "arguments": {"path": p, "confirm": true}});
    let r = call(
        &client,
        "run_commands",
        json!({"commands": [entry("res://a.gd"), entry("res://a.gd"), entry("res://b.gd"), entry("res://c.gd")]}),
    )
    .await;
    assert_eq!(
        r.is_error,
        Some(true),
        "a half-done batch must not read as success"
    );
    let e = &r.structured_content.as_ref().unwrap()["error"];
    let report = &e["details"];
    assert_eq!(report["completed"], 1);
    assert_eq!(report["aborted_at"], 1);
    assert_eq!(report["skipped_count"], 2);
    assert_eq!(report["results"][0]["ok"], true);
    assert_eq!(report["results"][1]["ok"], false);
    assert_eq!(report["results"].as_array().unwrap().len(), 2);
    let hint = e["hint"].as_str().unwrap();
    assert!(
        hint.contains("not rolled back") && hint.contains("skipped"),
        "{hint}"
    );
    assert!(project.path().join("a.gd").exists());
    assert!(!project.path().join("b.gd").exists() && !project.path().join("c.gd").exists());
    // A batch preview, like a single call's, needs no confirm and says it will.
    let unconfirmed = json!({"tool": "delete_resource_file", "arguments": {"path": "res://resources/stats.tres"}});
    let r = call_ok(
        &client,
        "run_commands",
        json!({"commands": [unconfirmed.clone()], "dry_run": true}),
    )
    .await;
    assert_eq!(r["results"][0]["result"]["confirm_required"], true);
    assert!(project.path().join("resources/stats.tres").exists());
    let e = call_err(&client, "run_commands", json!({"commands": [unconfirmed]})).await;
    assert_eq!(e["required"], "confirm");
    assert!(project.path().join("resources/stats.tres").exists());
    // All good: the report says so.
    let r = call_ok(
        &client,
        "run_commands",
        json!({"commands": [entry("res://b.gd"), entry("res://c.gd")], "dry_run": true}),
    )
    .await;
    assert_eq!(r["aborted_at"], Value::Null);
    assert!(!project.path().join("b.gd").exists(), "dry run wrote");
    let r = call_ok(
        &client,
        "run_commands",
        json!({"commands": [entry("res://b.gd"), entry("res://c.gd")]}),
    )
    .await;
    assert_eq!(
        (r["completed"].clone(), r["skipped_count"].clone()),
        (json!(2), json!(0))
    );
    assert!(project.path().join("c.gd").exists());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_input_is_a_structured_error_naming_the_field() {
    let project = fixture();
    let client = connect(project.path()).await;
    let before = snapshot(project.path());
    let cases = [
        (
            "write_script",
            json!({"path": "res://scripts/player.gd", "content": 5, "confirm": true}),
            "content",
        ),
        (
            "write_script",
            json!({"path": "res://scripts/player.gd", "content": "x", "confirm": true, "force": true}),
            "force",
        ),
        (
            "write_script",
            json!({"path": "res://scripts/player.gd", "content": "x", "confirm": "true"}),
            "confirm",
        ),
        (
            "write_script",
            json!({"path": "res://scripts/player.gd", "content": "x", "dry_run": 1, "confirm": true}),
            "dry_run",
        ),
        (
            "write_script",
            json!({"content": "x", "confirm": true}),
            "path",
        ),
        (
            "set_setting",
            json!({"name": "application/config/name", "value": "x", "value_text": "1", "confirm": true}),
            "value",
        ),
        (
            "set_setting",
            json!({"name": "no_section", "value": 1, "confirm": true}),
            "name",
        ),
        (
            "create_resource",
            json!({"path": "res://r.tres", "type": "Resource", "properties": {"big": 18446744073709551615u64}, "confirm": true}),
            "properties.big",
        ),
        (
            "scripts_read",
            json!({"path": "res://scripts/player.gd", "confirm": true}),
            "confirm",
        ),
        (
            "run_commands",
            json!({"commands": [], "confirm": true}),
            "confirm",
        ),
        (
            "run_commands",
            json!({"commands": "create_script"}),
            "commands",
        ),
    ];
    for (tool, args, field) in cases {
        let e = call_err(&client, tool, args.clone()).await;
        assert_eq!(e["code"], "INVALID_PARAMS", "{tool}({args}): {e}");
        assert_eq!(e["param"], field, "{tool}({args}): {e}");
    }
    assert_eq!(snapshot(project.path()), before);
    client.cancel().await.unwrap();
}

/// Counts tools/list_changed notifications.
#[derive(Debug, Clone, Default)]
struct ListWatcher {
    changed: Arc<AtomicUsize>,
}

impl ClientHandler for ListWatcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("watcher", "0"),
        )
    }
}

/// With no operator configuration the core is listed and everything else is one
/// manage_toolsets call away; a change is announced with tools/list_changed, and a
/// disabled tool is refused, directly and inside run_commands.
#[tokio::test]
async fn toolsets_enable_and_disable_at_run_time() {
    let project = fixture();
    let mut cmd = support::server_tokio();
    cmd.arg("serve").arg("--project").arg(project.path());
    cmd.env("GODOT_MCP_STATE_DIR", project.path().join(".state"));
    // The real default: no ceiling named.
    cmd.env_remove("GODOT_MCP_TOOLSETS");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let watcher = ListWatcher::default();
    let changed = watcher.changed.clone();
    let client: RunningService<RoleClient, ListWatcher> = watcher.serve(transport).await.unwrap();
    let names = |tools: Vec<rmcp::model::Tool>| {
        tools
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };
    let listed = names(client.list_all_tools().await.unwrap());
    for core in [
        "scripts_read",
        "list_toolsets",
        "manage_toolsets",
        "create_nodes",
        "write_script",
        "set_setting",
    ] {
        assert!(listed.contains(&core.to_string()), "{core} is core");
    }
    for off in [
        "add_input_action",
        "create_script",
        "editor_undo",
        "run_commands",
    ] {
        assert!(!listed.contains(&off.to_string()), "{off} is not core");
    }
    let call_raw = |name: &str, args: Value| {
        let args = args.as_object().unwrap().clone();
        client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
    };
    let r = call_raw("add_input_action", json!({"name": "x", "confirm": true}))
        .await
        .unwrap();
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["code"], "TOOL_DISABLED");
    assert!(
        e["hint"].as_str().unwrap().contains("manage_toolsets"),
        "{e}"
    );
    // A dry run says what would change and changes nothing (no notification).
    let r = call_raw(
        "manage_toolsets",
        json!({"enable": ["input_map"], "dry_run": true}),
    )
    .await
    .unwrap();
    let preview = r.structured_content.unwrap();
    assert_eq!(preview["applied"], false, "{preview}");
    assert_eq!(preview["changed"], false, "{preview}");
    assert_eq!(preview["would_enable"], json!(["input_map"]), "{preview}");
    assert!(!names(client.list_all_tools().await.unwrap()).contains(&"add_input_action".into()));
    let r = call_raw(
        "manage_toolsets",
        json!({"enable": ["input_map", "batch"], "disable": ["script_read"]}),
    )
    .await
    .unwrap();
    assert_eq!(r.structured_content.unwrap()["changed"], true);
    let listed = names(client.list_all_tools().await.unwrap());
    assert!(listed.contains(&"add_input_action".to_string()));
    assert!(!listed.contains(&"scripts_read".to_string()));
    let r = call_raw("scripts_read", json!({"path": "res://scripts/game.gd"}))
        .await
        .unwrap();
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["code"], "TOOL_DISABLED");
    assert_eq!(e["required"], "script_read");
    // Inside a batch too.
    let r = call_raw("run_commands", json!({"commands": [{"tool": "scripts_read", "arguments": {"path": "res://scripts/game.gd"}}]})).await.unwrap();
    assert_eq!(
        r.structured_content.unwrap()["error"]["code"],
        "TOOL_DISABLED"
    );
    let r = call_raw("manage_toolsets", json!({"disable": ["toolsets"]}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    for _ in 0..50 {
        if changed.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        changed.load(Ordering::SeqCst),
        1,
        "one tools/list_changed for the one change"
    );
    client.cancel().await.unwrap();
}

/// A named list is the ceiling and the start set: outside it a toolset cannot be
/// enabled, and its tools are refused with the ceiling named, in run_commands too.
#[tokio::test]
async fn toolsets_flag_and_env_set_the_ceiling() {
    let project = fixture();
    let client = connect_with(
        project.path(),
        &[("GODOT_MCP_TOOLSETS", "project,input_map,batch")],
    )
    .await;
    let listed: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        listed.contains(&"add_input_action".to_string())
            && listed.contains(&"list_files".to_string())
    );
    assert!(!listed.contains(&"create_script".to_string()));
    assert!(
        listed.contains(&"manage_toolsets".to_string())
            && listed.contains(&"list_toolsets".to_string()),
        "toolsets is always on"
    );
    let e = call_err(
        &client,
        "manage_toolsets",
        json!({"enable": ["script_edit"]}),
    )
    .await;
    assert_eq!(e["code"], "TOOL_DISABLED", "{e}");
    assert_eq!(e["required"], "script_edit", "{e}");
    let ceiling = "GODOT_MCP_TOOLSETS=toolsets,project,input_map,batch";
    assert!(e["message"].as_str().unwrap().contains(ceiling), "{e}");
    let e = call_err(
        &client,
        "create_script",
        json!({"path": "res://a.gd", "content": "", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "TOOL_DISABLED", "{e}");
    assert!(e["message"].as_str().unwrap().contains(ceiling), "{e}");
    let e = call_err(
        &client,
        "run_commands",
        json!({"commands": [{"tool": "create_script", "arguments": {"path": "res://a.gd", "content": "", "confirm": true}}]}),
    )
    .await;
    assert_eq!(e["code"], "TOOL_DISABLED", "{e}");
    assert_eq!(e["param"], "commands[0].tool", "{e}");
    assert!(e["message"].as_str().unwrap().contains(ceiling), "{e}");
    assert!(!project.path().join("a.gd").exists());
    // list_toolsets says the same.
    let all = call_ok(&client, "list_toolsets", json!({})).await;
    let find = |name: &str| {
        all["toolsets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    let script_edit = find("script_edit");
    assert_eq!(script_edit["allowed"], false);
    assert_eq!(script_edit["enabled"], false);
    let input_map = find("input_map");
    assert_eq!(input_map["allowed"], true);
    assert_eq!(input_map["enabled"], true);
    assert_eq!(input_map["tools"].as_array().unwrap().len(), 5);
    client.cancel().await.unwrap();
}
