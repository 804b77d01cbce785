//! Two servers, one project: exactly one holds the lease, and it frees when
//! the holder is SIGKILLed.

use std::fs;

use godot_mcp_journal::lease::LeaseError;
use godot_mcp_journal::{Journal, OpenError};

/// Guards against: two journals in one process writing the same project (an
/// `flock` is per open file description, so this must still refuse).
#[test]
fn a_second_open_in_the_same_process_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let first = Journal::open(dir.path(), &project).unwrap();
    match Journal::open(dir.path(), &project) {
        Err(OpenError::Lease(LeaseError::Held { pid, .. })) => {
            assert_eq!(pid, Some(std::process::id()));
        }
        other => panic!("expected LeaseHeld, got {other:?}"),
    }
    drop(first);
    Journal::open(dir.path(), &project).unwrap();
}

/// Guards against: a lease that outlives a SIGKILLed holder (a stale lock file
/// would lock the project forever), and a refusal that does not say who holds it.
#[cfg(feature = "failpoints")]
#[test]
fn the_lease_frees_when_its_holder_is_sigkilled() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let mut holder = Command::new(env!("CARGO_BIN_EXE_journal-test-child"))
        .arg(dir.path())
        .arg(&project)
        .arg("hold")
        .env_remove("JOURNAL_CRASH_AT")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), format!("LEASED {}", holder.id()));

    let err = Journal::open(dir.path(), &project).unwrap_err();
    match &err {
        OpenError::Lease(LeaseError::Held { pid, .. }) => assert_eq!(*pid, Some(holder.id())),
        other => panic!("expected LeaseHeld, got {other:?}"),
    }
    assert!(
        err.to_string().contains(&format!("pid {}", holder.id())),
        "{err}"
    );

    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    let mut journal = Journal::open(dir.path(), &project).unwrap();
    journal.reconcile().unwrap();
}
