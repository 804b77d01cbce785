//! `subscriptions/listen` (MCP 2026-07-28) and `resources/subscribe` (2025-11-25) on
//! one real `godot-mcp serve --http`, over real HTTP: a listen stream is read frame by
//! frame as the server writes it (raw SSE), the calls that change things are made by
//! other requests. Every wait is for a frame or an answer, bounded.
// resources/subscribe is legacy-only in rmcp; 2025-11-25 clients still send it.
#![allow(deprecated)]

mod http_support;

use std::time::Duration;

use http_support::{
    HttpServer, IO_TIMEOUT, call_ok, connect_session, connect_stateless, fixture, start,
};
use rmcp::model::SubscribeRequestParams;
use serde_json::{Value, json};

const V2026: &str = "2026-07-28";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn meta(extra: Value) -> Value {
    let mut m = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "listen-test", "version": "1"}
    });
    if let (Some(m), Value::Object(extra)) = (m.as_object_mut(), extra) {
        m.extend(extra);
    }
    m
}

/// An open listen stream: the SSE frames the server writes, in order.
struct Listen {
    response: reqwest::Response,
    buffer: String,
    id: String,
}

impl Listen {
    /// POST `subscriptions/listen` with `notifications` (and `extra_meta` in `_meta`).
    async fn open(server: &HttpServer, id: &str, notifications: Value, extra_meta: Value) -> Self {
        let body = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "subscriptions/listen",
            "params": {"_meta": meta(extra_meta), "notifications": notifications}
        });
        let response = reqwest::Client::new()
            .post(server.url())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", V2026)
            .header("Mcp-Method", "subscriptions/listen")
            .body(body.to_string())
            .send()
            .await
            .expect("listen request sent");
        assert_eq!(
            response.status(),
            200,
            "listen answered {:?}",
            response.headers()
        );
        Self {
            response,
            buffer: String::new(),
            id: id.to_owned(),
        }
    }

    /// The next JSON-RPC message on the stream (waits for it, bounded).
    async fn next(&mut self) -> Value {
        tokio::time::timeout(IO_TIMEOUT, async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let event: String = self.buffer.drain(..end + 2).collect();
                    let data: String = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    if data.is_empty() {
                        continue; // a priming event or a comment
                    }
                    return serde_json::from_str(&data)
                        .unwrap_or_else(|e| panic!("a frame is JSON: {e}: {data}"));
                }
                let chunk = self
                    .response
                    .chunk()
                    .await
                    .expect("read the listen stream")
                    .expect("the listen stream stays open");
                self.buffer
                    .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
            }
        })
        .await
        .expect("a frame on the listen stream in time")
    }

    /// The next frame must be a notification `method` tagged with this stream's id.
    async fn expect(&mut self, method: &str) -> Value {
        let frame = self.next().await;
        assert_eq!(frame["method"], method, "{frame}");
        assert_eq!(
            frame["params"]["_meta"][SUBSCRIPTION_ID], self.id,
            "every notification on a listen stream carries its subscription id: {frame}"
        );
        frame
    }
}

/// The acknowledgement is the first frame and names what was accepted; a toolset
/// change made by another request (a 2026 client's manage_toolsets) then reaches the
/// stream as tools/list_changed, tagged with the stream's subscription id.
#[tokio::test]
async fn a_listen_stream_is_acknowledged_first_then_hears_toolset_changes_tagged() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let mut listen = Listen::open(
        &server,
        "listen-1",
        json!({"toolsListChanged": true}),
        json!({}),
    )
    .await;
    let ack = listen
        .expect("notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );

    let caller = connect_stateless(&server).await;
    let r = call_ok(
        &caller,
        "manage_toolsets",
        json!({"disable": ["input_map"]}),
    )
    .await;
    assert_eq!(r["changed"], true, "{r}");
    listen.expect("notifications/tools/list_changed").await;
    // What the notification says is true: the list no longer has the tools.
    let listed = caller.list_all_tools().await.unwrap();
    assert!(!listed.iter().any(|t| t.name == "add_input_action"));
    caller.cancel().await.unwrap();
}

/// A stream gets only the kinds it asked for: one that asked for prompt-list changes
/// and the transactions resource hears no tools/list_changed after a toolset change
/// (which is sent before the change's call answers), and its next frame is the
/// resource update a later write causes. A resource URI the server does not serve is
/// left out of the acknowledgement.
#[tokio::test]
async fn a_listen_stream_gets_only_the_notifications_it_asked_for() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let mut narrow = Listen::open(
        &server,
        "narrow",
        json!({
            "promptsListChanged": true,
            "resourceSubscriptions": ["godot-mcp://transactions", "test://not-ours"]
        }),
        json!({}),
    )
    .await;
    let ack = narrow
        .expect("notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["godot-mcp://transactions"]}),
        "{ack}"
    );
    let mut wide = Listen::open(
        &server,
        "wide",
        json!({"toolsListChanged": true}),
        json!({}),
    )
    .await;
    wide.expect("notifications/subscriptions/acknowledged")
        .await;

    let caller = connect_stateless(&server).await;
    call_ok(
        &caller,
        "manage_toolsets",
        json!({"disable": ["input_map"]}),
    )
    .await;
    wide.expect("notifications/tools/list_changed").await;
    call_ok(
        &caller,
        "write_script",
        json!({"path": "res://scripts/other.gd", "content": "extends Node\n", "confirm": true}),
    )
    .await;
    let update = narrow.expect("notifications/resources/updated").await;
    assert_eq!(
        update["params"]["uri"], "godot-mcp://transactions",
        "{update}"
    );
    caller.cancel().await.unwrap();
}

/// A listen request whose `_meta` sets `io.modelcontextprotocol/logLevel` gets the
/// server's log lines at that level and above on its stream (the start-up lines
/// first: the write gate's line is `info`), tagged like every other notification;
/// one without it gets none before its next asked-for notification.
#[tokio::test]
async fn log_lines_reach_a_listen_stream_that_asked_for_a_level() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let mut quiet = Listen::open(
        &server,
        "quiet",
        json!({"toolsListChanged": true}),
        json!({}),
    )
    .await;
    quiet
        .expect("notifications/subscriptions/acknowledged")
        .await;
    let mut logs = Listen::open(
        &server,
        "logs",
        json!({}),
        json!({"io.modelcontextprotocol/logLevel": "info"}),
    )
    .await;
    logs.expect("notifications/subscriptions/acknowledged")
        .await;
    let line = logs.expect("notifications/message").await;
    assert_eq!(line["params"]["logger"], "godot-mcp", "{line}");
    assert_eq!(line["params"]["level"], "info", "{line}");

    let caller = connect_stateless(&server).await;
    call_ok(
        &caller,
        "manage_toolsets",
        json!({"disable": ["input_map"]}),
    )
    .await;
    quiet.expect("notifications/tools/list_changed").await;
    caller.cancel().await.unwrap();
}

/// `resources/subscribe` is bounded: a session watches at most 32 URIs and the server
/// holds at most 256 in all, and past either bound the request is refused with an
/// error that says which bound and what to do. A URI the server does not serve is
/// answered and never kept (it counts toward nothing). When a session ends, what it
/// watched goes, and another session can subscribe again.
#[tokio::test]
async fn resource_subscriptions_are_bounded_and_end_with_their_session() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let uri = |session: usize, i: usize| {
        format!("godot-mcp://transactions/00000000-0000-4000-8000-{session:06}{i:06}")
    };
    let subscribe = |peer: &rmcp::Peer<rmcp::RoleClient>, uri: String| {
        let peer = peer.clone();
        async move {
            tokio::time::timeout(IO_TIMEOUT, peer.subscribe(SubscribeRequestParams::new(uri)))
                .await
                .expect("resources/subscribe answered in time")
        }
    };
    let mut sessions = Vec::new();
    for s in 0..8 {
        let client = connect_session(&server).await;
        for i in 0..32 {
            subscribe(client.peer(), uri(s, i))
                .await
                .unwrap_or_else(|e| panic!("subscription {i} of session {s}: {e}"));
        }
        sessions.push(client);
    }
    // One more in a full session: refused, naming the session's bound.
    let full = &sessions[0];
    let err = subscribe(full.peer(), uri(0, 32))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("this session already watches 32"), "{err}");
    assert!(err.contains("SUBSCRIPTION_LIMIT"), "{err}");
    // The same URI again, and a URI that is not ours: answered, nothing added.
    subscribe(full.peer(), uri(0, 0)).await.unwrap();
    subscribe(full.peer(), "test://watched-resource".to_owned())
        .await
        .unwrap();
    // A new session: the server is full.
    let late = connect_session(&server).await;
    let err = subscribe(late.peer(), uri(9, 0))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("the server already holds 256"), "{err}");

    // A session ends: its 32 go. Its handler is dropped after the DELETE is answered,
    // so the late session's subscribe is retried (bounded) until the server has let go.
    sessions.pop().unwrap().cancel().await.unwrap();
    let deadline = tokio::time::Instant::now() + IO_TIMEOUT;
    loop {
        match subscribe(late.peer(), uri(9, 0)).await {
            Ok(()) => break,
            Err(e) if tokio::time::Instant::now() < deadline => {
                assert!(e.to_string().contains("256"), "{e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("the ended session's subscriptions were never dropped: {e}"),
        }
    }
    for s in sessions {
        s.cancel().await.unwrap();
    }
    late.cancel().await.unwrap();
}
