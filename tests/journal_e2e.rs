//! The journal as a user meets it through the real binary: startup reconciliation
//! lines and the write gate on stderr, one server per project (the lease), the
//! read-only transactions tool and resource, and the operator-only repair command.

mod support;

use std::process::Stdio;

use serde_json::json;
use support::{call_ok, connect_in, start_and_read_gate};

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
    let second = support::server_std()
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

/// Issue 41, item 9: `GODOT_MCP_STATE_DIR=/tmp/a godot-mcp serve --project P` and the
/// same with `/tmp/b` give two state dirs, so two journals; the second server must
/// still exit 3 naming the first (they meet at the lease inside the project), and
/// leave the first one's bridge discovery file alone.
#[test]
fn a_second_server_with_another_state_dir_exits_3_naming_the_holder() {
    let project = tiny_project();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut first, lines) = start_and_read_gate(project.path(), a.path());
    assert!(
        lines
            .iter()
            .any(|l| l == "godot-mcp serve: write gate open"),
        "{lines:?}"
    );
    let discovery = project.path().join(".godot/godot_mcp/bridge.json");
    let before = std::fs::read(&discovery).unwrap();

    let second = support::server_std()
        .args(["serve", "--project"])
        .arg(project.path())
        .env("GODOT_MCP_STATE_DIR", b.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(3), "{err}");
    assert!(second.stdout.is_empty());
    assert!(
        err.contains("another godot-mcp server holds the project lease"),
        "{err}"
    );
    assert!(err.contains(".godot/godot-mcp.lease"), "{err}");
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    assert_eq!(std::fs::read(&discovery).unwrap(), before);

    first.kill().unwrap();
    first.wait().unwrap();
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
    support::server_std()
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
    let out = support::server_std().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("transaction"));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/snapshots/tools");
    let mut tools = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let contract = insta::Snapshot::from_file(&entry.unwrap().path()).unwrap();
        let tool: serde_json::Value =
            serde_json::from_str(&contract.contents().as_text().unwrap().to_string()).unwrap();
        let name = tool["name"].as_str().unwrap();
        assert!(!name.contains("repair"), "{name} exposes repair over MCP");
        tools += 1;
    }
    assert!(tools > 200, "the contract lists every tool: {tools}");
}

/// Guards against (issue 28): the CLI refusing a quarantined change, or acknowledging
/// one while a file is not at its post-state. A change (transaction 301) creates
/// `a.txt` and deletes `b.txt`; reconciliation finds `a.txt` holding other bytes and
/// quarantines it. Through the real binary: acknowledging is refused (exit 1) while
/// `a.txt` is neither state, compensating is refused while `b.txt` is deleted and no
/// pre-image of it was kept; once `a.txt` holds its post-state, a dry run records
/// nothing and `acknowledge-safe-state` records `committed` (exit 0), the gate open.
#[test]
fn repair_resolves_a_quarantined_change_only_when_every_file_is_proven() {
    use godot_mcp_journal::journal::JOURNAL_FILE;
    use godot_mcp_journal::{ChangeFile, ChangeIntent, FileState, Journal, WriteGate, proof};
    let project = tiny_project();
    let state = tempfile::tempdir().unwrap();
    let (identity, state_dir) = {
        let mut j = Journal::open(state.path(), project.path()).unwrap();
        j.reconcile().unwrap();
        (j.identity().clone(), j.state_dir().to_path_buf())
    };
    let file = |path: &str, pre: FileState, post: FileState| ChangeFile {
        path: path.into(),
        pre,
        post,
        temp: format!(".gmcp-{path}.tmp"),
    };
    let intent = proof::Intent::Change(ChangeIntent {
        files: vec![
            file("a.txt", FileState::Absent, FileState::of(b"new")),
            file("b.txt", FileState::of(b"old"), FileState::Absent),
        ],
        editor: None,
        check: None,
    });
    let txn = "00000000-0000-0000-0000-000000000301";
    rusqlite::Connection::open(state_dir.join(JOURNAL_FILE))
        .unwrap()
        .execute(
            "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                 operation, tool_family, state, intent_json, created_at_ms)
             VALUES (?1, ?2, ?3, 'file', 'move_file', 'files', 'open', ?4, 0)",
            rusqlite::params![
                txn,
                identity.object_id,
                identity.generation as i64,
                serde_json::to_string(&intent).unwrap()
            ],
        )
        .unwrap();
    let a = project.path().join("a.txt");
    std::fs::write(&a, b"someone's").unwrap();
    {
        let mut j = Journal::open(state.path(), project.path()).unwrap();
        assert_eq!(j.reconcile().unwrap().quarantined.len(), 1);
    }
    let proof = state.path().join("proof.json");
    let run = |op: &str, observed: FileState, extra: &[&str]| {
        let claim = json!({
            "schema": "godot-mcp.repair-proof/1", "transaction_id": txn,
            "project_object_id": identity.object_id, "generation": identity.generation,
            "operation": op, "effect_kind": "file",
            "file": {"path": "a.txt", "observed": observed},
        });
        std::fs::write(&proof, claim.to_string()).unwrap();
        let out = repair(project.path(), state.path(), op, &proof, extra);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let ack = "acknowledge-safe-state";
    let (code, text) = run(ack, FileState::of(b"someone's"), &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("a.txt is sha256:"), "{text}");
    std::fs::write(&a, b"new").unwrap();
    let (code, text) = run("compensate", FileState::of(b"new"), &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("b.txt at its post-state and no pre-image"),
        "{text}"
    );
    assert!(a.exists(), "a refused compensate removed a.txt");
    let (code, text) = run(ack, FileState::of(b"new"), &["--dry-run"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("would record quarantined -> committed"),
        "{text}"
    );
    let (code, text) = run(ack, FileState::of(b"new"), &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("recorded quarantined -> committed"), "{text}");
    assert!(text.contains("all 2 files at their post-state"), "{text}");
    let mut j = Journal::open(state.path(), project.path()).unwrap();
    assert_eq!(j.reconcile().unwrap().gate, WriteGate::Open);
}
