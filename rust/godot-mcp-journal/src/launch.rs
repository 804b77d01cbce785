//! `process_launch` transactions: the durable launch receipt of a supervised
//! Godot process, its terminal result, and the reconciliation of survivors.
//!
//! # Lifecycle
//!
//! 1. [`Journal::begin_launch`] records the intent (nonce, endpoint, control
//!    socket inode, session directory) before anything is spawned: in the WAL,
//!    so it survives the death of the server; fsynced with the receipt.
//! 2. The supervisor spawns a *gated* process: it cannot run Godot until the
//!    supervisor releases it, which it does only after
//!    [`Journal::record_receipt`] made the receipt (pid, start time, process
//!    group) durable. A supervisor killed before that closes the gate pipe by
//!    dying, and the gated process exits without ever running Godot.
//! 3. [`Journal::finish_launch`] records the terminal result (exit code or
//!    signal, and the emptiness of the boundary) as `committed`.
//!
//! # Reconciliation of survivors
//!
//! An open launch found at startup is resolved from its receipt (see
//! `derive_launches`): a receipt from another boot signals nothing; pid and
//! start time (field 22 of `/proc/<pid>/stat`) say whether the process at the
//! recorded pid is the launched one, and if so its process group, nonce and
//! control-socket inode must all match too — anything less is a partial match,
//! quarantined and never signalled. An exact leader's group is killed; a gone
//! leader's group is enumerated and only members proven the launch's (nonce in
//! their environment or command line, started after the leader) are killed,
//! as are the launch's processes that left the group (a child Godot starts
//! with `OS.create_process` is in a session of its own, with the nonce in its
//! environment).
//! The boundary is then proven empty (or not); the session's output is
//! archived; the row becomes `compensated` (nothing of the launch runs any
//! more) or `quarantined`.
//!
//! On Windows the boundary is a named Job Object ([`Boundary::JobObject`], named
//! by [`job_name`] from the nonce); see `derive_launches` for how it is
//! reconciled.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::effect::{Deriver, Effect, parse_proof, proof_json};
use crate::ids::{EffectKind, TxnId, TxnStatus};
use crate::journal::{Journal, NewTxn, QuarantinedTxn, WriteGate, insert_txn, record_terminal};
use crate::process_table::{JobState, PinnedSignal, ProcStat, ProcessTable};

/// Where sessions keep their output while they run, inside the project state dir.
pub const SESSIONS_DIR: &str = "sessions";
/// Where output of ended (or reconciled) sessions is archived. Never pruned by
/// artifact retention: it is recovery evidence.
pub const ARCHIVE_DIR: &str = "archive";
/// The name of an export's partial output inside a session directory.
pub const EXPORT_PARTIAL: &str = "export.partial";

/// How long reconciliation waits for a killed boundary to empty.
const EMPTY_WAIT: Duration = Duration::from_secs(5);

/// The boundary that contains a launch. Serialized with its kind in `type`:
/// `{"type":"process_group","pgid":4242}` (Unix; the only form older builds
/// wrote, and still read as it was) or
/// `{"type":"job_object","name":"godot-mcp-launch-<nonce>"}` (Windows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Boundary {
    /// The weak locator: a process group whose id is the leader's pid.
    ProcessGroup {
        /// The process group id.
        pgid: i32,
    },
    /// A named Job Object (Windows) that the gated child joined before it ran
    /// any code; every process it starts joins it too.
    JobObject {
        /// The job's name in the session namespace (see [`job_name`]).
        name: String,
    },
}

/// The name of a launch's Job Object: derived from its nonce, so it is known
/// from the intent alone, and unguessable by other processes.
pub fn job_name(nonce: &str) -> String {
    format!("godot-mcp-launch-{nonce}")
}

/// The durable launch receipt: who the launched process is, exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchReceipt {
    /// The leader's pid.
    pub pid: i32,
    /// The leader's start time in its OS's unit (Linux: field 22 of
    /// `/proc/<pid>/stat`, clock ticks since boot; macOS: microseconds since the
    /// epoch; Windows: the creation `FILETIME`), see `godot_mcp_os::ProcStat`.
    pub start_time: u64,
    /// The leader's process group id (0 on Windows, which has none).
    pub pgid: i32,
    /// The boundary in use.
    pub boundary: Boundary,
    /// `/proc/sys/kernel/random/boot_id` when the receipt was taken. Pids, start
    /// times and process groups only mean something within one boot: a receipt
    /// from another boot never signals anything. Absent in receipts written by
    /// older builds (then the nonce alone identifies, see `derive_launches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
}

/// The environment variable every supervised launch carries its nonce in, so
/// that members of its process group that do not have the nonce on their
/// command line (children Godot spawns) can still be identified as the
/// launch's: children inherit the environment. Defined by the OS seam, whose
/// tables read it.
pub use godot_mcp_os::process_table::NONCE_ENV;

/// What a `process_launch` transaction intends, durable before the spawn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchIntent {
    /// `run_and_capture`, `play_scene`, `export_project`, `helper`, `editor`.
    pub purpose: String,
    /// The program run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// A random nonce, passed on the command line (after `--`).
    pub nonce: String,
    /// The control socket's path.
    pub endpoint: String,
    /// The control socket's inode.
    pub socket_inode: u64,
    /// The session directory (absolute) holding stdout, stderr and partial output.
    pub session_dir: String,
    /// Filled in once the process exists; durable before the start call answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<LaunchReceipt>,
}

/// How a launch ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ended_by", rename_all = "snake_case")]
pub enum LaunchEnd {
    /// Exited by itself.
    Exit {
        /// The exit code.
        code: i32,
    },
    /// Killed by a signal.
    Signal {
        /// The signal.
        signal: i32,
        /// Whether the server sent it (stop, timeout, reconciliation).
        sent_by_server: bool,
    },
    /// The gated process never ran Godot (the supervisor died before release).
    NeverStarted,
    /// Reconciliation killed the recorded boundary.
    TerminatedByReconcile {
        /// How many of the boundary's processes were still running.
        survivors: usize,
    },
    /// Reconciliation found the boundary already empty.
    GoneBeforeReconcile,
    /// The receipt was taken in another boot: every process of that boot has
    /// ended, and nothing was signalled.
    EndedWithBoot {
        /// The boot id the receipt recorded.
        recorded_boot: String,
    },
    /// The process at the receipt's pid is the launched process (same pid and
    /// start time), but other recorded identity fields no longer match: a
    /// partial match. Nothing was signalled; the row is quarantined.
    PartialIdentity {
        /// The fields that did not match (`process_group`, `nonce`,
        /// `control_socket`).
        mismatched: Vec<String>,
    },
    /// The leader was gone; the members of its group proven to be the launch's
    /// (nonce in their environment or command line, started after the leader)
    /// were killed, but others could not be identified and were left running.
    UnaccountedMembers {
        /// Proven members killed.
        killed: usize,
        /// Live members that could not be identified (never signalled).
        unaccounted: Vec<i32>,
    },
    /// This build cannot observe process identity on the OS it runs on: nothing
    /// was signalled, nothing is claimed gone; the row is quarantined.
    Unobservable,
    /// The boundary could not be observed — the recorded Job Object exists
    /// but could not be opened or listed, the live processes could not be
    /// listed, or this boot's id could not be read: nothing was signalled,
    /// nothing is claimed gone; the row is quarantined.
    BoundaryUnreadable {
        /// The OS's error.
        error: String,
    },
}

impl Effect for LaunchIntent {
    const TAG: &'static str = "process_launch";
    type Proof = LaunchProof;
    fn summary(proof: &LaunchProof) -> String {
        proof.summary()
    }
}

/// The proof of a `process_launch` transaction's terminal state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchProof {
    /// The receipt the proof was derived from (absent: never started).
    pub receipt: Option<LaunchReceipt>,
    /// How it ended.
    pub end: LaunchEnd,
    /// The boundary was enumerated after the end and had no live member.
    pub boundary_empty: bool,
    /// Where the session's output was archived, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_to: Option<String>,
    /// Who derived it.
    pub derived_by: Deriver,
    /// Live processes the boundary held when it was judged that could not be
    /// identified as the launch's or not (never signalled; they keep it from
    /// being proven empty), where `end` does not list them itself: the
    /// server's own stop, timeout or session end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unaccounted: Vec<i32>,
}

impl LaunchProof {
    /// One human line.
    pub fn summary(&self) -> String {
        let end = match &self.end {
            LaunchEnd::Exit { code } => format!("exited with code {code}"),
            LaunchEnd::Signal {
                signal,
                sent_by_server: true,
            } => format!("stopped by the server (signal {signal})"),
            LaunchEnd::Signal { signal, .. } => format!("killed by signal {signal}"),
            LaunchEnd::NeverStarted => "never started".into(),
            LaunchEnd::TerminatedByReconcile { survivors } => {
                format!("{survivors} survivor(s) terminated at startup")
            }
            LaunchEnd::GoneBeforeReconcile => "already gone at startup".into(),
            LaunchEnd::EndedWithBoot { recorded_boot } => {
                format!("ended with its boot ({recorded_boot}), nothing signalled")
            }
            LaunchEnd::PartialIdentity { mismatched } => format!(
                "partial identity match (same pid and start time, but {} differ), left running",
                mismatched.join(", ")
            ),
            LaunchEnd::UnaccountedMembers {
                killed,
                unaccounted,
            } => format!(
                "leader gone, {killed} proven member(s) killed, {} unidentified member(s) left running",
                unaccounted.len()
            ),
            LaunchEnd::Unobservable => {
                "process identity not observable on this OS, left as it was".into()
            }
            LaunchEnd::BoundaryUnreadable { error } => {
                format!("its Job Object could not be read ({error}), left as it was")
            }
        };
        let empty = if self.boundary_empty {
            "boundary proven empty".to_owned()
        } else if self.unaccounted.is_empty() {
            "boundary NOT proven empty".to_owned()
        } else {
            format!(
                "boundary NOT proven empty: {} unidentified process(es) left running (pids {:?})",
                self.unaccounted.len(),
                self.unaccounted
            )
        };
        format!("{end}, {empty}")
    }
}

/// A launch could not be recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// Startup reconciliation has not run.
    #[error("launch refused: the journal is not reconciled; restart the server")]
    NotReconciled,
    /// Quarantined transactions close the write gate.
    #[error("launch refused: the write gate is closed by quarantined transaction(s)")]
    GateClosed {
        /// The quarantined transactions.
        quarantined: Vec<TxnId>,
    },
    /// The journal failed.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
    /// An I/O error.
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl Journal {
    /// Records a launch intent before the caller spawns (written to the WAL; made
    /// durable on disk together with the receipt, before the gate is released).
    /// `needs_open_gate`: the launch writes disk (export, helper) and is refused
    /// while anything is quarantined; every launch is refused before reconciliation.
    pub fn begin_launch(
        &mut self,
        intent: &LaunchIntent,
        tool_family: &str,
        operation: &str,
        parent: Option<TxnId>,
        needs_open_gate: bool,
    ) -> Result<TxnId, LaunchError> {
        match &self.gate {
            WriteGate::Unreconciled => return Err(LaunchError::NotReconciled),
            WriteGate::Closed { quarantined } if needs_open_gate => {
                return Err(LaunchError::GateClosed {
                    quarantined: quarantined.iter().map(|q| q.transaction_id).collect(),
                });
            }
            _ => {}
        }
        let txn = TxnId::random()?;
        let json = intent_json(intent)?;
        // Committed without its own fsync: its WAL frames survive the death of
        // this process, and nothing of the launch can run before the receipt
        // (which *is* fsynced, and commits this row with it) releases the gate.
        // A machine crash before that kills the gated process as well.
        self.conn().pragma_update(None, "synchronous", "NORMAL")?;
        let inserted = insert_txn(
            self.conn(),
            &self.identity,
            &NewTxn {
                txn,
                kind: EffectKind::ProcessLaunch,
                operation,
                tool_family,
                state: TxnStatus::Open,
                intent_json: &json,
                proof_json: None,
                parent,
                idem: None,
            },
        );
        let restored = self.conn().pragma_update(None, "synchronous", "FULL");
        inserted?;
        restored?;
        Ok(txn)
    }

    /// Makes the receipt durable (full sync) in the open launch's intent.
    pub fn record_receipt(
        &mut self,
        txn: TxnId,
        intent: &LaunchIntent,
        receipt: &LaunchReceipt,
    ) -> Result<(), LaunchError> {
        let mut with = intent.clone();
        with.receipt = Some(receipt.clone());
        let json = intent_json(&with)?;
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE transactions SET intent_json = ?2 WHERE id = ?1 AND state = 'open'",
            )?
            .execute(params![txn.to_string(), json])?;
        if changed == 1 {
            Ok(())
        } else {
            Err(LaunchError::Journal(rusqlite::Error::QueryReturnedNoRows))
        }
    }

    /// Records a launch's terminal state; `committed` with a proof whose boundary
    /// is empty, else `quarantined` (which closes the gate).
    pub fn finish_launch(
        &mut self,
        txn: TxnId,
        proof: &LaunchProof,
    ) -> Result<TxnStatus, LaunchError> {
        let (status, reason) = if proof.boundary_empty {
            (TxnStatus::Committed, None)
        } else {
            (
                TxnStatus::Quarantined,
                Some(if proof.unaccounted.is_empty() {
                    "the launch's boundary could not be proven empty after it ended".to_owned()
                } else {
                    format!(
                        "the launch's boundary could not be proven empty after it ended: it \
                         holds {} process(es) that cannot be identified as the launch's or not \
                         (pids {:?}), left running",
                        proof.unaccounted.len(),
                        proof.unaccounted
                    )
                }),
            )
        };
        record_terminal(
            self.conn(),
            txn,
            TxnStatus::Open,
            status,
            Some(proof_json::<LaunchIntent>(proof)?),
            reason.as_deref(),
        )?;
        if status == TxnStatus::Quarantined {
            let q = QuarantinedTxn {
                transaction_id: txn,
                reason: reason.unwrap_or_default(),
            };
            match &mut self.gate {
                WriteGate::Closed { quarantined } => quarantined.push(q),
                gate => {
                    *gate = WriteGate::Closed {
                        quarantined: vec![q],
                    }
                }
            }
        }
        Ok(status)
    }

    /// The recorded proof of a terminal transaction (for composites).
    pub fn launch_proof(
        &self,
        txn: TxnId,
    ) -> Result<Option<(TxnStatus, LaunchProof)>, LaunchError> {
        let row: Option<(String, Option<String>)> = self
            .conn()
            .prepare_cached("SELECT state, proof_json FROM transactions WHERE id = ?1")?
            .query_row([txn.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        Ok(row.and_then(|(state, proof)| {
            let status = TxnStatus::parse(&state)?;
            parse_proof::<LaunchIntent>(proof.as_deref()?).map(|p| (status, p))
        }))
    }
}

impl Journal {
    /// The verdict on a composite's linked launch: `Ok` when it is committed
    /// with a clean terminal state (exit 0, boundary proven empty), re-read
    /// from the journal every time.
    pub fn linked_launch_verdict(&self, link: TxnId) -> Result<(), String> {
        match self.launch_proof(link) {
            Ok(Some((TxnStatus::Committed, p))) => match (&p.end, p.boundary_empty) {
                (LaunchEnd::Exit { code: 0 }, true) => Ok(()),
                (_, false) => Err("did not prove its boundary empty".into()),
                (end, true) => Err(format!("did not end cleanly ({end:?})")),
            },
            Ok(Some((status, _))) => Err(format!("is {status}, not committed")),
            Ok(None) => Err("has no launch proof".into()),
            Err(e) => Err(format!("could not be read: {e}")),
        }
    }

    /// A composite canonical write: `req` lands only if the linked helper
    /// launch's proof is clean now, and the file transaction records the link
    /// so reconciliation and repair re-validate it.
    pub fn write_file_linked(
        &mut self,
        req: crate::journal::FileWrite,
        link: TxnId,
    ) -> Result<crate::journal::TxnOutcome, crate::journal::WriteError> {
        if let Err(why) = self.linked_launch_verdict(link) {
            return Err(crate::journal::WriteError::Io {
                path: req.rel_path.clone(),
                source: io::Error::other(format!(
                    "composite refused: linked process_launch {link} {why}; nothing was written"
                )),
            });
        }
        self.write_file_with_link(req, Some((link, Journal::linked_launch_verdict)))
    }
}

fn intent_json(intent: &LaunchIntent) -> rusqlite::Result<String> {
    crate::effect::intent_json(intent)
}

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
fn identify_live(
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
fn still_dying(procs: &dyn ProcessTable, members: &mut GroupMembers, signalled: &[(i32, u64)]) {
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
fn remember_signalled(signalled: &mut Vec<(i32, u64)>, members: &GroupMembers) {
    for p in &members.proven {
        if !signalled.contains(p) {
            signalled.push(*p);
        }
    }
}

/// Signals the proven ones of `members` (see [`signal_proven_members`]).
fn signal_identified(
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
                    return plan_job(procs, this_boot.as_ref(), r, name);
                }
                Boundary::ProcessGroup { pgid } => *pgid,
            };
            if !procs.observable() {
                return Plan::Unobservable;
            }
            if let Some(plan) = plan_boot(this_boot.as_ref(), r.boot_id.as_ref()) {
                return plan;
            }
            let Some(live) = &live else {
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
            if members.proven.is_empty()
                && members.unaccounted.is_empty()
                && members.dying.is_empty()
            {
                return Plan::Gone;
            }
            let members = signal_identified(procs, r, &intent.nonce, members, PinnedSignal::Kill);
            remember_signalled(signalled, &members);
            Plan::KilledMembers(members.proven.len(), group)
        })
        .collect();

    // Wait (bounded) for every killed group to empty and every gated process
    // without a receipt to exit. `unaccounted[i]`: members that were never
    // signalled, so the boundary cannot become empty; no point waiting.
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
            let reason = match &plan {
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
            };
            let end = match plan {
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
            };
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

/// The bytes an interrupted export left behind, kept as evidence in the archive.
pub fn retained_export_bytes(state_dir: &Path) -> (usize, u64) {
    let Ok(dir) = fs::read_dir(state_dir.join(ARCHIVE_DIR)) else {
        return (0, 0);
    };
    dir.filter_map(|e| fs::metadata(e.ok()?.path().join(EXPORT_PARTIAL)).ok())
        .fold((0, 0), |(n, bytes), m| (n + 1, bytes + m.len()))
}
