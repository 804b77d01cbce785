//! The disk-reading families of issue #12 end to end, through the real server and a
//! real MCP client: animation, audio bus layout, theme, tilemap, the input map's
//! rest, and per-node scene reads. The files they read were written by the real
//! Godot editor (tests/fixtures/readfam/README.md says how); the real_godot_ test
//! regenerates them with the engine and reads the fresh output.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/readfam");

/// The demo project plus the Godot-written fixtures: the bus layout at the project's
/// default path, the rest under res://fam/.
fn project() -> tempfile::TempDir {
    let dir = support::demo_copy();
    install_fixtures(Path::new(FIXTURES), dir.path());
    dir
}

fn install_fixtures(from: &Path, project: &Path) {
    std::fs::create_dir_all(project.join("fam")).unwrap();
    for f in [
        "anim_library.tres",
        "level.tscn",
        "outdoor.tscn",
        "tileset.tres",
        "theme.tres",
    ] {
        std::fs::copy(from.join(f), project.join("fam").join(f)).unwrap();
    }
    // outdoor.tscn names its tile set by the path make.gd saved it at.
    std::fs::copy(from.join("tileset.tres"), project.join("tileset.tres")).unwrap();
    std::fs::copy(
        from.join("default_bus_layout.tres"),
        project.join("default_bus_layout.tres"),
    )
    .unwrap();
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn animations_are_listed_and_read_back_from_scenes_and_libraries() {
    let p = project();
    let client = connect(p.path()).await;
    let scene = "res://fam/level.tscn";
    let r = call_ok(&client, "list_animations", json!({"path": scene})).await;
    assert_eq!(ids(&r["animations"]), ["walk", "extra/idle", "extra/walk"]);
    let walk = &r["animations"][0];
    assert_eq!(walk["node"], "AnimationPlayer");
    assert_eq!(walk["length"], 2.0);
    assert_eq!(walk["loop_mode"], "linear");
    assert_eq!(walk["track_count"], 4);
    assert_eq!(r["animations"][1]["loop_mode"], "pingpong");
    let r = call_ok(
        &client,
        "list_animations",
        json!({"path": "res://fam/anim_library.tres"}),
    )
    .await;
    assert_eq!(ids(&r["animations"]), ["idle", "walk"]);
    let e = call_err(
        &client,
        "list_animations",
        json!({"path": scene, "node": "Nope"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");

    let a = call_ok(
        &client,
        "get_animation",
        json!({"path": scene, "animation": "extra/walk"}),
    )
    .await;
    let tracks = a["tracks"].as_array().unwrap();
    let kinds: Vec<&str> = tracks.iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["value", "method", "bezier", "position_3d"]);
    let value = &tracks[0];
    assert_eq!(value["path"], "Sprite2D:position");
    assert_eq!(value["interpolation"], "cubic");
    assert_eq!(value["keys"][1]["time"], 1.5);
    assert_eq!(value["keys"][1]["transition"], 0.5);
    // Key values are typed values, never Godot text.
    assert_eq!(
        value["keys"][1]["value"],
        json!({"type": "constructor", "value": {"name": "Vector2", "args": [
            {"type": "int", "value": 100}, {"type": "int", "value": 20}]}})
    );
    assert_eq!(tracks[1]["keys"][0]["value"]["type"], "dictionary");
    assert_eq!(
        tracks[2]["keys"][0]["value"]["value"][0]["value"],
        json!({"type": "float", "value": 0.5})
    );
    assert_eq!(tracks[3]["keys"][0]["value"]["value"]["name"], "Vector3");
    let a = call_ok(
        &client,
        "get_animation",
        json!({"path": scene, "animation": "walk", "max_keys": 1}),
    )
    .await;
    assert_eq!(a["animation"], "walk");
    assert_eq!(a["tracks"][0]["key_count"], 2);
    assert_eq!(a["tracks"][0]["keys"].as_array().unwrap().len(), 1);
    let e = call_err(
        &client,
        "get_animation",
        json!({"path": scene, "animation": "run"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    assert!(e["hint"].as_str().unwrap().contains("extra/walk"), "{e}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_bus_layout_reads_as_godot_loads_it() {
    let p = project();
    let client = connect(p.path()).await;
    let r = call_ok(&client, "get_audio_bus_layout", json!({})).await;
    assert_eq!(r["source"], "default_path");
    assert_eq!(r["path"], "res://default_bus_layout.tres");
    let buses = r["buses"].as_array().unwrap();
    let names: Vec<&str> = buses.iter().map(|b| b["name"].as_str().unwrap()).collect();
    // Bus 0's name is not in the file: Godot names it Master when it loads the layout.
    assert_eq!(names, ["Master", "SFX", "Music"]);
    assert_eq!(buses[0]["volume_db"], -1.5);
    assert_eq!(buses[1]["mute"], true);
    assert_eq!(
        buses[1]["effects"][0]["effect"]["type"],
        "AudioEffectReverb"
    );
    assert_eq!(buses[1]["effects"][1]["enabled"], false);
    assert_eq!(
        (buses[2]["send"].as_str(), buses[2]["solo"].as_bool()),
        (Some("SFX"), Some(true))
    );

    // The project setting names the layout file.
    std::fs::rename(
        p.path().join("default_bus_layout.tres"),
        p.path().join("fam/buses.tres"),
    )
    .unwrap();
    let r = call_ok(&client, "get_audio_bus_layout", json!({})).await;
    assert_eq!(
        (r["exists"].as_bool(), r["buses"].as_array().unwrap().len()),
        (Some(false), 1)
    );
    let pg = p.path().join("project.godot");
    let mut text = std::fs::read_to_string(&pg).unwrap();
    text.push_str("\n[audio]\n\nbuses/default_bus_layout=\"res://fam/buses.tres\"\n");
    std::fs::write(&pg, text).unwrap();
    let r = call_ok(&client, "get_audio_bus_layout", json!({})).await;
    assert_eq!(r["source"], "project_setting");
    assert_eq!(r["buses"].as_array().unwrap().len(), 3);
    let e = call_err(
        &client,
        "get_audio_bus_layout",
        json!({"path": "res://fam/theme.tres"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn themes_read_by_type_with_resources_resolved() {
    let p = project();
    let client = connect(p.path()).await;
    let r = call_ok(
        &client,
        "get_theme",
        json!({"path": "res://fam/theme.tres"}),
    )
    .await;
    assert_eq!(r["default_font_size"], 18);
    let t = &r["types"];
    assert_eq!(
        t["Button"]["constants"]["h_separation"],
        json!({"type": "int", "value": 7})
    );
    assert_eq!(t["Button"]["styles"]["normal"]["type"], "StyleBoxFlat");
    assert_eq!(
        t["Button"]["styles"]["normal"]["properties"]["bg_color"]["value"]["args"][3],
        json!({"type": "float", "value": 0.5})
    );
    assert_eq!(t["Label"]["fonts"]["font"]["type"], "SystemFont");
    assert_eq!(
        t["Label"]["font_sizes"]["font_size"],
        json!({"type": "int", "value": 22})
    );
    assert_eq!(t["CheckBox"]["icons"]["checked"]["path"], "res://icon.svg");
    assert_eq!(t["DangerButton"]["base_type"], "Button");
    assert_eq!(
        t["Button"]["colors"]["font_color"]["value"]["name"],
        "Color"
    );
    let r = call_ok(
        &client,
        "get_theme",
        json!({"path": "res://fam/theme.tres", "type": "Label"}),
    )
    .await;
    assert_eq!(r["types"].as_object().unwrap().len(), 1);
    let e = call_err(
        &client,
        "get_theme",
        json!({"path": "res://fam/theme.tres", "type": "Tree"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    let e = call_err(
        &client,
        "get_theme",
        json!({"path": "res://fam/tileset.tres"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn tilemap_cells_and_tile_sets_decode_from_disk() {
    let p = project();
    let client = connect(p.path()).await;
    let scene = "res://fam/level.tscn";
    let r = call_ok(
        &client,
        "get_tilemap_cells",
        json!({"path": scene, "node": "Ground"}),
    )
    .await;
    assert_eq!(r["cell_count"], 4);
    assert_eq!(
        r["cells"][1],
        json!({"coords": [-3, 7], "source_id": 0, "atlas_coords": [1, 0], "alternative": 1})
    );
    assert_eq!(r["cells"][2]["coords"], json!([300, -200]));
    assert_eq!(r["cells"][2]["source_id"], 5);
    assert_eq!(r["tile_set"]["type"], "TileSet");
    let page = call_ok(
        &client,
        "get_tilemap_cells",
        json!({"path": scene, "node": "Ground", "offset": 1, "limit": 2}),
    )
    .await;
    assert_eq!(
        (page["returned"].as_u64(), page["next_offset"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(page["cells"][0], r["cells"][1]);
    let e = call_err(
        &client,
        "get_tilemap_cells",
        json!({"path": scene, "node": "Sprite2D"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");

    let ts = call_ok(
        &client,
        "get_tileset",
        json!({"path": "res://fam/tileset.tres"}),
    )
    .await;
    assert_eq!(ts["tile_size"], json!([16, 16]));
    let sources = ts["sources"].as_array().unwrap();
    assert_eq!(
        (sources[0]["id"].as_i64(), sources[1]["id"].as_i64()),
        (Some(0), Some(5))
    );
    assert_eq!(sources[0]["tile_count"], 3);
    assert_eq!(sources[0]["tiles"][1]["alternatives"], json!([0, 1]));
    assert_eq!(sources[1]["texture_region_size"], json!([32, 32]));
    assert_eq!(sources[0]["texture"]["path"], "res://icon.svg");
    let embedded = call_ok(
        &client,
        "get_tileset",
        json!({"path": scene, "node": "Ground"}),
    )
    .await;
    assert_eq!(embedded["sources"][0]["tiles"], sources[0]["tiles"]);
    // A layer whose tile set is its own file: that file is read.
    let outdoor = "res://fam/outdoor.tscn";
    let ext = call_ok(
        &client,
        "get_tileset",
        json!({"path": outdoor, "node": "."}),
    )
    .await;
    assert_eq!(ext["path"], "res://tileset.tres");
    assert_eq!(ext["from"], json!({"path": outdoor, "node": "."}));
    assert_eq!(ext["sources"], ts["sources"]);
    let cells = call_ok(
        &client,
        "get_tilemap_cells",
        json!({"path": outdoor, "node": "."}),
    )
    .await;
    assert_eq!(
        cells["cells"],
        json!([{"coords": [1, 1], "source_id": 5, "atlas_coords": [0, 0], "alternative": 0}])
    );
    assert_eq!(cells["tile_set"]["path"], "res://tileset.tres");
    let e = call_err(&client, "get_tileset", json!({"path": scene})).await;
    assert_eq!(e["param"], "node");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_input_action_reads_decoded_and_its_events_clear_through_the_journal() {
    let p = project();
    let client = connect(p.path()).await;
    let a = call_ok(&client, "get_input_action", json!({"action": "move_left"})).await;
    assert_eq!(a["deadzone"], 0.2);
    assert_eq!(a["event_count"], 3);
    assert_eq!(a["events"][0]["kind"], "key");
    assert_eq!(a["events"][0]["physical_keycode"], 65);
    let e = call_err(&client, "get_input_action", json!({"action": "fly"})).await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");

    let pg = p.path().join("project.godot");
    let before = std::fs::read_to_string(&pg).unwrap();
    let e = call_err(
        &client,
        "clear_input_action_events",
        json!({"action": "move_left"}),
    )
    .await;
    assert_eq!(e["required"], "confirm", "{e}");
    let dry = call_ok(
        &client,
        "clear_input_action_events",
        json!({"action": "move_left", "dry_run": true, "confirm": true}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&pg).unwrap(),
        before,
        "a dry run changes nothing"
    );
    let real = call_ok(
        &client,
        "clear_input_action_events",
        json!({"action": "move_left", "confirm": true}),
    )
    .await;
    assert_eq!(dry["value"], real["value"], "preview and real run agree");
    let after = std::fs::read_to_string(&pg).unwrap();
    assert!(
        after.contains("move_left={\n\"deadzone\": 0.2,\n\"events\": []\n}\n"),
        "{after}"
    );
    // Only that action's events changed.
    let start = before.find("move_left={").unwrap();
    let end = start + before[start..].find("\n}\n").unwrap() + 3;
    assert_eq!(
        after,
        format!(
            "{}move_left={{\n\"deadzone\": 0.2,\n\"events\": []\n}}\n{}",
            &before[..start],
            &before[end..]
        )
    );
    assert!(
        real["transaction_id"].is_string(),
        "a journaled write: {real}"
    );
    assert_eq!(
        (real["setting"].as_str(), real["persisted"].as_bool()),
        (Some("input/move_left"), Some(true))
    );
    let a = call_ok(&client, "get_input_action", json!({"action": "move_left"})).await;
    assert_eq!(
        (a["event_count"].as_u64(), a["deadzone"].as_f64()),
        (Some(0), Some(0.2))
    );
    let e = call_err(
        &client,
        "clear_input_action_events",
        json!({"action": "fly", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn groups_connections_and_node_properties_read_from_the_scene_file() {
    let p = project();
    let client = connect(p.path()).await;
    let scene = "res://fam/level.tscn";
    let g = call_ok(&client, "list_node_groups", json!({"path": scene})).await;
    assert_eq!(
        g["groups"],
        json!({"actors": ["Sprite2D"], "visible_things": ["Sprite2D"]})
    );
    let g = call_ok(
        &client,
        "list_node_groups",
        json!({"path": scene, "node": "Ground"}),
    )
    .await;
    assert_eq!(g["groups"], json!([]));
    let c = call_ok(&client, "list_signal_connections", json!({"path": scene})).await;
    assert_eq!(c["connections"].as_array().unwrap().len(), 2);
    let c = call_ok(
        &client,
        "list_signal_connections",
        json!({"path": scene, "node": "."}),
    )
    .await;
    let only = c["connections"].as_array().unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(
        (
            only[0]["signal"].as_str(),
            only[0]["flags"].as_i64(),
            only[0]["unbinds"].as_i64()
        ),
        (Some("animation_finished"), Some(3), Some(1))
    );
    let n = call_ok(
        &client,
        "get_node_properties",
        json!({"path": scene, "node": "Sprite2D"}),
    )
    .await;
    assert_eq!(n["type"], "Sprite2D");
    assert_eq!(
        n["properties"]["position"],
        json!({"type": "constructor", "value": {"name": "Vector2", "args": [
            {"type": "int", "value": 4}, {"type": "int", "value": 5}]}})
    );
    assert_eq!(n["properties"]["modulate"]["value"]["name"], "Color");
    let n = call_ok(
        &client,
        "get_node_properties",
        json!({"path": scene, "node": "Ground"}),
    )
    .await;
    let ts = n["properties"]["tile_set"]["value"].as_str().unwrap();
    assert_eq!(n["resources"][ts]["type"], "TileSet");
    let e = call_err(
        &client,
        "get_node_properties",
        json!({"path": scene, "node": "Missing"}),
    )
    .await;
    assert_eq!(
        (e["code"].as_str(), e["param"].as_str()),
        (Some("RESOURCE_NOT_FOUND"), Some("node"))
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn paths_outside_the_project_are_refused_and_binary_files_named() {
    let p = project();
    let client = connect(p.path()).await;
    for (tool, args) in [
        ("list_animations", json!({})),
        ("get_animation", json!({"animation": "walk"})),
        ("get_audio_bus_layout", json!({})),
        ("get_theme", json!({})),
        ("get_tilemap_cells", json!({"node": "Ground"})),
        ("get_tileset", json!({})),
        ("list_node_groups", json!({})),
        ("list_signal_connections", json!({})),
        ("get_node_properties", json!({"node": "."})),
    ] {
        for bad in ["res://../outside.tscn", "/etc/passwd"] {
            let mut a = args.clone();
            a["path"] = json!(bad);
            let e = call_err(&client, tool, a).await;
            assert_eq!(
                (e["code"].as_str(), e["param"].as_str()),
                (Some("PATH_REFUSED"), Some("path")),
                "{tool} {bad}: {e}"
            );
        }
    }
    // A link inside the project to a file outside it is an escape too (the server
    // resolves the real path before reading).
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(
        p.path().join("fam/level.tscn"),
        outside.path().join("level.tscn"),
    )
    .unwrap();
    godot_mcp_os::fs::symlink(
        outside.path().join("level.tscn"),
        p.path().join("fam/link.tscn"),
    )
    .unwrap();
    let e = call_err(
        &client,
        "list_node_groups",
        json!({"path": "res://fam/link.tscn"}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED", "{e}");
    let e = call_err(&client, "get_theme", json!({"path": "res://fam/theme.res"})).await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

/// Regenerate the fixtures with the real engine (make.gd) and read the fresh output:
/// the decoders follow what Godot writes today, not a copy taken once.
#[tokio::test]
async fn real_godot_disk_reads_follow_what_the_engine_writes() {
    let Some(godot) = support::godot_bin("disk_reads") else {
        return;
    };
    let made = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(FIXTURES).join("make.gd"),
        made.path().join("make.gd"),
    )
    .unwrap();
    std::fs::copy(
        support::demo_project().join("icon.svg"),
        made.path().join("icon.svg"),
    )
    .unwrap();
    std::fs::write(made.path().join("project.godot"), "config_version=5\n").unwrap();
    run_bounded(&godot, made.path(), &["--import"]);
    run_bounded(&godot, made.path(), &["--script", "make.gd"]);
    let p = support::demo_copy();
    install_fixtures(made.path(), p.path());
    let client = connect(p.path()).await;
    let scene = "res://fam/level.tscn";
    let r = call_ok(
        &client,
        "get_tilemap_cells",
        json!({"path": scene, "node": "Ground"}),
    )
    .await;
    let coords: Vec<Value> = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["coords"].clone())
        .collect();
    assert_eq!(
        coords,
        [
            json!([0, 0]),
            json!([-3, 7]),
            json!([300, -200]),
            json!([2, 2])
        ]
    );
    let r = call_ok(&client, "list_animations", json!({"path": scene})).await;
    assert_eq!(ids(&r["animations"]), ["walk", "extra/idle", "extra/walk"]);
    let r = call_ok(&client, "get_audio_bus_layout", json!({})).await;
    assert_eq!(r["buses"].as_array().unwrap().len(), 3);
    let r = call_ok(
        &client,
        "get_theme",
        json!({"path": "res://fam/theme.tres"}),
    )
    .await;
    assert_eq!(
        r["types"]["Button"]["styles"]["normal"]["type"],
        "StyleBoxFlat"
    );
    client.cancel().await.unwrap();
}

/// `godot --headless --path <project> <args>` under `timeout`, so a hung engine
/// fails the test instead of stalling it; fails with Godot's output unless it exits 0.
fn run_bounded(godot: &Path, project: &Path, args: &[&str]) {
    let out = std::process::Command::new("timeout")
        .arg("180")
        .arg(godot)
        .args(["--headless", "--path"])
        .arg(project)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run timeout/godot");
    assert!(
        out.status.success(),
        "godot {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
