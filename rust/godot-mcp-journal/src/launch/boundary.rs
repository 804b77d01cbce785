//! A launch's processes through the process-table seam: identifying the leader and the
//! members of its boundary, signalling only proven members, proving the boundary empty,
//! archiving the session.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ids::TxnId;
use crate::process_table::{JobState, PinnedSignal, ProcStat, ProcessTable};

use super::types::{ARCHIVE_DIR, Boundary, EXPORT_PARTIAL, LaunchReceipt};

// ---------------------------------------------------------------------------------
// Process identity, through the process-table seam
// ---------------------------------------------------------------------------------

/// How a recorded leader compares with the live process at its pid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeaderMatch {
    /// No live process has that pid.
    Gone,
    /// Every recorded field matches: it is the survivor.
    Exact,
    /// The same process (pid and start time match), but other recorded fields
    /// do not: a partial match. It is never signalled and never "gone".
    Partial {
        /// The fields that differ: `process_group`, `nonce`, `control_socket`.
        mismatched: Vec<String>,
    },
    /// Another process has the pid now (its start time differs).
    Other {
        /// The other process leads its own group with our pgid number.
        leads_recorded_group: bool,
    },
}

/// Compares the live process at the receipt's pid with the receipt. Pid and
/// start time say whether it is the same process; the process group, the
/// nonce and the control socket's inode must then all match for `Exact`.
pub fn match_leader(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    endpoint: &str,
    inode: u64,
) -> LeaderMatch {
    let Some(stat) = procs.stat(receipt.pid) else {
        return LeaderMatch::Gone;
    };
    if !procs.is_live(receipt.pid, &stat) {
        return LeaderMatch::Gone;
    }
    if stat.start_time != receipt.start_time {
        return LeaderMatch::Other {
            leads_recorded_group: stat.pgrp == receipt.pgid,
        };
    }
    let mut mismatched = Vec::new();
    if stat.pgrp != receipt.pgid {
        mismatched.push("process_group".to_owned());
    }
    if !procs.carries_nonce(receipt.pid, nonce) {
        mismatched.push("nonce".to_owned());
    }
    if !godot_mcp_os::fs::path_id(Path::new(endpoint)).is_ok_and(|id| id.ino == inode) {
        mismatched.push("control_socket".to_owned());
    }
    if mismatched.is_empty() {
        LeaderMatch::Exact
    } else {
        LeaderMatch::Partial { mismatched }
    }
}

/// The live members of a launch's process group, sorted by whether they are
/// proven to be the launch's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupMembers {
    /// Proven members: pid and start time.
    pub proven: Vec<(i32, u64)>,
    /// Live members that carry no proof of belonging to the launch.
    pub unaccounted: Vec<i32>,
    /// Members inside their exit (killed, say): no longer able to show a
    /// nonce, running no more code, still in the group until the exit
    /// finishes. Neither signalled nor held against the boundary: waited for.
    pub dying: Vec<i32>,
}

impl GroupMembers {
    /// Nothing of the group is left but members that are not the launch's.
    pub fn settled(&self) -> bool {
        self.proven.is_empty() && self.dying.is_empty()
    }

    /// Nothing of the group is left at all that could be the launch's: settled,
    /// and no member unidentified. What proves a boundary empty.
    pub fn empty(&self) -> bool {
        self.settled() && self.unaccounted.is_empty()
    }
}

/// Enumerates group `pgid` and identifies each member: it is the launch's when
/// it carries the nonce (environment or command line) and started no earlier
/// than the recorded leader (a child cannot predate its parent).
/// A member inside its exit can no longer show a nonce (its memory is
/// released before it becomes a zombie): it is `dying`, waited for.
/// The boundary also holds what left the group ([`identify_escaped`]): a
/// process group is not a wall, and Godot's `OS.create_process` puts every
/// child it starts in a session (and group) of its own.
/// For a Job Object see [`identify_job_members`].
pub fn identify_members(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
) -> GroupMembers {
    let pgid = match &receipt.boundary {
        Boundary::ProcessGroup { pgid } => *pgid,
        Boundary::JobObject { name } => {
            return match identify_job_members(procs, receipt, name) {
                JobView::Gone => GroupMembers::default(),
                JobView::Members(m) => m,
                // Nothing can be said of its members: one unaccounted entry,
                // the leader's pid, keeps the boundary from being proven empty.
                JobView::Unreadable(_) => GroupMembers {
                    unaccounted: vec![receipt.pid],
                    ..GroupMembers::default()
                },
            };
        }
    };
    match procs.live() {
        Some(live) => identify_live(procs, receipt, nonce, Some(pgid), &live),
        // Nothing can be said of its members: the leader's pid, unaccounted,
        // keeps the boundary from being proven empty.
        None => GroupMembers {
            unaccounted: vec![receipt.pid],
            ..GroupMembers::default()
        },
    }
}

/// [`identify_members`] of a process-group launch from one snapshot of the
/// live processes: the members of group `pgid` ([`identify_listed`]; `None`:
/// the group is not the launch's any more, its number leads another one) and
/// the launch's processes outside it ([`identify_escaped`]).
pub(super) fn identify_live(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    pgid: Option<i32>,
    live: &[(i32, ProcStat)],
) -> GroupMembers {
    let mut out = match pgid {
        Some(pgid) => {
            let listed: Vec<i32> = live
                .iter()
                .filter(|(_, s)| s.pgrp == pgid)
                .map(|(pid, _)| *pid)
                .collect();
            identify_listed(procs, receipt, nonce, &listed)
        }
        None => GroupMembers::default(),
    };
    let escaped = identify_escaped(procs, receipt, nonce, pgid, live);
    out.proven.extend(escaped.proven);
    out.unaccounted.extend(escaped.unaccounted);
    out
}

/// The launch's processes outside its process group: every live process not
/// in group `pgid` that started no earlier than the recorded leader and carries
/// the nonce (children inherit the environment, whatever group or session they
/// put themselves in) is proven the launch's; one of this server's real user
/// whose environment cannot be read ([`ProcessTable::environ_hidden`]) may be,
/// and is unaccounted (never signalled, it keeps the boundary from being proven
/// empty) unless its ancestry shows it is not the launch's (`born_outside`).
pub fn identify_escaped(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    pgid: Option<i32>,
    live: &[(i32, ProcStat)],
) -> GroupMembers {
    let mut out = GroupMembers::default();
    for (pid, stat) in live {
        if Some(stat.pgrp) == pgid || stat.start_time < receipt.start_time {
            continue;
        }
        if procs.carries_nonce(*pid, nonce) {
            out.proven.push((*pid, stat.start_time));
        } else if procs.environ_hidden(*pid) && !born_outside(procs, *pid, receipt, nonce) {
            out.unaccounted.push(*pid);
        }
    }
    out
}

/// Whether `pid`'s ancestry proves it is not the launch's: walking up its parents, one
/// (not the leader, not pid 1) that started before the leader and carries no nonce is
/// reached before the leader or a process carrying the nonce. Every process a launch
/// starts descends from its leader while its parents live, so a set-user-ID program
/// or a sandboxed browser process the user started meanwhile (unreadable, and
/// otherwise counted against the boundary) is told apart. An orphan (its parent pid 1,
/// or gone) and a chain the OS does not show prove nothing. Not told apart: a child of
/// the launch that was reparented to a subreaper older than the leader (a user
/// manager) and whose environment cannot be read (docs/platforms.md).
fn born_outside(procs: &dyn ProcessTable, pid: i32, receipt: &LaunchReceipt, nonce: &str) -> bool {
    let mut at = pid;
    for _ in 0..64 {
        let Some(parent) = procs.parent(at) else {
            return false;
        };
        if parent <= 1 || parent == receipt.pid || procs.carries_nonce(parent, nonce) {
            return false;
        }
        let Some(stat) = procs.stat(parent) else {
            return false;
        };
        if stat.start_time < receipt.start_time {
            return true;
        }
        at = parent;
    }
    false
}

/// [`identify_members`] of a process group whose members `listed` were
/// enumerated by the caller (one snapshot for many launches).
fn identify_listed(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    listed: &[i32],
) -> GroupMembers {
    let mut out = GroupMembers::default();
    for &pid in listed {
        let Some(stat) = procs.stat(pid) else {
            continue;
        };
        if stat.start_time >= receipt.start_time && procs.carries_nonce(pid, nonce) {
            out.proven.push((pid, stat.start_time));
        } else if stat.exiting {
            out.dying.push(pid);
        } else {
            out.unaccounted.push(pid);
        }
    }
    out
}

/// The one rule by which anything of a launch is ever signalled — by the
/// server's own stop, timeout and cancel as by reconciliation and repair:
/// the boundary is enumerated, each member identified ([`identify_members`]),
/// and only the proven ones are sent `signal`, each through a pinned handle
/// after re-checking its identity. The process group is never signalled as a
/// whole: once the leader is reaped and the group empties, its id can name
/// someone else's group. A Job Object (held open by its handle, so never
/// someone else's) is terminated whole, only when every member is proven,
/// whatever the signal. Returns what the boundary held, identified.
pub fn signal_proven_members(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    signal: PinnedSignal,
) -> GroupMembers {
    let members = identify_members(procs, receipt, nonce);
    signal_identified(procs, receipt, nonce, members, signal)
}

/// Empties a launch's boundary: each round sends `signal` to its proven
/// members ([`signal_proven_members`]; with `None`, only looks), until nothing
/// of the launch is left in it or `limit` has passed, and returns the last look.
/// A member not identified in one round is never signalled, and is looked at
/// again in the next: a child in the middle of its exec shows no command line
/// or environment for a moment, and is the launch's once it does. One still
/// unidentified at the end keeps the boundary from being proven empty.
pub fn empty_boundary(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    signal: Option<PinnedSignal>,
    limit: std::time::Duration,
) -> GroupMembers {
    let start = std::time::Instant::now();
    // Every proven process signalled so far: one still live (same start time)
    // that no longer shows the nonce is inside its exit, and is waited for.
    // (Inside the group `identify_listed` sees that from its flags; outside it,
    // a dying process is told from any other by this record alone.)
    let mut signalled: Vec<(i32, u64)> = Vec::new();
    loop {
        let mut members = match signal {
            Some(signal) => signal_proven_members(procs, receipt, nonce, signal),
            None => identify_members(procs, receipt, nonce),
        };
        still_dying(procs, &mut members, &signalled);
        if signal.is_some() {
            remember_signalled(&mut signalled, &members);
        }
        if members.empty() || start.elapsed() > limit {
            return members;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Adds to `members.dying` each of `signalled` (proven processes signalled
/// earlier) still live with the same start time that this look did not list:
/// it no longer shows the nonce because it is inside its exit.
pub(super) fn still_dying(
    procs: &dyn ProcessTable,
    members: &mut GroupMembers,
    signalled: &[(i32, u64)],
) {
    for &(pid, start_time) in signalled {
        let listed = members.proven.iter().any(|(p, _)| *p == pid)
            || members.dying.contains(&pid)
            || members.unaccounted.contains(&pid);
        if !listed
            && procs
                .stat(pid)
                .is_some_and(|s| s.start_time == start_time && procs.is_live(pid, &s))
        {
            members.dying.push(pid);
        }
    }
}

/// Adds the proven ones of `members` (just signalled) to `signalled`.
pub(super) fn remember_signalled(signalled: &mut Vec<(i32, u64)>, members: &GroupMembers) {
    for p in &members.proven {
        if !signalled.contains(p) {
            signalled.push(*p);
        }
    }
}

/// Signals the proven ones of `members` (see [`signal_proven_members`]).
pub(super) fn signal_identified(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    nonce: &str,
    members: GroupMembers,
    signal: PinnedSignal,
) -> GroupMembers {
    if let Boundary::JobObject { name } = &receipt.boundary {
        if members.unaccounted.is_empty() && !members.proven.is_empty() {
            procs.terminate_job(name);
        }
        return members;
    }
    for (pid, start) in &members.proven {
        procs.signal_pinned(*pid, *start, nonce, signal);
    }
    members
}

/// What a launch's Job Object holds, its members identified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobView {
    /// No job of that name exists (`ERROR_FILE_NOT_FOUND`): its last handle
    /// closed, which killed every process it held. No member is left.
    Gone,
    /// The job's live members: `proven` (created no earlier than the recorded
    /// leader) and `unaccounted` (created earlier, or whose creation time
    /// cannot be read while it is still listed).
    Members(GroupMembers),
    /// The job could not be opened or listed.
    Unreadable(String),
}

/// Lists job `name` and identifies each member by pid and creation time
/// against the receipt. The job exists only from just before the leader was
/// created, and nothing but the launch's own processes joins it (a child joins
/// its parent's job), so a member created no earlier than the leader is the
/// launch's; one created earlier was put there by someone else and is never
/// terminated. A member whose identity cannot be read is unaccounted unless a
/// second listing shows it gone (it exited in between).
pub fn identify_job_members(
    procs: &dyn ProcessTable,
    receipt: &LaunchReceipt,
    name: &str,
) -> JobView {
    let pids = match procs.job_members(name) {
        JobState::Gone => return JobView::Gone,
        JobState::Unreadable(e) => return JobView::Unreadable(e),
        JobState::Members(pids) => pids,
    };
    let mut out = GroupMembers::default();
    let mut unread = Vec::new();
    for pid in pids {
        match procs.stat(pid) {
            Some(s) if !procs.is_live(pid, &s) => {}
            Some(s) if s.start_time >= receipt.start_time => out.proven.push((pid, s.start_time)),
            Some(_) => out.unaccounted.push(pid),
            None => unread.push(pid),
        }
    }
    if !unread.is_empty() {
        match procs.job_members(name) {
            JobState::Members(now) => {
                out.unaccounted
                    .extend(unread.into_iter().filter(|p| now.contains(p)));
            }
            JobState::Gone => {}
            JobState::Unreadable(e) => return JobView::Unreadable(e),
        }
    }
    JobView::Members(out)
}

/// Moves a session directory into the archive; returns the new path.
pub fn archive_session(state_dir: &Path, session_dir: &Path, txn: TxnId) -> io::Result<PathBuf> {
    let archive = state_dir.join(ARCHIVE_DIR);
    fs::create_dir_all(&archive)?;
    let to = archive.join(txn.to_string());
    match fs::rename(session_dir, &to) {
        Ok(()) => Ok(to),
        Err(e) if e.kind() == io::ErrorKind::NotFound && to.exists() => Ok(to),
        Err(e) => Err(e),
    }
}

/// The bytes an interrupted export left behind, kept as evidence in the archive.
pub fn retained_export_bytes(state_dir: &Path) -> (usize, u64) {
    let Ok(dir) = fs::read_dir(state_dir.join(ARCHIVE_DIR)) else {
        return (0, 0);
    };
    dir.filter_map(|e| fs::metadata(e.ok()?.path().join(EXPORT_PARTIAL)).ok())
        .fold((0, 0), |(n, bytes), m| (n + 1, bytes + m.len()))
}
