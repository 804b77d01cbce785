//! Two servers, one project: exactly one holds the lease, and it frees when
//! the holder is SIGKILLed.

use std::fs;

use godot_mcp_journal::lease::LeaseError;
use godot_mcp_journal::{Journal, OpenError};

mod support;

/// A live server stand-in holding `project`'s lease (it has said so).
#[cfg(feature = "failpoints")]
fn hold(state_root: &std::path::Path, project: &std::path::Path) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut holder = Command::new(env!("CARGO_BIN_EXE_journal-test-child"))
        .arg(state_root)
        .arg(project)
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
    holder
}

/// Guards against: two journals in one process writing the same project (an
/// `flock` is per open file description, so this must still refuse).
#[test]
fn a_second_open_in_the_same_process_is_refused() {
    let _serial = support::one_at_a_time();
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

/// Guards against (issue 41, item 9): two servers holding one project because
/// each keys its lease by its own state dir (another `GODOT_MCP_STATE_DIR`, user,
/// or mount path of the folder). A second open with another state root, and one
/// reaching the folder through a symlink, are refused naming the holder; after
/// the holder closes, the other state root opens.
#[test]
fn two_state_dirs_cannot_both_hold_one_project() {
    let _serial = support::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let link = dir.path().join("p-link");
    godot_mcp_os::fs::symlink(&project, &link).unwrap();
    let first = Journal::open(&a, &project).unwrap();
    for (root, path) in [(&b, &project), (&b, &link)] {
        match Journal::open(root, path) {
            Err(OpenError::Lease(e @ LeaseError::Held { .. })) => {
                let LeaseError::Held { pid, .. } = &e else {
                    unreachable!()
                };
                assert_eq!(*pid, Some(std::process::id()));
                assert!(e.to_string().contains(&std::process::id().to_string()));
            }
            other => panic!("expected Held, got {other:?}"),
        }
    }
    drop(first);
    Journal::open(&b, &project).unwrap();
}

/// Guards against: a lease that outlives a SIGKILLed holder (a stale lock file
/// would lock the project forever), and a refusal that does not say who holds it.
#[cfg(feature = "failpoints")]
#[test]
fn the_lease_frees_when_its_holder_is_sigkilled() {
    let _serial = support::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let mut holder = hold(dir.path(), &project);

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

/// Guards against: a restart refused because the kernel had not yet dropped a
/// dead holder's lock. When the process the lease file names has finished dying
/// but the lock is still held (the kernel can defer a dying process's closes),
/// the open waits for the lock instead of refusing. Here the file names a pid no
/// process has while a live `hold` child keeps the lock, standing in for the deferred
/// drop; the open must block on the lock (seen in /proc/locks) and succeed once
/// the lock goes. Red if the wait is removed: the open then returns `Held` at once.
#[cfg(all(feature = "failpoints", target_os = "linux"))]
#[test]
fn a_dead_holders_lingering_lock_is_waited_for() {
    let _serial = support::one_at_a_time();
    use std::os::unix::fs::MetadataExt;

    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir(&project).unwrap();
    let mut holder = hold(dir.path(), &project);
    let lease = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path().join(godot_mcp_journal::lease::FILE_NAME))
        .find(|p| p.exists())
        .expect("the holder's lease file");
    // The file now names a process that is not there: pids stay below pid_max.
    let gone: u32 = fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    fs::write(&lease, format!("{gone}\n")).unwrap();

    let (root, proj) = (dir.path().to_path_buf(), project.clone());
    let opener = std::thread::spawn(move || Journal::open(&root, &proj).map(drop));
    // /proc/locks lists a blocked waiter with "->", by device:inode.
    let inode = format!(":{} ", fs::metadata(&lease).unwrap().ino());
    loop {
        if opener.is_finished() {
            panic!("the open did not wait: {:?}", opener.join().unwrap());
        }
        let locks = fs::read_to_string("/proc/locks").unwrap();
        if locks
            .lines()
            .any(|l| l.contains("->") && l.contains(&inode))
        {
            break;
        }
        std::thread::yield_now();
    }
    holder.kill().unwrap(); // the lock goes
    holder.wait().unwrap();
    opener
        .join()
        .unwrap()
        .expect("the open, once the lock was dropped");
    assert_eq!(
        fs::read_to_string(&lease).unwrap().trim(),
        std::process::id().to_string()
    );
}

/// The holder's pid is written over the last one in place, at a fixed width, so a
/// start never truncates the file (see `Lease::acquire`); bytes longer than a
/// record (not written by a holder) are cut, and a shorter record of an older
/// build is covered whole. Each state reads back as this process's pid.
#[test]
fn the_holders_pid_is_written_in_place_at_a_fixed_width() {
    use godot_mcp_journal::lease::{FILE_NAME, Lease, pid_record};
    let _serial = support::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    let me = std::process::id();
    for before in [None, Some("x".repeat(40)), Some("7\n".to_owned())] {
        if let Some(bytes) = &before {
            fs::write(&path, bytes).unwrap();
        }
        let lease = Lease::acquire(dir.path()).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, pid_record(me), "after {before:?}");
        assert_eq!(text.len(), 11, "{text:?}");
        assert_eq!(text.trim().parse::<u32>().unwrap(), me);
        drop(lease);
    }
    assert_eq!(pid_record(u32::MAX).len(), 11, "the widest pid fits");
}
