//! The tool contract: every tool's name, safety class, toolset, effect kind,
//! annotations, input and output schemas, as a real MCP client sees them in
//! tools/list, pinned as one insta snapshot per tool in `tests/snapshots/tools/`
//! (`contract__<tool>.snap`); a snapshot with no tool left fails too.
//!
//! Any change — a tool added, removed, reclassified, or a schema edited — fails this
//! test until the snapshot is regenerated on purpose and the diff reviewed. The server
//! publishes the committed tool list (`src/tool_list.json`), so regenerate that first
//! (`INSTA_UPDATE=always cargo test -p godot-mcp-server --all-features --lib docs_`,
//! which also rewrites docs/tools.md), then
//! `cargo insta test -p godot-mcp-server --test contract --all-features` and
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test ...` without cargo-insta).
//! A missing snapshot fails too: scripts/test.sh sets `INSTA_UPDATE=no`, and insta
//! never writes one under CI.
//!
//! It also holds the context budget: what the default `tools/list` costs a client
//! on every turn, measured on the bytes the real server sends.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

/// tests/snapshots, beside this file (it is compiled from the server crate's folder,
/// so the path is spelled from there rather than left to insta's default).
fn snapshot_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/snapshots")
}

#[tokio::test]
async fn tools_list_matches_the_committed_contract() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    // Every toolset, so the snapshot pins every tool, not only the default ones.
    let client = support::connect_with(project.path(), &[("GODOT_MCP_TOOLSETS", "all")]).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();

    let mut entries: Vec<Value> = tools
        .iter()
        .map(|t| {
            let meta = t.meta.as_ref().map(|m| m.0.clone()).unwrap_or_default();
            assert!(
                meta.get("safety_class").is_some_and(Value::is_string),
                "tool {} has no _meta.safety_class",
                t.name
            );
            // Only a tool that changes nothing may claim readOnlyHint: a client that
            // auto-approves read-only tools must not let manage_toolsets through.
            // An absent hint is the protocol's default: false.
            let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint);
            assert_eq!(
                read_only.unwrap_or(false),
                meta["safety_class"] == "read_only",
                "tool {}: readOnlyHint must follow the class",
                t.name
            );
            json!({
                "name": t.name,
                "safety_class": meta.get("safety_class"),
                "toolset": meta.get("toolset"),
                "effect_kind": meta.get("effect_kind"),
                "annotations": t.annotations,
                "inputSchema": t.input_schema.as_ref(),
                "outputSchema": t.output_schema.as_deref(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let dir = snapshot_dir().join("tools");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(&dir);
    settings.set_omit_expression(true);
    settings.set_prepend_module_to_snapshot(true);
    let mut names = Vec::new();
    for entry in entries {
        let name = entry["name"].as_str().unwrap().to_owned();
        settings.bind(|| insta::assert_json_snapshot!(name.as_str(), entry));
        names.push(format!("contract__{name}.snap"));
    }
    // A tool removed or renamed leaves its snapshot behind: that fails until it is
    // deleted, so the folder is the contract, one file per tool.
    let orphans: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".snap") && !names.contains(f))
        .collect();
    assert!(
        orphans.is_empty(),
        "snapshots of no tool (delete them): {orphans:?}"
    );
}

/// The most a `tools/list` may cost with no operator configuration, in tokens
/// (bytes / 4, the usual estimate): it is paid on every turn of every agent.
const DEFAULT_BUDGET_TOKENS: usize = 4_000;

/// The raw `tools/list` response line the real server sends over stdio, after a
/// plain initialize (protocol 2025-11-25, what clients speak today), with
/// `GODOT_MCP_TOOLSETS` set to `toolsets` (`None`: unset, the default).
fn raw_tools_list(toolsets: Option<&str>) -> String {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = support::server_std();
    cmd.args(["serve", "--project"])
        .arg(project.path())
        .env("GODOT_MCP_STATE_DIR", state.path())
        .env("GODOT_MCP_EDITOR_BRIDGE", "off")
        .env_remove("GODOT_MCP_TOOLSETS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(support::server_stderr());
    if let Some(t) = toolsets {
        cmd.env("GODOT_MCP_TOOLSETS", t);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    for msg in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        if msg.contains(r#""id":"#) {
            line.clear();
            stdout.read_line(&mut line).unwrap();
        }
    }
    drop(stdin);
    child.wait().unwrap();
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["id"], 2, "{line}");
    line
}

/// The default tools/list stays within its budget; the all-toolsets figure is
/// printed beside it (`--nocapture`) so a growing surface is seen.
#[test]
fn default_tools_list_fits_the_context_budget() {
    let default = raw_tools_list(None);
    let all = raw_tools_list(Some("all"));
    let count = |line: &str| {
        serde_json::from_str::<Value>(line).unwrap()["result"]["tools"]
            .as_array()
            .unwrap()
            .len()
    };
    let (default_tokens, all_tokens) = (default.trim_end().len() / 4, all.trim_end().len() / 4);
    println!(
        "tools/list: default {default_tokens} tokens ({} tools); all toolsets {all_tokens} tokens ({} tools)",
        count(&default),
        count(&all)
    );
    // A stable order: by toolset as declared (the core first), then by name, so a
    // client's cache and a model's prompt prefix survive a restart.
    let all_tools: Value = serde_json::from_str(&all).unwrap();
    let order: Vec<(usize, String)> = all_tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let toolset = t["_meta"]["toolset"].as_str().unwrap();
            let rank = godot_mcp_server::Toolset::ALL
                .iter()
                .position(|ts| ts.as_str() == toolset)
                .unwrap();
            (rank, t["name"].as_str().unwrap().to_string())
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "tools/list is ordered by toolset, then name");
    // Discovery is in the default, or nothing else could ever be found.
    assert!(default.contains(r#""name":"list_toolsets""#));
    assert!(default.contains(r#""name":"manage_toolsets""#));
    assert!(count(&all) > count(&default));
    assert!(
        default_tokens <= DEFAULT_BUDGET_TOKENS,
        "the default tools/list costs {default_tokens} tokens, over the budget of \
         {DEFAULT_BUDGET_TOKENS}: shorten descriptions or move tools out of the default toolsets"
    );
}

/// A 2026-07-28 client gets caching hints on tools/list: private (the list follows
/// this server's toolset state), fresh for the server's TTL; a toolset change
/// invalidates it with tools/list_changed. An older client gets none (it would only
/// carry unknown fields).
#[tokio::test]
async fn tools_list_carries_caching_hints_for_2026_07_28_clients() {
    use rmcp::model::{CacheScope, ProtocolVersion};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};

    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = support::server_tokio();
    cmd.arg("serve").arg("--project").arg(project.path());
    cmd.env("GODOT_MCP_STATE_DIR", state.path());
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(support::server_stderr())
        .spawn()
        .unwrap();
    let modern = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover");
    let page = modern.list_tools(None).await.unwrap();
    modern.cancel().await.unwrap();
    assert_eq!(page.ttl_ms, Some(godot_mcp_server::TOOLS_LIST_TTL_MS));
    assert_eq!(page.cache_scope, Some(CacheScope::Private));

    let legacy = support::connect(project.path()).await;
    let page = legacy.list_tools(None).await.unwrap();
    legacy.cancel().await.unwrap();
    assert_eq!((page.ttl_ms, page.cache_scope), (None, None));
}
