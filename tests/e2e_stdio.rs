//! End to end over stdio: the real `godot-mcp` binary, spawned and driven by rmcp's
//! own client, reading copies of the checked-in demo project `godot_project/` (each
//! server holds its project's lease, so tests running side by side serve one copy
//! each). Assertions are about what an agent would see.
// Unix only: it stops the server with SIGINT/SIGTERM and launches through process groups (docs/platforms.md).
#![cfg(unix)]

mod support;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect, demo_copy};

#[tokio::test]
async fn initialize_and_tools_list_carry_safety_classes() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("godot-mcp")
    );
    assert!(info.capabilities.tools.is_some());

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "project_info",
        "list_files",
        "get_scene_tree",
        "read_resource",
        "scripts_read",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for t in &tools {
        let meta = t
            .meta
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no _meta", t.name));
        let class = meta.0["safety_class"].as_str().unwrap();
        assert!(
            ["read_only", "mutating", "destructive", "runtime"].contains(&class),
            "{}: {class}",
            t.name
        );
        let ann = t.annotations.as_ref().expect("annotations");
        // As a client reads them: an absent hint is the protocol's default
        // (readOnlyHint false; destructiveHint true, meaningful only when not read-only).
        assert_eq!(
            ann.read_only_hint.unwrap_or(false),
            class == "read_only",
            "{}",
            t.name
        );
        if class != "read_only" {
            assert_eq!(
                ann.destructive_hint.unwrap_or(true),
                class == "destructive",
                "{}",
                t.name
            );
        }
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn project_info_reads_project_godot() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(&client, "project_info", json!({})).await;
    assert_eq!(v["name"], "Godot MCP Demo");
    assert_eq!(v["main_scene"], "res://scenes/main_2d.tscn");
    assert_eq!(v["features"], json!(["4.4", "Forward Plus"]));
    assert_eq!(v["config_version"], 5);
    let autoloads = v["autoloads"].as_array().unwrap();
    assert_eq!(autoloads.len(), 1);
    assert_eq!(autoloads[0]["name"], "GameState");
    assert_eq!(autoloads[0]["path"], "res://scripts/game_state.gd");
    assert_eq!(autoloads[0]["singleton"], true);
    let actions: Vec<&Value> = v["input_actions"].as_array().unwrap().iter().collect();
    let names: Vec<&str> = actions
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
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
    let move_left = actions[0];
    assert_eq!(move_left["deadzone"], 0.2);
    let events = move_left["events"].as_array().unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["kind"], "key");
    assert_eq!(events[0]["physical_keycode"], 65);
    assert_eq!(events[2]["kind"], "joypad_motion");
    let shoot = actions[4]["events"].as_array().unwrap();
    assert_eq!(shoot[0]["kind"], "mouse_button");
    assert_eq!(shoot[0]["button_index"], 1);
    assert_eq!(
        v["enabled_plugins"],
        json!(["res://addons/godot_mcp/plugin.cfg"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn list_files_by_kind_and_paged() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let scenes = call_ok(&client, "list_files", json!({"kind": "scene"})).await;
    let paths: Vec<&str> = scenes["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "res://scenes/level_3d.tscn",
            "res://scenes/main_2d.tscn",
            "res://scenes/player.tscn"
        ]
    );
    let scripts = call_ok(
        &client,
        "list_files",
        json!({"kind": "script", "dir": "res://scripts"}),
    )
    .await;
    let paths: Vec<&str> = scripts["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"res://scripts/player.gd"));
    assert!(
        paths.iter().all(|p| p.ends_with(".gd")),
        "sidecar .uid files are not listed: {paths:?}"
    );

    // Page through everything two at a time; the pages add up to the whole listing.
    let all = call_ok(&client, "list_files", json!({})).await;
    let total = all["total"].as_u64().unwrap() as usize;
    assert!(total >= 10, "{all}");
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 2});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let page = call_ok(&client, "list_files", args).await;
        for f in page["files"].as_array().unwrap() {
            seen.push(f["path"].as_str().unwrap().to_string());
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
        assert!(seen.len() <= total, "paging does not terminate");
    }
    let whole: Vec<String> = all["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, whole);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn get_scene_tree_reads_nodes_instances_groups_and_connections() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/main_2d.tscn"}),
    )
    .await;
    assert_eq!(v["root"]["name"], "Main");
    assert_eq!(v["root"]["type"], "Node2D");
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(v["node_count"].as_u64().unwrap() as usize, nodes.len());
    let by_path = |p: &str| {
        nodes
            .iter()
            .find(|n| n["path"] == p)
            .unwrap_or_else(|| panic!("no node {p}"))
    };
    assert_eq!(by_path(".")["script"], "res://scripts/main.gd");
    assert_eq!(by_path("Player")["instance"], "res://scenes/player.tscn");
    assert!(
        by_path("Player").get("type").is_none(),
        "an instanced node has no type"
    );
    assert_eq!(by_path("Enemy")["groups"], json!(["enemies"]));
    assert_eq!(by_path("Enemy/CollisionShape2D")["parent"], "Enemy");
    // Values in the one model (docs/values.md): a sub-resource reads back as its
    // class and properties, as the editor reads it.
    let shape = &by_path("Enemy/CollisionShape2D")["properties"]["shape"];
    assert_eq!(shape["$type"], "Resource", "{shape}");
    assert_eq!(shape["class"], "RectangleShape2D", "{shape}");
    assert_eq!(
        shape["properties"]["size"],
        json!({"$type": "Vector2", "x": 64.0, "y": 64.0})
    );
    assert_eq!(
        by_path("HUD/ScoreLabel")["groups"],
        json!(["hud", "persistent"])
    );
    assert_eq!(by_path("HUD/ScoreLabel")["properties"]["text"], "Score: 0");
    assert_eq!(
        by_path("Background")["properties"]["position"],
        json!({"$type": "Vector2", "x": 576.0, "y": 324.0})
    );
    let conns = v["connections"].as_array().unwrap();
    assert!(conns.iter().any(|c| c["signal"] == "timeout"
        && c["from"] == "SpawnTimer"
        && c["method"] == "_on_spawn_timer_timeout"));
    assert!(
        conns
            .iter()
            .any(|c| c["signal"] == "hit" && c["flags"] == 3)
    );
    assert_eq!(v["editable"], json!(["Player"]));

    // Paging and the compact form.
    let page = call_ok(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/main_2d.tscn", "offset": 1, "limit": 2, "include_properties": false}),
    )
    .await;
    let nodes = page["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0]["path"], "Background");
    assert!(nodes[0].get("properties").is_none());
    assert_eq!(page["next_offset"], 3);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn get_scene_tree_reads_3d_transforms() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let v = call_ok(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/level_3d.tscn"}),
    )
    .await;
    let nodes = v["nodes"].as_array().unwrap();
    let types: Vec<&str> = nodes.iter().filter_map(|n| n["type"].as_str()).collect();
    for t in ["Camera3D", "DirectionalLight3D", "MeshInstance3D"] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
    let camera = nodes.iter().find(|n| n["type"] == "Camera3D").unwrap();
    assert_eq!(
        camera["properties"]["transform"]["$type"], "Transform3D",
        "{camera}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn read_resource_and_scripts_read() {
    let demo = demo_copy();
    let client = connect(demo.path()).await;
    let stats = call_ok(
        &client,
        "read_resource",
        json!({"path": "res://resources/player_stats.tres"}),
    )
    .await;
    assert_eq!(stats["type"], "Resource");
    assert_eq!(stats["script_class"], "PlayerStats");
    assert_eq!(stats["script"], "res://scripts/player_stats.gd");
    assert_eq!(stats["properties"]["max_health"], 100);
    // PackedStringArray in the value model (docs/values.md), not Raw.
    assert_eq!(
        stats["properties"]["abilities"],
        json!({"$type": "PackedStringArray", "values": ["dash", "double_jump"]})
    );
    let theme = call_ok(
        &client,
        "read_resource",
        json!({"path": "res://resources/ui_theme.tres"}),
    )
    .await;
    assert_eq!(theme["type"], "Theme");
    let subs: Vec<&str> = theme["sub_resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect();
    assert_eq!(subs, ["StyleBoxFlat", "Gradient"]);

    let script = call_ok(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/player.gd"}),
    )
    .await;
    let content = script["content"].as_str().unwrap();
    let on_disk = std::fs::read_to_string(demo.path().join("scripts/player.gd")).unwrap();
    assert_eq!(content, on_disk);
    assert_eq!(script["language"], "gdscript");
    assert_eq!(
        script["line_count"].as_u64().unwrap() as usize,
        on_disk.lines().count()
    );
    assert_eq!(script["sha256"].as_str().unwrap().len(), 64);

    // Wrong kind of file for the tool.
    let err = call_err(
        &client,
        "read_resource",
        json!({"path": "res://scenes/main_2d.tscn"}),
    )
    .await;
    assert_eq!(err["code"], "INVALID_PARAMS");
    let err = call_err(
        &client,
        "get_scene_tree",
        json!({"path": "res://resources/ui_theme.tres"}),
    )
    .await;
    assert_eq!(err["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_malformed_scene_is_a_parse_error_with_line_and_column() {
    let project = support::demo_copy();
    std::fs::write(
        project.path().join("scenes/broken.tscn"),
        "[gd_scene format=3]\n\n[node name=\"Root\" type=\"Node2D\"]\nposition = Vector2(1, 2\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("scenes/orphan.tscn"),
        "[gd_scene format=3]\n\n[node name=\"Root\" type=\"Node\"]\n\n[node name=\"Kid\" type=\"Node\" parent=\"Nope\"]\n",
    )
    .unwrap();
    let client = connect(project.path()).await;
    let err = call_err(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/broken.tscn"}),
    )
    .await;
    assert_eq!(err["code"], "PARSE_ERROR", "{err}");
    assert_eq!(err["details"]["line"], 4, "{err}");
    assert!(err["details"]["column"].as_u64().unwrap() >= 1);
    let err = call_err(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/orphan.tscn"}),
    )
    .await;
    assert_eq!(err["code"], "PARSE_ERROR", "{err}");
    assert_eq!(err["details"]["line"], 5, "{err}");
    // The good scenes still read.
    call_ok(
        &client,
        "get_scene_tree",
        json!({"path": "res://scenes/player.tscn"}),
    )
    .await;
    client.cancel().await.unwrap();
}

/// Every environment variable the server reads is explained by `godot-mcp serve --help`
/// (the variables only tests and child processes use are named here as exceptions).
/// Found by scanning the sources, so a new variable without help text fails this test.
#[test]
fn help_lists_every_environment_variable() {
    const NOT_FOR_USERS: &[&str] = &[
        "GODOT_MCP_CRASH_AT",      // failpoint builds only (tests)
        "GODOT_MCP_TEST_COUNTERS", // the HTTP debug counters route (tests)
        "GODOT_MCP_SESSION_NONCE", // set by the server for the games it launches
    ];
    let out = support::server_std()
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut read = std::collections::BTreeSet::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, _) in text.match_indices("\"GODOT_") {
                    let name: String = text[i + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                        .collect();
                    read.insert(name);
                }
            }
        }
    }
    assert!(
        read.contains("GODOT_MCP_STATE_DIR"),
        "the scan found nothing: {read:?}"
    );
    let missing: Vec<_> = read
        .iter()
        .filter(|v| !NOT_FOR_USERS.contains(&v.as_str()) && !help.contains(v.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "serve --help does not explain {missing:?}"
    );
}

/// A game that does not answer its probe (here: stopped at a breakpoint) makes
/// evaluate_expression a TIMEOUT that may have applied (the expression was sent and
/// runs when the game resumes), never an INTERNAL server error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_timeout_is_a_timeout_that_may_have_applied() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"brk\"\n",
    )
    .unwrap();
    let state = tempfile::Builder::new()
        .prefix("bk")
        .tempdir_in("/tmp")
        .unwrap();
    let standin = support::standin();
    let client = support::connect_in(
        project.path(),
        state,
        &[
            ("GODOT_BIN", standin.to_str().unwrap()),
            ("GODOT_STANDIN_HANG", "1"),
            ("GODOT_STANDIN_BREAK", "1"),
            ("GODOT_MCP_EDITOR_BRIDGE", "off"),
        ],
    )
    .await;
    call_ok(&client, "play_scene", json!({})).await;
    let e = call_err(
        &client,
        "evaluate_expression",
        json!({"expression": "1 + 1"}),
    )
    .await;
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert_eq!(e["details"]["may_have_applied"], true, "{e}");
    call_ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

/// Ctrl-C (SIGINT) and SIGTERM to a stdio server are a normal stop: the supervised
/// game (in its own process group, which the terminal's SIGINT never reaches, and
/// here ignoring SIGTERM with a forked child) is stopped and recorded by the server
/// itself before it exits 0, so nothing is left for startup reconciliation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_signal_stops_and_records_every_session_then_exits_0() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    for signal in [rustix::process::Signal::INT, rustix::process::Signal::TERM] {
        let (project, state) = signal_fixture();
        let mut child = support::server_tokio()
            .arg("serve")
            .arg("--project")
            .arg(project.path())
            .env("GODOT_MCP_STATE_DIR", state.path())
            .env("GODOT_MCP_EDITOR_BRIDGE", "off")
            .env("GODOT_MCP_TOOLSETS", "runtime")
            .env("GODOT_BIN", support::standin())
            .env("GODOT_STANDIN_HANG", "1")
            .env("GODOT_STANDIN_FORK", "1")
            .env("GODOT_STANDIN_IGNORE_TERM", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(support::server_stderr())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let client = ().serve(io).await.expect("handshake");
        let v = client
            .call_tool(CallToolRequestParams::new("play_scene").with_arguments(Default::default()))
            .await
            .unwrap()
            .structured_content
            .unwrap();
        let pgid = v["pgid"].as_i64().expect("a session") as i32;
        let _orphans = KillGroup(pgid);
        let txn = v["session_id"].as_str().unwrap().to_string();
        assert!(!support::group_members(pgid).is_empty());
        let pid = rustix::process::Pid::from_raw(child.id().unwrap() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(0), "{signal:?}: {status:?}");
        // The server exited only after the session's group was empty.
        assert!(
            support::group_members(pgid).is_empty(),
            "{signal:?}: the game outlived the server"
        );
        drop(client);
        assert_recorded_by_the_server(state.path(), &txn, signal);
    }
}

/// The same over streamable HTTP: SIGINT or SIGTERM stops and records the session a
/// client started, then the server exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_stops_and_records_sessions_on_a_stop_signal() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use tokio::io::AsyncBufReadExt;
    for signal in [rustix::process::Signal::INT, rustix::process::Signal::TERM] {
        let (project, state) = signal_fixture();
        let mut child = support::server_tokio()
            .arg("serve")
            .arg("--project")
            .arg(project.path())
            .arg("--http")
            .arg("127.0.0.1:0")
            .env("GODOT_MCP_STATE_DIR", state.path())
            .env("GODOT_MCP_EDITOR_BRIDGE", "off")
            .env_remove("GODOT_MCP_AUTH_TOKEN")
            .env("GODOT_MCP_TOOLSETS", "runtime")
            .env("GODOT_BIN", support::standin())
            .env("GODOT_STANDIN_HANG", "1")
            .env("GODOT_STANDIN_FORK", "1")
            .env("GODOT_STANDIN_IGNORE_TERM", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server printed its listening line");
            if let Some(url) = line.strip_prefix("godot-mcp serve: listening on ") {
                break url.replace("0.0.0.0", "127.0.0.1");
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        let client = ().serve(transport).await.expect("handshake");
        let v = client
            .call_tool(CallToolRequestParams::new("play_scene").with_arguments(Default::default()))
            .await
            .unwrap()
            .structured_content
            .unwrap();
        let pgid = v["pgid"].as_i64().expect("a session") as i32;
        let _orphans = KillGroup(pgid);
        let txn = v["session_id"].as_str().unwrap().to_string();
        let pid = rustix::process::Pid::from_raw(child.id().unwrap() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), Some(0), "{signal:?}: {status:?}");
        assert!(
            support::group_members(pgid).is_empty(),
            "{signal:?}: the game outlived the server"
        );
        drop(client);
        assert_recorded_by_the_server(state.path(), &txn, signal);
    }
}

fn signal_fixture() -> (tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"sig\"\n",
    )
    .unwrap();
    // Short: the control socket lives under it (Unix socket paths are short).
    let state = tempfile::Builder::new()
        .prefix("sg")
        .tempdir_in("/tmp")
        .unwrap();
    (project, state)
}

/// The session's transaction is terminal, recorded live by the server that stopped
/// it (not left open for the next start to reconcile).
fn assert_recorded_by_the_server(
    state: &std::path::Path,
    txn: &str,
    signal: rustix::process::Signal,
) {
    let db = std::fs::read_dir(state)
        .unwrap()
        .flatten()
        .map(|d| d.path().join("journal.sqlite3"))
        .find(|p| p.is_file())
        .expect("a journal");
    let conn = rusqlite::Connection::open(db).unwrap();
    let (status, proof): (String, String) = conn
        .query_row(
            "SELECT state, proof_json FROM transactions WHERE id = ?1",
            [txn],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "committed", "{signal:?}: {proof}");
    let proof: Value = serde_json::from_str(&proof).unwrap();
    assert_eq!(proof["boundary_empty"], true, "{proof}");
    assert_eq!(proof["derived_by"], "live", "{proof}");
    assert_eq!(proof["end"]["sent_by_server"], true, "{proof}");
}

/// Kills the test's own game group if a failing test left it running.
struct KillGroup(i32);

impl Drop for KillGroup {
    fn drop(&mut self) {
        if !support::group_members(self.0).is_empty()
            && let Some(p) = rustix::process::Pid::from_raw(self.0)
        {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
    }
}

/// Counts tools/list_changed notifications and wakes a waiter on each.
#[derive(Clone, Default)]
struct ListChanged {
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    notify: std::sync::Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for ListChanged {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.notify.notify_one();
    }
}

/// Guards issue 40's "found in one step": with the default tool list as a client starts
/// it, an agent that needs a tool outside it is led by the server's instructions to
/// `manage_toolsets {"find": …}`, which finds the tool from words ("tile map cells",
/// "rescan"), enables its toolset in the same call (tools/list_changed sent) so the
/// next call is the tool itself. Every refusal on the way names the tool: a call of a
/// disabled tool answers the exact call that enables it, and an unknown name close to
/// a real tool names that tool.
#[tokio::test]
async fn find_reaches_a_tool_outside_the_default_list_in_one_call() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use std::sync::atomic::Ordering;

    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    std::fs::write(
        project.path().join("level.tscn"),
        "[gd_scene format=3]\n\n[node name=\"Level\" type=\"Node2D\"]\n\n\
         [node name=\"Ground\" type=\"TileMapLayer\" parent=\".\"]\n",
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = support::server_tokio();
    cmd.arg("serve").arg("--project").arg(project.path());
    cmd.env("GODOT_MCP_STATE_DIR", state.path());
    cmd.env("GODOT_MCP_EDITOR_BRIDGE", "off");
    cmd.env_remove("GODOT_MCP_TOOLSETS"); // the default list
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(support::server_stderr())
        .spawn()
        .unwrap();
    let watcher = ListChanged::default();
    let (count, notify) = (watcher.count.clone(), watcher.notify.clone());
    let client = watcher.serve(transport).await.unwrap();
    let call = |name: &str, args: Value| {
        let args = args.as_object().unwrap().clone();
        client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
    };
    let listed = || async {
        client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    };

    // The instructions lead to the search.
    let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(
        instructions.contains(r#"manage_toolsets {"find""#),
        "{instructions}"
    );
    // And show the project as it is on disk (its scene's tree), so an agent's first
    // call need not be a look at the files.
    assert!(
        instructions.contains("\nres://level.tscn: Level:Node2D, Ground:TileMapLayer"),
        "{instructions}"
    );
    // A project this small comes whole: each text file with its hash (agent run 13's
    // pilot began 6 tasks of 7 with a `cat`).
    assert!(
        instructions.contains("\n--- res://level.tscn sha256 "),
        "{instructions}"
    );
    assert!(
        instructions.contains("[node name=\"Ground\" type=\"TileMapLayer\" parent=\".\"]"),
        "{instructions}"
    );
    let before = listed().await;
    assert!(!before.contains(&"get_tilemap_cells".to_string()));
    assert!(!before.contains(&"rescan_filesystem".to_string()));

    // A disabled tool's refusal is the exact call that enables it.
    let r = call(
        "get_tilemap_cells",
        json!({"path": "res://level.tscn", "node": "Ground"}),
    )
    .await
    .unwrap();
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["code"], "TOOL_DISABLED", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .unwrap()
            .contains(r#"manage_toolsets {"enable":["tilemap"]}"#),
        "{e}"
    );
    // An unknown name close to a real tool names it, and how to list it.
    let e = call("rescan_filesytem", json!({})).await.unwrap_err();
    let rmcp::ServiceError::McpError(e) = e else {
        panic!("{e:?}")
    };
    assert!(e.message.contains("rescan_filesystem"), "{e:?}");
    let data = e.data.unwrap();
    assert_eq!(data["closest"], "rescan_filesystem", "{data}");
    assert!(
        data["hint"]
            .as_str()
            .unwrap()
            .contains(r#"manage_toolsets {"enable":["filesystem"]}"#),
        "{data}"
    );

    // A dry run only searches: nothing changes, nothing is announced.
    let r = call(
        "manage_toolsets",
        json!({"find": "tile map cells", "dry_run": true}),
    )
    .await
    .unwrap();
    let preview = r.structured_content.unwrap();
    assert_eq!(preview["applied"], false, "{preview}");
    // It reads as not done (run 9: `changed: true` with the would-be set was read as done).
    assert_eq!(preview["changed"], false, "{preview}");
    assert_eq!(preview["would_enable"], json!(["tilemap"]), "{preview}");
    assert!(
        !preview["enabled"].to_string().contains("tilemap"),
        "{preview}"
    );
    assert!(
        preview["found"][0]
            .as_str()
            .unwrap()
            .starts_with("get_tilemap_cells (tilemap, off): "),
        "{preview}"
    );
    assert!(!listed().await.contains(&"get_tilemap_cells".to_string()));
    assert_eq!(count.load(Ordering::SeqCst), 0);

    // One call finds and enables; the list-changed notice comes; the tool is callable.
    for (query, tool, toolset) in [
        ("tile map cells", "get_tilemap_cells", "tilemap"),
        ("rescan", "rescan_filesystem", "filesystem"),
    ] {
        let heard = notify.notified();
        let r = call("manage_toolsets", json!({"find": query}))
            .await
            .unwrap();
        let out = r.structured_content.unwrap();
        assert_eq!(out["changed"], true, "{query}: {out}");
        assert!(
            out["found"][0]
                .as_str()
                .unwrap()
                .starts_with(&format!("{tool} ({toolset}): ")),
            "{query}: {out}"
        );
        tokio::time::timeout(std::time::Duration::from_secs(10), heard)
            .await
            .expect("tools/list_changed after the toolset was enabled");
        assert!(listed().await.contains(&tool.to_string()), "{query}");
    }
    assert_eq!(count.load(Ordering::SeqCst), 2);
    let r = call(
        "get_tilemap_cells",
        json!({"path": "res://level.tscn", "node": "Ground"}),
    )
    .await
    .unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert_eq!(r.structured_content.unwrap()["cell_count"], 0);
    // No editor here: rescan_filesystem runs and says so (not TOOL_DISABLED).
    let r = call("rescan_filesystem", json!({})).await.unwrap();
    let e = r.structured_content.unwrap()["error"].clone();
    assert_eq!(e["required"], "bridge_connected", "{e}");
    client.cancel().await.unwrap();
}

/// `serve --trace FILE`: three calls (one ok, one refused by bad input, one that runs
/// and fails) are three lines, each with its tool, outcome, error code and sizes; the
/// file is created 0600.
#[tokio::test]
async fn serve_trace_writes_one_line_per_call() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("calls.jsonl");
    let demo = demo_copy();
    let client =
        support::connect_with(demo.path(), &[("GODOT_MCP_TRACE", trace.to_str().unwrap())]).await;
    call_ok(&client, "project_info", json!({})).await;
    let refused = call_err(&client, "read_resource", json!({"path": "/etc/passwd"})).await;
    assert_eq!(refused["code"], "PATH_REFUSED", "{refused}");
    let failed = call_err(
        &client,
        "read_resource",
        json!({"path": "res://no/such/file.tres"}),
    )
    .await;
    assert_eq!(failed["code"], "RESOURCE_NOT_FOUND", "{failed}");
    // Each line is flushed as its call ends: read while the server still runs.
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    let expect = [
        ("project_info", "ok", Value::Null),
        ("read_resource", "refused", json!("PATH_REFUSED")),
        ("read_resource", "error", json!("RESOURCE_NOT_FOUND")),
    ];
    for (line, (tool, outcome, code)) in lines.iter().zip(expect) {
        assert_eq!(line["tool"], tool, "{line}");
        assert_eq!(line["outcome"], outcome, "{line}");
        assert_eq!(line["error_code"], code, "{line}");
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            keys.len(),
            7,
            "exactly ts, tool, duration_ms, outcome, error_code, bytes_in, bytes_out: {line}"
        );
        assert!(line["ts"].as_f64().unwrap() > 1.7e9, "{line}");
        assert!(line["duration_ms"].as_f64().unwrap() >= 0.0, "{line}");
        assert!(line["bytes_out"].as_u64().unwrap() > 20, "{line}");
    }
    // The arguments' compact JSON: `{}` and `{"path":"/etc/passwd"}`.
    assert_eq!(lines[0]["bytes_in"], 2);
    assert_eq!(lines[1]["bytes_in"], r#"{"path":"/etc/passwd"}"#.len());
    assert!(lines[0]["ts"].as_f64() <= lines[2]["ts"].as_f64());
    let mode = std::fs::metadata(&trace).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    client.cancel().await.unwrap();
}

/// A trace file that cannot be opened is a CLI error (exit 2) naming the flag, before
/// anything is served or journaled.
#[test]
fn serve_trace_to_a_missing_folder_is_a_cli_error() {
    let state = tempfile::tempdir().unwrap();
    let demo = demo_copy();
    let out = support::server_std()
        .args(["serve", "--project"])
        .arg(demo.path())
        .arg("--trace")
        .arg(state.path().join("no-such-folder/calls.jsonl"))
        .env("GODOT_MCP_STATE_DIR", state.path())
        .env("GODOT_MCP_EDITOR_BRIDGE", "off")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("godot-mcp serve: error: --trace ")
            && stderr.contains("no-such-folder/calls.jsonl"),
        "{stderr}"
    );
    // Nothing was opened for the project: no journal in the state dir.
    assert_eq!(
        std::fs::read_dir(state.path()).unwrap().count(),
        0,
        "{stderr}"
    );
}
