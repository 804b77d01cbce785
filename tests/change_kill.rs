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
    )
    .await;
}

// ---------------------------------------------------------------------------------
// An agent's own change: begin_change, two file writes (a create and an overwrite),
// commit_change. Killed at every boundary inside the commit, it is whole or not at
// all. (Before the commit nothing is on disk: `tools::change::tests`.) Editor edits
// are refused inside a change today (docs/recovery.md), so this change is files only.
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

/// Guards against: an agent's change that a crash leaves half made, and a verdict
/// that does not match the disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_change_killed_at_every_boundary_is_whole_or_not_at_all() {
    let post = {
        let p = agent_project();
        let state = p.path().join(".state");
        let client = support::connect_path(p.path(), &state).await;
        let mut id = String::new();
        for (tool, args) in agent_calls() {
            let out = support::call_ok(&client, tool, args).await;
            id = out["change_id"].as_str().unwrap().to_owned();
        }
        let listed = support::call_ok(&client, "list_transactions", json!({})).await;
        assert_eq!(
            support::transaction_row(&listed, &id)["status"],
            "committed",
            "{listed}"
        );
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
    )
    .await;
}

type Snapshot = BTreeMap<String, Vec<u8>>;

/// Kills the server at each of `points` inside `calls` on a fresh `project()`,
/// restarts it, and derives the verdict from disk: the pre-state is compensated, the
/// post-state committed, anything else a failure. The startup lines must name that
/// verdict (nothing to reconcile once the terminal row is recorded) and open the write
/// gate; every point before `landed` is compensated, `landed` and after committed.
async fn whole_at_every_boundary(
    points: Vec<String>,
    project: fn() -> tempfile::TempDir,
    calls: fn() -> Vec<(&'static str, Value)>,
    (pre, post): (Snapshot, Snapshot),
    landed: &str,
) {
    let mut verdicts = BTreeMap::new();
    for point in &points {
        let p = project();
        let state = p.path().join(".state");
        support::call_until_failpoint(p.path(), &state, point, calls()).await;
        let (mut child, lines) = support::start_and_read_gate(p.path(), &state);
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
        // Once the terminal row is recorded there is nothing left to reconcile.
        let reconciled = lines
            .iter()
            .filter(|l| l.contains("startup reconciliation"))
            .collect::<Vec<_>>();
        if point.starts_with(fp::CHANGE_AFTER_TERMINAL) {
            assert!(reconciled.is_empty(), "at {point}: {lines:?}");
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
