//! The approval gate end to end: the real binary, a real MCP client, a real local
//! HTTP webhook; elicitation on both protocol generations (2025-11-25 through
//! elicitation/create, 2026-07-28 through input-required results), accepting and
//! declining. Every denial is checked to have written nothing.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, InputResponses, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"Gate\"\n",
    )
    .unwrap();
    dir
}

const CREATE: &str = "create_script";

fn create_args(name: &str) -> serde_json::Map<String, Value> {
    json!({"path": format!("res://{name}.gd"), "confirm": true})
        .as_object()
        .unwrap()
        .clone()
}

/// A local webhook that answers every POST with `status` and `body`; returns its URL
/// and the JSON bodies it received.
async fn webhook(status: u16, body: &'static str) -> (String, Arc<parking_lot::Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let seen = seen2.clone();
            tokio::spawn(async move {
                let mut raw = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = sock.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    raw.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&raw).to_string();
                    let Some(i) = text.find("\r\n\r\n") else {
                        continue;
                    };
                    let len: usize = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if raw.len() >= i + 4 + len {
                        seen.lock()
                            .push(serde_json::from_slice(&raw[i + 4..i + 4 + len]).unwrap());
                        break;
                    }
                }
                let answer = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

async fn spawn<C: ClientHandler>(
    project: &Path,
    env: &[(&str, &str)],
    client: C,
    lifecycle: Option<ClientLifecycleMode>,
) -> RunningService<RoleClient, C> {
    let mut cmd = support::server_tokio();
    cmd.arg("serve").arg("--project").arg(project);
    cmd.env("GODOT_MCP_STATE_DIR", project.join(".state"));
    // Every toolset: the tests drive tools outside the default core.
    cmd.env("GODOT_MCP_TOOLSETS", "all");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    match lifecycle {
        None => client.serve(transport).await.expect("handshake"),
        Some(mode) => client
            .serve_with_lifecycle(transport, mode)
            .await
            .expect("discover"),
    }
}

fn modern() -> Option<ClientLifecycleMode> {
    Some(ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    })
}

/// A client that answers elicitation with a fixed decision and counts the questions.
#[derive(Debug, Clone)]
struct Human {
    approve: Option<bool>,
    asked: Arc<AtomicUsize>,
    can_elicit: bool,
}

impl Human {
    fn new(approve: Option<bool>) -> Self {
        Self {
            approve,
            asked: Arc::default(),
            can_elicit: true,
        }
    }
}

impl ClientHandler for Human {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            assert!(
                message.contains(CREATE),
                "the question names the tool: {message}"
            );
        }
        Ok(match self.approve {
            Some(true) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}))
            }
            Some(false) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": false}))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    fn get_info(&self) -> ClientConfig {
        let caps = if self.can_elicit {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("test-human", "1.0"))
    }
}

async fn call_create<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    name: &str,
) -> rmcp::model::CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(CREATE).with_arguments(create_args(name)))
        .await
        .expect("tools/call")
}

fn error_code(r: &rmcp::model::CallToolResult) -> Option<String> {
    (r.is_error == Some(true)).then(|| {
        r.structured_content.as_ref().unwrap()["error"]["code"]
            .as_str()
            .unwrap()
            .to_string()
    })
}

#[tokio::test]
async fn webhook_approves_or_denies_calls_of_the_real_server() {
    for (status, body, allowed) in [
        (200, r#"{"approved": true}"#, true),
        (200, r#"{"approved": false, "reason": "freeze"}"#, false),
        (500, r#"{"approved": true}"#, false),
    ] {
        let project = fixture();
        let (url, seen) = webhook(status, body).await;
        let client =
            support::connect_with(project.path(), &[("GODOT_MCP_APPROVAL_WEBHOOK", &url)]).await;
        // Reads and dry runs are not sent to the webhook.
        support::call_ok(&client, "list_files", json!({})).await;
        support::call_ok(
            &client,
            CREATE,
            json!({"path": "res://x.gd", "dry_run": true}),
        )
        .await;
        assert!(seen.lock().is_empty());
        let r = support::call(&client, CREATE, Value::Object(create_args("x"))).await;
        assert_eq!(error_code(&r).is_none(), allowed, "{status} {body}: {r:?}");
        assert_eq!(
            project.path().join("x.gd").exists(),
            allowed,
            "{status} {body}"
        );
        if !allowed {
            assert_eq!(error_code(&r).as_deref(), Some("APPROVAL_DENIED"));
        }
        let sent = seen.lock()[0].clone();
        assert_eq!(sent["tool"], CREATE);
        assert_eq!(sent["class"], "destructive");
        assert_eq!(sent["arguments"]["path"], "res://x.gd");
        assert_eq!(sent["principal"]["client_name"], "rmcp");
        // The transport's principal itself, the one idempotency is scoped by.
        assert_eq!(sent["principal"]["id"], "local", "{sent}");
        assert_eq!(sent["principal"]["transport"], "stdio", "{sent}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn unreachable_webhook_fails_closed_unless_fail_open() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/hook");
    for (fail_open, allowed) in [("false", false), ("true", true)] {
        let project = fixture();
        let env = [
            ("GODOT_MCP_APPROVAL_WEBHOOK", url.as_str()),
            ("GODOT_MCP_APPROVAL_FAIL_OPEN", fail_open),
        ];
        let client = support::connect_with(project.path(), &env).await;
        let r = support::call(&client, CREATE, Value::Object(create_args("x"))).await;
        assert_eq!(
            error_code(&r).is_none(),
            allowed,
            "fail_open={fail_open}: {r:?}"
        );
        assert_eq!(project.path().join("x.gd").exists(), allowed);
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn https_webhook_is_refused_at_start() {
    let project = fixture();
    let out = support::server_std()
        .args(["serve", "--project"])
        .arg(project.path())
        .env("GODOT_MCP_STATE_DIR", project.path().join(".state"))
        .env(
            "GODOT_MCP_APPROVAL_WEBHOOK",
            "https://approvals.example.com/hook",
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("GODOT_MCP_APPROVAL_WEBHOOK"));
}

const REQUIRE: &[(&str, &str)] = &[("GODOT_MCP_APPROVAL_REQUIRE", "true")];

#[tokio::test]
async fn elicitation_on_2025_11_25_accepting_and_declining() {
    for (answer, allowed) in [(Some(true), true), (Some(false), false), (None, false)] {
        let project = fixture();
        let human = Human::new(answer);
        let asked = human.asked.clone();
        let client = spawn(project.path(), REQUIRE, human, None).await;
        assert_eq!(
            client.peer_info().unwrap().protocol_version,
            ProtocolVersion::V_2025_11_25
        );
        let r = call_create(&client, "x").await;
        assert_eq!(error_code(&r).is_none(), allowed, "{answer:?}: {r:?}");
        assert_eq!(project.path().join("x.gd").exists(), allowed);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        if !allowed {
            assert_eq!(error_code(&r).as_deref(), Some("APPROVAL_DENIED"));
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn elicitation_on_2026_07_28_through_input_required_results() {
    for (answer, allowed) in [(Some(true), true), (None, false)] {
        let project = fixture();
        let human = Human::new(answer);
        let asked = human.asked.clone();
        let client = spawn(project.path(), REQUIRE, human, modern()).await;
        assert_eq!(
            client.peer_info().unwrap().protocol_version,
            ProtocolVersion::V_2026_07_28
        );
        // rmcp's client fulfils the input request through the handler and retries.
        let r = call_create(&client, "x").await;
        assert_eq!(error_code(&r).is_none(), allowed, "{answer:?}: {r:?}");
        assert_eq!(project.path().join("x.gd").exists(), allowed);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        client.cancel().await.unwrap();
    }
}

/// The retry's requestState is a handle to a call kept server-side: it is single use,
/// bound to the exact call, and a made-up one is refused.
#[tokio::test]
async fn input_required_state_is_never_trusted() {
    let project = fixture();
    let client = spawn(project.path(), REQUIRE, Human::new(Some(true)), modern()).await;
    let first = client
        .call_tool_once(CallToolRequestParams::new(CREATE).with_arguments(create_args("x")))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(input) = first else {
        panic!("expected input-required, got {first:?}")
    };
    assert!(
        !project.path().join("x.gd").exists(),
        "nothing runs before approval"
    );
    let handle = input.request_state.clone().unwrap();
    let key = input
        .input_requests
        .as_ref()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut yes = InputResponses::new();
    yes.insert(
        key,
        json!({"action": "accept", "content": {"approve": true}}),
    );
    let retry = |name: &str, state: &str| {
        let mut p = CallToolRequestParams::new(CREATE).with_arguments(create_args(name));
        p.request_state = Some(state.to_string());
        p.input_responses = Some(yes.clone());
        client.call_tool_once(p)
    };
    let done = |r: CallToolResponse| match r {
        CallToolResponse::Complete(r) => r,
        other => panic!("expected a result, got {other:?}"),
    };
    // Different arguments under the approved handle: refused, and the handle is spent.
    let r = done(retry("evil", &handle).await.unwrap());
    assert_eq!(error_code(&r).as_deref(), Some("APPROVAL_DENIED"));
    assert!(!project.path().join("evil.gd").exists());
    let r = done(retry("x", &handle).await.unwrap());
    assert_eq!(
        error_code(&r).as_deref(),
        Some("APPROVAL_DENIED"),
        "a handle is single use"
    );
    let r = done(
        retry("x", "0123456789abcdef0123456789abcdef")
            .await
            .unwrap(),
    );
    assert_eq!(error_code(&r).as_deref(), Some("APPROVAL_DENIED"));
    assert!(!project.path().join("x.gd").exists());
    // A fresh round trip, answered honestly, runs the call.
    let CallToolResponse::InputRequired(input) = client
        .call_tool_once(CallToolRequestParams::new(CREATE).with_arguments(create_args("x")))
        .await
        .unwrap()
    else {
        panic!("expected input-required")
    };
    let r = done(
        retry("x", input.request_state.as_deref().unwrap())
            .await
            .unwrap(),
    );
    assert_eq!(error_code(&r), None, "{r:?}");
    assert!(project.path().join("x.gd").exists());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_that_cannot_elicit_gets_a_clear_refusal() {
    for lifecycle in [None, modern()] {
        let project = fixture();
        let human = Human {
            can_elicit: false,
            ..Human::new(Some(true))
        };
        let client = spawn(project.path(), REQUIRE, human, lifecycle.clone()).await;
        let r = call_create(&client, "x").await;
        assert_eq!(
            error_code(&r).as_deref(),
            Some("APPROVAL_DENIED"),
            "{lifecycle:?}"
        );
        let msg = r.structured_content.unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(msg.contains("cannot answer elicitation"), "{msg}");
        assert!(!project.path().join("x.gd").exists());
        // Reads are never gated.
        let r = client
            .call_tool(
                CallToolRequestParams::new("list_files").with_arguments(serde_json::Map::new()),
            )
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true));
        client.cancel().await.unwrap();
    }
}

/// Issue 41 item 4: game_step's watch rows take `{expression}`, evaluated like
/// evaluate_expression, but game_step was not gated: with a webhook that denies
/// everything, `game_step {watch: [{expression: "get_tree().quit()"}]}` quit the game.
/// Both are refused now, and the held game's clock did not move.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_all_webhook_refuses_game_step_with_a_watch_expression() {
    let project = support::tiny_project("gate");
    let probe = project.path().join("addons/godot_mcp/probe/probe.gd");
    std::fs::create_dir_all(probe.parent().unwrap()).unwrap();
    std::fs::write(probe, "extends GodotMcpProbe\n").unwrap();
    let state = support::short_state_dir("gate");
    let (url, seen) = webhook(200, r#"{"approved": false, "reason": "freeze"}"#).await;
    let env = [
        ("GODOT_MCP_APPROVAL_WEBHOOK", url.as_str()),
        ("GODOT_STANDIN_HANG", "1"),
    ];
    let (client, _) = support::serve_standin(
        project.path(),
        state.path(),
        &env,
        std::process::Stdio::null(),
    )
    .await;
    // Launching a game executes no agent code: not gated.
    let v = support::call_ok(&client, "play_scene", json!({"paused": true})).await;
    let game = v["session_id"].clone();
    let quit = json!({"expression": "get_tree().quit()"});
    let r = support::call(&client, "evaluate_expression", quit.clone()).await;
    assert_eq!(error_code(&r).as_deref(), Some("APPROVAL_DENIED"), "{r:?}");
    let r = support::call(&client, "game_step", json!({"frames": 1, "watch": [quit]})).await;
    assert_eq!(error_code(&r).as_deref(), Some("APPROVAL_DENIED"), "{r:?}");
    assert_eq!(seen.lock().len(), 2, "both went to the webhook");
    assert_eq!(seen.lock()[1]["tool"], "game_step");
    let held = support::call_ok(&client, "game_pause", json!({})).await;
    assert_eq!(held["frame"], 0, "the refused step ran no frame: {held}");
    let l = support::call_ok(&client, "list_sessions", json!({})).await;
    let running = l["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["session_id"] == game && s["running"] == true);
    assert!(running, "the game still runs: {l}");
    support::call_ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}
