//! Reconciliation of `process_launch` transactions against real processes:
//! exact identity or nothing. A pid now held by an unrelated process is never
//! signalled, a partial match is not a match, an exact survivor and everything
//! in its process group is killed and the group proven empty; 100 recorded
//! sessions reconcile in well under 2 s.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use godot_mcp_journal::launch::{self, Boundary, LaunchIntent, LaunchReceipt};
use godot_mcp_journal::{Journal, TxnFilter, TxnStatus};

struct Env {
    state: tempfile::TempDir,
    project: tempfile::TempDir,
}

fn env() -> Env {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    Env {
        state: tempfile::Builder::new()
            .prefix("jl")
            .tempdir_in("/tmp")
            .unwrap(),
        project,
    }
}

/// Opens the journal. Another test thread's fork may briefly share the lease's
/// open file description (between its fork and its exec, which closes it), so a
/// reopen right after a drop retries for a moment.
fn open(e: &Env) -> Journal {
    let start = Instant::now();
    loop {
        match Journal::open(e.state.path(), e.project.path()) {
            Ok(j) => return j,
            Err(godot_mcp_journal::OpenError::Lease(_))
                if start.elapsed() < Duration::from_secs(5) =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(err) => panic!("open: {err}"),
        }
    }
}

/// A process group leader `sh` carrying `nonce` in its command line, with a
/// `sleep` child in its group.
fn survivor(nonce: &str) -> Child {
    Command::new("/bin/sh")
        .arg("-c")
        .arg("sleep 30 & wait")
        .arg("gate")
        .arg(format!("--godot-mcp-nonce={nonce}"))
        .process_group(0)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_group(pgid: i32, n: usize) {
    let start = Instant::now();
    while launch::group_members(pgid).len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "group {pgid} never had {n} members"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

struct Recorded {
    intent: LaunchIntent,
    _listener: std::os::unix::net::UnixListener,
}

fn record(j: &mut Journal, dir: &std::path::Path, nonce: &str, receipt: LaunchReceipt) -> Recorded {
    let session = dir.join(&nonce[..8]);
    std::fs::create_dir_all(&session).unwrap();
    let endpoint = session.join("c.sock");
    let listener = std::os::unix::net::UnixListener::bind(&endpoint).unwrap();
    let inode = std::fs::symlink_metadata(&endpoint).unwrap().ino();
    std::fs::write(session.join("stdout.log"), b"out\n").unwrap();
    let intent = LaunchIntent {
        purpose: "play_scene".into(),
        program: "/bin/sh".into(),
        args: vec![],
        nonce: nonce.into(),
        endpoint: endpoint.display().to_string(),
        socket_inode: inode,
        session_dir: session.display().to_string(),
        receipt: None,
    };
    let txn = j
        .begin_launch(&intent, "runtime", "play_scene", None, false)
        .unwrap();
    j.record_receipt(txn, &intent, &receipt).unwrap();
    Recorded {
        intent,
        _listener: listener,
    }
}

fn receipt_of(pid: i32) -> LaunchReceipt {
    let s = launch::proc_stat(pid).unwrap();
    LaunchReceipt {
        pid,
        start_time: s.start_time,
        pgid: s.pgrp,
        boundary: Boundary::ProcessGroup { pgid: s.pgrp },
    }
}

fn alive(pid: i32) -> bool {
    launch::proc_stat(pid).is_some_and(|s| s.state != 'Z')
}

#[test]
fn an_exact_survivor_and_its_group_are_terminated_and_proven_empty() {
    let e = env();
    let mut j = open(&e);
    j.reconcile().unwrap();
    let nonce = "aaaa1111bbbb2222cccc3333dddd4444";
    let mut child = survivor(nonce);
    let pid = child.id() as i32;
    wait_group(pid, 2);
    let _r = record(&mut j, e.state.path(), nonce, receipt_of(pid));
    drop(j);
    let mut j = open(&e);
    let report = j.reconcile().unwrap();
    assert_eq!(report.compensated, 1, "{report:?}");
    assert!(launch::group_members(pid).is_empty());
    let _ = child.wait();
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(rows[0].status, TxnStatus::Compensated);
    assert!(
        rows[0]
            .proof_summary
            .as_deref()
            .unwrap()
            .contains("2 survivor(s) terminated"),
        "{rows:?}"
    );
    // The output was archived.
    let state_dir = j.state_dir().to_path_buf();
    assert!(
        state_dir
            .join("archive")
            .join(rows[0].transaction_id.to_string())
            .join("stdout.log")
            .is_file()
    );
}

#[test]
fn a_reused_pid_is_not_signalled() {
    let e = env();
    let mut j = open(&e);
    j.reconcile().unwrap();
    // An unrelated process now holds the recorded pid: its start time differs.
    let mut unrelated = survivor("unrelated-process-with-another-nonce");
    let pid = unrelated.id() as i32;
    wait_group(pid, 2);
    let mut receipt = receipt_of(pid);
    receipt.start_time -= 1;
    let _r = record(
        &mut j,
        e.state.path(),
        "0123456789abcdef0123456789abcdef",
        receipt,
    );
    drop(j);
    let mut j = open(&e);
    let report = j.reconcile().unwrap();
    assert_eq!(report.compensated, 1);
    assert!(alive(pid), "an unrelated process was signalled");
    assert_eq!(
        launch::group_members(pid).len(),
        2,
        "its group was signalled"
    );
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert!(
        rows[0]
            .proof_summary
            .as_deref()
            .unwrap()
            .contains("already gone"),
        "{rows:?}"
    );
    let _ = unrelated.kill();
    let _ = unrelated.wait();
    if let Some(p) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
}

#[test]
fn a_partial_match_is_not_a_match() {
    // pid, start time and process group match; the nonce does not.
    let e = env();
    let mut j = open(&e);
    j.reconcile().unwrap();
    let other = survivor("some-other-nonce-entirely-000000");
    let pid = other.id() as i32;
    wait_group(pid, 2);
    let _r = record(
        &mut j,
        e.state.path(),
        "ffffeeeeddddccccbbbbaaaa99998888",
        receipt_of(pid),
    );
    // And one where everything but the control socket's inode matches.
    let nonce2 = "1234123412341234abcdabcdabcdabcd";
    let other2 = survivor(nonce2);
    let pid2 = other2.id() as i32;
    wait_group(pid2, 2);
    let r2 = record(&mut j, e.state.path(), nonce2, receipt_of(pid2));
    // The socket was replaced: a different inode at the recorded endpoint.
    std::fs::remove_file(&r2.intent.endpoint).unwrap();
    let _l = std::os::unix::net::UnixListener::bind(&r2.intent.endpoint).unwrap();
    drop(j);
    let mut j = open(&e);
    j.reconcile().unwrap();
    assert!(alive(pid) && alive(pid2), "a partial match was signalled");
    assert_eq!(launch::group_members(pid).len(), 2);
    assert_eq!(launch::group_members(pid2).len(), 2);
    for (mut c, p) in [(other, pid), (other2, pid2)] {
        if let Some(p) = rustix::process::Pid::from_raw(p) {
            let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
        }
        let _ = c.wait();
    }
}

#[test]
fn a_hundred_recorded_sessions_reconcile_in_under_two_seconds() {
    let e = env();
    let mut j = open(&e);
    j.reconcile().unwrap();
    let mut children = Vec::new();
    let mut recorded = Vec::new();
    for i in 0..100 {
        let nonce = format!("{i:08x}{}", "5".repeat(24));
        let c = survivor(&nonce);
        let pid = c.id() as i32;
        children.push((c, pid));
        wait_group(pid, 1);
        recorded.push(record(&mut j, e.state.path(), &nonce, receipt_of(pid)));
    }
    drop(j);
    let mut j = open(&e);
    let t = Instant::now();
    let report = j.reconcile().unwrap();
    let took = t.elapsed();
    println!("reconciled 100 recorded sessions (100+ live processes) in {took:?}");
    assert_eq!(report.compensated, 100, "{report:?}");
    for (_, pid) in &children {
        assert!(launch::group_members(*pid).is_empty());
    }
    for (mut c, _) in children {
        let _ = c.wait();
    }
}

/// A helper launch that really ran (`sh -c 'exit CODE'`), recorded and finished
/// through the journal's launch API.
fn helper_launch(
    j: &mut Journal,
    dir: &std::path::Path,
    nonce: &str,
    code: i32,
) -> godot_mcp_journal::TxnId {
    use godot_mcp_journal::launch::{LaunchEnd, LaunchProof};
    use godot_mcp_journal::proof::Deriver;
    let session = dir.join(&nonce[..8]);
    std::fs::create_dir_all(&session).unwrap();
    let intent = LaunchIntent {
        purpose: "helper".into(),
        program: "/bin/sh".into(),
        args: vec![],
        nonce: nonce.into(),
        endpoint: session.join("c.sock").display().to_string(),
        socket_inode: 0,
        session_dir: session.display().to_string(),
        receipt: None,
    };
    let txn = j
        .begin_launch(&intent, "resources", "canonical_write", None, true)
        .unwrap();
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("exit {code}"))
        .arg(nonce)
        .process_group(0)
        .spawn()
        .unwrap();
    let receipt = receipt_of(child.id() as i32);
    j.record_receipt(txn, &intent, &receipt).unwrap();
    let status = child.wait().unwrap();
    let proof = LaunchProof {
        receipt: Some(receipt.clone()),
        end: LaunchEnd::Exit {
            code: status.code().unwrap(),
        },
        boundary_empty: launch::group_members(receipt.pgid).is_empty(),
        archived_to: None,
        derived_by: Deriver::Live,
    };
    assert_eq!(j.finish_launch(txn, &proof).unwrap(), TxnStatus::Committed);
    txn
}

fn write_req(rel: &str, bytes: &[u8]) -> godot_mcp_journal::FileWrite {
    godot_mcp_journal::FileWrite {
        rel_path: rel.into(),
        bytes: bytes.to_vec(),
        expected: None,
        idempotency: None,
        tool_family: "resources".into(),
        operation: "canonical_write".into(),
    }
}

#[test]
fn a_composite_commits_only_if_both_sub_proofs_hold() {
    let e = env();
    let mut j = open(&e);
    j.reconcile().unwrap();
    let dir = e.state.path().to_path_buf();
    // Clean helper (exit 0, boundary empty): the file write commits, linked.
    let good = helper_launch(&mut j, &dir, "c0ffee00c0ffee00c0ffee00c0ffee00", 0);
    let out = j
        .write_file_linked(write_req("a.tres", b"[gd_resource]\n"), good)
        .unwrap();
    assert!(matches!(
        out,
        godot_mcp_journal::TxnOutcome::Committed { .. }
    ));
    assert_eq!(
        std::fs::read(e.project.path().join("a.tres")).unwrap(),
        b"[gd_resource]\n"
    );
    // A helper that failed: nothing is written.
    let bad = helper_launch(&mut j, &dir, "badbadbadbadbadbadbadbadbadbad00", 3);
    let err = j
        .write_file_linked(write_req("b.tres", b"x"), bad)
        .unwrap_err();
    assert!(err.to_string().contains("did not end cleanly"), "{err}");
    assert!(!e.project.path().join("b.tres").exists());
    // Reconciliation re-validates the link: still committed, gate open.
    drop(j);
    let mut j = open(&e);
    let report = j.reconcile().unwrap();
    assert_eq!(report.gate, godot_mcp_journal::WriteGate::Open);
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert!(
        rows.iter().all(|r| r.status == TxnStatus::Committed),
        "{rows:?}"
    );
}

/// Guards against a quarantined survivor that blocks writes for good, and against a
/// repair that kills without proof: `acknowledge-safe-state` is refused while the
/// boundary holds live processes, `reconcile` only reports, and `terminate` kills the
/// recorded group by exact identity and records `compensated` once it is proven empty.
#[test]
fn repair_terminates_a_quarantined_survivor_by_exact_identity() {
    use godot_mcp_journal::EffectKind;
    use godot_mcp_journal::repair::{
        self, PROOF_SCHEMA, RepairOperation, RepairProof, RepairRequest,
    };
    let e = env();
    let nonce = "feedfacefeedfacefeedfacefeedface";
    let mut leader = survivor(nonce);
    let pid = leader.id() as i32;
    wait_group(pid, 2);
    let (txn, identity) = {
        let mut j = open(&e);
        j.reconcile().unwrap();
        let rec = record(&mut j, e.state.path(), nonce, receipt_of(pid));
        std::mem::forget(rec._listener); // keep the socket (and its inode) for the test
        let rows = j.list_transactions(&TxnFilter::default()).unwrap();
        let txn = rows[0].transaction_id;
        (txn, j.identity().clone())
    };
    // Stand in for a reconciliation that could not empty the boundary.
    let db = std::fs::read_dir(e.state.path())
        .unwrap()
        .flatten()
        .map(|d| d.path().join("journal.sqlite3"))
        .find(|p| p.exists())
        .unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE transactions SET state = 'quarantined', reason = 'survivor (test)' WHERE id = ?1",
            [txn.to_string()],
        )
        .unwrap();
    let run = |op: RepairOperation, dry_run: bool| {
        let proof = RepairProof {
            schema: PROOF_SCHEMA.into(),
            transaction_id: txn,
            project_object_id: identity.object_id.clone(),
            generation: identity.generation,
            operation: op,
            effect_kind: EffectKind::ProcessLaunch,
            file: None,
        };
        let file = e.state.path().join("proof.json");
        std::fs::write(&file, serde_json::to_vec(&proof).unwrap()).unwrap();
        let req = RepairRequest {
            project: e.project.path().to_path_buf(),
            transaction_id: txn,
            operation: op,
            proof_file: file,
            dry_run,
        };
        // As in `open`: another test thread's fork may briefly share the lease.
        let start = Instant::now();
        loop {
            match repair::run(e.state.path(), &req) {
                Err(repair::RepairRefusal::Open(_)) if start.elapsed() < Duration::from_secs(5) => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => return other,
            }
        }
    };
    let status = || {
        let j = open(&e);
        let rows = j.list_transactions(&TxnFilter::default()).unwrap();
        rows.iter()
            .find(|r| r.transaction_id == txn)
            .unwrap()
            .status
    };

    assert!(
        run(RepairOperation::AcknowledgeSafeState, false).is_err(),
        "survivor still running"
    );
    assert!(
        run(RepairOperation::Compensate, false).is_err(),
        "a process cannot be un-run"
    );
    let report = run(RepairOperation::Reconcile, false).unwrap();
    assert!(!report.recorded);
    assert!(alive(pid), "reconcile must not kill");
    let report = run(RepairOperation::Terminate, true).unwrap();
    assert!(!report.recorded);
    assert!(alive(pid), "a dry run must not kill");
    assert_eq!(status(), TxnStatus::Quarantined);

    let report = run(RepairOperation::Terminate, false).unwrap();
    assert!(report.recorded);
    assert_eq!(report.to, TxnStatus::Compensated);
    let _ = leader.wait();
    assert!(
        launch::group_members(pid).is_empty(),
        "the group is proven empty"
    );
    assert_eq!(status(), TxnStatus::Compensated);
    let mut j = open(&e);
    j.reconcile().unwrap();
    assert_eq!(*j.gate(), godot_mcp_journal::WriteGate::Open);
}
