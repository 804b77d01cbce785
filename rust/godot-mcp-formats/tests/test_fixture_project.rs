//! Every file of the checked-in `godot_project/` parses, and says what it holds.

use std::path::{Path, PathBuf};

use godot_mcp_formats::{
    InputEventSummary, Literal, ResourceLink, parse_project, parse_resource, parse_scene,
};

fn project_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../godot_project")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(project_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_with_ext(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

#[test]
fn every_scene_and_resource_in_the_fixture_parses() {
    let mut scenes = Vec::new();
    files_with_ext(&project_dir(), "tscn", &mut scenes);
    let mut resources = Vec::new();
    files_with_ext(&project_dir(), "tres", &mut resources);
    assert_eq!(scenes.len(), 3, "{scenes:?}");
    assert_eq!(resources.len(), 2, "{resources:?}");
    for path in scenes {
        let text = std::fs::read_to_string(&path).unwrap();
        let scene = parse_scene(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // load_steps, when written, is what Godot computes: resources + 1.
        if let Some(steps) = scene.load_steps {
            let expected = scene.ext_resources.len() + scene.sub_resources.len() + 1;
            assert_eq!(steps as usize, expected, "{}", path.display());
        }
    }
    for path in resources {
        let text = std::fs::read_to_string(&path).unwrap();
        parse_resource(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn ext_resource_paths_exist_in_the_fixture() {
    for rel in ["scenes/main_2d.tscn", "scenes/player.tscn"] {
        let scene = parse_scene(&read(rel)).unwrap();
        for ext in &scene.ext_resources {
            let rel_path = ext.path.strip_prefix("res://").unwrap();
            assert!(
                project_dir().join(rel_path).is_file(),
                "{rel}: {}",
                ext.path
            );
        }
    }
}

#[test]
fn project_godot_settings() {
    let p = parse_project(&read("project.godot")).unwrap();
    assert_eq!(p.config_version, 5);
    assert_eq!(p.name.as_deref(), Some("Godot MCP Demo"));
    assert_eq!(p.main_scene.as_deref(), Some("res://scenes/main_2d.tscn"));
    assert_eq!(p.features, ["4.4", "Forward Plus"]);
    assert_eq!(p.icon.as_deref(), Some("res://icon.svg"));
    assert_eq!(p.enabled_plugins, ["res://addons/godot_mcp/plugin.cfg"]);

    assert_eq!(p.autoloads.len(), 1);
    let a = &p.autoloads[0];
    assert_eq!(
        (a.name.as_str(), a.path.as_str(), a.singleton),
        ("GameState", "res://scripts/game_state.gd", true)
    );

    let names: Vec<_> = p.input_actions.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "move_left",
            "move_right",
            "move_up",
            "move_down",
            "shoot",
            "jump"
        ]
    );
    let left = p.input_action("move_left").unwrap();
    assert_eq!(left.deadzone, Some(0.2));
    assert_eq!(left.events.len(), 3);
    assert!(matches!(
        &left.events[0],
        Some(InputEventSummary::Key { physical_keycode: 65, key: Some(k), .. }) if k == "A"
    ));
    assert!(matches!(
        &left.events[1],
        Some(InputEventSummary::Key { physical_keycode: 4194319, key: Some(k), .. }) if k == "Left"
    ));
    assert!(matches!(
        left.events[2],
        Some(InputEventSummary::JoypadMotion { axis: 0, axis_value, device: -1 }) if axis_value == -1.0
    ));
    let shoot = p.input_action("shoot").unwrap();
    assert!(matches!(
        &shoot.events[0],
        Some(InputEventSummary::MouseButton { button_index: 1, button: Some(b), double_click: false }) if b == "Left"
    ));
    assert!(matches!(
        shoot.events[1],
        Some(InputEventSummary::JoypadButton {
            button_index: 0,
            ..
        })
    ));
    let jump = p.input_action("jump").unwrap();
    assert_eq!(jump.deadzone, Some(0.5));
    assert!(
        matches!(&jump.events[..], [Some(InputEventSummary::Key { key: Some(k), .. })] if k == "Space")
    );

    // Raw sections are all kept, with the original text of each value.
    let tags: Vec<_> = p.sections.iter().map(|s| s.tag.as_str()).collect();
    assert_eq!(
        tags,
        [
            "application",
            "autoload",
            "display",
            "editor_plugins",
            "input",
            "layer_names",
            "rendering"
        ]
    );
    let width = p.setting("display", "window/size/viewport_width").unwrap();
    assert_eq!(
        (width.text.as_str(), &width.value),
        ("1152", &Literal::Int(1152))
    );
    let raw_left = p.setting("input", "move_left").unwrap();
    assert!(raw_left.text.starts_with("{\n\"deadzone\": 0.2,"));
    assert!(raw_left.text.ends_with("]\n}"));
}

#[test]
fn main_2d_scene_tree() {
    let s = parse_scene(&read("scenes/main_2d.tscn")).unwrap();
    assert_eq!(s.format, 3);
    assert_eq!(s.uid.as_deref(), Some("uid://b6x1f3k2m7qcd"));
    assert_eq!(s.ext_resources.len(), 4);
    assert_eq!(s.sub_resources.len(), 1);
    assert_eq!(s.sub_resources[0].resource_type, "RectangleShape2D");

    let paths: Vec<_> = s.nodes.iter().map(|n| n.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            ".",
            "Background",
            "Player",
            "Enemy",
            "Enemy/CollisionShape2D",
            "Enemy/Sprite2D",
            "HUD",
            "HUD/ScoreLabel",
            "SpawnTimer"
        ]
    );
    let root = s.root().unwrap();
    assert_eq!(
        (root.name.as_str(), root.node_type.as_deref()),
        ("Main", Some("Node2D"))
    );
    assert_eq!(root.parent, None);
    assert_eq!(
        root.script.as_ref().and_then(ResourceLink::path),
        Some("res://scripts/main.gd")
    );

    let player = s.node("Player").unwrap();
    assert_eq!(player.node_type, None);
    let instance = player.instance.as_ref().unwrap();
    assert_eq!(instance.path, "res://scenes/player.tscn");
    assert_eq!(instance.uid.as_deref(), Some("uid://dq8w3e5r7t4yb"));

    let enemy = s.node("Enemy").unwrap();
    assert_eq!(enemy.groups, ["enemies"]);
    assert_eq!(
        enemy.script.as_ref().and_then(ResourceLink::path),
        Some("res://scripts/enemy.gd")
    );
    let props: Vec<_> = enemy
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.text.as_str()))
        .collect();
    assert_eq!(
        props,
        [
            ("position", "Vector2(900, 324)"),
            ("collision_layer", "4"),
            ("collision_mask", "3"),
            ("script", "ExtResource(\"4_en3my\")"),
            ("speed", "120.0"),
        ]
    );
    assert_eq!(
        enemy.property("speed").unwrap().value,
        Literal::Float(120.0)
    );

    let shape = s.node("Enemy/CollisionShape2D").unwrap();
    assert_eq!(shape.parent.as_deref(), Some("Enemy"));
    assert_eq!(
        shape.property("shape").unwrap().value,
        Literal::SubResource("RectangleShape2D_w1a2b".into())
    );
    assert_eq!(
        s.node("HUD/ScoreLabel").unwrap().groups,
        ["hud", "persistent"]
    );
    assert_eq!(
        s.node("HUD/ScoreLabel")
            .unwrap()
            .property("theme_override_font_sizes/font_size")
            .unwrap()
            .value,
        Literal::Int(24)
    );

    // In the order the editor saves them (Godot 4.4 writes this connection first).
    assert_eq!(s.connections.len(), 2);
    assert_eq!(s.connections[0].flags, Some(3));
    let c = &s.connections[1];
    assert_eq!(
        (
            c.signal.as_str(),
            c.from.as_str(),
            c.to.as_str(),
            c.method.as_str(),
            c.flags
        ),
        (
            "timeout",
            "SpawnTimer",
            ".",
            "_on_spawn_timer_timeout",
            None
        )
    );
    assert_eq!(s.editable, ["Player"]);
}

#[test]
fn player_scene_is_a_character_with_stats() {
    let s = parse_scene(&read("scenes/player.tscn")).unwrap();
    assert_eq!(s.nodes.len(), 4);
    let root = s.root().unwrap();
    assert_eq!(root.node_type.as_deref(), Some("CharacterBody2D"));
    assert_eq!(root.groups, ["player"]);
    let stats = root.property("stats").unwrap();
    assert_eq!(stats.value, Literal::ExtResource("3_st4ts".into()));
    assert_eq!(
        s.ext_resource("3_st4ts").unwrap().path,
        "res://resources/player_stats.tres"
    );
    assert!(s.node("Camera2D").is_some());
    assert!(s.connections.is_empty());
}

#[test]
fn level_3d_scene_has_transforms_and_meshes() {
    let s = parse_scene(&read("scenes/level_3d.tscn")).unwrap();
    assert!(s.ext_resources.is_empty());
    let types: Vec<_> = s
        .sub_resources
        .iter()
        .map(|r| r.resource_type.as_str())
        .collect();
    assert_eq!(
        types,
        // In the order the editor saves them: as the nodes first use them.
        ["Environment", "StandardMaterial3D", "PlaneMesh", "BoxMesh"]
    );
    assert_eq!(s.nodes.len(), 7);
    let camera = s.node("Camera3D").unwrap();
    match &camera.property("transform").unwrap().value {
        Literal::Constructor { name, args } => {
            assert_eq!(name, "Transform3D");
            assert_eq!(args.len(), 12);
            assert_eq!(args[10].as_f64(), Some(4.0));
        }
        other => panic!("{other:?}"),
    }
    let crate_node = s.node("Props/Crate").unwrap();
    assert_eq!(crate_node.groups, ["props"]);
    assert_eq!(
        crate_node.property("mesh").unwrap().value,
        Literal::SubResource("BoxMesh_b0x1e".into())
    );
    assert_eq!(
        s.node("Sun").unwrap().node_type.as_deref(),
        Some("DirectionalLight3D")
    );
}

#[test]
fn tres_resources() {
    let r = parse_resource(&read("resources/player_stats.tres")).unwrap();
    assert_eq!(r.resource_type, "Resource");
    assert_eq!(r.script_class.as_deref(), Some("PlayerStats"));
    assert_eq!(r.uid.as_deref(), Some("uid://bq5s7t2a8kxw3"));
    assert_eq!(
        r.script.as_ref().and_then(ResourceLink::path),
        Some("res://scripts/player_stats.gd")
    );
    let abilities = r.properties.iter().find(|p| p.name == "abilities").unwrap();
    assert_eq!(
        abilities.value.as_string_list().unwrap(),
        ["dash", "double_jump"]
    );

    let theme = parse_resource(&read("resources/ui_theme.tres")).unwrap();
    assert_eq!(theme.resource_type, "Theme");
    assert_eq!(theme.sub_resources.len(), 2);
    assert_eq!(theme.properties.len(), 5);
    assert_eq!(theme.properties[3].name, "PanelContainer/styles/panel");
}

#[test]
fn results_serialize_to_json() {
    let s = parse_scene(&read("scenes/main_2d.tscn")).unwrap();
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["nodes"][3]["path"], "Enemy");
    assert_eq!(json["nodes"][3]["type"], "CharacterBody2D");
    assert_eq!(
        json["nodes"][2]["instance"]["path"],
        "res://scenes/player.tscn"
    );
    // A property's parsed text has no JSON form of its own (the value model's is
    // variant::Value's): the file's text and line are what serialize.
    assert!(json["nodes"][3]["properties"][0].get("value").is_none());
    assert!(json["nodes"][3]["properties"][0]["text"].is_string());
    let p = serde_json::to_value(parse_project(&read("project.godot")).unwrap()).unwrap();
    assert_eq!(p["input_actions"][0]["events"][0]["kind"], "key");
}

#[test]
fn scripts_and_uid_files_are_present() {
    for script in ["main", "player", "enemy", "game_state", "player_stats"] {
        let gd = read(&format!("scripts/{script}.gd"));
        assert!(
            gd.starts_with("extends ") || gd.starts_with("class_name "),
            "{script}"
        );
        let uid = read(&format!("scripts/{script}.gd.uid"));
        assert!(uid.trim().starts_with("uid://"), "{script}");
    }
    // The script uids the scenes record are the ones beside the scripts.
    let s = parse_scene(&read("scenes/main_2d.tscn")).unwrap();
    let main = s.ext_resource("1_m4in0").unwrap();
    assert_eq!(
        main.uid.as_deref(),
        Some(read("scripts/main.gd.uid").trim())
    );
}
