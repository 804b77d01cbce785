//! How MCP clients reach the server, and who they are once they have.
//!
//! - stdio (`godot-mcp serve`): one client, the process that started us. Its principal
//!   is [`Principal::local`].
//! - streamable HTTP (`godot-mcp serve --http ADDR`, [`http`]): many agents share one
//!   server and one project. [`guard`] decides who may connect at all (Host, Origin,
//!   bearer token) before a byte of the body is read; each call then carries a
//!   [`Principal`] naming the agent's session, which the approval gate and idempotency
//!   keys are scoped by.
//! - [`counters`]: what crossed each boundary, so tests can prove a refused request
//!   never reached a handler.

/// Builds the async runtime a transport serves on (`builder` says which kind), or says
/// on stderr why it cannot be started; `None` then (serve exits with a failure).
pub(crate) fn start_runtime(
    mut builder: tokio::runtime::Builder,
) -> Option<tokio::runtime::Runtime> {
    match builder.enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            crate::say!("godot-mcp serve: error: cannot start the async runtime: {e}");
            None
        }
    }
}

pub(crate) mod guard;
pub(crate) mod http;
pub(crate) mod stdio;

pub(crate) use crate::caller::Admission;

/// Which stop signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopSignal {
    Interrupt,
    /// SIGTERM: Unix only (Windows has Ctrl-C alone).
    #[cfg_attr(not(unix), allow(dead_code))]
    Terminate,
}

impl StopSignal {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }
}

/// Resolves at the first SIGINT (Ctrl-C) or SIGTERM. Both are a normal stop, on every
/// transport: the caller stops and records every supervised session, then exits 0.
/// The handlers are installed when this is first polled; from then on neither signal
/// kills the process outright. Windows has no SIGTERM: Ctrl-C (and Ctrl-Break) is
/// the interrupt there.
#[cfg(windows)]
pub(crate) async fn stop_signal() -> StopSignal {
    match tokio::signal::ctrl_c().await {
        Ok(()) => StopSignal::Interrupt,
        Err(_) => std::future::pending().await,
    }
}

/// See the Windows variant above.
#[cfg(unix)]
pub(crate) async fn stop_signal() -> StopSignal {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut int), Ok(mut term)) => tokio::select! {
            _ = int.recv() => StopSignal::Interrupt,
            _ = term.recv() => StopSignal::Terminate,
        },
        // Without handlers the default action (exit) stands; wait for nothing.
        _ => std::future::pending().await,
    }
}
