//! An agent's change end to end through the call pipeline: staged writes are
//! invisible until commit, abandon and a session's end drop them, a commit that fails
//! midway puts every file back, and `run_commands` with `atomic: true` is one change.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::rules::Toolset;
use crate::safety::{CallContext, CallOutcome, Served, run_call};
use crate::state::AppState;

const SESSION: u64 = 7;

fn served_with(
    root: &Path,
    storage: Option<Arc<dyn godot_mcp_journal::storage::Storage>>,
) -> Served {
    std::fs::write(root.join("project.godot"), "config_version=5\n").unwrap();
    let p = crate::project_root::Project::discover(Some(root), Path::new("/")).unwrap();
    let state_dir = root.join(".state");
    let mut journal = match storage {
        Some(s) => godot_mcp_journal::Journal::open_with_storage(&state_dir, p.root(), s),
        None => godot_mcp_journal::Journal::open(&state_dir, p.root()),
    }
    .unwrap();
    journal.reconcile().unwrap();
    let safety = crate::rules::SafetyState::new(
        crate::rules::ApprovalConfig::default(),
        Toolset::ALL.into_iter().collect(),
    );
    Served::new(
        Arc::new(AppState::new(p, journal, safety)),
        crate::tools::builtin_for_tests(),
    )
}

async fn call(served: &Served, tool: &str, args: Value) -> Result<Value, ToolError> {
    let def = served.registry.get(tool).unwrap();
    let Value::Object(args) = args else {
        panic!("args must be an object")
    };
    let ctx = CallContext::detached().in_session(SESSION);
    match run_call(served, def, Some(args), &ctx).await {
        CallOutcome::Done(r) => r,
        CallOutcome::InputRequired(_) => panic!("unexpected input-required"),
    }
}

/// write_script of `text` at `path`, which must succeed: its answer.
async fn write(served: &Served, path: &str, text: &str) -> Value {
    call(served, "write_script", script(path, text))
        .await
        .unwrap()
}

fn script(path: &str, text: &str) -> Value {
    json!({"path": path, "content": text, "confirm": true})
}

fn rows(served: &Served) -> Vec<godot_mcp_journal::TxnRecord> {
    served
        .journal
        .lock()
        .list_transactions(&godot_mcp_journal::TxnFilter::default())
        .unwrap()
}

#[tokio::test]
async fn staged_writes_are_invisible_until_commit_and_then_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("b.gd"), "extends Node # old\n").unwrap();
    let served = served_with(root, None);
    let begun = call(&served, "begin_change", json!({})).await.unwrap();
    let id = begun["change_id"].as_str().unwrap().to_owned();
    let a = write(&served, "res://a.gd", "extends Node # a\n").await;
    assert_eq!(a["change_id"], json!(id), "{a}");
    assert_eq!(a["transaction_id"], json!(id), "{a}");
    write(&served, "res://b.gd", "extends Node # b\n").await;
    assert!(
        !root.join("a.gd").exists(),
        "a staged create is not on disk"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.gd")).unwrap(),
        "extends Node # old\n"
    );
    assert!(
        rows(&served).is_empty(),
        "nothing is journaled before commit"
    );
    let listed = crate::tools::transactions::transactions_json(&served.state, None, 10).unwrap();
    assert_eq!(
        listed["open_changes"][0]["change_id"],
        json!(id),
        "{listed}"
    );
    let done = call(&served, "commit_change", json!({})).await.unwrap();
    assert_eq!(done["status"], "committed", "{done}");
    assert_eq!(
        done["files"],
        json!([{"path": "res://a.gd", "action": "create"}, {"path": "res://b.gd", "action": "write"}])
    );
    assert_eq!(
        std::fs::read_to_string(root.join("a.gd")).unwrap(),
        "extends Node # a\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b.gd")).unwrap(),
        "extends Node # b\n"
    );
    let rows = rows(&served);
    assert_eq!(rows.len(), 1, "one change, one transaction");
    assert_eq!(rows[0].transaction_id.to_string(), id);
    assert_eq!(rows[0].status, godot_mcp_journal::TxnStatus::Committed);
    // The change is closed: the next write goes to disk at once.
    let after = write(&served, "res://c.gd", "extends Node\n").await;
    assert!(after.get("change_id").is_none());
    assert!(root.join("c.gd").exists());
}

#[tokio::test]
async fn abandon_leaves_the_disk_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("b.gd"), "extends Node # old\n").unwrap();
    let served = served_with(root, None);
    call(&served, "begin_change", json!({})).await.unwrap();
    write(&served, "res://a.gd", "extends Node\n").await;
    write(&served, "res://b.gd", "extends Node # new\n").await;
    let out = call(&served, "abandon_change", json!({})).await.unwrap();
    assert_eq!(out["status"], "abandoned");
    assert!(!root.join("a.gd").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("b.gd")).unwrap(),
        "extends Node # old\n"
    );
    assert!(rows(&served).is_empty());
    let e = call(&served, "commit_change", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PreconditionFailed);
}

#[tokio::test]
async fn a_commit_that_fails_midway_puts_every_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("old.tres"),
        "[gd_resource type=\"Resource\" format=3]\n",
    )
    .unwrap();
    let storage = Arc::new(crate::tools::files::organize::tests::FirstUnlinkFails(
        true.into(),
    ));
    let served = served_with(root, Some(storage));
    call(&served, "begin_change", json!({})).await.unwrap();
    write(&served, "res://a.gd", "extends Node\n").await;
    call(
        &served,
        "delete_resource_file",
        json!({"path": "res://old.tres", "confirm": true}),
    )
    .await
    .unwrap();
    assert!(
        root.join("old.tres").exists(),
        "a staged delete is not made"
    );
    let e = call(&served, "commit_change", json!({})).await.unwrap_err();
    assert!(
        e.message.contains("every file was put back"),
        "{}",
        e.message
    );
    let details = e.details.unwrap();
    assert_eq!(details["status"], "compensated", "{details}");
    assert!(details["change_id"].is_string(), "{details}");
    assert!(!root.join("a.gd").exists(), "the created file was removed");
    assert!(root.join("old.tres").exists());
    assert_eq!(
        rows(&served)[0].status,
        godot_mcp_journal::TxnStatus::Compensated
    );
}

#[tokio::test]
async fn a_session_that_ends_abandons_its_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let served = served_with(root, None);
    let end = super::SessionEnd::new(served.state.clone(), SESSION);
    call(&served, "begin_change", json!({})).await.unwrap();
    write(&served, "res://a.gd", "extends Node\n").await;
    drop(end);
    assert!(served.changes.of(SESSION).is_none());
    assert!(!root.join("a.gd").exists());
    assert!(rows(&served).is_empty());
    // Outside a change again: a write lands at once.
    write(&served, "res://b.gd", "extends Node\n").await;
    assert!(root.join("b.gd").exists());
}

#[tokio::test]
async fn launches_and_editor_edits_but_node_steps_are_refused_inside_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_with(dir.path(), None);
    call(&served, "begin_change", json!({})).await.unwrap();
    let e = call(&served, "play_scene", json!({})).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PreconditionFailed, "{}", e.message);
    assert!(e.message.contains("cannot be un-run"), "{}", e.message);
    // An editor edit that is not a node step is refused, with the reason.
    let e = call(
        &served,
        "rename_node",
        json!({"node": "A", "new_name": "B"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::PreconditionFailed, "{}", e.message);
    assert!(e.message.contains("only node edits"), "{}", e.message);
    // A node edit is staged, which takes an editor to check it against.
    let e = call(
        &served,
        "create_node",
        json!({"parent": ".", "type": "Node", "name": "N"}),
    )
    .await
    .unwrap_err();
    assert_ne!(e.code, ErrorCode::Internal, "{}", e.message);
    assert!(!e.message.contains("only node edits"), "{}", e.message);
    let again = call(&served, "begin_change", json!({})).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::Conflict);
}

#[tokio::test]
async fn a_change_writes_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("a.gd"),
        "extends Node # 0
",
    )
    .unwrap();
    let served = served_with(root, None);
    call(&served, "begin_change", json!({})).await.unwrap();
    let first = call(
        &served,
        "write_script",
        script(
            "res://a.gd",
            "extends Node # 1
",
        ),
    )
    .await
    .unwrap();
    // Built on the disk's bytes, a second edit would undo the staged one: refused,
    // whether it names no expectation or the bytes the tool read from disk.
    let e = call(
        &served,
        "write_script",
        script(
            "res://a.gd",
            "extends Node # 2
",
        ),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::Stale, "{}", e.message);
    let mut from_disk = script(
        "res://a.gd",
        "extends Node # 2
",
    );
    from_disk["expected_sha256"] = first["sha256_before"].clone();
    let e = call(&served, "write_script", from_disk).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Stale, "{}", e.message);
    call(&served, "commit_change", json!({})).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("a.gd")).unwrap(),
        "extends Node # 1
"
    );
}

#[tokio::test]
async fn atomic_run_commands_with_a_failing_second_entry_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let served = served_with(root, None);
    let mut stale = script("res://b.gd", "extends Node\n");
    stale["expected_sha256"] = json!("0".repeat(64));
    let commands = |atomic: bool, second: Value| {
        json!({"atomic": atomic, "commands": [
            {"tool": "write_script", "arguments": script("res://a.gd", "extends Node\n")},
            {"tool": "write_script", "arguments": second},
        ]})
    };
    let e = call(&served, "run_commands", commands(true, stale.clone()))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Stale, "{}", e.message);
    assert!(
        e.hint
            .as_deref()
            .unwrap_or("")
            .contains("nothing was written"),
        "{:?}",
        e.hint
    );
    assert!(
        !root.join("a.gd").exists(),
        "the first entry's file is not there"
    );
    assert!(rows(&served).is_empty());
    let ok = call(
        &served,
        "run_commands",
        commands(true, script("res://b.gd", "extends Node\n")),
    )
    .await
    .unwrap();
    let rows = rows(&served);
    assert_eq!(rows.len(), 1, "one transaction for the batch");
    assert_eq!(
        ok["transaction_id"],
        json!(rows[0].transaction_id.to_string())
    );
    assert!(root.join("a.gd").exists() && root.join("b.gd").exists());
}

/// The previews of commit_change and abandon_change report the open change as it
/// stands (its files, still "open") and end nothing; begin_change's preview checks
/// what its real call checks (no change open yet) and opens none.
/// (tests/safety.rs' generic preview-vs-run check leaves these session tools to here.)
#[tokio::test]
async fn previews_report_the_open_change_and_end_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let served = served_with(root, None);
    let p = call(&served, "begin_change", json!({"dry_run": true}))
        .await
        .unwrap();
    assert_eq!(
        (&p["status"], &p["change_id"], &p["dry_run"]),
        (&json!("none"), &json!(null), &json!(true)),
        "{p}"
    );
    let opened = call(&served, "begin_change", json!({})).await.unwrap();
    assert_eq!(
        opened["status"], "open",
        "the preview opened nothing: {opened}"
    );
    let e = call(&served, "begin_change", json!({"dry_run": true}))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict, "{e:?}");
    write(&served, "res://a.gd", "extends Node\n").await;
    for tool in ["commit_change", "abandon_change"] {
        let args = json!({"dry_run": true});
        let p = call(&served, tool, args).await.unwrap();
        assert_eq!(p["status"], "open", "{tool}: {p}");
        assert_eq!(p["dry_run"], true);
        assert_eq!(
            p["files"],
            json!([{"path": "res://a.gd", "action": "create"}])
        );
        assert!(!root.join("a.gd").exists(), "{tool}'s preview wrote");
    }
    let done = call(&served, "commit_change", json!({})).await.unwrap();
    assert_eq!(
        done["status"], "committed",
        "the previews ended nothing: {done}"
    );
    assert!(root.join("a.gd").exists());
}

/// Guards against (issue 41, item 14): create_folder and delete_folder acting at once
/// inside a change, so abandon_change leaves a folder made or removed behind. Both
/// are refused inside a change, naming it, and nothing is made or removed; after
/// the change they run.
#[tokio::test]
async fn folders_are_refused_inside_a_change_and_nothing_is_made_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("old")).unwrap();
    let served = served_with(root, None);
    let begun = call(&served, "begin_change", json!({})).await.unwrap();
    let id = begun["change_id"].as_str().unwrap().to_owned();
    for (tool, path) in [
        ("create_folder", "res://new"),
        ("delete_folder", "res://old"),
    ] {
        let err = call(&served, tool, json!({"path": path, "confirm": true}))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::PreconditionFailed, "{tool}: {err:?}");
        assert!(err.message.contains(&id), "{tool}: {}", err.message);
        assert!(err.message.contains("nothing was run"), "{}", err.message);
    }
    call(&served, "abandon_change", json!({})).await.unwrap();
    assert!(
        !root.join("new").exists(),
        "a folder made inside the change"
    );
    assert!(
        root.join("old").is_dir(),
        "a folder removed inside the change"
    );
    call(
        &served,
        "create_folder",
        json!({"path": "res://new", "confirm": true}),
    )
    .await
    .unwrap();
    assert!(root.join("new").is_dir());
}

/// Guards against (issue 41, item 14): delete_folder answering "deleted" for a folder
/// someone else removed between its plan and its apply. The answer says the folder
/// was already gone and that no file was deleted.
#[test]
fn delete_folder_does_not_claim_a_folder_someone_else_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("old")).unwrap();
    let served = served_with(root, None);
    let def = served.registry.get("delete_folder").unwrap();
    let crate::tools::Handler::Planned(plan) = &def.handler else {
        panic!("delete_folder is planned")
    };
    let plan = plan(served.state.clone(), json!({"path": "res://old"})).unwrap();
    std::fs::remove_dir(root.join("old")).unwrap();
    let mut journal_call = crate::planes::project::JournalCall::new("files", "delete_folder");
    let err = (plan.apply)(&mut journal_call).unwrap_err();
    assert_eq!(err.code, ErrorCode::PreconditionFailed, "{err:?}");
    assert!(
        err.message.contains("no file was deleted"),
        "{}",
        err.message
    );
    assert!(err.message.contains("already gone"), "{}", err.message);
}
