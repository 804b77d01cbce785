//! The analysis toolset end to end: the real `godot-mcp` binary driven by rmcp's
//! client, on temp copies of the checked-in demo project (one per server: each holds
//! its project's lease), into which a test may write the broken case it needs (a
//! cycle, a broken path, a duplicate uid, an orphaned sidecar). Expected values are
//! read from the project's own files where they can be, never restated by hand.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect, connect_with, demo_copy};

fn read(project: &Path, rel: &str) -> String {
    std::fs::read_to_string(project.join(rel)).unwrap()
}

/// 1-based line of the first line of `rel` containing `needle`.
fn line_of(project: &Path, rel: &str, needle: &str) -> u64 {
    read(project, rel)
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {rel}")) as u64
        + 1
}

fn items(v: &Value) -> &Vec<Value> {
    v["items"].as_array().expect("items")
}

fn paths(v: &Value) -> Vec<&str> {
    items(v)
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn the_toolset_is_off_by_default_and_lists_nine_read_only_tools() {
    let demo = demo_copy();
    let client = connect_with(demo.path(), &[("GODOT_MCP_TOOLSETS", "")]).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!names.iter().any(|n| n == "dependency_graph"), "{names:?}");
    let v = call_ok(&client, "list_toolsets", json!({})).await;
    let analysis = v["toolsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "analysis")
        .expect("analysis toolset");
    assert_eq!(analysis["enabled"], false);
    assert_eq!(analysis["tools"].as_array().unwrap().len(), 9);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn dependency_graph_is_transitive_both_ways() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(
        &client,
        "dependency_graph",
        json!({"path": "res://scenes/main_2d.tscn"}),
    )
    .await;
    let got: Vec<(&str, u64, &str)> = items(&v)
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap(),
                i["depth"].as_u64().unwrap(),
                i["via"].as_str().unwrap(),
            )
        })
        .collect();
    // main_2d -> player.tscn -> player_stats.tres -> player_stats.gd
    assert!(got.contains(&("res://scenes/player.tscn", 1, "res://scenes/main_2d.tscn")));
    assert!(got.contains(&(
        "res://resources/player_stats.tres",
        2,
        "res://scenes/player.tscn"
    )));
    assert!(got.contains(&(
        "res://scripts/player_stats.gd",
        3,
        "res://resources/player_stats.tres"
    )));
    assert!(got.contains(&("res://icon.svg", 1, "res://scenes/main_2d.tscn")));
    assert_eq!(v["total"], 7, "{v}");
    assert_eq!(v["broken_references"], json!([]));

    let v = call_ok(
        &client,
        "dependency_graph",
        json!({"path": "res://scripts/player_stats.gd", "direction": "dependents", "limit": 2}),
    )
    .await;
    assert_eq!(v["total"], 3);
    assert_eq!(
        paths(&v),
        [
            "res://resources/player_stats.tres",
            "res://scenes/player.tscn"
        ]
    );
    assert_eq!(v["next_offset"], 2);
    let v = call_ok(
        &client,
        "dependency_graph",
        json!({"path": "res://scripts/player_stats.gd", "direction": "dependents", "offset": 2}),
    )
    .await;
    assert_eq!(paths(&v), ["res://scenes/main_2d.tscn"]);
    assert_eq!(v["next_offset"], Value::Null);

    let e = call_err(
        &client,
        "dependency_graph",
        json!({"path": "res://scenes/nope.tscn"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn find_references_by_path_and_by_uid_agree() {
    let copy = demo_copy();
    let demo = copy.path();
    let client = connect(demo).await;
    let by_path = call_ok(
        &client,
        "find_references",
        json!({"path": "res://icon.svg"}),
    )
    .await;
    let sites: Vec<(&str, u64, &str)> = items(&by_path)
        .iter()
        .map(|i| {
            (
                i["file"].as_str().unwrap(),
                i["line"].as_u64().unwrap(),
                i["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        sites,
        [
            (
                "res://project.godot",
                line_of(demo, "project.godot", "config/icon="),
                "project_setting"
            ),
            (
                "res://scenes/main_2d.tscn",
                line_of(demo, "scenes/main_2d.tscn", "path=\"res://icon.svg\""),
                "ext_resource"
            ),
            (
                "res://scenes/player.tscn",
                line_of(demo, "scenes/player.tscn", "path=\"res://icon.svg\""),
                "ext_resource"
            ),
        ]
    );
    // The uid of icon.svg comes from its .import file.
    let import = read(demo, "icon.svg.import");
    let uid = import
        .lines()
        .find_map(|l| l.strip_prefix("uid=\""))
        .unwrap()
        .trim_end_matches('"');
    assert_eq!(by_path["uids"], json!([uid]));
    let by_uid = call_ok(&client, "find_references", json!({"uid": uid})).await;
    assert_eq!(by_uid["path"], "res://icon.svg");
    // project.godot names the icon by path only; the two scenes also by uid.
    assert_eq!(by_uid["items"], by_path["items"]);

    let e = call_err(
        &client,
        "find_references",
        json!({"path": "res://icon.svg", "uid": uid}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    let e = call_err(&client, "find_references", json!({"uid": "res://icon.svg"})).await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

const CYCLE_A: &str = "[gd_scene load_steps=2 format=3 uid=\"uid://cyclea1\"]\n\n\
[ext_resource type=\"PackedScene\" uid=\"uid://cycleb1\" path=\"res://scenes/cycle_b.tscn\" id=\"1_b\"]\n\n\
[node name=\"A\" type=\"Node2D\"]\n\n\
[node name=\"B\" parent=\".\" instance=ExtResource(\"1_b\")]\n";
const CYCLE_B: &str = "[gd_scene load_steps=2 format=3 uid=\"uid://cycleb1\"]\n\n\
[ext_resource type=\"PackedScene\" uid=\"uid://cyclea1\" path=\"res://scenes/cycle_a.tscn\" id=\"1_a\"]\n\n\
[node name=\"B\" type=\"Node2D\"]\n\n\
[node name=\"A\" parent=\".\" instance=ExtResource(\"1_a\")]\n";

#[tokio::test]
async fn circular_dependencies_are_found() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(&client, "find_circular_dependencies", json!({})).await;
    assert_eq!(v["total"], 0, "{v}");
    client.cancel().await.unwrap();

    let copy = demo_copy();
    std::fs::write(copy.path().join("scenes/cycle_a.tscn"), CYCLE_A).unwrap();
    std::fs::write(copy.path().join("scenes/cycle_b.tscn"), CYCLE_B).unwrap();
    let client = connect(copy.path()).await;
    let v = call_ok(&client, "find_circular_dependencies", json!({})).await;
    assert_eq!(v["total"], 1, "{v}");
    assert_eq!(
        v["items"][0]["files"],
        json!(["res://scenes/cycle_a.tscn", "res://scenes/cycle_b.tscn"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unused_resources_are_what_no_root_reaches() {
    let copy = demo_copy();
    // An orphaned sidecar: a script's .uid whose script is gone.
    std::fs::write(copy.path().join("scripts/gone.gd.uid"), "uid://gone0000\n").unwrap();
    // A script nothing uses, which preloads the theme: both stay unused, and the
    // theme says who refers to it.
    std::fs::write(
        copy.path().join("scripts/uses_theme.gd"),
        "extends Node\nconst THEME = preload(\"res://resources/ui_theme.tres\")\n",
    )
    .unwrap();
    let client = connect(copy.path()).await;
    let v = call_ok(&client, "find_unused_resources", json!({})).await;
    let roots: Vec<(&str, &str)> = v["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["path"].as_str().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    assert!(
        roots.contains(&("res://scenes/main_2d.tscn", "main_scene")),
        "{roots:?}"
    );
    assert!(roots.contains(&("res://scripts/game_state.gd", "autoload GameState")));
    assert!(roots.contains(&("res://icon.svg", "project setting application/config/icon")));
    // Nothing reaches the 3D level or the theme; everything else is reached.
    assert_eq!(
        paths(&v),
        [
            "res://resources/ui_theme.tres",
            "res://scenes/level_3d.tscn",
            "res://scripts/uses_theme.gd"
        ]
    );
    assert_eq!(
        v["items"][0]["referenced_by_unused"],
        json!(["res://scripts/uses_theme.gd"])
    );
    assert_eq!(v["items"][1]["referenced_by_unused"], json!([]));
    assert_eq!(
        v["orphaned_sidecars"],
        json!([{"path": "res://scripts/gone.gd.uid", "missing_source": "res://scripts/gone.gd"}])
    );
    let v = call_ok(&client, "find_unused_resources", json!({"kind": "scene"})).await;
    assert_eq!(paths(&v), ["res://scenes/level_3d.tscn"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_demo_project_is_intact() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(&client, "check_scene_integrity", json!({})).await;
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["errors"], 0);
    // The only warning: the enabled add-on is installed by the package, not committed.
    let kinds: Vec<(&str, &str)> = items(&v)
        .iter()
        .map(|i| (i["file"].as_str().unwrap(), i["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("res://project.godot", "broken_reference")]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn integrity_reports_each_kind_of_breakage_with_its_line() {
    let copy = demo_copy();
    let root = copy.path();
    // A broken path with an unknown uid, in player.tscn.
    let player = read(root, "scenes/player.tscn").replace(
        "uid=\"uid://b3p1l4y5e6r7s\" path=\"res://scripts/player.gd\"",
        "uid=\"uid://nowhere0\" path=\"res://scripts/missing.gd\"",
    );
    std::fs::write(root.join("scenes/player.tscn"), &player).unwrap();
    // A duplicate uid: a resource claiming player_stats.tres's uid.
    std::fs::write(
        root.join("resources/dup.tres"),
        "[gd_resource type=\"Resource\" format=3 uid=\"uid://bq5s7t2a8kxw3\"]\n\n[resource]\n",
    )
    .unwrap();
    // An ext id used but never declared.
    std::fs::write(
        root.join("scenes/undeclared.tscn"),
        "[gd_scene format=3 uid=\"uid://undecl1\"]\n\n[node name=\"R\" type=\"Node\"]\nscript = ExtResource(\"9_nope\")\n",
    )
    .unwrap();
    // A stale path: the uid still names main.gd.
    let main = read(root, "scenes/main_2d.tscn").replace(
        "path=\"res://scripts/main.gd\"",
        "path=\"res://scripts/old_main.gd\"",
    );
    std::fs::write(root.join("scenes/main_2d.tscn"), &main).unwrap();
    // A script without its .uid.
    std::fs::write(root.join("scripts/new.gd"), "extends Node\n").unwrap();

    let client = connect(root).await;
    let v = call_ok(&client, "check_scene_integrity", json!({})).await;
    assert_eq!(v["ok"], false);
    let found: Vec<(&str, Option<u64>, &str, &str)> = items(&v)
        .iter()
        .map(|i| {
            (
                i["file"].as_str().unwrap(),
                i["line"].as_u64(),
                i["kind"].as_str().unwrap(),
                i["severity"].as_str().unwrap(),
            )
        })
        .collect();
    let expect = [
        (
            "res://scenes/player.tscn",
            Some(line_of(
                root,
                "scenes/player.tscn",
                "res://scripts/missing.gd",
            )),
            "broken_reference",
            "error",
        ),
        ("res://resources/dup.tres", None, "duplicate_uid", "error"),
        (
            "res://resources/player_stats.tres",
            None,
            "duplicate_uid",
            "error",
        ),
        (
            "res://scenes/undeclared.tscn",
            Some(line_of(root, "scenes/undeclared.tscn", "9_nope")),
            "undeclared_resource_id",
            "error",
        ),
        (
            "res://scenes/main_2d.tscn",
            Some(line_of(root, "scenes/main_2d.tscn", "old_main.gd")),
            "stale_path",
            "warning",
        ),
        ("res://scripts/new.gd", None, "missing_uid", "warning"),
    ];
    for e in expect {
        assert!(found.contains(&e), "{e:?} not in {found:#?}");
    }
    assert_eq!(v["errors"], 4, "{found:#?}");

    // One file only, paged.
    let v = call_ok(
        &client,
        "check_scene_integrity",
        json!({"path": "res://resources/dup.tres", "limit": 1}),
    )
    .await;
    assert_eq!(v["total"], 1);
    assert_eq!(v["items"][0]["kind"], "duplicate_uid");
    // The graph still follows the refused scene's ext_resource lines, and resolves
    // the stale path through its uid.
    let v = call_ok(
        &client,
        "dependency_graph",
        json!({"path": "res://scenes/main_2d.tscn", "max_depth": 1}),
    )
    .await;
    assert!(paths(&v).contains(&"res://scripts/main.gd"), "{v}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn signal_flow_names_both_ends() {
    let copy = demo_copy();
    let demo = copy.path();
    let client = connect(demo).await;
    let v = call_ok(&client, "signal_flow", json!({})).await;
    assert_eq!(v["total"], 2);
    let hit = items(&v).iter().find(|c| c["signal"] == "hit").unwrap();
    assert_eq!(hit["scene"], "res://scenes/main_2d.tscn");
    assert_eq!(
        hit["line"].as_u64(),
        Some(line_of(demo, "scenes/main_2d.tscn", "signal=\"hit\""))
    );
    assert_eq!(hit["method"], "_on_player_hit");
    assert_eq!(
        hit["from"],
        json!({"path": "Player", "instance": "res://scenes/player.tscn"})
    );
    assert_eq!(
        hit["to"],
        json!({"path": ".", "type": "Node2D", "script": "res://scripts/main.gd"})
    );
    let v = call_ok(
        &client,
        "signal_flow",
        json!({"path": "res://scenes/main_2d.tscn", "signal": "timeout"}),
    )
    .await;
    assert_eq!(v["total"], 1);
    assert_eq!(
        v["items"][0]["from"],
        json!({"path": "SpawnTimer", "type": "Timer"})
    );
    let e = call_err(&client, "signal_flow", json!({"path": "res://icon.svg"})).await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn project_stats_agree_with_the_scene_reader() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(&client, "project_stats", json!({})).await;
    assert_eq!(v["scenes"]["count"], 3);
    assert_eq!(v["by_kind"]["scene"]["count"], 3);
    assert_eq!(v["by_kind"]["script"]["count"], 5);
    assert_eq!(v["resources"]["count"], 2);
    assert_eq!(v["folders"]["scenes"]["count"], 3);
    assert_eq!(
        v["folders"]["scripts"]["count"],
        v["by_kind"]["script"]["count"]
    );
    let mut nodes = 0;
    for s in ["main_2d", "player", "level_3d"] {
        let t = call_ok(
            &client,
            "get_scene_tree",
            json!({"path": format!("res://scenes/{s}.tscn"), "include_properties": false}),
        )
        .await;
        nodes += t["node_count"].as_u64().unwrap();
    }
    assert_eq!(v["scenes"]["nodes"], nodes);
    let listed = call_ok(&client, "list_files", json!({})).await;
    let bytes: u64 = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["size"].as_u64().unwrap())
        .sum();
    assert_eq!(v["files"], listed["total"]);
    assert_eq!(v["bytes"], bytes);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn resolve_uid_reads_every_source_both_ways() {
    let copy = demo_copy();
    let demo = copy.path();
    let client = connect(demo).await;
    let script_uid = read(demo, "scripts/main.gd.uid").trim().to_string();
    let v = call_ok(&client, "resolve_uid", json!({"uid": script_uid})).await;
    assert_eq!(v["path"], "res://scripts/main.gd");
    assert_eq!(v["source"], "uid_file");
    assert_eq!(v["exists"], true);
    let v = call_ok(
        &client,
        "resolve_uid",
        json!({"path": "res://scripts/main.gd"}),
    )
    .await;
    assert_eq!(v["uid"], script_uid.as_str());

    let header = read(demo, "scenes/main_2d.tscn");
    let scene_uid = header
        .split("uid=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let v = call_ok(&client, "resolve_uid", json!({"uid": scene_uid})).await;
    assert_eq!(v["path"], "res://scenes/main_2d.tscn");
    assert_eq!(v["source"], "scene_header");

    let v = call_ok(&client, "resolve_uid", json!({"path": "res://icon.svg"})).await;
    assert_eq!(v["source"], "import_file");
    assert_eq!(v["declared_in"], "res://icon.svg.import");

    let v = call_ok(
        &client,
        "resolve_uid",
        json!({"path": "res://resources/ui_theme.tres"}),
    )
    .await;
    assert_eq!(v["source"], "resource_header");

    let e = call_err(&client, "resolve_uid", json!({"uid": "uid://zzzznotthere"})).await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    let e = call_err(
        &client,
        "resolve_uid",
        json!({"path": "res://project.godot"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    let e = call_err(&client, "resolve_uid", json!({"uid": "uid://../x"})).await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn search_files_finds_lines_filters_by_glob_and_pages() {
    let copy = demo_copy();
    let demo = copy.path();
    let client = connect(demo).await;
    let v = call_ok(&client, "search_files", json!({"query": "_ON_PLAYER_HIT"})).await;
    let hits: Vec<(&str, u64)> = items(&v)
        .iter()
        .map(|m| (m["path"].as_str().unwrap(), m["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        hits,
        [
            (
                "res://scenes/main_2d.tscn",
                line_of(demo, "scenes/main_2d.tscn", "_on_player_hit")
            ),
            (
                "res://scripts/main.gd",
                line_of(demo, "scripts/main.gd", "_on_player_hit")
            ),
        ]
    );
    let m = &items(&v)[1];
    let text = m["text"].as_str().unwrap();
    let col = m["column"].as_u64().unwrap() as usize;
    assert_eq!(
        &text[col - 1..col - 1 + "_on_player_hit".len()],
        "_on_player_hit"
    );

    let v = call_ok(
        &client,
        "search_files",
        json!({"query": "_ON_PLAYER_HIT", "case_sensitive": true}),
    )
    .await;
    assert_eq!(v["total"], 0);
    let v = call_ok(
        &client,
        "search_files",
        json!({"query": "_on_player_hit", "glob": "*.gd"}),
    )
    .await;
    assert_eq!(paths(&v), ["res://scripts/main.gd"]);
    let v = call_ok(
        &client,
        "search_files",
        json!({"query": "_on_player_hit", "glob": "scenes/**/*.tscn", "limit": 1}),
    )
    .await;
    assert_eq!(paths(&v), ["res://scenes/main_2d.tscn"]);

    // Paging: every "func " in the scripts, one page of 2, then the rest.
    let all = call_ok(
        &client,
        "search_files",
        json!({"query": "func ", "glob": "*.gd"}),
    )
    .await;
    let total = all["total"].as_u64().unwrap();
    assert!(total > 2);
    let first = call_ok(
        &client,
        "search_files",
        json!({"query": "func ", "glob": "*.gd", "limit": 2}),
    )
    .await;
    assert_eq!(first["next_offset"], 2);
    let rest = call_ok(
        &client,
        "search_files",
        json!({"query": "func ", "glob": "*.gd", "offset": 2, "limit": 1000}),
    )
    .await;
    let mut joined = items(&first).clone();
    joined.extend(items(&rest).iter().cloned());
    assert_eq!(&joined, items(&all));

    let e = call_err(&client, "search_files", json!({"query": ""})).await;
    assert_eq!(e["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_path_argument_is_checked() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    for (tool, args) in [
        ("dependency_graph", json!({"path": "res://../outside.tscn"})),
        ("find_references", json!({"path": "/etc/passwd"})),
        (
            "check_scene_integrity",
            json!({"path": "res://a/../../b.tscn"}),
        ),
        ("signal_flow", json!({"path": "C:/x.tscn"})),
        ("resolve_uid", json!({"path": "../project.godot"})),
    ] {
        let e = call_err(&client, tool, args.clone()).await;
        assert_eq!(e["code"], "PATH_REFUSED", "{tool}({args}): {e}");
        assert_eq!(e["param"], "path", "{tool}");
    }
    client.cancel().await.unwrap();
}

/// Godot's own ResourceUID table, after a real import of the demo project, maps every
/// uid that resolve_uid reports to the same path, and an unknown uid to none; and
/// resolve_uid reports one for every file that declares one (a header, a .uid, an .import).
#[tokio::test]
async fn real_godot_resolve_uid_agrees_with_the_engine() {
    let Some(godot) = support::godot_bin("resolve_uid vs ResourceUID") else {
        return;
    };
    let copy = demo_copy();
    let p = copy.path();
    let st = std::process::Command::new(&godot)
        .args(["--headless", "--import", "--path"])
        .arg(p)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "godot --import failed");

    let client = connect(p).await;
    let listed = call_ok(&client, "list_files", json!({"limit": 1000})).await;
    let mut ours: Vec<(String, String)> = Vec::new();
    for f in listed["files"].as_array().unwrap() {
        let r = support::call(&client, "resolve_uid", json!({"path": f["path"]})).await;
        if r.is_error != Some(true) {
            let v = r.structured_content.unwrap();
            ours.push((
                v["uid"].as_str().unwrap().into(),
                v["path"].as_str().unwrap().into(),
            ));
        }
    }
    client.cancel().await.unwrap();
    fn declaring(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type().unwrap().is_dir() {
                    declaring(&e.path())
                } else {
                    [".uid", ".import", ".tscn", ".tres"]
                        .iter()
                        .any(|x| name.ends_with(x)) as usize
                }
            })
            .sum()
    }
    assert_eq!(ours.len(), declaring(p), "{ours:?}");

    std::fs::write(
        p.join("uid_probe.gd"),
        "extends SceneTree\n\nfunc _init() -> void:\n\
         \tfor uid in OS.get_cmdline_user_args():\n\
         \t\tvar id := ResourceUID.text_to_id(uid)\n\
         \t\tvar path := ResourceUID.get_id_path(id) if ResourceUID.has_id(id) else \"<none>\"\n\
         \t\tprint(\"UID \", uid, \" \", path)\n\
         \tquit()\n",
    )
    .unwrap();
    let out = std::process::Command::new(&godot)
        .args(["--headless", "--path"])
        .arg(p)
        .args(["--script", "res://uid_probe.gd", "--"])
        .args(ours.iter().map(|(u, _)| u.as_str()))
        .arg("uid://zzzznotthere")
        .stderr(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let engine: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("UID "))
        .filter_map(|l| l.split_once(' '))
        .map(|(u, p)| (u.to_string(), p.to_string()))
        .collect();
    let mut expected = ours.clone();
    expected.push(("uid://zzzznotthere".into(), "<none>".into()));
    assert_eq!(engine, expected, "godot said:\n{stdout}");
}
