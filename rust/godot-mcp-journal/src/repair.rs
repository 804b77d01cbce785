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

use std::path::Path;

use rusqlite::OptionalExtension;

use crate::ids::{EffectKind, TxnStatus};
use crate::journal::Journal;
use crate::process_table::ProcessTable;
use crate::proof::Intent;

mod change;
mod common;
mod editor;
mod file;
mod launch;
mod request;
use change::{ChangeCtx, repair_change};
use common::{Row, mismatch, read_proof};
use editor::repair_editor;
use file::{FileCtx, repair_file};
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
    let ctx = FileCtx {
        req,
        txn,
        kind,
        foreign,
        recorded_for: &recorded_for,
        reason: &reason_with_identity,
    };
    repair_file(&mut journal, &ctx, proof, &intent)
}

#[cfg(test)]
mod tests;
