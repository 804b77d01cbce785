//! The process plane against a stand-in `godot` (crate `godot-mcp-standin`, built
//! by these tests): a real executable that forks a child into its process group,
//! ignores SIGTERM, writes output, talks to the control socket and can be told
//! to hang. Proves:
//!
//! - the launch receipt is durable before play_scene answers (a SIGKILLed server's
//!   successor finds and terminates the session from it);
//! - kill -9 of the server at each launch phase → the next start leaves 0 orphans;
//! - run_and_capture parses script errors and tells a timeout kill from a crash;
//! - held input is released when the probe loses its server;
//! - an interrupted export registers nothing and its bytes are retained;
//! - a normal stop stops every session first.
// Unix only: launches need the process-group boundary (docs/platforms.md).
#![cfg(unix)]

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

type Client = RunningService<rmcp::RoleClient, ()>;

fn project() -> tempfile::TempDir {
    support::tiny_project("pp")
}

fn state_dir() -> tempfile::TempDir {
    support::short_state_dir("pp")
}

async fn start(project: &Path, state: &Path, env: &[(&str, &str)]) -> (Client, i32) {
    support::serve_standin(project, state, env, Stdio::null()).await
}

/// SIGKILL and wait until every thread of `pid` has exited (see tests/kill9.rs).
fn kill9(pid: i32) {
    if let Some(p) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    }
    wait_dead(pid);
}

fn wait_dead(pid: i32) {
    let exited = |tid: &str| match std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")) {
        Err(_) => true,
        Ok(stat) => matches!(
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        ),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return;
        };
        if tasks
            .flatten()
            .all(|t| exited(&t.file_name().to_string_lossy()))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("{pid} did not exit within 30 s");
}

use support::{call_err as err, call_ok as ok};

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

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

async fn transactions(client: &Client) -> Value {
    ok(client, "list_transactions", json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_and_capture_parses_script_errors_and_exit_status() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_SCRIPT_ERROR", "1")]).await;
    let v = ok(
        &client,
        "run_and_capture",
        json!({"frames": 20, "timeout_ms": 20000}),
    )
    .await;
    assert_eq!(v["end"]["ended_by"], "exit", "{v}");
    assert_eq!(v["end"]["code"], 0, "{v}");
    assert_eq!(v["timed_out"], false);
    let errs = v["script_errors"].as_array().unwrap();
    let e = errs
        .iter()
        .find(|e| e["kind"] == "script_error")
        .expect("a script error");
    assert_eq!(e["file"], "res://scripts/broken.gd");
    assert_eq!(e["line"], 12);
    assert_eq!(e["function"], "_ready");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("Nonexistent function 'explode'")
    );
    assert!(
        v["stdout"]
            .as_str()
            .unwrap()
            .contains("Godot Engine v4.4.1")
    );
    let t = transactions(&client).await;
    let row = &t["transactions"][0];
    assert_eq!(row["effect_kind"], "process_launch");
    assert_eq!(row["status"], "committed", "{row}");
    assert!(
        row["proof_summary"]
            .as_str()
            .unwrap()
            .contains("boundary proven empty")
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kill_is_not_a_crash() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, _) = start(
        p.path(),
        s.path(),
        &[
            ("GODOT_STANDIN_HANG", "1"),
            ("GODOT_STANDIN_FORK", "1"),
            ("GODOT_STANDIN_IGNORE_TERM", "1"),
        ],
    )
    .await;
    let v = ok(&client, "run_and_capture", json!({"timeout_ms": 300})).await;
    assert_eq!(v["end"]["ended_by"], "timeout", "{v}");
    assert_eq!(v["timed_out"], true);
    assert_eq!(
        v["end"]["boundary_empty"], true,
        "the forked child was killed too: {v}"
    );
    assert!(support::processes_with(&s.path().display().to_string()).is_empty());
    client.cancel().await.unwrap();

    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_CRASH", "1")]).await;
    let v = ok(&client, "run_and_capture", json!({"timeout_ms": 20000})).await;
    assert_eq!(v["end"]["ended_by"], "crash", "{v}");
    assert_eq!(v["end"]["signal"], 6, "{v}");
    assert_eq!(v["timed_out"], false);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipt_is_durable_before_the_answer_and_survivors_are_terminated() {
    let p = project();
    let s = state_dir();
    let needle = s.path().display().to_string();
    let _c = Cleanup(needle.clone());
    let env = [
        ("GODOT_STANDIN_HANG", "1"),
        ("GODOT_STANDIN_FORK", "1"),
        ("GODOT_STANDIN_IGNORE_TERM", "1"),
        ("GODOT_MCP_PROBE_QUIT_MS", "600000"),
    ];
    let (client, server) = start(p.path(), s.path(), &env).await;
    let v = ok(&client, "play_scene", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let txn = v["session_id"].as_str().unwrap().to_string();
    // The stand-in forks its child at start; wait for both.
    assert!(wait_until(
        Duration::from_secs(10),
        || support::group_members(pgid).len() >= 2
    ));
    // SIGKILL right after the answer: only the durable receipt can find them.
    kill9(server);
    drop(client);
    assert!(
        support::group_members(pgid).len() >= 2,
        "the session survived its server"
    );

    let (client, _) = start(p.path(), s.path(), &env).await;
    // Reconciliation ran before the handshake answered.
    assert!(
        support::group_members(pgid).is_empty(),
        "orphans left: {:?}",
        support::group_members(pgid)
    );
    assert!(support::processes_with(&needle).is_empty());
    let t = transactions(&client).await;
    assert_eq!(t["write_gate"]["status"], "open", "{t}");
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "compensated", "{row}");
    let summary = row["proof_summary"].as_str().unwrap();
    assert!(
        summary.contains("survivor(s) terminated") && summary.contains("boundary proven empty"),
        "{summary}"
    );
    // Its output was archived.
    let archived = std::fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .map(|d| d.path().join("archive").join(&txn).join("stdout.log"))
        .find(|p| p.is_file())
        .expect("archived stdout");
    assert!(
        std::fs::read_to_string(archived)
            .unwrap()
            .contains("Godot Engine")
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_at_each_launch_phase_leaves_no_orphan() {
    for point in [
        "launch::after_intent",
        "launch::after_spawn",
        "launch::after_receipt",
        "launch::after_release",
    ] {
        let p = project();
        let s = state_dir();
        let needle = s.path().display().to_string();
        let _c = Cleanup(needle.clone());
        let log = s.path().join("standin.log");
        let log_s = log.display().to_string();
        let env = [
            ("GODOT_STANDIN_HANG", "1"),
            ("GODOT_STANDIN_FORK", "1"),
            ("GODOT_STANDIN_IGNORE_TERM", "1"),
            ("GODOT_STANDIN_LOG", log_s.as_str()),
            ("GODOT_MCP_PROBE_QUIT_MS", "600000"),
            ("GODOT_MCP_CRASH_AT", point),
        ];
        let (client, server) = start(p.path(), s.path(), &env).await;
        let r = client
            .call_tool(CallToolRequestParams::new("play_scene").with_arguments(Default::default()))
            .await;
        assert!(r.is_err(), "{point}: the server should have died: {r:?}");
        wait_dead(server);
        drop(client);
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        let godot_ran = ran.contains("started");
        if point == "launch::after_release" {
            // Godot was released: give it a moment to show up.
            assert!(wait_until(Duration::from_secs(10), || {
                std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .contains("started")
            }));
        } else {
            assert!(
                !godot_ran,
                "{point}: Godot ran before its receipt was durable"
            );
        }

        let (client, _) = start(p.path(), s.path(), &env[..5]).await;
        let left = support::processes_with(&needle);
        assert!(left.is_empty(), "{point}: orphans {left:?}");
        let t = transactions(&client).await;
        assert_eq!(t["write_gate"]["status"], "open", "{point}: {t}");
        let rows = t["transactions"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{point}: {t}");
        assert_eq!(rows[0]["status"], "compensated", "{point}: {t}");
        // Nothing started later either (a released gate would show in the log).
        std::thread::sleep(Duration::from_millis(50));
        if point != "launch::after_release" {
            assert!(
                !std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .contains("started"),
                "{point}"
            );
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_input_screenshot_and_release_on_disconnect() {
    let p = project();
    let s = state_dir();
    let needle = s.path().display().to_string();
    let _c = Cleanup(needle.clone());
    let env = [
        ("GODOT_STANDIN_HANG", "1"),
        ("GODOT_MCP_PROBE_QUIT_MS", "200"),
    ];
    let (client, server) = start(p.path(), s.path(), &env).await;
    let v = ok(&client, "play_scene", json!({})).await;
    let txn = v["session_id"].as_str().unwrap().to_string();
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    assert_eq!(v["autoload_installed"], false);
    let i = ok(
        &client,
        "simulate_input",
        json!({"event": {"type": "action", "action": "jump"}, "hold_ms": 60000}),
    )
    .await;
    assert_eq!(i["delivered"], true);
    assert_eq!(i["held"], 1);
    let e = err(&client, "game_screenshot", json!({})).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "no_renderer", "{e}");
    let g = ok(
        &client,
        "get_game_property",
        json!({"node": "/root/Main", "property": "position"}),
    )
    .await;
    assert!(g["value"].is_string());
    // Sampling: the requested count, spaced by the interval, a value that moves.
    let m = ok(
        &client,
        "monitor_property",
        json!({"node": "/root/Main", "property": "ticks", "samples": 5, "interval_ms": 40}),
    )
    .await;
    assert_eq!(m["returned"], 5, "{m}");
    assert_eq!(m["stopped_early"], false, "{m}");
    let series = m["samples"].as_array().unwrap();
    let t: Vec<u64> = series.iter().map(|s| s["t_ms"].as_u64().unwrap()).collect();
    let v: Vec<u64> = series
        .iter()
        .map(|s| s["value"].as_u64().unwrap())
        .collect();
    assert!(
        t.windows(2).all(|w| w[1] >= w[0] + 30),
        "spaced by the interval: {t:?}"
    );
    assert!(
        v.windows(2).all(|w| w[1] > w[0]),
        "the game's counter moved: {v:?}"
    );
    assert!(m["distinct_values"].as_u64().unwrap() == 5, "{m}");
    let e = err(
        &client,
        "monitor_property",
        json!({"node": "/root/Main", "property": "ticks", "samples": 200, "interval_ms": 5000}),
    )
    .await;
    assert_eq!(
        e["code"], "INVALID_PARAMS",
        "unbounded monitors are refused: {e}"
    );
    // The server dies holding input: the probe releases at once, quits 200 ms later.
    kill9(server);
    drop(client);
    assert!(
        wait_until(Duration::from_secs(10), || support::group_members(pgid)
            .is_empty()),
        "the game did not quit after losing its server"
    );
    let (client, _) = start(p.path(), s.path(), &env).await;
    let t = transactions(&client).await;
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "compensated", "{row}");
    let out = std::fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .map(|d| d.path().join("archive").join(&txn).join("stdout.log"))
        .find(|p| p.is_file())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    assert!(
        out.contains("server lost; released 1 held input(s)"),
        "{out}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_stop_stops_every_session_first() {
    let p = project();
    let s = state_dir();
    let needle = s.path().display().to_string();
    let _c = Cleanup(needle.clone());
    let env = [
        ("GODOT_STANDIN_HANG", "1"),
        ("GODOT_STANDIN_FORK", "1"),
        ("GODOT_STANDIN_IGNORE_TERM", "1"),
    ];
    let (client, server) = start(p.path(), s.path(), &env).await;
    let v = ok(&client, "play_scene", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let txn = v["session_id"].as_str().unwrap().to_string();
    client.cancel().await.unwrap();
    wait_dead(server);
    assert!(support::group_members(pgid).is_empty());
    let (client, _) = start(p.path(), s.path(), &env).await;
    let t = transactions(&client).await;
    let row = support::transaction_row(&t, &txn);
    assert_eq!(
        row["status"], "committed",
        "stopped and recorded by the server itself: {row}"
    );
    assert!(
        row["proof_summary"]
            .as_str()
            .unwrap()
            .contains("stopped by the server"),
        "{row}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_export_registers_nothing_and_keeps_its_bytes() {
    let p = project();
    let s = state_dir();
    let needle = s.path().display().to_string();
    let _c = Cleanup(needle.clone());
    // A clean export registers its artifact.
    let (client, _) = start(p.path(), s.path(), &[]).await;
    let v = ok(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": "res://build/game.x86_64"}),
    )
    .await;
    assert_eq!(v["registered"], true, "{v}");
    assert_eq!(
        std::fs::metadata(p.path().join("build/game.x86_64"))
            .unwrap()
            .len(),
        40960
    );
    // Outside the project needs confirm.
    let e = err(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": "/tmp/elsewhere.bin"}),
    )
    .await;
    assert_eq!(e["required"], "confirm", "{e}");
    let out = tempfile::tempdir().unwrap();
    let outside = out.path().join("game.bin");
    let v = ok(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": outside, "confirm": true}),
    )
    .await;
    assert_eq!(v["registered"], true, "{v}");
    assert!(outside.is_file());
    client.cancel().await.unwrap();

    // An export that hangs and times out: nothing registered, bytes retained.
    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_EXPORT_HANG", "1")]).await;
    let v = ok(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": "res://build/two.x86_64", "timeout_ms": 500}),
    )
    .await;
    assert_eq!(v["registered"], false, "{v}");
    assert_eq!(v["end"]["ended_by"], "timeout", "{v}");
    assert!(!p.path().join("build/two.x86_64").exists());
    let st = ok(&client, "export_status", json!({})).await;
    assert_eq!(st["interrupted_exports_retained"], 1, "{st}");
    assert_eq!(st["retained_bytes"], 5 * 4096, "{st}");
    client.cancel().await.unwrap();

    // kill -9 of the server during an export: the successor terminates it; nothing registered.
    let (client, server) = start(p.path(), s.path(), &[("GODOT_STANDIN_EXPORT_HANG", "1")]).await;
    let c2 = std::sync::Arc::new(client);
    let c3 = c2.clone();
    let call = tokio::spawn(async move {
        c3.call_tool(
            CallToolRequestParams::new("export_project").with_arguments(
                json!({"preset": "Linux", "output_path": "res://build/three.x86_64"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
    });
    assert!(wait_until(Duration::from_secs(10), || {
        std::fs::read_dir(s.path()).unwrap().flatten().any(|d| {
            std::fs::read_dir(d.path().join("sessions")).is_ok_and(|rd| {
                rd.flatten().any(|x| {
                    std::fs::metadata(x.path().join("export.partial"))
                        .is_ok_and(|m| m.len() >= 5 * 4096)
                })
            })
        })
    }));
    kill9(server);
    let _ = call.await;
    drop(c2);
    let (client, _) = start(p.path(), s.path(), &[]).await;
    assert!(support::processes_with(&needle).is_empty());
    assert!(!p.path().join("build/three.x86_64").exists());
    let st = ok(&client, "export_status", json!({})).await;
    assert_eq!(st["interrupted_exports_retained"], 2, "{st}");
    assert_eq!(st["retained_bytes"], 2 * 5 * 4096, "{st}");
    client.cancel().await.unwrap();
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// An export's artifact inside the project is a journaled `file` write through the
/// one seam, linked to the export's launch; overwriting an existing file (project.godot
/// included) needs confirm and is journaled with its pre-state; an artifact outside
/// the project is recorded with the hash of what is on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_artifact_is_a_journaled_write_linked_to_its_launch() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let log = s.path().join("standin.log");
    let (client, _) = start(
        p.path(),
        s.path(),
        &[("GODOT_STANDIN_LOG", log.to_str().unwrap())],
    )
    .await;
    let exports = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("--export-release")
            .count()
    };
    let target = p.path().join("build/game.x86_64");
    let v = ok(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": "res://build/game.x86_64"}),
    )
    .await;
    assert_eq!(v["registered"], true, "{v}");
    let bytes = std::fs::read(&target).unwrap();
    assert_eq!(bytes, vec![b'P'; 40960]);
    let a = &v["artifact"];
    assert_eq!(a["path"], "res://build/game.x86_64", "{v}");
    assert_eq!(a["sha256"], sha256_hex(&bytes), "{v}");
    assert_eq!(a["linked_launch"], v["transaction_id"], "{v}");
    let t = transactions(&client).await;
    let file = support::transaction_row(&t, a["transaction_id"].as_str().unwrap());
    assert_eq!(file["effect_kind"], "file", "{file}");
    assert_eq!(file["status"], "committed", "{file}");
    assert_eq!(file["operation"], "export_project", "{file}");
    assert_eq!(file["path"], "build/game.x86_64", "{file}");
    let launch = support::transaction_row(&t, v["transaction_id"].as_str().unwrap());
    assert_eq!(launch["effect_kind"], "process_launch", "{launch}");
    assert_eq!(launch["status"], "committed", "{launch}");

    // Overwriting is destructive: refused without confirm, before anything runs.
    std::fs::write(&target, b"the previous build").unwrap();
    let before = exports();
    for out in ["res://build/game.x86_64", "res://project.godot"] {
        let e = err(
            &client,
            "export_project",
            json!({"preset": "Linux", "output_path": out}),
        )
        .await;
        assert_eq!(e["code"], "PRECONDITION_FAILED", "{out}: {e}");
        assert_eq!(e["required"], "confirm", "{out}: {e}");
    }
    assert_eq!(exports(), before, "a refused export must not run");
    assert_eq!(std::fs::read(&target).unwrap(), b"the previous build");
    assert!(
        std::fs::read_to_string(p.path().join("project.godot"))
            .unwrap()
            .contains("config/name=\"pp\"")
    );
    let v = ok(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": "res://build/game.x86_64", "confirm": true}),
    )
    .await;
    assert_eq!(v["registered"], true, "{v}");
    assert_eq!(std::fs::read(&target).unwrap(), vec![b'P'; 40960]);
    let file = support::transaction_row(
        &transactions(&client).await,
        v["artifact"]["transaction_id"].as_str().unwrap(),
    );
    assert_eq!(file["status"], "committed", "{file}");

    // Outside the project: confirm, then written and recorded with its hash.
    let out = tempfile::tempdir().unwrap();
    let outside = out.path().join("dist/game.bin");
    let v = ok(
        &client,
        "export_project",
        json!({"preset": "Linux", "output_path": outside, "confirm": true}),
    )
    .await;
    assert_eq!(v["registered"], true, "{v}");
    let bytes = std::fs::read(&outside).unwrap();
    assert_eq!(v["artifact"]["sha256"], sha256_hex(&bytes), "{v}");
    assert_eq!(v["artifact"]["inside_project"], false, "{v}");
    let file = support::transaction_row(
        &transactions(&client).await,
        v["artifact"]["transaction_id"].as_str().unwrap(),
    );
    assert_eq!(file["effect_kind"], "file", "{file}");
    assert_eq!(file["status"], "committed", "{file}");
    assert_eq!(file["path"], outside.display().to_string(), "{file}");
    assert!(
        file["proof_summary"]
            .as_str()
            .unwrap()
            .contains(&sha256_hex(&bytes)[..8]),
        "{file}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_editor_is_a_supervised_session() {
    let p = project();
    let s = state_dir();
    let needle = s.path().display().to_string();
    let _c = Cleanup(needle.clone());
    let (client, _) = start(p.path(), s.path(), &[]).await;
    let v = ok(&client, "start_editor", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    assert!(wait_until(Duration::from_secs(10), || {
        !support::group_members(pgid).is_empty()
    }));
    let e = err(&client, "start_editor", json!({})).await;
    assert_eq!(
        e["code"], "PRECONDITION_FAILED",
        "one editor at a time: {e}"
    );
    let l = ok(&client, "list_sessions", json!({})).await;
    assert_eq!(l["sessions"][0]["purpose"], "editor", "{l}");
    assert_eq!(l["boundary"]["in_use"], "process_group", "{l}");
    let stopped = ok(&client, "stop_editor", json!({})).await;
    assert_eq!(stopped["end"]["ended_by"], "stopped", "{stopped}");
    assert!(support::group_members(pgid).is_empty());
    client.cancel().await.unwrap();

    // serve --editor starts one before serving and stops it with the server.
    let mut cmd = support::server_tokio();
    cmd.arg("serve")
        .arg("--editor")
        .arg("--project")
        .arg(p.path())
        .env("GODOT_MCP_STATE_DIR", s.path())
        .env("GODOT_MCP_TOOLSETS", "all")
        .env("GODOT_BIN", support::standin());
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = transport.id().unwrap() as i32;
    let client = ().serve(transport).await.unwrap();
    let l = ok(&client, "list_sessions", json!({})).await;
    let editor = l["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["purpose"] == "editor")
        .cloned()
        .expect("editor session");
    assert_eq!(editor["running"], true);
    let pgid = editor["pgid"].as_i64().unwrap() as i32;
    client.cancel().await.unwrap();
    wait_dead(server);
    assert!(
        support::group_members(pgid).is_empty(),
        "the editor outlived a normal stop"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canonical_write_commits_only_with_both_sub_proofs() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let messy = "[gd_resource type=\"Resource\" format=3]   \n\n[resource]  \nvalue = 1\n\n\n";
    std::fs::write(p.path().join("r.tres"), messy).unwrap();
    let (client, _) = start(p.path(), s.path(), &[]).await;
    let v = ok(
        &client,
        "canonicalize_resource",
        json!({"path": "res://r.tres", "confirm": true}),
    )
    .await;
    assert_eq!(v["applied"], true, "{v}");
    let on_disk = std::fs::read_to_string(p.path().join("r.tres")).unwrap();
    assert_eq!(
        on_disk,
        "[gd_resource type=\"Resource\" format=3]\n\n[resource]\nvalue = 1\n"
    );
    let t = transactions(&client).await;
    let rows = t["transactions"].as_array().unwrap();
    let file = rows
        .iter()
        .find(|r| r["transaction_id"] == v["transaction_id"])
        .unwrap();
    let launch = rows
        .iter()
        .find(|r| r["transaction_id"] == v["linked_launch"])
        .unwrap();
    assert_eq!(file["effect_kind"], "file");
    assert_eq!(file["status"], "committed");
    assert_eq!(launch["effect_kind"], "process_launch");
    assert_eq!(launch["status"], "committed");
    client.cancel().await.unwrap();

    // A helper that fails: nothing is written.
    std::fs::write(p.path().join("r.tres"), messy).unwrap();
    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_HELPER_FAIL", "1")]).await;
    let e = err(
        &client,
        "canonicalize_resource",
        json!({"path": "res://r.tres", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("r.tres")).unwrap(),
        messy
    );
    client.cancel().await.unwrap();
}

/// A Godot with a renderer (the stand-in with GODOT_STANDIN_RENDERER=1) answers a
/// screenshot with a PNG: the client receives MCP image content it can show, not a
/// base64 string buried in JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_is_mcp_image_content() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let env = [("GODOT_STANDIN_HANG", "1"), ("GODOT_STANDIN_RENDERER", "1")];
    let (client, _server) = start(p.path(), s.path(), &env).await;
    ok(&client, "play_scene", json!({})).await;
    let r = client
        .call_tool(
            CallToolRequestParams::new("game_screenshot").with_arguments(serde_json::Map::new()),
        )
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);
    let wire = serde_json::to_value(&r.content[0]).unwrap();
    assert_eq!(wire["type"], "image", "{wire}");
    assert_eq!(wire["mimeType"], "image/png", "{wire}");
    let data = wire["data"].as_str().unwrap();
    assert!(
        data.starts_with("iVBORw0KGgo"),
        "a PNG signature, base64: {data}"
    );
    let structured = r.structured_content.unwrap();
    assert_eq!(structured["width"], 1);
    assert!(
        structured.get("png_base64").is_none(),
        "the bytes are not duplicated"
    );
    let e = err(&client, "game_screenshot", json!({"frames": 121})).await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert_eq!(e["param"], "frames", "{e}");
    ok(&client, "stop_scene", json!({})).await;
    client.cancel().await.unwrap();
}

/// game_not_breaked: a game whose main loop is stopped (a breakpoint) does not answer
/// its probe; simulated input is refused with the precondition, and nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_to_a_game_stopped_at_a_breakpoint_is_refused() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let env = [("GODOT_STANDIN_HANG", "1"), ("GODOT_STANDIN_BREAK", "1")];
    let (client, _server) = start(p.path(), s.path(), &env).await;
    ok(&client, "play_scene", json!({})).await;
    let e = err(
        &client,
        "simulate_input",
        json!({"event": {"type": "action", "action": "jump"}}),
    )
    .await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "game_not_breaked", "{e}");
    ok(&client, "stop_scene", json!({})).await;
    // The game never saw an input request: only the status probe reached it.
    let log = std::fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .flat_map(|d| {
            std::fs::read_dir(d.path().join("sessions"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .chain(
            std::fs::read_dir(s.path())
                .unwrap()
                .flatten()
                .flat_map(|d| {
                    std::fs::read_dir(d.path().join("archive"))
                        .into_iter()
                        .flatten()
                        .flatten()
                }),
        )
        .map(|d| std::fs::read_to_string(d.path().join("stdout.log")).unwrap_or_default())
        .collect::<String>();
    assert!(log.contains("not answering \"status\""), "{log}");
    assert!(!log.contains("\"input\""), "{log}");
    client.cancel().await.unwrap();
}

/// SIGKILLs a process group when dropped (a test that leaves a session running
/// on purpose must not leak it when an assertion fails).
struct KillGroup(i32);
impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(p) = rustix::process::Pid::from_raw(self.0) {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
    }
}

/// A hung game that forks a child into its group and ignores SIGTERM.
const ORPHAN_ENV: [(&str, &str); 4] = [
    ("GODOT_STANDIN_HANG", "1"),
    ("GODOT_STANDIN_FORK", "1"),
    ("GODOT_STANDIN_IGNORE_TERM", "1"),
    ("GODOT_MCP_PROBE_QUIT_MS", "600000"),
];

/// play_scene of an [`ORPHAN_ENV`] game (leader and child both up), then the server is
/// SIGKILLed: the game outlives it. Returns the group, the session's transaction id and
/// a guard that kills the group when the test ends.
async fn orphan_a_forking_game(project: &Path, state: &Path) -> (i32, String, KillGroup) {
    let (client, server) = start(project, state, &ORPHAN_ENV).await;
    let v = ok(&client, "play_scene", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let guard = KillGroup(pgid);
    let txn = v["session_id"].as_str().unwrap().to_string();
    assert!(wait_until(Duration::from_secs(10), || {
        support::group_members(pgid).len() >= 2
    }));
    kill9(server);
    drop(client);
    (pgid, txn, guard)
}

/// Issue 10 item 3, end to end: play_scene, the server SIGKILLed, the session's
/// `c.sock` deleted (as a temp-file cleaner would), the server started again.
/// The game is the launched process by pid and start time, but not by full
/// identity: the row is quarantined with a partial-identity proof, the gate is
/// closed, and the game is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_control_socket_is_a_partial_match_quarantined_and_untouched() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (pgid, txn, _k) = orphan_a_forking_game(p.path(), s.path()).await;
    std::fs::remove_file(support::control_socket(s.path())).unwrap();

    let (client, _) = start(p.path(), s.path(), &ORPHAN_ENV).await;
    assert!(
        support::group_members(pgid).len() >= 2,
        "a partial match was signalled"
    );
    let t = transactions(&client).await;
    assert_eq!(t["write_gate"]["status"], "closed", "{t}");
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "quarantined", "{row}");
    assert!(
        row["reason"].as_str().unwrap().contains("partial identity"),
        "{row}"
    );
    let summary = row["proof_summary"].as_str().unwrap();
    assert!(
        summary.contains("partial identity match") && summary.contains("boundary NOT proven empty"),
        "{summary}"
    );
    let e = err(
        &client,
        "create_script",
        json!({"path": "res://scripts/new.gd", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "WRITE_GATE_CLOSED", "{e}");
    assert!(!p.path().join("scripts/new.gd").exists());
    client.cancel().await.unwrap();
}

/// Issue 10 item 4, end to end: the server is SIGKILLed, then the game's leader
/// dies too, leaving the child it forked in its group. The next start finds the
/// leader gone, identifies the child as the launch's by the nonce the server put
/// in the session's environment (it is not on the child's command line), kills
/// it and proves the group empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gone_leader_s_child_is_identified_by_its_inherited_nonce_and_killed() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (pgid, txn, _k) = orphan_a_forking_game(p.path(), s.path()).await;
    // The leader (its pid is the group id) dies; its child stays in the group.
    kill9(pgid);
    let left = support::group_members(pgid);
    assert!(!left.is_empty() && !left.contains(&pgid), "{left:?}");

    let (client, _) = start(p.path(), s.path(), &ORPHAN_ENV).await;
    assert!(
        support::group_members(pgid).is_empty(),
        "a proven member survived: {:?}",
        support::group_members(pgid)
    );
    let t = transactions(&client).await;
    assert_eq!(t["write_gate"]["status"], "open", "{t}");
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "compensated", "{row}");
    let summary = row["proof_summary"].as_str().unwrap();
    assert!(
        summary.contains("survivor(s) terminated") && summary.contains("boundary proven empty"),
        "{summary}"
    );
    client.cancel().await.unwrap();
}

/// A hung game that starts a child the way Godot's `OS.create_process` does:
/// `setsid()`, so out of the game's process group, the nonce in its environment.
const SETSID_ENV: [(&str, &str); 3] = [
    ("GODOT_STANDIN_HANG", "1"),
    ("GODOT_STANDIN_SETSID", "1"),
    ("GODOT_MCP_PROBE_QUIT_MS", "600000"),
];

/// The stand-in's setsid child of the session in state dir `state`, once it runs:
/// its pid, after checking it left the game's group `pgid`.
fn setsid_child(state: &Path, pgid: i32) -> i32 {
    let needle = format!("--standin-endpoint={}", state.display());
    assert!(wait_until(Duration::from_secs(10), || {
        support::processes_with(&needle).len() == 1
    }));
    let child = support::processes_with(&needle)[0];
    assert!(
        !support::group_members(pgid).contains(&child),
        "the child did not leave the group"
    );
    child
}

/// Guards against (issue 41, item 7): a game's child that left the process group
/// (Godot's `OS.create_process` calls `setsid()`) outlived stop_scene, which
/// recorded `boundary_empty: true` while it ran with the session's nonce in its
/// environment. Now the stop kills it through a pidfd before the boundary is
/// called empty. Red without `identify_escaped` in `launch::identify_live`: the
/// child is alive after the stop.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_left_the_group_by_setsid_is_killed_before_the_boundary_is_empty() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, _) = start(p.path(), s.path(), &SETSID_ENV).await;
    let v = ok(&client, "play_scene", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let _k = KillGroup(pgid);
    let txn = v["session_id"].as_str().unwrap().to_string();
    let child = setsid_child(s.path(), pgid);
    let stop = ok(&client, "stop_scene", json!({"session_id": txn})).await;
    assert!(
        !alive(child),
        "the boundary was judged while the game's setsid child runs: {stop}"
    );
    assert_eq!(stop["stopped"][0]["end"]["boundary_empty"], true, "{stop}");
    let t = transactions(&client).await;
    assert_eq!(support::transaction_row(&t, &txn)["status"], "committed");
    assert_eq!(t["write_gate"]["status"], "open", "{t}");
    client.cancel().await.unwrap();
}

/// Issue 41, item 7, at a session's end: a game that exits by itself (a bounded
/// run_and_capture, the path exports and test runs take too) while the child it
/// started with setsid() runs on. The reaper kills the child before it records the
/// boundary empty (before: `boundary_empty: true`, the child left running).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_that_exits_leaving_a_setsid_child_is_not_empty_until_it_is_killed() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let log = s.path().join("standin.log");
    let env = [
        ("GODOT_STANDIN_SETSID", "1"),
        ("GODOT_STANDIN_LOG", log.to_str().unwrap()),
    ];
    let (client, _) = start(p.path(), s.path(), &env).await;
    let v = ok(
        &client,
        "run_and_capture",
        json!({"frames": 20, "timeout_ms": 20000}),
    )
    .await;
    assert_eq!(v["end"]["ended_by"], "exit", "{v}");
    let logged = std::fs::read_to_string(&log).unwrap();
    let child: i32 = logged
        .lines()
        .find_map(|l| l.strip_prefix("escaped "))
        .unwrap_or_else(|| panic!("the stand-in started no setsid child: {logged}"))
        .parse()
        .unwrap();
    assert!(
        !alive(child),
        "the boundary was judged while the game's setsid child runs: {v}"
    );
    assert_eq!(v["end"]["boundary_empty"], true, "{v}");
    client.cancel().await.unwrap();
}

/// Issue 41, item 7, at startup: the server is SIGKILLed, then the game's leader
/// dies too, its group empty; the child it started with setsid() runs on. The
/// next start finds it by the nonce in its environment, kills it and proves the
/// boundary empty (before: recorded "already gone", the child left running).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setsid_child_of_a_gone_leader_is_killed_at_startup() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, server) = start(p.path(), s.path(), &SETSID_ENV).await;
    let v = ok(&client, "play_scene", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let _k = KillGroup(pgid);
    let txn = v["session_id"].as_str().unwrap().to_string();
    let child = setsid_child(s.path(), pgid);
    kill9(server);
    drop(client);
    kill9(pgid);
    assert!(support::group_members(pgid).is_empty());
    assert!(alive(child));

    let (client, _) = start(p.path(), s.path(), &SETSID_ENV).await;
    assert!(!alive(child), "the setsid child survived reconciliation");
    let t = transactions(&client).await;
    assert_eq!(t["write_gate"]["status"], "open", "{t}");
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "compensated", "{row}");
    let summary = row["proof_summary"].as_str().unwrap();
    assert!(
        summary.contains("1 survivor(s) terminated") && summary.contains("boundary proven empty"),
        "{summary}"
    );
    client.cancel().await.unwrap();
}

/// Whether `pid` is a live process (not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !matches!(
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        )
    })
}

/// Guards against (issue 26, item 3): a session's stop (SIGTERM, then SIGKILL)
/// and its timeout kill signalled the recorded process group as a whole
/// (`killpg`), reaching a member not proven the launch's, and — once the
/// leader was reaped and the group emptied — whatever group holds that id by
/// then. One rule with reconciliation's: only members proven the launch's are
/// signalled, one by one through a pinned handle; the stranger is left running
/// and the boundary is not proven empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_and_a_timeout_signal_only_proven_members() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    // A hung game that spawns, into its group, a child without the nonce.
    let env = [("GODOT_STANDIN_HANG", "1"), ("GODOT_STANDIN_STRANGER", "1")];
    let (client, _) = start(p.path(), s.path(), &env).await;
    // The stranger once it runs as itself: between its fork and its exec it is a copy of
    // the game, the nonce in its environment, and so proven the launch's (a stop then
    // rightly ends it: seen in CI on a loaded machine, boundary_empty true).
    let stranger_of = |pgid: i32| {
        let mut found = None;
        assert!(wait_until(Duration::from_secs(10), || {
            found = support::group_members(pgid).into_iter().find(|pid| {
                *pid != pgid
                    && std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| c.windows(18).any(|w| w == b"--standin-stranger"))
            });
            found.is_some()
        }));
        found.unwrap()
    };

    // A stop.
    let v = ok(&client, "play_scene", json!({})).await;
    let pgid = v["pgid"].as_i64().unwrap() as i32;
    let _k = KillGroup(pgid);
    let txn = v["session_id"].as_str().unwrap().to_string();
    let stranger = stranger_of(pgid);
    let stop = ok(&client, "stop_scene", json!({"session_id": txn})).await;
    let end = &stop["stopped"][0]["end"];
    assert_eq!(end["boundary_empty"], false, "{stop}");
    assert!(!alive(pgid), "the proven leader was stopped");
    assert!(
        alive(stranger),
        "the stop signalled a member not proven ours"
    );
    // Recorded unaccounted, by pid (issue 41, item 7: what is not proven empty
    // names what it holds).
    let t = transactions(&client).await;
    let row = support::transaction_row(&t, &txn);
    assert_eq!(row["status"], "quarantined", "{row}");
    assert!(
        row["proof_summary"]
            .as_str()
            .unwrap()
            .contains(&format!("left running (pids [{stranger}])")),
        "{row}"
    );
    kill9(stranger);

    // A timeout (long enough for the stranger to be spawned first).
    let v = ok(&client, "run_and_capture", json!({"timeout_ms": 3000})).await;
    assert_eq!(v["timed_out"], true, "{v}");
    assert_eq!(v["end"]["boundary_empty"], false, "{v}");
    let pgid = v["pid"].as_i64().unwrap() as i32;
    let _k = KillGroup(pgid);
    let stranger = support::group_members(pgid);
    assert_eq!(stranger.len(), 1, "{stranger:?}");
    assert!(
        alive(stranger[0]),
        "the timeout kill signalled a member not proven ours"
    );
    kill9(stranger[0]);
    client.cancel().await.unwrap();
}

/// Guards against (issue 26, item 11): an output log that could not be read was
/// read as empty output — a parse check then reports "no errors". The stand-in
/// turns its stdout.log into a folder: export_info's `--version` run is an I/O
/// error, never "printed no version".
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_log_is_an_error_not_empty_output() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_LOSE_OUTPUT", "1")]).await;
    let e = err(&client, "export_info", json!({})).await;
    assert_eq!(e["code"], "IO", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("stdout.log cannot be read"),
        "{e}"
    );
    client.cancel().await.unwrap();
}

/// A project with the add-on's files the server looks for: the probe script (play_scene
/// then waits for its hello) and the plugin (start_editor then waits for its hello).
fn project_with_addon() -> tempfile::TempDir {
    let p = project();
    for (file, text) in [
        ("addons/godot_mcp/probe/probe.gd", "extends GodotMcpProbe\n"),
        (
            "addons/godot_mcp/plugin.cfg",
            "[plugin]\nname=\"godot_mcp\"\nscript=\"plugin.gd\"\n",
        ),
    ] {
        let path = p.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    p
}

/// Issue 40 item 3: stop_scene without a session stopped every session, the managed
/// editor too (agents hit it twice). It stops the newest running game only; with no
/// game left it names what runs and the tool that stops it; an editor's session id is
/// refused with stop_editor named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_scene_without_a_session_stops_the_newest_game_never_the_editor() {
    let p = project();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_HANG", "1")]).await;
    let editor = ok(&client, "start_editor", json!({})).await;
    let editor_id = editor["session_id"].as_str().unwrap().to_string();
    let first = ok(&client, "play_scene", json!({})).await["session_id"].clone();
    let second = ok(&client, "play_scene", json!({})).await["session_id"].clone();
    let running = |l: &Value, id: &Value| {
        l["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| &s["session_id"] == id && s["running"] == true)
    };

    let stop = ok(&client, "stop_scene", json!({})).await;
    assert_eq!(stop["stopped"].as_array().unwrap().len(), 1, "{stop}");
    assert_eq!(stop["stopped"][0]["session_id"], second, "{stop}");
    let l = ok(&client, "list_sessions", json!({})).await;
    assert!(
        running(&l, &json!(editor_id)),
        "the editor was stopped: {l}"
    );
    assert!(running(&l, &first), "an older game was stopped: {l}");

    let stop = ok(&client, "stop_scene", json!({})).await;
    assert_eq!(stop["stopped"][0]["session_id"], first, "{stop}");

    let e = err(&client, "stop_scene", json!({})).await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("No game is running"), "{e}");
    assert!(
        message.contains(&editor_id) && message.contains("stop_editor"),
        "names what runs and how to stop it: {e}"
    );
    let e = err(&client, "stop_scene", json!({"session_id": editor_id})).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("stop_editor"),
        "{e}"
    );
    let l = ok(&client, "list_sessions", json!({})).await;
    assert!(
        running(&l, &json!(editor_id)),
        "the editor was stopped: {l}"
    );
    ok(&client, "stop_editor", json!({})).await;
    client.cancel().await.unwrap();
}

/// The engine arguments of each game the stand-in logged (`started <pid> <args>`).
fn logged_games(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("--path") && !l.contains("--help"))
        .map(str::to_string)
        .collect()
}

/// Issue 40 item 3: play_scene was headless unless told, so the first screenshot failed.
/// It renders whenever the machine has a display and the build has a renderer (its
/// `--help` lists a display driver but headless), headless when asked, without a
/// display, or with a headless-only build; a renderer override reaches Godot's command
/// line; the answer says which mode and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_scene_renders_whenever_the_machine_has_a_display() {
    struct Case {
        env: &'static [(&'static str, &'static str)],
        args: Value,
        headless: bool,
        why: &'static str,
        argv: &'static [&'static str],
    }
    let cases = [
        Case {
            env: &[("DISPLAY", ":93"), ("GODOT_STANDIN_RENDERER", "1")],
            args: json!({}),
            headless: false,
            why: "DISPLAY=:93 is set",
            argv: &[],
        },
        Case {
            env: &[("DISPLAY", ""), ("GODOT_STANDIN_RENDERER", "1")],
            args: json!({}),
            headless: true,
            why: "no display",
            argv: &["--headless"],
        },
        Case {
            env: &[("DISPLAY", ":93")],
            args: json!({}),
            headless: true,
            why: "only headless",
            argv: &["--headless"],
        },
        Case {
            env: &[("DISPLAY", ":93"), ("GODOT_STANDIN_RENDERER", "1")],
            args: json!({"headless": true}),
            headless: true,
            why: "asked",
            argv: &["--headless"],
        },
        Case {
            env: &[("DISPLAY", ":93"), ("GODOT_STANDIN_RENDERER", "1")],
            args: json!({"rendering_driver": "opengl3", "rendering_method": "gl_compatibility"}),
            headless: false,
            why: "override",
            argv: &[
                "--rendering-driver opengl3",
                "--rendering-method gl_compatibility",
            ],
        },
    ];
    for case in cases {
        let p = project();
        let s = state_dir();
        let _c = Cleanup(s.path().display().to_string());
        let log = s.path().join("standin.log");
        let mut env = vec![
            ("GODOT_STANDIN_HANG", "1"),
            ("WAYLAND_DISPLAY", ""),
            ("GODOT_STANDIN_LOG", log.to_str().unwrap()),
        ];
        env.extend_from_slice(case.env);
        let (client, _) = start(p.path(), s.path(), &env).await;
        let v = ok(&client, "play_scene", case.args.clone()).await;
        let label = format!("{:?} {}", case.env, case.args);
        assert_eq!(v["display"]["headless"], case.headless, "{label}: {v}");
        assert!(
            v["display"]["why"].as_str().unwrap().contains(case.why),
            "{label}: {v}"
        );
        let games = logged_games(&log);
        assert_eq!(games.len(), 1, "{label}: {games:?}");
        assert_eq!(games[0].contains("--headless"), case.headless, "{games:?}");
        for arg in case.argv {
            assert!(games[0].contains(arg), "{label}: {arg} not in {games:?}");
        }
        ok(&client, "stop_scene", json!({})).await;
        client.cancel().await.unwrap();
    }
    // A headless run with a renderer override is a contradiction, refused before a launch.
    let p = project();
    let s = state_dir();
    let (client, _) = start(p.path(), s.path(), &[]).await;
    let e = err(
        &client,
        "play_scene",
        json!({"headless": true, "rendering_driver": "vulkan"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    let l = ok(&client, "list_sessions", json!({})).await;
    assert_eq!(l["sessions"], json!([]), "{l}");
    client.cancel().await.unwrap();
}

/// Issue 40 item 3: a game whose renderer could not start (the Mobile renderer without
/// Vulkan) exited 1 and play_scene answered a session as if it ran. It answers with the
/// exit code and the last lines of the game's output; the next game tool says so too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_that_exits_early_answers_with_its_exit_code_and_last_lines() {
    let p = project_with_addon();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let (client, _) = start(p.path(), s.path(), &[("GODOT_STANDIN_EXIT", "1")]).await;
    let e = err(&client, "play_scene", json!({"headless": false})).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("exit code 1"), "{e}");
    assert!(
        message.contains("Unable to create DisplayServer"),
        "the game's last lines: {e}"
    );
    assert_eq!(e["details"]["exit_code"], 1, "{e}");
    assert!(
        e["details"]["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("required Vulkan version"),
        "{e}"
    );
    assert_eq!(e["details"]["display"]["headless"], false, "{e}");
    // The next game tool names the ended game and how it ended.
    let e = err(&client, "game_screenshot", json!({})).await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("exit code 1"),
        "{e}"
    );
    client.cancel().await.unwrap();
}

/// Issue 40 items 3 and 6: start_editor answered at once and for about 10 s every
/// editor call failed with "open the editor". It answers once the add-on's hello reached
/// the bridge (the stand-in editor's add-on says hello after 1.5 s of "loading"), so the
/// next editor call is answered by the editor (no scene open), not refused for want of
/// one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_editor_answers_once_the_add_on_connected() {
    let p = project_with_addon();
    let s = state_dir();
    let _c = Cleanup(s.path().display().to_string());
    let env = [("GODOT_STANDIN_EDITOR_LOAD_MS", "1500")];
    let (client, _) = start(p.path(), s.path(), &env).await;
    let v = ok(&client, "start_editor", json!({})).await;
    assert_eq!(v["ready"], true, "{v}");
    assert_eq!(v["display"]["headless"], true, "{v}");
    let e = err(&client, "editor_history", json!({})).await;
    assert_eq!(e["required"], "active_scene", "the editor answered: {e}");
    ok(&client, "stop_editor", json!({})).await;
    // headless: false starts a window: no --headless on its command line.
    let v = ok(&client, "start_editor", json!({"headless": false})).await;
    assert_eq!(v["display"]["headless"], false, "{v}");
    let l = ok(&client, "list_sessions", json!({})).await;
    let pid = v["pid"].as_i64().unwrap();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(
        cmdline.contains(" -e ") && !cmdline.contains("--headless"),
        "{cmdline} {l}"
    );
    ok(&client, "stop_editor", json!({})).await;
    client.cancel().await.unwrap();
}
