//! Test helper: a real process that opens a project's journal, reconciles, and
//! performs one command — dying at a named failpoint when asked.
//!
//! `journal-test-child STATE_ROOT PROJECT COMMAND [ARGS]`, COMMAND one of
//! `write REL TEXT`, `delete REL`, `reconcile`, `hold`. With
//! `JOURNAL_CRASH_AT=<failpoint>` the process prints `FAILPOINT_REACHED <name>`
//! on stdout and exits with status 77 the moment it crosses that point — a
//! process exit, not a panic, so no destructor or unwinding tidies up.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use godot_mcp_journal::{FileDelete, FileWrite, Journal};

/// The exit status of a process that died at its failpoint.
const CRASHED: i32 = 77;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Ok(point) = std::env::var("JOURNAL_CRASH_AT") {
        let name = point.clone();
        let armed = fail::cfg_callback(point, move || {
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
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("journal-test-child: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let [state_root, project, command, rest @ ..] = args else {
        return Err("usage: STATE_ROOT PROJECT COMMAND [ARGS]".into());
    };
    let mut journal = Journal::open(&PathBuf::from(state_root), &PathBuf::from(project))?;
    let report = journal.reconcile()?;
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
