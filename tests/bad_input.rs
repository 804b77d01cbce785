//! Bad input over the real stdio transport: unknown tools, wrong types, extra fields,
//! oversized arguments, malformed JSON-RPC. Each gets a structured error, and the
//! server stays up and answers the next request.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect};

fn tiny_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    std::fs::write(dir.path().join("scripts/a.gd"), "extends Node\n").unwrap();
    dir
}

#[tokio::test]
async fn wrong_types_and_extra_fields_name_the_field() {
    let project = tiny_project();
    let client = connect(project.path()).await;
    let cases = [
        ("scripts_read", json!({"path": 42}), "path"),
        ("scripts_read", json!({}), "path"),
        (
            "scripts_read",
            json!({"path": "res://scripts/a.gd", "extra": true}),
            "extra",
        ),
        ("list_files", json!({"limit": "ten"}), "limit"),
        ("list_files", json!({"limit": -1}), "limit"),
        ("list_files", json!({"kind": "spaceship"}), "kind"),
        ("list_files", json!({"recursive": "yes"}), "recursive"),
        ("list_files", json!({"limit": 0}), "limit"),
        ("list_files", json!({"limit": 5000}), "limit"),
        // read-only tools take neither dry_run nor confirm
        ("list_files", json!({"confirm": true}), "confirm"),
        (
            "scripts_read",
            json!({"path": "res://scripts/a.gd", "dry_run": true}),
            "dry_run",
        ),
    ];
    for (tool, args, field) in cases {
        let err = call_err(&client, tool, args.clone()).await;
        assert_eq!(err["code"], "INVALID_PARAMS", "{tool}({args}): {err}");
        assert_eq!(err["param"], field, "{tool}({args}): {err}");
    }
    // Still serving.
    let v = call_ok(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/a.gd"}),
    )
    .await;
    assert_eq!(v["line_count"], 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn missing_files_are_resource_not_found() {
    let project = tiny_project();
    let client = connect(project.path()).await;
    let err = call_err(
        &client,
        "scripts_read",
        json!({"path": "res://scripts/nope.gd"}),
    )
    .await;
    assert_eq!(err["code"], "RESOURCE_NOT_FOUND");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("res://scripts/nope.gd")
    );
    // No host path leaks into messages.
    assert!(!err.to_string().contains(project.path().to_str().unwrap()));
    let err = call_err(&client, "list_files", json!({"dir": "res://scripts/a.gd"})).await;
    assert_eq!(err["code"], "INVALID_PARAMS");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unknown_tool_is_a_structured_protocol_error() {
    let project = tiny_project();
    let client = connect(project.path()).await;
    let err = client
        .call_tool(rmcp::model::CallToolRequestParams::new("delete_everything"))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown tool: delete_everything"), "{text}");
    call_ok(&client, "list_files", json!({})).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_huge_argument_is_refused_and_the_server_stays_up() {
    let project = tiny_project();
    let client = connect(project.path()).await;
    // A path of 1 MiB: refused at the schema boundary without touching the disk.
    let huge = format!("res://{}", "a".repeat(1 << 20));
    let err = call_err(&client, "scripts_read", json!({ "path": huge })).await;
    assert_eq!(err["code"], "PATH_REFUSED");
    assert_eq!(err["param"], "path");
    call_ok(&client, "list_files", json!({})).await;
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC lines, below any client library: broken JSON is dropped (answering
/// unparsable bytes risks an error storm), a well-formed but invalid request gets
/// -32600, an unknown method -32601, and the server keeps answering.
#[test]
fn malformed_json_rpc_does_not_stop_the_server() {
    let project = tiny_project();
    let state = tempfile::tempdir().unwrap();
    let mut child = support::server_std()
        .args(["serve", "--project"])
        .arg(project.path())
        .env("GODOT_MCP_STATE_DIR", state.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let mut read = || -> Value {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}"))
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(read()["id"], 1);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send("this is not json {{{");
    send(r#"{"jsonrpc":"2.0","id":"x","method":42}"#);
    let invalid = read();
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    send(r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#);
    let unknown = read();
    assert_eq!(unknown["id"], 7);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    send(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"scripts_read","arguments":"not-an-object"}}"#,
    );
    let bad_args = read();
    assert_eq!(bad_args["id"], 8);
    assert!(
        bad_args.get("error").is_some() || bad_args["result"]["isError"] == true,
        "{bad_args}"
    );
    send(
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"scripts_read","arguments":{"path":"res://scripts/a.gd"}}}"#,
    );
    let ok = read();
    assert_eq!(ok["id"], 9);
    assert_eq!(
        ok["result"]["structuredContent"]["content"],
        "extends Node\n"
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "server exited with {status}");
}

#[test]
fn serve_without_a_project_explains_what_to_do() {
    let empty = tempfile::tempdir().unwrap();
    let out = support::server_std()
        .arg("serve")
        .current_dir(empty.path())
        .env_remove("GODOT_MCP_PROJECT")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "stdout must carry nothing but MCP");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Godot project found"), "{err}");
    assert!(err.contains("--project"), "{err}");

    let out = support::server_std()
        .args(["serve", "--project"])
        .arg(empty.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no project.godot"), "{err}");
}
