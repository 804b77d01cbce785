//! Many agents, one project: several MCP clients of both protocol generations share
//! one `godot-mcp serve --http`, each with its own principal, and every call is
//! answered correctly under concurrency. Loopback only, bounded.
//!
//! The CAS-write half: the agents race compare-and-swap increments of shared counter
//! scripts; every increment that was answered as committed is on disk exactly once
//! (the final count equals the number of committed increments, and the values written
//! are exactly 1..=count), and every lost race is answered STALE.

mod http_support;

use std::collections::BTreeMap;
use std::time::Duration;

use http_support::{PLAYER_GD, call_ok, connect_session, connect_stateless, fixture, start};
use serde_json::{Value, json};

const AGENTS: usize = 16;
const SESSION_AGENTS: usize = 12;
const CALLS_PER_AGENT: usize = 500;
/// The whole load test must finish within this (debug build, 2 shared cores).
const LOAD_DEADLINE: Duration = Duration::from_secs(600);

fn principals(counters: &Value) -> BTreeMap<String, u64> {
    serde_json::from_value(counters["tool_calls_by_principal"].clone()).unwrap()
}

/// One read call, alternating between the two read tools, checked against the fixture.
async fn read_call(client: &http_support::Client, i: usize) {
    if i.is_multiple_of(2) {
        let v = call_ok(
            client,
            "scripts_read",
            json!({"path": "res://scripts/player.gd"}),
        )
        .await;
        assert_eq!(v["content"], PLAYER_GD, "call {i}: {v}");
    } else {
        let v = call_ok(client, "list_files", json!({})).await;
        let text = v.to_string();
        assert!(text.contains("res://scripts/player.gd"), "call {i}: {text}");
        assert!(text.contains("res://project.godot"), "call {i}: {text}");
    }
}

const COUNTERS: usize = 4;

fn counter_text(count: u64, agent: usize, op: usize) -> String {
    format!(
        "extends Node\n# a shared counter\nconst COUNT = {count}\n# last: agent {agent} op {op}\n"
    )
}

fn parse_count(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("const COUNT = "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("not a counter script: {text:?}"))
}

/// The outcome of one compare-and-swap increment.
enum Cas {
    Committed {
        file: usize,
        value: u64,
        txn: String,
    },
    Stale,
}

/// Read a counter, then write it back incremented, guarded by the sha256 just read.
async fn cas_increment(client: &http_support::Client, agent: usize, op: usize) -> Cas {
    let file = (agent + op) % COUNTERS;
    let path = format!("res://scripts/counter_{file}.gd");
    let read = call_ok(client, "scripts_read", json!({ "path": path })).await;
    let count = parse_count(read["content"].as_str().unwrap());
    let args = json!({
        "path": path, "content": counter_text(count + 1, agent, op),
        "expected_sha256": read["sha256"], "confirm": true,
    });
    let Value::Object(args) = args else {
        unreachable!()
    };
    let r = tokio::time::timeout(
        http_support::IO_TIMEOUT,
        client.call_tool(
            rmcp::model::CallToolRequestParams::new("write_script").with_arguments(args),
        ),
    )
    .await
    .expect("write answered in time")
    .expect("write answered at the protocol level");
    let s = r.structured_content.expect("structured content");
    if r.is_error == Some(true) {
        assert_eq!(
            s["error"]["code"], "STALE",
            "a lost race must say STALE: {s}"
        );
        Cas::Stale
    } else {
        Cas::Committed {
            file,
            value: count + 1,
            txn: s["transaction_id"]
                .as_str()
                .expect("transaction_id")
                .to_string(),
        }
    }
}

#[tokio::test]
async fn sixteen_agents_race_cas_writes_nothing_lost_or_doubled() {
    let project = fixture();
    for f in 0..COUNTERS {
        std::fs::write(
            project.path().join(format!("scripts/counter_{f}.gd")),
            counter_text(0, 0, 0),
        )
        .unwrap();
    }
    // No Godot for this server: the race is the journal's compare-and-swap, and a
    // Godot parse check per committed .gd write (issue 40) would only slow it.
    let no_godot = tempfile::tempdir().unwrap();
    let server = http_support::start_with_env(
        project.path(),
        "127.0.0.1:0",
        None,
        &[],
        &[
            ("GODOT_BIN", ""),
            ("PATH", no_godot.path().to_str().unwrap()),
        ],
    )
    .await;
    let mut clients = Vec::new();
    for i in 0..AGENTS {
        clients.push(if i < SESSION_AGENTS {
            connect_session(&server).await
        } else {
            connect_stateless(&server).await
        });
    }
    let run = async {
        let mut tasks = tokio::task::JoinSet::new();
        for (agent, client) in clients.into_iter().enumerate() {
            tasks.spawn(async move {
                let mut outcomes = Vec::new();
                let mut calls = 0;
                let mut op = 0;
                // 500 calls per agent: a read, then a CAS increment (two calls), …
                while calls < CALLS_PER_AGENT {
                    if op % 3 == 0 || calls + 2 > CALLS_PER_AGENT {
                        read_call(&client, agent + op).await;
                        calls += 1;
                    } else {
                        outcomes.push(cas_increment(&client, agent, op).await);
                        calls += 2;
                    }
                    op += 1;
                }
                client.cancel().await.unwrap();
                outcomes
            });
        }
        let mut all = Vec::new();
        while let Some(outcomes) = tasks.join_next().await {
            all.extend(outcomes.expect("agent task panicked"));
        }
        all
    };
    let outcomes = tokio::time::timeout(LOAD_DEADLINE, run)
        .await
        .expect("the load finished before the deadline");

    let mut committed: Vec<Vec<u64>> = vec![Vec::new(); COUNTERS];
    let mut txns = std::collections::BTreeSet::new();
    let mut stale = 0;
    for o in &outcomes {
        match o {
            Cas::Committed { file, value, txn } => {
                committed[*file].push(*value);
                assert!(txns.insert(txn.clone()), "transaction {txn} reported twice");
            }
            Cas::Stale => stale += 1,
        }
    }
    for (f, values) in committed.iter_mut().enumerate() {
        let on_disk =
            std::fs::read_to_string(project.path().join(format!("scripts/counter_{f}.gd")))
                .unwrap();
        let count = parse_count(&on_disk);
        values.sort_unstable();
        let expected: Vec<u64> = (1..=count).collect();
        assert_eq!(
            *values, expected,
            "counter {f}: committed increments must be exactly 1..={count} (none lost, none doubled)"
        );
    }
    assert!(
        stale > 0,
        "16 agents on 4 counters never lost a race; the test proves nothing"
    );
    eprintln!(
        "CAS load: {} increments committed, {stale} answered STALE",
        txns.len()
    );
    assert_eq!(server.counters().await["refused"], 0);
}

#[tokio::test]
async fn both_generations_get_their_own_principals() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let a = connect_session(&server).await;
    let b = connect_session(&server).await;
    let c = connect_stateless(&server).await;
    read_call(&a, 0).await;
    read_call(&b, 0).await;
    read_call(&b, 1).await;
    read_call(&c, 0).await;
    let by_principal = principals(&server.counters().await);
    let sessions: Vec<(&String, &u64)> = by_principal
        .iter()
        .filter(|(id, _)| id.starts_with("http:") && *id != "http:stateless")
        .collect();
    assert_eq!(
        sessions.len(),
        2,
        "two sessions, two principals: {by_principal:?}"
    );
    let mut counts: Vec<u64> = sessions.iter().map(|(_, n)| **n).collect();
    counts.sort();
    assert_eq!(counts, [1, 2], "{by_principal:?}");
    assert_eq!(
        by_principal.get("http:stateless"),
        Some(&1),
        "{by_principal:?}"
    );
    assert!(
        !by_principal.contains_key("local"),
        "HTTP calls are never `local`"
    );
    for client in [a, b, c] {
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn sixteen_agents_500_reads_each_all_answered() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let mut clients = Vec::new();
    for i in 0..AGENTS {
        clients.push(if i < SESSION_AGENTS {
            connect_session(&server).await
        } else {
            connect_stateless(&server).await
        });
    }
    let before = server.counters().await;
    let run = async {
        let mut tasks = tokio::task::JoinSet::new();
        for (agent, client) in clients.into_iter().enumerate() {
            tasks.spawn(async move {
                for i in 0..CALLS_PER_AGENT {
                    read_call(&client, agent + i).await;
                }
                client.cancel().await.unwrap();
                agent
            });
        }
        let mut done = Vec::new();
        while let Some(agent) = tasks.join_next().await {
            done.push(agent.expect("agent task panicked"));
        }
        done
    };
    let done = tokio::time::timeout(LOAD_DEADLINE, run)
        .await
        .expect("the load finished before the deadline");
    assert_eq!(done.len(), AGENTS);

    let after = server.counters().await;
    let calls = |v: &Value| v["handler_calls"].as_u64().unwrap();
    assert_eq!(
        calls(&after) - calls(&before),
        (AGENTS * CALLS_PER_AGENT) as u64,
        "every call ran exactly once"
    );
    let by_principal = principals(&after);
    let session_counts: Vec<u64> = by_principal
        .iter()
        .filter(|(id, _)| *id != "http:stateless")
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(
        session_counts,
        vec![CALLS_PER_AGENT as u64; SESSION_AGENTS],
        "{by_principal:?}"
    );
    assert_eq!(
        by_principal.get("http:stateless"),
        Some(&(((AGENTS - SESSION_AGENTS) * CALLS_PER_AGENT) as u64)),
        "{by_principal:?}"
    );
    assert_eq!(after["refused"], 0);
}

/// Closing a 2025-11-25 session (DELETE with its Mcp-Session-Id) answers 204: the
/// official Python client logs "Session termination failed: 202" for anything but 200
/// or 204. The session is really gone afterwards.
#[tokio::test]
async fn closing_a_session_answers_no_content_and_ends_it() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: &'static str| {
        let mut r = http
            .post(server.url())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body);
        if let Some(s) = session {
            r = r.header("Mcp-Session-Id", s);
        }
        r.send()
    };
    let init = post(
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"close","version":"1"}}}"#,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let closed = http
        .delete(server.url())
        .header("Mcp-Session-Id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 204, "{:?}", closed.headers());
    let after = post(
        Some(&session),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await
    .unwrap();
    assert_eq!(after.status(), 404, "the closed session still answers");
}

/// Counts tools/list_changed notifications and wakes whoever waits for one.
#[derive(Debug, Clone, Default)]
struct ListWatcher {
    changed: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    wake: std::sync::Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for ListWatcher {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.wake.notify_one();
    }
}

/// The enabled toolsets are shared by every session of one server, so a change one
/// agent makes is announced to the other sessions too, not only to the caller.
#[tokio::test]
async fn a_toolset_change_is_announced_to_every_session() {
    let project = fixture();
    let server = start(project.path(), "127.0.0.1:0", None).await;
    let caller = connect_session(&server).await;
    let watcher = ListWatcher::default();
    let (changed, wake) = (watcher.changed.clone(), watcher.wake.clone());
    let other = http_support::connect_session_with(&server, watcher).await;
    // The other session lists the input-map tools, then the caller disables them.
    let listed = other.list_all_tools().await.unwrap();
    assert!(listed.iter().any(|t| t.name == "add_input_action"));
    let r = call_ok(
        &caller,
        "manage_toolsets",
        json!({"disable": ["input_map"]}),
    )
    .await;
    assert_eq!(r["changed"], true, "{r}");
    tokio::time::timeout(http_support::IO_TIMEOUT, wake.notified())
        .await
        .expect("the other session hears tools/list_changed");
    assert_eq!(changed.load(std::sync::atomic::Ordering::SeqCst), 1);
    let listed = other.list_all_tools().await.unwrap();
    assert!(!listed.iter().any(|t| t.name == "add_input_action"));
    caller.cancel().await.unwrap();
    other.cancel().await.unwrap();
}
