//! Idempotency over MCP, end to end: an exact same-context replay answers the recorded
//! {status, transaction_id} and runs nothing again — even when the file changed since,
//! so it cannot be a re-execution — while the same key in any other context (other
//! arguments, other tool, other session) is a CONFLICT that changes nothing.

mod support;

use serde_json::json;
use support::{Client, call_err, call_ok, connect_in};

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    dir
}

#[tokio::test]
async fn replay_returns_the_record_and_other_contexts_conflict() {
    let project = project();
    let state = tempfile::tempdir().unwrap();
    let state_path = state.path().to_path_buf();
    let client = connect_in(project.path(), state, &[]).await;
    let file = project.path().join("scripts/a.gd");
    let args = json!({
        "path": "res://scripts/a.gd", "content": "extends Node\n# v1\n",
        "confirm": true, "idempotency_key": "k-1"
    });

    let first = call_ok(&client, "create_script", args.clone()).await;
    let txn = first["transaction_id"]
        .as_str()
        .expect("transaction_id")
        .to_string();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "extends Node\n# v1\n"
    );

    // Someone edits the file; an exact replay must not write it again.
    std::fs::write(&file, "extends Node\n# edited by a human\n").unwrap();
    let replay = call_ok(&client, "create_script", args.clone()).await;
    assert_eq!(
        replay,
        json!({"status": "committed", "transaction_id": txn}),
        "{replay}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "extends Node\n# edited by a human\n"
    );

    // Same key, different arguments: conflict, nothing written.
    let mut other_args = args.clone();
    other_args["content"] = json!("extends Node\n# v2\n");
    let err = call_err(&client, "create_script", other_args).await;
    assert_eq!(err["code"], "CONFLICT", "{err}");
    assert_eq!(err["param"], "idempotency_key");
    // Same key, other tool: conflict.
    let err = call_err(
        &client,
        "write_script",
        json!({"path": "res://scripts/a.gd", "content": "x", "confirm": true, "idempotency_key": "k-1"}),
    )
    .await;
    assert_eq!(err["code"], "CONFLICT", "{err}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "extends Node\n# edited by a human\n"
    );

    // A dry run with a key never consults or records it.
    let dry = call_ok(&client, "write_script", json!({
        "path": "res://scripts/a.gd", "content": "y", "dry_run": true, "idempotency_key": "k-dry"
    })).await;
    assert_eq!(dry["applied"], false);

    // Bad keys and keys on tools that take none are refused, naming the field.
    let err = call_err(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/a.gd", "idempotency_key": "k"}),
    )
    .await;
    assert_eq!(err["param"], "idempotency_key", "{err}");
    let err = call_err(
        &client,
        "create_script",
        json!({
            "path": "res://scripts/b.gd", "confirm": true, "idempotency_key": 7
        }),
    )
    .await;
    assert_eq!(err["param"], "idempotency_key", "{err}");
    assert!(!project.path().join("scripts/b.gd").exists());
    let Client { service, state_dir } = client;
    service.cancel().await.unwrap();
    let _keep = state_dir; // the journal lives on for the next server

    // A new session (a new stdio server on the same journal) is another context.
    let again = support::connect_path(project.path(), &state_path).await;
    let err = call_err(&again, "create_script", args).await;
    assert_eq!(err["code"], "CONFLICT", "{err}");
    again.cancel().await.unwrap();
}
