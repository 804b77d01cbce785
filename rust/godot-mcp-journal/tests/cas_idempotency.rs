//! Model-based test of compare-and-swap and idempotency against a plain model:
//! stale whenever the bytes changed (nothing written); a replay never
//! re-executes; any other context for a used idempotency id conflicts.

use std::collections::BTreeMap;
use std::fs;

use godot_mcp_journal::journal::canonical_request_hash;
use godot_mcp_journal::{
    DeleteError, FileDelete, FileState, FileWrite, IdempotencyKey, Journal, TxnId, TxnOutcome,
    TxnStatus, WriteError,
};
use proptest::prelude::*;

const PATHS: [&str; 2] = ["a.txt", "dir/b.txt"];
/// (principal, session, tool family): three distinct contexts.
const CONTEXTS: [(&str, &str, &str); 3] = [
    ("alice", "s1", "project.files"),
    ("alice", "s2", "project.files"),
    ("bob", "s1", "scene.edit"),
];
const IDS: [&str; 3] = ["id-0", "id-1", "id-2"];

fn journal_bytes(i: u8) -> Vec<u8> {
    format!("content {i}\n").into_bytes()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    None,
    Current,
    /// Bytes nobody ever writes: always stale.
    Wrong(u8),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Write {
        path: usize,
        content: u8,
        expect: Expect,
        idem: Option<(usize, usize)>,
    },
    Delete {
        path: usize,
        expect: Expect,
        idem: Option<(usize, usize)>,
    },
    /// Someone else edits the project behind the journal's back.
    External { path: usize, content: Option<u8> },
    /// Repeat the n-th earlier request exactly (same id, context and request).
    Replay(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let expect = prop_oneof![
        Just(Expect::None),
        Just(Expect::Current),
        (0u8..3).prop_map(Expect::Wrong)
    ];
    let idem = proptest::option::of((0..IDS.len(), 0..CONTEXTS.len()));
    prop_oneof![
        4 => (0..PATHS.len(), 0u8..4, expect.clone(), idem.clone()).prop_map(
            |(path, content, expect, idem)| Op::Write { path, content, expect, idem }
        ),
        1 => (0..PATHS.len(), expect, idem)
            .prop_map(|(path, expect, idem)| Op::Delete { path, expect, idem }),
        1 => (0..PATHS.len(), proptest::option::of(0u8..4))
            .prop_map(|(path, content)| Op::External { path, content }),
        3 => (0usize..64).prop_map(Op::Replay),
    ]
}

/// What the model remembers about a used idempotency id.
#[derive(Clone, Debug)]
struct Used {
    ctx: usize,
    request: godot_mcp_journal::ContentHash,
    txn: TxnId,
    status: TxnStatus,
}

#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Committed,
    Replayed(TxnId, TxnStatus),
    Stale,
    Conflict,
    Absent,
}

fn state_of(bytes: &Option<Vec<u8>>) -> FileState {
    bytes.as_deref().map_or(FileState::Absent, FileState::of)
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    fs::create_dir_all(project.join("dir")).unwrap();
    let mut journal = Journal::open(&dir.path().join("state"), &project).unwrap();
    journal.reconcile().unwrap();

    let mut disk: BTreeMap<usize, Option<Vec<u8>>> = (0..PATHS.len()).map(|p| (p, None)).collect();
    let mut used: BTreeMap<usize, Used> = BTreeMap::new();
    let mut history: Vec<Op> = Vec::new();

    for op in ops {
        let op = match op {
            Op::Replay(n) if history.is_empty() => Op::External {
                path: n % 2,
                content: None,
            },
            Op::Replay(n) => history[n % history.len()].clone(),
            other => other,
        };
        let (path, is_delete, bytes, expect, idem) = match &op {
            Op::External { path, content } => {
                let target = project.join(PATHS[*path]);
                match content {
                    Some(c) => fs::write(&target, content_bytes(*c)).unwrap(),
                    None => {
                        let _ = fs::remove_file(&target);
                    }
                }
                disk.insert(*path, content.map(content_bytes));
                continue;
            }
            Op::Write {
                path,
                content,
                expect,
                idem,
            } => (*path, false, Some(journal_bytes(*content)), *expect, *idem),
            Op::Delete { path, expect, idem } => (*path, true, None, *expect, *idem),
            Op::Replay(_) => unreachable!(),
        };
        history.push(op.clone());
        let current = state_of(&disk[&path]);
        let expected_state = match expect {
            Expect::None => None,
            Expect::Current => Some(current),
            Expect::Wrong(w) => Some(FileState::of(format!("never written {w}").as_bytes())),
        };
        let request = canonical_request_hash(&serde_json::json!({
            "op": if is_delete { "delete" } else { "write" },
            "path": PATHS[path],
            "bytes": bytes.as_deref().map(FileState::of),
            "expected": expected_state,
        }));
        let key = idem.map(|(id, ctx)| IdempotencyKey {
            id: IDS[id].into(),
            principal: CONTEXTS[ctx].0.into(),
            session: CONTEXTS[ctx].1.into(),
            request_hash: request,
        });
        let family = idem.map_or("project.files", |(_, ctx)| CONTEXTS[ctx].2);

        // The model's prediction.
        let predicted = match idem.and_then(|(id, _)| used.get(&id).map(|u| (id, u))) {
            Some((_, u)) if Some(u.ctx) == idem.map(|i| i.1) && u.request == request => {
                Seen::Replayed(u.txn, u.status)
            }
            Some(_) => Seen::Conflict,
            None if expected_state.is_some_and(|e| e != current) => Seen::Stale,
            None if is_delete && current == FileState::Absent => Seen::Absent,
            None => Seen::Committed,
        };

        let seen = if is_delete {
            match journal.delete_file(FileDelete {
                rel_path: PATHS[path].into(),
                expected: expected_state,
                idempotency: key,
                tool_family: family.into(),
                operation: "delete".into(),
            }) {
                Ok(TxnOutcome::Committed { transaction_id, .. }) => {
                    (Seen::Committed, Some(transaction_id))
                }
                Ok(TxnOutcome::Replayed(p)) => (Seen::Replayed(p.transaction_id, p.status), None),
                Err(DeleteError::Stale { .. }) => (Seen::Stale, None),
                Err(DeleteError::Conflict { .. }) => (Seen::Conflict, None),
                Err(DeleteError::Absent { .. }) => (Seen::Absent, None),
                Err(e) => return Err(TestCaseError::fail(format!("{op:?}: {e}"))),
            }
        } else {
            match journal.write_file(FileWrite {
                rel_path: PATHS[path].into(),
                bytes: bytes.clone().unwrap(),
                expected: expected_state,
                idempotency: key,
                tool_family: family.into(),
                operation: "write".into(),
            }) {
                Ok(TxnOutcome::Committed { transaction_id, .. }) => {
                    (Seen::Committed, Some(transaction_id))
                }
                Ok(TxnOutcome::Replayed(p)) => (Seen::Replayed(p.transaction_id, p.status), None),
                Err(WriteError::Stale { .. }) => (Seen::Stale, None),
                Err(WriteError::Conflict { .. }) => (Seen::Conflict, None),
                Err(e) => return Err(TestCaseError::fail(format!("{op:?}: {e}"))),
            }
        };
        prop_assert_eq!(&seen.0, &predicted, "{:?}", op);

        if let (Seen::Committed, Some(txn)) = seen {
            disk.insert(path, bytes);
            if let Some((id, ctx)) = idem {
                used.insert(
                    id,
                    Used {
                        ctx,
                        request,
                        txn,
                        status: TxnStatus::Committed,
                    },
                );
            }
        }
        // Whatever happened, the disk is exactly the model: a stale write, a
        // conflict and a replay wrote nothing.
        for (p, bytes) in &disk {
            let on_disk = fs::read(project.join(PATHS[*p])).ok();
            prop_assert_eq!(&on_disk, bytes, "{} after {:?}", PATHS[*p], op);
        }
    }
    Ok(())
}

fn content_bytes(c: u8) -> Vec<u8> {
    format!("external edit {c}\n").into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Guards against: a CAS write that lands over changed bytes, a replay that
    /// re-executes (and so overwrites a later external edit), and an
    /// idempotency id that returns another context's result instead of conflicting.
    #[test]
    fn cas_and_idempotency_follow_the_model(ops in proptest::collection::vec(op(), 1..24)) {
        run(ops)?;
    }
}

/// Guards against: writes before startup reconciliation.
#[test]
fn writes_are_refused_until_reconciled() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let mut journal = Journal::open(dir.path(), &project).unwrap();
    let err = journal
        .write_file(FileWrite {
            rel_path: "a".into(),
            bytes: b"x".to_vec(),
            expected: None,
            idempotency: None,
            tool_family: "t".into(),
            operation: "write".into(),
        })
        .unwrap_err();
    assert!(matches!(err, WriteError::NotReconciled), "{err}");
    assert!(!project.join("a").exists());
}

/// Guards against: the journal writing outside the project when handed a path
/// the server should have refused.
#[test]
fn absolute_and_parent_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let mut journal = Journal::open(dir.path(), &project).unwrap();
    journal.reconcile().unwrap();
    for bad in ["/tmp/x", "../x", "a/../../x", ""] {
        let err = journal
            .write_file(FileWrite {
                rel_path: bad.into(),
                bytes: b"x".to_vec(),
                expected: None,
                idempotency: None,
                tool_family: "t".into(),
                operation: "write".into(),
            })
            .unwrap_err();
        assert!(matches!(err, WriteError::Path(_)), "{bad}: {err}");
    }
    assert!(!dir.path().join("x").exists());
}

/// Guards against: a journal applied to a different project at the same path.
/// The directory is replaced; the old open row is quarantined as foreign
/// evidence, never applied, and closes the gate until repair resolves it.
#[test]
fn a_different_project_at_the_same_path_gets_a_new_identity() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let (first, state_dir) = {
        let mut j = Journal::open(dir.path(), &project).unwrap();
        j.reconcile().unwrap();
        (j.identity().clone(), j.state_dir().to_path_buf())
    };
    // An open row of the old project, then the old project is replaced.
    support::insert_open_intents(
        &state_dir,
        &first,
        &[("a.txt", FileState::Absent, FileState::of(b"old"))],
    );
    // Move the old project aside (it keeps its inode) before the new one is created at
    // the same path, so the file system cannot hand the new folder the old inode.
    let old = dir.path().join("p-old");
    fs::rename(&project, &old).unwrap();
    fs::create_dir(&project).unwrap();
    fs::write(project.join("a.txt"), b"old").unwrap();

    let mut j = Journal::open(dir.path(), &project).unwrap();
    let second = j.identity().clone();
    if (second.dev, second.ino) == (first.dev, first.ino) {
        panic!("the filesystem reused the inode number; this test cannot tell the projects apart");
    }
    assert_ne!(second.object_id, first.object_id);
    assert_eq!(second.generation, first.generation + 1);
    let report = j.reconcile().unwrap();
    assert_eq!(
        report.committed, 0,
        "the old row must not be proven against the new project"
    );
    assert_eq!(report.quarantined.len(), 1);
    assert!(report.quarantined[0].reason.contains("not this project"));
    assert!(matches!(
        j.gate(),
        godot_mcp_journal::WriteGate::Closed { .. }
    ));
    assert_eq!(fs::read(project.join("a.txt")).unwrap(), b"old");
}

mod support;

/// Guards against: a closed gate that lets a write or delete through, or whose
/// refusal does not name the quarantined transaction; reads keep working.
#[test]
fn a_closed_gate_refuses_writes_and_names_the_quarantined_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let (identity, state_dir) = support::identity_and_state_dir(dir.path(), &project);
    let ids = support::insert_open_intents(
        &state_dir,
        &identity,
        &[("a.txt", FileState::Absent, FileState::of(b"post"))],
    );
    fs::write(project.join("a.txt"), b"neither").unwrap();
    let mut journal = Journal::open(dir.path(), &project).unwrap();
    journal.reconcile().unwrap();
    let err = journal
        .write_file(FileWrite {
            rel_path: "b.txt".into(),
            bytes: b"x".to_vec(),
            expected: None,
            idempotency: None,
            tool_family: "t".into(),
            operation: "write".into(),
        })
        .unwrap_err();
    match &err {
        WriteError::GateClosed { quarantined } => assert_eq!(quarantined, &ids),
        other => panic!("expected GateClosed, got {other}"),
    }
    assert!(err.to_string().contains(&ids[0].to_string()), "{err}");
    let err = journal
        .delete_file(FileDelete {
            rel_path: "a.txt".into(),
            expected: None,
            idempotency: None,
            tool_family: "t".into(),
            operation: "delete".into(),
        })
        .unwrap_err();
    assert!(matches!(err, DeleteError::GateClosed { .. }), "{err}");
    assert!(!project.join("b.txt").exists());
    assert_eq!(fs::read(project.join("a.txt")).unwrap(), b"neither");
    let listed = journal
        .list_transactions(&godot_mcp_journal::TxnFilter::default())
        .unwrap();
    assert_eq!(listed[0].status, TxnStatus::Quarantined);
    assert!(listed[0].reason.as_deref().unwrap().contains("neither"));
}
