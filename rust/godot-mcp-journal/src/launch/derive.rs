//! Reconciling the launches a previous process left open (see [`super`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::effect::Deriver;
use crate::ids::{TxnId, TxnStatus};
use crate::process_table::{JobState, PinnedSignal, ProcStat, ProcessTable};

use super::boundary::{
    JobView, LeaderMatch, archive_session, identify_job_members, identify_live, match_leader,
    remember_signalled, signal_identified, still_dying,
};
use super::types::{Boundary, EMPTY_WAIT, LaunchEnd, LaunchIntent, LaunchProof, LaunchReceipt};

/// The outcome re-derived for one open launch.
pub(crate) type LaunchDerived = (TxnStatus, Option<LaunchProof>, Option<String>);

/// What reconciliation decided for one launch before waiting.
enum Plan {
    /// No receipt: wait for every process carrying the nonce to exit.
    NoReceipt,
    /// The receipt is from another boot: nothing of it runs, nothing is signalled.
    OtherBoot(String),
    /// Boundary already empty, or the pid leads someone else's group now.
    Gone,
    /// The leader is the launched process but not by full identity: untouched.
    Partial(Vec<String>),
    /// Proven members (the exact leader among them, and the launch's processes
    /// that left the group) were killed, waiting; unaccounted members are never
    /// signalled and keep the boundary from being empty. The group looked at
    /// (`None`: its number leads another group now; only what left it is).
    KilledMembers(usize, Option<i32>),
    /// This OS's process table cannot observe identity: nothing is signalled and
    /// nothing is claimed gone.
    Unobservable,
    /// Every member of the Job Object was proven the launch's and the job was
    /// terminated; waiting for it to empty.
    KilledJob(String, usize),
    /// The Job Object holds members not proven the launch's: nothing was
    /// terminated (a job is terminated as a whole).
    JobUnaccounted(Vec<i32>),
    /// The Job Object could not be opened or listed, or the live processes,
    /// or this boot's id: nothing was signalled.
    Unreadable(String),
}

/// The plan for a receipt that recorded `recorded` as its boot: `None` when
/// this is that boot. A boot id this process cannot read proves no other boot.
fn plan_boot(this_boot: Option<&String>, recorded: Option<&String>) -> Option<Plan> {
    let recorded = recorded?;
    match this_boot {
        Some(this) if this == recorded => None,
        Some(_) => Some(Plan::OtherBoot(recorded.clone())),
        None => Some(Plan::Unreadable(format!(
            "this boot's id cannot be read, so the receipt's boot {recorded} cannot be told \
             apart from this one"
        ))),
    }
}

/// The plan for a launch bounded by the Job Object `name` (Windows).
fn plan_job(
    procs: &dyn ProcessTable,
    this_boot: Option<&String>,
    r: &LaunchReceipt,
    name: &str,
) -> Plan {
    if !procs.observes_jobs() {
        return Plan::Unobservable;
    }
    if let Some(plan) = plan_boot(this_boot, r.boot_id.as_ref()) {
        return plan;
    }
    match identify_job_members(procs, r, name) {
        JobView::Gone => Plan::Gone,
        JobView::Unreadable(e) => Plan::Unreadable(e),
        JobView::Members(m) if !m.unaccounted.is_empty() => Plan::JobUnaccounted(m.unaccounted),
        JobView::Members(m) if m.proven.is_empty() => Plan::Gone,
        JobView::Members(m) => {
            procs.terminate_job(name);
            Plan::KilledJob(name.to_owned(), m.proven.len())
        }
    }
}

/// Re-derives every open launch at startup, together: terminate survivors by
/// exact identity, prove each boundary empty, archive output. One `/proc`
/// snapshot per wait round, whatever the number of launches.
///
/// - A receipt from another boot never signals anything (a reboot ended it).
/// - Pid and start time say whether the process at the recorded pid is the
///   launched one. If it is, every other recorded field (process group, nonce,
///   control-socket inode) must match too; anything less is a partial match:
///   quarantined, never signalled, never "gone".
/// - Whether the exact leader is alive or gone (or its pid reused outside the
///   group): the group is enumerated, members carrying the nonce and started
///   no earlier than the leader are killed one by one through a pidfd, and any
///   other member is left running and quarantines the row. The group is never
///   signalled as a whole. So are the launch's processes that left the group
///   ([`identify_escaped`]: the nonce in their environment, started no earlier
///   than the leader), killed the same way; one of this user whose environment
///   cannot be read quarantines the row. Emptiness is asserted only after
///   enumerating.
/// - A Job Object (Windows) is opened by its recorded name. No such job
///   (`ERROR_FILE_NOT_FOUND`, and only that) means no member is left: the job
///   killed its processes when its last handle closed. Otherwise its members are
///   identified by pid and creation time ([`identify_job_members`]); only when
///   every one is proven the launch's is the job terminated, then listed again
///   until empty. A member not proven, or a job that cannot be opened or
///   listed, quarantines the row with nothing terminated.
pub(crate) fn derive_launches(
    procs: &dyn ProcessTable,
    state_dir: &Path,
    rows: &[(TxnId, LaunchIntent)],
) -> Vec<LaunchDerived> {
    let this_boot = procs.boot_id();
    let live = procs.live();
    // Per row: the proven processes signalled so far (see `still_dying`).
    let mut signalled: Vec<Vec<(i32, u64)>> = vec![Vec::new(); rows.len()];
    let plans: Vec<Plan> = rows
        .iter()
        .zip(signalled.iter_mut())
        .map(|((_, intent), signalled)| {
            plan_row(
                procs,
                this_boot.as_ref(),
                live.as_deref(),
                intent,
                signalled,
            )
        })
        .collect();

    let (empty, unaccounted) = wait_empty(procs, rows, &plans, &mut signalled);

    rows.iter()
        .zip(plans)
        .zip(empty.into_iter().zip(unaccounted))
        .map(|(((txn, intent), plan), (empty, unaccounted))| {
            let session = PathBuf::from(&intent.session_dir);
            // A partial match may still be running from its session directory:
            // leave it where it is.
            let archived_to = if session.exists()
                && !matches!(
                    plan,
                    Plan::Partial(_)
                        | Plan::Unobservable
                        | Plan::JobUnaccounted(_)
                        | Plan::Unreadable(_)
                ) {
                archive_session(state_dir, &session, *txn)
                    .ok()
                    .map(|p| p.display().to_string())
            } else {
                None
            };
            let pid = intent.receipt.as_ref().map_or(0, |r| r.pid);
            let reason = reason(&plan, pid, &unaccounted);
            let end = end(plan, unaccounted);
            let proof = LaunchProof {
                receipt: intent.receipt.clone(),
                end,
                boundary_empty: empty,
                archived_to,
                derived_by: Deriver::Reconcile,
                unaccounted: Vec::new(),
            };
            if empty {
                (TxnStatus::Compensated, Some(proof), None)
            } else {
                (TxnStatus::Quarantined, Some(proof), Some(reason))
            }
        })
        .collect()
}

/// The plan for one open launch, its proven processes signalled (remembered in
/// `signalled`); `live` is the process list read once for every row.
fn plan_row(
    procs: &dyn ProcessTable,
    this_boot: Option<&String>,
    live: Option<&[(i32, ProcStat)]>,
    intent: &LaunchIntent,
    signalled: &mut Vec<(i32, u64)>,
) -> Plan {
    let Some(r) = &intent.receipt else {
        // A gated child without a receipt is identified by the nonce
        // on its command line, which only an observable table reads.
        return if procs.observable() {
            Plan::NoReceipt
        } else {
            Plan::Unobservable
        };
    };
    let pgid = match &r.boundary {
        Boundary::JobObject { name } => {
            return plan_job(procs, this_boot, r, name);
        }
        Boundary::ProcessGroup { pgid } => *pgid,
    };
    if !procs.observable() {
        return Plan::Unobservable;
    }
    if let Some(plan) = plan_boot(this_boot, r.boot_id.as_ref()) {
        return plan;
    }
    let Some(live) = live else {
        return Plan::Unreadable("the live processes cannot be listed".into());
    };
    let group = match match_leader(
        procs,
        r,
        &intent.nonce,
        &intent.endpoint,
        intent.socket_inode,
    ) {
        LeaderMatch::Partial { mismatched } => return Plan::Partial(mismatched),
        // The pid was reused by a process leading a group with our pgid
        // number: that group is its own (a pgid is not reused while any
        // member lives, so ours is empty). Never touch it; only what
        // left ours is looked for.
        LeaderMatch::Other {
            leads_recorded_group: true,
        } => None,
        LeaderMatch::Exact | LeaderMatch::Gone | LeaderMatch::Other { .. } => Some(pgid),
    };
    // One rule whether the leader lives or not: only processes proven
    // the launch's are signalled (the exact leader is one, and so is a
    // child that left the group); the group is never signalled as a
    // whole.
    let members = identify_live(procs, r, &intent.nonce, group, live);
    if members.proven.is_empty() && members.unaccounted.is_empty() && members.dying.is_empty() {
        return Plan::Gone;
    }
    let members = signal_identified(procs, r, &intent.nonce, members, PinnedSignal::Kill);
    remember_signalled(signalled, &members);
    Plan::KilledMembers(members.proven.len(), group)
}

/// Waits (bounded) for every killed group to empty and every gated process without
/// a receipt to exit: per row, whether its boundary was proven empty, and the members
/// that were never signalled (so it cannot become empty).
fn wait_empty(
    procs: &dyn ProcessTable,
    rows: &[(TxnId, LaunchIntent)],
    plans: &[Plan],
    signalled: &mut [Vec<(i32, u64)>],
) -> (Vec<bool>, Vec<Vec<i32>>) {
    // `unaccounted[i]`: members that were never signalled, so the boundary cannot
    // become empty; no point waiting.
    let start = Instant::now();
    let mut empty = vec![false; rows.len()];
    let mut settled = vec![false; rows.len()];
    let mut unaccounted: Vec<Vec<i32>> = vec![Vec::new(); rows.len()];
    loop {
        // `None`: the processes cannot be listed; no boundary is proven
        // empty from that.
        let live = procs.live();
        let need_nonces = plans
            .iter()
            .zip(&settled)
            .any(|(p, s)| matches!(p, Plan::NoReceipt) && !s);
        let holders: Option<Vec<i32>> = match &live {
            Some(l) if need_nonces => Some(l.iter().map(|(pid, _)| *pid).collect()),
            Some(_) => Some(Vec::new()),
            None => None,
        };
        for (i, plan) in plans.iter().enumerate() {
            if settled[i] {
                continue;
            }
            let (is_empty, done) = match plan {
                Plan::Gone | Plan::OtherBoot(_) => (true, true),
                Plan::Partial(_)
                | Plan::Unobservable
                | Plan::JobUnaccounted(_)
                | Plan::Unreadable(_) => (false, true),
                Plan::KilledJob(name, _) => match procs.job_members(name) {
                    JobState::Gone => (true, true),
                    JobState::Members(pids) if pids.is_empty() => (true, true),
                    JobState::Members(_) => (false, false),
                    JobState::Unreadable(_) => (false, true),
                },
                Plan::KilledMembers(_, group) => {
                    let Some(r) = &rows[i].1.receipt else {
                        continue;
                    };
                    let Some(live) = &live else {
                        empty[i] = false;
                        settled[i] = true;
                        continue;
                    };
                    // Re-identify: a proven member may have forked before
                    // its SIGKILL landed; its child is proven the same way.
                    let nonce = &rows[i].1.nonce;
                    let mut members = identify_live(procs, r, nonce, *group, live);
                    still_dying(procs, &mut members, &signalled[i]);
                    let now = signal_identified(procs, r, nonce, members, PinnedSignal::Kill);
                    remember_signalled(&mut signalled[i], &now);
                    if now.empty() {
                        (true, true)
                    } else if now.unaccounted.is_empty() {
                        (false, false)
                    } else {
                        unaccounted[i] = now.unaccounted;
                        (false, true)
                    }
                }
                Plan::NoReceipt => match &holders {
                    Some(holders) => {
                        let e = !holders
                            .iter()
                            .any(|pid| procs.cmdline_contains(*pid, &rows[i].1.nonce));
                        (e, e)
                    }
                    None => (false, true),
                },
            };
            empty[i] = is_empty;
            settled[i] = done;
        }
        if settled.iter().all(|s| *s) || start.elapsed() > EMPTY_WAIT {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (empty, unaccounted)
}

/// Why a launch whose boundary was not proven empty is quarantined.
fn reason(plan: &Plan, pid: i32, unaccounted: &[i32]) -> String {
    match plan {
        Plan::Partial(m) => format!(
            "partial identity: the process at pid {pid} is the launched process (same \
             pid and start time) but its {} no longer match the receipt; it was not \
             signalled and may still be running",
            m.join(", ")
        ),
        Plan::KilledMembers(..) if !unaccounted.is_empty() => format!(
            "the boundary of the leader (pid {pid}: its process group, and the \
             processes of this user that left it) holds {} process(es) that cannot \
             be identified as the launch's or not (pids {:?}); they were not \
             signalled",
            unaccounted.len(),
            unaccounted
        ),
        Plan::NoReceipt => {
            "launch without a receipt: a process carrying its nonce did not exit".into()
        }
        Plan::Unobservable => "this build cannot observe process identity on this \
            operating system: the launch was not signalled and may still be running"
            .into(),
        Plan::JobUnaccounted(pids) => format!(
            "the launch's Job Object holds {} member(s) created before its leader (pid \
             {pid}), so not proven the launch's (pids {pids:?}); the job was not \
             terminated and may still be running",
            pids.len()
        ),
        Plan::Unreadable(e) => format!(
            "the launch's boundary could not be observed ({e}); nothing was signalled \
             and it may still be running"
        ),
        Plan::KilledJob(name, _) => format!(
            "survivor: the Job Object {name} of pid {pid} could not be proven empty after \
             it was terminated"
        ),
        _ => format!(
            "survivor: the process group of pid {pid} could not be proven empty after SIGKILL"
        ),
    }
}

/// How the launch ended, as its proof records it.
fn end(plan: Plan, unaccounted: Vec<i32>) -> LaunchEnd {
    match plan {
        Plan::NoReceipt => LaunchEnd::NeverStarted,
        Plan::Gone => LaunchEnd::GoneBeforeReconcile,
        Plan::OtherBoot(recorded_boot) => LaunchEnd::EndedWithBoot { recorded_boot },
        Plan::Partial(mismatched) => LaunchEnd::PartialIdentity { mismatched },
        Plan::Unobservable => LaunchEnd::Unobservable,
        Plan::KilledMembers(killed, _) if !unaccounted.is_empty() => {
            LaunchEnd::UnaccountedMembers {
                killed,
                unaccounted,
            }
        }
        Plan::KilledMembers(n, _) => LaunchEnd::TerminatedByReconcile { survivors: n },
        Plan::KilledJob(_, n) => LaunchEnd::TerminatedByReconcile { survivors: n },
        Plan::JobUnaccounted(unaccounted) => LaunchEnd::UnaccountedMembers {
            killed: 0,
            unaccounted,
        },
        Plan::Unreadable(error) => LaunchEnd::BoundaryUnreadable { error },
    }
}
