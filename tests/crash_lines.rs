//! The real server stopped dead (SIGKILL) at an exact journal boundary in the middle
//! of a write, then started again: it reconciles before serving and prints the spec's
//! lines — `godot-mcp serve: startup reconciliation compensated=1` when the write had
//! not landed, `… committed=1` when it had — then `godot-mcp serve: write gate open`,
//! and the file is byte-for-byte its pre- or post-state accordingly.
//!
//! Needs the `failpoints` feature, which this package's dev-dependency on itself
//! turns on for every test build: the server then honours
//! `GODOT_MCP_CRASH_AT=<point>`, printing `FAILPOINT_REACHED <point>` on stderr and
//! SIGKILLing itself the moment the write crosses that exact point.
// Unix only: it SIGKILLs the server (docs/platforms.md).
#![cfg(unix)]
#![cfg(feature = "failpoints")]

mod support;

use std::path::Path;

use serde_json::json;

const BEFORE: &str = "extends Node\n# before\n";
const AFTER: &str = "extends Node\n# after\n";

/// Start a server, kill it (SIGKILL) the moment its write crosses `point`; restart
/// and return the restart's stderr lines up to the gate line.
async fn crash_at(point: &str, landed: bool) -> (tempfile::TempDir, Vec<String>) {
    crash_at_then(point, landed, |_| {}).await
}

/// Like [`crash_at`], running `meddle` on the project between the crash and the restart.
/// `landed` is whether the target must already hold the new bytes at `point`.
async fn crash_at_then(
    point: &str,
    landed: bool,
    meddle: impl FnOnce(&Path),
) -> (tempfile::TempDir, Vec<String>) {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    std::fs::create_dir(project.path().join("scripts")).unwrap();
    std::fs::write(project.path().join("scripts/a.gd"), BEFORE).unwrap();
    let state = project.path().join(".state");

    let args = json!({"path": "res://scripts/a.gd", "content": AFTER, "confirm": true});
    support::call_until_failpoint(project.path(), &state, point, vec![("write_script", args)])
        .await;
    let on_disk = std::fs::read_to_string(project.path().join("scripts/a.gd")).unwrap();
    assert_eq!(on_disk == AFTER, landed, "at {point}: {on_disk:?}");
    meddle(project.path());

    let (mut child, all) = support::start_and_read_gate(project.path(), &state);
    let lines: Vec<String> = all
        .into_iter()
        .filter(|l| l.starts_with("godot-mcp serve: "))
        .collect();
    drop(child.stdin.take());
    child.wait().unwrap();
    (project, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_before_the_effect_is_compensated() {
    let (project, lines) = crash_at("journal::after_intent", false).await;
    assert!(
        lines.contains(&"godot-mcp serve: startup reconciliation compensated=1".to_string()),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("godot-mcp serve: write gate open"),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("committed=") || l.contains("quarantined=")),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("scripts/a.gd")).unwrap(),
        BEFORE
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_after_the_rename_is_committed() {
    let (project, lines) = crash_at("journal::after_rename", true).await;
    assert!(
        lines.contains(&"godot-mcp serve: startup reconciliation committed=1".to_string()),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("godot-mcp serve: write gate open"),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("scripts/a.gd")).unwrap(),
        AFTER
    );
}

/// Guards against "probably fine": after the crash someone else rewrote the file, so
/// it is neither the pre- nor the post-state. The restart must quarantine, close the
/// gate, refuse every write naming the transaction — and still serve reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unprovable_state_is_quarantined_and_closes_the_gate() {
    let (project, lines) = crash_at_then("journal::after_rename", true, |p| {
        std::fs::write(p.join("scripts/a.gd"), "extends Node\n# a third party\n").unwrap();
    })
    .await;
    assert!(
        lines.contains(&"godot-mcp serve: startup reconciliation quarantined=1".to_string()),
        "{lines:?}"
    );
    let gate = lines.last().unwrap();
    assert!(
        gate.starts_with("godot-mcp serve: write gate closed"),
        "{lines:?}"
    );

    let state = project.path().join(".state");
    let client = support::connect_path(project.path(), &state).await;
    let txns = support::call_ok(
        &client,
        "list_transactions",
        json!({"status": "quarantined"}),
    )
    .await;
    let id = txns["transactions"][0]["transaction_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(gate.contains(&id), "the gate line names {id}: {gate}");
    assert_eq!(txns["write_gate"]["status"], "closed", "{txns}");
    let err = support::call_err(
        &client,
        "create_script",
        json!({"path": "res://scripts/new.gd", "confirm": true}),
    )
    .await;
    assert_eq!(err["code"], "WRITE_GATE_CLOSED", "{err}");
    assert_eq!(err["required"], "write_gate_open");
    assert!(err["message"].as_str().unwrap().contains(&id), "{err}");
    assert!(!project.path().join("scripts/new.gd").exists());
    // Reads still work, and nothing was "fixed" behind the human's back.
    let read = support::call_ok(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/a.gd"}),
    )
    .await;
    assert_eq!(read["content"], "extends Node\n# a third party\n");
    client.cancel().await.unwrap();
}
