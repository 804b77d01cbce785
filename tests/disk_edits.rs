//! Issue #12, family C end to end through the real server and a real MCP client: the
//! audio bus layout edits, shaders, cross-scene edits and the project scaffold. The
//! file-plane tools run without Godot (real files, journal rows, CAS refusals, dry runs
//! that write nothing); the real_godot_ tests hand what they wrote to the engine.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect, normalize_sub_ids, sha256_hex};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");

/// Build, through the tools, the layout tests/fixtures/readfam/make.gd built through
/// Godot's AudioServer: Master at -1.5 dB; SFX muted at -6 dB with a Reverb and a
/// disabled Delay; Music solo, bypassing effects, sending to SFX.
async fn build_fixture_layout(client: &support::Client) {
    let c = json!({"confirm": true});
    let with = |extra: Value| {
        let mut a = c.clone();
        a.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        a
    };
    call_ok(client, "add_audio_bus", with(json!({"name": "SFX"}))).await;
    call_ok(
        client,
        "set_audio_bus",
        with(json!({"bus": "SFX", "volume_db": -6.0, "mute": true})),
    )
    .await;
    call_ok(
        client,
        "add_audio_bus_effect",
        with(json!({"bus": "SFX", "effect": "AudioEffectReverb"})),
    )
    .await;
    call_ok(
        client,
        "add_audio_bus_effect",
        with(json!({"bus": "SFX", "effect": "AudioEffectDelay", "enabled": false})),
    )
    .await;
    call_ok(
        client,
        "add_audio_bus",
        with(json!({"name": "Music", "send": "SFX", "solo": true, "bypass_fx": true})),
    )
    .await;
    call_ok(
        client,
        "set_audio_bus",
        with(json!({"bus": "Master", "volume_db": -1.5})),
    )
    .await;
}

#[tokio::test]
async fn audio_bus_tools_write_the_file_godot_writes_through_the_journal() {
    let project = support::tiny_project("audio");
    let layout = project.path().join("default_bus_layout.tres");
    let client = connect(project.path()).await;

    // A dry run plans against Godot's built-in layout and writes nothing.
    let dry = call_ok(
        &client,
        "add_audio_bus",
        json!({"name": "SFX", "dry_run": true}),
    )
    .await;
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(dry["action"], "create", "{dry}");
    assert_eq!(dry["buses"][1]["name"], "SFX", "{dry}");
    assert!(!layout.exists(), "a dry run wrote the layout");
    // Destructive: without confirm nothing is written.
    let e = call_err(&client, "add_audio_bus", json!({"name": "SFX"})).await;
    assert!(e["message"].as_str().unwrap().contains("confirm"), "{e}");
    assert!(!layout.exists());

    build_fixture_layout(&client).await;
    let written = std::fs::read_to_string(&layout).unwrap();
    let godot =
        std::fs::read_to_string(Path::new(FIXTURES).join("readfam/default_bus_layout.tres"))
            .unwrap();
    assert_eq!(
        normalize_sub_ids(&written),
        normalize_sub_ids(&godot),
        "the tools' layout is not the file Godot wrote for the same buses"
    );

    // The read tool sees what the last write reported.
    let read = call_ok(&client, "get_audio_bus_layout", json!({})).await;
    let names: Vec<&str> = read["buses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Master", "SFX", "Music"], "{read}");

    // Every write is a committed journal transaction on the layout file.
    let txns = call_ok(&client, "list_transactions", json!({})).await;
    let rows: Vec<&Value> = txns["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tool_family"] == "audio" && r["path"] == "default_bus_layout.tres")
        .collect();
    assert_eq!(rows.len(), 6, "{txns}");
    assert!(rows.iter().all(|r| r["status"] == "committed"), "{txns}");

    // CAS: a stale expected_sha256 is refused and the file is untouched.
    let before = std::fs::read(&layout).unwrap();
    let e = call_err(
        &client,
        "set_audio_bus",
        json!({"bus": "SFX", "mute": false, "confirm": true,
               "expected_sha256": "0".repeat(64)}),
    )
    .await;
    assert_eq!(e["code"], "STALE", "{e}");
    assert_eq!(std::fs::read(&layout).unwrap(), before);
    // The right one applies.
    let ok = call_ok(
        &client,
        "set_audio_bus",
        json!({"bus": "SFX", "mute": false, "confirm": true,
               "expected_sha256": sha256_hex(&before)}),
    )
    .await;
    assert_eq!(
        ok["change"]["changed"]["mute"],
        json!([true, false]),
        "{ok}"
    );

    // Bad input changes nothing: Master cannot go, a send must point to an earlier bus,
    // an effect class must exist, an effect index must.
    let before = std::fs::read(&layout).unwrap();
    for (tool, args, param) in [
        ("remove_audio_bus", json!({"bus": "Master"}), "bus"),
        ("remove_audio_bus", json!({"bus": "Nope"}), "bus"),
        (
            "set_audio_bus",
            json!({"bus": "SFX", "send": "Music"}),
            "send",
        ),
        ("add_audio_bus", json!({"name": "SFX"}), "name"),
        (
            "add_audio_bus_effect",
            json!({"bus": "SFX", "effect": "Node2D"}),
            "effect",
        ),
        (
            "remove_audio_bus_effect",
            json!({"bus": "Music", "index": 0}),
            "index",
        ),
    ] {
        let mut args = args;
        args["confirm"] = json!(true);
        let e = call_err(&client, tool, args).await;
        assert_eq!(e["param"], param, "{tool}: {e}");
    }
    assert_eq!(std::fs::read(&layout).unwrap(), before);

    // Removing an effect drops its sub-resource; removing a bus reports who sent to it.
    let r = call_ok(
        &client,
        "remove_audio_bus_effect",
        json!({"bus": "SFX", "index": 0, "confirm": true}),
    )
    .await;
    assert_eq!(r["change"]["effect"], "AudioEffectReverb", "{r}");
    let text = std::fs::read_to_string(&layout).unwrap();
    assert!(
        !text.contains("AudioEffectReverb") && text.contains("load_steps=2"),
        "{text}"
    );
    let r = call_ok(
        &client,
        "remove_audio_bus",
        json!({"bus": "SFX", "confirm": true}),
    )
    .await;
    assert_eq!(r["change"]["sends_now_to_master"], json!(["Music"]), "{r}");
    assert_eq!(r["buses"].as_array().unwrap().len(), 2, "{r}");
    let text = std::fs::read_to_string(&layout).unwrap();
    assert!(
        !text.contains("sub_resource") && text.contains("bus/1/name = &\"Music\""),
        "{text}"
    );
    client.cancel().await.unwrap();
}

/// What Godot makes of two layout files: the buses AudioServer has after loading each,
/// the properties of the effects of the second, and the file ResourceSaver writes when
/// it saves the first one again.
const LOAD_LAYOUT_GD: &str = r#"extends SceneTree

func _buses():
	var buses = []
	for i in AudioServer.bus_count:
		var effects = []
		for j in AudioServer.get_bus_effect_count(i):
			var fx = AudioServer.get_bus_effect(i, j)
			var props = {}
			for p in fx.get_property_list():
				if p.usage & PROPERTY_USAGE_STORAGE and p.name != "resource_local_to_scene" and p.name != "resource_name" and p.name != "script":
					props[p.name] = fx.get(p.name)
			effects.append({"class": fx.get_class(), "properties": props,
				"enabled": AudioServer.is_bus_effect_enabled(i, j)})
		buses.append({"name": AudioServer.get_bus_name(i),
			"volume_db": AudioServer.get_bus_volume_db(i),
			"mute": AudioServer.is_bus_mute(i), "solo": AudioServer.is_bus_solo(i),
			"bypass_fx": AudioServer.is_bus_bypassing_effects(i),
			"send": String(AudioServer.get_bus_send(i)), "effects": effects})
	return buses

func _init():
	var layout = load("res://default_bus_layout.tres")
	AudioServer.set_bus_layout(layout)
	print("BUSES " + JSON.stringify(_buses()))
	ResourceSaver.save(layout, "res://resaved.tres")
	AudioServer.set_bus_layout(load("res://audio/fx_layout.tres"))
	print("FX " + JSON.stringify(_buses()))
	quit()
"#;

/// The engine's buses (a line of LOAD_LAYOUT_GD's output) equal the read-back.
fn assert_same_buses(engine: &Value, read: &Value) {
    let engine = engine.as_array().unwrap();
    let ours = read["buses"].as_array().unwrap();
    assert_eq!(engine.len(), ours.len(), "{engine:?}\n{read}");
    for (e, o) in engine.iter().zip(ours) {
        for f in ["name", "mute", "solo", "bypass_fx", "send"] {
            assert_eq!(e[f], o[f], "{f}: engine {e} vs read-back {o}");
        }
        assert_eq!(e["volume_db"].as_f64(), o["volume_db"].as_f64(), "{e} {o}");
        let classes: Vec<(&Value, &Value)> = o["effects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (&x["effect"]["type"], &x["enabled"]))
            .collect();
        let engine_classes: Vec<(&Value, &Value)> = e["effects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (&x["class"], &x["enabled"]))
            .collect();
        assert_eq!(classes, engine_classes, "{e} {o}");
    }
}

#[tokio::test]
async fn real_godot_loads_the_bus_layout_the_tools_wrote() {
    let Some(godot) = support::godot_bin("the engine loads the written bus layout") else {
        return;
    };
    let project = support::tiny_project("audio_real");
    let client = connect(project.path()).await;
    build_fixture_layout(&client).await;
    let read = call_ok(&client, "get_audio_bus_layout", json!({})).await;
    // A second layout, at a path of its own, with an effect's properties set.
    let fx = json!({"path": "res://audio/fx_layout.tres", "confirm": true});
    let with = |extra: Value| {
        let mut a = fx.clone();
        a.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        a
    };
    call_ok(
        &client,
        "add_audio_bus",
        with(json!({"name": "Voice", "volume_db": 3.25})),
    )
    .await;
    call_ok(
        &client,
        "add_audio_bus_effect",
        with(json!({"bus": "Voice", "effect": "AudioEffectCompressor",
                    "properties": {"threshold": -12.5, "ratio": 8.0, "mix": 0.75}})),
    )
    .await;
    call_ok(
        &client,
        "add_audio_bus_effect",
        with(
            json!({"bus": "Voice", "effect": "AudioEffectAmplify", "at_index": 0,
                    "enabled": false, "properties": {"volume_db": -3.0}}),
        ),
    )
    .await;
    let fx_read = call_ok(
        &client,
        "get_audio_bus_layout",
        json!({"path": "res://audio/fx_layout.tres"}),
    )
    .await;
    client.cancel().await.unwrap();

    std::fs::write(project.path().join("load_layout.gd"), LOAD_LAYOUT_GD).unwrap();
    let log = support::run_godot(
        &godot,
        project.path(),
        &["--script", "res://load_layout.gd"],
    );
    let line = |prefix: &str| -> Value {
        let l = log
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line:\n{log}"));
        serde_json::from_str(l).unwrap()
    };
    assert_same_buses(&line("BUSES "), &read);
    let engine_fx = line("FX ");
    assert_same_buses(&engine_fx, &fx_read);
    let voice = &engine_fx[1]["effects"];
    assert_eq!(voice[0]["properties"]["volume_db"], -3.0, "{voice}");
    let comp = &voice[1]["properties"];
    assert_eq!(
        (&comp["threshold"], &comp["ratio"], &comp["mix"]),
        (&json!(-12.5), &json!(8.0), &json!(0.75)),
        "{voice}"
    );
    // Godot saving the layout it loaded writes our bytes again (it adds a uid to a file
    // that had none, and keeps the sub-resource ids it read).
    let ours = support::engine_neutral(
        &std::fs::read_to_string(project.path().join("default_bus_layout.tres")).unwrap(),
    );
    let resaved = support::engine_neutral(
        &std::fs::read_to_string(project.path().join("resaved.tres")).unwrap(),
    );
    let without_uid = match resaved.find(" uid=\"") {
        Some(start) => {
            let end = start + 6 + resaved[start + 6..].find('"').unwrap() + 1;
            format!("{}{}", &resaved[..start], &resaved[end..])
        }
        None => resaved.clone(),
    };
    assert_eq!(without_uid, ours, "Godot re-saved the layout differently");
}

const SHADER_FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/godot-4.4.1/shader_validate"
);

#[tokio::test]
async fn shader_files_are_written_through_the_journal_with_cas() {
    let project = support::tiny_project("shaders");
    let file = project.path().join("fx/glow.gdshader");
    // No engine: shader_validate names the precondition instead of guessing.
    let client =
        support::connect_with(project.path(), &[("GODOT_BIN", "/nonexistent/godot")]).await;

    let dry = call_ok(
        &client,
        "create_shader",
        json!({"path": "res://fx/glow.gdshader", "shader_type": "spatial", "dry_run": true}),
    )
    .await;
    assert_eq!(dry["action"], "create", "{dry}");
    assert!(!file.exists(), "a dry run wrote the shader");
    let made = call_ok(
        &client,
        "create_shader",
        json!({"path": "res://fx/glow.gdshader", "shader_type": "spatial", "confirm": true}),
    )
    .await;
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("shader_type spatial;\n"), "{text}");
    assert_eq!(made["sha256_after"], sha256_hex(text.as_bytes()), "{made}");
    // An existing file is never overwritten by create_shader.
    let e = call_err(
        &client,
        "create_shader",
        json!({"path": "res://fx/glow.gdshader", "confirm": true}),
    )
    .await;
    assert_eq!(e["param"], "path", "{e}");

    // edit_shader: a stale sha256 changes nothing; the current one writes.
    let code = "shader_type spatial;\n\nuniform vec4 tint : source_color;\n";
    let e = call_err(
        &client,
        "edit_shader",
        json!({"path": "res://fx/glow.gdshader", "code": code, "confirm": true,
               "expected_sha256": "f".repeat(64)}),
    )
    .await;
    assert_eq!(e["code"], "STALE", "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let edited = call_ok(
        &client,
        "edit_shader",
        json!({"path": "res://fx/glow.gdshader", "code": code, "confirm": true,
               "expected_sha256": sha256_hex(text.as_bytes())}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), code);
    let txns = call_ok(&client, "list_transactions", json!({})).await;
    let row = support::transaction_row(&txns, edited["transaction_id"].as_str().unwrap());
    assert_eq!(row["operation"], "edit_shader", "{row}");
    assert_eq!(row["status"], "committed", "{row}");
    // Not a shader path: refused before anything.
    let e = call_err(
        &client,
        "edit_shader",
        json!({"path": "res://project.godot", "code": "x", "confirm": true,
               "expected_sha256": "f".repeat(64)}),
    )
    .await;
    assert_eq!(e["param"], "path", "{e}");

    let e = call_err(
        &client,
        "shader_validate",
        json!({"path": "res://fx/glow.gdshader"}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "godot_binary", "{e}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn real_godot_shader_validate_reports_the_engines_errors_with_lines() {
    let Some(_godot) = support::godot_bin("shader_validate compiles with the engine") else {
        return;
    };
    let project = support::tiny_project("shader_real");
    for f in ["bad", "syntax", "good"] {
        std::fs::copy(
            Path::new(SHADER_FIXTURES).join(format!("{f}.gdshader")),
            project.path().join(format!("{f}.gdshader")),
        )
        .unwrap();
    }
    std::fs::create_dir_all(project.path().join("inc")).unwrap();
    std::fs::write(
        project.path().join("inc/tint.gdshaderinc"),
        "uniform vec4 tint : source_color = vec4(1.0);\n",
    )
    .unwrap();
    let before = support::files_under(project.path(), &[]);
    let client = connect(project.path()).await;

    let bad = call_ok(
        &client,
        "shader_validate",
        json!({"path": "res://bad.gdshader"}),
    )
    .await;
    assert_eq!(bad["ok"], false, "{bad}");
    assert_eq!(
        bad["errors"],
        json!([{"line": 7, "message": "Unknown identifier in expression: 'undefined_thing'."}]),
        "{bad}"
    );
    let syntax = call_ok(
        &client,
        "shader_validate",
        json!({"path": "res://syntax.gdshader"}),
    )
    .await;
    assert_eq!(syntax["errors"][0]["line"], 8, "{syntax}");
    let good = call_ok(
        &client,
        "shader_validate",
        json!({"path": "res://good.gdshader"}),
    )
    .await;
    assert_eq!(good["ok"], true, "{good}");
    let names: Vec<&str> = good["uniforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["speed", "tint", "noise"], "{good}");
    // Code with an include from the project: the include is found, its uniform counted.
    let inc = call_ok(
        &client,
        "shader_validate",
        json!({"code": "shader_type canvas_item;\n#include \"res://inc/tint.gdshaderinc\"\n\nvoid fragment() {\n\tCOLOR = tint;\n}\n"}),
    )
    .await;
    assert_eq!(inc["ok"], true, "{inc}");
    assert_eq!(inc["uniforms"][0]["name"], "tint", "{inc}");
    // Every create_shader template compiles.
    for t in ["canvas_item", "spatial", "particles", "sky", "fog"] {
        let path = format!("res://t_{t}.gdshader");
        call_ok(
            &client,
            "create_shader",
            json!({"path": path, "shader_type": t, "confirm": true}),
        )
        .await;
        let v = call_ok(&client, "shader_validate", json!({"path": path})).await;
        assert_eq!(v["ok"], true, "template {t}: {v}");
    }
    client.cancel().await.unwrap();
    // The checks ran in a private project: nothing but the created shaders is new.
    let after = support::files_under(project.path(), &[]);
    let new: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    assert!(new.iter().all(|k| k.starts_with("t_")), "{new:?}");
}

#[tokio::test]
async fn cross_scene_edits_are_planned_whole_and_written_per_file() {
    let project = support::demo_copy();
    let scenes = project.path().join("scenes");
    let client = connect(project.path()).await;

    let found = call_ok(
        &client,
        "find_nodes_by_type",
        json!({"type": "Sprite2D", "limit": 2}),
    )
    .await;
    assert_eq!(found["total"], 3, "{found}");
    assert_eq!(found["returned"], 2, "{found}");
    assert_eq!(found["next_offset"], 2, "{found}");
    assert_eq!(
        found["nodes"][0],
        json!({"scene": "res://scenes/main_2d.tscn", "path": "Background", "name": "Background"}),
        "{found}"
    );
    let rest = call_ok(
        &client,
        "find_nodes_by_type",
        json!({"type": "Sprite2D", "offset": 2}),
    )
    .await;
    assert_eq!(
        rest["nodes"][0]["scene"], "res://scenes/player.tscn",
        "{rest}"
    );
    assert_eq!(rest["next_offset"], Value::Null, "{rest}");

    let before = support::files_under(project.path(), &[".godot"]);
    let args = json!({"type": "Sprite2D", "property": "modulate",
                      "value_text": "Color(1, 0, 0, 1)"});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let plan = call_ok(&client, "cross_scene_set_property", dry).await;
    assert_eq!(plan["files"].as_array().unwrap().len(), 2, "{plan}");
    assert_eq!(
        plan["unmatched"],
        json!(["res://scenes/level_3d.tscn"]),
        "{plan}"
    );
    assert_eq!(
        support::files_under(project.path(), &[".godot"]),
        before,
        "a dry run wrote"
    );

    // One stale scene: nothing is written anywhere.
    let mut stale = args.clone();
    stale["confirm"] = json!(true);
    stale["expected_sha256"] = json!({"res://scenes/player.tscn": "0".repeat(64)});
    let e = call_err(&client, "cross_scene_set_property", stale).await;
    assert_eq!(e["code"], "STALE", "{e}");
    assert_eq!(support::files_under(project.path(), &[".godot"]), before);

    let mut real = args.clone();
    real["confirm"] = json!(true);
    let done = call_ok(&client, "cross_scene_set_property", real).await;
    assert_eq!(
        done["transaction_ids"].as_array().unwrap().len(),
        2,
        "{done}"
    );
    let main_before = String::from_utf8(before["scenes/main_2d.tscn"].clone()).unwrap();
    let main_after = std::fs::read_to_string(scenes.join("main_2d.tscn")).unwrap();
    // Every other byte kept: the diff is each Sprite2D's stored modulate, replaced.
    let diff = similar::TextDiff::from_lines(&main_before, &main_after);
    let changed: Vec<(String, String)> = diff
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .map(|c| (format!("{:?}", c.tag()), c.value().trim_end().to_string()))
        .collect();
    let change = |tag: &str, line: &str| (tag.to_string(), line.to_string());
    assert_eq!(
        changed,
        [
            change("Delete", "modulate = Color(0.4, 0.5, 0.6, 1)"),
            change("Insert", "modulate = Color(1, 0, 0, 1)"),
            change("Delete", "modulate = Color(1, 0.3, 0.3, 1)"),
            change("Insert", "modulate = Color(1, 0, 0, 1)"),
        ],
        "{main_after}"
    );
    assert_eq!(
        done["files"][0]["sha256_after"],
        sha256_hex(main_after.as_bytes()),
        "{done}"
    );
    let after = support::files_under(project.path(), &[".godot"]);
    assert_eq!(
        after["scenes/level_3d.tscn"],
        before["scenes/level_3d.tscn"]
    );
    let txns = call_ok(&client, "list_transactions", json!({})).await;
    for id in done["transaction_ids"].as_array().unwrap() {
        let row = support::transaction_row(&txns, id.as_str().unwrap());
        assert_eq!(row["status"], "committed", "{row}");
        assert_eq!(row["operation"], "cross_scene_set_property", "{row}");
    }
    // A node path: the one node, where it exists.
    let r = call_ok(
        &client,
        "cross_scene_set_property",
        json!({"node": "Sprite2D", "property": "visible", "value": false, "confirm": true}),
    )
    .await;
    assert_eq!(r["files"][0]["path"], "res://scenes/player.tscn", "{r}");
    // Bad input changes nothing.
    let now = support::files_under(project.path(), &[".godot"]);
    for (bad, param) in [
        (json!({"type": "Sprite2D", "property": "modulate"}), "value"),
        (json!({"property": "x", "value": 1}), "node"),
        (json!({"type": "Nope", "property": "x", "value": 1}), "type"),
        (
            json!({"type": "Sprite2D", "property": "a b", "value": 1}),
            "property",
        ),
        (
            json!({"type": "Sprite2D", "property": "x", "value_text": "Color(1,"}),
            "value_text",
        ),
        (
            json!({"scenes": ["res://icon.svg"], "type": "Sprite2D", "property": "x", "value": 1}),
            "scenes[0]",
        ),
    ] {
        let mut bad = bad;
        bad["confirm"] = json!(true);
        let e = call_err(&client, "cross_scene_set_property", bad.clone()).await;
        assert_eq!(e["param"], param, "{bad}: {e}");
    }
    assert_eq!(support::files_under(project.path(), &[".godot"]), now);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn scaffold_lays_out_a_project_and_refuses_to_overwrite() {
    let project = support::tiny_project("blank");
    let root = project.path();
    let client = connect(root).await;
    let before = support::files_under(root, &[".godot"]);
    let args = json!({"name": "My Game", "main_type": "Node3D", "renderer": "gl_compatibility"});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let plan = call_ok(&client, "create_project_scaffold", dry).await;
    assert_eq!(plan["files"].as_array().unwrap().len(), 5, "{plan}");
    assert_eq!(
        support::files_under(root, &[".godot"]),
        before,
        "a dry run wrote"
    );

    let mut real = args.clone();
    real["confirm"] = json!(true);
    let done = call_ok(&client, "create_project_scaffold", real.clone()).await;
    assert_eq!(
        done["transaction_ids"].as_array().unwrap().len(),
        5,
        "{done}"
    );
    let pg = std::fs::read_to_string(root.join("project.godot")).unwrap();
    for line in [
        "config_version=5",
        "config/name=\"My Game\"",
        "run/main_scene=\"res://scenes/main.tscn\"",
        "config/features=PackedStringArray(\"4.4\", \"GL Compatibility\")",
        "renderer/rendering_method=\"gl_compatibility\"",
    ] {
        assert!(pg.lines().any(|l| l == line), "{line} missing:\n{pg}");
    }
    let scene = std::fs::read_to_string(root.join("scenes/main.tscn")).unwrap();
    assert!(
        scene.contains("[node name=\"Main\" type=\"Node3D\"]"),
        "{scene}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".gitignore")).unwrap(),
        "# Godot 4+ specific ignores\n.godot/\n/android/\n"
    );
    assert!(root.join(".gitattributes").is_file());
    assert!(root.join("scripts/main.gd").is_file());
    // Again: the files exist, so nothing is written without overwrite.
    let now = support::files_under(root, &[".godot"]);
    let e = call_err(&client, "create_project_scaffold", real.clone()).await;
    assert_eq!(e["param"], "overwrite", "{e}");
    assert_eq!(support::files_under(root, &[".godot"]), now);
    // Other hidden files stay unwritable: only the two version-control files are allowed.
    let e = call_err(
        &client,
        "create_script",
        json!({"path": "res://.hidden.gd", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED", "{e}");
    client.cancel().await.unwrap();
}

const CHECK_SCAFFOLD_GD: &str = r#"extends SceneTree

func _init():
	var main = ProjectSettings.get_setting("application/run/main_scene")
	var node = load(main).instantiate()
	var sprite = load("res://scenes/player.tscn").instantiate().get_node("Sprite2D")
	print("SCAFFOLD " + JSON.stringify({"name": ProjectSettings.get_setting("application/config/name"),
		"main": main, "root": node.get_class(), "script": node.get_script().resource_path,
		"sprite_modulate": str(sprite.modulate), "sprite_visible": sprite.visible}))
	quit()
"#;

#[tokio::test]
async fn real_godot_runs_the_scaffold_and_loads_the_cross_scene_edit() {
    let Some(godot) = support::godot_bin("the engine loads a scaffold and an edited scene") else {
        return;
    };
    let project = support::tiny_project("scaffold_real");
    let root = project.path();
    let client = connect(root).await;
    call_ok(
        &client,
        "create_project_scaffold",
        json!({"name": "Scaffolded", "confirm": true}),
    )
    .await;
    // A scene the cross-scene edit changes, the way the demo's player.tscn is written.
    std::fs::copy(
        support::demo_project().join("scenes/player.tscn"),
        root.join("scenes/player.tscn"),
    )
    .unwrap();
    std::fs::copy(
        support::demo_project().join("icon.svg"),
        root.join("icon.svg"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::copy(
        support::demo_project().join("scripts/player.gd"),
        root.join("scripts/player.gd"),
    )
    .unwrap();
    call_ok(
        &client,
        "cross_scene_set_property",
        json!({"scenes": ["res://scenes/player.tscn"], "type": "Sprite2D",
               "property": "modulate", "value_text": "Color(0, 1, 0, 1)", "confirm": true}),
    )
    .await;
    call_ok(
        &client,
        "cross_scene_set_property",
        json!({"node": "Sprite2D", "property": "visible", "value": false, "confirm": true}),
    )
    .await;
    client.cancel().await.unwrap();
    std::fs::write(root.join("check.gd"), CHECK_SCAFFOLD_GD).unwrap();
    support::run_godot(&godot, root, &["--import"]);
    let log = support::run_godot(&godot, root, &["--script", "res://check.gd"]);
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("SCAFFOLD "))
        .unwrap_or_else(|| panic!("no SCAFFOLD line:\n{log}"));
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        v,
        json!({"name": "Scaffolded", "main": "res://scenes/main.tscn", "root": "Node2D",
               "script": "res://scripts/main.gd", "sprite_modulate": "(0.0, 1.0, 0.0, 1.0)",
               "sprite_visible": false}),
        "{log}"
    );
}

/// A mono 16-bit PCM WAV of `samples` silent samples at 8 kHz (Godot imports it as an
/// AudioStreamWAV).
fn silent_wav(samples: u32) -> Vec<u8> {
    let data = samples * 2;
    let mut w = Vec::new();
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + data).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes()); // PCM
    w.extend_from_slice(&1u16.to_le_bytes()); // mono
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&16000u32.to_le_bytes());
    w.extend_from_slice(&2u16.to_le_bytes());
    w.extend_from_slice(&16u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&data.to_le_bytes());
    w.resize(w.len() + data as usize, 0);
    w
}

/// The persistence verdict fields a dry run and the real run must agree on.
fn verdict(v: &Value) -> Value {
    json!({"persisted": v["persisted"], "reason": v["reason"], "hint": v["hint"]})
}

#[tokio::test(flavor = "multi_thread")]
async fn real_godot_editor_audio_player_and_shader_material_undo_byte_for_byte() {
    let Some(godot) = support::godot_bin("family C editor tools need a Godot editor") else {
        return;
    };
    const SCENE: &str = "res://scenes/main_2d.tscn";
    let project = support::demo_copy();
    let p = project.path();
    support::install_addon(p);
    std::fs::create_dir_all(p.join("audio")).unwrap();
    std::fs::write(p.join("audio/blip.wav"), silent_wav(800)).unwrap();
    std::fs::create_dir_all(p.join("shaders")).unwrap();
    std::fs::copy(
        Path::new(SHADER_FIXTURES).join("good.gdshader"),
        p.join("shaders/good.gdshader"),
    )
    .unwrap();
    support::run_godot(&godot, p, &["--import"]);
    let client = connect(p).await;
    // The bus the player uses, in the layout the editor loads when it starts.
    call_ok(
        &client,
        "add_audio_bus",
        json!({"name": "SFX", "confirm": true}),
    )
    .await;
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("editor.log");
    let mut ed = support::start_godot_editor(&godot, p, &log);
    let r =
        support::call_once_connected(&client, &mut ed, &log, "open_scene", json!({"path": SCENE}))
            .await;
    assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);
    let scene_file = p.join("scenes/main_2d.tscn");
    let save = || async {
        call_ok(&client, "save_scene", json!({"confirm": true})).await;
        std::fs::read_to_string(&scene_file).unwrap()
    };
    let undo = || async {
        call_ok(&client, "editor_undo", json!({})).await;
    };
    let b0 = save().await;

    // add_audio_player: dry run agrees, the node lands with its stream, one undo removes it.
    let args = json!({"parent": ".", "name": "Blip", "type": "AudioStreamPlayer2D",
                      "stream": "res://audio/blip.wav", "bus": "SFX", "autoplay": true,
                      "volume_db": -6.0});
    // A bus the editor's layout lacks is refused, nothing changed.
    let mut nope = args.clone();
    nope["bus"] = json!("Nope");
    let e = call_err(&client, "add_audio_player", nope).await;
    assert!(
        e["message"].as_str().unwrap().contains("no bus \"Nope\""),
        "{e}"
    );
    assert_eq!(save().await, b0);
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = call_ok(&client, "add_audio_player", dry).await;
    assert_eq!(save().await, b0, "a dry run changed the scene");
    let added = call_ok(&client, "add_audio_player", args).await;
    assert_eq!(verdict(&preview), verdict(&added), "{preview}\n{added}");
    assert_eq!(added["node"], "Blip", "{added}");
    let b1 = support::engine_neutral(&save().await);
    assert!(
        b1.contains("[node name=\"Blip\" type=\"AudioStreamPlayer2D\" parent=\".\"]"),
        "{b1}"
    );
    assert!(b1.contains("path=\"res://audio/blip.wav\""), "{b1}");
    assert!(
        b1.contains("bus = &\"SFX\"") && b1.contains("autoplay = true"),
        "{b1}"
    );
    undo().await;
    assert_eq!(save().await, b0, "one undo did not restore the saved scene");
    // Without a stream the reply says `stream: null`: a null stays null, not left out.
    let bare = call_ok(
        &client,
        "add_audio_player",
        json!({"parent": ".", "name": "Bare"}),
    )
    .await;
    assert!(bare.get("stream").is_some_and(Value::is_null), "{bare}");
    undo().await;
    assert_eq!(save().await, b0, "one undo did not restore the saved scene");

    // assign_shader_material, then its uniforms.
    let args = json!({"node": "Background", "shader": "res://shaders/good.gdshader"});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = call_ok(&client, "assign_shader_material", dry).await;
    assert_eq!(save().await, b0, "a dry run changed the scene");
    let assigned = call_ok(&client, "assign_shader_material", args).await;
    assert_eq!(
        verdict(&preview),
        verdict(&assigned),
        "{preview}\n{assigned}"
    );
    assert_eq!(assigned["property"], "material", "{assigned}");
    let b2 = save().await;
    assert!(b2.contains("[sub_resource type=\"ShaderMaterial\""), "{b2}");
    let u = call_ok(
        &client,
        "get_shader_uniforms",
        json!({"node": "Background"}),
    )
    .await;
    let names: Vec<&str> = u["uniforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["speed", "tint", "noise"], "{u}");
    let tint = json!({"$type": "Color", "r": 0.0, "g": 1.0, "b": 0.0, "a": 1.0});
    let args = json!({"node": "Background", "name": "tint", "value": tint});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let preview = call_ok(&client, "set_shader_uniform", dry).await;
    assert_eq!(save().await, b2, "a dry run changed the scene");
    let set = call_ok(&client, "set_shader_uniform", args).await;
    assert_eq!(verdict(&preview), verdict(&set), "{preview}\n{set}");
    assert_eq!(set["value"], tint, "{set}");
    let b3 = save().await;
    assert!(
        b3.contains("shader_parameter/tint = Color(0, 1, 0, 1)"),
        "{b3}"
    );
    let u = call_ok(
        &client,
        "get_shader_uniforms",
        json!({"node": "Background"}),
    )
    .await;
    assert_eq!(u["uniforms"][1]["value"], tint, "{u}");
    // A float uniform set from a JSON integer (what an agent's CLI sends for `0.0`): read
    // as the uniform's type, so Godot keeps it and the saved scene holds 0.0 (a Variant
    // int there was replaced by the shader default, null in a headless editor, on save).
    let zero = call_ok(
        &client,
        "set_shader_uniform",
        json!({"node": "Background", "name": "speed", "value": 0}),
    )
    .await;
    assert_eq!(zero["value"], json!(0.0), "{zero}");
    let b3 = save().await;
    assert!(b3.contains("shader_parameter/speed = 0.0"), "{b3}");
    // A uniform the shader lacks: refused, nothing changed.
    let e = call_err(
        &client,
        "set_shader_uniform",
        json!({"node": "Background", "name": "nope", "value": 1}),
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("no uniform"), "{e}");
    assert_eq!(save().await, b3);
    undo().await;
    undo().await;
    assert_eq!(save().await, b2, "two undos did not restore the uniforms");
    undo().await;
    assert_eq!(save().await, b0, "one undo did not remove the material");
    support::kill_godot_editor(&mut ed);
    client.cancel().await.unwrap();
}

/// set_setting takes several settings in one call (issue 40: a window-size task was
/// four calls): one project.godot write, one transaction, each setting's before and
/// after in the answer; then Godot itself reads every value back. Red without the
/// `settings` loop in `plan_set_setting` (the field is then refused or ignored).
#[tokio::test]
async fn set_setting_sets_several_in_one_write_godot_reads_them() {
    let project = support::demo_copy();
    let p = project.path();
    let client = support::connect(p).await;
    let r = support::call_ok(
        &client,
        "set_setting",
        json!({"settings": {
            "display/window/size/viewport_width": 480,
            "display/window/size/viewport_height": 720,
            "application/config/name": "Dodge",
            "display/window/stretch/mode": "canvas_items"},
            "confirm": true}),
    )
    .await;
    assert_eq!(r["applied"], true, "{r}");
    // One answer row per setting: the first at the top level, the rest in `more`.
    let mut named = vec![r["setting"].as_str().unwrap().to_string()];
    for m in r["more"].as_array().unwrap() {
        named.push(m["setting"].as_str().unwrap().to_string());
    }
    named.sort();
    assert_eq!(
        named,
        [
            "application/config/name",
            "display/window/size/viewport_height",
            "display/window/size/viewport_width",
            "display/window/stretch/mode"
        ],
        "{r}"
    );
    assert_eq!(r["more"].as_array().map(Vec::len), Some(3), "{r}");
    assert!(r["transaction_id"].is_string(), "one write: {r}");
    let e = support::call_err(&client, "set_setting", json!({"value": 3, "confirm": true})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    client.cancel().await.unwrap();
    let Some(godot) = support::godot_bin("Godot reads the settings back") else {
        return;
    };
    std::fs::write(
        p.join("read_settings.gd"),
        "extends SceneTree\nfunc _init():\n\tfor k in [\"display/window/size/viewport_width\", \"display/window/size/viewport_height\", \"application/config/name\", \"display/window/stretch/mode\"]:\n\t\tprint(\"SETTING \", k, \"=\", ProjectSettings.get_setting(k))\n\tquit()\n",
    )
    .unwrap();
    let log = support::run_godot(&godot, p, &["--script", "res://read_settings.gd"]);
    for want in [
        "SETTING display/window/size/viewport_width=480",
        "SETTING display/window/size/viewport_height=720",
        "SETTING application/config/name=Dodge",
        "SETTING display/window/stretch/mode=canvas_items",
    ] {
        assert!(log.contains(want), "{want}:\n{log}");
    }
}

/// Issue #40: a setting's JSON value is read by the type the setting declares, also
/// when project.godot does not hold it yet (the type Godot's ProjectSettings
/// declares): `"#203040"` for the clear colour is a Color, `[10, 20]` for the window's
/// initial position a Vector2i, as Godot itself then reads them (a String and an Array
/// before: Godot ignored both). Red without `declared_type` in set_setting.
#[tokio::test]
async fn real_godot_set_setting_reads_a_new_value_by_the_settings_type() {
    let Some(godot) = support::godot_bin("set_setting types a new value by the class reference")
    else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    let client = support::connect(p).await;
    let r = support::call_ok(
        &client,
        "set_setting",
        json!({"settings": {
            "rendering/environment/defaults/default_clear_color": "#203040",
            "display/window/size/initial_position": [10, 20]},
            "confirm": true}),
    )
    .await;
    let mut written: Vec<(Value, Value)> = vec![(r["setting"].clone(), r["value"].clone())];
    written.extend(
        r["more"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["setting"].clone(), m["value"].clone())),
    );
    written.sort_by_key(|(k, _)| k.to_string());
    assert_eq!(
        written,
        [
            (
                json!("display/window/size/initial_position"),
                json!("Vector2i(10, 20)")
            ),
            (
                json!("rendering/environment/defaults/default_clear_color"),
                json!("Color(0.1254902, 0.1882353, 0.2509804, 1)")
            )
        ],
        "{r}"
    );
    client.cancel().await.unwrap();
    std::fs::write(
        p.join("read_settings.gd"),
        "extends SceneTree\nfunc _init():\n\tfor k in [\"rendering/environment/defaults/default_clear_color\", \"display/window/size/initial_position\"]:\n\t\tvar v = ProjectSettings.get_setting(k)\n\t\tprint(\"SETTING \", k, \" \", type_string(typeof(v)), \" \", v)\n\tquit()\n",
    )
    .unwrap();
    let log = support::run_godot(&godot, p, &["--script", "res://read_settings.gd"]);
    for want in [
        "SETTING rendering/environment/defaults/default_clear_color Color (0.1255, 0.1882, 0.251, 1.0)",
        "SETTING display/window/size/initial_position Vector2i (10, 20)",
    ] {
        assert!(log.contains(want), "{want}:\n{log}");
    }
}

/// Issue #40 item 1, create_resource: a JSON value was written as JSON says it, so
/// `"#ff0000"` for a StyleBoxFlat's `bg_color` became a String that Godot drops on load
/// (the answer said written). Now each property is written as the type the class (or a
/// base) declares in the class reference, and a resource-typed property given a string is
/// refused with the tool that loads a file. Godot loads the colour back. Red without
/// `declared_text` in create_resource (`bg_color = "#ff0000"`).
#[tokio::test]
async fn real_godot_create_resource_writes_each_property_as_its_declared_type() {
    let Some(godot) = support::godot_bin("create_resource types values by the class reference")
    else {
        return;
    };
    let project = support::demo_copy();
    let p = project.path();
    let client = support::connect(p).await;
    support::call_ok(
        &client,
        "create_resource",
        json!({"path": "res://panel.tres", "type": "StyleBoxFlat", "confirm": true,
               "properties": {"bg_color": "#ff0000", "border_color": [0, 0, 1],
                              "content_margin_left": 3, "corner_radius_top_left": 4}}),
    )
    .await;
    let text = std::fs::read_to_string(p.join("panel.tres")).unwrap();
    assert!(text.contains("bg_color = Color(1, 0, 0, 1)"), "{text}");
    assert!(text.contains("border_color = Color(0, 0, 1, 1)"), "{text}");
    // A Theme's items, which ClassDB does not list, take their data type's form
    // (agent run 13b: a font color written as a String).
    support::call_ok(
        &client,
        "create_resource",
        json!({"path": "res://ui.tres", "type": "Theme", "confirm": true,
               "properties": {"default_font_size": 24, "Button/colors/font_color": "#ff0000",
                              "Label/constants/outline_size": 4}}),
    )
    .await;
    let ui = std::fs::read_to_string(p.join("ui.tres")).unwrap();
    assert!(
        ui.contains("Button/colors/font_color = Color(1, 0, 0, 1)"),
        "{ui}"
    );
    let e = support::call_err(
        &client,
        "create_resource",
        json!({"path": "res://t.tres", "type": "Theme", "confirm": true,
               "properties": {"default_font": "res://icon.svg"}}),
    )
    .await;
    assert_eq!(e["param"], "properties.default_font", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("set_resource_property"),
        "{e}"
    );
    assert!(!p.join("t.tres").exists());
    client.cancel().await.unwrap();
    std::fs::write(
        p.join("read_panel.gd"),
        "extends SceneTree\nfunc _init():\n\tvar s: StyleBoxFlat = load(\"res://panel.tres\")\n\tprint(\"PANEL \", s.bg_color, \" \", s.border_color, \" \", s.corner_radius_top_left)\n\tvar t: Theme = load(\"res://ui.tres\")\n\tprint(\"THEME \", t.get_color(\"font_color\", \"Button\"), \" \", t.get_constant(\"outline_size\", \"Label\"))\n\tquit()\n",
    )
    .unwrap();
    let log = support::run_godot(&godot, p, &["--script", "res://read_panel.gd"]);
    assert!(
        log.contains("PANEL (1.0, 0.0, 0.0, 1.0) (0.0, 0.0, 1.0, 1.0) 4"),
        "{log}"
    );
    assert!(log.contains("THEME (1.0, 0.0, 0.0, 1.0) 4"), "{log}");
}
