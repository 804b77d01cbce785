//! The file-plane text writers over every file of tests/fixtures/corpus: writing a
//! value back unchanged gives the same bytes, and one edit changes only its own lines
//! (a 4.6 scene's `unique_id=` headers included).

mod common;

use std::path::{Path, PathBuf};

use common::{corpus_dir, walk};

use godot_mcp_formats::project_edit::ConfigText;
use godot_mcp_formats::scene_edit::set_node_property;
use godot_mcp_formats::{SubResource, parse_project, parse_scene};

fn files(name_ends: &[&str]) -> Vec<(PathBuf, String)> {
    let mut all = Vec::new();
    walk(&corpus_dir(), &mut all);
    all.into_iter()
        .filter(|p| name_ends.iter().any(|e| p.to_string_lossy().ends_with(e)))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Says how many `what` a test went through, and fails if the corpus holds fewer than
/// `at_least` (a shrunken corpus would prove less).
fn covered(what: &str, n: usize, at_least: usize) {
    println!("{what}: {n}");
    assert!(n >= at_least, "{what}: {n}, fewer than {at_least}");
}

/// The `[sub_resource]`s of `text`, a scene (`.tscn`) or a resource (`.tres`) by
/// `path`'s extension.
fn sub_resources(path: &Path, text: &str) -> Vec<SubResource> {
    if path.extension().is_some_and(|e| e == "tscn") {
        parse_scene(text).unwrap().sub_resources
    } else {
        godot_mcp_formats::parse_resource(text)
            .unwrap()
            .sub_resources
    }
}

/// The lines of `a` and `b` that differ, as (line in a, line in b) ranges around
/// one changed block: everything before and after it must be equal.
fn changed_block<'a>(a: &'a str, b: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
    let (la, lb): (Vec<_>, Vec<_>) = (
        a.split_inclusive('\n').collect(),
        b.split_inclusive('\n').collect(),
    );
    let head = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    let tail = la[head..]
        .iter()
        .rev()
        .zip(lb[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (
        la[head..la.len() - tail].to_vec(),
        lb[head..lb.len() - tail].to_vec(),
    )
}

#[test]
fn project_settings_write_back_byte_identical_and_one_edit_touches_its_lines() {
    let mut keys = 0;
    for (path, text) in files(&["project.godot"]) {
        let config = ConfigText::parse(&text);
        let info = parse_project(&text).unwrap();
        for section in &info.sections {
            for prop in &section.properties {
                let value = config.get(&section.tag, &prop.name).unwrap();
                let same = config.set(&section.tag, &prop.name, value);
                assert!(
                    same == text,
                    "{}: [{}] {}",
                    path.display(),
                    section.tag,
                    prop.name
                );
                let edited = config.set(&section.tag, &prop.name, "12345");
                let (before, after) = changed_block(&text, &edited);
                assert_eq!(after.len(), 1, "{}: {}", path.display(), prop.name);
                assert!(
                    after[0].starts_with(&format!("{}=12345", prop.name)),
                    "{after:?}"
                );
                assert_eq!(
                    before.len(),
                    value.split('\n').count(),
                    "{}: {}",
                    path.display(),
                    prop.name
                );
                keys += 1;
            }
        }
    }
    println!("project.godot keys written back: {keys}");
    assert!(keys > 300, "{keys}");
}

#[test]
fn scene_properties_write_back_byte_identical_and_one_edit_touches_its_lines() {
    let mut props = 0;
    for (path, text) in files(&[".tscn"]) {
        let scene = parse_scene(&text).unwrap();
        for node in &scene.nodes {
            for prop in &node.properties {
                let same =
                    set_node_property(&text, &scene, &node.path, &prop.name, &prop.text).unwrap();
                assert!(
                    same.text == text,
                    "{}: {} {}",
                    path.display(),
                    node.path,
                    prop.name
                );
                props += 1;
            }
            // One new property: one line inserted, nothing else moves; headers
            // (unique_id= of 4.6 scenes) stay as they were.
            let edit = set_node_property(&text, &scene, &node.path, "editor_description", "\"x\"")
                .unwrap();
            let (before, after) = changed_block(&text, &edit.text);
            if edit.previous.is_none() {
                assert!(before.is_empty(), "{}: {}", path.display(), node.path);
                assert_eq!(
                    after,
                    ["editor_description = \"x\"\n"],
                    "{}: {}",
                    path.display(),
                    node.path
                );
            }
            let reparsed = parse_scene(&edit.text).unwrap();
            let ids = |s: &godot_mcp_formats::Scene| -> Vec<String> {
                s.nodes
                    .iter()
                    .flat_map(|n| {
                        n.other_attributes
                            .iter()
                            .map(|a| format!("{}={}", a.name, a.text))
                    })
                    .collect()
            };
            assert_eq!(ids(&reparsed), ids(&scene), "{}", path.display());
        }
    }
    println!("scene properties written back: {props}");
    assert!(props > 1000, "{props}");
}

/// Every AudioBusLayout of the corpus, read into the bus-layout writer and written
/// back with no change: Godot's own bytes (the writer is ResourceFormatSaverText's
/// layout). Printed per file when a newer editor's layout differs.
#[test]
fn bus_layouts_write_back_byte_identical() {
    use godot_mcp_formats::audio_bus::LayoutFile;
    let mut layouts = 0;
    let mut differ = Vec::new();
    for (path, text) in files(&[".tres"]) {
        let res = godot_mcp_formats::parse_resource(&text).unwrap();
        if res.resource_type != "AudioBusLayout" {
            continue;
        }
        layouts += 1;
        let written = LayoutFile::from_resource(&res).unwrap().to_text();
        if written != text {
            let (before, after) = changed_block(&text, &written);
            differ.push(format!("{}: {before:?} -> {after:?}", path.display()));
        }
    }
    covered("bus layouts written back", layouts, 4);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Every input action of every project.godot in the corpus (the `null` events of
/// engine/input-null included), through the input-map tools' writers
/// (tools/input/map.rs): written back unchanged it is the same bytes; add_input_event,
/// clear_input_action_events, remove_input_action and add_input_action each change
/// only the action's own lines, and the file reads back with that one change.
#[test]
fn input_map_edits_touch_only_their_action() {
    use godot_mcp_formats::input_event::{
        InputEventSpec, append_input_event, events_array_span, input_action_value,
    };
    let event = InputEventSpec::JoypadButton { button_index: 7 }
        .to_variant("event")
        .unwrap();
    let mut actions = 0;
    for (path, text) in files(&["project.godot"]) {
        let config = ConfigText::parse(&text);
        let info = parse_project(&text).unwrap();
        let other_keys = |edited: &str, except: &str| {
            let reparsed = ConfigText::parse(edited);
            for section in &info.sections {
                for prop in &section.properties {
                    if section.tag == "input" && prop.name == except {
                        continue;
                    }
                    assert_eq!(
                        reparsed.get(&section.tag, &prop.name),
                        config.get(&section.tag, &prop.name),
                        "{}: [{}] {} moved after editing {except}",
                        path.display(),
                        section.tag,
                        prop.name
                    );
                }
            }
        };
        for action in &info.input_actions {
            let at = format!("{}: {}", path.display(), action.name);
            let value = config.get("input", &action.name).unwrap();
            let lines = value.split('\n').count();
            // The action as an edited project.godot reads back.
            let reread_action = |edited: &str| {
                let project = parse_project(edited).unwrap();
                project
                    .input_actions
                    .into_iter()
                    .find(|a| a.name == action.name)
                    .unwrap()
            };
            assert!(config.set("input", &action.name, value) == text, "{at}");

            // add_input_event: the array's closing lines change, nothing else.
            let appended = append_input_event(value, &event).unwrap();
            let edited = config.set("input", &action.name, &appended);
            let (before, after) = changed_block(&text, &edited);
            assert!(before.len() <= lines && !after.is_empty(), "{at}");
            let got = reread_action(&edited);
            assert_eq!(got.events.len(), action.events.len() + 1, "{at}");
            assert_eq!(
                &got.events[..action.events.len()],
                &action.events[..],
                "{at}"
            );
            assert_eq!(got.deadzone, action.deadzone, "{at}");
            other_keys(&edited, &action.name);

            // clear_input_action_events: only the array's contents go.
            let (open, close) = events_array_span(value).unwrap();
            let cleared = format!("{}[]{}", &value[..open], &value[close + 1..]);
            let edited = config.set("input", &action.name, &cleared);
            let (before, _) = changed_block(&text, &edited);
            assert!(before.len() <= lines, "{at}");
            let got = reread_action(&edited);
            assert!(got.events.is_empty(), "{at}");
            assert_eq!(got.deadzone, action.deadzone, "{at}");
            other_keys(&edited, &action.name);

            // remove_input_action: exactly the action's lines, nothing put in their place.
            let edited = config.remove("input", &action.name).unwrap();
            let (before, after) = changed_block(&text, &edited);
            assert!(after.is_empty(), "{at}: {after:?}");
            assert_eq!(before.len(), lines, "{at}");
            assert!(before[0].starts_with(&format!("{}=", action.name)), "{at}");
            other_keys(&edited, &action.name);
            actions += 1;
        }
        // add_input_action: the new action's lines inserted, nothing else changes.
        if !info.input_actions.is_empty() {
            let value = input_action_value(0.5, std::slice::from_ref(&event));
            let edited = config.set("input", "roundtrip_new", &value);
            let (before, after) = changed_block(&text, &edited);
            assert!(before.is_empty(), "{}: {before:?}", path.display());
            assert_eq!(after.concat(), format!("roundtrip_new={value}\n"));
            other_keys(&edited, "roundtrip_new");
        }
    }
    println!("input actions edited: {actions}");
    assert!(actions > 60, "{actions}");
}

/// Every TileMapLayer's `tile_map_data` in the corpus (Godot 4.3+'s format=4 base64
/// form, 4.4 to 4.7 and 4.6's engine-written scene) through the tile-map writer
/// (`tilemap::set_cells_text`, written with the scene writer `set_node_property`, the
/// code path of cross_scene_set_property): with no edit it is the same bytes; one
/// changed cell and one new cell change only that property's line, in the same form,
/// and the scene reads back with exactly those cells.
#[test]
fn tile_map_data_writes_back_byte_identical_and_one_edit_touches_its_line() {
    use godot_mcp_formats::tilemap::{
        Cell, is_base64_bytes, node_cells, set_cells, set_cells_text,
    };
    let mut layers = 0;
    for (path, text) in files(&[".tscn"]) {
        let scene = parse_scene(&text).unwrap();
        for node in &scene.nodes {
            let Some(prop) = node.property("tile_map_data") else {
                continue;
            };
            let at = format!("{}: {}", path.display(), node.path);
            let same = set_cells_text(&prop.value, &[]).unwrap();
            assert!(same == prop.text, "{at}: {same:.80} vs {:.80}", prop.text);
            let written =
                set_node_property(&text, &scene, &node.path, "tile_map_data", &same).unwrap();
            assert!(written.text == text, "{at}");

            let cells = node_cells(node).unwrap();
            let first = cells[0];
            let edits = [
                Cell {
                    alternative: first.alternative + 1,
                    ..first
                },
                Cell {
                    coords: [-32000, 31000],
                    source_id: first.source_id,
                    atlas_coords: [0, 0],
                    alternative: 0,
                },
            ];
            let value = set_cells_text(&prop.value, &edits).unwrap();
            let edited =
                set_node_property(&text, &scene, &node.path, "tile_map_data", &value).unwrap();
            let (before, after) = changed_block(&text, &edited.text);
            assert_eq!(before, [format!("tile_map_data = {}\n", prop.text)], "{at}");
            assert_eq!(after, [format!("tile_map_data = {value}\n")], "{at}");
            let reread = parse_scene(&edited.text).unwrap();
            let got = reread.node(&node.path).unwrap();
            assert_eq!(
                is_base64_bytes(&got.property("tile_map_data").unwrap().value),
                is_base64_bytes(&prop.value),
                "{at}"
            );
            let expected = set_cells(&cells, &edits);
            assert_eq!(node_cells(got).unwrap(), expected, "{at}");
            assert_eq!(expected.len(), cells.len() + 1, "{at}");
            layers += 1;
        }
    }
    covered("tile map layers written back", layers, 18);
}

/// Every Animation of the corpus (each a `[sub_resource]` of a scene or a library)
/// through the sub-resource writer `set_sub_resource_property`: every property written
/// back unchanged is the same bytes; a new `length` changes that one line (or inserts
/// it) and the animation reads back with that length and the same tracks and keys.
#[test]
fn animations_write_back_byte_identical_and_one_edit_touches_its_line() {
    use godot_mcp_formats::animation::parse_animation;
    use godot_mcp_formats::scene_edit::set_sub_resource_property;
    let (mut animations, mut props) = (0, 0);
    for (path, text) in files(&[".tscn", ".tres"]) {
        let subs = sub_resources(&path, &text);
        for sub in subs.iter().filter(|s| s.resource_type == "Animation") {
            let at = format!("{}: {}", path.display(), sub.id);
            for prop in &sub.properties {
                let same = set_sub_resource_property(&text, &subs, &sub.id, &prop.name, &prop.text)
                    .unwrap();
                assert!(same.text == text, "{at}: {}", prop.name);
                props += 1;
            }
            let old = parse_animation(&sub.properties);
            let edited =
                set_sub_resource_property(&text, &subs, &sub.id, "length", "12.5").unwrap();
            let (before, after) = changed_block(&text, &edited.text);
            assert_eq!(after, ["length = 12.5\n"], "{at}");
            match &edited.previous {
                Some(p) => assert_eq!(before, [format!("length = {p}\n")], "{at}"),
                None => assert!(before.is_empty(), "{at}"),
            }
            let reparsed = sub_resources(&path, &edited.text);
            let new =
                parse_animation(&reparsed.iter().find(|s| s.id == sub.id).unwrap().properties);
            assert_eq!(new.length, 12.5, "{at}");
            assert_eq!(new.tracks, old.tracks, "{at}");
            assert_eq!(new.loop_mode, old.loop_mode, "{at}");
            assert_eq!(new.step, old.step, "{at}");
            // step and loop_mode written the way Godot writes them read back as set.
            let stepped =
                set_sub_resource_property(&text, &subs, &sub.id, "step", "0.125").unwrap();
            let subs2 = sub_resources(&path, &stepped.text);
            let looped =
                set_sub_resource_property(&stepped.text, &subs2, &sub.id, "loop_mode", "2")
                    .unwrap();
            let reparsed = sub_resources(&path, &looped.text);
            let new =
                parse_animation(&reparsed.iter().find(|s| s.id == sub.id).unwrap().properties);
            assert_eq!((new.step, new.loop_mode), (0.125, "pingpong"), "{at}");
            assert_eq!((new.length, &new.tracks), (old.length, &old.tracks), "{at}");
            animations += 1;
        }
    }
    println!("animation properties written back: {props}");
    covered("animations", animations, 100);
}

/// Every Animation of the corpus: its `step`, `loop_mode`, each track's `interp` and a
/// value track's `"update"` read as the property's own text says (Godot's integers,
/// named in Godot's order); what a file leaves out reads as Godot's default.
#[test]
fn animation_step_loop_interpolation_and_update_read_as_their_text_says() {
    use godot_mcp_formats::animation::{INTERPOLATIONS, LOOP_MODES, UPDATE_MODES, parse_animation};
    let (mut steps, mut loops, mut interps, mut updates) = (0, 0, 0, 0);
    for (path, text) in files(&[".tscn", ".tres"]) {
        for sub in sub_resources(&path, &text)
            .iter()
            .filter(|s| s.resource_type == "Animation")
        {
            let at = format!("{}: {}", path.display(), sub.id);
            let a = parse_animation(&sub.properties);
            let text_of = |n: &str| {
                sub.properties
                    .iter()
                    .find(|p| p.name == n)
                    .map(|p| p.text.trim())
            };
            match text_of("step") {
                Some(t) => {
                    let want = f64::from(t.parse::<f32>().unwrap());
                    assert_eq!(a.step as f32 as f64, want, "{at}");
                    steps += 1;
                }
                None => assert_eq!(a.step, 0.033333335, "{at}"),
            }
            match text_of("loop_mode") {
                Some(t) => {
                    assert_eq!(a.loop_mode, LOOP_MODES[t.parse::<usize>().unwrap()], "{at}");
                    loops += 1;
                }
                None => assert_eq!(a.loop_mode, "none", "{at}"),
            }
            for t in &a.tracks {
                let n = t.index;
                let interp = text_of(&format!("tracks/{n}/interp")).unwrap();
                assert_eq!(
                    t.interpolation,
                    INTERPOLATIONS[interp.parse::<usize>().unwrap()],
                    "{at} {n}"
                );
                interps += 1;
                let keys = text_of(&format!("tracks/{n}/keys")).unwrap_or("");
                let update = keys.split_once("\"update\": ").map(|(_, rest)| &rest[..1]);
                match (t.kind.as_str(), update) {
                    ("value", Some(u)) => {
                        assert_eq!(
                            t.update_mode,
                            Some(UPDATE_MODES[u.parse::<usize>().unwrap()]),
                            "{at} {n}"
                        );
                        updates += 1;
                    }
                    ("value", None) => assert_eq!(t.update_mode, Some("continuous"), "{at} {n}"),
                    _ => assert_eq!(t.update_mode, None, "{at} {n}"),
                }
            }
        }
    }
    println!("steps {steps}, loop modes {loops}, interpolations {interps}, update modes {updates}");
    covered("animation steps", steps, 50);
    covered("animation loop modes", loops, 45);
    covered("track interpolations", interps, 300);
    covered("value track update modes", updates, 200);
}

/// move_file's reference rewriting (`relink::rewrite_path_literals`) over every scene,
/// resource and project.godot of the corpus, for every path each one references: the
/// lines it reports are exactly the lines that change, each only where the old literal
/// was, and the file reads back with only that reference moved. Naming no path it
/// holds changes nothing.
#[test]
fn reference_rewriting_touches_only_the_lines_naming_the_path() {
    use godot_mcp_formats::relink::{literal_safe, rewrite_path_literals};
    let (mut rewrites, mut changed_lines) = (0, 0);
    for (path, text) in files(&[".tscn", ".tres"]) {
        let exts = if path.extension().is_some_and(|e| e == "tscn") {
            parse_scene(&text).unwrap().ext_resources
        } else {
            godot_mcp_formats::parse_resource(&text)
                .unwrap()
                .ext_resources
        };
        assert!(
            rewrite_path_literals(&text, "res://no/such/file.tscn", "res://x.tscn").is_none(),
            "{}",
            path.display()
        );
        let mut seen = std::collections::BTreeSet::new();
        for ext in exts.iter().filter(|e| literal_safe(&e.path)) {
            if !seen.insert(ext.path.clone()) {
                continue;
            }
            let at = format!("{}: {}", path.display(), ext.path);
            let new = format!("res://moved/{}", ext.path.trim_start_matches("res://"));
            let (out, lines) = rewrite_path_literals(&text, &ext.path, &new).unwrap();
            let (old_lines, new_lines): (Vec<_>, Vec<_>) = (
                text.split_inclusive('\n').collect(),
                out.split_inclusive('\n').collect(),
            );
            assert_eq!(old_lines.len(), new_lines.len(), "{at}");
            for (i, (a, b)) in old_lines.iter().zip(&new_lines).enumerate() {
                let reported = lines.contains(&(i as u32 + 1));
                assert_eq!(a != b, reported, "{at}: line {}", i + 1);
                if reported {
                    assert_eq!(
                        a.replace(&format!("\"{}\"", ext.path), &format!("\"{new}\"")),
                        **b,
                        "{at}: line {}",
                        i + 1
                    );
                }
            }
            changed_lines += lines.len();
            rewrites += 1;
        }
    }
    println!("references rewritten: {rewrites} ({changed_lines} lines)");
    assert!(rewrites > 500, "{rewrites}");
}
