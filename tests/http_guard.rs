//! Who may connect to `godot-mcp serve --http`, end to end against the real binary on
//! loopback: the Host × Origin × method matrix, and the bearer token.
//!
//! Every refused cell must be answered 403 (401 for the token) by the guard, and the
//! server's own counters must show that nothing was dispatched to rmcp and no handler
//! ran. Allowed cells must reach rmcp (the dispatch counter moves), so the counter
//! check cannot pass vacuously.

mod http_support;

use http_support::{
    PLAYER_GD, call_ok, connect_session, connect_stateless, fixture, raw_request, start,
    start_refused,
};
use serde_json::{Value, json};

const INIT_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}"#;

const TOKEN: &str = "test-token-0123456789abcdef";

/// The Host header lines of one cell, and whether the guard must admit them.
fn host_cases(port: u16) -> Vec<(&'static str, Vec<String>, bool)> {
    vec![
        (
            "127.0.0.1:port",
            vec![format!("Host: 127.0.0.1:{port}")],
            true,
        ),
        (
            "localhost:port",
            vec![format!("Host: localhost:{port}")],
            true,
        ),
        ("[::1]:port", vec![format!("Host: [::1]:{port}")], true),
        ("evil.example", vec!["Host: evil.example".into()], false),
        (
            "localhost.evil.example",
            vec![format!("Host: localhost.evil.example:{port}")],
            false,
        ),
        (
            "trailing dot",
            vec![format!("Host: localhost.:{port}")],
            false,
        ),
        // Host names are case-insensitive (RFC 9110 §4.2.3); LOCALHOST is localhost.
        ("upper case", vec![format!("Host: LOCALHOST:{port}")], true),
        ("missing", vec![], false),
        (
            "duplicated",
            vec![
                format!("Host: localhost:{port}"),
                format!("Host: localhost:{port}"),
            ],
            false,
        ),
        (
            "other port",
            vec![format!("Host: localhost:{}", port.wrapping_add(1))],
            false,
        ),
        ("no port", vec!["Host: localhost".into()], false),
    ]
}

fn origin_cases(port: u16) -> Vec<(&'static str, Option<String>, bool)> {
    vec![
        ("absent", None, true),
        ("own origin", Some(format!("http://localhost:{port}")), true),
        ("foreign", Some("https://evil.example".into()), false),
        ("null", Some("null".into()), false),
        ("malformed", Some("not an origin".into()), false),
        (
            "other port",
            Some(format!("http://localhost:{}", port.wrapping_add(1))),
            false,
        ),
    ]
}

fn counter(v: &Value, name: &str) -> u64 {
    v[name]
        .as_u64()
        .unwrap_or_else(|| panic!("counter {name} in {v}"))
}

/// One request of the matrix: the method's usual MCP shape, with the cell's headers.
async fn send(
    server: &http_support::HttpServer,
    method: &str,
    host_lines: &[String],
    origin: Option<&str>,
    auth: Option<&str>,
) -> u16 {
    let mut lines: Vec<String> = host_lines.to_vec();
    if let Some(o) = origin {
        lines.push(format!("Origin: {o}"));
    }
    if let Some(a) = auth {
        lines.push(format!("Authorization: {a}"));
    }
    let body = match method {
        "POST" => {
            lines.push("Content-Type: application/json".into());
            lines.push("Accept: application/json, text/event-stream".into());
            INIT_BODY
        }
        "GET" => {
            lines.push("Accept: text/event-stream".into());
            ""
        }
        _ => {
            lines.push("Mcp-Session-Id: 00000000-0000-0000-0000-000000000000".into());
            ""
        }
    };
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    raw_request(server.addr, method, "/mcp", &refs, body, false)
        .await
        .0
}

#[tokio::test]
async fn host_origin_method_matrix_refuses_before_dispatch() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let port = server.port();
    let (mut refused_cells, mut admitted_cells) = (0, 0);
    for (host_name, host_lines, host_ok) in host_cases(port) {
        for (origin_name, origin, origin_ok) in origin_cases(port) {
            for method in ["POST", "GET", "DELETE"] {
                let cell = format!("{method} Host={host_name} Origin={origin_name}");
                let before = server.counters().await;
                let status = send(&server, method, &host_lines, origin.as_deref(), None).await;
                let after = server.counters().await;
                let delta = |name| counter(&after, name) - counter(&before, name);
                if host_ok && origin_ok {
                    assert!(
                        status != 403 && status != 401,
                        "{cell}: an allowed request was refused ({status})"
                    );
                    assert_eq!(delta("dispatched"), 1, "{cell}: allowed but not dispatched");
                    assert_eq!(delta("refused"), 0, "{cell}");
                    admitted_cells += 1;
                } else {
                    assert_eq!(status, 403, "{cell}: must be refused with 403");
                    assert_eq!(delta("refused"), 1, "{cell}: the guard did not refuse it");
                    assert_eq!(delta("dispatched"), 0, "{cell}: reached rmcp");
                    assert_eq!(delta("handlers_created"), 0, "{cell}: created a handler");
                    assert_eq!(delta("handler_calls"), 0, "{cell}: ran a handler");
                    refused_cells += 1;
                }
            }
        }
    }
    // 4 admitted hosts × 2 admitted origins × 3 methods; everything else refused.
    assert_eq!(admitted_cells, 4 * 2 * 3);
    assert_eq!(refused_cells, 11 * 6 * 3 - admitted_cells);
    // Only the admitted POSTs (initialize) ever created a handler.
    let end = server.counters().await;
    assert_eq!(counter(&end, "handler_calls"), 0);
    assert!(counter(&end, "handlers_created") <= 4 * 2);
}

/// The guard answers for every path and method, not only `/mcp`: a rebinding page
/// cannot even learn which routes exist.
#[tokio::test]
async fn other_paths_and_methods_are_guarded_too() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let good = format!("Host: 127.0.0.1:{}", server.port());
    for path in ["/", "/mcp/", "/debug/counters", "/nope"] {
        for method in ["GET", "POST", "PUT", "OPTIONS"] {
            let (status, _) = raw_request(
                server.addr,
                method,
                path,
                &["Host: evil.example"],
                "",
                false,
            )
            .await;
            assert_eq!(status, 403, "{method} {path} with a foreign Host");
            let (status, _) = raw_request(
                server.addr,
                method,
                path,
                &[&good, "Origin: https://evil.example"],
                "",
                false,
            )
            .await;
            assert_eq!(status, 403, "{method} {path} with a foreign Origin");
        }
    }
    // An absolute-form target names the host too; a good Host header does not excuse it.
    let (status, _) = raw_request(
        server.addr,
        "POST",
        "http://evil.example/mcp",
        &[&good],
        "",
        false,
    )
    .await;
    assert_eq!(status, 403, "absolute-form target with a foreign host");
    let (status, _) = raw_request(server.addr, "GET", "/nope", &[&good], "", false).await;
    assert_eq!(status, 404);
    let c = server.counters().await;
    assert_eq!(counter(&c, "dispatched"), 0);
    assert_eq!(counter(&c, "refused"), 4 * 4 * 2 + 1);
}

#[tokio::test]
async fn non_loopback_without_token_refuses_to_start() {
    let project = fixture();
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let (code, stderr) = start_refused(project.path(), addr, None).await;
        assert_eq!(code, Some(2), "{addr}: {stderr}");
        assert!(stderr.contains("refusing to listen"), "{addr}: {stderr}");
        assert!(stderr.contains("GODOT_MCP_AUTH_TOKEN"), "{addr}: {stderr}");
        assert!(!stderr.contains("listening on"), "{addr}: {stderr}");
    }
    // An empty or too-short token is no token.
    for token in ["", "short"] {
        let (code, stderr) = start_refused(project.path(), "0.0.0.0:0", Some(token)).await;
        assert_eq!(code, Some(2), "token {token:?}: {stderr}");
        assert!(!stderr.contains("listening on"), "{stderr}");
    }
}

#[tokio::test]
async fn non_loopback_requires_the_bearer_token() {
    let project = fixture();
    // Bound on all interfaces, but this test only ever connects over loopback.
    let server = start(project.path(), "0.0.0.0:0", Some(TOKEN)).await;
    assert!(server.printed.ip().is_unspecified());
    assert!(
        server.stderr().contains("bearer token required"),
        "{}",
        server.stderr()
    );
    let host = vec![format!("Host: 127.0.0.1:{}", server.port())];
    for (name, auth) in [
        ("missing", None),
        (
            "wrong",
            Some("Bearer wrong-token-0123456789abcdef".to_owned()),
        ),
        (
            "prefix of the right one",
            Some(format!("Bearer {}", &TOKEN[..TOKEN.len() - 1])),
        ),
        ("right token, wrong scheme", Some(format!("Basic {TOKEN}"))),
        ("empty", Some("Bearer ".to_owned())),
    ] {
        for method in ["POST", "GET", "DELETE"] {
            let before = server.counters().await;
            let status = send(&server, method, &host, None, auth.as_deref()).await;
            let after = server.counters().await;
            assert_eq!(status, 401, "{method} token {name}");
            assert_eq!(
                counter(&after, "dispatched"),
                counter(&before, "dispatched"),
                "{name}"
            );
            assert_eq!(
                counter(&after, "handlers_created"),
                counter(&before, "handlers_created")
            );
        }
    }
    // A 401 says how to authenticate.
    let (status, body) = raw_request(server.addr, "GET", "/mcp", &[&host[0]], "", true).await;
    assert_eq!(status, 401);
    assert!(body.contains("Bearer"), "{body}");
    // Host and Origin are still checked first, token or not.
    let auth = format!("Bearer {TOKEN}");
    let status = send(
        &server,
        "POST",
        &["Host: evil.example".into()],
        None,
        Some(&auth),
    )
    .await;
    assert_eq!(status, 403);
    let status = send(&server, "POST", &host, Some("null"), Some(&auth)).await;
    assert_eq!(status, 403);
    // The right token gets through, and real clients of both generations work.
    let before = server.counters().await;
    let status = send(&server, "POST", &host, None, Some(&auth)).await;
    assert_eq!(status, 200);
    assert_eq!(
        counter(&server.counters().await, "dispatched"),
        counter(&before, "dispatched") + 1
    );
    for client in [
        connect_session(&server).await,
        connect_stateless(&server).await,
    ] {
        let v = call_ok(
            &client,
            "scripts_read",
            json!({"path": "res://scripts/player.gd"}),
        )
        .await;
        assert_eq!(v["content"], PLAYER_GD);
        client.cancel().await.unwrap();
    }
}

/// A token set on a loopback listener is enforced too: setting it means "require it".
#[tokio::test]
async fn loopback_with_token_requires_it() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", Some(TOKEN)).await;
    let host = vec![format!("Host: localhost:{}", server.port())];
    assert_eq!(send(&server, "POST", &host, None, None).await, 401);
    let auth = format!("Bearer {TOKEN}");
    assert_eq!(send(&server, "POST", &host, None, Some(&auth)).await, 200);
}
