//! File-plane families: create_material, layer names, move_file (every reference
//! rewritten), duplicate_file, folders and list_resources_by_type — end to end over
//! stdio on real files, and against a real Godot 4.4 when GODOT_BIN is set.

mod support;

use std::path::Path;

use serde_json::{Value, json};

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The journal row of every transaction id a multi-file result reports.
async fn assert_committed(client: &support::Client, r: &Value) {
    let t = support::call_ok(client, "list_transactions", json!({"limit": 1000})).await;
    for step in r["done"].as_array().expect("done steps") {
        let txn = step["transaction_id"].as_str().expect("journaled");
        assert_eq!(support::transaction_row(&t, txn)["status"], "committed");
    }
}

// ---------------------------------------------------------------------------
// layer names

#[tokio::test]
async fn layer_names_are_set_through_project_godot_and_read_back() {
    let dir = support::demo_copy();
    let before = read(dir.path(), "project.godot");
    let section = "[layer_names]\n\n2d_physics/layer_1=\"world\"\n2d_physics/layer_2=\"player\"\n2d_physics/layer_3=\"enemies\"\n";
    assert!(before.contains(section));
    let client = support::connect(dir.path()).await;

    let got = support::call_ok(&client, "get_layer_names", json!({"kind": "2d_physics"})).await;
    assert_eq!(
        got["2d_physics"]["named"],
        json!([{"layer": 1, "name": "world"}, {"layer": 2, "name": "player"}, {"layer": 3, "name": "enemies"}])
    );
    assert_eq!(got["2d_physics"]["layers"], 32);
    assert!(got.get("3d_render").is_none());

    // Rename 3, add 5, unname 2.
    let args =
        json!({"kind": "2d_physics", "names": {"2": "", "3": "Enemy \"boss\"", "5": "pickups"}});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let d = support::call_ok(&client, "set_layer_names", dry).await;
    assert_eq!(
        read(dir.path(), "project.godot"),
        before,
        "a dry run writes nothing"
    );
    assert_eq!(d["changes"][1]["setting"], "layer_names/2d_physics/layer_3");
    assert_eq!(d["changes"][1]["previous"], "\"enemies\"");

    let e = support::call_err(&client, "set_layer_names", args.clone()).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");

    let mut real = args.clone();
    real["confirm"] = json!(true);
    let r = support::call_ok(&client, "set_layer_names", real).await;
    // A dry run wrote nothing and says so, naming what the real run then did.
    assert_eq!(r["persisted"], true);
    support::assert_preview_verdict(&d, &r, "set_layer_names");
    assert_eq!(r["changes"], d["changes"]);
    let after = read(dir.path(), "project.godot");
    assert_eq!(
        after,
        before.replace(
            section,
            "[layer_names]\n\n2d_physics/layer_1=\"world\"\n2d_physics/layer_3=\"Enemy \\\"boss\\\"\"\n2d_physics/layer_5=\"pickups\"\n"
        ),
        "only the named lines change"
    );
    let got = support::call_ok(&client, "get_layer_names", json!({})).await;
    assert_eq!(
        got["2d_physics"]["named"],
        json!([{"layer": 1, "name": "world"}, {"layer": 3, "name": "Enemy \"boss\""}, {"layer": 5, "name": "pickups"}])
    );
    assert_eq!(got["3d_render"], json!({"layers": 20, "named": []}));
    let txn = r["transaction_id"].as_str().unwrap();
    let t = support::call_ok(&client, "list_transactions", json!({})).await;
    assert_eq!(support::transaction_row(&t, txn)["status"], "committed");

    // A layer past the kind's count, or a stale project.godot, is refused unchanged.
    let now = read(dir.path(), "project.godot");
    let e = support::call_err(
        &client,
        "set_layer_names",
        json!({"kind": "3d_render", "names": {"21": "x"}, "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    let e = support::call_err(
        &client,
        "set_layer_names",
        json!({"kind": "lights", "names": {"1": "x"}, "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert_eq!(read(dir.path(), "project.godot"), now);
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------
// create_material

#[tokio::test]
async fn create_material_writes_the_text_godot_writes() {
    let dir = support::demo_copy();
    std::fs::copy(dir.path().join("icon.svg"), dir.path().join("normal.svg")).unwrap();
    let client = support::connect(dir.path()).await;
    let args = json!({
        "path": "res://materials/brick.tres",
        "textures": {"albedo": "res://icon.svg", "normal": "res://normal.svg", "ao": "res://icon.svg"},
        "albedo_color": [1, 0.5, 0.25],
        "roughness": 0.75,
        "emission_color": [0, 0, 1],
        "properties": {"cull_mode": 2},
    });
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let d = support::call_ok(&client, "create_material", dry).await;
    assert_eq!(d["action"], "create");
    assert!(
        !dir.path().join("materials").exists(),
        "a dry run writes nothing"
    );

    let mut real = args.clone();
    real["confirm"] = json!(true);
    let r = support::call_ok(&client, "create_material", real).await;
    assert_eq!(r["persisted"], true);
    support::assert_preview_verdict(&d, &r, "create_material");
    let text = read(dir.path(), "materials/brick.tres");
    let uid = r["uid"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("[gd_resource type=\"StandardMaterial3D\" load_steps=3 format=3 uid=\"{uid}\"]")
    );
    // The imported icon carries its .import uid; the un-imported copy goes by path.
    let ext1 = lines[2];
    assert!(
        ext1.starts_with("[ext_resource type=\"Texture2D\" uid=\"uid://bvc2gk7x0d3ns\" path=\"res://icon.svg\" id=\"1_"),
        "{text}"
    );
    assert!(
        lines[3].starts_with("[ext_resource type=\"Texture2D\" path=\"res://normal.svg\" id=\"2_"),
        "{text}"
    );
    let id = |l: &str| {
        l.rsplit("id=\"")
            .next()
            .unwrap()
            .trim_end_matches("\"]")
            .to_string()
    };
    let (icon, normal) = (id(lines[2]), id(lines[3]));
    assert_eq!(
        &lines[4..],
        [
            "".to_string(),
            "[resource]".into(),
            "albedo_color = Color(1, 0.5, 0.25, 1)".into(),
            format!("albedo_texture = ExtResource(\"{icon}\")"),
            "roughness = 0.75".into(),
            "emission_enabled = true".into(),
            "emission = Color(0, 0, 1, 1)".into(),
            "normal_enabled = true".into(),
            format!("normal_texture = ExtResource(\"{normal}\")"),
            "ao_enabled = true".into(),
            format!("ao_texture = ExtResource(\"{icon}\")"),
            "cull_mode = 2".into(),
        ]
    );
    let t = support::call_ok(&client, "list_transactions", json!({})).await;
    assert_eq!(
        support::transaction_row(&t, r["transaction_id"].as_str().unwrap())["status"],
        "committed"
    );

    // An existing file is refused without overwrite; an overwrite keeps its uid.
    let e = support::call_err(
        &client,
        "create_material",
        json!({"path": "res://materials/brick.tres", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    let sha = r["sha256_after"].as_str().unwrap();
    let e = support::call_err(
        &client,
        "create_material",
        json!({"path": "res://materials/brick.tres", "overwrite": true, "expected_sha256": "0".repeat(64), "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "STALE", "{e}");
    let o = support::call_ok(
        &client,
        "create_material",
        json!({"path": "res://materials/brick.tres", "class": "ORMMaterial3D", "textures": {"orm": "res://icon.svg"},
               "overwrite": true, "expected_sha256": sha, "confirm": true}),
    )
    .await;
    assert_eq!(o["uid"], uid);
    assert!(
        read(dir.path(), "materials/brick.tres")
            .starts_with("[gd_resource type=\"ORMMaterial3D\" load_steps=2")
    );

    // Bad input: refused, nothing written.
    let before = support::files_under(dir.path(), &[]);
    for (args, code) in [
        (
            json!({"path": "res://m.tres", "textures": {"albedo": "res://../outside.png"}}),
            "PATH_REFUSED",
        ),
        (
            json!({"path": "res://m.tres", "textures": {"albedo": "/etc/passwd"}}),
            "PATH_REFUSED",
        ),
        (json!({"path": "/tmp/m.tres"}), "PATH_REFUSED"),
        (
            json!({"path": "res://m.tres", "textures": {"albedo": "res://missing.png"}}),
            "RESOURCE_NOT_FOUND",
        ),
        (
            json!({"path": "res://m.tres", "textures": {"albedo": "res://project.godot"}}),
            "INVALID_PARAMS",
        ),
        (
            json!({"path": "res://m.tres", "textures": {"orm": "res://icon.svg"}}),
            "INVALID_PARAMS",
        ),
        (
            json!({"path": "res://m.tres", "albedo_color": [1, 2]}),
            "INVALID_PARAMS",
        ),
    ] {
        let mut a = args.clone();
        a["confirm"] = json!(true);
        let e = support::call_err(&client, "create_material", a).await;
        assert_eq!(e["code"], code, "{args}: {e}");
    }
    assert_eq!(support::files_under(dir.path(), &[]), before);
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------
// move_file

#[tokio::test]
async fn move_file_rewrites_every_reference_through_the_journal() {
    let dir = support::demo_copy();
    // A script that preloads the scene, and an export preset naming it.
    std::fs::write(
        dir.path().join("scripts/spawner.gd"),
        "extends Node\nconst PLAYER = preload(\"res://scenes/player.tscn\")\nvar other = \"res://scenes/player.tscn.bak\"\n",
    )
    .unwrap();
    let client = support::connect(dir.path()).await;
    let before = support::files_under(dir.path(), &[]);

    let args = json!({"from": "res://scenes/player.tscn", "to": "res://scenes/actors/hero.tscn"});
    let mut dry = args.clone();
    dry["dry_run"] = json!(true);
    let d = support::call_ok(&client, "move_file", dry).await;
    assert_eq!(
        support::files_under(dir.path(), &[]),
        before,
        "a dry run writes nothing"
    );
    let planned: Vec<(String, String)> = d["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        planned,
        [
            (
                "res://scenes/actors/hero.tscn".to_string(),
                "create".to_string()
            ),
            ("res://scenes/main_2d.tscn".into(), "overwrite".into()),
            ("res://scripts/spawner.gd".into(), "overwrite".into()),
            ("res://scenes/player.tscn".into(), "delete".into()),
        ]
    );
    assert_eq!(d["files"][2]["lines"], json!([2]));

    // Compare-and-swap on the moved file.
    let mut stale = args.clone();
    stale["expected_sha256"] = json!("0".repeat(64));
    stale["confirm"] = json!(true);
    let e = support::call_err(&client, "move_file", stale).await;
    assert_eq!(e["code"], "STALE", "{e}");
    assert_eq!(support::files_under(dir.path(), &[]), before);

    let mut real = args.clone();
    real["confirm"] = json!(true);
    let r = support::call_ok(&client, "move_file", real).await;
    assert_eq!(
        r["files"], d["files"],
        "the real run does what the dry run listed"
    );
    assert_eq!(r["done"].as_array().unwrap().len(), 4);
    assert_committed(&client, &r).await;

    let after = support::files_under(dir.path(), &[]);
    assert!(!after.contains_key("scenes/player.tscn"));
    assert_eq!(
        after["scenes/actors/hero.tscn"],
        before["scenes/player.tscn"]
    );
    let main = read(dir.path(), "scenes/main_2d.tscn");
    let main_before = String::from_utf8(before["scenes/main_2d.tscn"].clone()).unwrap();
    assert_eq!(
        main,
        main_before.replace(
            "\"res://scenes/player.tscn\"",
            "\"res://scenes/actors/hero.tscn\""
        )
    );
    assert_ne!(main, main_before);
    assert_eq!(
        read(dir.path(), "scripts/spawner.gd"),
        "extends Node\nconst PLAYER = preload(\"res://scenes/actors/hero.tscn\")\nvar other = \"res://scenes/player.tscn.bak\"\n"
    );

    // A script with its .uid sidecar, named by project.godot's autoload.
    let r = support::call_ok(
        &client,
        "move_file",
        json!({"from": "res://scripts/game_state.gd", "to": "res://autoload/game_state.gd", "confirm": true}),
    )
    .await;
    assert_committed(&client, &r).await;
    let now = support::files_under(dir.path(), &[]);
    assert_eq!(
        now["autoload/game_state.gd.uid"],
        before["scripts/game_state.gd.uid"]
    );
    assert!(!now.contains_key("scripts/game_state.gd.uid"));
    assert!(
        read(dir.path(), "project.godot").contains("GameState=\"*res://autoload/game_state.gd\"")
    );

    // An imported asset: its .import moves with source_file rewritten, uid kept.
    support::call_ok(
        &client,
        "move_file",
        json!({"from": "res://icon.svg", "to": "res://art/icon.svg", "confirm": true}),
    )
    .await;
    let import = read(dir.path(), "art/icon.svg.import");
    assert!(
        import.contains("source_file=\"res://art/icon.svg\""),
        "{import}"
    );
    assert!(import.contains("uid=\"uid://bvc2gk7x0d3ns\""));
    assert!(read(dir.path(), "project.godot").contains("config/icon=\"res://art/icon.svg\""));
    assert!(read(dir.path(), "scenes/actors/hero.tscn").contains("path=\"res://art/icon.svg\""));

    // Refusals change nothing.
    let snapshot = support::files_under(dir.path(), &[]);
    for (args, code) in [
        (
            json!({"from": "res://art/icon.svg", "to": "res://../escape.svg"}),
            "PATH_REFUSED",
        ),
        (
            json!({"from": "res://art/icon.svg", "to": "res://.godot/icon.svg"}),
            "PATH_REFUSED",
        ),
        (
            json!({"from": "res://project.godot", "to": "res://p/project.godot"}),
            "PATH_REFUSED",
        ),
        (
            json!({"from": "res://art/icon.svg", "to": "res://art/icon.png"}),
            "INVALID_PARAMS",
        ),
        (
            json!({"from": "res://art/icon.svg", "to": "res://scenes/main_2d.tscn"}),
            "INVALID_PARAMS",
        ),
        (
            json!({"from": "res://scenes/main_2d.tscn", "to": "res://scenes/actors/hero.tscn"}),
            "INVALID_PARAMS",
        ),
        (
            json!({"from": "res://nope.tscn", "to": "res://nope2.tscn"}),
            "RESOURCE_NOT_FOUND",
        ),
    ] {
        let mut a = args.clone();
        a["confirm"] = json!(true);
        let e = support::call_err(&client, "move_file", a).await;
        assert_eq!(e["code"], code, "{args}: {e}");
    }
    assert_eq!(support::files_under(dir.path(), &[]), snapshot);
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------
// duplicate_file, folders, list_resources_by_type

#[tokio::test]
async fn duplicate_gives_the_copy_its_own_uid() {
    let dir = support::demo_copy();
    let client = support::connect(dir.path()).await;
    let before = support::files_under(dir.path(), &[]);

    let d = support::call_ok(
        &client,
        "duplicate_file",
        json!({"from": "res://scenes/player.tscn", "to": "res://scenes/player2.tscn", "dry_run": true}),
    )
    .await;
    assert_eq!(support::files_under(dir.path(), &[]), before);
    let r = support::call_ok(
        &client,
        "duplicate_file",
        json!({"from": "res://scenes/player.tscn", "to": "res://scenes/player2.tscn", "confirm": true}),
    )
    .await;
    assert_eq!(r["files"], d["files"]);
    assert_committed(&client, &r).await;
    let uid = r["uid"]["uid"].as_str().unwrap();
    assert_ne!(uid, "uid://dq8w3e5r7t4yb");
    assert!(uid.starts_with("uid://") && !uid[6..].contains(['z', '9']));
    let original = String::from_utf8(before["scenes/player.tscn"].clone()).unwrap();
    assert_eq!(
        read(dir.path(), "scenes/player2.tscn"),
        original.replacen("uid://dq8w3e5r7t4yb", uid, 1)
    );

    // A script gets a fresh .uid file; an imported asset leaves its uid to Godot.
    let s = support::call_ok(
        &client,
        "duplicate_file",
        json!({"from": "res://scripts/enemy.gd", "to": "res://scripts/enemy2.gd", "confirm": true}),
    )
    .await;
    let fresh = s["uid"]["uid"].as_str().unwrap();
    assert_eq!(
        read(dir.path(), "scripts/enemy2.gd.uid"),
        format!("{fresh}\n")
    );
    assert_eq!(
        read(dir.path(), "scripts/enemy2.gd"),
        read(dir.path(), "scripts/enemy.gd")
    );
    let i = support::call_ok(
        &client,
        "duplicate_file",
        json!({"from": "res://icon.svg", "to": "res://icon2.svg", "confirm": true}),
    )
    .await;
    assert_eq!(i["uid"]["uid"], Value::Null);
    assert!(!dir.path().join("icon2.svg.import").exists());
    let e = support::call_err(
        &client,
        "duplicate_file",
        json!({"from": "res://icon.svg", "to": "res://icon2.svg", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn folders_are_created_and_deleted_only_when_asked() {
    let dir = support::demo_copy();
    let client = support::connect(dir.path()).await;

    let d = support::call_ok(
        &client,
        "create_folder",
        json!({"path": "res://levels/forest", "dry_run": true}),
    )
    .await;
    assert_eq!(d["folders"], json!(["res://levels", "res://levels/forest"]));
    assert!(!dir.path().join("levels").exists());
    support::call_ok(
        &client,
        "create_folder",
        json!({"path": "res://levels/forest", "confirm": true}),
    )
    .await;
    assert!(dir.path().join("levels/forest").is_dir());
    let e = support::call_err(
        &client,
        "create_folder",
        json!({"path": "res://.godot/x", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED");
    let e = support::call_err(
        &client,
        "create_folder",
        json!({"path": "res://../x", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED");

    // A non-empty folder is refused without recursive.
    let e = support::call_err(
        &client,
        "delete_folder",
        json!({"path": "res://scripts", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert!(dir.path().join("scripts/enemy.gd").exists());
    let d = support::call_ok(
        &client,
        "delete_folder",
        json!({"path": "res://scripts", "recursive": true, "dry_run": true}),
    )
    .await;
    assert_eq!(d["files"].as_array().unwrap().len(), 10, "{d}");
    assert!(dir.path().join("scripts/enemy.gd").exists());
    let r = support::call_ok(
        &client,
        "delete_folder",
        json!({"path": "res://scripts", "recursive": true, "confirm": true}),
    )
    .await;
    assert_eq!(r["done"].as_array().unwrap().len(), 10);
    assert_committed(&client, &r).await;
    assert!(!dir.path().join("scripts").exists());
    // The empty folder needs no recursive.
    support::call_ok(
        &client,
        "delete_folder",
        json!({"path": "res://levels/forest", "confirm": true}),
    )
    .await;
    assert!(!dir.path().join("levels/forest").exists() && dir.path().join("levels").is_dir());
    let e = support::call_err(
        &client,
        "delete_folder",
        json!({"path": "res://", "recursive": true, "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn resources_are_listed_by_type_script_class_and_root() {
    let dir = support::demo_copy();
    // A binary resource Godot 4.4.1 saved (ResourceSaver.save(Curve.new(), …)).
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/files/curve.res"),
        dir.path().join("resources/curve.res"),
    )
    .unwrap();
    let client = support::connect(dir.path()).await;
    let curves =
        support::call_ok(&client, "list_resources_by_type", json!({"type": "Curve"})).await;
    assert_eq!(
        curves["items"],
        json!([{"path": "res://resources/curve.res", "type": "Curve"}])
    );
    let r = support::call_ok(
        &client,
        "list_resources_by_type",
        json!({"type": "PlayerStats"}),
    )
    .await;
    assert_eq!(r["total"], 1);
    assert_eq!(r["items"][0]["path"], "res://resources/player_stats.tres");
    assert_eq!(r["items"][0]["type"], "Resource");
    let scenes = support::call_ok(
        &client,
        "list_resources_by_type",
        json!({"type": "PackedScene", "limit": 2}),
    )
    .await;
    assert_eq!(
        (
            scenes["total"].clone(),
            scenes["returned"].clone(),
            scenes["next_offset"].clone()
        ),
        (json!(3), json!(2), json!(2))
    );
    let rest = support::call_ok(
        &client,
        "list_resources_by_type",
        json!({"type": "PackedScene", "offset": 2}),
    )
    .await;
    assert_eq!(rest["items"][0]["path"], "res://scenes/player.tscn");
    let by_root = support::call_ok(
        &client,
        "list_resources_by_type",
        json!({"type": "CharacterBody2D"}),
    )
    .await;
    assert_eq!(
        by_root["items"][0]["path"], "res://scenes/player.tscn",
        "{by_root}"
    );
    let themes = support::call_ok(
        &client,
        "list_resources_by_type",
        json!({"type": "Theme", "under": "res://resources"}),
    )
    .await;
    assert_eq!(themes["items"][0]["path"], "res://resources/ui_theme.tres");
    let e = support::call_err(
        &client,
        "list_resources_by_type",
        json!({"type": "Theme", "under": "res://../"}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED");
    let e = support::call_err(
        &client,
        "list_resources_by_type",
        json!({"type": "Curve", "under": "res://.godot"}),
    )
    .await;
    assert_eq!(e["code"], "PATH_REFUSED");
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------
// Against a real Godot 4.4

/// Runs `script` (a SceneTree script) headless in `project`; returns its output.
fn run_script(godot: &Path, project: &Path, script: &str) -> String {
    std::fs::write(project.join("check.gd"), script).unwrap();
    // A check script that errors never reaches its quit(): the frame bound ends the run
    // (and the checks on its output fail) instead of a hang.
    let log = support::run_godot(
        godot,
        project,
        &["--script", "res://check.gd", "--quit-after", "1000"],
    );
    std::fs::remove_file(project.join("check.gd")).unwrap();
    log
}

#[tokio::test]
async fn real_godot_material_loads_and_moved_scene_opens() {
    let Some(godot) = support::godot_bin("the engine loads a created material and a moved scene")
    else {
        return;
    };
    let dir = support::demo_copy();
    // The add-on is not part of this test; an enabled plugin that is absent only adds noise.
    let project = read(dir.path(), "project.godot").replace(
        "enabled=PackedStringArray(\"res://addons/godot_mcp/plugin.cfg\")",
        "enabled=PackedStringArray()",
    );
    std::fs::write(dir.path().join("project.godot"), project).unwrap();
    // A reference by path alone (no uid to fall back on): only the rewrite keeps it.
    std::fs::write(
        dir.path().join("scripts/spawner.gd"),
        "extends RefCounted\nconst HERO = preload(\"res://scenes/player.tscn\")\n",
    )
    .unwrap();
    // A Resource script with a class_name: create_resource of type "Inventory" writes a
    // file Godot loads (it wrote `[gd_resource type="Inventory"]`, which Godot refuses).
    std::fs::write(
        dir.path().join("scripts/inventory.gd"),
        "extends Resource\nclass_name Inventory\n@export var items: Array[String] = []\nfunc f():\n\tvar items: Array[int] = []\n",
    )
    .unwrap();
    support::run_godot(&godot, dir.path(), &["--import"]);
    let client = support::connect(dir.path()).await;
    support::call_ok(
        &client,
        "create_resource",
        json!({"path": "res://inv.tres", "type": "Inventory",
               "properties": {"items": ["sword", "shield"]}, "confirm": true}),
    )
    .await;
    support::call_ok(
        &client,
        "create_resource",
        json!({"path": "res://inv2.tres", "type": "Resource",
               "properties": {"script": "res://scripts/inventory.gd", "items": ["bow"]}, "confirm": true}),
    )
    .await;
    // Written as Godot saves it: a uid in the header, the script's uid on its
    // ext_resource (Godot's import wrote its .uid), the typed array as a typed array
    // (the member's type, not the function's local of the same name).
    let script_uid = read(dir.path(), "scripts/inventory.gd.uid");
    let inv = read(dir.path(), "inv.tres");
    let lines: Vec<&str> = inv.lines().collect();
    assert!(
        lines[0].starts_with(
            "[gd_resource type=\"Resource\" script_class=\"Inventory\" load_steps=2 format=3 uid=\"uid://"
        ),
        "{inv}"
    );
    assert_eq!(
        lines[2],
        format!(
            "[ext_resource type=\"Script\" uid=\"{}\" path=\"res://scripts/inventory.gd\" id=\"1_script\"]",
            script_uid.trim()
        ),
        "{inv}"
    );
    assert!(
        inv.contains("\nitems = Array[String]([\"sword\", \"shield\"])\n"),
        "{inv}"
    );

    // Keys by name, as people write them (agents typed raw key values: agent trials).
    support::call_ok(
        &client,
        "add_input_action",
        json!({"name": "dash_left", "events": [
            {"type": "key", "physical_keycode": "Left"}, {"type": "key", "keycode": "a"}],
            "confirm": true}),
    )
    .await;
    // Several actions in one write (issue #40: an input-map task was five calls).
    let added = support::call_ok(
        &client,
        "add_input_action",
        json!({"actions": [
            {"name": "leap", "events": [{"type": "key", "keycode": "Space"}]},
            {"name": "fire", "deadzone": 0.25,
             "events": [{"type": "mouse_button", "button_index": 1}]}],
            "confirm": true}),
    )
    .await;
    assert_eq!(
        (&added["setting"], &added["more"][0]["setting"]),
        (&json!("input/leap"), &json!("input/fire")),
        "{added}"
    );
    // One of them already there: refused, nothing written.
    let e = support::call_err(
        &client,
        "add_input_action",
        json!({"actions": [{"name": "crouch"}, {"name": "leap"}], "confirm": true}),
    )
    .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("leap already exists"),
        "{e}"
    );

    support::call_ok(
        &client,
        "create_material",
        json!({"path": "res://materials/m.tres", "textures": {"albedo": "res://icon.svg", "normal": "res://icon.svg"},
               "albedo_color": [1, 0.5, 0.25, 1], "roughness": 0.25, "metallic": 0.5,
               "emission_color": [0, 0, 1], "emission_energy": 2.0, "confirm": true}),
    )
    .await;
    support::call_ok(
        &client,
        "move_file",
        json!({"from": "res://scenes/player.tscn", "to": "res://scenes/actors/hero.tscn", "confirm": true}),
    )
    .await;
    support::call_ok(
        &client,
        "move_file",
        json!({"from": "res://scripts/player.gd", "to": "res://scripts/actors/hero.gd", "confirm": true}),
    )
    .await;
    support::call_ok(
        &client,
        "move_file",
        json!({"from": "res://icon.svg", "to": "res://art/icon.svg", "confirm": true}),
    )
    .await;
    client.cancel().await.unwrap();
    // What an editor's filesystem scan does after a move: re-import, refresh the uid cache.
    let import_log = support::run_godot(&godot, dir.path(), &["--import"]);

    let out = run_script(
        &godot,
        dir.path(),
        "extends SceneTree\n\
         func _initialize():\n\
         \tvar m: StandardMaterial3D = load(\"res://materials/m.tres\")\n\
         \tprint(\"MAT \", m.albedo_texture.resource_path, \" \", m.normal_enabled, \" \", m.normal_texture.resource_path)\n\
         \tprint(\"MAT \", m.albedo_color, \" \", m.roughness, \" \", m.metallic, \" \", m.emission_enabled, \" \", m.emission, \" \", m.emission_energy_multiplier)\n\
         \tvar s: PackedScene = load(\"res://scenes/main_2d.tscn\")\n\
         \tvar root = s.instantiate()\n\
         \tvar hero = root.find_child(\"Player\", true, false)\n\
         \tprint(\"SCENE \", hero.scene_file_path, \" \", hero.get_script().resource_path)\n\
         \tprint(\"PRELOAD \", load(\"res://scripts/spawner.gd\").HERO.resource_path)\n\
         \troot.free()\n\
         \tfor e in InputMap.action_get_events(\"dash_left\"):\n\
         \t\tprint(\"KEY \", OS.get_keycode_string(e.physical_keycode), \" \", OS.get_keycode_string(e.keycode))\n\
         \tprint(\"ACTIONS \", InputMap.has_action(\"leap\"), \" \", InputMap.action_get_deadzone(\"fire\"), \" \", InputMap.action_get_events(\"leap\").size(), \" \", InputMap.has_action(\"crouch\"))\n\
         \tfor p in [\"res://inv.tres\", \"res://inv2.tres\"]:\n\
         \t\tvar inv = load(p)\n\
         \t\tprint(\"INV \", p, \" \", inv.get_script().get_global_name(), \" \", inv.items)\n\
         \tquit()\n",
    );
    let mat: Vec<&str> = out.lines().filter(|l| l.starts_with("MAT ")).collect();
    assert_eq!(
        mat,
        [
            "MAT res://art/icon.svg true res://art/icon.svg",
            "MAT (1.0, 0.5, 0.25, 1.0) 0.25 0.5 true (0.0, 0.0, 1.0, 1.0) 2.0",
        ],
        "{out}"
    );
    assert!(
        out.contains("SCENE res://scenes/actors/hero.tscn res://scripts/actors/hero.gd"),
        "{out}"
    );
    assert!(
        out.contains("PRELOAD res://scenes/actors/hero.tscn"),
        "{out}"
    );
    let keys: Vec<&str> = out.lines().filter(|l| l.starts_with("KEY ")).collect();
    assert_eq!(keys, ["KEY Left ", "KEY  A"], "{out}");
    assert!(out.contains("ACTIONS true 0.25 1 false"), "{out}");
    let inv: Vec<&str> = out.lines().filter(|l| l.starts_with("INV ")).collect();
    assert_eq!(
        inv,
        [
            "INV res://inv.tres Inventory [\"sword\", \"shield\"]",
            "INV res://inv2.tres Inventory [\"bow\"]"
        ],
        "{out}"
    );
    // The headless build always says it has no renderer; any other error or warning
    // (a missing dependency, a failed load) fails the test.
    let problems: Vec<&str> = out
        .lines()
        .filter(|l| {
            l.starts_with("ERROR") || l.starts_with("WARNING") || l.contains("Failed loading")
        })
        .filter(|l| !l.contains("No renderers available"))
        .collect();
    assert!(
        problems.is_empty(),
        "{problems:?} in:\n{out}\nimport:\n{import_log}"
    );
}

// ---------------------------------------------------------------------------
// refusals that teach

/// Runs 6 and 9 of the agent benchmark: agents set `input/move_left` and
/// `autoload/GameState` with set_setting, were refused, and spent toolset calls on
/// add_input_action and register_autoload. set_setting now sets both, checked as those
/// tools check them and written as they write them.
#[tokio::test]
async fn autoloads_and_input_actions_are_set_through_set_setting() {
    let dir = support::demo_copy();
    std::fs::write(
        dir.path().join("score.gd"),
        "extends Node\nvar score := 0\n",
    )
    .unwrap();
    let client = support::connect_with(dir.path(), &[("GODOT_MCP_TOOLSETS", "")]).await;
    for (value, written) in [
        (json!("res://score.gd"), "Score=\"*res://score.gd\""),
        (json!("*res://score.gd"), "Points=\"*res://score.gd\""),
    ] {
        let name = written.split('=').next().unwrap();
        let r = support::call_ok(
            &client,
            "set_setting",
            json!({"settings": {format!("autoload/{name}"): value}, "confirm": true}),
        )
        .await;
        assert_eq!(r["applied"], true, "{r}");
        let godot = read(dir.path(), "project.godot");
        assert!(godot.contains(written), "{written} not in\n{godot}");
    }
    for (value, says) in [
        (json!("res://missing.gd"), "does not exist"),
        (json!("res://icon.svg"), "an autoload is a script"),
        (json!(3), "takes the script or scene"),
    ] {
        let e = support::call_err(
            &client,
            "set_setting",
            json!({"name": "autoload/Bad", "value": value, "confirm": true}),
        )
        .await;
        assert!(e["message"].as_str().unwrap().contains(says), "{e}");
    }
    // An input action: its events, keys by name (physical, as the editor records them)
    // or event objects; written as add_input_action writes it.
    let r = support::call_ok(
        &client,
        "set_setting",
        json!({"settings": {
            "input/dash": ["Space", {"type": "mouse_button", "button_index": 1}],
            "input/aim": {"deadzone": 0.2, "events": ["Left"]}
        }, "confirm": true}),
    )
    .await;
    assert_eq!(r["applied"], true, "{r}");
    let godot = read(dir.path(), "project.godot");
    for written in [
        "dash={\n\"deadzone\": 0.5,",
        "\"physical_keycode\":32,",
        "Object(InputEventMouseButton,",
        "aim={\n\"deadzone\": 0.2,",
        "\"physical_keycode\":4194319,",
    ] {
        assert!(godot.contains(written), "{written} not in\n{godot}");
    }
    for (value, says) in [
        (json!(1), "takes its events"),
        (json!(["NoSuchKey"]), "NoSuchKey"),
        (json!({"events": ["A"], "dz": 1}), "takes its events"),
    ] {
        let e = support::call_err(
            &client,
            "set_setting",
            json!({"name": "input/bad", "value": value, "confirm": true}),
        )
        .await;
        assert!(e["message"].as_str().unwrap().contains(says), "{e}");
    }
    client.cancel().await.unwrap();
}
