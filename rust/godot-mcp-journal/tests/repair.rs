//! `transaction repair`: one proof-backed transition, or a refusal with a
//! non-zero exit code and the row exactly as it was.

use std::fs;
use std::path::PathBuf;

use godot_mcp_journal::journal::JOURNAL_FILE;
use godot_mcp_journal::repair::{
    self, FileClaim, RepairOperation, RepairProof, RepairRefusal, RepairRequest,
};
use godot_mcp_journal::{
    EffectKind, FileState, Journal, ProjectIdentity, TxnId, TxnStatus, WriteGate,
};

mod support;

struct Fixture {
    _dir: tempfile::TempDir,
    state: PathBuf,
    project: PathBuf,
    state_dir: PathBuf,
    identity: ProjectIdentity,
    txn: TxnId,
}

const PRE: &[u8] = b"pre";
const POST: &[u8] = b"post";

/// A temp dir holding an empty `project` and the journal's `state` root.
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let project = dir.path().join("project");
    fs::create_dir_all(&project).unwrap();
    (dir, state, project)
}

/// A project whose `a.txt` transaction is quarantined (the file holds bytes
/// that are neither its pre- nor its post-state). `pre = None` models a create.
fn quarantined(pre: Option<&[u8]>) -> Fixture {
    let (dir, state, project) = dirs();
    let (identity, state_dir) = support::identity_and_state_dir(&state, &project);
    let pre_state = pre.map_or(FileState::Absent, FileState::of);
    let txn = support::insert_open_intents(
        &state_dir,
        &identity,
        &[("a.txt", pre_state, FileState::of(POST))],
    )[0];
    fs::write(project.join("a.txt"), b"unexpected").unwrap();
    let mut j = Journal::open(&state, &project).unwrap();
    let report = j.reconcile().unwrap();
    assert_eq!(report.quarantined.len(), 1);
    quarantined_row(dir, state, project, j, txn)
}

/// [`quarantined`], then `a.txt` holds `now`.
fn quarantined_holding(pre: Option<&[u8]>, now: &[u8]) -> Fixture {
    let f = quarantined(pre);
    fs::write(f.project.join("a.txt"), now).unwrap();
    f
}

/// The fixture for `txn`, quarantined by the reconciliation of `j` (closed here).
fn quarantined_row(
    dir: tempfile::TempDir,
    state: PathBuf,
    project: PathBuf,
    j: Journal,
    txn: TxnId,
) -> Fixture {
    let identity = j.identity().clone();
    let state_dir = j.state_dir().to_path_buf();
    drop(j);
    Fixture {
        _dir: dir,
        state,
        project,
        state_dir,
        identity,
        txn,
    }
}

impl Fixture {
    fn proof(&self, op: RepairOperation, observed: FileState) -> RepairProof {
        file_proof(
            &self.identity,
            self.txn,
            op,
            EffectKind::File,
            "a.txt",
            observed,
        )
    }

    /// Runs `op` with a proof that claims the file is `observed`.
    fn claim(
        &self,
        op: RepairOperation,
        observed: FileState,
        dry_run: bool,
    ) -> Result<repair::RepairReport, RepairRefusal> {
        self.run_with(op, Some(&self.proof(op, observed)), dry_run)
    }

    fn run_with(
        &self,
        op: RepairOperation,
        proof: Option<&RepairProof>,
        dry_run: bool,
    ) -> Result<repair::RepairReport, RepairRefusal> {
        let proof_file = self.state.join("proof.json");
        let _ = fs::remove_file(&proof_file);
        if let Some(p) = proof {
            fs::write(&proof_file, serde_json::to_vec_pretty(p).unwrap()).unwrap();
        }
        repair::run(
            &self.state,
            &RepairRequest {
                project: self.project.clone(),
                transaction_id: self.txn,
                operation: op,
                proof_file,
                dry_run,
            },
        )
    }

    /// The row and the repair log, to prove a refusal changed nothing.
    fn snapshot(&self) -> (String, Option<String>, Option<String>, Option<i64>, i64) {
        let conn = rusqlite::Connection::open(self.state_dir.join(JOURNAL_FILE)).unwrap();
        let row = conn
            .query_row(
                "SELECT state, proof_json, reason, terminal_at_ms FROM transactions WHERE id = ?1",
                [self.txn.to_string()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        let repairs: i64 = conn
            .query_row("SELECT count(*) FROM repairs", [], |r| r.get(0))
            .unwrap();
        (row.0, row.1, row.2, row.3, repairs)
    }

    fn status(&self) -> String {
        self.snapshot().0
    }

    /// Every file of the project and its bytes, to prove a refusal touched nothing.
    fn disk(&self) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<_> = fs::read_dir(&self.project)
            .unwrap()
            .flatten()
            .map(|e| {
                let bytes = fs::read(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), bytes)
            })
            .collect();
        files.sort();
        files
    }
}

/// Guards against: an acknowledged post-state not reopening the gate, or a
/// repair journaling more (or less) than one transition.
#[test]
fn acknowledge_safe_state_records_committed_and_reopens_the_gate() {
    let _one = support::one_at_a_time();
    let f = quarantined_holding(Some(PRE), POST);
    let op = RepairOperation::AcknowledgeSafeState;
    let report = f.claim(op, FileState::of(POST), false).unwrap();
    assert!(report.recorded);
    assert_eq!(
        (report.from, report.to),
        (TxnStatus::Quarantined, TxnStatus::Committed)
    );
    let (state, proof, _, _, repairs) = f.snapshot();
    assert_eq!(state, "committed");
    assert!(proof.unwrap().contains(r#""derived_by":"repair""#));
    assert_eq!(repairs, 1);
    let mut j = Journal::open(&f.state, &f.project).unwrap();
    assert_eq!(j.reconcile().unwrap().gate, WriteGate::Open);
}

/// Guards against: compensate claiming a pre-state that is not on disk.
#[test]
fn compensate_records_a_restored_pre_state() {
    let _one = support::one_at_a_time();
    let f = quarantined_holding(Some(PRE), PRE);
    let op = RepairOperation::Compensate;
    let report = f.claim(op, FileState::of(PRE), false).unwrap();
    assert_eq!(report.to, TxnStatus::Compensated);
    assert_eq!(f.status(), "compensated");
    assert_eq!(fs::read(f.project.join("a.txt")).unwrap(), PRE);
}

/// Guards against: compensating a create by recording it without removing
/// the created file.
#[test]
fn compensate_of_a_create_removes_the_created_file() {
    let _one = support::one_at_a_time();
    let f = quarantined_holding(None, POST);
    let op = RepairOperation::Compensate;
    f.claim(op, FileState::of(POST), false).unwrap();
    assert!(!f.project.join("a.txt").exists());
    assert_eq!(f.status(), "compensated");
}

/// Guards against: `reconcile` or `--dry-run` recording anything.
#[test]
fn reconcile_and_dry_run_record_nothing() {
    let _one = support::one_at_a_time();
    let f = quarantined_holding(Some(PRE), POST);
    let before = f.snapshot();
    let op = RepairOperation::Reconcile;
    let r = f.claim(op, FileState::of(POST), false).unwrap();
    assert_eq!((r.to, r.recorded), (TxnStatus::Committed, false));
    let op = RepairOperation::AcknowledgeSafeState;
    let r = f.claim(op, FileState::of(POST), true).unwrap();
    assert!(!r.recorded);
    assert_eq!(f.snapshot(), before);
}

/// Guards against: any refusal path that still touches the row or exits 0 —
/// no proof, invalid proof, wrong proof, wrong project, wrong generation, a
/// transaction of another generation, not quarantined, an unproven state, an
/// inapplicable operation, an I/O error while re-deriving, a held lease.
#[test]
fn every_refusal_exits_non_zero_and_leaves_the_row_unchanged() {
    let _one = support::one_at_a_time();
    type Case = (
        &'static str,
        &'static str,
        Box<dyn Fn(&Fixture) -> Result<repair::RepairReport, RepairRefusal>>,
    );
    let ack = RepairOperation::AcknowledgeSafeState;
    let cases: Vec<Case> = vec![
        (
            "no proof",
            "no proof:",
            Box::new(move |f| f.run_with(ack, None, false)),
        ),
        (
            "invalid proof",
            "is not a valid",
            Box::new(move |f| {
                let mut p = f.proof(ack, FileState::of(POST));
                p.schema = "something/else".into();
                f.run_with(ack, Some(&p), false)
            }),
        ),
        (
            "wrong proof (observed)",
            "wrong proof: file.observed",
            Box::new(move |f| f.claim(ack, FileState::of(b"nope"), false)),
        ),
        (
            "wrong proof (operation)",
            "wrong proof: operation",
            Box::new(move |f| {
                f.run_with(
                    ack,
                    Some(&f.proof(RepairOperation::Compensate, FileState::of(POST))),
                    false,
                )
            }),
        ),
        (
            "wrong project",
            "wrong project: proof",
            Box::new(move |f| {
                let mut p = f.proof(ack, FileState::of(POST));
                p.project_object_id = "0".repeat(32);
                f.run_with(ack, Some(&p), false)
            }),
        ),
        (
            "wrong generation",
            "wrong project: proof",
            Box::new(move |f| {
                let mut p = f.proof(ack, FileState::of(POST));
                p.generation += 1;
                f.run_with(ack, Some(&p), false)
            }),
        ),
        (
            "unproven (target not in post-state)",
            "unproven:",
            Box::new(move |f| {
                fs::write(f.project.join("a.txt"), PRE).unwrap();
                f.claim(ack, FileState::of(PRE), false)
            }),
        ),
        (
            "terminate on a file transaction",
            "does not apply",
            Box::new(|f| {
                let op = RepairOperation::Terminate;
                f.claim(op, FileState::of(POST), false)
            }),
        ),
        (
            "I/O error while re-deriving",
            "I/O error while re-deriving",
            Box::new(move |f| {
                fs::remove_file(f.project.join("a.txt")).unwrap();
                fs::create_dir(f.project.join("a.txt")).unwrap();
                f.claim(ack, FileState::of(POST), false)
            }),
        ),
        (
            "lease held by a running server",
            "holds the project lease",
            Box::new(move |f| {
                let _server = Journal::open(&f.state, &f.project).unwrap();
                f.claim(ack, FileState::of(POST), false)
            }),
        ),
    ];
    for (name, expect, case) in cases {
        let f = quarantined_holding(Some(PRE), POST);
        let before = f.snapshot();
        let err = match case(&f) {
            Ok(r) => panic!("{name}: expected a refusal, got {r:?}"),
            Err(e) => e,
        };
        assert_ne!(err.exit_code(), 0, "{name}");
        assert!(err.to_string().contains(expect), "{name}: {err}");
        assert_eq!(f.snapshot(), before, "{name}: {err}");
    }
}

/// Guards against: repairing a row that is not quarantined (a committed row
/// re-recorded, or an open one resolved behind reconciliation's back).
#[test]
fn a_transaction_that_is_not_quarantined_is_refused() {
    let _one = support::one_at_a_time();
    let f = quarantined_holding(Some(PRE), POST);
    let op = RepairOperation::AcknowledgeSafeState;
    f.claim(op, FileState::of(POST), false).unwrap();
    let before = f.snapshot();
    let err = f.claim(op, FileState::of(POST), false).unwrap_err();
    assert!(matches!(err, RepairRefusal::NotQuarantined { .. }), "{err}");
    assert_eq!(err.exit_code(), 1);
    assert_eq!(f.snapshot(), before);
}

/// Guards against: a row recorded for an older generation of the project
/// being applied to the current one — its retained pre-image written over a
/// file of this incarnation. (Before issue 26 item 9 this refused every proof
/// naming the current project; now the proof names the current project, and
/// what the row would do to the disk is refused.)
#[test]
fn a_transaction_of_another_generation_is_never_applied_here() {
    let _one = support::one_at_a_time();
    let f = quarantined(Some(PRE));
    let conn = rusqlite::Connection::open(f.state_dir.join(JOURNAL_FILE)).unwrap();
    conn.execute(
        "UPDATE transactions SET generation = generation + 7 WHERE id = ?1",
        [f.txn.to_string()],
    )
    .unwrap();
    drop(conn);
    fs::write(f.project.join("a.txt"), POST).unwrap();
    let before = (f.snapshot(), f.disk());
    let op = RepairOperation::Compensate;
    let err = f.claim(op, FileState::of(POST), false).unwrap_err();
    assert!(
        err.to_string().contains("write its pre-image back")
            && err.to_string().contains("another incarnation"),
        "{err}"
    );
    assert_eq!((f.snapshot(), f.disk()), before);
}

/// An editor save whose answer was lost: quarantined (it may have written the scene).
/// A lost `scene.save` of `scenes/a.tscn` (recorded pre-state: its bytes now),
/// quarantined.
fn quarantined_editor_save() -> Fixture {
    let (dir, state, project) = dirs();
    fs::create_dir_all(project.join("scenes")).unwrap();
    fs::write(project.join("scenes/a.tscn"), b"[gd_scene format=3]\n").unwrap();
    let mut j = Journal::open(&state, &project).unwrap();
    j.reconcile().unwrap();
    let intent = godot_mcp_journal::EditorIntent {
        cmd: "scene.save".into(),
        request_id: 7,
        may_save_file: true,
        scene: Some("res://scenes/a.tscn".into()),
        params_sha256: "0".repeat(64),
        pre_state: Some(FileState::of(b"[gd_scene format=3]\n")),
        files: Vec::new(),
    };
    let txn = j.begin_editor(&intent, "editor", "scene.save").unwrap();
    let st = j
        .settle_editor(
            txn,
            &intent,
            godot_mcp_journal::EditorSettle::Lost {
                reason: "connection lost".into(),
            },
        )
        .unwrap();
    assert_eq!(st, TxnStatus::Quarantined);
    quarantined_row(dir, state, project, j, txn)
}

impl Fixture {
    /// Runs `op` on the editor row with a proof that claims the scene file is
    /// `observed`.
    fn editor_claim(
        &self,
        op: RepairOperation,
        observed: FileState,
    ) -> Result<repair::RepairReport, RepairRefusal> {
        let mut proof = self.proof(op, observed);
        proof.effect_kind = EffectKind::EditorRuntime;
        proof.file.as_mut().unwrap().path = "scenes/a.tscn".into();
        self.run_with(op, Some(&proof), false)
    }
}

/// Guards against a lost editor save closing the gate for good: the operator can
/// acknowledge the scene file's re-derived state; a wrong claim, a compensate (no
/// pre-state was recorded) or a terminate are refused and change nothing.
#[test]
fn a_lost_editor_save_is_repaired_by_acknowledging_the_scene_file() {
    let _one = support::one_at_a_time();
    let f = quarantined_editor_save();
    let on_disk = FileState::of(b"[gd_scene format=3]\n");
    // A claim that does not match the disk.
    let ack = RepairOperation::AcknowledgeSafeState;
    let e = f.editor_claim(ack, FileState::of(b"other")).unwrap_err();
    assert_ne!(e.exit_code(), 0);
    assert_eq!(f.status(), "quarantined");
    // Terminate is not available for an editor effect.
    assert!(matches!(
        f.editor_claim(RepairOperation::Terminate, on_disk),
        Err(RepairRefusal::NotApplicable { .. })
    ));
    assert_eq!(f.status(), "quarantined");
    // Reconcile reports, records nothing.
    let r = f.editor_claim(RepairOperation::Reconcile, on_disk).unwrap();
    assert!(!r.recorded);
    assert_eq!(f.status(), "quarantined");
    // The right claim: the file is at its recorded pre-state, which is what
    // is recorded (never `committed`: nothing proves a post-state), and the
    // gate opens.
    let r = f.editor_claim(ack, on_disk).unwrap();
    assert!(r.recorded);
    assert_eq!(r.to, TxnStatus::Compensated);
    let mut j = Journal::open(&f.state, &f.project).unwrap();
    j.reconcile().unwrap();
    assert_eq!(*j.gate(), WriteGate::Open);
}

/// Guards against (issue 26, item 7): acknowledge-safe-state recording an
/// editor row `committed` when nothing proves a post-state — an editor command
/// records no post-state, so the file the editor may have saved proves
/// nothing. Refused, the row as it was; once the disk shows the recorded
/// pre-state, that is what is recorded (`compensated`, basis `pre_state`).
#[test]
fn acknowledging_an_editor_row_records_only_what_the_disk_proves() {
    let _one = support::one_at_a_time();
    let f = quarantined_editor_save();
    let before = b"[gd_scene format=3]\n";
    let scene = f.project.join("scenes/a.tscn");
    // The editor may have saved: the file is no longer its pre-state.
    fs::write(&scene, b"[gd_scene format=3]\n[node name=\"Saved\"]\n").unwrap();
    let ack = RepairOperation::AcknowledgeSafeState;
    let saved = FileState::of(&fs::read(&scene).unwrap());
    let refused = f.editor_claim(ack, saved);
    assert!(
        refused.is_err(),
        "committed without a proven post-state: {refused:?}"
    );
    assert_eq!(f.status(), "quarantined");
    // The operator restores the file: the disk proves the pre-state.
    fs::write(&scene, before).unwrap();
    let r = f.editor_claim(ack, FileState::of(before)).unwrap();
    assert_eq!((r.recorded, r.to), (true, TxnStatus::Compensated));
    assert_eq!(f.status(), "compensated");
}

fn preimages(state_dir: &std::path::Path) -> (usize, u64) {
    let conn = rusqlite::Connection::open(state_dir.join(JOURNAL_FILE)).unwrap();
    godot_mcp_journal::preimage::retained_count(&conn).unwrap()
}

/// A project whose `a.txt` (`PRE`) was overwritten with `POST` through the
/// journal, and the committed transaction.
fn overwritten() -> (tempfile::TempDir, PathBuf, PathBuf, Journal, TxnId) {
    let (dir, state, project) = dirs();
    fs::write(project.join("a.txt"), PRE).unwrap();
    let mut j = Journal::open(&state, &project).unwrap();
    j.reconcile().unwrap();
    let txn = j
        .write_file(godot_mcp_journal::FileWrite::new(
            "a.txt", POST, "t", "write",
        ))
        .unwrap()
        .transaction_id();
    (dir, state, project, j, txn)
}

/// Item 6: a committed overwrite releases its pre-image when it records the row
/// (nothing is retained for proven rows).
#[test]
fn a_committed_overwrite_releases_its_pre_image() {
    let _one = support::one_at_a_time();
    let (_dir, _, _, j, _) = overwritten();
    assert_eq!(j.retained_preimages().unwrap(), (0, 0));
}

/// The terminal row and the release are two statements: a crash between them leaves
/// the pre-image of a committed row behind. The next open drops it.
#[test]
fn a_proven_row_s_left_over_pre_image_is_dropped_at_open() {
    let _one = support::one_at_a_time();
    let (_dir, state, project, j, txn) = overwritten();
    let state_dir = j.state_dir().to_path_buf();
    drop(j);
    // As a crash between the terminal UPDATE and the release would leave it.
    let conn = rusqlite::Connection::open(state_dir.join(JOURNAL_FILE)).unwrap();
    conn.execute(
        "INSERT INTO preimages (txn_id, size, mode, sha256, bytes) VALUES (?1, 3, 420, 'x', x'414243')",
        [txn.to_string()],
    )
    .unwrap();
    drop(conn);
    assert_eq!(preimages(&state_dir), (1, 3));
    let j = Journal::open(&state, &project).unwrap();
    assert_eq!(j.retained_preimages().unwrap(), (0, 0));
}

/// Item 6: compensate restores a quarantined overwrite or delete byte-exact
/// from the pre-image the journal retained (a real child process dies right
/// after its effect is durable; a third party then changes the file, so
/// reconciliation quarantines it). A pre-image over the bound is refused.
#[cfg(feature = "failpoints")]
mod pre_image_restore {
    use super::*;
    use std::process::Command;

    const CHILD: &str = env!("CARGO_BIN_EXE_journal-test-child");

    /// Crashes `args` right after its effect is durable, changes the target
    /// so neither state holds, reconciles: one quarantined row, as a fixture.
    fn crashed_then_changed(pre: &[u8], args: &[&str]) -> Fixture {
        let (dir, state, project) = dirs();
        fs::write(project.join("a.txt"), pre).unwrap();
        godot_mcp_os::fs::set_mode(&project.join("a.txt"), 0o640).unwrap();
        let out = Command::new(CHILD)
            .arg(&state)
            .arg(&project)
            .args(args)
            .env(
                "JOURNAL_CRASH_AT",
                godot_mcp_journal::failpoints::AFTER_DIR_FSYNC,
            )
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(77), "{out:?}");
        fs::write(project.join("a.txt"), b"a third party wrote this").unwrap();
        let mut j = Journal::open(&state, &project).unwrap();
        let report = j.reconcile().unwrap();
        assert_eq!(report.quarantined.len(), 1, "{report:?}");
        let txn = report.quarantined[0].transaction_id;
        quarantined_row(dir, state, project, j, txn)
    }

    #[test]
    fn compensate_restores_a_quarantined_overwrite_byte_exact() {
        let _one = support::one_at_a_time();
        let pre: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        let f = crashed_then_changed(&pre, &["write", "a.txt", "post"]);
        assert_eq!(preimages(&f.state_dir), (1, pre.len() as u64));
        // The target back in its post-state (e.g. the third party undid its change).
        fs::write(f.project.join("a.txt"), b"post").unwrap();
        let op = RepairOperation::Compensate;
        let report = f.claim(op, FileState::of(b"post"), false).unwrap();
        assert_eq!(report.to, TxnStatus::Compensated);
        assert_eq!(fs::read(f.project.join("a.txt")).unwrap(), pre);
        let mode = godot_mcp_os::fs::mode(&fs::metadata(f.project.join("a.txt")).unwrap());
        assert_eq!(mode & 0o7777, 0o640);
        assert_eq!(f.status(), "compensated");
        assert_eq!(preimages(&f.state_dir), (0, 0), "released once proven");
    }

    #[test]
    fn compensate_restores_a_quarantined_delete_byte_exact() {
        let _one = support::one_at_a_time();
        let pre = b"[gd_scene format=3]\n\0\xff binary tail".to_vec();
        let f = crashed_then_changed(&pre, &["delete", "a.txt"]);
        fs::remove_file(f.project.join("a.txt")).unwrap();
        let op = RepairOperation::Compensate;
        let report = f.claim(op, FileState::Absent, false).unwrap();
        assert_eq!(report.to, TxnStatus::Compensated);
        assert_eq!(fs::read(f.project.join("a.txt")).unwrap(), pre);
        assert_eq!(f.status(), "compensated");
    }

    #[test]
    fn a_pre_image_over_the_bound_is_refused_with_its_reason() {
        let _one = support::one_at_a_time();
        let bound = godot_mcp_journal::preimage::MAX_PREIMAGE_BYTES as usize;
        let pre = vec![b'x'; bound + 1];
        let f = crashed_then_changed(&pre, &["write", "a.txt", "post"]);
        assert_eq!(preimages(&f.state_dir), (1, 0), "size only, no bytes");
        fs::write(f.project.join("a.txt"), b"post").unwrap();
        let before = f.snapshot();
        let op = RepairOperation::Compensate;
        let err = f.claim(op, FileState::of(b"post"), false).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("larger than the {bound} byte bound")),
            "{err}"
        );
        assert_eq!(f.snapshot(), before);
        assert_eq!(fs::read(f.project.join("a.txt")).unwrap(), b"post");
    }
}

/// A row recorded for another project object or generation closes the gate
/// (it was never proven harmless here), and repair resolves it against the
/// project as it is now. Guards against (issue 26, item 9, which replaces the
/// older rule of issue 10 item 7): repair accepted a foreign row with a proof
/// naming the row's old identity. A proof names the current object and
/// generation; one naming the row's is refused, leaving disk and journal as
/// they were.
#[test]
fn a_row_of_another_incarnation_is_repaired_against_the_current_project() {
    let _one = support::one_at_a_time();
    for (what, change) in [("generation", (false, 7u64)), ("object", (true, 0u64))] {
        let (dir, state, project) = dirs();
        let (identity, state_dir) = support::identity_and_state_dir(&state, &project);
        let mut foreign = identity.clone();
        if change.0 {
            foreign.object_id = "f".repeat(32);
        }
        foreign.generation += change.1;
        let txn = support::insert_open_intents(
            &state_dir,
            &foreign,
            &[("a.txt", FileState::Absent, FileState::of(POST))],
        )[0];
        fs::write(project.join("a.txt"), POST).unwrap();
        let mut j = Journal::open(&state, &project).unwrap();
        let report = j.reconcile().unwrap();
        assert_eq!(
            report.committed, 0,
            "{what}: never proven against this project"
        );
        match j.gate() {
            WriteGate::Closed { quarantined } => {
                assert_eq!(quarantined.len(), 1, "{what}");
                assert_eq!(quarantined[0].transaction_id, txn, "{what}");
            }
            other => panic!("{what}: a foreign row must close the gate: {other:?}"),
        }
        let f = quarantined_row(dir, state, project, j, txn);
        // A compensate would remove the created file: refused, nothing touched.
        let op = RepairOperation::Compensate;
        let before = (f.snapshot(), f.disk());
        let mut proof = f.proof(op, FileState::of(POST));
        proof.project_object_id = foreign.object_id.clone();
        proof.generation = foreign.generation;
        let err = f.run_with(op, Some(&proof), false).unwrap_err();
        assert!(err.to_string().contains("wrong project: proof"), "{err}");
        assert_eq!((f.snapshot(), f.disk()), before, "{what}");
        // Named as it is now, but the file it would remove is this
        // incarnation's: never applied here.
        let err = f.claim(op, FileState::of(POST), false).unwrap_err();
        assert!(
            err.to_string().contains("nothing of it is applied"),
            "{err}"
        );
        assert_eq!((f.snapshot(), f.disk()), before, "{what}");
        // Named as it is now: re-derived against the directory at the path.
        let op = RepairOperation::AcknowledgeSafeState;
        let report = f.claim(op, FileState::of(POST), false).unwrap();
        assert_eq!(report.to, TxnStatus::Committed, "{what}");
        let (_, _, reason, _, _) = f.snapshot();
        assert!(
            reason.unwrap().contains(&format!(
                "recorded for project object {} generation {}",
                foreign.object_id, foreign.generation
            )),
            "{what}"
        );
        let mut j = Journal::open(&f.state, &f.project).unwrap();
        assert_eq!(j.reconcile().unwrap().gate, WriteGate::Open, "{what}");
    }
}

/// Item 7: a row whose id this build cannot parse can be neither reconciled nor
/// repaired by id; it closes the gate (listed under the nil id, its raw id in
/// the reason) until the documented operator step (docs/recovery.md) moves the
/// journal aside as evidence.
#[test]
fn a_row_with_an_unparsable_id_closes_the_gate_until_the_operator_step() {
    let _one = support::one_at_a_time();
    let (dir, state, project) = dirs();
    let (identity, state_dir) = support::identity_and_state_dir(&state, &project);
    rusqlite::Connection::open(state_dir.join(JOURNAL_FILE))
        .unwrap()
        .execute(
            "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                 operation, tool_family, state, intent_json, created_at_ms)
             VALUES ('not-a-transaction-id', ?1, ?2, 'file', 'write', 't', 'open', '{}', 0)",
            rusqlite::params![identity.object_id, identity.generation as i64],
        )
        .unwrap();
    let mut j = Journal::open(&state, &project).unwrap();
    j.reconcile().unwrap();
    match j.gate() {
        WriteGate::Closed { quarantined } => {
            assert_eq!(quarantined.len(), 1);
            assert_eq!(quarantined[0].transaction_id, TxnId::from_bytes([0; 16]));
            assert!(
                quarantined[0].reason.contains("\"not-a-transaction-id\""),
                "{quarantined:?}"
            );
        }
        other => panic!("an unparsable row must close the gate: {other:?}"),
    }
    drop(j);
    // The documented operator step: move the journal aside, as evidence.
    let evidence = dir.path().join("evidence");
    fs::create_dir_all(&evidence).unwrap();
    for name in [
        JOURNAL_FILE.to_owned(),
        format!("{JOURNAL_FILE}-wal"),
        format!("{JOURNAL_FILE}-shm"),
    ] {
        let from = state_dir.join(&name);
        if from.exists() {
            fs::rename(&from, evidence.join(&name)).unwrap();
        }
    }
    let mut j = Journal::open(&state, &project).unwrap();
    assert_eq!(j.reconcile().unwrap().gate, WriteGate::Open);
    assert_eq!(j.identity(), &identity, "the project identity is kept");
}

/// Guards against (issue 26, item 9): repair acting on disk before its proof
/// is complete. A leftover at the temp path that holds neither the pre- nor
/// the post-state is someone else's file (the exchange displaced it): repair
/// removed it and then recorded `committed`. Now it refuses first, and the
/// refusal leaves the disk and the journal exactly as they were.
#[test]
fn a_refused_repair_leaves_a_foreign_temp_and_the_row_as_they_were() {
    let _one = support::one_at_a_time();
    let f = quarantined_holding(Some(PRE), POST);
    let temp = f.project.join(format!(".gmcp-{}.tmp", f.txn));
    fs::write(&temp, b"theirs").unwrap();
    let before = f.snapshot();
    for op in [
        RepairOperation::AcknowledgeSafeState,
        RepairOperation::Compensate,
    ] {
        let got = f.claim(op, FileState::of(POST), false);
        assert!(got.is_err(), "{op:?}: {got:?}");
        assert_eq!(
            fs::read(&temp).unwrap(),
            b"theirs",
            "{op:?}: evidence removed"
        );
        assert_eq!(fs::read(f.project.join("a.txt")).unwrap(), POST);
        assert_eq!(f.snapshot(), before, "{op:?}");
    }
}

/// Guards against a save-all row that did not land whole closing the gate for good, or
/// being acknowledged with nothing to prove it: every named file is re-derived from disk.
/// `a.tscn` was written, `b.tscn` not: acknowledging is refused (and changes nothing)
/// until `b.tscn` is written too (saved again), then the row is recorded `committed`.
#[test]
fn a_save_all_row_is_acknowledged_only_once_every_file_is_written() {
    let _one = support::one_at_a_time();
    use godot_mcp_journal::durable::{FileStamp, read_state};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let project = dir.path().join("project");
    fs::create_dir_all(project.join("scenes")).unwrap();
    let (a, b) = (project.join("scenes/a.tscn"), project.join("scenes/b.tscn"));
    fs::write(&a, b"[gd_scene format=3]\n").unwrap();
    fs::write(&b, b"[gd_scene format=3]\n").unwrap();
    let mut j = Journal::open(&state, &project).unwrap();
    j.reconcile().unwrap();
    let named = |p: &std::path::Path, res: &str| godot_mcp_journal::NamedFile {
        path: res.into(),
        pre_state: read_state(p).unwrap(),
        pre_stamp: FileStamp::read(p).unwrap(),
    };
    let intent = godot_mcp_journal::EditorIntent {
        cmd: "scene.save_all".into(),
        request_id: 9,
        may_save_file: true,
        scene: Some("res://scenes/a.tscn".into()),
        params_sha256: "0".repeat(64),
        pre_state: None,
        files: vec![
            named(&a, "res://scenes/a.tscn"),
            named(&b, "res://scenes/b.tscn"),
        ],
    };
    let txn = j.begin_editor(&intent, "editor", "scene.save_all").unwrap();
    fs::write(&a, b"[gd_scene format=3]\n[node name=\"A\"]\n").unwrap();
    let after = |p: &std::path::Path, f: &godot_mcp_journal::NamedFile| {
        let post = read_state(p).unwrap();
        godot_mcp_journal::SavedFile {
            path: f.path.clone(),
            pre_state: f.pre_state,
            post_state: Some(post),
            written: post != f.pre_state,
            expected: true,
        }
    };
    let proof = godot_mcp_journal::EditorProof {
        files: vec![after(&a, &intent.files[0]), after(&b, &intent.files[1])],
        ..godot_mcp_journal::EditorProof::reply(9, "ok")
    };
    let st = j
        .settle_editor(
            txn,
            &intent,
            godot_mcp_journal::EditorSettle::Applied(proof),
        )
        .unwrap();
    assert_eq!(st, TxnStatus::Quarantined);
    let identity = j.identity().clone();
    drop(j);
    let run = |op: RepairOperation| {
        let observed = read_state(&a).unwrap();
        let proof = file_proof(
            &identity,
            txn,
            op,
            EffectKind::EditorRuntime,
            "scenes/a.tscn",
            observed,
        );
        let file = dir.path().join("proof.json");
        fs::write(&file, serde_json::to_vec(&proof).unwrap()).unwrap();
        repair::run(
            &state,
            &RepairRequest {
                project: project.clone(),
                transaction_id: txn,
                operation: op,
                proof_file: file,
                dry_run: false,
            },
        )
    };
    let ack = RepairOperation::AcknowledgeSafeState;
    let e = run(ack).unwrap_err();
    assert!(e.to_string().contains("scenes/b.tscn"), "{e}");
    assert!(run(RepairOperation::Compensate).is_err());
    // Saved again: b.tscn written since the intent.
    fs::write(&b, b"[gd_scene format=3]\n[node name=\"B\"]\n").unwrap();
    let r = run(ack).unwrap();
    assert!(r.recorded);
    assert_eq!(r.to, TxnStatus::Committed);
    let mut j = Journal::open(&state, &project).unwrap();
    j.reconcile().unwrap();
    assert_eq!(*j.gate(), WriteGate::Open);
}

/// A proof for the row `txn` of effect `kind`, claiming its file at `path` is `observed`.
fn file_proof(
    identity: &ProjectIdentity,
    txn: TxnId,
    op: RepairOperation,
    kind: EffectKind,
    path: &str,
    observed: FileState,
) -> RepairProof {
    support::repair_proof(
        identity,
        txn,
        op,
        kind,
        Some(FileClaim {
            path: path.into(),
            observed,
        }),
    )
}

/// A quarantined change (issue 28): repaired whole — every file proven at its
/// post-state, or every file put back from the change's pre-images — or refused
/// with disk and journal exactly as they were.
mod change {
    use super::*;
    use std::io;
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use godot_mcp_journal::proof::Intent;
    use godot_mcp_journal::storage::{Injected, StorageOp, is_journal_temp};
    use godot_mcp_journal::{ChangeEffect, ChangeError, ChangeOp, FileChange};

    const MAIN_PRE: &[u8] = b"[ext_resource path=\"res://old.tscn\"]\n";
    const MAIN_POST: &[u8] = b"[ext_resource path=\"res://b/new.tscn\"]\n";
    const SCENE: &[u8] = b"[gd_scene format=3]\n";
    const UID: &[u8] = b"uid://old\n";

    /// Real storage whose second unlink of a project file fails, and whose
    /// every `.undo` write (a compensation's restore) fails: the change stops
    /// midway and cannot be put back, so it is quarantined with files on both
    /// sides.
    fn stuck_storage() -> Arc<Injected<AtomicUsize>> {
        Arc::new(Injected {
            state: AtomicUsize::new(0),
            hook: |unlinks, op| match op {
                StorageOp::CreateTemp(path) if path.to_string_lossy().ends_with(".undo") => {
                    Err(io::Error::other("injected restore failure"))
                }
                StorageOp::RemoveFile(path)
                    if !is_journal_temp(path) && unlinks.fetch_add(1, Ordering::SeqCst) == 1 =>
                {
                    Err(io::Error::other("injected unlink failure"))
                }
                _ => Ok(()),
            },
            inner: godot_mcp_journal::storage::RealStorage,
        })
    }

    /// A `move_file`-shaped change of five files, quarantined: `b/new.tscn`,
    /// `b/new.tscn.uid` and `main.tscn` at their post-state, `old.tscn` deleted
    /// (post), `old.tscn.uid` still there (pre).
    fn stuck() -> Fixture {
        let (dir, state, project) = dirs();
        for (p, b) in [
            ("old.tscn", SCENE),
            ("old.tscn.uid", UID),
            ("main.tscn", MAIN_PRE),
        ] {
            fs::write(project.join(p), b).unwrap();
        }
        let storage = stuck_storage();
        let mut j = Journal::open_with_storage(&state, &project, storage).unwrap();
        j.reconcile().unwrap();
        let w = |p: &str, b: &[u8], pre: FileState| ChangeEffect {
            rel_path: p.into(),
            op: ChangeOp::Write(b.to_vec()),
            expected: Some(pre),
        };
        let d = |p: &str| ChangeEffect {
            rel_path: p.into(),
            op: ChangeOp::Delete,
            expected: None,
        };
        let err = j
            .apply_change(FileChange {
                effects: vec![
                    w("b/new.tscn", SCENE, FileState::Absent),
                    w("b/new.tscn.uid", UID, FileState::Absent),
                    w("main.tscn", MAIN_POST, FileState::of(MAIN_PRE)),
                    d("old.tscn"),
                    d("old.tscn.uid"),
                ],
                idempotency: None,
                tool_family: "files".into(),
                operation: "move_file".into(),
            })
            .unwrap_err();
        let ChangeError::Failed {
            transaction_id,
            status: TxnStatus::Quarantined,
            ..
        } = err
        else {
            panic!("{err:?}")
        };
        quarantined_row(dir, state, project, j, transaction_id)
    }

    /// Every file under `root` (recursively) and its bytes; not Godot's cache
    /// folder `.godot/` (it holds the project lease).
    fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(d) = dirs.pop() {
            for e in fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p == root.join(".godot") {
                    continue;
                }
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.push((rel, fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    fn pre_tree() -> Vec<(String, Vec<u8>)> {
        let mut t = vec![
            ("main.tscn".to_string(), MAIN_PRE.to_vec()),
            ("old.tscn".to_string(), SCENE.to_vec()),
            ("old.tscn.uid".to_string(), UID.to_vec()),
        ];
        t.sort();
        t
    }

    fn retained(f: &Fixture) -> i64 {
        let conn = rusqlite::Connection::open(f.state_dir.join(JOURNAL_FILE)).unwrap();
        conn.query_row("SELECT count(*) FROM change_preimages", [], |r| r.get(0))
            .unwrap()
    }

    /// The change's files as its intent recorded them.
    fn recorded_files(f: &Fixture) -> Vec<godot_mcp_journal::ChangeFile> {
        let conn = rusqlite::Connection::open(f.state_dir.join(JOURNAL_FILE)).unwrap();
        let json: String = conn
            .query_row(
                "SELECT intent_json FROM transactions WHERE id = ?1",
                [f.txn.to_string()],
                |r| r.get(0),
            )
            .unwrap();
        match serde_json::from_str::<Intent>(&json).unwrap() {
            Intent::Change(c) => c.files,
            other => panic!("{other:?}"),
        }
    }

    impl Fixture {
        /// Runs `op` with a proof claiming `main.tscn` (a file of the change) is `main`.
        fn change_claim(
            &self,
            op: RepairOperation,
            main: &[u8],
            dry_run: bool,
        ) -> Result<repair::RepairReport, RepairRefusal> {
            let p = file_proof(
                &self.identity,
                self.txn,
                op,
                EffectKind::File,
                "main.tscn",
                FileState::of(main),
            );
            self.run_with(op, Some(&p), dry_run)
        }

        fn journal_and_disk(&self) -> impl PartialEq + std::fmt::Debug {
            (self.snapshot(), retained(self), tree(&self.project))
        }
    }

    /// Guards against (issue 28): repair refusing a quarantined change, or
    /// putting back only some of its files. `--dry-run` reports the four
    /// actions and changes nothing; `compensate` removes both created files and
    /// writes `main.tscn` and `old.tscn` back from the change's pre-images,
    /// proves every file at its pre-state, records one `compensated` transition
    /// with five file proofs, releases the pre-images and reopens the gate.
    #[test]
    fn a_quarantined_change_is_compensated_whole_from_its_pre_images() {
        let _one = support::one_at_a_time();
        let f = stuck();
        assert_eq!(f.status(), "quarantined");
        assert_eq!(retained(&f), 3);
        let before = f.journal_and_disk();
        let op = RepairOperation::Compensate;
        let r = f.change_claim(op, MAIN_POST, true).unwrap();
        assert_eq!((r.to, r.recorded), (TxnStatus::Compensated, false));
        assert_eq!(r.actions.len(), 4, "{:?}", r.actions);
        assert_eq!(f.journal_and_disk(), before);

        let r = f.change_claim(op, MAIN_POST, false).unwrap();
        assert!(r.recorded, "{r:?}");
        assert_eq!(tree(&f.project), pre_tree());
        let (state, proof, reason, _, repairs) = f.snapshot();
        assert_eq!((state.as_str(), repairs), ("compensated", 1));
        let proof = proof.unwrap();
        assert_eq!(
            proof.matches(r#""basis":"pre_state""#).count(),
            5,
            "{proof}"
        );
        assert_eq!(proof.matches(r#""derived_by":"repair""#).count(), 5);
        assert!(reason.unwrap().contains("putting old.tscn back failed"));
        assert_eq!(retained(&f), 0);
        let mut j = Journal::open(&f.state, &f.project).unwrap();
        assert_eq!(j.reconcile().unwrap().gate, WriteGate::Open);
    }

    /// Guards against: a change acknowledged `committed` while one of its
    /// files is not at its post-state. Refused with disk and journal as they
    /// were; once the operator finishes the move (deletes `old.tscn.uid`),
    /// `acknowledge-safe-state` records `committed` with every file's proof.
    #[test]
    fn a_change_is_acknowledged_only_with_every_file_at_its_post_state() {
        let _one = support::one_at_a_time();
        let f = stuck();
        let before = f.journal_and_disk();
        let op = RepairOperation::AcknowledgeSafeState;
        let e = f.change_claim(op, MAIN_POST, false).unwrap_err();
        assert!(e.to_string().contains("old.tscn.uid is sha256:"), "{e}");
        assert_eq!(e.exit_code(), 1);
        assert_eq!(f.journal_and_disk(), before);

        fs::remove_file(f.project.join("old.tscn.uid")).unwrap();
        let r = f.change_claim(op, MAIN_POST, false).unwrap();
        assert_eq!((r.to, r.recorded), (TxnStatus::Committed, true));
        let (state, proof, ..) = f.snapshot();
        assert_eq!(state, "committed");
        assert_eq!(proof.unwrap().matches(r#""basis":"post_state""#).count(), 5);
        assert_eq!(retained(&f), 0);
        assert!(f.project.join("b/new.tscn").exists());
    }

    /// Guards against: a change repaired (or partly acted on) when one of its
    /// files cannot be proven — each refusal exits non-zero and leaves every
    /// file, the row, the repair log and the pre-images exactly as they were.
    #[test]
    fn a_change_repair_that_cannot_prove_every_file_changes_nothing() {
        let _one = support::one_at_a_time();
        type Case = (
            &'static str,
            Box<dyn Fn(&Fixture)>,
            Box<dyn Fn(&Fixture) -> Result<repair::RepairReport, RepairRefusal>>,
        );
        let comp = RepairOperation::Compensate;
        let nothing = || -> Box<dyn Fn(&Fixture)> { Box::new(|_| {}) };
        let cases: Vec<Case> = vec![
            (
                "main.tscn is sha256:",
                Box::new(|f| fs::write(f.project.join("main.tscn"), b"edited").unwrap()),
                Box::new(move |f| f.change_claim(comp, b"edited", false)),
            ),
            (
                "old.tscn at its post-state and no pre-image",
                Box::new(|f| {
                    let conn = rusqlite::Connection::open(f.state_dir.join(JOURNAL_FILE)).unwrap();
                    conn.execute("DELETE FROM change_preimages WHERE idx = 3", [])
                        .unwrap();
                }),
                Box::new(move |f| f.change_claim(comp, MAIN_POST, false)),
            ),
            (
                "someone wrote during the exchange",
                Box::new(|f| {
                    let temp = recorded_files(f)[0].temp.clone();
                    fs::write(f.project.join(temp), b"theirs").unwrap();
                }),
                Box::new(move |f| f.change_claim(comp, MAIN_POST, false)),
            ),
            (
                "wrong proof: file.path",
                nothing(),
                Box::new(move |f| {
                    let p = file_proof(
                        &f.identity,
                        f.txn,
                        comp,
                        EffectKind::File,
                        "a.txt",
                        FileState::Absent,
                    );
                    f.run_with(comp, Some(&p), false)
                }),
            ),
            (
                "wrong proof: file.observed",
                nothing(),
                Box::new(move |f| f.change_claim(comp, MAIN_PRE, false)),
            ),
            (
                "wrong project",
                nothing(),
                Box::new(move |f| {
                    let mut p = file_proof(
                        &f.identity,
                        f.txn,
                        comp,
                        EffectKind::File,
                        "main.tscn",
                        FileState::of(MAIN_POST),
                    );
                    p.generation += 1;
                    f.run_with(comp, Some(&p), false)
                }),
            ),
            (
                "terminate does not apply",
                nothing(),
                Box::new(|f| f.change_claim(RepairOperation::Terminate, MAIN_POST, false)),
            ),
        ];
        for (want, setup, run) in cases {
            let f = stuck();
            setup(&f);
            let before = f.journal_and_disk();
            let e = run(&f).unwrap_err();
            assert!(e.to_string().contains(want), "{want}: {e}");
            assert_eq!(e.exit_code(), 1, "{want}");
            assert_eq!(f.journal_and_disk(), before, "{want}");
            assert_eq!(f.status(), "quarantined", "{want}");
        }
    }
}
