//! The MCP features clients use, through rmcp's client against the real binary:
//! logging (`logging/setLevel`, `notifications/message`), completions
//! (`completion/complete`), resource subscriptions (`resources/subscribe`,
//! `notifications/resources/updated`), progress (`notifications/progress`) and
//! cancellation (`notifications/cancelled`). Launches use the stand-in godot.
// Unix only: launches need the process-group boundary (docs/platforms.md).
#![cfg(unix)]
// rmcp marks MCP logging deprecated (SEP-2577); the protocol versions clients speak carry it.
#![allow(deprecated)]

mod support;

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, ClientRequest, CompleteRequestParams, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, Reference, Request,
    ResourceUpdatedNotificationParam, ServerResult, SetLevelRequestParams, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// What the server told the client, in arrival order.
#[derive(Debug, Clone)]
enum Heard {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
    Updated(String),
}

/// A client that records every notification it hears.
#[derive(Clone)]
struct Recorder(mpsc::UnboundedSender<Heard>);

impl ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Log(params));
    }
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Progress(params));
    }
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(Heard::Updated(params.uri));
    }
}

type Client = RunningService<RoleClient, Recorder>;

struct Served {
    client: Client,
    heard: mpsc::UnboundedReceiver<Heard>,
}

impl Served {
    /// The next notification whose text holds `needle` (every notification before
    /// it is dropped); `None` if the server closed first or 60 s pass.
    async fn until(&mut self, mut pick: impl FnMut(&Heard) -> bool) -> Option<Heard> {
        let wait = async {
            while let Some(h) = self.heard.recv().await {
                if pick(&h) {
                    return Some(h);
                }
            }
            None
        };
        tokio::time::timeout(Duration::from_secs(60), wait)
            .await
            .ok()
            .flatten()
    }

    /// Every notification heard so far, without waiting.
    fn drain(&mut self) -> Vec<Heard> {
        let mut all = Vec::new();
        while let Ok(h) = self.heard.try_recv() {
            all.push(h);
        }
        all
    }
}

/// `serve` on `project` with every toolset, the stand-in godot and `env`.
async fn serve(project: &Path, state: &Path, env: &[(&str, &str)]) -> Served {
    let mut cmd = tokio::process::Command::new(support::bin());
    cmd.arg("serve")
        .arg("--project")
        .arg(project)
        .env("GODOT_MCP_STATE_DIR", state)
        .env("GODOT_MCP_TOOLSETS", "all")
        .env("GODOT_BIN", support::standin());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(support::server_stderr())
        .spawn()
        .unwrap();
    let (tx, heard) = mpsc::unbounded_channel();
    let client = Recorder(tx).serve(transport).await.expect("handshake");
    Served { client, heard }
}

fn log_text(h: &Heard) -> Option<String> {
    match h {
        Heard::Log(m) => Some(m.data.to_string()),
        _ => None,
    }
}

async fn set_level(client: &Client, level: LoggingLevel) {
    client
        .set_level(SetLevelRequestParams::new(level))
        .await
        .expect("logging/setLevel");
}

async fn call_ok(client: &Client, name: &str, args: Value) -> Value {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.structured_content);
    r.structured_content.expect("structured content")
}

/// Kills whatever a failed test left behind (never a process outside `needle`).
struct Cleanup(String);
impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in support::processes_with(&self.0) {
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_lines_reach_a_client_at_its_level_and_above_only() {
    let p = support::tiny_project("logs");
    let s = support::short_state_dir("logs");
    let _c = Cleanup(s.path().display().to_string());
    let mut served = serve(p.path(), s.path(), &[]).await;

    // Before logging/setLevel the session hears nothing; at `error` the start-up
    // lines (all info) are still withheld.
    set_level(&served.client, LoggingLevel::Error).await;
    call_ok(&served.client, "project_info", json!({})).await;
    assert!(
        served.drain().iter().all(|h| log_text(h).is_none()),
        "a line below the level was sent"
    );

    // At info: the start-up lines first (the write gate), then each launch's start
    // and end, as they happen.
    set_level(&served.client, LoggingLevel::Info).await;
    let gate = served
        .until(|h| log_text(h).is_some_and(|t| t.contains("write gate open")))
        .await;
    let Some(Heard::Log(gate)) = gate else {
        panic!("no write-gate line")
    };
    assert_eq!(gate.level, LoggingLevel::Info);
    assert_eq!(gate.logger.as_deref(), Some("godot-mcp"));

    call_ok(
        &served.client,
        "run_and_capture",
        json!({"frames": 5, "timeout_ms": 20000}),
    )
    .await;
    assert!(
        served
            .until(|h| log_text(h).is_some_and(|t| t.contains("launch: started")))
            .await
            .is_some()
    );
    let ended = served
        .until(|h| log_text(h).is_some_and(|t| t.contains("launch: ended")))
        .await
        .and_then(|h| log_text(&h))
        .expect("the launch's end as a log line");
    assert!(ended.contains("committed"), "{ended}");
    served.client.cancel().await.unwrap();
}
