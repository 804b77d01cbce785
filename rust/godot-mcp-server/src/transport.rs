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

use std::fmt;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

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

pub mod counters;
pub mod guard;
pub mod http;
pub(crate) mod stdio;

/// Which transport a call arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    Stdio,
    Http,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
        }
    }
}

/// How the HTTP guard admitted a request. Inserted into the request's extensions by
/// the guard, so a request that carries it has passed the Host/Origin/token checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Admission {
    /// Loopback listener, no token configured: the local user, by design.
    Loopback,
    /// The request presented the configured `GODOT_MCP_AUTH_TOKEN`.
    BearerToken,
}

impl Admission {
    pub fn as_str(self) -> &'static str {
        match self {
            Admission::Loopback => "loopback",
            Admission::BearerToken => "bearer_token",
        }
    }
}

/// Who is making a call. The approval gate shows it to the human and the idempotency
/// store scopes keys by it, so two agents can never replay each other's results.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Principal {
    /// Stable for the lifetime of the agent's session: `local` on stdio,
    /// `http:<session id>` for a 2025-11-25 session, `http:stateless` for a
    /// 2026-07-28 request (that protocol has no sessions, so its requests cannot be
    /// told apart by the server; see docs/security.md).
    pub id: String,
    /// The MCP session the call belongs to: `Mcp-Session-Id` on HTTP, the process on
    /// stdio; `None` for stateless HTTP requests.
    pub session_id: Option<String>,
    pub transport: TransportKind,
    /// How the transport admitted the caller; `None` on stdio (the parent process).
    pub admission: Option<Admission>,
}

/// The principal id of a stateless (2026-07-28) HTTP request.
pub const STATELESS_PRINCIPAL: &str = "http:stateless";

impl Principal {
    /// The stdio client: the process that started this server.
    pub fn local() -> Self {
        Self {
            id: "local".into(),
            session_id: Some(format!("stdio-{}", std::process::id())),
            transport: TransportKind::Stdio,
            admission: None,
        }
    }

    /// The principal of a request handled on `transport`.
    ///
    /// On HTTP, rmcp puts the request's `http::request::Parts` into the context's
    /// extensions; the session id is its `Mcp-Session-Id` header and the admission is
    /// what [`guard`] stamped. A request on HTTP without parts (which rmcp never
    /// produces) is an anonymous stateless principal, never `local`.
    pub fn of(transport: TransportKind, context: &RequestContext<RoleServer>) -> Self {
        match transport {
            TransportKind::Stdio => Self::local(),
            TransportKind::Http => {
                let parts = context.extensions.get::<axum::http::request::Parts>();
                let session_id = parts
                    .and_then(|p| {
                        p.headers
                            .get(rmcp::transport::common::http_header::HEADER_SESSION_ID)
                    })
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let admission = parts.and_then(|p| p.extensions.get::<Admission>().copied());
                let id = match &session_id {
                    Some(sid) => format!("http:{sid}"),
                    None => STATELESS_PRINCIPAL.to_owned(),
                };
                Self {
                    id,
                    session_id,
                    transport,
                    admission,
                }
            }
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// Which stop signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
}

impl StopSignal {
    pub fn as_str(self) -> &'static str {
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
pub async fn stop_signal() -> StopSignal {
    match tokio::signal::ctrl_c().await {
        Ok(()) => StopSignal::Interrupt,
        Err(_) => std::future::pending().await,
    }
}

/// See the Windows variant above.
#[cfg(unix)]
pub async fn stop_signal() -> StopSignal {
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
