//! Who makes a call: the transport it arrived on, how that transport admitted the
//! caller, and the [`Principal`] the approval gate and the idempotency store scope by.
//! The transports (`crate::transport`) build it; the server and the call pipeline read
//! it.

use std::fmt;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// Which transport a call arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TransportKind {
    Stdio,
    Http,
}

/// How the HTTP guard admitted a request. Inserted into the request's extensions by
/// the guard, so a request that carries it has passed the Host/Origin/token checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Admission {
    /// Loopback listener, no token configured: the local user, by design.
    Loopback,
    /// The request presented the configured `GODOT_MCP_AUTH_TOKEN`.
    BearerToken,
}

/// Who is making a call. The approval gate shows it to the human and the idempotency
/// store scopes keys by it, so two agents can never replay each other's results.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Principal {
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
pub(crate) const STATELESS_PRINCIPAL: &str = "http:stateless";

impl Principal {
    /// The stdio client: the process that started this server.
    pub(crate) fn local() -> Self {
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
    /// what the HTTP guard (`transport::guard`) stamped. A request on HTTP without parts (which rmcp never
    /// produces) is an anonymous stateless principal, never `local`.
    pub(crate) fn of(transport: TransportKind, context: &RequestContext<RoleServer>) -> Self {
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
