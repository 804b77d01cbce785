//! Many agents, one project: several MCP clients of both protocol generations share
//! one `godot-mcp serve --http`, each with its own principal, and every call is
//! answered correctly under concurrency. Loopback only, bounded.
//!
//! The CAS-write half of the load test (0 lost or duplicated writes, every lost race
//! reported stale) is added when write tools exist; today every tool is read-only.

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
