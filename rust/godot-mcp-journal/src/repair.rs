//! `godot-mcp transaction repair`: the operator's only way to resolve a
//! quarantined transaction. It re-derives every proof field itself, against
//! the current project object and generation, and journals exactly one
//! proof-backed transition — or refuses and changes nothing.
//!
//! Nothing here is reachable from a tool or transport; the server's CLI calls
//! [`run`]. There is no force option by construction: [`RepairRequest`] has no
//! field that could skip a check.
//!
//! # Layout
//!
//! `request` (the words) is below `common` (reading the proof file, checking a claim,
//! restoring bytes, recording), which is below each kind's repair: `file`, `editor`,
//! `launch`, `change`. This module reads the row, checks the identities and dispatches
//! on the kind.

use std::fs;
use std::io;
use std::path::Path;

use rusqlite::OptionalExtension;

use crate::durable;
use crate::ids::{EffectKind, FileState, TxnStatus};
use crate::journal::Journal;
use crate::process_table::ProcessTable;
use crate::proof::{Deriver, FileProof, Intent, Proof};

mod change;
mod common;
mod editor;
mod file;
mod launch;
mod request;
use change::{ChangeCtx, repair_change};
use common::{Row, mismatch, observe_claimed, read_proof, record_repair, report, restore_bytes};
use editor::repair_editor;
use file::plan;
use launch::repair_launch;
pub use request::{
    FileClaim, PROOF_SCHEMA, ParseOperationError, RepairOperation, RepairProof, RepairRefusal,
    RepairReport, RepairRequest,
};

/// Runs one repair of `req.project`'s journal under the state root `state_root`.
pub fn run(state_root: &Path, req: &RepairRequest) -> Result<RepairReport, RepairRefusal> {
    run_with(state_root, req, crate::process_table::os())
}

/// [`run`], asking `procs` every question about processes (a launch's
/// identity, its boundary's members, the boot id, the signals): the seam
/// reconciliation has too ([`Journal::reconcile_with`]), so the rules are
/// tested against an in-memory table.
pub fn run_with(
    state_root: &Path,
    req: &RepairRequest,
    procs: &dyn ProcessTable,
) -> Result<RepairReport, RepairRefusal> {
    let proof = read_proof(&req.proof_file)?;
    let journal = Journal::open(state_root, &req.project)?;
    repair(journal, req, &proof, procs)
}

fn repair(
    mut journal: Journal,
    req: &RepairRequest,
    proof: &RepairProof,
    procs: &dyn ProcessTable,
) -> Result<RepairReport, RepairRefusal> {
    let txn = req.transaction_id;
    let identity = journal.identity.clone();
    let row = journal
        .conn()
        .query_row(
            "SELECT project_object_id, generation, effect_kind, state, intent_json, reason
             FROM transactions WHERE id = ?1",
            [txn.to_string()],
            |r| {
                Ok(Row {
                    object_id: r.get(0)?,
                    generation: r.get(1)?,
                    kind: r.get(2)?,
                    state: r.get(3)?,
                    intent_json: r.get(4)?,
                    reason: r.get(5)?,
                })
            },
        )
        .optional()?
        .ok_or(RepairRefusal::UnknownTransaction(txn))?;

    // Identity: the transaction's and the proof's, against the current project.
    let wrong = |what, found: &str, found_generation: u64| RepairRefusal::WrongProject {
        what,
        found: found.to_owned(),
        found_generation,
        current: identity.object_id.clone(),
        current_generation: identity.generation,
    };
    // The proof names the project as it is now (`project.json`), whatever
    // incarnation the row was recorded for: every field is re-derived against
    // the current object and generation — the directory at the path now —
    // never against an identity the operator copied from the row. A row of
    // another incarnation (the directory was replaced since) is resolved the
    // same way; its recorded identity goes into the recorded reason.
    if proof.project_object_id != identity.object_id || proof.generation != identity.generation {
        return Err(wrong("proof", &proof.project_object_id, proof.generation));
    }
    let row_generation = u64::try_from(row.generation).unwrap_or(u64::MAX);
    let foreign = row.object_id != identity.object_id || row_generation != identity.generation;
    let recorded_for = if foreign {
        format!(
            "; recorded for project object {} generation {row_generation}, re-derived \
             against object {} generation {}",
            row.object_id, identity.object_id, identity.generation
        )
    } else {
        String::new()
    };
    let reason_with_identity = format!(
        "{}{recorded_for}",
        row.reason.as_deref().unwrap_or("no reason recorded")
    );
    if proof.transaction_id != txn {
        return Err(mismatch("transaction_id", proof.transaction_id, txn));
    }
    if proof.operation != req.operation {
        return Err(mismatch("operation", proof.operation, req.operation));
    }
    let kind = EffectKind::parse(&row.kind)
        .ok_or_else(|| RepairRefusal::Unproven(format!("unknown effect kind {}", row.kind)))?;
    if proof.effect_kind != kind {
        return Err(mismatch("effect_kind", proof.effect_kind, kind));
    }
    let status = TxnStatus::parse(&row.state)
        .ok_or_else(|| RepairRefusal::Unproven(format!("unknown state {}", row.state)))?;
    if status != TxnStatus::Quarantined {
        return Err(RepairRefusal::NotQuarantined {
            transaction_id: txn,
            status,
        });
    }
    // The intent, parsed once; each effect kind re-derives its own proof form.
    let parsed = serde_json::from_str::<Intent>(&row.intent_json)
        .map_err(|e| RepairRefusal::Unproven(format!("intent unreadable: {e}")))?;
    let reason = Some(reason_with_identity.as_str());
    let intent = match (kind, parsed) {
        (EffectKind::File, Intent::File(intent)) => intent,
        (EffectKind::ProcessLaunch, Intent::ProcessLaunch(intent)) => {
            return repair_launch(&mut journal, req, txn, intent, reason, procs);
        }
        (EffectKind::EditorRuntime, Intent::EditorRuntime(intent)) => {
            return repair_editor(&mut journal, req, proof, txn, intent, reason);
        }
        (EffectKind::File, Intent::Change(intent)) => {
            let ctx = ChangeCtx {
                req,
                txn,
                foreign,
                recorded_for: &recorded_for,
                reason: &reason_with_identity,
            };
            return repair_change(&mut journal, &ctx, proof, &intent);
        }
        (other, _) => {
            return Err(RepairRefusal::Unproven(format!(
                "the recorded intent is not a {other} intent"
            )));
        }
    };
    if req.operation == RepairOperation::Terminate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind,
        });
    }
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

    let root = journal.root.clone();
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
    let plan = plan(req.operation, &intent, observed)?;
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
    let restore = if plan.restore {
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
        }
    } else {
        None
    };
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
    if let Some((bytes, _)) = &restore {
        actions.push(format!(
            "restore {} to its pre-state {} from the retained pre-image ({} bytes)",
            intent.path,
            intent.pre,
            bytes.len()
        ));
    }
    let mut proof_out = FileProof {
        path: intent.path.clone(),
        observed,
        basis: plan.basis,
        temp_removed: temp_exists,
        derived_by: Deriver::Repair,
    };
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RepairRefusal::Io { path, source }
        };
        // The last check before acting: the target is still what was proven.
        let now = durable::read_state(&target).map_err(io_err(&target))?;
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
            fs::remove_file(&target).map_err(io_err(&target))?;
        }
        if let Some((bytes, mode)) = &restore {
            restore_bytes(&target, bytes, *mode).map_err(io_err(&target))?;
        }
        if temp_exists || plan.unlink_target || restore.is_some() {
            durable::fsync_dir(durable::parent_dir(&target)).map_err(io_err(&target))?;
        }
        // Re-derive once more after acting: the recorded proof is what is on
        // disk now, not what was planned.
        let after = durable::read_state(&target).map_err(io_err(&target))?;
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
        proof_out.observed = after;
        let reason = format!(
            "repaired by {} (was quarantined: {reason_with_identity})",
            req.operation,
        );
        let proof = Proof::File(proof_out.clone());
        record_repair(
            &mut journal,
            txn,
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

#[cfg(test)]
mod tests;
