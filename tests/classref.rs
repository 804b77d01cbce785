//! The class reference (toolset `class_ref`).
//!
//! Without Godot: the doctool parser and the lookup/search on pages captured from a
//! real `godot --doctool` (tests/fixtures/godot-4.4.1/doctool, README there), and the
//! honest precondition error when no Godot binary exists.
//!
//! With GODOT_BIN (`real_godot_*`): the server runs --doctool itself, with no editor,
//! and answers for Node2D; the second lookup is served from the cache (its time is
//! printed: the figure for the note).

mod support;

use std::path::{Path, PathBuf};
use std::time::Instant;

use godot_mcp_server::ToolError;
use godot_mcp_server::{
    ClassDb, DECLARED_SETTING_TYPES, DumpClass, MemberKind, SearchKind, lookup_class,
    merge_descriptions, read_doctool_dir, search_classes,
};
use serde_json::{Value, json};

/// get_class_reference's answer for `class`, as the JSON an agent reads.
fn lookup(
    db: &ClassDb,
    class: &str,
    member: Option<&str>,
    kinds: &[MemberKind],
    descriptions: bool,
) -> Result<Value, ToolError> {
    lookup_class(db, class, member, kinds, descriptions).map(|c| serde_json::to_value(c).unwrap())
}

/// search_class_reference's answer, as the JSON an agent reads.
fn search(
    db: &ClassDb,
    query: &str,
    kind: Option<SearchKind>,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<Value, ToolError> {
    search_classes(db, query, kind, cursor, limit).map(|s| serde_json::to_value(s).unwrap())
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/godot-4.4.1/doctool")
}

fn captured() -> ClassDb {
    read_doctool_dir("4.4.1.stable".into(), &fixtures()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn captured_pages_answer_for_node2d() {
    let db = captured();
    assert_eq!(db.classes.len(), 7, "every captured page parsed");
    let v = lookup(&db, "Node2D", None, &[], false).unwrap();
    assert_eq!(strings(&v["inherits"]), ["CanvasItem", "Node", "Object"]);
    let methods = strings(&v["methods"]);
    assert!(
        methods.contains(&"move_local_x(delta: float, scaled: bool = false) -> void".into()),
        "{methods:?}"
    );
    let pos = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "position")
        .unwrap();
    assert_eq!(pos["type"], "Vector2");
    assert_eq!(pos["default"], "Vector2(0, 0)");
    // The captured pages have empty descriptions (a bare --doctool): said, not faked.
    assert_eq!(v["descriptions"], false);

    // Enums are grouped under their name; signals are signatures.
    let node = lookup(&db, "Node", None, &[], false).unwrap();
    assert_eq!(node["enums"]["ProcessMode"]["PROCESS_MODE_INHERIT"], "0");
    assert!(strings(&node["signals"]).contains(&"child_entered_tree(node: Node)".into()));
    // Built-in types: constructors; Controls: theme items.
    let v2 = lookup(
        &db,
        "Vector2",
        Some("vector2"),
        &[MemberKind::Method],
        false,
    )
    .unwrap();
    assert!(strings(&v2["constructors"]).contains(&"Vector2(from: Vector2) -> Vector2".into()));
    let button = lookup(
        &db,
        "Button",
        Some("font_color"),
        &[MemberKind::Property],
        false,
    )
    .unwrap();
    assert!(
        button["theme_items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "font_color")
    );
    // A module page (modules/csg/doc_classes) is read like the core ones.
    assert!(db.classes.contains_key("CSGBox3D"));
}

#[test]
fn descriptions_merge_from_the_editor_doc_cache() {
    let mut db = captured();
    let dump: Vec<DumpClass> = serde_json::from_slice(
        &std::fs::read(fixtures().join("../editor_doc_cache/classes.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(merge_descriptions(&mut db, &dump), 7);
    let v = lookup(
        &db,
        "Node2D",
        Some("to_global"),
        &[MemberKind::Method],
        true,
    )
    .unwrap();
    assert_eq!(v["descriptions"], true);
    assert!(
        v["brief"].as_str().unwrap().starts_with("A 2D game object"),
        "{v}"
    );
    let m = &v["methods"][0];
    assert_eq!(
        m["signature"],
        "to_global(local_point: Vector2) -> Vector2 const"
    );
    assert!(m["description"].as_str().unwrap().contains("global"), "{m}");
    // Indentation is gone; the text is the engine's (BBCode kept).
    assert!(!m["description"].as_str().unwrap().contains('\t'));
    // Without a member filter, member descriptions stay out (they are most of the bytes).
    let plain = lookup(&db, "Node2D", None, &[], false).unwrap();
    assert!(plain["methods"][0].is_string());
    // Vector2's constructors share one name: merged by position.
    let v2 = lookup(&db, "Vector2", Some("Vector2"), &[MemberKind::Method], true).unwrap();
    assert!(
        v2["constructors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["description"].is_string()),
        "{v2}"
    );
}

#[test]
fn member_filter_keeps_the_answer_small() {
    let db = captured();
    let all = lookup(&db, "Node", None, &[], false)
        .unwrap()
        .to_string()
        .len();
    let v = lookup(&db, "Node", Some("add_child"), &[MemberKind::Method], false).unwrap();
    assert_eq!(strings(&v["methods"]).len(), 1, "{v}");
    assert!(v.get("properties").is_none() && v.get("signals").is_none());
    let small = v.to_string().len();
    assert!(small * 20 < all, "filtered {small} bytes vs {all}");
}

#[test]
fn unknown_class_is_not_found_with_near_names() {
    let e = lookup(&captured(), "node2d", None, &[], false).unwrap_err();
    assert_eq!(e.code.as_str(), "RESOURCE_NOT_FOUND");
    assert!(e.hint.as_deref().unwrap_or("").contains("Node2D"), "{e:?}");
}

#[test]
fn search_ranks_exact_then_prefix_and_pages() {
    let db = captured();
    let v = search(&db, "position", None, None, Some(200)).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results[0]["name"], "position", "exact first: {results:?}");
    assert_eq!(results[0]["kind"], "property", "{results:?}");
    assert!(results.iter().any(|r| r["name"] == "global_position"));
    let total = v["total"].as_u64().unwrap() as usize;
    // Two pages of one are the first two results, in order.
    let p1 = search(&db, "position", None, None, Some(1)).unwrap();
    let p2 = search(&db, "position", None, p1["next_cursor"].as_str(), Some(1)).unwrap();
    assert_eq!(p1["results"][0], results[0]);
    assert_eq!(p2["results"][0], results[1]);
    assert!(total >= 2);
    let classes = search(&db, "node", Some(SearchKind::Class), None, None).unwrap();
    let names: Vec<&str> = classes["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Node", "Node2D"]);
    assert_eq!(classes["results"][0]["kind"], "class");
    assert_eq!(
        search(&db, " ", None, None, None)
            .unwrap_err()
            .code
            .as_str(),
        "INVALID_PARAMS"
    );
}

#[tokio::test]
async fn without_godot_the_error_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().to_str().unwrap();
    let client = support::connect_with(dir.path(), &[("GODOT_BIN", ""), ("PATH", path)]).await;
    for (tool, args) in [
        ("get_class_reference", json!({"class": "Node2D"})),
        ("search_class_reference", json!({"query": "position"})),
    ] {
        let e = support::call_err(&client, tool, args).await;
        assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
        assert!(e["message"].as_str().unwrap().contains("GODOT_BIN"), "{e}");
    }
    client.cancel().await.unwrap();
}

/// set_setting reads a JSON value by the type Godot declares for a setting project.godot
/// lacks (`"#203040"` a Color), from a table instead of a 27 s class-reference build
/// (run 5 of the agent benchmark). The table must be the engine's: every ProjectSettings
/// member of this engine's doctool whose type plain JSON cannot say is in it with that
/// type (red when a row is missing or wrong), and sorted (red when a lookup could miss).
#[test]
fn real_godot_the_settings_table_is_the_engines() {
    let Some(godot) = support::godot_bin("the settings table against --doctool") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(&godot)
        .args(["--headless", "--doctool", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = read_doctool_dir("doctool".into(), dir.path()).unwrap();
    let page = &db.classes["ProjectSettings"];
    let plain = ["String", "int", "float", "bool", "Array", "Dictionary"];
    let mut typed = 0;
    for m in &page.members {
        if plain.contains(&m.ty.name.as_str()) {
            continue;
        }
        typed += 1;
        assert!(
            DECLARED_SETTING_TYPES.contains(&(m.name.as_str(), m.ty.name.as_str())),
            "{} ({}) is not in the table",
            m.name,
            m.ty.name
        );
    }
    assert!(
        typed >= 25,
        "only {typed} typed settings: not the doctool's page?"
    );
    assert!(DECLARED_SETTING_TYPES.windows(2).all(|w| w[0].0 < w[1].0));
}

#[tokio::test]
async fn real_godot_class_reference_from_doctool() {
    let Some(godot) = support::godot_bin("the class reference runs godot --doctool") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    let godot = godot.to_str().unwrap().to_string();
    let client = support::connect_with(dir.path(), &[("GODOT_BIN", &godot)]).await;

    let t = Instant::now();
    let v = support::call_ok(&client, "get_class_reference", json!({"class": "Node2D"})).await;
    let first = t.elapsed();
    assert_eq!(strings(&v["inherits"]), ["CanvasItem", "Node", "Object"]);
    assert!(
        strings(&v["methods"]).contains(&"to_global(local_point: Vector2) -> Vector2 const".into()),
        "{v}"
    );
    assert!(v["engine_version"].as_str().unwrap().starts_with("4."));
    // The compiled-in descriptions, through the headless editor's doc cache.
    assert_eq!(v["descriptions"], true, "{v}");
    assert!(v["brief"].as_str().unwrap().contains("2D"), "{v}");

    // From the cache: no doctool run (the cache file exists), a map lookup.
    let t = Instant::now();
    let again = support::call_ok(&client, "get_class_reference", json!({"class": "Node2D"})).await;
    let cached = t.elapsed();
    assert_eq!(again, v);
    let t = Instant::now();
    let hits = support::call_ok(
        &client,
        "search_class_reference",
        json!({"query": "move_local_x"}),
    )
    .await;
    let searched = t.elapsed();
    assert_eq!(hits["results"][0]["class"], "Node2D", "{hits}");
    // A member query carries member descriptions: a method is then an object with
    // its signature and description (the outputSchema's second signature shape).
    let member = support::call_ok(
        &client,
        "get_class_reference",
        json!({"class": "Node2D", "member": "to_global"}),
    )
    .await;
    assert_eq!(
        member["methods"][0]["signature"], "to_global(local_point: Vector2) -> Vector2 const",
        "{member}"
    );
    assert!(member["methods"][0]["description"].is_string(), "{member}");
    // The project is untouched: doctool ran in the server's state dir (the server's
    // own editor-discovery file under .godot/ is not part of the project's files).
    let files: Vec<String> = support::files_under(dir.path(), &[".godot"])
        .into_keys()
        .collect();
    assert_eq!(files, ["project.godot"]);
    assert!(!dir.path().join("doc").exists() && !dir.path().join("modules").exists());

    // The on-disk cache, loaded as a fresh server would, and one lookup from it.
    let cache = find_cache(client.state_dir.path()).expect("classref cache file");
    let t = Instant::now();
    let db: ClassDb = serde_json::from_slice(&std::fs::read(&cache).unwrap()).unwrap();
    let load = t.elapsed();
    let t = Instant::now();
    let n = 1000;
    for _ in 0..n {
        std::hint::black_box(lookup(&db, "Node2D", None, &[], false).unwrap());
    }
    let per_lookup = t.elapsed() / n;
    println!(
        "class reference: first call (doctool + parse + cache) {first:?}; cached call over MCP \
         {cached:?}; search over MCP {searched:?}; cache load {load:?} ({} classes, {} bytes); in-memory lookup {per_lookup:?}",
        db.classes.len(),
        std::fs::metadata(&cache).unwrap().len()
    );
    client.cancel().await.unwrap();
}

fn find_cache(dir: &Path) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        if p.is_dir() {
            if let Some(found) = find_cache(&p) {
                return Some(found);
            }
        } else if p.parent().is_some_and(|d| d.ends_with("classref"))
            && p.extension().is_some_and(|e| e == "json")
        {
            return Some(p);
        }
    }
    None
}
