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

        // Each refusal as the model names it; any other error fails the case.
        let result = if is_delete {
            journal
                .delete_file(FileDelete {
                    rel_path: PATHS[path].into(),
                    expected: expected_state,
                    idempotency: key,
                    tool_family: family.into(),
                    operation: "delete".into(),
                })
                .map_err(|e| match e {
                    DeleteError::Stale { .. } => Ok(Seen::Stale),
                    DeleteError::Conflict { .. } => Ok(Seen::Conflict),
                    DeleteError::Absent { .. } => Ok(Seen::Absent),
                    e => Err(e.to_string()),
                })
        } else {
            let mut req = FileWrite::new(PATHS[path], bytes.as_deref().unwrap(), family, "write");
            req.expected = expected_state;
            req.idempotency = key;
            journal.write_file(req).map_err(|e| match e {
                WriteError::Stale { .. } => Ok(Seen::Stale),
                WriteError::Conflict { .. } => Ok(Seen::Conflict),
                e => Err(e.to_string()),
            })
        };
        let seen = match result {
            Ok(TxnOutcome::Committed { transaction_id, .. }) => {
                (Seen::Committed, Some(transaction_id))
            }
            Ok(TxnOutcome::Replayed(p)) => (Seen::Replayed(p.transaction_id, p.status), None),
            Err(Ok(seen)) => (seen, None),
            Err(Err(e)) => return Err(TestCaseError::fail(format!("{op:?}: {e}"))),
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

/// A temp dir holding an empty project `p` (the dir is also the state root).
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    (dir, project)
}

/// Guards against: writes before startup reconciliation.
#[test]
fn writes_are_refused_until_reconciled() {
    let (dir, project) = project();
    let mut journal = Journal::open(dir.path(), &project).unwrap();
    let err = journal
        .write_file(FileWrite::new("a", b"x", "t", "write"))
        .unwrap_err();
    assert!(matches!(err, WriteError::NotReconciled), "{err}");
    assert!(!project.join("a").exists());
}

/// Guards against: the journal writing outside the project when handed a path
/// the server should have refused.
#[test]
fn absolute_and_parent_paths_are_refused() {
    let (dir, project) = project();
    let mut journal = Journal::open(dir.path(), &project).unwrap();
    journal.reconcile().unwrap();
    for bad in ["/tmp/x", "../x", "a/../../x", ""] {
        let err = journal
            .write_file(FileWrite::new(bad, b"x", "t", "write"))
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
    let (dir, project) = project();
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
    let (dir, project) = project();
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
        .write_file(FileWrite::new("b.txt", b"x", "t", "write"))
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

/// A third party changes the target while a compare-and-swap write is under
/// way: at `point`, on the writing thread, `meddle` runs once. The failpoint
/// registry is global, so the meddling is tied to this thread and the tests
/// that use it take turns.
#[cfg(feature = "failpoints")]
mod third_party {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    use godot_mcp_journal::failpoints;
    use godot_mcp_journal::{
        DeleteError, FileDelete, FileState, FileWrite, Journal, TxnFilter, TxnStatus, WriteError,
    };

    static TURN: Mutex<()> = Mutex::new(());

    const OURS: &[u8] = b"the journal's new bytes\n";
    const BEFORE: &[u8] = b"what the caller read\n";
    const THEIRS: &[u8] = b"a third party's bytes\n";

    fn write_meddled(
        pre: Option<&[u8]>,
        point: &'static str,
        meddle: impl Fn(&Path) + Send + Sync + 'static,
    ) -> (tempfile::TempDir, PathBuf, Result<(), WriteError>, Journal) {
        meddled(pre, point, meddle, |journal, expected| {
            let mut req = FileWrite::new("a.txt", OURS, "test", "write");
            req.expected = Some(expected);
            journal.write_file(req).map(|_| ())
        })
    }

    fn meddled<E>(
        pre: Option<&[u8]>,
        point: &'static str,
        meddle: impl Fn(&Path) + Send + Sync + 'static,
        op: impl FnOnce(&mut Journal, FileState) -> Result<(), E>,
    ) -> (tempfile::TempDir, PathBuf, Result<(), E>, Journal) {
        let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        fs::create_dir_all(&project).unwrap();
        let target = project.join("a.txt");
        if let Some(pre) = pre {
            fs::write(&target, pre).unwrap();
        }
        let mut journal = Journal::open(&dir.path().join("state"), &project).unwrap();
        journal.reconcile().unwrap();
        let me = std::thread::current().id();
        let once = Arc::new(Mutex::new(Some(meddle)));
        let at = target.clone();
        fail::cfg_callback(point, move || {
            if std::thread::current().id() == me
                && let Some(meddle) = once.lock().unwrap().take()
            {
                meddle(&at);
            }
        })
        .unwrap();
        let result = op(&mut journal, pre.map_or(FileState::Absent, FileState::of));
        fail::remove(point);
        (dir, target, result, journal)
    }

    /// Replaces `target` by a new file (a new inode) holding `bytes`, the way
    /// an editor saves: write a temp, rename it over.
    fn rename_replace(target: &Path, bytes: &[u8]) {
        let tmp = target.with_extension("editor-save");
        fs::write(&tmp, bytes).unwrap();
        fs::rename(&tmp, target).unwrap();
    }

    /// A compare-and-swap write over `pre` meddled with at `point`: the
    /// answer is STALE with its compensated transaction, the third party's
    /// bytes are on disk and no temp file is left. Returns the target (and
    /// the dir that holds it).
    fn assert_stale_and_kept(
        pre: Option<&[u8]>,
        point: &'static str,
        meddle: impl Fn(&Path) + Send + Sync + 'static,
        theirs: &[u8],
    ) -> (tempfile::TempDir, PathBuf) {
        let (dir, target, result, journal) = write_meddled(pre, point, meddle);
        let txn = match result {
            Err(WriteError::Stale {
                transaction_id: Some(txn),
                current,
                ..
            }) => {
                assert_eq!(current, FileState::of(theirs));
                txn
            }
            other => panic!("expected stale, got {other:?}"),
        };
        assert_eq!(
            fs::read(&target).unwrap(),
            theirs,
            "the third party's bytes"
        );
        let all = journal.list_transactions(&TxnFilter::default()).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].transaction_id, txn);
        assert_eq!(all[0].status, TxnStatus::Compensated, "{:?}", all[0]);
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("project"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with(".gmcp-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        (dir, target)
    }

    /// Guards against: a change after the first compare-and-swap check (here
    /// while the temp file is fsynced) being overwritten and committed — the
    /// re-check right before the rename must see it.
    #[test]
    fn a_rename_replace_after_the_check_answers_stale_and_is_kept() {
        assert_stale_and_kept(
            Some(BEFORE),
            failpoints::AFTER_TEMP_FSYNC,
            |t| rename_replace(t, THEIRS),
            THEIRS,
        );
    }

    /// Guards against: a compare-and-swap on bytes alone. The file was replaced
    /// by another one with the very same bytes (another inode): its identity
    /// changed, so the write is stale and the other file stays.
    #[test]
    fn a_replaced_file_with_equal_bytes_is_stale_by_identity() {
        // The inode of the third party's file, taken when it is put in place.
        let theirs = Arc::new(AtomicU64::new(0));
        let seen = theirs.clone();
        let (_dir, target) = assert_stale_and_kept(
            Some(BEFORE),
            failpoints::AFTER_TEMP_FSYNC,
            move |t| {
                rename_replace(t, BEFORE);
                let ino = godot_mcp_os::fs::path_id(t).unwrap().ino;
                seen.store(ino, Ordering::SeqCst);
            },
            BEFORE,
        );
        assert_eq!(
            godot_mcp_os::fs::path_id(&target).unwrap().ino,
            theirs.load(Ordering::SeqCst),
            "their inode stays"
        );
    }

    /// Guards against: a write that lands after the last re-check, in the
    /// window before the rename, being overwritten and committed. Written in
    /// place through another handle, it is caught by verifying the file the
    /// exchange displaced, and put back.
    #[test]
    fn a_write_in_place_after_the_recheck_is_detected_and_put_back() {
        let write_in_place = |t: &Path| {
            use std::io::Write;
            let mut f = fs::OpenOptions::new().write(true).open(t).unwrap();
            f.set_len(0).unwrap();
            f.write_all(THEIRS).unwrap();
        };
        assert_stale_and_kept(
            Some(BEFORE),
            failpoints::AFTER_PRE_HASH,
            write_in_place,
            THEIRS,
        );
    }

    /// The same window, closed by a rename-replace: the displaced file is not
    /// the one checked (another inode), so it is put back.
    #[test]
    fn a_rename_replace_after_the_recheck_is_detected_and_put_back() {
        assert_stale_and_kept(
            Some(BEFORE),
            failpoints::AFTER_PRE_HASH,
            |t| rename_replace(t, THEIRS),
            THEIRS,
        );
    }

    /// Guards against: a create-only write replacing a file someone else
    /// created after the last re-check (the rename must not replace).
    #[test]
    fn a_file_created_after_the_recheck_is_never_replaced() {
        let create = |t: &Path| fs::write(t, THEIRS).unwrap();
        assert_stale_and_kept(None, failpoints::AFTER_PRE_HASH, create, THEIRS);
    }

    /// Guards against: a delete that compares bytes alone. The file was
    /// replaced by another with equal bytes after the first check; the
    /// re-check immediately before the unlink sees the new identity, so the
    /// delete is stale and the other file stays.
    #[test]
    fn a_delete_of_a_replaced_file_with_equal_bytes_is_stale_by_identity() {
        let (_dir, target, result, journal) = meddled(
            Some(BEFORE),
            failpoints::AFTER_INTENT,
            |t| rename_replace(t, BEFORE),
            |j, expected| {
                j.delete_file(FileDelete {
                    rel_path: "a.txt".into(),
                    expected: Some(expected),
                    idempotency: None,
                    tool_family: "test".into(),
                    operation: "delete".into(),
                })
                .map(|_| ())
            },
        );
        match result {
            Err(DeleteError::Stale {
                transaction_id: Some(_),
                ..
            }) => {}
            other => panic!("expected stale, got {other:?}"),
        }
        assert_eq!(fs::read(&target).unwrap(), BEFORE);
        let all = journal.list_transactions(&TxnFilter::default()).unwrap();
        assert_eq!(all[0].status, TxnStatus::Compensated, "{:?}", all[0]);
    }
}
