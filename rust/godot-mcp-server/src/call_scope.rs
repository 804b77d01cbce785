//! The running tool call's scope: its cancellation and its progress reporter.
//!
//! The MCP handler runs every call inside [`run`]. Code the call reaches (a tool, the
//! process plane's launch and wait) asks [`cancellation`] whether the client
//! cancelled (`notifications/cancelled`, or the session ending) and reports a real
//! step with [`step`] (launched, process exited, results parsed, one input step…);
//! when the request carried `_meta.progressToken` each step is one
//! `notifications/progress`, in order, all sent before the call's answer. Outside an
//! MCP request (tests, start-up) both are inert.
//!
//! A call run as an MCP task ([`run_task`]) also hears, through [`Heard`], the journal
//! transaction of each launch ([`launched`]) and each step: the task is named after
//! its first launch's transaction and reports its last step as its status message.
//!
//! A task-local rather than a parameter: the steps happen deep in shared code (a
//! launch every launching tool uses), and rmcp keeps polling a cancelled call, so the
//! scope lives exactly as long as the call's own future.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    static CALL: Arc<CallScope>;
}

/// One call's cancellation and progress.
#[derive(Debug, Default)]
pub(crate) struct CallScope {
    cancel: CancellationToken,
    /// Where steps go when the request asked for progress.
    progress: Option<mpsc::UnboundedSender<ProgressNotificationParam>>,
    token: Option<ProgressToken>,
    /// Steps reported so far (progress must increase).
    done: AtomicU64,
    /// How many steps the call expects, when it knows.
    total: AtomicU64,
    /// A task's ear: each launch's transaction and each step.
    heard: Option<mpsc::UnboundedSender<Heard>>,
}

/// What a call run as a task reports to its task, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Heard {
    /// A launch's journal transaction is durable (its id).
    Launched(String),
    /// One real step, as [`step`] describes it.
    Step(String),
}

/// Runs `call` as an MCP task's work: cancelled by `cancel` (`tasks/cancel`), its
/// launches and steps sent to `heard`; no progress notifications (the request that
/// started it has been answered).
pub(crate) async fn run_task<F: Future>(
    cancel: CancellationToken,
    heard: mpsc::UnboundedSender<Heard>,
    call: F,
) -> F::Output {
    let scope = Arc::new(CallScope {
        cancel,
        heard: Some(heard),
        ..CallScope::default()
    });
    CALL.scope(scope, call).await
}

/// The running call launched a process whose journal transaction is `txn` (its
/// intent is durable).
pub(crate) fn launched(txn: impl std::fmt::Display) {
    let _ = CALL.try_with(|c| {
        if let Some(heard) = &c.heard {
            let _ = heard.send(Heard::Launched(txn.to_string()));
        }
    });
}

/// Runs `call` in a scope with `cancel` and, when `token` is given, a reporter that
/// sends `notifications/progress` to `peer`. Every step is sent before this returns.
pub(crate) async fn run<F: Future>(
    cancel: CancellationToken,
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    call: F,
) -> F::Output {
    let (progress, sender) = match &token {
        Some(_) => {
            let (tx, mut rx) = mpsc::unbounded_channel::<ProgressNotificationParam>();
            let task = tokio::spawn(async move {
                while let Some(p) = rx.recv().await {
                    if peer.notify_progress(p).await.is_err() {
                        break;
                    }
                }
            });
            (Some(tx), Some(task))
        }
        None => (None, None),
    };
    let scope = Arc::new(CallScope {
        cancel,
        progress,
        token,
        ..CallScope::default()
    });
    let out = CALL.scope(scope.clone(), call).await;
    // The queue closes with the scope; its last steps go out before the answer.
    drop(scope);
    if let Some(task) = sender {
        let _ = task.await;
    }
    out
}

/// The running call's cancellation; never cancelled outside an MCP request.
pub(crate) fn cancellation() -> CancellationToken {
    CALL.try_with(|c| c.cancel.clone()).unwrap_or_default()
}

/// The call expects `total` steps in all (sent with each later step).
pub(crate) fn expect_steps(total: u64) {
    let _ = CALL.try_with(|c| c.total.store(total, Ordering::SeqCst));
}

/// One real step of the running call, described by `message`.
pub(crate) fn step(message: impl Into<String>) {
    let _ = CALL.try_with(|c| {
        let message = message.into();
        if let Some(heard) = &c.heard {
            let _ = heard.send(Heard::Step(message.clone()));
        }
        let (Some(queue), Some(token)) = (&c.progress, &c.token) else {
            return;
        };
        let done = c.done.fetch_add(1, Ordering::SeqCst) + 1;
        let mut p =
            ProgressNotificationParam::new(token.clone(), done as f64).with_message(message);
        let total = c.total.load(Ordering::SeqCst);
        if total >= done {
            p = p.with_total(total as f64);
        }
        let _ = queue.send(p);
    });
}
