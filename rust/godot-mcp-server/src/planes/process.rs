//! The process plane: every launch of Godot is a supervised `process_launch`
//! transaction whose durable receipt is in the journal before the start call
//! answers.
//!
//! A launch runs in five steps (see `godot_mcp_journal::launch`):
//!
//! 1. a session directory, a control socket (its inode) and a nonce; the intent
//!    is recorded durably;
//! 2. a *gated* process is spawned inside its boundary (see `host`): on Unix,
//!    in a new process group, `/bin/sh` blocked on reading one line from a
//!    pipe only the supervisor holds, then `exec`ing Godot; on Windows, Godot
//!    created suspended and put in a new named Job Object. Its stdout and
//!    stderr go to files in the session directory, so a dead server never
//!    blocks or kills it by a broken pipe;
//! 3. the receipt (pid, start time, boundary) is recorded durably;
//! 4. the gate is released: Godot runs;
//! 5. the start call answers.
//!
//! A server killed between 1 and 4 leaves a gated shell that reads EOF from its
//! pipe and exits without running Godot (Unix), or a suspended process that
//! never runs, killed with its job if it had joined it (Windows), so an
//! unrecorded Godot cannot run.
//!
//! The boundary is the process group (the weak locator) on Unix, together with
//! the launch's processes that left it (the session nonce in their environment,
//! see `launch::identify_escaped`), a Job Object on Windows. A delegated cgroup v2 is detected (see [`boundary_report`]) but
//! not used by this build.

pub(crate) mod control;
pub(crate) mod debugger;
pub(crate) mod errors;
pub(crate) mod host;
mod launch_session;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use godot_mcp_journal::launch::{self, LaunchEnd, LaunchIntent, LaunchProof, LaunchReceipt};
use godot_mcp_journal::process_table::{self, PinnedSignal};
use godot_mcp_journal::proof::Deriver;
use godot_mcp_journal::{Journal, TxnId, TxnStatus};
use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::watch;

use crate::error::ToolError;

pub(crate) use control::Control;
use host::internal;

/// What the process plane needs of the server: the journal its launches are recorded
/// in, and a way to say a launch has ended (resource subscribers are told). The
/// server's `AppState` gives both; the plane never sees the rest of it.
pub trait Records: Send + Sync + 'static {
    fn journal(&self) -> &Mutex<Journal>;
    /// A transaction of this plane ended.
    fn journal_changed(&self);
}

/// How long a stop waits after SIGTERM before SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(2000);
/// How long a boundary may take to empty after SIGKILL before it is quarantined.
const EMPTY_WAIT: Duration = Duration::from_secs(5);

/// The launches whose game connects to a debugger the server owns (`--remote-debug`).
/// Not `run_and_capture`: with a debugger attached a script error stops the game in
/// the debugger instead of being printed, and a bounded capture has nobody to resume
/// it.
const DEBUGGED_PURPOSES: [&str; 1] = ["play_scene"];

/// In a [`LaunchSpec`]'s arguments, replaced by the session directory.
pub(crate) const SESSION_DIR_PLACEHOLDER: &str = "@SESSION_DIR@";

/// The launch that gets no `--godot-mcp-endpoint`/`--godot-mcp-nonce` arguments:
/// GUT's command line quits on any argument it does not know, those after `--`
/// included, and a test run has no probe to connect. Its nonce is still in its
/// environment and in its gate shell's command line, which is how reconciliation
/// identifies it.
pub(crate) const NO_CONTROL_ARGS_PURPOSE: &str = "run_tests";

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// `run_and_capture`, `play_scene`, `export_project`, `helper`, `editor`, `run_tests`.
    pub purpose: &'static str,
    pub program: PathBuf,
    /// Engine arguments (before `--`).
    pub args: Vec<String>,
    /// Extra user arguments (after `--`, after the endpoint and nonce).
    pub user_args: Vec<String>,
    pub tool_family: &'static str,
    pub operation: &'static str,
    /// The composite this launch belongs to.
    pub parent: Option<TxnId>,
    /// The launch writes disk (export, helper): refused while the gate is closed.
    pub writes_disk: bool,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ended {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Signal, when a signal ended it.
    pub signal: Option<i32>,
    /// The server sent that signal (stop or timeout).
    pub sent_by_server: bool,
    /// The server killed it for running past its time limit.
    pub timed_out: bool,
    /// The server killed it because the call that launched it was cancelled.
    #[serde(skip)]
    pub cancelled: bool,
    /// Its boundary was proven empty afterwards.
    pub boundary_empty: bool,
    /// The journal's terminal state for it.
    pub status: TxnStatus,
    /// Where its output was archived.
    pub archived_to: Option<PathBuf>,
    /// Milliseconds from release to end.
    pub ran_ms: u64,
}

/// A running (or ended) supervised process.
#[derive(Debug)]
pub struct Session {
    pub txn: TxnId,
    pub purpose: &'static str,
    pub intent: LaunchIntent,
    pub receipt: LaunchReceipt,
    pub session_dir: PathBuf,
    released_at: Instant,
    ended: watch::Receiver<Option<Ended>>,
    server_signalled: AtomicBool,
    timed_out: AtomicBool,
    cancelled: AtomicBool,
    pub control: Arc<Control>,
    /// The debugger the game connects to (games only; see `DEBUGGED_PURPOSES`).
    pub debugger: Option<Arc<debugger::Debugger>>,
    /// What must live as long as the session: the Job Object's handle on
    /// Windows (closing it kills the job's processes), nothing on Unix.
    _boundary: host::Held,
}

impl Session {
    /// The end, once it came.
    pub fn ended(&self) -> Option<Ended> {
        self.ended.borrow().clone()
    }

    /// Waits for the end, at most `limit`.
    pub async fn wait(&self, limit: Duration) -> Option<Ended> {
        let mut rx = self.ended.clone();
        let r = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
        match r {
            Ok(Ok(v)) => v.clone(),
            _ => None,
        }
    }

    /// Sends `signal` to the members of the boundary proven the launch's, by
    /// the one rule reconciliation and repair use
    /// ([`launch::signal_proven_members`]): each identified and signalled
    /// through a pinned handle, never the process group as a whole (once the
    /// leader is reaped its group id can name someone else's group). A member
    /// not proven the launch's is left running and keeps the boundary from
    /// being proven empty. Returns what the boundary held.
    fn signal_members(&self, signal: PinnedSignal) -> launch::GroupMembers {
        launch::signal_proven_members(
            process_table::os(),
            &self.receipt,
            &self.intent.nonce,
            signal,
        )
    }

    /// Waits for the end at most `limit`; past it, SIGKILLs the boundary (a timeout,
    /// recorded as such) and waits for that end. A cancelled call
    /// ([`crate::call_scope::cancellation`]) SIGKILLs the boundary at once, the same
    /// way. `None` only if even the kill did not end the process within 10 s.
    pub async fn wait_or_kill(&self, limit: Duration) -> Option<Ended> {
        let cancel = crate::call_scope::cancellation();
        let ended = tokio::select! {
            e = self.wait(limit) => e,
            () = cancel.cancelled() => None,
        };
        let ended = match ended {
            Some(e) => Some(e),
            None => {
                if cancel.is_cancelled() {
                    self.kill_for_cancel();
                } else {
                    self.kill_for_timeout();
                }
                self.wait(Duration::from_secs(10)).await
            }
        };
        if let Some(e) = &ended {
            crate::call_scope::step(format!(
                "{} ended ({})",
                self.purpose,
                match (e.code, e.signal) {
                    (Some(code), _) => format!("exit code {code}"),
                    (None, Some(signal)) => format!("signal {signal}"),
                    _ => "no status".to_owned(),
                }
            ));
        }
        ended
    }

    /// SIGKILLs the boundary because the call that launched it was cancelled.
    pub fn kill_for_cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.server_signalled.store(true, Ordering::SeqCst);
        self.signal_members(PinnedSignal::Kill);
    }

    /// SIGKILLs the boundary because the time limit passed.
    pub fn kill_for_timeout(&self) {
        self.timed_out.store(true, Ordering::SeqCst);
        self.server_signalled.store(true, Ordering::SeqCst);
        self.signal_members(PinnedSignal::Kill);
    }

    /// SIGTERM, then SIGKILL after `grace`; waits for the end.
    pub async fn stop(&self, grace: Duration) -> Option<Ended> {
        if let Some(e) = self.ended() {
            return Some(e);
        }
        self.server_signalled.store(true, Ordering::SeqCst);
        self.signal_members(PinnedSignal::Term);
        if let Some(e) = self.wait(grace).await {
            return Some(e);
        }
        self.signal_members(PinnedSignal::Kill);
        self.wait(EMPTY_WAIT + Duration::from_secs(1)).await
    }

    /// Where stdout and stderr are while the session runs (or were archived to).
    pub fn output_dir(&self) -> PathBuf {
        self.ended()
            .and_then(|e| e.archived_to)
            .unwrap_or_else(|| self.session_dir.clone())
    }

    pub fn released_at(&self) -> Instant {
        self.released_at
    }
}

/// The supervisor: the live sessions of this server.
#[derive(Debug, Default)]
pub struct Supervisor {
    sessions: Mutex<HashMap<TxnId, Arc<Session>>>,
    /// Breakpoints (`res://` script, line) every debugged game gets at launch
    /// (`--breakpoints`) and, while it runs, over its debugger connection.
    breakpoints: Mutex<std::collections::BTreeSet<(String, u32)>>,
}

fn random_hex(bytes: usize) -> Result<String, ToolError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| internal(format!("no randomness: {e}")))?;
    Ok(hex::encode(buf))
}

impl Supervisor {
    /// The live and ended sessions.
    pub fn sessions(&self) -> Vec<Arc<Session>> {
        let mut v: Vec<_> = self.sessions.lock().values().cloned().collect();
        v.sort_by_key(|s| s.released_at);
        v
    }

    pub fn get(&self, txn: TxnId) -> Option<Arc<Session>> {
        self.sessions.lock().get(&txn).cloned()
    }

    /// The breakpoints, sorted.
    pub fn breakpoints(&self) -> Vec<(String, u32)> {
        self.breakpoints.lock().iter().cloned().collect()
    }

    /// Adds (`set`) or removes a breakpoint; whether the set changed.
    pub fn set_breakpoint(&self, script: &str, line: u32, set: bool) -> bool {
        let key = (script.to_string(), line);
        let mut b = self.breakpoints.lock();
        if set { b.insert(key) } else { b.remove(&key) }
    }

    /// Removes every breakpoint; the ones removed.
    pub fn clear_breakpoints(&self) -> Vec<(String, u32)> {
        std::mem::take(&mut *self.breakpoints.lock())
            .into_iter()
            .collect()
    }

    /// Stops every session without an async runtime (after a transport's own
    /// runtime has ended): SIGTERM, SIGKILL after the grace, prove each boundary
    /// empty, record the terminal state, archive the output.
    pub fn stop_all_blocking(&self, state: &impl Records) {
        for s in self.sessions() {
            if s.ended().is_some() {
                continue;
            }
            s.server_signalled.store(true, Ordering::SeqCst);
            // Empty: nothing of the launch is left (members not proven are
            // never signalled, and keep the boundary unproven). SIGTERM once;
            // SIGKILL every round (a proven member may have forked before it
            // landed: its child is proven the same way).
            let emptied_within = |signal: Option<PinnedSignal>, limit: Duration| {
                launch::empty_boundary(
                    process_table::os(),
                    &s.receipt,
                    &s.intent.nonce,
                    signal,
                    limit,
                )
            };
            s.signal_members(PinnedSignal::Term);
            let mut signal = 15;
            let mut members = emptied_within(None, STOP_GRACE);
            if !members.empty() {
                signal = 9;
                members = emptied_within(Some(PinnedSignal::Kill), EMPTY_WAIT);
            }
            let empty = members.empty();
            let unaccounted = members.unaccounted;
            let archived_to = s
                .session_dir
                .parent()
                .and_then(Path::parent)
                .and_then(|sd| launch::archive_session(sd, &s.session_dir, s.txn).ok());
            let proof = LaunchProof {
                receipt: Some(s.receipt.clone()),
                end: LaunchEnd::Signal {
                    signal,
                    sent_by_server: true,
                },
                boundary_empty: empty,
                archived_to: archived_to.map(|p| p.display().to_string()),
                derived_by: Deriver::Live,
                unaccounted,
            };
            let _ = state.journal().lock().finish_launch(s.txn, &proof);
        }
    }

    /// Stops every session (normal shutdown): SIGTERM, SIGKILL after the grace.
    pub async fn stop_all(&self) {
        for s in self.sessions() {
            if s.ended().is_none() {
                let _ = s.stop(STOP_GRACE).await;
            }
        }
    }
}

/// Waits for the leader, empties the boundary, records the terminal state,
/// archives the output.
async fn reap<S: Records>(
    mut child: tokio::process::Child,
    session: Arc<Session>,
    tx: watch::Sender<Option<Ended>>,
    state: std::sync::Weak<S>,
) {
    let status = child.wait().await;
    let ran_ms = session.released_at.elapsed().as_millis() as u64;
    // The leader is gone (reaped). What it left in its boundary is killed only
    // where proven the launch's (process group: the nonce in its environment or
    // command line, started after the leader, in the group or out of it — a
    // child Godot starts with `OS.create_process` is in a session of its own;
    // Job Object: started after the leader, the job terminated whole); a
    // process that cannot be identified is never signalled, keeps the boundary
    // from being proven empty, and is recorded unaccounted.
    let receipt = session.receipt.clone();
    let nonce = session.intent.nonce.clone();
    let (empty, unaccounted) = tokio::task::spawn_blocking(move || {
        let members = launch::empty_boundary(
            process_table::os(),
            &receipt,
            &nonce,
            Some(PinnedSignal::Kill),
            EMPTY_WAIT,
        );
        if !members.unaccounted.is_empty() {
            tracing::warn!(
                boundary = ?receipt.boundary,
                unaccounted = ?members.unaccounted,
                "a session's boundary holds members that are not the launch's; \
                 not signalled, boundary not proven empty"
            );
        }
        (members.empty(), members.unaccounted)
    })
    .await
    .unwrap_or((false, Vec::new()));
    let sent = session.server_signalled.load(Ordering::SeqCst);
    let (code, signal) = match &status {
        Ok(s) => (s.code(), host::exit_signal(s)),
        Err(_) => (None, None),
    };
    let end = match (code, signal) {
        (Some(code), _) => LaunchEnd::Exit { code },
        (None, Some(signal)) => LaunchEnd::Signal {
            signal,
            sent_by_server: sent,
        },
        _ => LaunchEnd::Signal {
            signal: 0,
            sent_by_server: sent,
        },
    };
    session.control.close().await;
    if let Some(d) = &session.debugger {
        d.close().await;
    }
    let state_dir = session
        .session_dir
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    let archived_to = state_dir
        .and_then(|sd| launch::archive_session(&sd, &session.session_dir, session.txn).ok());
    let proof = LaunchProof {
        receipt: Some(session.receipt.clone()),
        end,
        boundary_empty: empty,
        archived_to: archived_to.as_ref().map(|p| p.display().to_string()),
        derived_by: Deriver::Live,
        unaccounted,
    };
    let status = state
        .upgrade()
        .and_then(|st| st.journal().lock().finish_launch(session.txn, &proof).ok())
        .unwrap_or(TxnStatus::Open);
    tracing::info!(
        txn = %session.txn,
        purpose = session.purpose,
        ?code,
        ?signal,
        sent_by_server = sent,
        timed_out = session.timed_out.load(Ordering::SeqCst),
        cancelled = session.cancelled.load(Ordering::SeqCst),
        boundary_empty = empty,
        status = status.as_str(),
        "launch: ended"
    );
    if let Some(state) = state.upgrade() {
        state.journal_changed();
    }
    let _ = tx.send(Some(Ended {
        code,
        signal,
        sent_by_server: sent,
        timed_out: session.timed_out.load(Ordering::SeqCst),
        cancelled: session.cancelled.load(Ordering::SeqCst),
        boundary_empty: empty,
        status,
        archived_to,
        ran_ms,
    }));
}

/// Which boundary this machine offers, and why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct BoundaryReport {
    /// `process_group` (Unix) or `job_object` (Windows).
    pub in_use: &'static str,
    pub why: String,
}

/// Detects a delegated cgroup v2 (a unified hierarchy whose cgroup of this
/// process is writable and offers `cgroup.kill`).
pub(crate) fn boundary_report() -> BoundaryReport {
    if let Some((in_use, why)) = host::native_boundary() {
        return BoundaryReport {
            in_use,
            why: why.into(),
        };
    }
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let unified = cgroup.lines().find_map(|l| l.strip_prefix("0::"));
    let v2_mounted = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let why = match (unified, v2_mounted) {
        (_, false) => {
            "no cgroup v2 unified hierarchy is mounted at /sys/fs/cgroup (legacy or hybrid \
             cgroup v1): the boundary is the process group (the weak locator)"
                .to_string()
        }
        (None, true) => {
            "this process is in no cgroup v2 group: the boundary is the process group".into()
        }
        (Some(path), true) => {
            let dir = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
            let kill = dir.join("cgroup.kill").exists();
            let writable = host::dir_writable(&dir);
            if kill && writable {
                format!(
                    "a delegated cgroup v2 is available at {}, but this build supervises through the \
                     process group (cgroup boundaries are not implemented yet)",
                    dir.display()
                )
            } else {
                format!(
                    "cgroup v2 group {} is not delegated to this user (writable: {writable}, \
                     cgroup.kill: {kill}): the boundary is the process group",
                    dir.display()
                )
            }
        }
    };
    BoundaryReport {
        in_use: "process_group",
        why,
    }
}

/// Lines `serve` prints at startup about the process plane.
pub(crate) fn startup_lines() -> Vec<String> {
    let b = boundary_report();
    vec![format!(
        "godot-mcp serve: process boundary {}: {}",
        b.in_use, b.why
    )]
}
