use super::*;
use crate::TxnFilter;
use crate::proof::Proof;

fn journal() -> (tempfile::TempDir, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("project.godot"), "").unwrap();
    let mut j = Journal::open(&dir.path().join("state"), &project).unwrap();
    j.reconcile().unwrap();
    (dir, j)
}

/// A request id unique per row, as the bridge numbers them (a reused id
/// is refused).
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

fn intent(cmd: &str, may_save_file: bool) -> EditorIntent {
    EditorIntent {
        cmd: cmd.into(),
        request_id: next_id(),
        may_save_file,
        scene: Some("res://main.tscn".into()),
        params_sha256: "00".into(),
        pre_state: may_save_file.then(|| FileState::of(b"before")),
        files: Vec::new(),
    }
}

/// A `scene.save_all` intent naming `a.tscn` and `b.tscn`.
fn save_all() -> EditorIntent {
    EditorIntent {
        scene: Some("res://a.tscn".into()),
        pre_state: None,
        files: ["res://a.tscn", "res://b.tscn"]
            .map(|p| NamedFile {
                path: p.into(),
                pre_state: FileState::of(b"before"),
                pre_stamp: None,
            })
            .into(),
        ..intent("scene.save_all", true)
    }
}

/// `a.tscn` and `b.tscn` after the reply: written (`w`) or not, each expected.
fn after(a_written: bool, b_written: bool) -> Vec<SavedFile> {
    [("res://a.tscn", a_written), ("res://b.tscn", b_written)]
        .map(|(p, w)| SavedFile {
            path: p.into(),
            pre_state: FileState::of(b"before"),
            post_state: Some(FileState::of(if w { b"after" } else { b"before" })),
            written: w,
            expected: true,
        })
        .into()
}

/// Guards against (issue 26, item 6): an editor command that writes several files
/// committed on the editor's `ok`. Every file named in the intent is proven from
/// disk: an `ok` whose second file was not written is quarantined naming it; one that
/// wrote none is compensated; only all written is committed.
#[test]
fn an_ok_commits_only_when_every_named_file_was_written() {
    let (_d, mut j) = journal();
    let ok = |files| {
        EditorSettle::Applied(EditorProof {
            files,
            ..EditorProof::reply(1, "ok")
        })
    };
    let (t, s) = settled(&mut j, &save_all(), "scene.save_all", ok(after(true, true)));
    assert_eq!(s, TxnStatus::Committed);
    let proof = j.editor_record(t).unwrap().unwrap().proof.unwrap();
    assert_eq!(proof.files.len(), 2, "the proof covers both files");

    let (t, s) = settled(
        &mut j,
        &save_all(),
        "scene.save_all",
        ok(after(false, false)),
    );
    assert_eq!(s, TxnStatus::Compensated);
    let why = j.editor_record(t).unwrap().unwrap().reason.unwrap();
    assert!(
        why.contains("res://a.tscn, res://b.tscn not written"),
        "{why}"
    );

    let (t, s) = settled(
        &mut j,
        &save_all(),
        "scene.save_all",
        ok(after(true, false)),
    );
    assert_eq!(s, TxnStatus::Quarantined);
    let why = j.editor_record(t).unwrap().unwrap().reason.unwrap();
    assert!(
        why.contains("res://a.tscn written, res://b.tscn not written"),
        "{why}"
    );
    assert!(matches!(j.gate(), WriteGate::Closed { .. }));
}

/// A file the editor did not say it writes (a clean scene) may stay as it was; one
/// that cannot be read afterwards proves nothing.
#[test]
fn an_unexpected_file_may_stay_and_an_unreadable_one_quarantines() {
    let intent = save_all();
    let mut files = after(true, false);
    files[1].expected = false;
    let proof = EditorProof {
        files,
        ..EditorProof::reply(1, "ok")
    };
    assert_eq!(derive_files(&intent, &proof, None).0, TxnStatus::Committed);
    let mut files = after(true, true);
    files[1].post_state = None;
    let proof = EditorProof {
        files,
        ..EditorProof::reply(1, "ok")
    };
    let (s, why) = derive_files(&intent, &proof, None);
    assert_eq!(s, TxnStatus::Quarantined);
    assert!(why.unwrap().contains("res://b.tscn could not be read"));
    // An error reply that left the editor changed never compensates.
    let proof = EditorProof {
        files: after(false, false),
        ..EditorProof::reply(1, "failed")
    };
    assert_eq!(
        derive_files(&intent, &proof, Some(EditorLeft::Changed)).0,
        TxnStatus::Quarantined
    );
    assert_eq!(
        derive_files(&intent, &proof, Some(EditorLeft::Unchanged)).0,
        TxnStatus::Compensated
    );
}

/// Begins `intent` as `operation` and settles it: the row and its status.
fn settled(
    j: &mut Journal,
    intent: &EditorIntent,
    operation: &str,
    settle: EditorSettle,
) -> (TxnId, TxnStatus) {
    let intent = &EditorIntent {
        request_id: next_id(),
        ..intent.clone()
    };
    let t = j.begin_editor(intent, "editor", operation).unwrap();
    (t, j.settle_editor(t, intent, settle).unwrap())
}

fn refused(left: Option<EditorLeft>, post: Option<FileState>) -> EditorProof {
    EditorProof {
        editor_left: left,
        post_state: post,
        ..EditorProof::reply(1, "failed")
    }
}

/// Guards against (issue 26, item 1): a late reply settling the wrong row.
/// Server 1 sends request 5 and loses its answer (row A stays open); after a
/// restart, server 2's bridge numbers from 1 again and sends request 5 for
/// another command (row B). A late `ok` to 5 must never settle A with B's
/// reply: a request id recorded once is never recorded again, so the
/// journal refuses B's, and the id a new server starts from is above A's.
#[test]
fn a_request_id_is_never_recorded_twice_across_servers() {
    let (dir, mut j) = journal();
    let a = EditorIntent {
        request_id: 5,
        ..intent("node.set_property", false)
    };
    let row_a = j.begin_editor(&a, "editor", "set_node_property").unwrap();
    drop(j);
    let mut j = Journal::open(&dir.path().join("state"), &dir.path().join("p")).unwrap();
    j.reconcile().unwrap();
    let b = EditorIntent {
        cmd: "node.rename".into(),
        ..a.clone()
    };
    let second = j.begin_editor(&b, "editor", "rename_node");
    assert!(second.is_err(), "request id 5 recorded twice: {second:?}");
    assert_eq!(
        j.unresolved_editor_txn(5).unwrap().map(|r| r.0),
        Some(row_a)
    );
}

/// The rule, case by case: compensated only with the editor's report of its
/// pre-state AND (for a file writer) the file's hash equal to the recorded one.
#[test]
fn an_error_reply_is_compensated_only_when_the_pre_state_is_proven() {
    use EditorLeft::*;
    let save = intent("resource.set_property", true);
    let before = Some(FileState::of(b"before"));
    let after = Some(FileState::of(b"after"));
    let cases = [
        (Some(RolledBack), before, TxnStatus::Compensated),
        (Some(Unchanged), before, TxnStatus::Compensated),
        // The file changed although the editor rolled back.
        (Some(RolledBack), after, TxnStatus::Quarantined),
        // The file is unchanged but the editor is not proven back.
        (Some(Changed), before, TxnStatus::Quarantined),
        (None, before, TxnStatus::Quarantined),
        (Some(Unreported), before, TxnStatus::Quarantined),
        // The file could not be read after the reply.
        (Some(RolledBack), None, TxnStatus::Quarantined),
    ];
    for (left, post, want) in cases {
        let mut p = refused(left, post);
        p.pre_state = save.pre_state;
        let (got, why) = derive_refusal(&save, &p);
        assert_eq!(got, want, "{left:?} {post:?}: {why}");
        if want == TxnStatus::Quarantined {
            assert!(why.contains("not proven"), "{why}");
            assert!(why.contains("transaction repair"), "{why}");
        } else {
            assert!(why.contains("unchanged (sha256:"), "{why}");
        }
    }
    // No pre-state recorded: nothing can prove it.
    let mut blind = save.clone();
    blind.pre_state = None;
    let (got, why) = derive_refusal(&blind, &refused(Some(Unchanged), before));
    assert_eq!(got, TxnStatus::Quarantined, "{why}");
    assert!(why.contains("no pre-state"), "{why}");
    // A command that writes no file: the editor's report decides; without one the
    // row stays unresolved (never "nothing was changed").
    let set = intent("node.set_property", false);
    assert_eq!(
        derive_refusal(&set, &refused(Some(Unchanged), None)).0,
        TxnStatus::Compensated
    );
    for left in [None, Some(Changed)] {
        assert_eq!(
            derive_refusal(&set, &refused(left, None)).0,
            TxnStatus::Open
        );
    }
    // Repair's proof: the observed file equals the recorded pre-state, and the
    // editor reported its own pre-state.
    let pre = FileState::of(b"before");
    assert!(pre_state_proven(&save, Some(RolledBack), &pre));
    assert!(!pre_state_proven(&save, Some(Changed), &pre));
    assert!(!pre_state_proven(&save, None, &pre));
    assert!(!pre_state_proven(
        &save,
        Some(RolledBack),
        &FileState::of(b"after")
    ));
    assert!(!pre_state_proven(&blind, Some(RolledBack), &pre));
}

#[test]
fn settled_refusals_record_the_states_and_close_the_gate_when_unproven() {
    let (_d, mut j) = journal();
    let save = intent("resource.set_property", true);
    let rolled_back = refused(Some(EditorLeft::RolledBack), Some(FileState::of(b"before")));
    let (t, s) = settled(&mut j, &save, "set", EditorSettle::Refused(rolled_back));
    assert_eq!(s, TxnStatus::Compensated);
    assert_eq!(j.gate(), &WriteGate::Open);
    let rec = j.editor_record(t).unwrap().unwrap();
    assert_eq!(rec.status, TxnStatus::Compensated);
    let p = rec.proof.unwrap();
    assert_eq!(p.pre_state, Some(FileState::of(b"before")), "recorded");
    assert_eq!(p.post_state, Some(FileState::of(b"before")));
    assert_eq!(p.editor_left, Some(EditorLeft::RolledBack));

    let unreported = refused(None, Some(FileState::of(b"before")));
    let (_, s) = settled(&mut j, &save, "set", EditorSettle::Refused(unreported));
    assert_eq!(s, TxnStatus::Quarantined);
    assert!(matches!(j.gate(), WriteGate::Closed { .. }));
}

#[test]
fn replies_settle_and_lost_answers_follow_the_file_rule() {
    let (_d, mut j) = journal();
    let ok = intent("node.set_property", false);
    let before = j.change_stamp();
    let t = j.begin_editor(&ok, "editor", "set").unwrap();
    let begun = j.change_stamp();
    assert!(begun > before, "the intent is a journal change");
    let proof = EditorProof {
        undoable: Some(true),
        ..EditorProof::reply(1, "ok")
    };
    assert_eq!(
        j.settle_editor(t, &ok, EditorSettle::Applied(proof))
            .unwrap(),
        TxnStatus::Committed
    );
    assert!(j.change_stamp() > begun, "settling is a journal change");
    // The listing carries the reply's undoable flag, typed, for the dock.
    let listed = j.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(
        (listed[0].transaction_id, listed[0].undoable),
        (t, Some(true))
    );

    let lost = intent("node.set_property", false);
    let timeout = EditorSettle::Lost {
        reason: "timeout".into(),
    };
    let (_, s) = settled(&mut j, &lost, "set", timeout);
    assert_eq!(s, TxnStatus::Open);
    assert_eq!(
        j.gate(),
        &WriteGate::Open,
        "an unresolved in-memory edit blocks nothing"
    );
    // Reconciliation leaves it unresolved, still not blocking.
    j.reconcile().unwrap();
    assert_eq!(j.gate(), &WriteGate::Open);
    let open = j
        .list_transactions(&TxnFilter {
            status: Some(TxnStatus::Open),
            limit: 0,
        })
        .unwrap();
    assert_eq!(open.len(), 1);
    assert!(open[0].reason.as_deref().unwrap().contains("never resent"));

    let save = intent("scene.save", true);
    let connection_lost = EditorSettle::Lost {
        reason: "connection lost".into(),
    };
    let (_, s) = settled(&mut j, &save, "save", connection_lost);
    assert_eq!(s, TxnStatus::Quarantined);
    assert!(matches!(j.gate(), WriteGate::Closed { .. }));
    assert!(matches!(
        j.begin_editor(&ok, "editor", "set"),
        Err(EditorTxnError::GateClosed { .. })
    ));
}

/// Repair turns an editor row's acknowledgment into a proof: a refused save that
/// was quarantined because its file changed, with the editor's rollback on record, is
/// `compensated` (basis pre-state) once the file is back at its recorded pre-state;
/// without the editor's report, compensate is refused and acknowledging commits.
#[test]
fn repair_compensates_an_editor_row_whose_pre_state_is_proven_again() {
    use crate::proof::ProofBasis;
    use crate::repair::{
        FileClaim, PROOF_SCHEMA, RepairOperation, RepairProof, RepairRequest, run,
    };
    for (left, op, want) in [
        (
            Some(EditorLeft::RolledBack),
            RepairOperation::Compensate,
            Some(TxnStatus::Compensated),
        ),
        (
            Some(EditorLeft::RolledBack),
            RepairOperation::AcknowledgeSafeState,
            Some(TxnStatus::Compensated),
        ),
        // Without the editor's report the restored file still proves the
        // pre-state on disk; nothing ever proves a post-state (issue 26,
        // item 7).
        (
            None,
            RepairOperation::Compensate,
            Some(TxnStatus::Compensated),
        ),
        (
            None,
            RepairOperation::AcknowledgeSafeState,
            Some(TxnStatus::Compensated),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (state, project) = (dir.path().join("state"), dir.path().join("p"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("project.godot"), "").unwrap();
        std::fs::write(project.join("main.tscn"), b"before").unwrap();
        let mut j = Journal::open(&state, &project).unwrap();
        j.reconcile().unwrap();
        let save = intent("scene.save", true);
        // The save failed half-way: the file changed.
        let partial = refused(left, Some(FileState::of(b"partial")));
        let (t, s) = settled(&mut j, &save, "save", EditorSettle::Refused(partial));
        assert_eq!(s, TxnStatus::Quarantined);
        let identity = j.identity().clone();
        drop(j);
        // The operator restores the file.
        std::fs::write(project.join("main.tscn"), b"before").unwrap();
        let proof = RepairProof {
            schema: PROOF_SCHEMA.into(),
            transaction_id: t,
            project_object_id: identity.object_id.clone(),
            generation: identity.generation,
            operation: op,
            effect_kind: EffectKind::EditorRuntime,
            file: Some(FileClaim {
                path: "main.tscn".into(),
                observed: FileState::of(b"before"),
            }),
        };
        let file = dir.path().join("proof.json");
        std::fs::write(&file, serde_json::to_vec(&proof).unwrap()).unwrap();
        let got = run(
            &state,
            &RepairRequest {
                project: project.clone(),
                transaction_id: t,
                operation: op,
                proof_file: file,
                dry_run: false,
            },
        );
        match want {
            None => assert!(got.is_err(), "{left:?} {op:?}: {got:?}"),
            Some(to) => {
                let report = got.unwrap();
                assert_eq!(report.to, to, "{left:?} {op:?}");
                let Proof::File(fp) = report.proof else {
                    panic!()
                };
                let basis = if to == TxnStatus::Compensated {
                    ProofBasis::PreState
                } else {
                    ProofBasis::PostState
                };
                assert_eq!(fp.basis, basis);
                let j = Journal::open(&state, &project).unwrap();
                assert_eq!(j.editor_record(t).unwrap().unwrap().status, to);
            }
        }
    }
}

#[test]
fn an_open_saving_row_is_quarantined_at_reconcile() {
    let (_d, mut j) = journal();
    let save = intent("scene.save", true);
    j.begin_editor(&save, "editor", "save").unwrap();
    let report = j.reconcile().unwrap();
    assert_eq!(report.quarantined.len(), 1);
    assert!(matches!(j.gate(), WriteGate::Closed { .. }));
}
