//! The tool contract: every tool's name, safety class, toolset, effect kind,
//! annotations and input schema, as a real MCP client sees them in tools/list,
//! pinned in `tests/contract/tools.json`.
//!
//! Any change — a tool added, removed, reclassified, or a schema edited — fails this
//! test until the snapshot is regenerated on purpose:
//! `GODOT_MCP_UPDATE_CONTRACT=1 cargo test -p godot-mcp-server --test contract`
//! and the diff reviewed. A missing snapshot fails too (it is never created silently
//! in CI).

mod support;

use std::path::Path;

use serde_json::{Value, json};

fn snapshot_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/contract/tools.json")
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
            json!({
                "name": t.name,
                "safety_class": meta.get("safety_class"),
                "toolset": meta.get("toolset"),
                "effect_kind": meta.get("effect_kind"),
                "annotations": t.annotations,
                "inputSchema": t.input_schema.as_ref(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let actual = serde_json::to_string_pretty(&Value::Array(entries)).unwrap() + "\n";

    let path = snapshot_path();
    if std::env::var_os("GODOT_MCP_UPDATE_CONTRACT").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "the contract snapshot {} is missing; create it with \
             GODOT_MCP_UPDATE_CONTRACT=1 cargo test -p godot-mcp-server --test contract",
            path.display()
        )
    });
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(10)
            .map(|(i, (a, b))| format!("line {}:\n  committed: {a}\n  now:       {b}", i + 1))
            .collect();
        panic!(
            "tools/list no longer matches tests/contract/tools.json ({} vs {} lines). \
             If the change is intended, regenerate with GODOT_MCP_UPDATE_CONTRACT=1 and review \
             the diff.\n{}",
            expected.lines().count(),
            actual.lines().count(),
            diff.join("\n")
        );
    }
}
