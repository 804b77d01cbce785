//! The journal as a user meets it through the real binary: startup reconciliation
//! lines and the write gate on stderr, one server per project (the lease), the
//! read-only transactions tool and resource, and the operator-only repair command.

mod support;

use std::process::{Command, Stdio};

use serde_json::json;
use support::{bin, call_ok, connect_in, start_and_read_gate};

fn tiny_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    dir
}

#[test]
fn startup_reports_the_gate_and_a_second_server_is_refused() {
    let project = tiny_project();
    let state = tempfile::tempdir().unwrap();
    let (mut first, lines) = start_and_read_gate(project.path(), state.path());
    assert!(
        lines
            .iter()
            .any(|l| l == "godot-mcp serve: write gate open"),
        "{lines:?}"
    );
    // A fresh journal has nothing to reconcile, so no reconciliation line.
    assert!(
        !lines.iter().any(|l| l.contains("startup reconciliation")),
        "{lines:?}"
    );

    // The same project with the same state: the lease is held.
    let second = Command::new(bin())
        .args(["serve", "--project"])
        .arg(project.path())
        .env("GODOT_MCP_STATE_DIR", state.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(3));
    assert!(second.stdout.is_empty());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("another godot-mcp server holds the project lease"),
        "{err}"
    );
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");

    // SIGKILL the holder: the lease frees, a new server starts.
    first.kill().unwrap();
    first.wait().unwrap();
    let (mut third, lines) = start_and_read_gate(project.path(), state.path());
    assert!(
        lines
            .iter()
            .any(|l| l == "godot-mcp serve: write gate open"),
        "{lines:?}"
    );
    third.kill().unwrap();
    third.wait().unwrap();
}

#[tokio::test]
async fn transactions_tool_and_resource_show_the_gate() {
    let project = tiny_project();
    let client = connect_in(project.path(), tempfile::tempdir().unwrap(), &[]).await;
    let v = call_ok(&client, "list_transactions", json!({})).await;
    assert_eq!(v["write_gate"]["status"], "open", "{v}");
    assert_eq!(v["returned"], 0);
    assert_eq!(v["transactions"], json!([]));

    let resources = client.list_all_resources().await.unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r.uri == "godot-mcp://transactions")
    );
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "godot-mcp://transactions",
        ))
        .await
        .unwrap();
    let text = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["write_gate"]["status"], "open");
    let err = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "godot-mcp://nope",
        ))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no resource"), "{err}");
    client.cancel().await.unwrap();
}

/// `godot-mcp transaction repair` for transaction 301 with `operation`, the proof file
/// and any extra arguments.
fn repair(
    project: &std::path::Path,
    state: &std::path::Path,
    operation: &str,
    proof: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    Command::new(bin())
        .args(["transaction", "repair", "--project"])
        .arg(project)
        .args([
            "--transaction-id",
            "00000000-0000-0000-0000-000000000301",
            "--operation",
            operation,
        ])
        .arg("--proof-file")
        .arg(proof)
        .args(extra)
        .env("GODOT_MCP_STATE_DIR", state)
        .output()
        .unwrap()
}

#[test]
fn repair_has_no_force_and_refuses_without_a_proof() {
    let project = tiny_project();
    let state = tempfile::tempdir().unwrap();
    let proof = state.path().join("missing-proof.json");
    let forced = repair(
        project.path(),
        state.path(),
        "reconcile",
        &proof,
        &["--force"],
    );
    assert_eq!(
        forced.status.code(),
        Some(2),
        "--force must be a parse error"
    );
    assert!(String::from_utf8_lossy(&forced.stderr).contains("--force"));

    let bad_op = repair(project.path(), state.path(), "bypass", &proof, &[]);
    assert_eq!(bad_op.status.code(), Some(2));

    let no_proof = repair(project.path(), state.path(), "reconcile", &proof, &[]);
    assert_eq!(
        no_proof.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&no_proof.stderr)
    );
    assert!(String::from_utf8_lossy(&no_proof.stderr).contains("refused"));
}

#[test]
fn repair_is_not_reachable_over_mcp() {
    // No tool or resource of the registry names repair.
    let out = Command::new(bin()).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("transaction"));
    let contract = insta::Snapshot::from_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/snapshots/contract__tools.snap"),
    )
    .unwrap();
    let tools: serde_json::Value =
        serde_json::from_str(&contract.contents().as_text().unwrap().to_string()).unwrap();
    for t in tools.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert!(!name.contains("repair"), "{name} exposes repair over MCP");
    }
}
