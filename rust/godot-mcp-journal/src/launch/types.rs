//! A launch's words: its directories, its boundary, the receipt, the stored intent and
//! proof ([`LaunchIntent`] implements [`crate::effect::Effect`]), the error.

use std::io;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::effect::{Deriver, Effect};
use crate::ids::TxnId;

/// Where sessions keep their output while they run, inside the project state dir.
pub const SESSIONS_DIR: &str = "sessions";
/// Where output of ended (or reconciled) sessions is archived. Never pruned by
/// artifact retention: it is recovery evidence.
pub const ARCHIVE_DIR: &str = "archive";
/// The name of an export's partial output inside a session directory.
pub const EXPORT_PARTIAL: &str = "export.partial";

/// How long reconciliation waits for a killed boundary to empty.
pub(super) const EMPTY_WAIT: Duration = Duration::from_secs(5);

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
