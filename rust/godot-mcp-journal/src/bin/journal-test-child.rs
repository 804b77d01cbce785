//! Test helper: a real process that opens a project's journal, reconciles, and
//! performs one command — dying at a named failpoint when asked.
//!
//! `journal-test-child STATE_ROOT PROJECT COMMAND [ARGS]`, COMMAND one of
//! `write REL TEXT`, `write-many REL N` (N writes of `version i`), `delete REL`,
//! `change SPEC…` (one change: each `w=REL=TEXT` a write, `d=REL` a delete),
//! `reconcile`, `hold`. With `JOURNAL_CRASH_AT=<failpoint>` the process prints
//! `FAILPOINT_REACHED <name>` on stdout and exits with status 77 the moment it
//! crosses that point (with `JOURNAL_CRASH_SKIP=n`, its (n+1)-th crossing) — a
//! process exit, not a panic, so no destructor or unwinding tidies up.
//!
//! With `JOURNAL_POWER_LOSS=1` as well, the write's file effects go through the
//! power-loss simulation ([`PowerLossSim`]) and, at the failpoint, the disk is
//! first rewritten to what a power loss would leave (every write, rename and
//! create not yet made durable dropped, the journal's WAL cut back to its last
//! fsync); then the process exits the same way.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use godot_mcp_journal::storage::{PowerLossSim, RealStorage, Storage};
use godot_mcp_journal::{ChangeEffect, ChangeOp, FileChange, FileDelete, FileWrite, Journal};

/// The exit status of a process that died at its failpoint.
const CRASHED: i32 = 77;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sim = std::env::var_os("JOURNAL_POWER_LOSS").map(|_| Arc::new(PowerLossSim::new()));
    if let Ok(point) = std::env::var("JOURNAL_CRASH_AT") {
        let name = point.clone();
        let sim = sim.clone();
        // JOURNAL_CRASH_SKIP=n: die at the (n+1)-th crossing, not the first.
        let skip: usize = std::env::var("JOURNAL_CRASH_SKIP")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let crossed = std::sync::atomic::AtomicUsize::new(0);
        let armed = fail::cfg_callback(point, move || {
            if crossed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < skip {
                return;
            }
            if let Some(sim) = &sim
                && let Err(e) = sim.power_loss()
            {
                eprintln!("power-loss simulation failed: {e}");
                std::process::exit(3);
            }
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "FAILPOINT_REACHED {name}");
            let _ = out.flush();
            std::process::exit(CRASHED);
        });
        if let Err(e) = armed {
            eprintln!("cannot arm failpoint: {e}");
            return ExitCode::from(2);
        }
    }
    match run(&args, sim) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("journal-test-child: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String], sim: Option<Arc<PowerLossSim>>) -> Result<(), Box<dyn std::error::Error>> {
    let [state_root, project, command, rest @ ..] = args else {
        return Err("usage: STATE_ROOT PROJECT COMMAND [ARGS]".into());
    };
    let storage: Arc<dyn Storage> = match &sim {
        Some(sim) => sim.clone(),
        None => Arc::new(RealStorage),
    };
    let mut journal =
        Journal::open_with_storage(&PathBuf::from(state_root), &PathBuf::from(project), storage)?;
    let report = journal.reconcile()?;
    if let Some(sim) = &sim {
        // Everything so far was committed with SQLite's own fsync
        // (synchronous=FULL): durable. From here on only what this seam
        // fsyncs of the WAL survives the simulated power loss.
        sim.track_whole_file(&journal.state_dir().join("journal.sqlite3-wal"))?;
        // And of the intent log, only what this seam fsyncs.
        sim.track_whole_file(
            &journal
                .state_dir()
                .join(godot_mcp_journal::intent_log::LOG_FILE),
        )?;
    }
    for line in report.stderr_lines() {
        eprintln!("{line}");
    }
    match (command.as_str(), rest) {
        ("reconcile", []) => println!("{}", serde_json::to_string(&report)?),
        ("write", [rel, text]) => {
            let outcome = journal.write_file(FileWrite {
                rel_path: rel.into(),
                bytes: text.as_bytes().to_vec(),
                expected: None,
                idempotency: None,
                tool_family: "test".into(),
                operation: "write".into(),
            })?;
            println!("OK {}", outcome.transaction_id());
        }
        ("write-many", [rel, n]) => {
            for i in 0..n.parse::<usize>()? {
                journal.write_file(FileWrite {
                    rel_path: rel.into(),
                    bytes: format!("version {i}\n").into_bytes(),
                    expected: None,
                    idempotency: None,
                    tool_family: "test".into(),
                    operation: "write".into(),
                })?;
            }
            println!("OK");
        }
        ("delete", [rel]) => {
            let outcome = journal.delete_file(FileDelete {
                rel_path: rel.into(),
                expected: None,
                idempotency: None,
                tool_family: "test".into(),
                operation: "delete".into(),
            })?;
            println!("OK {}", outcome.transaction_id());
        }
        ("change", specs) if !specs.is_empty() => {
            // Each spec `w=REL=TEXT` (write) or `d=REL` (delete), applied as one change.
            let mut effects = Vec::new();
            for spec in specs {
                let op = match spec.split_once('=') {
                    Some(("w", rest)) => {
                        let (rel, text) = rest.split_once('=').ok_or("w=REL=TEXT")?;
                        (rel, ChangeOp::Write(text.as_bytes().to_vec()))
                    }
                    Some(("d", rel)) => (rel, ChangeOp::Delete),
                    _ => return Err(format!("bad change spec {spec:?}").into()),
                };
                effects.push(ChangeEffect {
                    rel_path: op.0.into(),
                    op: op.1,
                    expected: None,
                });
            }
            let outcome = journal.apply_change(FileChange {
                effects,
                idempotency: None,
                tool_family: "test".into(),
                operation: "change".into(),
            })?;
            println!("OK {}", outcome.transaction_id());
        }
        ("hold", []) => {
            println!("LEASED {}", std::process::id());
            std::io::stdout().flush()?;
            loop {
                std::thread::sleep(std::time::Duration::from_secs(60));
            }
        }
        _ => return Err(format!("unknown command {command:?} {rest:?}").into()),
    }
    Ok(())
}
