//! The repair of a `process_launch` transaction.

use crate::ids::{EffectKind, TxnId, TxnStatus};
use crate::journal::Journal;
use crate::launch::{self, LaunchEnd, LaunchIntent, LaunchProof, LeaderMatch};
use crate::process_table::ProcessTable;
use crate::proof::{Deriver, Proof};

use super::common::{record_repair, report};
use super::request::{RepairOperation, RepairRefusal, RepairReport, RepairRequest};

/// A quarantined `process_launch`: a survivor whose boundary could not be proven empty.
/// Every proof field is re-derived from live process identity (pid, start time, process
/// group, nonce on the command line, control-socket inode) and the boundary's members
/// (the group's, and the launch's processes that left it: `launch::identify_escaped`):
///
/// - `terminate` kills the recorded process group — only when its leader is the
///   recorded process by exact identity, or gone (a reused pid leading its own group is
///   never touched) — waits, and records `compensated` once the boundary is proven empty;
/// - `acknowledge-safe-state` records `committed` when the boundary is already empty
///   (the launch ended on its own; no process outside the group carries, or may hide,
///   the nonce);
/// - `reconcile` and `--dry-run` report what the boundary holds and record nothing;
/// - `compensate` is refused: a process cannot be un-run.
pub(super) fn repair_launch(
    journal: &mut Journal,
    req: &RepairRequest,
    txn: TxnId,
    intent: crate::launch::LaunchIntent,
    reason: Option<&str>,
    procs: &dyn ProcessTable,
) -> Result<RepairReport, RepairRefusal> {
    if req.operation == RepairOperation::Compensate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind: EffectKind::ProcessLaunch,
        });
    }
    check_observable(&intent, procs)?;
    let live_members = live_members(procs, &intent)?;
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    let (to, proof) = launch_outcome(journal, req, txn, &intent, procs, &live_members, record)?;
    let proof = Proof::ProcessLaunch(proof);
    if record {
        let why = format!(
            "repaired by {} (was quarantined: {})",
            req.operation,
            reason.unwrap_or("no reason recorded")
        );
        record_repair(journal, txn, req.operation, to, &proof, proof.clone(), &why)?;
    }
    let actions = if req.operation == RepairOperation::Terminate && !live_members.is_empty() {
        vec![format!(
            "SIGKILL the recorded process group ({} live member(s))",
            live_members.len()
        )]
    } else {
        Vec::new()
    };
    Ok(report(req, to, record, proof, actions))
}

/// Refuses a launch this command cannot observe: a Job Object boundary (reconciled by
/// the next server through the job itself), or an OS whose process identity it cannot
/// read.
fn check_observable(intent: &LaunchIntent, procs: &dyn ProcessTable) -> Result<(), RepairRefusal> {
    // Only the weak locator keeps its members in a form this command can
    // enumerate on its own (docs/recovery.md): a Job Object is reconciled by the
    // next server through the job itself, never approximated here.
    if let Some(r) = &intent.receipt
        && let launch::Boundary::JobObject { name } = &r.boundary
    {
        return Err(RepairRefusal::Unproven(format!(
            "the launch's boundary is the Windows Job Object {name}, which this command does \
             not enumerate on its own; the next server for the project reconciles it at its \
             start, through the job itself"
        )));
    }
    if !procs.observable() {
        return Err(RepairRefusal::Unproven(
            "this build cannot observe process identity on this operating system, so no \
             launch can be proven terminated or safe here"
                .into(),
        ));
    }
    Ok(())
}

/// What the launch's boundary holds now, without touching it: every live member,
/// identified or not (empty for a receipt of another boot).
fn live_members(
    procs: &dyn ProcessTable,
    intent: &LaunchIntent,
) -> Result<Vec<i32>, RepairRefusal> {
    // What the boundary holds now, without touching it. The same identity rules
    // as reconciliation: a partial match (same pid and start time, another field
    // differs) is the launched process alive, never "gone", and nothing here can
    // prove it safe or kill it.
    let unlisted = || {
        RepairRefusal::Unproven(
            "the live processes cannot be listed, so the launch's boundary cannot be proven \
             empty or its members identified"
                .into(),
        )
    };
    let this_boot = procs.boot_id();
    Ok(match &intent.receipt {
        Some(launch::LaunchReceipt {
            boot_id: Some(recorded),
            ..
        }) if this_boot.is_none() => {
            return Err(RepairRefusal::Unproven(format!(
                "this boot's id cannot be read, so the receipt's boot {recorded} cannot be told \
                 apart from this one"
            )));
        }
        Some(r)
            if r.boot_id
                .as_ref()
                .is_some_and(|b| this_boot.as_ref() != Some(b)) =>
        {
            // Another boot: every process of the receipt's boot has ended.
            Vec::new()
        }
        Some(r) => match &r.boundary {
            // Refused above.
            launch::Boundary::JobObject { .. } => Vec::new(),
            &launch::Boundary::ProcessGroup { pgid } => {
                let group = match launch::match_leader(
                    procs,
                    r,
                    &intent.nonce,
                    &intent.endpoint,
                    intent.socket_inode,
                ) {
                    LeaderMatch::Partial { mismatched } => {
                        return Err(RepairRefusal::Unproven(format!(
                            "partial identity: pid {} is the launched process (same pid and \
                             start time) but its {} no longer match the receipt, so it can \
                             neither be terminated by proof nor acknowledged; stop it yourself \
                             once you have checked what it is (kill -9 {}), then run \
                             acknowledge-safe-state",
                            r.pid,
                            mismatched.join(", "),
                            r.pid
                        )));
                    }
                    // The pid leads another group with our number: ours is empty.
                    LeaderMatch::Other {
                        leads_recorded_group: true,
                    } => None,
                    _ => Some(pgid),
                };
                // Every live member counts, identified or not: the boundary
                // is empty only when the group has no member at all, and no
                // process that left it carries (or may hide) the nonce.
                let live = procs.live().ok_or_else(unlisted)?;
                let mut members: Vec<i32> = live
                    .iter()
                    .filter(|(_, s)| Some(s.pgrp) == group)
                    .map(|(pid, _)| *pid)
                    .collect();
                let escaped = launch::identify_escaped(procs, r, &intent.nonce, group, &live);
                members.extend(escaped.proven.iter().map(|(pid, _)| *pid));
                members.extend(escaped.unaccounted);
                members
            }
        },
        None => procs.nonce_holders(&intent.nonce).ok_or_else(unlisted)?,
    })
}

/// The state `req` records for the launch and its proof: `terminate` re-derives the
/// boundary as reconciliation does (killing proven members); the others judge the
/// members found live.
fn launch_outcome(
    journal: &Journal,
    req: &RepairRequest,
    txn: TxnId,
    intent: &LaunchIntent,
    procs: &dyn ProcessTable,
    live_members: &[i32],
    record: bool,
) -> Result<(TxnStatus, LaunchProof), RepairRefusal> {
    Ok(match req.operation {
        RepairOperation::Terminate if record => {
            if intent.receipt.is_none() {
                return Err(RepairRefusal::Unproven(
                    "the launch has no receipt: there is no recorded identity to terminate by"
                        .into(),
                ));
            }
            let state_dir = journal.state_dir.clone();
            let derived = launch::derive_launches(procs, &state_dir, &[(txn, intent.clone())]);
            match derived.into_iter().next() {
                Some((TxnStatus::Compensated, Some(mut proof), _)) => {
                    proof.derived_by = Deriver::Repair;
                    (TxnStatus::Compensated, proof)
                }
                Some((_, _, why)) => {
                    return Err(RepairRefusal::Unproven(why.unwrap_or_else(|| {
                        "the boundary could not be proven empty".into()
                    })));
                }
                None => return Err(RepairRefusal::Unproven("nothing was derived".into())),
            }
        }
        RepairOperation::AcknowledgeSafeState if !live_members.is_empty() => {
            return Err(RepairRefusal::Unproven(format!(
                "the launch's boundary still holds {} live process(es); terminate it first",
                live_members.len()
            )));
        }
        op => {
            let to = if op == RepairOperation::Terminate || !live_members.is_empty() {
                TxnStatus::Compensated
            } else {
                TxnStatus::Committed
            };
            let proof = LaunchProof {
                receipt: intent.receipt.clone(),
                end: if live_members.is_empty() {
                    LaunchEnd::GoneBeforeReconcile
                } else {
                    LaunchEnd::TerminatedByReconcile {
                        survivors: live_members.len(),
                    }
                },
                boundary_empty: live_members.is_empty(),
                archived_to: None,
                derived_by: Deriver::Repair,
                unaccounted: Vec::new(),
            };
            (to, proof)
        }
    })
}
