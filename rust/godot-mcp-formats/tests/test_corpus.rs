//! Every file of tests/fixtures/corpus (Godot files no one here wrote) parses.

mod common;

use common::{corpus_dir, walk};

use godot_mcp_formats::{parse_project, parse_resource, parse_scene};

#[test]
fn every_corpus_file_parses() {
    let mut files = Vec::new();
    walk(&corpus_dir(), &mut files);
    let mut failures = Vec::new();
    let (mut scenes, mut resources, mut projects) = (0, 0, 0);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        let result = if name.ends_with(".tscn") {
            scenes += 1;
            std::fs::read_to_string(path).map(|t| parse_scene(&t).map(|_| ()))
        } else if name.ends_with(".tres") {
            resources += 1;
            std::fs::read_to_string(path).map(|t| parse_resource(&t).map(|_| ()))
        } else if name == "project.godot" {
            projects += 1;
            std::fs::read_to_string(path).map(|t| parse_project(&t).map(|_| ()))
        } else {
            continue;
        };
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(format!("{}: {e}", path.display())),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    println!("corpus: {scenes} scenes, {resources} resources, {projects} projects");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(corpus_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A Godot 3 editor's format=2 files: integer ids in headers and in
/// `SubResource( 1 )` / `ExtResource( 1 )`, which Godot 4's loader takes as "1".
#[test]
fn format_2_integer_ids() {
    let res = parse_resource(&read(
        "demo-3x/2d/platformer/assets/theme/user_interface.tres",
    ))
    .unwrap();
    assert_eq!(res.format, 2);
    assert_eq!(res.ext_resources[0].id, "1");
    let ids: Vec<_> = res.sub_resources.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
    let font = res
        .properties
        .iter()
        .find(|p| p.name == "default_font")
        .unwrap();
    assert_eq!(
        font.value,
        godot_mcp_formats::Literal::SubResource("6".into())
    );
    let data = &res.sub_resources[5].properties[1];
    assert_eq!(
        data.value,
        godot_mcp_formats::Literal::ExtResource("1".into())
    );
}

/// `index="2"`: Godot writes the index quoted; its loader converts it to an int.
#[test]
fn quoted_index_of_inherited_scenes() {
    let scene = parse_scene(&read(
        "demo-3x/2d/role_playing_game/turn_combat/combatants/Opponent.tscn",
    ))
    .unwrap();
    let timer = scene.node("Timer").unwrap();
    assert_eq!(timer.index, Some(2));
    assert_eq!(scene.editable, ["Sprite"]);
    let enemy = parse_scene(&read("demo-head/3d/platformer/enemy/enemy.tscn")).unwrap();
    let indexed: Vec<_> = enemy.nodes.iter().filter_map(|n| n.index).collect();
    assert_eq!(indexed, [0, 1, 2, 1]);
}

/// A Godot 4.6 scene: format=4, `unique_id=` on every node header (kept), a
/// TileMapLayer's base64 `tile_map_data`.
#[test]
fn godot_4_6_scene_with_unique_ids_and_base64_tiles() {
    let scene = parse_scene(&read("engine/godot-4.6/base.tscn")).unwrap();
    assert_eq!(scene.format, 4);
    for node in &scene.nodes {
        assert!(
            node.other_attributes.iter().any(|p| p.name == "unique_id"),
            "{}",
            node.path
        );
    }
    let cells = godot_mcp_formats::tilemap::node_cells(scene.node("Ground").unwrap()).unwrap();
    assert_eq!(cells.len(), 30);
}

/// `null` in an action's events (what `ProjectSettings.save()` writes for it).
#[test]
fn input_action_with_null_events() {
    let p = parse_project(&read("engine/input-null/project.godot")).unwrap();
    let jump = p.input_action("jump").unwrap();
    assert!(matches!(jump.events[..], [Some(_), None]));
    let fire = p.input_action("fire").unwrap();
    assert_eq!(fire.events, [None]);
}
