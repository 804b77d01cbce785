//! Issue #40, items 1 and 2 on disk: `get_resource_properties` lists every property of a
//! `.tres` (stored values, the class's others with type and default), and
//! `cross_scene_set_property` takes a `res://` path for a Resource-typed property,
//! writing an `[ext_resource]` with the file's uid and a reference to it.
//!
//! The real_godot_ tests hand the results to the engine: the property names and values
//! the file stores against what Godot loads, and the texture the edited scenes hold.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect, connect_with};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/corpus");
const TILESET: &str = "demo-4.4/2d/physics_platformer/tileset.tres";

/// A project holding the corpus TileSet (as res://tileset.tres; its atlas image, which
/// the corpus does not keep, replaced by the demo's icon.svg), a TileSet with occlusion,
/// navigation and custom data layers, and a Curve.
fn resource_project() -> tempfile::TempDir {
    let project = support::tiny_project("resprops");
    for f in ["icon.svg", "icon.svg.import"] {
        std::fs::copy(support::demo_project().join(f), project.path().join(f)).unwrap();
    }
    let tileset = std::fs::read_to_string(Path::new(CORPUS).join(TILESET))
        .unwrap()
        .replace(
            "uid=\"uid://dbcdt0wqr3gd3\" path=\"res://tiles_demo.png\"",
            "uid=\"uid://bvc2gk7x0d3ns\" path=\"res://icon.svg\"",
        );
    assert!(tileset.contains("res://icon.svg"));
    std::fs::write(project.path().join("tileset.tres"), tileset).unwrap();
    std::fs::write(
        project.path().join("layers.tres"),
        "[gd_resource type=\"TileSet\" format=3]\n\n[resource]\n\
         occlusion_layer_0/light_mask = 3\nnavigation_layer_0/layers = 2\n\
         custom_data_layer_0/name = \"hp\"\ncustom_data_layer_0/type = 2\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("curve.tres"),
        "[gd_resource type=\"Curve\" format=3]\n\n[resource]\nmax_value = 2.0\n\
         _data = [Vector2(0, 0), 0.0, 1.5, 0, 0, Vector2(1, 2), 0.5, 0.0, 0, 1]\n\
         point_count = 2\n",
    )
    .unwrap();
    project
}

fn row<'a>(page: &'a Value, name: &str) -> Option<&'a Value> {
    page["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
}

#[tokio::test]
async fn resource_properties_list_stored_values_by_page_and_sub_resource() {
    let project = resource_project();
    // Without a Godot binary (unless one is on PATH) only the stored values are known.
    let client = connect_with(project.path(), &[("GODOT_BIN", "")]).await;
    let page = call_ok(
        &client,
        "get_resource_properties",
        json!({"path": "res://tileset.tres"}),
    )
    .await;
    assert_eq!(page["class"], "TileSet", "{page}");
    let layer = row(&page, "physics_layer_0/collision_layer").expect("the stored layer");
    assert_eq!(layer["value"], 1, "{page}");
    assert_eq!(layer["stored"], true, "{page}");
    assert_eq!(
        row(&page, "tile_size").unwrap()["value"]["$type"],
        "Vector2i"
    );
    let source = row(&page, "sources/0").unwrap();
    assert_eq!(source["stored"], true, "{page}");

    // Paged: one at a time, in the same order.
    let first = call_ok(
        &client,
        "get_resource_properties",
        json!({"path": "res://tileset.tres", "limit": 1}),
    )
    .await;
    assert_eq!(first["total"], page["total"], "{first}");
    assert_eq!(first["next_offset"], 1, "{first}");
    assert_eq!(first["properties"][0], page["properties"][0]);
    let second = call_ok(
        &client,
        "get_resource_properties",
        json!({"path": "res://tileset.tres", "offset": 1, "limit": 1}),
    )
    .await;
    assert_eq!(second["properties"][0], page["properties"][1]);

    // A sub-resource by id: the atlas source's own properties.
    let sub = call_ok(
        &client,
        "get_resource_properties",
        json!({"path": "res://tileset.tres", "sub_resource": "TileSetAtlasSource_va8am"}),
    )
    .await;
    assert_eq!(sub["class"], "TileSetAtlasSource", "{sub}");
    assert_eq!(
        row(&sub, "texture_region_size").unwrap()["value"]["$type"],
        "Vector2i",
        "{sub}"
    );
    let e = call_err(
        &client,
        "get_resource_properties",
        json!({"path": "res://tileset.tres", "sub_resource": "nope"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains("TileSetAtlasSource_va8am"),
        "{e}"
    );
    client.cancel().await.unwrap();
}

/// Every `.tres` of the corpus (83 files of Godot's demos) answers, one page holding every
/// property the file stores, each as stored.
#[tokio::test]
async fn resource_properties_answer_for_every_corpus_tres() {
    let project = support::tiny_project("corpus_tres");
    let mut files = Vec::new();
    let mut stack = vec![Path::new(CORPUS).to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "tres") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 50, "{}", files.len());
    for (i, f) in files.iter().enumerate() {
        std::fs::copy(f, project.path().join(format!("r{i}.tres"))).unwrap();
    }
    let client = connect_with(project.path(), &[("GODOT_BIN", "")]).await;
    for (i, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        let parsed = godot_mcp_formats::parse_resource(&text).unwrap();
        let page = call_ok(
            &client,
            "get_resource_properties",
            json!({"path": format!("res://r{i}.tres"), "limit": 1000}),
        )
        .await;
        let stored: Vec<&str> = page["properties"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["stored"] == true)
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        let names: Vec<&str> = parsed.properties.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(stored, names, "{}", f.display());
        assert_eq!(
            page["class"],
            parsed.resource_type.as_str(),
            "{}",
            f.display()
        );
    }
    client.cancel().await.unwrap();
}

/// Prints, for the resource at the first user argument, each stored property
/// (usage STORAGE) with its value as var_to_str, one JSON object.
const PROPS_GD: &str = r#"extends SceneTree

func _init():
	var path = OS.get_cmdline_user_args()[0]
	var res = load(path)
	if res == null:
		print("PROPS null")
		quit(1)
		return
	var out = {}
	for p in res.get_property_list():
		out[p.name] = {"stored": (p.usage & PROPERTY_USAGE_STORAGE) != 0, "value": var_to_str(res.get(p.name))}
	print("PROPS " + JSON.stringify(out))
	quit()
"#;

/// The properties Godot lists for `path` of `project`: name → (stored, value text).
fn godot_props(godot: &Path, project: &Path, path: &str) -> serde_json::Map<String, Value> {
    std::fs::write(project.join("props.gd"), PROPS_GD).unwrap();
    let log = support::run_godot(godot, project, &["--script", "res://props.gd", "--", path]);
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("PROPS "))
        .unwrap_or_else(|| panic!("no PROPS line:\n{log}"));
    serde_json::from_str::<Value>(line)
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn real_godot_resource_properties_are_the_ones_godot_loads() {
    let Some(godot) = support::godot_bin("Godot lists the properties of a loaded .tres") else {
        return;
    };
    let project = resource_project();
    support::run_godot(&godot, project.path(), &["--import"]);
    let client = connect(project.path()).await;
    for (path, dynamic) in [
        (
            "res://tileset.tres",
            &[
                "physics_layer_0/collision_mask",
                "physics_layer_0/physics_material",
            ][..],
        ),
        (
            "res://layers.tres",
            &["occlusion_layer_0/sdf_collision"][..],
        ),
        (
            "res://curve.tres",
            &[
                "point_0/position",
                "point_0/right_tangent",
                "point_1/left_tangent",
                "point_1/left_mode",
            ][..],
        ),
    ] {
        let page = call_ok(
            &client,
            "get_resource_properties",
            json!({"path": path, "limit": 1000}),
        )
        .await;
        assert!(page["declared_note"].is_null(), "{page}");
        let godot_list = godot_props(&godot, project.path(), path);
        let rows = page["properties"].as_array().unwrap();
        // Every stored value is one Godot loads, with the value Godot holds.
        for r in rows.iter().filter(|r| r["stored"] == true) {
            let name = r["name"].as_str().unwrap();
            let g = godot_list
                .get(name)
                .unwrap_or_else(|| panic!("{path}: Godot lists no {name}: {godot_list:?}"));
            if r["value"].is_number() {
                let held: f64 = g["value"].as_str().unwrap().parse().unwrap();
                assert_eq!(r["value"].as_f64().unwrap(), held, "{path} {name}: {g}");
            }
        }
        // Every declared property Godot saves (and each dynamic one named) is listed; the
        // dynamic families not modelled (a TileSet's tile_proxies/…) are not checked.
        for (name, g) in &godot_list {
            // Internal `_` properties (a Curve's `_limits`) are in no class reference.
            if g["stored"] == true
                && name != "script"
                && !name.contains('/')
                && !name.starts_with('_')
            {
                assert!(
                    rows.iter().any(|r| r["name"] == name.as_str()),
                    "{path}: Godot stores {name}, the tool does not list it"
                );
            }
        }
        for name in dynamic {
            assert!(
                godot_list.contains_key(*name),
                "{path}: Godot has no {name}"
            );
            let r = rows
                .iter()
                .find(|r| r["name"] == *name)
                .unwrap_or_else(|| panic!("{path}: the tool lists no {name}: {page}"));
            assert_eq!(r["stored"], false, "{r}");
        }
    }
    // A point's value is the one Godot gives.
    let page = call_ok(
        &client,
        "get_resource_properties",
        json!({"path": "res://curve.tres", "limit": 1000}),
    )
    .await;
    let p1 = row(&page, "point_1/position").unwrap();
    assert_eq!(
        p1["value"],
        json!({"$type": "Vector2", "x": 1.0, "y": 2.0}),
        "{p1}"
    );
    let godot_list = godot_props(&godot, project.path(), "res://curve.tres");
    assert_eq!(godot_list["point_1/position"]["value"], "Vector2(1, 2)");
    client.cancel().await.unwrap();
}

/// A project with icon.svg (imported: its .import carries the uid) and two scenes
/// each with a Sprite2D that has no texture.
fn sprite_project() -> tempfile::TempDir {
    let project = support::tiny_project("crosstex");
    let root = project.path();
    for f in ["icon.svg", "icon.svg.import"] {
        std::fs::copy(support::demo_project().join(f), root.join(f)).unwrap();
    }
    std::fs::write(
        root.join("a.tscn"),
        "[gd_scene load_steps=2 format=3 uid=\"uid://aaaaaaaaaaaa\"]\n\n\
         [sub_resource type=\"RectangleShape2D\" id=\"RectangleShape2D_a\"]\n\n\
         [node name=\"A\" type=\"Node2D\"]\n\n\
         [node name=\"Sprite\" type=\"Sprite2D\" parent=\".\"]\n\
         position = Vector2(4, 4)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("b.tscn"),
        "[gd_scene format=3]\n\n[node name=\"Sprite\" type=\"Sprite2D\"]\n",
    )
    .unwrap();
    project
}

#[tokio::test]
async fn cross_scene_res_path_writes_an_ext_resource_with_the_uid() {
    let project = sprite_project();
    let root = project.path();
    let client = connect(root).await;
    let done = call_ok(
        &client,
        "cross_scene_set_property",
        json!({"type": "Sprite2D", "property": "texture", "value": "res://icon.svg",
               "confirm": true}),
    )
    .await;
    assert_eq!(done["files"].as_array().unwrap().len(), 2, "{done}");
    assert_eq!(done["value"], "res://icon.svg", "{done}");
    for f in ["a.tscn", "b.tscn"] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        let scene = godot_mcp_formats::parse_scene(&text).unwrap();
        let ext = scene
            .ext_resources
            .iter()
            .find(|e| e.path == "res://icon.svg")
            .unwrap_or_else(|| panic!("{f} has no ext_resource for icon.svg:\n{text}"));
        assert_eq!(ext.resource_type, "Texture2D", "{text}");
        assert_eq!(ext.uid.as_deref(), Some("uid://bvc2gk7x0d3ns"), "{text}");
        let sprite = scene.nodes.iter().find(|n| n.name == "Sprite").unwrap();
        assert_eq!(
            sprite.property("texture").map(|p| p.text.trim()),
            Some(format!("ExtResource(\"{}\")", ext.id).as_str()),
            "{text}"
        );
    }
    let a = std::fs::read_to_string(root.join("a.tscn")).unwrap();
    assert!(a.starts_with("[gd_scene load_steps=3 "), "{a}");

    // A file that does not exist: RESOURCE_NOT_FOUND, nothing written.
    let before = support::files_under(root, &[".godot"]);
    let e = call_err(
        &client,
        "cross_scene_set_property",
        json!({"type": "Sprite2D", "property": "texture", "value": "res://missing.png",
               "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    assert_eq!(e["param"], "value", "{e}");
    assert_eq!(support::files_under(root, &[".godot"]), before);
    client.cancel().await.unwrap();
}

const CHECK_TEXTURE_GD: &str = r#"extends SceneTree

func _init():
	var out = {}
	for s in ["res://a.tscn", "res://b.tscn"]:
		var root = load(s).instantiate()
		var sprite = root if root.name == "Sprite" else root.get_node("Sprite")
		var t = sprite.texture
		out[s] = t.resource_path if t is Texture2D else str(t)
	print("TEXTURES " + JSON.stringify(out))
	quit()
"#;

#[tokio::test]
async fn real_godot_loads_the_texture_cross_scene_set_wrote() {
    let Some(godot) = support::godot_bin("Godot loads the texture a cross-scene set wrote") else {
        return;
    };
    let project = sprite_project();
    let root = project.path();
    let client = connect(root).await;
    call_ok(
        &client,
        "cross_scene_set_property",
        json!({"type": "Sprite2D", "property": "texture", "value": "res://icon.svg",
               "confirm": true}),
    )
    .await;
    client.cancel().await.unwrap();
    std::fs::write(root.join("check.gd"), CHECK_TEXTURE_GD).unwrap();
    support::run_godot(&godot, root, &["--import"]);
    let log = support::run_godot(&godot, root, &["--script", "res://check.gd"]);
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("TEXTURES "))
        .unwrap_or_else(|| panic!("no TEXTURES line:\n{log}"));
    assert_eq!(
        serde_json::from_str::<Value>(line).unwrap(),
        json!({"res://a.tscn": "res://icon.svg", "res://b.tscn": "res://icon.svg"}),
        "{log}"
    );
}
