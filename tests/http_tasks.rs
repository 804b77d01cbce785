//! Long work as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663)
//! over real HTTP: rmcp's own client declares the extension and calls `run_tests`
//! against the real `godot-mcp serve --http`, with the stand-in as Godot (a real
//! process the server launches, journals and kills). The task's id is its launch's
//! journal transaction; it completes, is cancelled (its launch killed), is polled by a
//! client that reconnected, and after the server is killed -9 and started again it is
//! answered from the journal. A client that does not declare tasks gets today's answer.
//! Waits are the protocol's own polling (`pollIntervalMs`), bounded.
#![cfg(unix)]

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    DetailedTask, GetTaskParams, Implementation, TaskPayload, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const LISTENING: &str = "godot-mcp serve: listening on http://";
const TIMEOUT: Duration = Duration::from_secs(60);

type Client = RunningService<RoleClient, ClientConfig>;

/// A project whose run_tests finds GUT installed and imported and a tests folder
/// (as tests/mcp_features.rs's cancelled run); the stand-in plays Godot.
fn gut_project() -> tempfile::TempDir {
    let p = support::tiny_project("tasks");
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

/// `godot-mcp serve --http 127.0.0.1:0` on `project` with `state`, the stand-in as
/// Godot and `env`; its URL once it prints its listening line.
async fn serve(
    project: &Path,
    state: &Path,
    env: &[(&str, &str)],
) -> (tokio::process::Child, String) {
    serve_godot(project, state, &support::standin(), env).await
}

/// [`serve`] with `godot` as Godot.
async fn serve_godot(
    project: &Path,
    state: &Path,
    godot: &Path,
    env: &[(&str, &str)],
) -> (tokio::process::Child, String) {
    let mut cmd = support::server_tokio();
    cmd.arg("serve")
        .arg("--project")
        .arg(project)
        .arg("--http")
        .arg("127.0.0.1:0")
        .env("GODOT_MCP_STATE_DIR", state)
        .env("GODOT_MCP_TOOLSETS", "all")
        .env("GODOT_BIN", godot)
        .env_remove("GODOT_MCP_AUTH_TOKEN")
        .env_remove("GODOT_MCP_HTTP")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn godot-mcp");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(TIMEOUT, async {
        while let Some(line) = lines.next_line().await.expect("read stderr") {
            if let Some(rest) = line.strip_prefix(LISTENING) {
                return format!("http://{rest}");
            }
        }
        panic!("the server exited before listening");
    })
    .await
    .expect("the server listens in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// A 2025-11-25 session client that declares the tasks extension (or not).
async fn connect(url: &str, tasks: bool) -> Client {
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    let config = ClientConfig::new(capabilities, Implementation::new("tasks-test", "1"));
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    tokio::time::timeout(TIMEOUT, config.serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

fn run_tests(args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("run_tests").with_arguments(args.as_object().unwrap().clone())
}

/// `run_tests` called by a client that declared tasks: the task's id.
async fn start_task(client: &Client, args: Value) -> String {
    match client
        .peer()
        .call_tool_once(run_tests(args))
        .await
        .expect("tools/call")
    {
        CallToolResponse::Task(t) => {
            assert_eq!(t.task.status, TaskStatus::Working, "{t:?}");
            t.task.task_id
        }
        other => panic!("run_tests should answer with a task: {other:?}"),
    }
}

async fn get(client: &Client, id: &str) -> DetailedTask {
    client
        .peer()
        .get_task(GetTaskParams::new(id))
        .await
        .expect("tasks/get")
        .task
}

/// Poll task `id` at its `pollIntervalMs` until it is terminal (bounded).
async fn until_terminal(client: &Client, id: &str) -> DetailedTask {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let task = get(client, id).await;
        if task.status().is_terminal() {
            return task;
        }
        assert!(Instant::now() < deadline, "task {id} still {:?}", task.task);
        let every = task.task.poll_interval_ms.unwrap_or(500);
        tokio::time::sleep(Duration::from_millis(every)).await;
    }
}

/// The journal's row of transaction `id`, through list_transactions.
async fn row(client: &Client, id: &str) -> Value {
    let r = client
        .peer()
        .call_tool(
            CallToolRequestParams::new("list_transactions")
                .with_arguments(json!({}).as_object().unwrap().clone()),
        )
        .await
        .expect("list_transactions");
    let t = r.structured_content.expect("structured");
    t["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["transaction_id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {t}"))
        .clone()
}

/// run_tests as a task: answered at once with a task named by its launch's
/// transaction; the client disconnects, a new one polls the same id to `completed`,
/// and the result is run_tests' own, naming that transaction. (The stand-in does not
/// run GUT: like a run that never ends, it is stopped at `timeout_ms` and reported as
/// a timeout, run_tests' own result.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_tests_as_a_task_completes_and_a_reconnected_client_polls_it() {
    let p = gut_project();
    let s = support::short_state_dir("tasks");
    let (_server, url) = serve(p.path(), s.path(), &[]).await;
    let first = connect(&url, true).await;
    let id = start_task(&first, json!({"timeout_ms": 1500})).await;
    first.cancel().await.unwrap();

    let second = connect(&url, true).await;
    let task = until_terminal(&second, &id).await;
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("completed: {task:?}")
    };
    let out = &result["structuredContent"];
    assert_eq!(out["transaction_id"], id, "{result:?}");
    assert_eq!(out["framework"], "gut", "{result:?}");
    assert_eq!(out["outcome"], "timeout", "{result:?}");
    let row = row(&second, &id).await;
    assert_eq!(row["status"], "committed", "{row}");
    assert_eq!(row["operation"], "run_tests", "{row}");
    second.cancel().await.unwrap();
}

/// tasks/cancel kills the launch as a cancelled request does: the task reads
/// `cancelled`, nothing of the run is left running, and its journal row says the
/// server stopped it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_tests_task_kills_its_launch() {
    let p = gut_project();
    let s = support::short_state_dir("tasks");
    let (_server, url) = serve(
        p.path(),
        s.path(),
        &[
            ("GODOT_STANDIN_HANG", "1"),
            ("GODOT_STANDIN_FORK", "1"),
            ("GODOT_STANDIN_IGNORE_TERM", "1"),
        ],
    )
    .await;
    let client = connect(&url, true).await;
    let id = start_task(&client, json!({"timeout_ms": 600000})).await;
    assert_eq!(get(&client, &id).await.status(), TaskStatus::Working);
    client
        .peer()
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .expect("tasks/cancel");
    let task = until_terminal(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Cancelled, "{task:?}");
    let project = p.path().display().to_string();
    assert!(
        support::processes_with(&project).iter().all(|pid| {
            // Only the server itself names the project now.
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.contains("serve"))
        }),
        "left running: {:?}",
        support::processes_with(&project)
    );
    let row = row(&client, &id).await;
    assert_eq!(row["status"], "committed", "{row}");
    let summary = row["proof_summary"].as_str().unwrap_or_default();
    assert!(summary.contains("stopped by the server"), "{row}");
    client.cancel().await.unwrap();
}

/// The server is killed -9 while a run_tests task works; the next server answers
/// tasks/get for the same id from the journal: the launch's transaction, settled at
/// start-up, with its row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_server_crash_a_task_is_answered_from_the_journal() {
    let p = gut_project();
    let s = support::short_state_dir("tasks");
    let env = [("GODOT_STANDIN_HANG", "1")];
    let (server, url) = serve(p.path(), s.path(), &env).await;
    let client = connect(&url, true).await;
    let id = start_task(&client, json!({"timeout_ms": 600000})).await;
    assert_eq!(get(&client, &id).await.status(), TaskStatus::Working);
    drop(client);
    support::kill9_and_wait(server.id().expect("server pid"));

    let (_again, url) = serve(p.path(), s.path(), &env).await;
    let client = connect(&url, true).await;
    let task = get(&client, &id).await;
    assert_eq!(task.task.task_id, id);
    let TaskPayload::Failed { error } = &task.payload else {
        panic!("a task whose server died is failed, from the journal: {task:?}")
    };
    let row = &error["data"]["transaction"];
    assert_eq!(row["transaction_id"], id, "{error:?}");
    assert_ne!(row["status"], "open", "{error:?}");
    assert_eq!(*row, self::row(&client, &id).await);
    client.cancel().await.unwrap();
}

/// A client that does not declare the tasks extension gets run_tests' result in the
/// call's own answer, as before tasks existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_tasks_gets_the_result_in_the_call() {
    let p = gut_project();
    let s = support::short_state_dir("tasks");
    let (_server, url) = serve(p.path(), s.path(), &[]).await;
    let client = connect(&url, false).await;
    let r = client
        .peer()
        .call_tool(run_tests(json!({"timeout_ms": 1500})))
        .await
        .expect("tools/call");
    let out = r.structured_content.expect("run_tests' result");
    assert_eq!(out["framework"], "gut", "{out}");
    assert!(out["transaction_id"].is_string(), "{out}");
    client.cancel().await.unwrap();
}

/// Real Godot (`GODOT_BIN`) and real GUT (`GUT_DIR`, a folder holding `addons/gut`, as
/// tests/run_tests.rs): the sample suite (one passing test, one failing at line 9) run
/// as a task with `import=true`. The first launch is the import, so the task is named
/// by the import's transaction; it completes with run_tests' full report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_godot_run_tests_as_a_task_reports_the_real_suite() {
    let Some(godot) = support::godot_bin("run_tests as a task") else {
        return;
    };
    let Some(gut) = std::env::var_os("GUT_DIR").map(std::path::PathBuf::from) else {
        eprintln!("SKIPPED: GUT_DIR is not set (run_tests as a task with real GUT)");
        return;
    };
    let p = support::tiny_project("tasks");
    support::copy_dir(&gut.join("addons/gut"), &p.path().join("addons/gut"));
    support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/godot-4.4.1/run_tests/gut/test"),
        &p.path().join("test"),
    );
    let s = support::short_state_dir("tasks");
    let (_server, url) = serve_godot(p.path(), s.path(), &godot, &[]).await;
    let client = connect(&url, true).await;
    let id = start_task(&client, json!({"import": true})).await;
    let deadline = Instant::now() + Duration::from_secs(300);
    let task = loop {
        let task = get(&client, &id).await;
        if task.status().is_terminal() || Instant::now() > deadline {
            break task;
        }
        tokio::time::sleep(Duration::from_millis(
            task.task.poll_interval_ms.unwrap_or(500),
        ))
        .await;
    };
    let TaskPayload::Completed { result } = &task.payload else {
        panic!("completed: {task:?}")
    };
    let out = &result["structuredContent"];
    assert_eq!(out["import"]["transaction_id"], id, "{out:#}");
    assert_eq!(out["outcome"], "failed", "{out:#}");
    assert_eq!(out["complete"], true, "{out:#}");
    assert_eq!(
        out["summary"],
        json!({"total": 2, "passed": 1, "failed": 1, "errors": 0, "skipped": 0, "risky": 0}),
        "{out:#}"
    );
    assert_eq!(row(&client, &id).await["operation"], "run_tests_import");
    client.cancel().await.unwrap();
}
