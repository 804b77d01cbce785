//! `godot-mcp serve --http ADDR`: MCP over streamable HTTP (rmcp's service in axum).
//!
//! One endpoint, `/mcp`, speaks both protocol generations: 2025-11-25 clients
//! `initialize` and get an `Mcp-Session-Id`; 2026-07-28 clients `server/discover` and
//! send self-contained stateless requests. Every agent shares this process's
//! [`AppState`](crate::state::AppState) — one project, one editor bridge, one write gate.
//!
//! In front of everything sits [`guard::guard`]; rmcp's own Host/Origin check is set
//! to the same lists as a second line.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any_service, get};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::guard::{self, BearerToken, GuardConfigError, GuardPolicy, GuardState};
use crate::counters::{self, Counters};
use crate::safety::Served;
use crate::server::McpServer;

/// The MCP endpoint's path.
pub(crate) const MCP_PATH: &str = "/mcp";

/// How long a shutdown waits for in-flight requests before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What `serve --http` was asked for.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    /// Where to listen; port 0 picks a free port (the real one is printed).
    pub addr: SocketAddr,
    /// Extra `Host` values to accept (`host` or `host:port`), besides loopback.
    pub allowed_hosts: Vec<String>,
    /// Extra browser origins to accept (`scheme://host[:port]`).
    pub allowed_origins: Vec<String>,
    /// The bearer token (from `GODOT_MCP_AUTH_TOKEN`); required off loopback.
    pub token: Option<String>,
    /// `serve --editor`: start the managed editor once the socket accepts, so the first
    /// editing call finds it loaded (or waits for its hello) instead of starting it.
    pub start_editor: bool,
}

/// A listener that is bound and ready: the address to print, the app to serve.
pub(crate) struct Bound {
    pub listener: tokio::net::TcpListener,
    pub local_addr: SocketAddr,
    pub app: Router,
    pub policy: GuardPolicy,
}

/// Why `serve --http` did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum HttpStartError {
    #[error(transparent)]
    Guard(#[from] GuardConfigError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Check the options, bind, and build the app. Nothing is bound when the options are
/// refused (a non-loopback address without a token never opens a socket).
pub(crate) async fn bind(
    state: Arc<Served>,
    options: &HttpOptions,
    shutdown: CancellationToken,
) -> Result<Bound, HttpStartError> {
    let token = options.token.as_deref().map(BearerToken::new).transpose()?;
    // Validate against the requested address before binding anything.
    GuardPolicy::new(
        options.addr,
        &options.allowed_hosts,
        &options.allowed_origins,
        token.clone(),
    )?;
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| HttpStartError::Bind {
            addr: options.addr,
            source,
        })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| HttpStartError::Bind {
            addr: options.addr,
            source,
        })?;
    let policy = GuardPolicy::new(
        local_addr,
        &options.allowed_hosts,
        &options.allowed_origins,
        token,
    )?;
    let counters = Arc::new(Counters::default());
    let app = app(state, &policy, counters, shutdown);
    Ok(Bound {
        listener,
        local_addr,
        app,
        policy,
    })
}

/// The router: `/mcp` (rmcp's streamable HTTP service), the debug counters route when
/// enabled, all behind the guard.
fn app(
    state: Arc<Served>,
    policy: &GuardPolicy,
    counters: Arc<Counters>,
    shutdown: CancellationToken,
) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(policy.rmcp_allowed_hosts())
        .with_allowed_origins(policy.rmcp_allowed_origins())
        .enforce_origin_validation()
        .with_cancellation_token(shutdown.child_token());
    let factory_counters = counters.clone();
    // One task table for the server: a task outlives the session that started it.
    let tasks = Arc::default();
    let service = StreamableHttpService::new(
        move || {
            Counters::bump(&factory_counters.handlers_created);
            Ok(McpServer::for_http(
                state.clone(),
                factory_counters.clone(),
                Arc::clone(&tasks),
            ))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = Router::new().route_service(
        MCP_PATH,
        any_service(service).layer(middleware::from_fn_with_state(
            counters.clone(),
            count_dispatch,
        )),
    );
    if counters::route_enabled() {
        router = router.route(
            "/debug/counters",
            get(show_counters).with_state(counters.clone()),
        );
    }
    let guard_state = Arc::new(GuardState {
        policy: policy.clone(),
        counters,
    });
    router.layer(middleware::from_fn_with_state(guard_state, guard::guard))
}

async fn count_dispatch(
    State(counters): State<Arc<Counters>>,
    request: Request,
    next: Next,
) -> Response {
    Counters::bump(&counters.dispatched);
    let closes_session = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    // rmcp answers a session's DELETE with 202 Accepted, but the session is gone by then:
    // nothing is pending. The official Python client treats anything but 200/204 as a
    // failed termination and logs an error for every session, so say 204 No Content.
    if closes_session && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    response
}

async fn show_counters(State(counters): State<Arc<Counters>>) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        counters.snapshot().to_string(),
    )
        .into_response()
}

/// Run `serve --http` to completion: bind, print the address, serve until Ctrl-C or
/// SIGTERM.
pub(crate) fn serve(state: Arc<Served>, options: HttpOptions) -> ExitCode {
    let Some(runtime) = super::start_runtime(tokio::runtime::Builder::new_multi_thread()) else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(serve_async(state, options))
}

async fn serve_async(state: Arc<Served>, options: HttpOptions) -> ExitCode {
    let shutdown = CancellationToken::new();
    let tools = state.registry.iter().count();
    let editor_state = state.state.clone();
    let bound = match bind(state, &options, shutdown.clone()).await {
        Ok(b) => b,
        Err(e) => {
            crate::say!("godot-mcp serve: error: {e}");
            return ExitCode::from(2);
        }
    };
    let auth = if bound.policy.requires_token() {
        "bearer token required"
    } else {
        "loopback only, no token"
    };
    crate::say!(
        "godot-mcp serve: streamable HTTP ({tools} tools; 2025-11-25 sessions and 2026-07-28 \
         stateless); Host/Origin guard on; {auth}"
    );
    // The managed editor is a session before the first call can arrive: a call then
    // waits for its hello rather than finding no editor at all.
    if options.start_editor {
        crate::tools::runtime::start_managed_editor(&editor_state).await;
    }
    // Printed last, once the socket accepts: tests and scripts wait for this exact
    // line to learn the port.
    crate::say!(
        "godot-mcp serve: listening on http://{}{MCP_PATH}",
        bound.local_addr
    );
    let server_shutdown = shutdown.clone();
    let server = tokio::spawn(
        axum::serve(bound.listener, bound.app)
            .with_graceful_shutdown(async move { server_shutdown.cancelled().await })
            .into_future(),
    );
    wait_for_signal().await;
    crate::say!("godot-mcp serve: shutting down");
    shutdown.cancel();
    match tokio::time::timeout(SHUTDOWN_GRACE, server).await {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        Ok(Ok(Err(e))) => {
            crate::say!("godot-mcp serve: error: {e}");
            ExitCode::FAILURE
        }
        Ok(Err(e)) => {
            crate::say!("godot-mcp serve: error: the HTTP server task failed: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            crate::say!(
                "godot-mcp serve: open streams did not close within {}s; exiting",
                SHUTDOWN_GRACE.as_secs()
            );
            ExitCode::SUCCESS
        }
    }
}

async fn wait_for_signal() {
    crate::transport::stop_signal().await;
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};

    use super::*;

    /// rmcp's own check, configured from the same policy, refuses a foreign Host and a
    /// foreign Origin by itself: the second line holds even if the guard were gone.
    #[tokio::test]
    async fn rmcp_second_line_refuses_foreign_host_and_origin() {
        let policy =
            GuardPolicy::new(SocketAddr::from(([127, 0, 0, 1], 4242)), &[], &[], None).unwrap();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(policy.rmcp_allowed_hosts())
            .with_allowed_origins(policy.rmcp_allowed_origins())
            .enforce_origin_validation();
        let service: StreamableHttpService<McpServer, LocalSessionManager> =
            StreamableHttpService::new(
                || {
                    Err(std::io::Error::other(
                        "a refused request must not create a handler",
                    ))
                },
                Arc::new(LocalSessionManager::default()),
                config,
            );
        for (host, origin) in [
            ("evil.example", None),
            ("localhost.evil.example:4242", None),
            ("localhost:4242", Some("https://evil.example")),
            ("localhost:4242", Some("null")),
        ] {
            let mut request = Request::post("/mcp").header("host", host);
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            let request = request.body(Body::from("{}")).unwrap();
            let response = service.handle(request).await;
            assert_eq!(
                response.status(),
                StatusCode::FORBIDDEN,
                "{host} {origin:?}"
            );
        }
    }
}
