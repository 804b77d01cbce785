//! What the journal costs.
//!
//! - `durable_write_4k/bare` vs `durable_write_4k/journaled`: one 4 KiB durable
//!   overwrite, without and with the journal, in the same directory on the same
//!   disk. The budget is journaled / bare ≤ 1.5.
//! - `reconcile/10000_open`: startup reconciliation of 10,000 open file
//!   transactions (half in their post-state, half in their pre-state), built by
//!   inserting intent rows directly as a killed process would leave them. Budget:
//!   under 1 s.
//!
//! - `change_5x4k` (printed, interleaved like the ratio above): one change of five
//!   4 KiB overwrites (issue 28) against five bare durable writes.
//!
//! Every directory is a temp dir under `$TMPDIR`, so `TMPDIR` picks the disk;
//! `cargo bench -p godot-mcp-journal --bench journal -- nomatch` runs only the
//! interleaved-medians ratio (no criterion group matches).

use std::fs;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group};
use godot_mcp_journal::{
    ChangeEffect, ChangeOp, FileChange, FileState, FileWrite, Journal, durable,
};

#[path = "../tests/support/mod.rs"]
mod support;

fn durable_write_4k(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let mut journal = Journal::open(&dir.path().join("state"), &project).unwrap();
    journal.reconcile().unwrap();
    let mut bytes = vec![0u8; 4096];
    let mut n = 0u64;
    let mut next = move || {
        n += 1;
        bytes[..8].copy_from_slice(&n.to_le_bytes());
        bytes.clone()
    };

    let mut group = c.benchmark_group("durable_write_4k");
    group.sample_size(200);
    let bare_target = project.join("bare.bin");
    group.bench_function("bare", |b| {
        b.iter(|| durable::write_atomic(&bare_target, black_box(&next())).unwrap())
    });
    group.bench_function("journaled", |b| {
        b.iter(|| {
            journal
                .write_file(FileWrite {
                    rel_path: PathBuf::from("journaled.bin"),
                    bytes: next(),
                    expected: None,
                    idempotency: None,
                    tool_family: "bench".into(),
                    operation: "write".into(),
                })
                .unwrap()
        })
    });
    group.finish();
}

fn reconcile_10k(c: &mut Criterion) {
    const N: usize = 10_000;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let project = dir.path().join("project");
    fs::create_dir_all(project.join("files")).unwrap();
    let (identity, state_dir) = support::identity_and_state_dir(&state, &project);
    let names: Vec<String> = (0..N).map(|i| format!("files/f{i:05}.tres")).collect();
    let intents: Vec<(&str, FileState, FileState)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let pre = format!("pre {i}");
            let post = format!("post {i}");
            // Even: the rename landed (committed); odd: it did not (compensated).
            let on_disk = if i % 2 == 0 { &post } else { &pre };
            fs::write(project.join(name), on_disk).unwrap();
            (
                name.as_str(),
                FileState::of(pre.as_bytes()),
                FileState::of(post.as_bytes()),
            )
        })
        .collect();
    let mut journal = Journal::open(&state, &project).unwrap();

    let mut group = c.benchmark_group("reconcile");
    group.sample_size(10);
    group.bench_function("10000_open", |b| {
        b.iter_batched(
            || {
                support::insert_open_intents(&state_dir, &identity, &intents);
            },
            |()| {
                let report = journal.reconcile().unwrap();
                assert_eq!(report.committed + report.compensated, N);
                report
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// The ratio the budget is about, measured fairly on a shared machine: bare and
/// journaled writes alternate in one loop, so both see the same background
/// load; prints the median of each and their ratio.
fn interleaved_ratio() {
    const PAIRS: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let mut journal = Journal::open(&dir.path().join("state"), &project).unwrap();
    journal.reconcile().unwrap();
    let bare_target = project.join("bare.bin");
    let (mut bare, mut journaled) = (Vec::new(), Vec::new());
    for i in 0..PAIRS {
        let mut bytes = vec![0u8; 4096];
        bytes[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let t = Instant::now();
        durable::write_atomic(&bare_target, &bytes).unwrap();
        bare.push(t.elapsed());
        let t = Instant::now();
        journal
            .write_file(FileWrite {
                rel_path: PathBuf::from("journaled.bin"),
                bytes,
                expected: None,
                idempotency: None,
                tool_family: "bench".into(),
                operation: "write".into(),
            })
            .unwrap();
        journaled.push(t.elapsed());
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    // The mean too: the journal folds its write log every so many writes
    // (and SQLite checkpoints its WAL), work a median alone would hide.
    let mean = |v: &[Duration]| v.iter().sum::<Duration>() / v.len() as u32;
    let (bm, jm) = (mean(&bare), mean(&journaled));
    let (b, j) = (median(&mut bare), median(&mut journaled));
    println!(
        "durable_write_4k interleaved ({PAIRS} pairs): bare median {:.3} ms, journaled median {:.3} ms, ratio {:.2}x; means {:.3} / {:.3} ms, ratio {:.2}x",
        b.as_secs_f64() * 1e3,
        j.as_secs_f64() * 1e3,
        j.as_secs_f64() / b.as_secs_f64(),
        bm.as_secs_f64() * 1e3,
        jm.as_secs_f64() * 1e3,
        jm.as_secs_f64() / bm.as_secs_f64()
    );
}

/// A change of five 4 KiB overwrites against five bare durable writes of the
/// same files, interleaved in one loop; prints the medians, the means and their
/// ratios.
fn interleaved_change_ratio() {
    const PAIRS: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let mut journal = Journal::open(&dir.path().join("state"), &project).unwrap();
    journal.reconcile().unwrap();
    let (mut bare, mut changed) = (Vec::new(), Vec::new());
    for i in 0..PAIRS {
        let bytes = |f: usize| {
            let mut b = vec![0u8; 4096];
            b[..8].copy_from_slice(&((i * 8 + f) as u64).to_le_bytes());
            b
        };
        let t = Instant::now();
        for f in 0..5 {
            durable::write_atomic(&project.join(format!("bare{f}.bin")), &bytes(f)).unwrap();
        }
        bare.push(t.elapsed());
        let effects = (0..5)
            .map(|f| ChangeEffect {
                rel_path: PathBuf::from(format!("change{f}.bin")),
                op: ChangeOp::Write(bytes(f)),
                expected: None,
            })
            .collect();
        let t = Instant::now();
        journal
            .apply_change(FileChange {
                effects,
                idempotency: None,
                tool_family: "bench".into(),
                operation: "change".into(),
            })
            .unwrap();
        changed.push(t.elapsed());
    }
    let mean = |v: &[Duration]| v.iter().sum::<Duration>() / v.len() as u32;
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (bm, cm) = (mean(&bare), mean(&changed));
    let (b, c) = (median(&mut bare), median(&mut changed));
    println!(
        "change_5x4k interleaved ({PAIRS} pairs): 5 bare writes median {:.3} ms, one 5-file change median {:.3} ms, ratio {:.2}x; means {:.3} / {:.3} ms, ratio {:.2}x",
        b.as_secs_f64() * 1e3,
        c.as_secs_f64() * 1e3,
        c.as_secs_f64() / b.as_secs_f64(),
        bm.as_secs_f64() * 1e3,
        cm.as_secs_f64() * 1e3,
        cm.as_secs_f64() / bm.as_secs_f64()
    );
}

criterion_group!(benches, durable_write_4k, reconcile_10k);

fn main() {
    interleaved_ratio();
    interleaved_change_ratio();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
