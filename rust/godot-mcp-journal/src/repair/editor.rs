//! The repair of an `editor_runtime` transaction.

use std::path::Path;

use crate::durable;
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::Journal;
use crate::proof::{FileProof, Proof, ProofBasis};

use super::common::{mismatch, observe_claimed, record_repair, report};
use super::request::{
    FileClaim, RepairOperation, RepairProof, RepairRefusal, RepairReport, RepairRequest,
};

/// An `editor_runtime` transaction quarantined because a command that may have written
/// a file (scene or resource) lost its answer, or answered an error whose pre-state was not
/// proven. The journal keeps the file's pre-state hash (not its bytes) and, for an error
/// reply, the editor's report of what it left. What can be proven is the file's state now:
/// `reconcile` reports it. When the editor reported its change undone (or never made) and
/// the file is back at the recorded pre-state (`crate::editor::pre_state_proven`),
/// `compensate` and `acknowledge-safe-state` record `compensated` with a pre-state proof,
/// and so they do once the operator has restored the file to its recorded pre-state.
/// Otherwise both are refused: an editor command records no post-state, so nothing
/// proves `committed`, and no bytes are kept to restore. `terminate` is refused.
pub(super) fn repair_editor(
    journal: &mut Journal,
    req: &RepairRequest,
    proof: &RepairProof,
    txn: TxnId,
    intent: crate::editor::EditorIntent,
    reason: Option<&str>,
) -> Result<RepairReport, RepairRefusal> {
    match req.operation {
        RepairOperation::Reconcile
        | RepairOperation::AcknowledgeSafeState
        | RepairOperation::Compensate => {}
        RepairOperation::Terminate => {
            return Err(RepairRefusal::NotApplicable {
                operation: req.operation,
                kind: EffectKind::EditorRuntime,
            });
        }
    }
    if !intent.files.is_empty() {
        return repair_editor_files(journal, proof.file.as_ref(), req, txn, intent, reason);
    }
    let rel = intent
        .scene
        .as_deref()
        .and_then(|s| s.strip_prefix("res://"))
        .filter(|r| !r.is_empty())
        .ok_or_else(|| {
            RepairRefusal::Unproven(format!(
                "{} named no scene file, so nothing on disk can prove what it did",
                intent.cmd
            ))
        })?
        .to_string();
    crate::durable::validate_relative(Path::new(&rel))
        .map_err(|e| RepairRefusal::Unproven(format!("recorded scene path refused: {e}")))?;
    let claim = proof
        .file
        .as_ref()
        .ok_or_else(|| mismatch("file", "missing", format!("path {rel}")))?;
    if claim.path != rel {
        return Err(mismatch("file.path", &claim.path, &rel));
    }
    let observed = observe_claimed(&journal.root.join(&rel), claim)?;
    // The pre-state is proven when the editor reported its change undone (or never made)
    // and the file is at the pre-state recorded before the request was sent: then the
    // row is compensated by proof. Otherwise the operator's acknowledgment commits it.
    let left = journal
        .editor_record(txn)
        .map_err(|e| RepairRefusal::Unproven(e.to_string()))?
        .and_then(|r| r.proof)
        .and_then(|p| p.editor_left);
    // An editor command records no post-state, so nothing on disk can prove
    // one: `committed` is never recorded here. What the disk can prove is the
    // recorded pre-state — the editor reported its change undone, or the
    // operator restored the file — and that is recorded `compensated`.
    let at_pre = crate::editor::pre_state_proven(&intent, left, &observed)
        || intent.pre_state == Some(observed);
    let (to, basis) = if at_pre {
        (TxnStatus::Compensated, ProofBasis::PreState)
    } else if req.operation == RepairOperation::Reconcile {
        (TxnStatus::Quarantined, ProofBasis::PostState)
    } else {
        return Err(RepairRefusal::Unproven(format!(
            "{} was an editor command: it records no post-state, so nothing proves what it \
             wrote, and its pre-state is not on disk ({}; the editor's report: {}); no \
             pre-image bytes are kept: restore the file yourself (e.g. from version \
             control), then run acknowledge-safe-state",
            intent.cmd,
            match intent.pre_state {
                Some(pre) => format!("{rel} is {observed}, recorded before as {pre}"),
                None => "no pre-state was recorded".into(),
            },
            left.map_or("none".into(), |l| format!("{l:?}"))
        )));
    };
    finish_editor(
        journal,
        req,
        txn,
        to,
        FileProof::repaired(rel.clone(), observed, basis),
        || {
            let why = format!(
                "repaired by {}: {rel} acknowledged at {observed} (was quarantined: {})",
                req.operation,
                reason.unwrap_or("no reason recorded")
            );
            let editor_proof = crate::editor::EditorProof {
                editor_left: left,
                pre_state: intent.pre_state,
                post_state: Some(observed),
                ..crate::editor::EditorProof::reply(
                    intent.request_id,
                    format!("repaired; {rel} at {observed}"),
                )
            };
            (editor_proof, why)
        },
    )
}

/// Records an editor row's repair as `to` (unless a dry run or `reconcile`), with the
/// file proof `proof_out` logged and the row's editor proof and reason from `row`; and
/// reports it.
fn finish_editor(
    journal: &mut Journal,
    req: &RepairRequest,
    txn: TxnId,
    to: TxnStatus,
    proof_out: FileProof,
    row: impl FnOnce() -> (crate::editor::EditorProof, String),
) -> Result<RepairReport, RepairRefusal> {
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        let (editor_proof, why) = row();
        let logged = Proof::File(proof_out.clone());
        let row_proof = Proof::EditorRuntime(editor_proof);
        record_repair(journal, txn, req.operation, to, &logged, row_proof, &why)?;
    }
    Ok(report(req, to, record, Proof::File(proof_out), Vec::new()))
}

/// An `editor_runtime` row of a command that names several files (`scene.save_all`):
/// every named file is re-derived from disk (state, identity and modification time
/// against those recorded before the request). All at their recorded pre-state:
/// `compensate` and `acknowledge-safe-state` record `compensated`. Every file the editor
/// said it writes (all of them when its answer was lost) written since the intent — the
/// operator saved again once the cause was fixed — `acknowledge-safe-state` records
/// `committed` by that proof. Anything else is refused; `reconcile` reports it. The proof
/// file's `file` claim names one of the files, as the disk shows it.
fn repair_editor_files(
    journal: &mut Journal,
    claim: Option<&FileClaim>,
    req: &RepairRequest,
    txn: TxnId,
    intent: crate::editor::EditorIntent,
    reason: Option<&str>,
) -> Result<RepairReport, RepairRefusal> {
    let rel_of = |p: &str| p.strip_prefix("res://").unwrap_or(p).to_string();
    let names: Vec<String> = intent.files.iter().map(|f| rel_of(&f.path)).collect();
    let claim =
        claim.ok_or_else(|| mismatch("file", "missing", format!("one of {}", names.join(", "))))?;
    if !names.contains(&claim.path) {
        return Err(mismatch("file.path", &claim.path, names.join(" | ")));
    }
    let recorded = journal
        .editor_record(txn)
        .map_err(|e| RepairRefusal::Unproven(e.to_string()))?
        .and_then(|r| r.proof);
    let mut now = Vec::new();
    for (f, rel) in intent.files.iter().zip(&names) {
        crate::durable::validate_relative(Path::new(rel))
            .map_err(|e| RepairRefusal::Unproven(format!("recorded path refused: {e}")))?;
        let target = journal.root.join(rel);
        let io = |source| RepairRefusal::Io {
            path: target.clone(),
            source,
        };
        let stamp = durable::FileStamp::read(&target).map_err(io)?;
        let state = durable::read_state(&target).map_err(io)?;
        let written = state != f.pre_state || stamp != f.pre_stamp;
        let expected = recorded
            .as_ref()
            .is_none_or(|p| p.files.iter().any(|s| s.path == f.path && s.expected));
        now.push((rel.clone(), f.pre_state, state, written, expected));
    }
    let claimed = now.iter().find(|n| n.0 == claim.path).map(|n| n.2);
    if let Some(observed) = claimed
        && observed != claim.observed
    {
        return Err(mismatch("file.observed", claim.observed, observed));
    }
    let all_pre = now.iter().all(|n| !n.3 && n.2 == n.1);
    let all_landed = now.iter().all(|n| !n.4 || n.3);
    let (to, basis) = if all_pre {
        (TxnStatus::Compensated, ProofBasis::PreState)
    } else if all_landed && req.operation != RepairOperation::Compensate {
        (TxnStatus::Committed, ProofBasis::PostState)
    } else if req.operation == RepairOperation::Reconcile {
        (TxnStatus::Quarantined, ProofBasis::PostState)
    } else {
        let missing: Vec<&str> = now
            .iter()
            .filter(|n| n.4 && !n.3)
            .map(|n| n.0.as_str())
            .collect();
        return Err(RepairRefusal::Unproven(format!(
            "{} named {}: not every file is at its recorded pre-state, and {} not \
             written since; save them again in the editor (acknowledge-safe-state then \
             proves them written), or restore every file to its recorded pre-state",
            intent.cmd,
            names.join(", "),
            if missing.is_empty() {
                "some were".to_string()
            } else {
                missing.join(", ")
            }
        )));
    };
    let observed = claimed.unwrap_or(claim.observed);
    let proof_out = FileProof::repaired(claim.path.clone(), observed, basis);
    finish_editor(journal, req, txn, to, proof_out, || {
        let state_of = |n: &(String, FileState, FileState, bool, bool)| format!("{} {}", n.0, n.2);
        let why = format!(
            "repaired by {}: {} (was quarantined: {})",
            req.operation,
            now.iter().map(state_of).collect::<Vec<_>>().join(", "),
            reason.unwrap_or("no reason recorded")
        );
        let files = intent.files.iter().zip(&now);
        let editor_proof = crate::editor::EditorProof {
            files: files
                .map(|(f, n)| crate::editor::SavedFile {
                    path: f.path.clone(),
                    pre_state: f.pre_state,
                    post_state: Some(n.2),
                    written: n.3,
                    expected: n.4,
                })
                .collect(),
            ..crate::editor::EditorProof::reply(intent.request_id, "repaired")
        };
        (editor_proof, why)
    })
}
