//! Latency of a read tool over streamable HTTP, and memory per open session.
//!
//! Run: `cargo bench -p godot-mcp-server --bench http_read`
//!
//! Starts the real `godot-mcp serve --http 127.0.0.1:0` (bench profile) on a small
//! temp project and measures, with rmcp's own HTTP client:
//! - p50/p99/max of `scripts_read` with 1 client, then with 16 concurrent clients
//!   (2025-11-25 sessions), then 1 stateless (2026-07-28) client;
//! - the server's VmRSS before and after opening N idle sessions.
//!
//! Numbers are printed, never asserted (STYLE.md: benchmarks are not timed tests).
//! `HTTP_BENCH_CALLS` (per client, default 2000 / 500) and `HTTP_BENCH_SESSIONS`
//! (default 200) scale it.

#[path = "../../../tests/http_support/mod.rs"]
mod http_support;

use std::time::{Duration, Instant};

use http_support::{Client, PLAYER_GD, call_ok, connect_session, connect_stateless, fixture};
use serde_json::json;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn timed_reads(client: &Client, calls: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        let v = call_ok(
            client,
            "scripts_read",
            json!({"path": "res://scripts/player.gd"}),
        )
        .await;
        out.push(t.elapsed());
        assert_eq!(v["content"], PLAYER_GD);
    }
    out
}

fn report(label: &str, mut samples: Vec<Duration>, wall: Duration) {
    samples.sort();
    let pct = |p: f64| {
        let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
        samples[i]
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{label:<44} n={:<6} p50={:>8.0}µs p99={:>8.0}µs max={:>8.0}µs  {:>7.0} calls/s",
        samples.len(),
        us(pct(0.50)),
        us(pct(0.99)),
        us(*samples.last().unwrap_or(&Duration::ZERO)),
        samples.len() as f64 / wall.as_secs_f64(),
    );
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing: keep it quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(run(quick));
}

async fn run(quick: bool) {
    let scale = |name, full| if quick { 20 } else { env_usize(name, full) };
    let calls_one = scale("HTTP_BENCH_CALLS", 2000);
    let calls_each = scale("HTTP_BENCH_CALLS", 500);
    let sessions = scale("HTTP_BENCH_SESSIONS", 200);
    let project = fixture();
    let server = http_support::start(project.path(), "127.0.0.1:0", None).await;
    println!("godot-mcp http bench: {}", server.url());

    // Warm up one connection so the first measured call is not a cold start.
    let one = connect_session(&server).await;
    timed_reads(&one, 50.min(calls_one)).await;
    let t = Instant::now();
    let samples = timed_reads(&one, calls_one).await;
    report("scripts_read, 1 session client", samples, t.elapsed());

    let mut clients = Vec::new();
    for _ in 0..16 {
        clients.push(connect_session(&server).await);
    }
    let t = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        tasks.spawn(async move {
            let samples = timed_reads(&client, calls_each).await;
            client.cancel().await.ok();
            samples
        });
    }
    let mut all = Vec::new();
    while let Some(samples) = tasks.join_next().await {
        all.extend(samples.expect("client task"));
    }
    report(
        "scripts_read, 16 concurrent session clients",
        all,
        t.elapsed(),
    );

    let stateless = connect_stateless(&server).await;
    timed_reads(&stateless, 50.min(calls_one)).await;
    let t = Instant::now();
    let samples = timed_reads(&stateless, calls_one).await;
    report("scripts_read, 1 stateless client", samples, t.elapsed());
    stateless.cancel().await.ok();

    // Memory per open session: idle initialized sessions held open by the clients.
    let pid = server.pid();
    let before = vm_rss_kib(pid);
    let mut open = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        open.push(connect_session(&server).await);
    }
    // One call on the last session makes sure all handshakes have been processed.
    call_ok(open.last().unwrap(), "list_files", json!({})).await;
    let after = vm_rss_kib(pid);
    println!(
        "VmRSS: {before} KiB before, {after} KiB with {sessions} more open sessions: \
         {:.1} KiB per session",
        (after.saturating_sub(before)) as f64 / sessions as f64
    );
    for c in open {
        c.cancel().await.ok();
    }
    one.cancel().await.ok();
}
