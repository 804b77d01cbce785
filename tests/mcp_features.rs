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
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, CompletionContext, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, Reference,
    ResourceUpdatedNotificationParam, SetLevelRequestParams, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
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
    /// The server's own pid (its command line names the project).
    pid: i32,
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

    /// For each picker, the first notification it takes, in any arrival order (rmcp's
    /// client runs every notification's handler as its own task, so two sent in order
    /// can reach the recorder swapped); `None` for a picker still unmatched when the
    /// server closed or 60 s passed.
    async fn all_of<const N: usize>(
        &mut self,
        picks: [&dyn Fn(&Heard) -> bool; N],
    ) -> [Option<Heard>; N] {
        let mut got: [Option<Heard>; N] = std::array::from_fn(|_| None);
        let wait = async {
            while got.iter().any(Option::is_none) {
                let Some(h) = self.heard.recv().await else {
                    break;
                };
                if let Some(i) = (0..N).find(|&i| got[i].is_none() && picks[i](&h)) {
                    got[i] = Some(h);
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(60), wait).await;
        got
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
    let mut cmd = support::server_tokio();
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
    let pid = transport.id().expect("server pid") as i32;
    let (tx, heard) = mpsc::unbounded_channel();
    let client = Recorder(tx).serve(transport).await.expect("handshake");
    Served { client, pid, heard }
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
    let logged =
        |needle: &'static str| move |h: &Heard| log_text(h).is_some_and(|t| t.contains(needle));
    let (started, ended) = (logged("launch: started"), logged("launch: ended"));
    let [started, ended] = served.all_of([&started, &ended]).await;
    assert!(started.is_some(), "no log line for the launch's start");
    let ended = ended
        .and_then(|h| log_text(&h))
        .expect("the launch's end as a log line");
    assert!(ended.contains("committed"), "{ended}");
    served.client.cancel().await.unwrap();
}

async fn complete(
    client: &Client,
    name: &str,
    value: &str,
    context: &[(&str, &str)],
) -> Vec<String> {
    let mut params = CompleteRequestParams::new(
        Reference::for_prompt("any_prompt"),
        ArgumentInfo::new(name, value),
    );
    if !context.is_empty() {
        params = params.with_context(CompletionContext::with_arguments(
            context
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ));
    }
    client
        .complete(params)
        .await
        .unwrap_or_else(|e| panic!("completion/complete {name}: {e}"))
        .completion
        .values
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_offer_the_projects_own_values_by_argument() {
    let s = support::short_state_dir("compl");
    let demo = support::demo_copy();
    let served = serve(demo.path(), s.path(), &[]).await;
    let c = &served.client;
    // Scenes: the .tscn files only, under the prefix.
    assert_eq!(
        complete(c, "scene", "res://scenes/", &[]).await,
        [
            "res://scenes/level_3d.tscn",
            "res://scenes/main_2d.tscn",
            "res://scenes/player.tscn"
        ]
    );
    // Scripts: .gd, never their .uid sidecars.
    let scripts = complete(c, "script", "res://scripts/p", &[]).await;
    assert_eq!(
        scripts,
        ["res://scripts/player.gd", "res://scripts/player_stats.gd"]
    );
    // Node paths of the scene the context names.
    assert_eq!(
        complete(c, "node", "C", &[("scene", "res://scenes/player.tscn")]).await,
        ["Camera2D", "CollisionShape2D"]
    );
    // Input actions from project.godot; toolsets by name.
    assert_eq!(
        complete(c, "action", "move_", &[]).await,
        ["move_down", "move_left", "move_right", "move_up"]
    );
    assert_eq!(complete(c, "toolset", "scene_r", &[]).await, ["scene_read"]);
    // An argument no tool has: no values, not an error.
    assert!(complete(c, "arg1", "test", &[]).await.is_empty());
    served.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_presets_complete_from_export_presets_cfg() {
    let p = support::tiny_project("presets");
    std::fs::write(
        p.path().join("export_presets.cfg"),
        "[preset.0]\n\nname=\"Linux\"\nplatform=\"Linux\"\nrunnable=true\nexport_path=\"build/game.x86_64\"\n\n\
         [preset.1]\n\nname=\"Web\"\nplatform=\"Web\"\nrunnable=false\nexport_path=\"build/index.html\"\n",
    )
    .unwrap();
    let s = support::short_state_dir("presets");
    let served = serve(p.path(), s.path(), &[]).await;
    assert_eq!(
        complete(&served.client, "preset", "", &[]).await,
        ["Linux", "Web"]
    );
    assert_eq!(complete(&served.client, "preset", "W", &[]).await, ["Web"]);
    served.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_transaction_resource_is_updated_when_its_transaction_ends() {
    let p = support::tiny_project("subs");
    let s = support::short_state_dir("subs");
    let _c = Cleanup(s.path().display().to_string());
    let mut served = serve(p.path(), s.path(), &[]).await;
    served
        .client
        .subscribe(SubscribeRequestParams::new("godot-mcp://transactions"))
        .await
        .expect("resources/subscribe");
    // A journaled write ends its transaction within the call.
    let w = call_ok(
        &served.client,
        "create_script",
        json!({"path": "res://a.gd", "confirm": true}),
    )
    .await;
    let txn = w["transaction_id"]
        .as_str()
        .expect("a transaction id")
        .to_owned();
    let updated = served
        .until(|h| matches!(h, Heard::Updated(_)))
        .await
        .expect("an update after the write");
    assert!(matches!(&updated, Heard::Updated(u) if u == "godot-mcp://transactions"));
    // The per-transaction resource reads that row.
    let uri = format!("godot-mcp://transactions/{txn}");
    let read = served
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri.clone()))
        .await
        .expect("the transaction's resource");
    let text = serde_json::to_value(&read.contents[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let row: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(row["transaction_id"], txn.as_str());
    assert_eq!(row["status"], "committed");

    // A launch's transaction ends when the process is reaped, after the call and
    // with no call under way: here the game dies by itself (killed from outside).
    served
        .client
        .subscribe(SubscribeRequestParams::new("test://not-ours"))
        .await
        .expect("any uri may be subscribed to");
    let v = call_ok(&served.client, "play_scene", json!({})).await;
    let session = v["session_id"].as_str().unwrap().to_owned();
    let pid = v["pid"].as_i64().expect("the game's pid") as i32;
    let session_uri = format!("godot-mcp://transactions/{session}");
    served
        .client
        .subscribe(SubscribeRequestParams::new(session_uri.clone()))
        .await
        .unwrap();
    let game = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process(game, rustix::process::Signal::KILL).unwrap();
    let got = served
        .until(|h| matches!(h, Heard::Updated(u) if *u == session_uri))
        .await;
    assert!(got.is_some(), "no update for {session_uri}");
    served.client.cancel().await.unwrap();
}

fn progress_message(h: &Heard) -> Option<(f64, String)> {
    match h {
        Heard::Progress(p) => Some((p.progress, p.message.clone().unwrap_or_default())),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launching_call_reports_its_real_steps_as_progress() {
    let p = support::tiny_project("progress");
    let s = support::short_state_dir("progress");
    let _c = Cleanup(s.path().display().to_string());
    let mut served = serve(p.path(), s.path(), &[]).await;
    // rmcp's client puts a progressToken on every request.
    call_ok(
        &served.client,
        "run_and_capture",
        json!({"frames": 5, "timeout_ms": 20000}),
    )
    .await;
    let needles = [
        "run_and_capture launched",
        "run_and_capture ended (exit code 0)",
        "output read",
    ];
    let step = |needle: &'static str| {
        move |h: &Heard| progress_message(h).is_some_and(|(_, m)| m.contains(needle))
    };
    let (a, b, c) = (step(needles[0]), step(needles[1]), step(needles[2]));
    let heard = served.all_of([&a, &b, &c]).await;
    // The steps' order is the progress numbers the server gave them, not arrival order.
    let steps: Vec<f64> = heard
        .iter()
        .zip(needles)
        .map(|(h, needle)| {
            h.as_ref()
                .and_then(progress_message)
                .unwrap_or_else(|| panic!("no progress step {needle:?}"))
                .0
        })
        .collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "progress must increase: {steps:?}"
    );
    served.client.cancel().await.unwrap();
}

/// A project whose run_tests finds GUT installed and imported, and a tests folder:
/// with the stand-in as Godot (told to hang) the run never ends by itself.
fn gut_project() -> tempfile::TempDir {
    let p = support::tiny_project("cancel");
    std::fs::create_dir_all(p.path().join("addons/gut")).unwrap();
    std::fs::write(
        p.path().join("addons/gut/gut_cmdln.gd"),
        "extends SceneTree\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.path().join("test")).unwrap();
    std::fs::write(p.path().join("test/test_a.gd"), "extends GutTest\n").unwrap();
    std::fs::create_dir_all(p.path().join(".godot")).unwrap();
    std::fs::write(
        p.path().join(".godot/global_script_class_cache.cfg"),
        "list=[{\"class\": &\"GutTest\"}]\n",
    )
    .unwrap();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_tests_leaves_no_process_and_a_journal_row_that_says_so() {
    let p = gut_project();
    let s = support::short_state_dir("cancel");
    let needles = [
        s.path().display().to_string(),
        p.path().display().to_string(),
    ];
    let _c = Cleanup(needles[0].clone());
    let _c2 = Cleanup(needles[1].clone());
    let mut served = serve(
        p.path(),
        s.path(),
        &[
            ("GODOT_STANDIN_HANG", "1"),
            ("GODOT_STANDIN_FORK", "1"),
            ("GODOT_STANDIN_IGNORE_TERM", "1"),
        ],
    )
    .await;
    set_level(&served.client, LoggingLevel::Info).await;
    let args = json!({"timeout_ms": 600000});
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("run_tests").with_arguments(args.as_object().unwrap().clone()),
    ));
    let handle = served
        .client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .expect("tools/call sent");
    // The run is under way once its launch is reported.
    served
        .until(|h| progress_message(h).is_some_and(|(_, m)| m.contains("run_tests launched")))
        .await
        .expect("run_tests launched");
    let server = served.pid;
    let launched = move |needle: &str| -> Vec<i32> {
        support::processes_with(needle)
            .into_iter()
            .filter(|pid| *pid != server)
            .collect()
    };
    // The launch is reported once spawned; the stand-in's own fork may lag behind on a
    // loaded machine: wait for it (bounded) instead of racing it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while launched(&needles[1]).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        !launched(&needles[1]).is_empty(),
        "the stand-in should be running"
    );
    handle
        .cancel(Some("test".into()))
        .await
        .expect("notifications/cancelled");
    // The launch's end, as the server logs it when the reaper has recorded it.
    let ended = served
        .until(|h| {
            log_text(h).is_some_and(|t| t.contains("launch: ended") && t.contains("run_tests"))
        })
        .await
        .and_then(|h| log_text(&h))
        .expect("the cancelled launch ended");
    assert!(ended.contains("\"cancelled\":true"), "{ended}");
    for needle in &needles {
        assert!(
            launched(needle).is_empty(),
            "left running: {:?}",
            launched(needle)
        );
    }
    let t = call_ok(&served.client, "list_transactions", json!({})).await;
    let row = t["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "run_tests")
        .expect("the run's row")
        .clone();
    assert_ne!(row["status"], "open", "{row}");
    let summary = row["proof_summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("stopped by the server (signal 9)")
            && summary.contains("boundary proven empty"),
        "{row}"
    );
    served.client.cancel().await.unwrap();
}
