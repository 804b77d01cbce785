use super::*;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::settle::same_file;
use crate::effect::ProofBasis;
use crate::ids::{FileState, TxnStatus};
use crate::journal::{IdempotencyKey, Journal, WriteGate};
use crate::listing::TxnFilter;
use crate::storage::Storage;
use crate::storage::{Injected, RealStorage, StorageOp, is_journal_temp};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Real storage whose second `remove_file` of a project file (not a temp) fails,
/// once.
fn failing_unlink() -> Arc<Injected<AtomicUsize>> {
    Arc::new(Injected {
        state: AtomicUsize::new(0),
        hook: |calls, op| match op {
            StorageOp::RemoveFile(path)
                if !is_journal_temp(path) && calls.fetch_add(1, Ordering::SeqCst) + 1 == 2 =>
            {
                Err(io::Error::other("injected unlink failure"))
            }
            _ => Ok(()),
        },
        inner: RealStorage,
    })
}

fn move_like(key: Option<IdempotencyKey>) -> FileChange {
    let w = |p: &str, b: &[u8]| ChangeEffect {
        rel_path: p.into(),
        op: ChangeOp::Write(b.to_vec()),
        expected: Some(FileState::Absent),
    };
    let mut main = w("main.tscn", b"new ref");
    main.expected = Some(FileState::of(b"old ref"));
    let d = |p: &str| ChangeEffect {
        rel_path: p.into(),
        op: ChangeOp::Delete,
        expected: None,
    };
    FileChange {
        effects: vec![
            w("b/new.tscn", b"scene"),
            w("b/new.tscn.uid", b"uid"),
            main,
            d("old.tscn"),
            d("old.tscn.uid"),
        ],
        idempotency: key,
        tool_family: "files".into(),
        operation: "move_file".into(),
    }
}

fn project_with(storage: Arc<dyn Storage>) -> (tempfile::TempDir, PathBuf, Journal) {
    project(storage)
}

fn project(storage: Arc<dyn Storage>) -> (tempfile::TempDir, PathBuf, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    for (p, b) in [
        ("old.tscn", "scene"),
        ("old.tscn.uid", "uid"),
        ("main.tscn", "old ref"),
    ] {
        fs::write(project.join(p), b).unwrap();
    }
    let mut j = Journal::open_with_storage(&dir.path().join("s"), &project, storage).unwrap();
    j.reconcile().unwrap();
    (dir, project, j)
}

/// Guards against (issue 28): a change that fails midway answering with
/// the files before the failure still changed. The second delete fails:
/// the answer says the change was compensated, every file is back at its
/// pre-state, one row (compensated) and no pre-image remain, and a retry
/// with the same idempotency key reports the compensated change — never a
/// bare "committed".
#[test]
fn a_failure_midway_puts_every_file_back_before_the_answer() {
    let storage = failing_unlink();
    let (_dir, project, mut j) = project(storage);
    let key = IdempotencyKey {
        id: "k".into(),
        principal: "p".into(),
        session: "s".into(),
        request_hash: crate::ids::ContentHash::of(b"move"),
    };
    let err = j.apply_change(move_like(Some(key.clone()))).unwrap_err();
    let ChangeError::Failed {
        status,
        path,
        transaction_id,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, TxnStatus::Compensated, "{err}");
    assert_eq!(path, "old.tscn.uid");
    assert_eq!(fs::read(project.join("old.tscn")).unwrap(), b"scene");
    assert_eq!(fs::read(project.join("old.tscn.uid")).unwrap(), b"uid");
    assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"old ref");
    assert!(!project.join("b/new.tscn").exists());
    assert!(!project.join("b/new.tscn.uid").exists());
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].status, TxnStatus::Compensated);
    assert_eq!(rows[0].files.len(), 5);
    assert_eq!(j.retained_change_preimages().unwrap(), 0);
    assert_eq!(j.gate(), &WriteGate::Open);
    match j.apply_change(move_like(Some(key))).unwrap() {
        ChangeOutcome::Replayed(r) => {
            assert_eq!(r.status, TxnStatus::Compensated);
            assert_eq!(r.transaction_id, *transaction_id);
            assert!(r.reason.unwrap().contains("put back"));
        }
        other => panic!("{other:?}"),
    }
}

/// A stand-in editor: what `apply` answers, what `undo` answers, and what was called.
struct FakeEditor {
    sent: EditorSent,
    undo: Result<EditorPartOutcome, String>,
    calls: Vec<&'static str>,
}

impl EditorHook for FakeEditor {
    fn apply(&mut self) -> EditorSent {
        self.calls.push("apply");
        self.sent.clone()
    }
    fn undo(&mut self) -> Result<EditorPartOutcome, String> {
        self.calls.push("undo");
        self.undo.clone()
    }
}

fn part() -> ChangeEditorPart {
    ChangeEditorPart {
        action: "godot-mcp change x".into(),
        scene: "res://main.tscn".into(),
        request_id: 7,
        params_sha256: "0".into(),
        steps: 1,
        root_id: Some(1),
    }
}

fn editor(sent: EditorSent, undo: Result<EditorPartOutcome, String>) -> FakeEditor {
    FakeEditor {
        sent,
        undo,
        calls: Vec::new(),
    }
}

fn status_of(j: &Journal) -> (TxnStatus, Option<String>) {
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    (rows[0].status, rows[0].reason.clone())
}

/// The files of `move_like` as they were before it (`true`) or after it.
fn at_pre_state(project: &Path) -> bool {
    fs::read(project.join("old.tscn")).ok().as_deref() == Some(&b"scene"[..])
        && fs::read(project.join("old.tscn.uid")).ok().as_deref() == Some(&b"uid"[..])
        && fs::read(project.join("main.tscn")).unwrap() == b"old ref"
        && !project.join("b/new.tscn").exists()
        && !project.join("b/new.tscn.uid").exists()
}

fn held(j: &mut Journal, editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>) -> HeldChange {
    match j
        .apply_change_held(move_like(None), None, editor, "build")
        .unwrap()
    {
        Applied::Held(h) => h,
        Applied::Done(d) => panic!("not held: {d:?}"),
    }
}

/// Guards against (issue 44, item 4): a change whose check failed left in place,
/// or a put-back assumed rather than derived. Held: every file at its
/// post-state and the change open; the check fails: every file back, compensated
/// with the pre-state proof, the editor's action undone; a second change whose
/// check passes: committed with the post-state proof.
#[test]
fn a_held_change_is_kept_or_put_back_as_its_check_says() {
    let (_dir, project, mut j) = project(Arc::new(RealStorage));
    let mut ed = editor(EditorSent::Applied, Ok(EditorPartOutcome::Undone));
    let h = held(&mut j, Some((part(), &mut ed)));
    assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"new ref");
    assert_eq!(status_of(&j).0, TxnStatus::Open);
    // Held in this process: not an editor part owed to the next editor.
    assert!(j.owed_editor_parts().unwrap().is_empty());
    let end = j.finish_held(h, false, "the build check failed", Some(&mut ed));
    assert_eq!(end.status, TxnStatus::Compensated, "{end:?}");
    let proof = end.proof.unwrap();
    assert!(proof.files.iter().all(|f| f.basis == ProofBasis::PreState));
    assert_eq!(proof.editor, Some(EditorPartOutcome::Undone));
    assert_eq!(ed.calls, ["apply", "undo"]);
    assert!(at_pre_state(&project));
    let (status, reason) = status_of(&j);
    assert_eq!(status, TxnStatus::Compensated);
    assert!(reason.unwrap().starts_with("the build check failed"));
    assert_eq!(j.retained_change_preimages().unwrap(), 0);

    let h = held(&mut j, None);
    let end = j.finish_held(h, true, "", None);
    assert_eq!(end.status, TxnStatus::Committed, "{end:?}");
    assert!(
        end.proof
            .unwrap()
            .files
            .iter()
            .all(|f| f.basis == ProofBasis::PostState)
    );
    assert_eq!(fs::read(project.join("b/new.tscn")).unwrap(), b"scene");
}

/// Guards against (issue 44, item 4): a change whose check never ended (the
/// server died during the build) reconciled `committed` because its files are
/// at their post-state: its check never passed, so it is put back.
#[test]
fn a_held_change_left_by_a_dead_server_is_put_back() {
    let (dir, project, mut j) = project(Arc::new(RealStorage));
    let h = held(&mut j, None);
    drop(h);
    drop(j);
    assert!(!at_pre_state(&project));
    let mut j =
        Journal::open_with_storage(&dir.path().join("s"), &project, Arc::new(RealStorage)).unwrap();
    let report = j.reconcile().unwrap();
    assert_eq!(report.compensated, 1, "{report:?}");
    assert!(at_pre_state(&project));
    let (status, reason) = status_of(&j);
    assert_eq!(status, TxnStatus::Compensated);
    assert!(reason.unwrap().contains("build check"));
}

/// Guards against (issue 28): an editor part that survives its change's files
/// being put back, or files written after the editor refused its part. Applied
/// and the files land: committed, no undo. Applied and a file fails: every file
/// put back AND the editor's action undone, compensated; a refused undo:
/// quarantined, the reason naming the editor part. Refused by the editor: no
/// file written, compensated.
#[test]
fn a_change_with_an_editor_part_is_whole_in_the_editor_too() {
    let (_dir, _project, mut j) = project(Arc::new(RealStorage));
    let mut ed = editor(EditorSent::Applied, Ok(EditorPartOutcome::Undone));
    j.apply_change_with(move_like(None), None, Some((part(), &mut ed)))
        .unwrap();
    assert_eq!(ed.calls, ["apply"]);
    assert_eq!(status_of(&j).0, TxnStatus::Committed);

    for (undo, want) in [
        (Ok(EditorPartOutcome::Undone), TxnStatus::Compensated),
        (
            Err("someone else's action".to_owned()),
            TxnStatus::Quarantined,
        ),
    ] {
        let storage = failing_unlink();
        let (_dir, project, mut j) = project_with(storage);
        let mut ed = editor(EditorSent::Applied, undo);
        let err = j
            .apply_change_with(move_like(None), None, Some((part(), &mut ed)))
            .unwrap_err();
        assert_eq!(ed.calls, ["apply", "undo"], "{err}");
        let (status, reason) = status_of(&j);
        assert_eq!(status, want, "{err}");
        assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"old ref");
        if want == TxnStatus::Quarantined {
            assert!(reason.unwrap().contains("godot-mcp change x"));
        }
    }

    let (_dir, project, mut j) = project_with(Arc::new(RealStorage));
    let mut ed = editor(
        EditorSent::NotApplied("refused".into()),
        Ok(EditorPartOutcome::Undone),
    );
    let err = j
        .apply_change_with(move_like(None), None, Some((part(), &mut ed)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ChangeError::Editor {
                status: TxnStatus::Compensated,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(ed.calls, ["apply"]);
    assert!(!project.join("b/new.tscn").exists());
    assert_eq!(status_of(&j).0, TxnStatus::Compensated);
    let _ = project;
}

/// Guards against: a change killed after its editor part may have applied being
/// recorded compensated before the editor took it back. Reconciliation puts the
/// files back and leaves the row open (owed); the editor's answer settles it.
#[test]
fn an_owed_editor_part_waits_for_the_editor_then_settles() {
    let (dir, project, mut j) = project_with(Arc::new(RealStorage));
    let mut ed = editor(EditorSent::Applied, Ok(EditorPartOutcome::Undone));
    // The server "dies" between the editor's answer and the first file: simulate
    // with the intent left open (the apply hook panics past the editor part).
    let req = move_like(None);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        struct Dies;
        impl EditorHook for Dies {
            fn apply(&mut self) -> EditorSent {
                panic!("killed")
            }
            fn undo(&mut self) -> Result<EditorPartOutcome, String> {
                unreachable!()
            }
        }
        let _ = j.apply_change_with(req, None, Some((part(), &mut Dies)));
    }));
    assert!(outcome.is_err());
    drop(j);
    let mut j =
        Journal::open_with_storage(&dir.path().join("s"), &project, Arc::new(RealStorage)).unwrap();
    let report = j.reconcile().unwrap();
    assert_eq!(report.editor_waiting.len(), 1, "{report:?}");
    assert_eq!(report.compensated, 0);
    assert_eq!(j.gate(), &WriteGate::Open);
    let owed = j.owed_editor_parts().unwrap();
    assert_eq!(owed.len(), 1);
    assert_eq!(status_of(&j).0, TxnStatus::Open);
    let status = j.settle_owed_editor(owed[0].0, ed.undo()).unwrap();
    assert_eq!(status, TxnStatus::Compensated);
    assert_eq!(status_of(&j).0, TxnStatus::Compensated);
    assert!(j.owed_editor_parts().unwrap().is_empty());
}

/// Guards against (issue 41, item 2): reconciliation recording a change
/// `committed` before its last unlink is durable. A 5-file move dies right after
/// its last delete (before that folder's fsync); the next start finds every file
/// at its post-state and records `committed`; then the power fails. What the
/// disk keeps must be what the row says: the deleted `.uid` stays deleted.
#[cfg(feature = "failpoints")]
#[test]
fn a_change_reconciled_committed_is_durable_before_its_row() {
    use crate::storage::{Injected, PowerLossSim, StorageOp};
    use std::sync::atomic::AtomicBool;

    /// Dies (panics) at the fsync after the last delete, once armed.
    fn hook(unlinked: &AtomicBool, op: StorageOp<'_>) -> io::Result<()> {
        match op {
            StorageOp::RemoveFile(p) if p.ends_with("old.tscn.uid") => {
                unlinked.store(true, Ordering::SeqCst);
            }
            StorageOp::SyncDir(_) if unlinked.swap(false, Ordering::SeqCst) => {
                panic!("the server died after its last unlink")
            }
            _ => {}
        }
        Ok(())
    }
    let storage = Arc::new(Injected {
        state: AtomicBool::new(false),
        hook,
        inner: PowerLossSim::default(),
    });
    let (dir, project, mut j) = project(storage.clone());
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = j.apply_change(move_like(None));
    }));
    assert!(died.is_err());
    drop(j);
    assert!(!project.join("old.tscn.uid").exists());
    let mut j =
        Journal::open_with_storage(&dir.path().join("s"), &project, storage.clone()).unwrap();
    let report = j.reconcile().unwrap();
    assert_eq!(report.committed, 1, "{report:?}");
    drop(j);
    storage.inner.power_loss().unwrap();
    assert!(
        !project.join("old.tscn.uid").exists(),
        "recorded committed, but a power loss brought the deleted file back"
    );
    assert!(!project.join("old.tscn").exists());
    assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"new ref");
}

/// Guards against (issue 41, item 6): a put-back overwriting what someone saved
/// after the change proved the file at its post-state. A 5-file change fails at
/// its last file; as the first file is put back, the user saves one file the
/// change wrote (an overwritten one, then, in a second run, one it created). The
/// user's bytes stay, and the change is quarantined naming the file, never
/// recorded compensated.
#[test]
fn a_put_back_never_overwrites_a_file_saved_meanwhile() {
    use std::sync::Mutex;
    struct Saves {
        unlinks: AtomicUsize,
        /// Written by "the user" at the first put-back's temp, once.
        user: Mutex<Option<(PathBuf, &'static [u8])>>,
    }
    fn hook(s: &Saves, op: StorageOp<'_>) -> io::Result<()> {
        match op {
            StorageOp::RemoveFile(path)
                if !is_journal_temp(path) && s.unlinks.fetch_add(1, Ordering::SeqCst) + 1 == 2 =>
            {
                Err(io::Error::other("injected unlink failure"))
            }
            StorageOp::CreateTemp(path) if path.to_string_lossy().ends_with(".undo") => {
                if let Some((file, bytes)) = s.user.lock().unwrap().take() {
                    fs::write(file, bytes).unwrap();
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    for (file, bytes) in [
        ("main.tscn", &b"the user's ref"[..]),
        ("b/new.tscn", &b"the user's scene"[..]),
    ] {
        let storage = Arc::new(Injected {
            state: Saves {
                unlinks: AtomicUsize::new(0),
                user: Mutex::new(None),
            },
            hook,
            inner: RealStorage,
        });
        let (_dir, project, mut j) = project(storage.clone());
        *storage.state.user.lock().unwrap() = Some((project.join(file), bytes));
        let err = j.apply_change(move_like(None)).unwrap_err();
        assert!(storage.state.user.lock().unwrap().is_none(), "never saved");
        assert_eq!(fs::read(project.join(file)).unwrap(), bytes, "{err}");
        let (status, reason) = status_of(&j);
        assert_eq!(status, TxnStatus::Quarantined, "{err}");
        assert!(
            reason.unwrap().contains(&format!("{file} changed")),
            "{err}"
        );
    }
}

/// Guards against (issue 41, item 16): a change whose pre-images are unbounded in
/// sum. Past the bound (lowered here to 10 bytes; the move's overwritten and
/// deleted files hold 15) the change is refused before anything is recorded or
/// written, not even a folder; at the bound it runs.
#[test]
fn a_change_past_the_pre_image_bound_is_refused_before_anything_is_written() {
    let (_dir, project, mut j) = project(Arc::new(RealStorage));
    j.change_preimage_limit = 10;
    let err = j.apply_change(move_like(None)).unwrap_err();
    assert!(
        matches!(
            err,
            ChangeError::TooLarge {
                total: 15,
                limit: 10
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("nothing was written"));
    assert!(!project.join("b").exists(), "a folder was made");
    assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"old ref");
    assert!(
        j.list_transactions(&TxnFilter::default())
            .unwrap()
            .is_empty()
    );
    j.change_preimage_limit = 15;
    j.apply_change(move_like(None)).unwrap();
}

/// Guards against (issue 41, item 10): two names of one file in a change (case
/// variants on a case-insensitive file system) applied twice, then found at
/// neither state and quarantined, which closes the gate for every agent. Files
/// are told apart by identity (device and inode): the identity function matches
/// the second of two equal ids and never two absent files, and a change naming
/// two hard links of one file (the same identity on Linux) is refused before
/// anything is recorded or written.
#[test]
fn two_names_of_one_file_are_refused_by_identity_before_anything_is_written() {
    use godot_mcp_os::fs::FileId;
    let id = |ino| Some(FileId { dev: 1, ino });
    assert_eq!(same_file(&[id(1), id(2), None, id(1)]), Some((0, 3)));
    assert_eq!(same_file(&[None, None, id(2)]), None);
    assert_eq!(same_file(&[id(1), id(2)]), None);

    let (_dir, project, mut j) = project(Arc::new(RealStorage));
    fs::hard_link(project.join("main.tscn"), project.join("Main.tscn")).unwrap();
    let w = |p: &str, b: &[u8]| ChangeEffect {
        rel_path: p.into(),
        op: ChangeOp::Write(b.to_vec()),
        expected: Some(FileState::of(b"old ref")),
    };
    let err = j
        .apply_change(FileChange {
            effects: vec![w("main.tscn", b"one"), w("Main.tscn", b"two")],
            idempotency: None,
            tool_family: "files".into(),
            operation: "write".into(),
        })
        .unwrap_err();
    assert!(matches!(err, ChangeError::Invalid(_)), "{err:?}");
    assert!(err.to_string().contains("one file"), "{err}");
    assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"old ref");
    assert!(
        j.list_transactions(&TxnFilter::default())
            .unwrap()
            .is_empty()
    );
    assert_eq!(j.gate(), &WriteGate::Open);
}

/// Guards against (issue 41, item 1): an owed change reverting a later committed
/// write. T1 = {x.gd P→Q, y.gd absent→Y} with an editor part dies after the
/// editor's answer; the next start finds its files back (owed: open). With no
/// editor, a write of x.gd = Q (expected P) commits as T2. Another start, and the
/// editor's answer at last, must leave x.gd at Q: T1's files were proven back
/// once and are never re-derived or touched again.
#[test]
fn an_owed_change_never_reverts_a_later_committed_write() {
    let (dir, project, mut j) = project(Arc::new(RealStorage));
    fs::write(project.join("x.gd"), b"P").unwrap();
    let t1 = FileChange {
        effects: vec![
            ChangeEffect {
                rel_path: "x.gd".into(),
                op: ChangeOp::Write(b"Q".to_vec()),
                expected: Some(FileState::of(b"P")),
            },
            ChangeEffect {
                rel_path: "y.gd".into(),
                op: ChangeOp::Write(b"Y".to_vec()),
                expected: Some(FileState::Absent),
            },
        ],
        idempotency: None,
        tool_family: "files".into(),
        operation: "change".into(),
    };
    struct Dies;
    impl EditorHook for Dies {
        fn apply(&mut self) -> EditorSent {
            panic!("killed after the editor's answer")
        }
        fn undo(&mut self) -> Result<EditorPartOutcome, String> {
            unreachable!()
        }
    }
    let died = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = j.apply_change_with(t1, None, Some((part(), &mut Dies)));
    }));
    assert!(died.is_err());
    drop(j);
    let reopen = || {
        let mut j =
            Journal::open_with_storage(&dir.path().join("s"), &project, Arc::new(RealStorage))
                .unwrap();
        let report = j.reconcile().unwrap();
        (j, report)
    };
    let (mut j, report) = reopen();
    assert_eq!(report.editor_waiting.len(), 1, "{report:?}");
    let mut t2 = crate::journal::FileWrite::new("x.gd", b"Q", "files", "write");
    t2.expected = Some(FileState::of(b"P"));
    j.write_file(t2).unwrap();
    drop(j);
    let (mut j, report) = reopen();
    assert_eq!(report.editor_waiting.len(), 1, "{report:?}");
    assert_eq!(fs::read(project.join("x.gd")).unwrap(), b"Q", "T2 reverted");
    let owed = j.owed_editor_parts().unwrap();
    let status = j
        .settle_owed_editor(owed[0].0, Ok(EditorPartOutcome::Undone))
        .unwrap();
    assert_eq!(status, TxnStatus::Compensated);
    assert_eq!(fs::read(project.join("x.gd")).unwrap(), b"Q", "T2 reverted");
    assert!(!project.join("y.gd").exists());
    assert_eq!(j.gate(), &WriteGate::Open);
}

/// Guards against: a stale file caught before the intent recording
/// anything, and the happy path: all five files at their post-state, one
/// committed row naming them, no pre-image kept.
#[test]
fn a_change_commits_whole_and_a_stale_one_writes_nothing() {
    let (_dir, project, mut j) = project(Arc::new(RealStorage));
    let mut stale = move_like(None);
    stale.effects[2].expected = Some(FileState::of(b"something else"));
    assert!(matches!(
        j.apply_change(stale),
        Err(ChangeError::Stale { .. })
    ));
    assert!(
        j.list_transactions(&TxnFilter::default())
            .unwrap()
            .is_empty()
    );
    assert!(!project.join("b/new.tscn").exists());
    let done = j.apply_change(move_like(None)).unwrap();
    let ChangeOutcome::Committed { proof, .. } = done else {
        panic!("{done:?}")
    };
    assert_eq!(proof.files.len(), 5);
    assert_eq!(fs::read(project.join("b/new.tscn")).unwrap(), b"scene");
    assert_eq!(fs::read(project.join("main.tscn")).unwrap(), b"new ref");
    assert!(!project.join("old.tscn").exists());
    assert!(!project.join("old.tscn.uid").exists());
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TxnStatus::Committed);
    assert_eq!(j.retained_change_preimages().unwrap(), 0);
}
