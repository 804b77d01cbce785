//! One change, one transaction (issue 28), against the real binary over MCP.
//!
//! A `move_file` of a scene with its `.uid`, named by another scene, is five files:
//! create the new file, create its `.uid`, rewrite the scene that names it, delete the
//! old file, delete the old `.uid`. The server is SIGKILLed at every boundary inside
//! that change (each per-file boundary at each of its crossings: the failpoint
//! `point@n`); after each restart the project is byte-for-byte its pre-state with
//! `startup reconciliation compensated=1`, or its post-state with `committed=1`, and
//! the gate is open. (The retry after a failure midway is pinned in the tools'
//! unit tests: `a_retry_after_a_move_stopped_midway_is_never_a_bare_committed`.)
//! The second test does the same for an agent's own change (`begin_change`, two
//! writes, `commit_change`).
//!
//! Needs the `failpoints` feature (on in every test build of this package): the server
//! honours `GODOT_MCP_CRASH_AT=<point>[@n]`, printing `FAILPOINT_REACHED <point>[@n]`
//! on stderr and SIGKILLing itself the moment it crosses that point (the n-th time).
// Unix only: it SIGKILLs the server (docs/platforms.md).
#![cfg(unix)]
#![cfg(feature = "failpoints")]

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use godot_mcp_journal::failpoints as fp;
use serde_json::{Value, json};

const OLD: &str =
    "[gd_scene format=3 uid=\"uid://cold1\"]\n\n[node name=\"Enemy\" type=\"Node2D\"]\n";
const OLD_UID: &str = "uid://cold1\n";
const MAIN: &str = "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"PackedScene\" path=\"res://enemies/enemy.tscn\" id=\"1\"]\n\n[node name=\"Main\" type=\"Node2D\"]\n";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("project.godot"), "config_version=5\n").unwrap();
    std::fs::create_dir_all(p.join("enemies")).unwrap();
    std::fs::write(p.join("enemies/enemy.tscn"), OLD).unwrap();
    std::fs::write(p.join("enemies/enemy.tscn.uid"), OLD_UID).unwrap();
    std::fs::write(p.join("main.tscn"), MAIN).unwrap();
    dir
}

fn move_args() -> Value {
    json!({
        "from": "res://enemies/enemy.tscn",
        "to": "res://actors/enemy.tscn",
        "confirm": true,
    })
}

/// Every project file (but the journal's state) and its bytes.
fn snapshot(project: &Path) -> BTreeMap<String, Vec<u8>> {
    support::files_under(project, &[".state"])
}

/// Every boundary inside the 5-file change, in order: `point@n`, the n-th crossing.
fn boundaries() -> Vec<String> {
    let mut out = vec![format!("{}@1", fp::CHANGE_AFTER_INTENT)];
    for n in 1..=3 {
        out.push(format!("{}@{n}", fp::AFTER_TEMP_WRITE));
        out.push(format!("{}@{n}", fp::AFTER_TEMP_FSYNC));
    }
    // Three writes (create, create, overwrite), then two deletes.
    for n in 1..=5 {
        out.push(format!("{}@{n}", fp::AFTER_PRE_HASH));
        out.push(if n <= 3 {
            format!("{}@{n}", fp::AFTER_RENAME)
        } else {
            format!("{}@{}", fp::AFTER_UNLINK, n - 3)
        });
        out.push(format!("{}@{n}", fp::AFTER_DIR_FSYNC));
        out.push(format!("{}@{n}", fp::CHANGE_AFTER_EFFECT));
    }
    out.push(format!("{}@1", fp::CHANGE_AFTER_POST_HASH));
    out.push(format!("{}@1", fp::CHANGE_AFTER_TERMINAL));
    out
}

/// Guards against: a move that a crash leaves half done (the file in both places, or
/// a scene naming a file that is gone) and a verdict that does not match the disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_killed_at_every_boundary_is_whole_or_not_at_all() {
    // The post-state, from one move without a crash.
    let post = {
        let p = project();
        let state = p.path().join(".state");
        let client = support::connect_path(p.path(), &state).await;
        let done = support::call_ok(&client, "move_file", move_args()).await;
        assert_eq!(done["done"].as_array().unwrap().len(), 5, "{done}");
        client.cancel().await.unwrap();
        snapshot(p.path())
    };
    let pre = snapshot(project().path());
    assert_ne!(pre, post);
    whole_at_every_boundary(
        boundaries(),
        project,
        || vec![("move_file", move_args())],
        (pre, post),
        // Whole from the last file's unlink on, nothing before it.
        &format!("{}@2", fp::AFTER_UNLINK),
        None,
    )
    .await;
}

// ---------------------------------------------------------------------------------
// An agent's own change: begin_change, two file writes (a create and an overwrite),
// commit_change. Killed at every boundary inside the commit, it is whole or not at
// all. (Before the commit nothing is on disk: `tools::change::tests`.) The mixed
// change with an editor edit is below.
// ---------------------------------------------------------------------------------

const B_OLD: &str = "extends Node\n# old\n";

fn agent_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("project.godot"), "config_version=5\n").unwrap();
    std::fs::create_dir_all(p.join("scripts")).unwrap();
    std::fs::write(p.join("scripts/b.gd"), B_OLD).unwrap();
    dir
}

fn script(path: &str, text: &str) -> Value {
    json!({"path": path, "content": text, "confirm": true})
}

/// The agent's calls: begin, two writes, commit.
fn agent_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("begin_change", json!({})),
        (
            "write_script",
            script("res://scripts/a.gd", "extends Node\n# a\n"),
        ),
        (
            "write_script",
            script("res://scripts/b.gd", "extends Node\n# new\n"),
        ),
        ("commit_change", json!({})),
    ]
}

/// Every boundary inside the commit of the 2-file change, in order.
fn agent_boundaries() -> Vec<String> {
    let mut out = vec![format!("{}@1", fp::CHANGE_AFTER_INTENT)];
    for n in 1..=2 {
        out.push(format!("{}@{n}", fp::AFTER_TEMP_WRITE));
        out.push(format!("{}@{n}", fp::AFTER_TEMP_FSYNC));
    }
    for n in 1..=2 {
        out.push(format!("{}@{n}", fp::AFTER_PRE_HASH));
        out.push(format!("{}@{n}", fp::AFTER_RENAME));
        out.push(format!("{}@{n}", fp::AFTER_DIR_FSYNC));
        out.push(format!("{}@{n}", fp::CHANGE_AFTER_EFFECT));
    }
    out.push(format!("{}@1", fp::CHANGE_AFTER_POST_HASH));
    out.push(format!("{}@1", fp::CHANGE_AFTER_TERMINAL));
    out
}

/// Sends `calls` (a change, from begin to commit) on one session and checks the change
/// they report committed.
async fn commit_all(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    calls: Vec<(&'static str, Value)>,
) {
    let mut id = String::new();
    for (tool, args) in calls {
        let out = support::call_ok(client, tool, args).await;
        id = out["change_id"].as_str().unwrap().to_owned();
    }
    let listed = support::call_ok(client, "list_transactions", json!({})).await;
    assert_eq!(
        support::transaction_row(&listed, &id)["status"],
        "committed",
        "{listed}"
    );
}

/// Guards against: an agent's change that a crash leaves half made, and a verdict
/// that does not match the disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_change_killed_at_every_boundary_is_whole_or_not_at_all() {
    let post = {
        let p = agent_project();
        let state = p.path().join(".state");
        let client = support::connect_path(p.path(), &state).await;
        commit_all(&client, agent_calls()).await;
        client.cancel().await.unwrap();
        snapshot(p.path())
    };
    let pre = snapshot(agent_project().path());
    assert_ne!(pre, post);
    whole_at_every_boundary(
        agent_boundaries(),
        agent_project,
        agent_calls,
        (pre, post),
        // Whole from the last file's rename on, nothing before it.
        &format!("{}@2", fp::AFTER_RENAME),
        None,
    )
    .await;
}

// ---------------------------------------------------------------------------------
// An agent's change mixing two file writes and an editor edit: the edit is sent as ONE
// scene.steps request after the intent and before any file. Killed at every boundary
// (before the editor request, after the editor applied it, each file boundary), then
// restarted with the stand-in editor reconnecting as the add-on does: the files and
// the editor's scene are both exactly pre or post, and the journal's verdict matches.
// ---------------------------------------------------------------------------------

fn mixed_calls() -> Vec<(&'static str, Value)> {
    let mut calls = agent_calls();
    let commit = calls.pop().unwrap();
    calls.push((
        "set_node_property",
        json!({"node": "Player", "property": "speed", "value": 5}),
    ));
    calls.push(commit);
    calls
}

/// Guards against: an agent's change whose editor edit survives a crash that put its
/// files back (or the reverse), and a verdict that does not match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_mixing_files_and_an_editor_edit_killed_at_every_boundary_is_whole() {
    let editor_post = {
        let p = agent_project();
        let state = p.path().join(".state");
        let sim = Editor::start(p.path());
        let client = support::connect_path(p.path(), &state).await;
        sim.connected();
        commit_all(&client, mixed_calls()).await;
        client.cancel().await.unwrap();
        let post = (snapshot(p.path()), sim.scene());
        sim.stop();
        post
    };
    assert_eq!(
        editor_post.1.len(),
        1,
        "the edit is in the editor: {:?}",
        editor_post.1
    );
    let pre = (snapshot(agent_project().path()), Scene::new());
    assert_ne!(pre.0, editor_post.0);
    let mut points = vec![
        format!("{}@1", fp::CHANGE_AFTER_INTENT),
        format!("{}@1", fp::CHANGE_AFTER_EDITOR),
    ];
    points.extend(agent_boundaries().into_iter().skip(1));
    whole_at_every_boundary(
        points,
        agent_project,
        mixed_calls,
        (pre.0, editor_post.0),
        &format!("{}@2", fp::AFTER_RENAME),
        Some((pre.1, editor_post.1)),
    )
    .await;
}

type Scene = BTreeMap<String, Value>;

/// The stand-in editor of one run: its scene, its thread, and what it saw.
struct Editor {
    sim: Arc<Mutex<support::SimEditor>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    events: Arc<Mutex<std::sync::mpsc::Receiver<support::PeerEvent>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Editor {
    fn start(project: &Path) -> Self {
        let sim = Arc::new(Mutex::new(support::SimEditor::default()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = support::sim_editor_peer(project, sim.clone(), stop.clone(), tx);
        Self {
            sim,
            stop,
            events: Arc::new(Mutex::new(rx)),
            thread,
        }
    }

    /// Waits until the stand-in is connected to a server.
    fn connected(&self) {
        wait_connected(&self.events);
    }

    /// Waits for a status frame in which no journal row is open (the server owes the
    /// editor nothing) and returns it.
    fn settled(&self) -> godot_mcp_protocol::ServerStatus {
        let rx = self.events.lock().unwrap();
        loop {
            match rx.recv().expect("the stand-in editor ended") {
                support::PeerEvent::Status(s) if s.recent.iter().all(|r| r.status != "open") => {
                    return s;
                }
                _ => {}
            }
        }
    }

    fn scene(&self) -> Scene {
        self.sim.lock().unwrap().props.clone()
    }

    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap();
    }
}

fn wait_connected(events: &Mutex<std::sync::mpsc::Receiver<support::PeerEvent>>) {
    let rx = events.lock().unwrap();
    loop {
        if let support::PeerEvent::Connected = rx.recv().expect("the stand-in editor ended") {
            return;
        }
    }
}

type Snapshot = BTreeMap<String, Vec<u8>>;

/// Kills the server at each of `points` inside `calls` on a fresh `project()`,
/// restarts it, and derives the verdict from disk: the pre-state is compensated, the
/// post-state committed, anything else a failure. The startup lines must name that
/// verdict (nothing to reconcile once the terminal row is recorded) and open the write
/// gate; every point before `landed` is compensated, `landed` and after committed.
///
/// With `editor` (the scene before and after), a stand-in editor serves each run and
/// reconnects to the restarted server as the add-on does: its scene must match the
/// files' verdict, and so must the change's row once the server owes it nothing (a
/// change whose files were put back waits for the editor to take its edit back).
async fn whole_at_every_boundary(
    points: Vec<String>,
    project: fn() -> tempfile::TempDir,
    calls: fn() -> Vec<(&'static str, Value)>,
    (pre, post): (Snapshot, Snapshot),
    landed: &str,
    editor: Option<(Scene, Scene)>,
) {
    let mut verdicts = BTreeMap::new();
    for point in &points {
        let p = project();
        let state = p.path().join(".state");
        let sim = editor.as_ref().map(|_| Editor::start(p.path()));
        let events = sim.as_ref().map(|s| s.events.clone());
        support::call_until_failpoint_after(p.path(), &state, point, calls(), move || {
            if let Some(events) = events {
                wait_connected(&events);
            }
        })
        .await;
        let (mut child, lines) = support::start_and_read_gate(p.path(), &state);
        let row = sim.as_ref().map(|s| {
            s.connected();
            let status = s.settled();
            status.recent.first().map(|r| r.status.clone())
        });
        drop(child.stdin.take());
        child.wait().unwrap();
        let now = snapshot(p.path());
        let verdict = if now == pre {
            "compensated"
        } else if now == post {
            "committed"
        } else {
            panic!("at {point}: neither pre- nor post-state: {:?}", now.keys())
        };
        if let (Some(sim), Some((scene_pre, scene_post))) = (sim, &editor) {
            let scene = sim.scene();
            sim.stop();
            let want = if verdict == "committed" {
                scene_post
            } else {
                scene_pre
            };
            assert_eq!(
                &scene, want,
                "at {point}: the editor's scene is not {verdict}"
            );
            assert_eq!(
                row.flatten().as_deref(),
                Some(verdict),
                "at {point}: the change's row"
            );
        }
        // Once the terminal row is recorded there is nothing left to reconcile.
        let reconciled = lines
            .iter()
            .filter(|l| l.contains("startup reconciliation"))
            .collect::<Vec<_>>();
        let waits = reconciled.len() == 1 && reconciled[0].contains("waits for the editor");
        if point.starts_with(fp::CHANGE_AFTER_TERMINAL) {
            assert!(reconciled.is_empty(), "at {point}: {lines:?}");
        } else if editor.is_some() && verdict == "compensated" && waits {
            // Its files put back; the editor part settled once the editor connected.
        } else {
            assert_eq!(
                reconciled,
                [&format!(
                    "godot-mcp serve: startup reconciliation {verdict}=1"
                )],
                "at {point}: {lines:?}"
            );
        }
        assert_eq!(
            lines.last().map(String::as_str),
            Some("godot-mcp serve: write gate open"),
            "at {point}: {lines:?}"
        );
        verdicts.insert(point.clone(), verdict);
    }
    let mut after = false;
    for point in &points {
        after |= point == landed;
        let want = if after { "committed" } else { "compensated" };
        assert_eq!(verdicts[point], want, "at {point}");
    }
}
