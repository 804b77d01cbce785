//! A supervised launch, step by step: the command line, the intent (durable), the gated
//! process, its receipt (durable), the release, and the session that watches it.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use godot_mcp_journal::failpoints::{self as fp, cross_pub as cross};
use godot_mcp_journal::launch::{self, LaunchEnd, LaunchIntent, LaunchProof, LaunchReceipt};
use godot_mcp_journal::process_table;
use godot_mcp_journal::proof::Deriver;
use godot_mcp_journal::{Journal, TxnId};
use parking_lot::Mutex;
use tokio::sync::watch;

use super::{
    Control, DEBUGGED_PURPOSES, LaunchSpec, NO_CONTROL_ARGS_PURPOSE, Records,
    SESSION_DIR_PLACEHOLDER, Session, Supervisor, control, debugger, host, internal, random_hex,
    reap,
};
use crate::error::{ErrorCode, ToolError};

impl Supervisor {
    /// Launches under supervision; the receipt is durable when this returns.
    pub async fn launch<S: Records>(
        &self,
        state: &Arc<S>,
        spec: LaunchSpec,
    ) -> Result<Arc<Session>, ToolError> {
        let journal = state.journal();
        let (state_dir, root) = {
            let j = journal.lock();
            (j.state_dir().to_path_buf(), j.project_root().to_path_buf())
        };
        let nonce = random_hex(16)?;
        let session_dir = state_dir.join(launch::SESSIONS_DIR).join(&nonce[..12]);
        std::fs::create_dir_all(&session_dir).map_err(internal)?;
        let host::Bound {
            listener,
            endpoint,
            id: socket_inode,
        } = host::bind(&session_dir)?;
        let (args, debugger) = self
            .command_line(&spec, &session_dir, &endpoint, &nonce)
            .await?;
        let intent = LaunchIntent {
            purpose: spec.purpose.into(),
            program: spec.program.display().to_string(),
            args: args.clone(),
            nonce: nonce.clone(),
            endpoint,
            socket_inode,
            session_dir: session_dir.display().to_string(),
            receipt: None,
        };

        // 1. The intent, durable.
        let txn = begin_launch(journal, &intent, &spec)?;
        cross(fp::LAUNCH_AFTER_INTENT);
        crate::call_scope::launched(txn);

        // 2. The gated process, in its own process group.
        let mut gated = spawn_gated(journal, txn, &nonce, &spec, &args, &root, &session_dir)?;
        let Some(pid) = gated.child.id().and_then(|p| i32::try_from(p).ok()) else {
            return Err(never_started(
                journal,
                txn,
                "the spawned process has no pid".into(),
            ));
        };
        cross(fp::LAUNCH_AFTER_SPAWN);

        // 3. The receipt, durable.
        let receipt = record_receipt(journal, txn, &intent, &mut gated, pid).await?;
        cross(fp::LAUNCH_AFTER_RECEIPT);
        let mut intent = intent;
        intent.receipt = Some(receipt.clone());

        // 4. Release. A gate that cannot be opened is killed: the receipt is
        // durable, so the reaper records how it ended.
        if let Err(e) = gated.release().await {
            tracing::warn!(pid, error = %e, "the gate could not be released; killing it");
            let _ = gated.child.start_kill();
        }
        let (child, held) = gated.into_parts();
        let released_at = Instant::now();
        cross(fp::LAUNCH_AFTER_RELEASE);
        tracing::info!(%txn, pid, purpose = spec.purpose, "launch: started");
        crate::call_scope::step(format!("{} launched (pid {pid})", spec.purpose));

        let (tx, rx) = watch::channel(None);
        let session = Arc::new(Session {
            txn,
            purpose: spec.purpose,
            intent,
            receipt,
            session_dir: session_dir.clone(),
            released_at,
            ended: rx,
            server_signalled: AtomicBool::new(false),
            timed_out: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            control: Arc::new(Control::new(listener, nonce)),
            debugger,
            _boundary: held,
        });
        self.sessions.lock().insert(txn, session.clone());
        tokio::spawn(control::accept_loop(session.control.clone()));
        if let Some(d) = &session.debugger {
            tokio::spawn(debugger::serve(d.clone()));
        }
        tokio::spawn(reap(child, session.clone(), tx, Arc::downgrade(state)));
        Ok(session)
    }

    /// The launch's arguments (the session folder written in, the debugger's for a game,
    /// the control endpoint and nonce after `--`, then the user's), and the debugger
    /// bound for a game.
    async fn command_line(
        &self,
        spec: &LaunchSpec,
        session_dir: &Path,
        endpoint: &str,
        nonce: &str,
    ) -> Result<(Vec<String>, Option<Arc<debugger::Debugger>>), ToolError> {
        let session_str = session_dir.display().to_string();
        let mut args: Vec<String> = spec
            .args
            .iter()
            .map(|a| a.replace(SESSION_DIR_PLACEHOLDER, &session_str))
            .collect();
        let debugger = if DEBUGGED_PURPOSES.contains(&spec.purpose) {
            let d = debugger::Debugger::bind().await.map_err(internal)?;
            args.push("--remote-debug".into());
            args.push(d.uri());
            let breakpoints = self.breakpoints();
            if !breakpoints.is_empty() {
                args.push("--breakpoints".into());
                args.push(
                    breakpoints
                        .iter()
                        .map(|(script, line)| format!("{script}:{line}"))
                        .collect::<Vec<_>>()
                        .join(","),
                );
            }
            Some(Arc::new(d))
        } else {
            None
        };
        args.push("--".into());
        if spec.purpose != NO_CONTROL_ARGS_PURPOSE {
            args.push(format!("--godot-mcp-endpoint={endpoint}"));
            args.push(format!("--godot-mcp-nonce={nonce}"));
        }
        args.extend(
            spec.user_args
                .iter()
                .map(|a| a.replace(SESSION_DIR_PLACEHOLDER, &session_str)),
        );
        Ok((args, debugger))
    }
}

/// Step 1: the launch's intent, durable; refused while the write gate is closed.
fn begin_launch(
    journal: &Mutex<Journal>,
    intent: &LaunchIntent,
    spec: &LaunchSpec,
) -> Result<TxnId, ToolError> {
    journal
        .lock()
        .begin_launch(
            intent,
            spec.tool_family,
            spec.operation,
            spec.parent,
            spec.writes_disk,
        )
        .map_err(|e| match e {
            launch::LaunchError::GateClosed { quarantined } => ToolError::new(
                ErrorCode::WriteGateClosed,
                format!(
                    "Launch refused: the write gate is closed by quarantined transaction(s) {}.",
                    quarantined
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .hint("Resolve the quarantine with `godot-mcp transaction repair` (see docs/recovery.md)."),
            other => internal(other),
        })
}

/// A launch that ended before its process ran: recorded so (nothing to reap, the
/// boundary empty), and the error to answer.
fn never_started(journal: &Mutex<Journal>, txn: TxnId, e: String) -> ToolError {
    let proof = LaunchProof {
        receipt: None,
        end: LaunchEnd::NeverStarted,
        boundary_empty: true,
        archived_to: None,
        derived_by: Deriver::Live,
        unaccounted: Vec::new(),
    };
    let _ = journal.lock().finish_launch(txn, &proof);
    internal(e)
}

/// Step 2: the gated process, in its own process group, its output to the session
/// folder's `stdout.log` and `stderr.log`.
fn spawn_gated(
    journal: &Mutex<Journal>,
    txn: TxnId,
    nonce: &str,
    spec: &LaunchSpec,
    args: &[String],
    root: &Path,
    session_dir: &Path,
) -> Result<host::Gated, ToolError> {
    let stdout = std::fs::File::create(session_dir.join("stdout.log")).map_err(internal)?;
    let stderr = std::fs::File::create(session_dir.join("stderr.log")).map_err(internal)?;
    host::spawn_gated(
        nonce,
        &spec.program,
        args,
        root,
        Stdio::from(stdout),
        Stdio::from(stderr),
    )
    .map_err(|e| never_started(journal, txn, format!("cannot spawn: {e}")))
}

/// Step 3: the receipt (pid, start time, process group, boundary, boot), durable. A
/// process whose identity cannot be read or recorded is never released: the gate is
/// killed.
async fn record_receipt(
    journal: &Mutex<Journal>,
    txn: TxnId,
    intent: &LaunchIntent,
    gated: &mut host::Gated,
    pid: i32,
) -> Result<LaunchReceipt, ToolError> {
    let procs = process_table::os();
    let Some(stat) = procs.stat(pid).filter(|_| host::boundary_observable(procs)) else {
        // Also where the OS's process table cannot reconcile this boundary (it
        // may still read a start time): no receipt, no release.
        let _ = gated.child.start_kill();
        let _ = gated.child.wait().await;
        return Err(never_started(
            journal,
            txn,
            format!("the identity of pid {pid} (start time, boundary) is unreadable"),
        ));
    };
    let receipt = LaunchReceipt {
        pid,
        start_time: stat.start_time,
        pgid: stat.pgrp,
        boundary: gated.boundary(&stat),
        boot_id: procs.boot_id(),
    };
    let recorded = journal.lock().record_receipt(txn, intent, &receipt);
    if let Err(e) = recorded {
        // Never release an unrecorded process: kill the gate.
        let _ = gated.child.start_kill();
        let _ = gated.child.wait().await;
        return Err(never_started(
            journal,
            txn,
            format!("the receipt could not be recorded: {e}"),
        ));
    }
    Ok(receipt)
}
