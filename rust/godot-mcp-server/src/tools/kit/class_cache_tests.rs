use super::*;

fn entry(class: &str, base: &str, path: &str) -> ClassEntry {
    ClassEntry {
        class: class.into(),
        base: base.into(),
        icon: String::new(),
        is_abstract: false,
        is_tool: false,
        path: path.into(),
    }
}

/// The classes of a cache's text, in its order.
fn classes(text: &str) -> Vec<String> {
    entries(text)
        .unwrap()
        .iter()
        .map(|e| field(e, "class").unwrap())
        .collect()
}

/// Godot 4.4.1's `--import` of `a.gd` = `extends Node\nclass_name Foo`, byte for byte.
const FOO_44: &str = "list=[{\n\"base\": &\"Node\",\n\"class\": &\"Foo\",\n\"icon\": \"\",\n\
    \"is_abstract\": false,\n\"is_tool\": false,\n\"language\": &\"GDScript\",\n\
    \"path\": \"res://a.gd\"\n}]\n";

/// A C# entry, kept byte for byte by every edit.
const CS: &str = "{\n\"base\": &\"Node\",\n\"class\": &\"Cee\",\n\"icon\": \"\",\n\
    \"is_abstract\": false,\n\"is_tool\": false,\n\"language\": &\"C#\",\n\
    \"path\": \"res://Cee.cs\"\n}";

#[test]
fn an_entry_is_written_as_godot_writes_it() {
    assert_eq!(
        with_entry(
            "list=[]\n",
            "res://a.gd",
            Some(&entry("Foo", "Node", "res://a.gd")),
            true
        )
        .unwrap(),
        FOO_44
    );
}

/// Sorted by class name as 4.4 sorts (code points: `Z` < `_` < `a`); the measured
/// order of Bar, Foo, Zed, _Under, aLower.
#[test]
fn godot_44_order_is_by_class_name() {
    let mut text = "list=[]\n".to_string();
    for (c, p) in [
        ("aLower", "c"),
        ("Zed", "z"),
        ("_Under", "d"),
        ("Foo", "a"),
        ("Bar", "b"),
    ] {
        let path = format!("res://{p}.gd");
        text = with_entry(&text, &path, Some(&entry(c, "Node", &path)), true).unwrap();
    }
    assert_eq!(classes(&text), ["Bar", "Foo", "Zed", "_Under", "aLower"]);
}

/// 4.6 keeps the order it found: a new class last, a rewritten one in its place.
#[test]
fn godot_46_order_is_kept_and_a_new_class_goes_last() {
    let text = format!(
        "list=[{}, {}]\n",
        entry("Zed", "Node", "res://z.gd").text(),
        CS
    );
    let text = with_entry(
        &text,
        "res://a.gd",
        Some(&entry("Alpha", "Node", "res://a.gd")),
        false,
    )
    .unwrap();
    let text = with_entry(
        &text,
        "res://z.gd",
        Some(&entry("Zed2", "Node", "res://z.gd")),
        false,
    )
    .unwrap();
    assert_eq!(classes(&text), ["Zed2", "Cee", "Alpha"]);
}

/// A rewrite upserts by path: a renamed class replaces the old entry (one per path), a
/// dropped class_name removes it; other entries (C# too) are kept byte for byte.
#[test]
fn upsert_and_remove_by_path_keep_the_others() {
    let text = format!(
        "list=[{CS}, {}]\n",
        entry("Foo", "Node", "res://a.gd").text()
    );
    let renamed = with_entry(
        &text,
        "res://a.gd",
        Some(&entry("Bar", "Node2D", "res://a.gd")),
        true,
    )
    .unwrap();
    assert_eq!(
        renamed,
        format!(
            "list=[{}, {CS}]\n",
            entry("Bar", "Node2D", "res://a.gd").text()
        )
    );
    assert_eq!(class_of(&renamed, "res://a.gd").as_deref(), Some("Bar"));
    let dropped = with_entry(&renamed, "res://a.gd", None, true).unwrap();
    assert_eq!(dropped, format!("list=[{CS}]\n"));
    assert_eq!(
        with_entry(&dropped, "res://Cee.cs", None, true).unwrap(),
        "list=[]\n"
    );
}

/// A text not in Godot's form is not rewritten.
#[test]
fn a_cache_not_in_godots_form_is_left_alone() {
    for bad in ["", "list=[", "x=1\n", "list=[{\"a\": 1}, junk]\n"] {
        assert_eq!(with_entry(bad, "res://a.gd", None, true), None, "{bad:?}");
    }
    // A quoted brace or quote inside a value is part of the value.
    let odd = entry("Odd", "Node", "res://we\"ird}{.gd");
    let text = format!("list=[{}]\n", odd.text());
    assert_eq!(entries(&text).unwrap().len(), 1);
    assert_eq!(
        class_of(&text, "res://we\"ird}{.gd").as_deref(),
        Some("Odd")
    );
}

/// The entry of a script's header: base from `extends` (RefCounted without one, ""
/// for an inner class), `@tool`, `@icon`, and `@abstract` from 4.5 on.
#[test]
fn a_scripts_entry_reads_its_header() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    std::fs::write(dir.path().join("base.gd"), "extends Node2D\n").unwrap();
    let state = AppState::for_tests(dir.path());
    let e = |text: &str, engine| entry_of(&state, "res://x.gd", text, engine);
    assert_eq!(e("extends Node\n", Some((4, 4))), None);
    assert_eq!(e("class_name Zed\n", None).unwrap().base, "RefCounted");
    assert_eq!(e("class_name In extends Out.In\n", None).unwrap().base, "");
    assert_eq!(
        e("class_name P extends \"res://base.gd\"\n", None)
            .unwrap()
            .base,
        "Node2D"
    );
    let t = e(
        "@tool\n@icon(\"res://i.svg\")\nclass_name Bar extends Foo\n\nfunc f():\n\tpass\n",
        Some((4, 4)),
    )
    .unwrap();
    assert_eq!(
        (t.base.as_str(), t.icon.as_str(), t.is_tool),
        ("Foo", "res://i.svg", true)
    );
    let abs = "@abstract\nclass_name Ab\nextends Node\n@abstract func f()\n";
    assert!(!e(abs, Some((4, 4))).unwrap().is_abstract);
    assert!(e(abs, Some((4, 6))).unwrap().is_abstract);
    assert!(
        !e(
            "class_name A\nextends Node\n@abstract func f()\n",
            Some((4, 6))
        )
        .unwrap()
        .is_abstract
    );
}

/// A 4.4 project whose cache another engine wrote in its own order (4.6 under a project
/// saved by 4.4): a write that leaves a script's class as it was, or a script with no
/// class, changes nothing; a new class goes before the first greater one, the others
/// unmoved. (CI: a 4.6 editor's cache was resorted for a script with no class_name.)
#[test]
fn a_cache_in_another_order_is_not_resorted() {
    let text = format!(
        "list=[{}, {}]\n",
        entry("Zed", "Node", "res://z.gd").text(),
        entry("Bee", "Node", "res://b.gd").text()
    );
    assert_eq!(
        with_entry(&text, "res://probe.gd", None, true).unwrap(),
        text
    );
    let same = entry("Zed", "Node", "res://z.gd");
    assert_eq!(
        with_entry(&text, "res://z.gd", Some(&same), true).unwrap(),
        text
    );
    let added = with_entry(
        &text,
        "res://a.gd",
        Some(&entry("Cat", "Node", "res://a.gd")),
        true,
    )
    .unwrap();
    assert_eq!(classes(&added), ["Cat", "Zed", "Bee"]);
}
