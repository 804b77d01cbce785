//! The repair of a `file` transaction: what each operation makes of the state found
//! on disk.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::durable;
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::Journal;
use crate::proof::{Deriver, FileIntent, FileProof, Proof, ProofBasis};

use super::common::{mismatch, observe_claimed, record_repair, report, restore_bytes};
use super::request::{
    FileClaim, RepairOperation, RepairProof, RepairRefusal, RepairReport, RepairRequest,
};

pub(super) struct Plan {
    pub(super) to: TxnStatus,
    pub(super) basis: ProofBasis,
    /// Compensating a create: remove the file this transaction created.
    pub(super) unlink_target: bool,
    /// Compensating an overwrite or a delete: write the retained pre-image back.
    pub(super) restore: bool,
}

/// The transition `op` may journal given the re-derived `observed` state.
pub(super) fn plan(
    op: RepairOperation,
    intent: &FileIntent,
    observed: FileState,
) -> Result<Plan, RepairRefusal> {
    let committed = Plan {
        to: TxnStatus::Committed,
        basis: ProofBasis::PostState,
        unlink_target: false,
        restore: false,
    };
    let compensated = Plan {
        to: TxnStatus::Compensated,
        basis: ProofBasis::PreState,
        unlink_target: false,
        restore: false,
    };
    match op {
        RepairOperation::Reconcile if observed == intent.post => Ok(committed),
        RepairOperation::Reconcile if observed == intent.pre => Ok(compensated),
        RepairOperation::AcknowledgeSafeState if observed == intent.post => Ok(committed),
        RepairOperation::Compensate if observed == intent.pre => Ok(compensated),
        RepairOperation::Compensate
            if intent.pre == FileState::Absent && observed == intent.post =>
        {
            Ok(Plan {
                unlink_target: true,
                ..compensated
            })
        }
        // An overwrite or a delete in its post-state: the pre-image, if the
        // journal retained it, is written back (checked by the caller).
        RepairOperation::Compensate if observed == intent.post => Ok(Plan {
            restore: true,
            ..compensated
        }),
        RepairOperation::Terminate => Err(RepairRefusal::NotApplicable {
            operation: op,
            kind: EffectKind::File,
        }),
        _ => Err(RepairRefusal::Unproven(format!(
            "{} is {observed}; {op} needs {}",
            intent.path,
            match op {
                RepairOperation::AcknowledgeSafeState => format!("its post-state {}", intent.post),
                RepairOperation::Compensate => format!(
                    "its pre-state {} (restore those bytes, e.g. from version control, and retry)",
                    intent.pre
                ),
                _ => format!("its pre-state {} or post-state {}", intent.pre, intent.post),
            }
        ))),
    }
}

/// What a file's repair needs from the row beyond its intent.
pub(super) struct FileCtx<'a> {
    pub(super) req: &'a RepairRequest,
    pub(super) txn: TxnId,
    pub(super) kind: EffectKind,
    /// The row was recorded for another incarnation of the project.
    pub(super) foreign: bool,
    /// How the row's recorded identity differs, for reasons ("" when it does not).
    pub(super) recorded_for: &'a str,
    /// The row's recorded reason with its recorded identity.
    pub(super) reason: &'a str,
}

/// The target and its leftover temp as found on disk, checked against the claim.
struct Found {
    target: PathBuf,
    observed: FileState,
    temp: Option<PathBuf>,
    temp_exists: bool,
    /// What the leftover temp holds, when there is one.
    temp_held: Option<FileState>,
}

/// Repairs a `file` transaction: the claim checked, the target and its temp found, the
/// operation planned, and (unless a dry run or `reconcile`) acted on and recorded.
pub(super) fn repair_file(
    journal: &mut Journal,
    ctx: &FileCtx<'_>,
    proof: &RepairProof,
    intent: &FileIntent,
) -> Result<RepairReport, RepairRefusal> {
    let req = ctx.req;
    if req.operation == RepairOperation::Terminate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind: ctx.kind,
        });
    }
    let claim = check_claim(journal, req, proof, intent)?;
    let found = find(&journal.root, intent, claim)?;
    let plan = plan(req.operation, intent, found.observed)?;
    refuse_foreign(ctx, intent, &found, &plan)?;
    let restore = if plan.restore {
        retained(journal, ctx.txn, intent, found.observed)?
    } else {
        None
    };
    let actions = actions(intent, &found, &plan, restore.as_ref());
    let mut proof_out = FileProof {
        path: intent.path.clone(),
        observed: found.observed,
        basis: plan.basis,
        temp_removed: found.temp_exists,
        derived_by: Deriver::Repair,
    };
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        proof_out.observed = act(intent, &found, &plan, restore.as_ref())?;
        let reason = format!(
            "repaired by {} (was quarantined: {})",
            req.operation, ctx.reason,
        );
        let proof = Proof::File(proof_out.clone());
        record_repair(
            journal,
            ctx.txn,
            req.operation,
            plan.to,
            &proof,
            proof.clone(),
            &reason,
        )?;
    }
    Ok(report(
        req,
        plan.to,
        record,
        Proof::File(proof_out),
        actions,
    ))
}

/// The proof's claim on the file, which must name the intent's path; a composite's
/// linked launch must hold too.
fn check_claim<'p>(
    journal: &Journal,
    req: &RepairRequest,
    proof: &'p RepairProof,
    intent: &FileIntent,
) -> Result<&'p FileClaim, RepairRefusal> {
    let claim = proof
        .file
        .as_ref()
        .ok_or_else(|| mismatch("file", "missing", format!("path {}", intent.path)))?;
    if claim.path != intent.path {
        return Err(mismatch("file.path", &claim.path, &intent.path));
    }
    if let Some(link) = intent.linked_launch {
        // A composite commits only with its launch sub-proof, the full verdict
        // (committed, exit 0, boundary proven empty), re-read from the journal;
        // the proof file cannot suppress this check. Compensating one needs
        // less — nothing of the composite stays — but still a launch whose
        // boundary is proven empty: a helper that may still run may still write.
        let verdict = journal.linked_launch_verdict(link);
        let boundary_empty = matches!(
            journal.launch_proof(link),
            Ok(Some((TxnStatus::Committed | TxnStatus::Compensated, ref p))) if p.boundary_empty
        );
        match verdict {
            Ok(()) => {}
            Err(_) if req.operation == RepairOperation::Compensate && boundary_empty => {}
            Err(why) => {
                return Err(RepairRefusal::Unproven(format!(
                    "composite: linked process_launch {link} {why}"
                )));
            }
        }
    }

    Ok(claim)
}

/// The target, its leftover temp and what that holds, checked against the claim.
fn find(root: &Path, intent: &FileIntent, claim: &FileClaim) -> Result<Found, RepairRefusal> {
    let target = root.join(&intent.path);
    let observed = observe_claimed(&target, claim)?;
    let temp = intent.temp.as_ref().map(|t| root.join(t));
    let temp_exists = match &temp {
        Some(t) => match fs::symlink_metadata(t) {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(source) => {
                return Err(RepairRefusal::Io {
                    path: t.clone(),
                    source,
                });
            }
        },
        None => false,
    };

    // Once the target holds the post-state, a leftover temp is what the
    // exchange displaced: removable only when it holds the pre-state (or our
    // bytes). Anything else is someone else's file, kept as evidence; refused
    // here, before anything on disk is touched (see `reconcile`).
    let temp_held = match (temp_exists, &temp) {
        (true, Some(t)) => Some(durable::read_state(t).map_err(|source| RepairRefusal::Io {
            path: t.clone(),
            source,
        })?),
        _ => None,
    };
    if let Some(held) = temp_held.filter(|_| observed == intent.post)
        && held != intent.pre
        && held != intent.post
    {
        return Err(RepairRefusal::Unproven(format!(
            "{} holds {held}, neither the pre-state {} nor the post-state {} of {}: a file \
             someone wrote during the exchange, kept there as evidence; move it aside once \
             you have looked at it, then retry",
            intent.temp.as_deref().unwrap_or(""),
            intent.pre,
            intent.post,
            intent.path
        )));
    }
    Ok(Found {
        target,
        observed,
        temp,
        temp_exists,
        temp_held,
    })
}

/// A row of another incarnation is resolved by what the disk shows now, but its bytes,
/// its pre-image and its temp belong to a directory that is no longer at the path:
/// refused when the plan would apply any of them to this one.
fn refuse_foreign(
    ctx: &FileCtx<'_>,
    intent: &FileIntent,
    found: &Found,
    plan: &Plan,
) -> Result<(), RepairRefusal> {
    let (req, foreign, recorded_for) = (ctx.req, ctx.foreign, ctx.recorded_for);
    let (observed, temp_exists) = (found.observed, found.temp_exists);
    // A row of another incarnation is resolved by what the disk shows now, but
    // its bytes, its pre-image and its temp belong to a directory that is no
    // longer at the path: they are never applied to this one.
    if foreign && (temp_exists || plan.unlink_target || plan.restore) {
        return Err(RepairRefusal::Unproven(format!(
            "{} is {observed}, and {} would change it ({}), but the transaction was \
             recorded for another incarnation of the project{recorded_for}: nothing of it is \
             applied to this one; bring the file to a state you want yourself, then \
             acknowledge-safe-state (post-state {}) or compensate (pre-state {})",
            intent.path,
            req.operation,
            if temp_exists {
                "remove its leftover temp"
            } else if plan.unlink_target {
                "remove the created file"
            } else {
                "write its pre-image back"
            },
            intent.post,
            intent.pre
        )));
    }
    Ok(())
}

/// The retained pre-image that compensating an overwrite or a delete writes back.
fn retained(
    journal: &Journal,
    txn: TxnId,
    intent: &FileIntent,
    observed: FileState,
) -> Result<Option<(Vec<u8>, u32)>, RepairRefusal> {
    Ok(
        match crate::preimage::load(journal.conn(), txn, intent.pre)? {
            crate::preimage::Retained::Bytes { bytes, mode } => Some((bytes, mode)),
            crate::preimage::Retained::OverBound { size } => {
                return Err(RepairRefusal::Unproven(format!(
                    "{} is in its post-state {observed}; its pre-image ({size} bytes) is larger \
                     than the {} byte bound the journal retains, so it cannot be restored by \
                     proof: restore the pre-state {} yourself (e.g. from version control) and \
                     retry",
                    intent.path,
                    crate::preimage::MAX_PREIMAGE_BYTES,
                    intent.pre
                )));
            }
            crate::preimage::Retained::None => {
                return Err(RepairRefusal::Unproven(format!(
                    "{} is in its post-state {observed}; no pre-image of it was retained, so \
                     it cannot be restored by proof: restore the pre-state {} yourself (e.g. \
                     from version control) and retry",
                    intent.path, intent.pre
                )));
            }
        },
    )
}

/// The steps acting will take, for the report.
fn actions(
    intent: &FileIntent,
    found: &Found,
    plan: &Plan,
    restore: Option<&(Vec<u8>, u32)>,
) -> Vec<String> {
    let temp_exists = found.temp_exists;
    let mut actions = Vec::new();
    if temp_exists {
        actions.push(format!(
            "remove leftover temp {}",
            intent.temp.as_deref().unwrap_or("")
        ));
    }
    if plan.unlink_target {
        actions.push(format!(
            "remove {} (created by this transaction)",
            intent.path
        ));
    }
    if let Some((bytes, _)) = restore {
        actions.push(format!(
            "restore {} to its pre-state {} from the retained pre-image ({} bytes)",
            intent.path,
            intent.pre,
            bytes.len()
        ));
    }
    actions
}

/// Acts on the plan, after one last check that nothing changed, and returns the
/// target's state re-derived after acting (what the recorded proof claims).
fn act(
    intent: &FileIntent,
    found: &Found,
    plan: &Plan,
    restore: Option<&(Vec<u8>, u32)>,
) -> Result<FileState, RepairRefusal> {
    let Found {
        target,
        observed,
        temp,
        temp_exists,
        temp_held,
    } = found;
    let (observed, temp_exists, temp_held) = (*observed, *temp_exists, *temp_held);
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RepairRefusal::Io { path, source }
    };
    // The last check before acting: the target is still what was proven.
    let now = durable::read_state(target).map_err(io_err(target))?;
    if now != observed {
        return Err(RepairRefusal::Unproven(format!(
            "{} changed while repairing: now {now}, nothing was done",
            intent.path
        )));
    }
    if let (Some(held), Some(t)) = (temp_held, &temp) {
        let now = durable::read_state(t).map_err(io_err(t))?;
        if now != held {
            return Err(RepairRefusal::Unproven(format!(
                "{} changed while repairing: now {now}, nothing was done",
                intent.temp.as_deref().unwrap_or("")
            )));
        }
    }
    if let (true, Some(t)) = (temp_exists, &temp) {
        fs::remove_file(t).map_err(io_err(t))?;
    }
    if plan.unlink_target {
        fs::remove_file(target).map_err(io_err(target))?;
    }
    if let Some((bytes, mode)) = &restore {
        restore_bytes(target, bytes, *mode).map_err(io_err(target))?;
    }
    if temp_exists || plan.unlink_target || restore.is_some() {
        durable::fsync_dir(durable::parent_dir(target)).map_err(io_err(target))?;
    }
    // Re-derive once more after acting: the recorded proof is what is on
    // disk now, not what was planned.
    let after = durable::read_state(target).map_err(io_err(target))?;
    let expected_after = if plan.unlink_target {
        FileState::Absent
    } else if restore.is_some() {
        intent.pre
    } else {
        observed
    };
    if after != expected_after {
        return Err(RepairRefusal::Unproven(format!(
            "{} changed while repairing: now {after}",
            intent.path
        )));
    }
    Ok(after)
}
