//! The file-plane text writers over every file of tests/fixtures/corpus: writing a
//! value back unchanged gives the same bytes, and one edit changes only its own lines
//! (a 4.6 scene's `unique_id=` headers included).

mod common;

use std::path::PathBuf;

use common::{corpus_dir, walk};

use godot_mcp_formats::project_edit::ConfigText;
use godot_mcp_formats::scene_edit::set_node_property;
use godot_mcp_formats::{parse_project, parse_scene};

fn files(name_ends: &str) -> Vec<(PathBuf, String)> {
    let mut all = Vec::new();
    walk(&corpus_dir(), &mut all);
    all.into_iter()
        .filter(|p| p.to_string_lossy().ends_with(name_ends))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
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
    for (path, text) in files("project.godot") {
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
    for (path, text) in files(".tscn") {
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
    for (path, text) in files(".tres") {
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
    println!("bus layouts written back: {layouts}");
    assert!(layouts >= 4, "{layouts}");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
