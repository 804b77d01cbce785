use super::*;
use crate::ids::FileState;

/// Guards against (issue 26, item 8): a crash inside the exchange
/// removing a concurrent writer's file. Someone wrote the target between
/// the re-check and the exchange; the exchange put our bytes in place and
/// their file at the temp path; the process died there. The target holds
/// the post-state, but the file at the temp path is neither the pre-state
/// nor ours: quarantined, and it is kept as evidence.
#[test]
fn a_temp_holding_someone_else_s_bytes_is_kept_and_quarantines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), b"ours").unwrap();
    std::fs::write(dir.path().join(".gmcp-x.tmp"), b"theirs").unwrap();
    let intent = FileIntent {
        path: "a.txt".into(),
        pre: FileState::of(b"before"),
        post: FileState::of(b"ours"),
        temp: Some(".gmcp-x.tmp".into()),
        linked_launch: None,
    };
    let d = derive_file_linked(dir.path(), &intent, Deriver::Reconcile, None);
    assert_eq!(d.status, TxnStatus::Quarantined, "{:?}", d.reason);
    assert!(d.remove_temp.is_none(), "their file would be removed");
    // The pre-state or our own bytes at the temp path are ours to remove.
    for at_temp in [&b"before"[..], b"ours"] {
        std::fs::write(dir.path().join(".gmcp-x.tmp"), at_temp).unwrap();
        let d = derive_file_linked(dir.path(), &intent, Deriver::Reconcile, None);
        assert_eq!(d.status, TxnStatus::Committed);
        assert!(d.remove_temp.is_some());
    }
    // Target still in its pre-state: nothing was exchanged, the temp is
    // our own, torn by the crash (the kill loop's case).
    std::fs::write(dir.path().join("a.txt"), b"before").unwrap();
    std::fs::write(dir.path().join(".gmcp-x.tmp"), b"").unwrap();
    let d = derive_file_linked(dir.path(), &intent, Deriver::Reconcile, None);
    assert_eq!(d.status, TxnStatus::Compensated);
    assert!(d.remove_temp.is_some());
}

fn report(c: usize, k: usize, gate: WriteGate) -> ReconcileReport {
    ReconcileReport {
        compensated: c,
        committed: k,
        quarantined: vec![],
        gate,
        editor_waiting: vec![],
        set_aside_log: None,
    }
}

#[test]
fn stderr_lines_match_the_spec_exactly() {
    assert_eq!(
        report(1, 2, WriteGate::Open).stderr_lines(),
        [
            "godot-mcp serve: startup reconciliation compensated=1",
            "godot-mcp serve: startup reconciliation committed=2",
            "godot-mcp serve: write gate open",
        ]
    );
    assert_eq!(
        report(0, 0, WriteGate::Open).stderr_lines(),
        ["godot-mcp serve: write gate open"]
    );
}

#[test]
fn a_closed_gate_names_its_transactions() {
    let id: TxnId = "00000000-0000-0000-0000-000000000301".parse().unwrap();
    let q = QuarantinedTxn {
        transaction_id: id,
        reason: "a.txt is sha256:000000000000, neither …".into(),
    };
    let r = ReconcileReport {
        compensated: 0,
        committed: 0,
        quarantined: vec![q.clone()],
        gate: WriteGate::Closed {
            quarantined: vec![q],
        },
        editor_waiting: vec![],
        set_aside_log: None,
    };
    let lines = r.stderr_lines();
    assert_eq!(
        lines[0],
        "godot-mcp serve: startup reconciliation quarantined=1"
    );
    assert!(
        lines[1].starts_with("godot-mcp serve: write gate closed: 1 quarantined transaction(s): 00000000-0000-0000-0000-000000000301 ("),
        "{}",
        lines[1]
    );
}

/// Where the whole file system cannot be synced (Windows), these are the
/// directories flushed instead: each terminal file row's, once; never a
/// quarantined row's (nothing is claimed of it).
#[test]
fn the_claimed_directories_are_those_of_terminal_file_rows_once_each() {
    let root = Path::new("proj");
    let row = |path: &str, status| {
        let mut d = Derived::quarantined(String::new());
        d.status = status;
        d.proof = Some(FileProof {
            path: path.into(),
            observed: FileState::Absent,
            basis: ProofBasis::PreState,
            temp_removed: false,
            derived_by: Deriver::Reconcile,
        });
        (String::new(), d)
    };
    let derived = [
        row("a/x.tscn", TxnStatus::Committed),
        row("a/y.tscn", TxnStatus::Compensated),
        row("top.txt", TxnStatus::Committed),
        row("q/z.tscn", TxnStatus::Quarantined),
        (String::new(), Derived::quarantined("launch".into())),
    ];
    assert_eq!(
        claimed_dirs(root, &derived),
        [root.to_path_buf(), root.join("a")]
    );
}

#[test]
fn derive_follows_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let intent = |pre, post| FileIntent {
        path: "f".into(),
        pre,
        post,
        temp: Some(".gmcp-t.tmp".into()),
        linked_launch: None,
    };
    let pre = FileState::of(b"pre");
    let post = FileState::of(b"post");
    fs::write(root.join("f"), b"post").unwrap();
    let d = derive_file(root, &intent(pre, post), Deriver::Reconcile);
    assert_eq!(d.status, TxnStatus::Committed);
    assert!(d.remove_displaced.is_none());
    // A Windows exchange cut short after its ReplaceFileW: the target holds
    // the post-state, the displaced file is beside the temp's name.
    fs::write(root.join(".gmcp-t.tmp.displaced"), b"pre").unwrap();
    let d = derive_file(root, &intent(pre, post), Deriver::Reconcile);
    assert_eq!(d.status, TxnStatus::Committed);
    assert_eq!(
        d.remove_displaced.as_deref(),
        Some(root.join(".gmcp-t.tmp.displaced").as_path())
    );
    fs::write(root.join("f"), b"pre").unwrap();
    fs::write(root.join(".gmcp-t.tmp"), b"post").unwrap();
    let d = derive_file(root, &intent(pre, post), Deriver::Reconcile);
    assert_eq!(d.status, TxnStatus::Compensated);
    assert!(d.remove_temp.is_some());
    fs::write(root.join("f"), b"other").unwrap();
    let d = derive_file(root, &intent(pre, post), Deriver::Reconcile);
    assert_eq!(d.status, TxnStatus::Quarantined);
    assert!(
        d.remove_temp.is_none() && d.remove_displaced.is_none(),
        "quarantine keeps the temp and the displaced file as evidence"
    );
    fs::remove_file(root.join("f")).unwrap();
    // A create exchanges nothing: a displaced file beside it is not ours.
    fs::remove_file(root.join(".gmcp-t.tmp.displaced")).unwrap();
    let d = derive_file(root, &intent(FileState::Absent, post), Deriver::Reconcile);
    assert_eq!(d.status, TxnStatus::Compensated);
}

#[test]
fn a_composite_needs_its_launch_sub_proof() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let link: TxnId = "00000000-0000-0000-0000-000000000777".parse().unwrap();
    let pre = FileState::of(b"pre");
    let post = FileState::of(b"post");
    let intent = FileIntent {
        path: "f".into(),
        pre,
        post,
        temp: None,
        linked_launch: Some(link),
    };
    fs::write(root.join("f"), b"post").unwrap();
    let by = Deriver::Reconcile;
    let d = derive_file_linked(root, &intent, by, Some(Ok(())));
    assert_eq!(d.status, TxnStatus::Committed);
    let d = derive_file_linked(root, &intent, by, Some(Err("exited 1".into())));
    assert_eq!(
        d.status,
        TxnStatus::Quarantined,
        "post-state alone is not enough"
    );
    fs::write(root.join("f"), b"pre").unwrap();
    let d = derive_file_linked(root, &intent, by, Some(Err("exited 1".into())));
    assert_eq!(
        d.status,
        TxnStatus::Compensated,
        "nothing applied: provably compensated"
    );
}
