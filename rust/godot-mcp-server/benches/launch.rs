//! Launch-to-receipt overhead of the supervisor against a bare spawn, as a ratio.
//! A bench binary, not a timed test:
//!
//! ```sh
//! cargo bench -p godot-mcp-server --bench launch
//! ```
//!
//! "Bare": `tokio::process::Command::spawn` of `/bin/true` returning.
//! "Supervised": `Supervisor::launch` of `/bin/true` returning — the intent
//! durable (full sync), the gated process spawned in its own process group, the
//! receipt (pid, start time, process group) durable (full sync), the gate
//! released: everything a launch does before its start call may answer.
//! Prints p50 and p90 of each and the p50 ratio. Unix only: Windows refuses
//! launches until the Job Object boundary is wired in (docs/platforms.md).
#![cfg_attr(not(unix), allow(unused))]

use std::sync::Arc;
use std::time::{Duration, Instant};

use godot_mcp_server::{AppState, ApprovalConfig, LaunchSpec, Project, SafetyState, Toolset};

const RUNS: usize = 60;

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

#[cfg(not(unix))]
fn main() {
    eprintln!("launch bench: Unix only");
}

#[cfg(unix)]
fn main() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    let state_root = tempfile::Builder::new()
        .prefix("lb")
        .tempdir_in("/tmp")
        .unwrap();
    let mut journal = godot_mcp_journal::Journal::open(state_root.path(), project.path()).unwrap();
    journal.reconcile().unwrap();
    let proj = Project::discover(Some(project.path()), project.path()).unwrap();
    let safety = SafetyState::new(
        ApprovalConfig::default(),
        Toolset::parse_list("default").unwrap(),
    );
    let state = Arc::new(AppState::new(proj, journal, safety));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        // Interleaved, so load drift on a shared machine hits both alike.
        let mut bare = Vec::new();
        let mut sup = Vec::new();
        for _ in 0..RUNS {
            let t = Instant::now();
            let mut c = tokio::process::Command::new("/bin/true")
                .process_group(0)
                .spawn()
                .unwrap();
            bare.push(t.elapsed());
            let _ = c.wait().await;
            let t = Instant::now();
            let s = state
                .process
                .launch(
                    &state,
                    LaunchSpec {
                        purpose: "bench",
                        program: "/bin/true".into(),
                        args: vec![],
                        user_args: vec![],
                        tool_family: "bench",
                        operation: "launch",
                        parent: None,
                        writes_disk: false,
                    },
                )
                .await
                .unwrap();
            sup.push(t.elapsed());
            s.wait(Duration::from_secs(10)).await.expect("ended");
        }
        let (b50, b90) = (pct(&mut bare, 0.5), pct(&mut bare, 0.9));
        let (s50, s90) = (pct(&mut sup, 0.5), pct(&mut sup, 0.9));
        println!("bare spawn:          p50 {b50:?}  p90 {b90:?}  ({RUNS} runs)");
        println!("supervised launch:   p50 {s50:?}  p90 {s90:?}  (receipt durable before return)");
        println!(
            "launch-to-receipt overhead ratio (p50 supervised / p50 bare): {:.1}x",
            s50.as_secs_f64() / b50.as_secs_f64()
        );
    });
}
