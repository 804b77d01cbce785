//! Reconciliation of `process_launch` transactions against real processes:
//! exact identity or nothing. A pid now held by an unrelated process is never
//! signalled, a partial match is not a match, an exact survivor and everything
//! in its process group is killed and the group proven empty; 100 recorded
//! sessions reconcile in well under 2 s.
//!
//! Unix only: the boundary here is a process group (Windows' Job Object is
//! tested in godot-mcp-os).
#![cfg(unix)]

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use godot_mcp_journal::launch::{self, Boundary, LaunchIntent, LaunchReceipt};
use godot_mcp_journal::process_table::ProcessTable;
use godot_mcp_journal::{Journal, TxnFilter, TxnStatus};

fn procs() -> &'static dyn ProcessTable {
    godot_mcp_journal::process_table::os()
}

mod support;
use support::{Env, env};

/// The journal of a fresh project, reconciled once.
fn fresh(e: &Env) -> Journal {
    let mut j = open(e);
    j.reconcile().unwrap();
    j
}

/// A fresh project and its reconciled journal.
fn fresh_env() -> (Env, Journal) {
    let e = env();
    let j = fresh(&e);
    (e, j)
}

/// Closes `j` and reopens and reconciles the journal, as the next server start does.
fn restart(e: &Env, j: Journal) -> (Journal, godot_mcp_journal::ReconcileReport) {
    drop(j);
    let mut j = open(e);
    let report = j.reconcile().unwrap();
    (j, report)
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
/// `sleep` child in its group; both carry it in their environment, as a
/// supervised launch's processes do.
fn survivor(nonce: &str) -> Child {
    Command::new("/bin/sh")
        .arg("-c")
        .arg("sleep 30 & wait")
        .arg("gate")
        .arg(format!("--godot-mcp-nonce={nonce}"))
        .env(godot_mcp_journal::launch::NONCE_ENV, nonce)
        .process_group(0)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// A [`survivor`] whose group holds both the shell and its `sleep`, and its pid.
fn live_survivor(nonce: &str) -> (Child, i32) {
    let child = survivor(nonce);
    let pid = child.id() as i32;
    wait_group(pid, 2);
    (child, pid)
}

/// A group leader running `script` (which ends by reading stdin) with `members`
/// processes in its group; the leader then exits, leaving its members behind.
/// Returns the leader's pid (the group id) and the receipt taken while it lived.
fn gone_leader(script: &str, members: usize) -> (i32, LaunchReceipt) {
    let mut leader = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .process_group(0)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = leader.id() as i32;
    wait_group(pid, members);
    let receipt = receipt_of(pid);
    drop(leader.stdin.take());
    let _ = leader.wait();
    (pid, receipt)
}

fn wait_group(pgid: i32, n: usize) {
    let start = Instant::now();
    while procs().group_members(pgid).unwrap().len() < n || !all_execd(pgid) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "group {pgid} never had {n} members"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Every member but the leader (the shell) runs its own program: a member that is still
/// the shell's fork has not exec'd yet, so its environment lacks the nonce the test
/// gave it and it would not be proven (spawning returns before the kernel shows it).
#[cfg(target_os = "linux")]
fn all_execd(pgid: i32) -> bool {
    let exe = |pid: i32| std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let leader = exe(pgid);
    procs()
        .group_members(pgid)
        .unwrap()
        .into_iter()
        .filter(|m| *m != pgid)
        .all(|m| exe(m).is_some_and(|e| Some(&e) != leader.as_ref()))
}

#[cfg(not(target_os = "linux"))]
fn all_execd(_pgid: i32) -> bool {
    true
}

struct Recorded {
    txn: godot_mcp_journal::TxnId,
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
    let intent = support::launch_intent("play_scene", "/bin/sh", nonce, &session, inode);
    let txn = j
        .begin_launch(&intent, "runtime", "play_scene", None, false)
        .unwrap();
    j.record_receipt(txn, &intent, &receipt).unwrap();
    Recorded {
        txn,
        intent,
        _listener: listener,
    }
}

fn receipt_of(pid: i32) -> LaunchReceipt {
    let s = procs().stat(pid).unwrap();
    LaunchReceipt {
        pid,
        start_time: s.start_time,
        pgid: s.pgrp,
        boundary: Boundary::ProcessGroup { pgid: s.pgrp },
        boot_id: procs().boot_id(),
    }
}

fn row(j: &Journal, txn: godot_mcp_journal::TxnId) -> godot_mcp_journal::TxnRecord {
    j.list_transactions(&TxnFilter::default())
        .unwrap()
        .into_iter()
        .find(|r| r.transaction_id == txn)
        .unwrap()
}

/// The proof summary of a row, which every terminal row carries.
fn summary(rec: &godot_mcp_journal::TxnRecord) -> &str {
    rec.proof_summary.as_deref().unwrap()
}

/// The recorded launch proof of `txn`, read back from the journal.
fn launch_proof(j: &Journal, txn: godot_mcp_journal::TxnId) -> launch::LaunchProof {
    j.launch_proof(txn).unwrap().unwrap().1
}

fn kill_group(pgid: i32) {
    if let Some(p) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
}

/// Runs one repair of `txn` with a proof naming the current project.
fn repair_run(
    e: &Env,
    txn: godot_mcp_journal::TxnId,
    op: godot_mcp_journal::repair::RepairOperation,
    kind: godot_mcp_journal::EffectKind,
    file: Option<godot_mcp_journal::repair::FileClaim>,
    dry_run: bool,
) -> Result<godot_mcp_journal::RepairReport, godot_mcp_journal::RepairRefusal> {
    use godot_mcp_journal::repair::{self, RepairRequest};
    let identity = open(e).identity().clone();
    let proof = support::repair_proof(&identity, txn, op, kind, file);
    let path = e.state.path().join("proof.json");
    std::fs::write(&path, serde_json::to_vec(&proof).unwrap()).unwrap();
    let req = RepairRequest {
        project: e.project.path().to_path_buf(),
        transaction_id: txn,
        operation: op,
        proof_file: path,
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
}

fn alive(pid: i32) -> bool {
    procs().stat(pid).is_some_and(|s| s.state != 'Z')
}

#[test]
fn an_exact_survivor_and_its_group_are_terminated_and_proven_empty() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
    let nonce = "aaaa1111bbbb2222cccc3333dddd4444";
    let (mut child, pid) = live_survivor(nonce);
    let _r = record(&mut j, e.state.path(), nonce, receipt_of(pid));
    let (j, report) = restart(&e, j);
    assert_eq!(report.compensated, 1, "{report:?}");
    assert!(procs().group_members(pid).unwrap().is_empty());
    let _ = child.wait();
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(rows[0].status, TxnStatus::Compensated);
    assert!(
        summary(&rows[0]).contains("2 survivor(s) terminated"),
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
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
    // An unrelated process now holds the recorded pid: its start time differs.
    let (mut unrelated, pid) = live_survivor("unrelated-process-with-another-nonce");
    let mut receipt = receipt_of(pid);
    receipt.start_time -= 1;
    let _r = record(
        &mut j,
        e.state.path(),
        "0123456789abcdef0123456789abcdef",
        receipt,
    );
    let (j, report) = restart(&e, j);
    assert_eq!(report.compensated, 1);
    assert!(alive(pid), "an unrelated process was signalled");
    assert_eq!(
        procs().group_members(pid).unwrap().len(),
        2,
        "its group was signalled"
    );
    let rows = j.list_transactions(&TxnFilter::default()).unwrap();
    assert!(summary(&rows[0]).contains("already gone"), "{rows:?}");
    let _ = unrelated.kill();
    let _ = unrelated.wait();
    kill_group(pid);
}

/// Item 3: pid + start time identify the process; anything short of the full
/// recorded identity while it lives is a partial match — quarantined (gate
/// closed), never signalled, never recorded "gone, boundary proven empty".
#[test]
fn a_partial_match_is_quarantined_never_gone() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
    let dir = e.state.path().to_path_buf();
    // The nonce differs (pid, start time and group match).
    let (a, pid_a) = live_survivor("some-other-nonce-entirely-000000");
    let ra = record(
        &mut j,
        &dir,
        "ffffeeeeddddccccbbbbaaaa99998888",
        receipt_of(pid_a),
    );
    // The control socket was replaced: another inode at the recorded endpoint.
    let nonce_b = "1234123412341234abcdabcdabcdabcd";
    let (b, pid_b) = live_survivor(nonce_b);
    let rb = record(&mut j, &dir, nonce_b, receipt_of(pid_b));
    std::fs::remove_file(&rb.intent.endpoint).unwrap();
    let _l = std::os::unix::net::UnixListener::bind(&rb.intent.endpoint).unwrap();
    // The control socket was deleted (a temp-file cleaner): the case.
    let nonce_c = "c50cc50cc50cc50cc50cc50cc50cc50c";
    let (c, pid_c) = live_survivor(nonce_c);
    let rc = record(&mut j, &dir, nonce_c, receipt_of(pid_c));
    std::fs::remove_file(&rc.intent.endpoint).unwrap();
    // The process group differs (the process moved to another group).
    let nonce_d = "d00dd00dd00dd00dd00dd00dd00dd00d";
    let (d, pid_d) = live_survivor(nonce_d);
    let mut receipt_d = receipt_of(pid_d);
    receipt_d.pgid = 999_999_999;
    receipt_d.boundary = Boundary::ProcessGroup { pgid: 999_999_999 };
    let rd = record(&mut j, &dir, nonce_d, receipt_d);

    let (j, report) = restart(&e, j);
    assert_eq!(report.compensated, 0, "{report:?}");
    assert_eq!(report.quarantined.len(), 4, "{report:?}");
    assert!(
        matches!(j.gate(), godot_mcp_journal::WriteGate::Closed { .. }),
        "a partial match must close the gate"
    );
    for (r, field) in [
        (&ra, "nonce"),
        (&rb, "control_socket"),
        (&rc, "control_socket"),
        (&rd, "process_group"),
    ] {
        let rec = row(&j, r.txn);
        assert_eq!(rec.status, TxnStatus::Quarantined, "{rec:?}");
        assert!(
            rec.reason.as_deref().unwrap().contains("partial identity"),
            "{rec:?}"
        );
        let proof = launch_proof(&j, r.txn);
        assert!(!proof.boundary_empty, "{proof:?}");
        match &proof.end {
            launch::LaunchEnd::PartialIdentity { mismatched } => {
                assert_eq!(mismatched, &[field.to_owned()], "{proof:?}")
            }
            other => panic!("{other:?}"),
        }
        assert!(
            summary(&rec).contains("boundary NOT proven empty"),
            "{rec:?}"
        );
    }
    for pid in [pid_a, pid_b, pid_c, pid_d] {
        assert!(alive(pid), "a partial match was signalled");
        assert_eq!(procs().group_members(pid).unwrap().len(), 2);
    }
    for (mut ch, p) in [(a, pid_a), (b, pid_b), (c, pid_c), (d, pid_d)] {
        kill_group(p);
        let _ = ch.wait();
    }
}

/// Item 3, repair: acknowledge-safe-state (and terminate) refuse a partial
/// match while the process lives, even when the recorded group is empty; once
/// the operator stopped it, acknowledge-safe-state records it.
#[test]
fn repair_never_acknowledges_a_partial_match_while_it_runs() {
    let _one = support::one_at_a_time();
    use godot_mcp_journal::EffectKind;
    use godot_mcp_journal::repair::RepairOperation;
    let e = env();
    let nonce = "a1a1a1a1a1a1a1a1b2b2b2b2b2b2b2b2";
    let (mut child, pid) = live_survivor(nonce);
    let txn = {
        let mut j = fresh(&e);
        let mut receipt = receipt_of(pid);
        // Same pid and start time, another (now empty) process group.
        receipt.pgid = 999_999_998;
        receipt.boundary = Boundary::ProcessGroup { pgid: 999_999_998 };
        let r = record(&mut j, e.state.path(), nonce, receipt);
        std::mem::forget(r._listener);
        r.txn
    };
    assert_eq!(row(&fresh(&e), txn).status, TxnStatus::Quarantined);
    for op in [
        RepairOperation::AcknowledgeSafeState,
        RepairOperation::Terminate,
    ] {
        let err = repair_run(&e, txn, op, EffectKind::ProcessLaunch, None, false).unwrap_err();
        assert!(err.to_string().contains("partial identity"), "{op}: {err}");
        assert!(alive(pid), "{op} signalled a partial match");
    }
    assert_eq!(row(&open(&e), txn).status, TxnStatus::Quarantined);
    // The operator's step: stop it, then acknowledge.
    kill_group(pid);
    let _ = child.wait();
    let report = repair_run(
        &e,
        txn,
        RepairOperation::AcknowledgeSafeState,
        EffectKind::ProcessLaunch,
        None,
        false,
    )
    .unwrap();
    assert_eq!(report.to, TxnStatus::Committed);
}

/// Item 4: a receipt taken in another boot never signals anything, even if
/// every other field matches a live process.
#[test]
fn a_receipt_from_another_boot_never_kills() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
    let nonce = "b007b007b007b007b007b007b007b007";
    let (mut child, pid) = live_survivor(nonce);
    let mut receipt = receipt_of(pid);
    assert!(receipt.boot_id.is_some(), "this kernel exposes a boot id");
    receipt.boot_id = Some("00000000-0000-4000-8000-000000000000".into());
    let r = record(&mut j, e.state.path(), nonce, receipt);
    let (j, _) = restart(&e, j);
    assert!(alive(pid), "a receipt of another boot signalled a process");
    assert_eq!(procs().group_members(pid).unwrap().len(), 2);
    let rec = row(&j, r.txn);
    assert_eq!(rec.status, TxnStatus::Compensated, "{rec:?}");
    assert!(matches!(
        launch_proof(&j, r.txn).end,
        launch::LaunchEnd::EndedWithBoot { .. }
    ));
    kill_group(pid);
    let _ = child.wait();
}

/// The pids in group `pgid` whose command line contains `needle`.
fn members_with(pgid: i32, needle: &str) -> Vec<i32> {
    procs()
        .group_members(pgid)
        .unwrap()
        .into_iter()
        .filter(|p| procs().cmdline_contains(*p, needle))
        .collect()
}

/// Item 4: the leader is gone; its group is enumerated and each member
/// identified (nonce in its environment, started after the leader). Only the
/// proven member is killed; the unidentified one is left running and the row
/// is quarantined, its boundary not proven empty.
#[test]
fn a_gone_leader_s_group_is_killed_only_where_members_are_proven() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
    let nonce = "9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e9e";
    let script = format!(
        "{}={nonce} sleep 300 & sleep 301 & read _",
        launch::NONCE_ENV
    );
    let (pid, receipt) = gone_leader(&script, 3);
    let proven = members_with(pid, "300");
    let stranger = members_with(pid, "301");
    assert_eq!((proven.len(), stranger.len()), (1, 1));
    let r = record(&mut j, e.state.path(), nonce, receipt);
    let (j, report) = restart(&e, j);
    assert!(!alive(proven[0]), "the proven member survived");
    assert!(alive(stranger[0]), "an unidentified member was signalled");
    let rec = row(&j, r.txn);
    assert_eq!(rec.status, TxnStatus::Quarantined, "{report:?}");
    let proof = launch_proof(&j, r.txn);
    assert!(!proof.boundary_empty);
    assert_eq!(
        proof.end,
        launch::LaunchEnd::UnaccountedMembers {
            killed: 1,
            unaccounted: stranger.clone()
        }
    );
    assert!(matches!(
        j.gate(),
        godot_mcp_journal::WriteGate::Closed { .. }
    ));
    kill_group(pid);
}

/// Item 4: with only proven members left, they are killed and the boundary is
/// proven empty after enumerating the group.
#[test]
fn a_gone_leader_s_proven_members_are_killed_and_the_group_proven_empty() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
    let nonce = "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a";
    let script = format!("{}={nonce} sleep 302 & read _", launch::NONCE_ENV);
    let (pid, receipt) = gone_leader(&script, 2);
    let r = record(&mut j, e.state.path(), nonce, receipt);
    let (j, _) = restart(&e, j);
    assert!(procs().group_members(pid).unwrap().is_empty());
    let rec = row(&j, r.txn);
    assert_eq!(rec.status, TxnStatus::Compensated, "{rec:?}");
    let proof = launch_proof(&j, r.txn);
    assert!(proof.boundary_empty);
    assert_eq!(
        proof.end,
        launch::LaunchEnd::TerminatedByReconcile { survivors: 1 }
    );
}

#[test]
fn a_hundred_recorded_sessions_reconcile_in_under_two_seconds() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
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
        assert!(procs().group_members(*pid).unwrap().is_empty());
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
    let intent = support::launch_intent("helper", "/bin/sh", nonce, &session, 0);
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
        boundary_empty: procs().group_members(receipt.pgid).unwrap().is_empty(),
        archived_to: None,
        derived_by: Deriver::Live,
        unaccounted: Vec::new(),
    };
    assert_eq!(j.finish_launch(txn, &proof).unwrap(), TxnStatus::Committed);
    txn
}

fn write_req(rel: &str, bytes: &[u8]) -> godot_mcp_journal::FileWrite {
    godot_mcp_journal::FileWrite::new(rel, bytes, "resources", "canonical_write")
}

#[test]
fn a_composite_commits_only_if_both_sub_proofs_hold() {
    let _one = support::one_at_a_time();
    let (e, mut j) = fresh_env();
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
    let (j, report) = restart(&e, j);
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
    let _one = support::one_at_a_time();
    use godot_mcp_journal::EffectKind;
    use godot_mcp_journal::repair::RepairOperation;
    let e = env();
    let nonce = "feedfacefeedfacefeedfacefeedface";
    let (mut leader, pid) = live_survivor(nonce);
    let (txn, state_dir) = {
        let mut j = fresh(&e);
        let rec = record(&mut j, e.state.path(), nonce, receipt_of(pid));
        std::mem::forget(rec._listener); // keep the socket (and its inode) for the test
        (rec.txn, j.state_dir().to_path_buf())
    };
    // Stand in for a reconciliation that could not empty the boundary.
    rusqlite::Connection::open(state_dir.join("journal.sqlite3"))
        .unwrap()
        .execute(
            "UPDATE transactions SET state = 'quarantined', reason = 'survivor (test)' WHERE id = ?1",
            [txn.to_string()],
        )
        .unwrap();
    let run = |op: RepairOperation, dry_run: bool| {
        repair_run(&e, txn, op, EffectKind::ProcessLaunch, None, dry_run)
    };
    let status = || row(&open(&e), txn).status;

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
        procs().group_members(pid).unwrap().is_empty(),
        "the group is proven empty"
    );
    assert_eq!(status(), TxnStatus::Compensated);
    assert_eq!(*fresh(&e).gate(), godot_mcp_journal::WriteGate::Open);
}

/// Item 6: repair's composite check is the full linked verdict (committed,
/// exit 0, boundary proven empty), not the linked launch's state alone: a
/// helper that exited 3 is `committed` but can never make its file commit.
/// Compensating the composite (nothing of it stays) is still possible.
#[test]
fn repair_of_a_composite_uses_the_full_linked_verdict() {
    let _one = support::one_at_a_time();
    use godot_mcp_journal::repair::{FileClaim, RepairOperation};
    use godot_mcp_journal::{EffectKind, FileState};
    let e = env();
    let dir = e.state.path().to_path_buf();
    let (bad, identity, state_dir) = {
        let mut j = fresh(&e);
        let bad = helper_launch(&mut j, &dir, "3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e", 3);
        (bad, j.identity().clone(), j.state_dir().to_path_buf())
    };
    // A composite file row left open (its server died after the rename): the
    // file is in its post-state, linked to the launch that exited 3.
    let txn = godot_mcp_journal::TxnId::random().unwrap();
    let intent = serde_json::json!({
        "kind": "file", "path": "c.tres", "pre": FileState::Absent,
        "post": FileState::of(b"[gd_resource]\n"), "linked_launch": bad,
    });
    rusqlite::Connection::open(state_dir.join("journal.sqlite3"))
        .unwrap()
        .execute(
            "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                 operation, tool_family, state, intent_json, created_at_ms)
             VALUES (?1, ?2, ?3, 'file', 'canonical_write', 'resources', 'open', ?4, 0)",
            rusqlite::params![
                txn.to_string(),
                identity.object_id,
                identity.generation as i64,
                intent.to_string()
            ],
        )
        .unwrap();
    std::fs::write(e.project.path().join("c.tres"), b"[gd_resource]\n").unwrap();
    assert_eq!(row(&fresh(&e), txn).status, TxnStatus::Quarantined);
    let claim = || {
        Some(FileClaim {
            path: "c.tres".into(),
            observed: FileState::of(b"[gd_resource]\n"),
        })
    };
    let err = repair_run(
        &e,
        txn,
        RepairOperation::AcknowledgeSafeState,
        EffectKind::File,
        claim(),
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("did not end cleanly"), "{err}");
    assert_eq!(row(&open(&e), txn).status, TxnStatus::Quarantined);
    let report = repair_run(
        &e,
        txn,
        RepairOperation::Compensate,
        EffectKind::File,
        claim(),
        false,
    )
    .unwrap();
    assert_eq!(report.to, TxnStatus::Compensated);
    assert!(!e.project.path().join("c.tres").exists());
}

/// docs/recovery.md: repair enumerates only the weak locator on its own; a
/// launch bounded by a Windows Job Object is refused, never approximated (its
/// next server reconciles it through the job). Linux's table does not observe
/// jobs, so the row is quarantined first.
#[test]
fn repair_refuses_a_job_object_launch() {
    let _one = support::one_at_a_time();
    use godot_mcp_journal::EffectKind;
    use godot_mcp_journal::repair::RepairOperation;
    let e = env();
    let nonce = "c3c3c3c3c3c3c3c3d4d4d4d4d4d4d4d4";
    let txn = {
        let mut j = fresh(&e);
        let receipt = LaunchReceipt {
            pid: 999_999_997,
            start_time: 1,
            pgid: 0,
            boundary: Boundary::JobObject {
                name: launch::job_name(nonce),
            },
            boot_id: None,
        };
        record(&mut j, e.state.path(), nonce, receipt).txn
    };
    assert_eq!(row(&fresh(&e), txn).status, TxnStatus::Quarantined);
    for op in [
        RepairOperation::Reconcile,
        RepairOperation::AcknowledgeSafeState,
        RepairOperation::Terminate,
    ] {
        let err = repair_run(&e, txn, op, EffectKind::ProcessLaunch, None, false).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("Windows Job Object {}", launch::job_name(nonce))),
            "{op}: {err}"
        );
    }
    assert_eq!(row(&open(&e), txn).status, TxnStatus::Quarantined);
}
