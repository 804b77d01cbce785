//! Reconciliation's decisions, driven through the process-table seam by an
//! in-memory table: a hundred launches, partial identity, a reused pid, members
//! that cannot be proven, another boot, a survivor that ignores SIGKILL and an OS
//! whose processes cannot be observed. `tests/launch.rs` runs the same rules
//! against real processes through `/proc`.

use godot_mcp_journal::launch::{self, Boundary, LaunchEnd, LaunchReceipt, NONCE_ENV};
use godot_mcp_journal::process_table::{
    FakeTable, JobState, PinnedSignal, ProcessTable, Unobservable,
};
use godot_mcp_journal::repair::{self, PROOF_SCHEMA, RepairOperation, RepairProof, RepairRequest};
use godot_mcp_journal::{EffectKind, Journal, TxnFilter, TxnId, TxnStatus};

const BOOT: &str = "6f1c0000-0000-4000-8000-000000000001";

mod support;
use support::{Env, env};

fn open(e: &Env) -> Journal {
    Journal::open(e.state.path(), e.project.path()).unwrap()
}

/// A recorded launch whose leader is `pid` (group `pid`, started at `start`).
struct Launch {
    txn: TxnId,
    nonce: String,
    session: std::path::PathBuf,
}

fn record(j: &mut Journal, e: &Env, n: usize, pid: i32, start: u64, boot: &str) -> Launch {
    record_in(j, e, n, pid, start, Some(boot), |_| {
        Boundary::ProcessGroup { pgid: pid }
    })
}

/// Records a launch whose receipt names the boundary `boundary(nonce)`.
fn record_in(
    j: &mut Journal,
    e: &Env,
    n: usize,
    pid: i32,
    start: u64,
    boot: Option<&str>,
    boundary: impl Fn(&str) -> Boundary,
) -> Launch {
    let nonce = format!("{n:08x}aaaabbbbccccddddeeeeffff0000");
    let session = e.state.path().join(format!("s{n}"));
    std::fs::create_dir_all(&session).unwrap();
    // The control socket's inode is compared on the real file system.
    let endpoint = session.join("c.sock");
    std::fs::write(&endpoint, b"").unwrap();
    std::fs::write(session.join("stdout.log"), b"out\n").unwrap();
    let inode = godot_mcp_os::fs::path_id(&endpoint).unwrap().ino;
    let intent = support::launch_intent("play_scene", "godot", &nonce, &session, inode);
    let txn = j
        .begin_launch(&intent, "runtime", "play_scene", None, false)
        .unwrap();
    let receipt = LaunchReceipt {
        pid,
        start_time: start,
        pgid: if matches!(boundary(&nonce), Boundary::ProcessGroup { .. }) {
            pid
        } else {
            0
        },
        boundary: boundary(&nonce),
        boot_id: boot.map(Into::into),
    };
    j.record_receipt(txn, &intent, &receipt).unwrap();
    Launch {
        txn,
        nonce,
        session,
    }
}

/// The leader as spawned: the nonce on its command line, its own group.
fn leader(t: &FakeTable, l: &Launch, pid: i32, start: u64) {
    let arg = format!("--godot-mcp-nonce={}", l.nonce);
    t.spawn(pid, pid, start, &["godot", "--", &arg], &[]);
}

/// A child the leader spawned: the nonce only in its inherited environment.
fn child(t: &FakeTable, l: &Launch, pid: i32, pgrp: i32, start: u64) {
    let env = format!("{NONCE_ENV}={}", l.nonce);
    t.spawn(pid, pgrp, start, &["godot-helper"], &[&env]);
}

/// Starts the journal with launches recorded by `setup`, "restarts" the server
/// and reconciles against `procs`; returns the reopened journal.
fn restart(e: &Env, procs: &dyn ProcessTable) -> Journal {
    let mut j = open(e);
    j.reconcile_with(procs).unwrap();
    j
}

fn status_of(j: &Journal, txn: TxnId) -> TxnStatus {
    j.list_transactions(&TxnFilter::default())
        .unwrap()
        .into_iter()
        .find(|r| r.transaction_id == txn)
        .unwrap()
        .status
}

fn end_of(j: &Journal, txn: TxnId) -> (LaunchEnd, bool) {
    let p = j.launch_proof(txn).unwrap().unwrap().1;
    (p.end, p.boundary_empty)
}

/// The receipt of a launch led by `pid` (started at `start`) in a process group of
/// its own, on this boot.
fn group_receipt(pid: i32, start: u64) -> LaunchReceipt {
    LaunchReceipt {
        pid,
        start_time: start,
        pgid: pid,
        boundary: Boundary::ProcessGroup { pgid: pid },
        boot_id: Some(BOOT.into()),
    }
}

/// One launch (leader `pid`, started at `start`) recorded, and an empty table of this boot.
fn one_launch(pid: i32, start: u64) -> (Env, Launch, FakeTable) {
    let e = env();
    let l = recorded(&e, 1, |_| (pid, start)).remove(0);
    (e, l, FakeTable::new(BOOT))
}

/// A row's status, and its launch proof's end and whether the boundary was proven empty.
type Verdict = (TxnStatus, (LaunchEnd, bool));

/// The row's status and its launch proof's end and boundary verdict.
fn verdict(j: &Journal, txn: TxnId) -> Verdict {
    (status_of(j, txn), end_of(j, txn))
}

/// Records launches on an empty table (so the first reconcile finds nothing).
fn recorded(e: &Env, n: usize, pid_of: impl Fn(usize) -> (i32, u64)) -> Vec<Launch> {
    let mut j = open(e);
    j.reconcile_with(&FakeTable::new(BOOT)).unwrap();
    (0..n)
        .map(|i| {
            let (pid, start) = pid_of(i);
            record(&mut j, e, i, pid, start, BOOT)
        })
        .collect()
}

#[test]
fn a_hundred_exact_survivors_are_killed_and_proven_with_one_snapshot_per_round() {
    let e = env();
    let launches = recorded(&e, 100, |i| (10_000 + 10 * i as i32, 500 + i as u64));
    let t = FakeTable::new(BOOT);
    for (i, l) in launches.iter().enumerate() {
        let pid = 10_000 + 10 * i as i32;
        leader(&t, l, pid, 500 + i as u64);
        child(&t, l, pid + 1, pid, 600 + i as u64);
    }
    // An unrelated process in an unrelated group.
    t.spawn(7, 7, 1, &["sshd"], &[]);
    let j = restart(&e, &t);
    for l in &launches {
        assert_eq!(status_of(&j, l.txn), TxnStatus::Compensated);
        assert_eq!(
            end_of(&j, l.txn),
            (LaunchEnd::TerminatedByReconcile { survivors: 2 }, true)
        );
        assert!(!l.session.exists(), "the session was archived");
    }
    assert_eq!(t.signalled().len(), 200);
    assert!(t.alive(7), "an unrelated process was signalled");
    // One snapshot to plan, one wait round that finds every group empty: not one
    // per launch.
    assert_eq!(t.snapshots(), 2);
}

#[test]
fn a_partial_identity_is_quarantined_and_never_signalled() {
    let (e, l, t) = one_launch(4000, 77);
    // Same pid and start time, but it now leads another process group.
    let arg = format!("--godot-mcp-nonce={}", l.nonce);
    t.spawn(4000, 4100, 77, &["godot", &arg], &[]);
    t.spawn(4001, 4000, 80, &["x"], &[]);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Quarantined,
            (
                LaunchEnd::PartialIdentity {
                    mismatched: vec!["process_group".into()]
                },
                false
            )
        )
    );
    assert!(t.signalled().is_empty(), "{:?}", t.signalled());
    assert!(
        l.session.exists(),
        "a partial match keeps its session directory"
    );
    assert!(matches!(
        j.gate(),
        godot_mcp_journal::WriteGate::Closed { .. }
    ));
}

#[test]
fn a_missing_nonce_is_a_partial_match_too() {
    let (e, l, t) = one_launch(4000, 77);
    t.spawn(4000, 4000, 77, &["godot"], &[]);
    let j = restart(&e, &t);
    assert_eq!(
        end_of(&j, l.txn),
        (
            LaunchEnd::PartialIdentity {
                mismatched: vec!["nonce".into()]
            },
            false
        )
    );
    assert!(t.signalled().is_empty());
}

#[test]
fn a_reused_pid_leading_its_own_group_is_left_alone_and_ours_is_gone() {
    let (e, l, t) = one_launch(5000, 77);
    // Another process (other start time) holds the pid and leads group 5000.
    t.spawn(5000, 5000, 99, &["vim"], &[]);
    t.spawn(5001, 5000, 100, &["vim-child"], &[]);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Compensated,
            (LaunchEnd::GoneBeforeReconcile, true)
        )
    );
    assert!(t.signalled().is_empty(), "{:?}", t.signalled());
}

#[test]
fn a_gone_leader_s_proven_members_are_killed_and_unproven_ones_quarantine() {
    let (e, l, t) = one_launch(6000, 50);
    // Leader gone. Group 6000 holds: a child carrying the nonce (proven), a process
    // without it, and one carrying it but older than the leader (a child cannot
    // predate its parent).
    child(&t, &l, 6001, 6000, 60);
    t.spawn(6002, 6000, 61, &["stranger"], &[]);
    child(&t, &l, 6003, 6000, 10);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Quarantined,
            (
                LaunchEnd::UnaccountedMembers {
                    killed: 1,
                    unaccounted: vec![6002, 6003]
                },
                false
            )
        )
    );
    assert_eq!(t.signalled(), vec![6001]);
    assert!(t.alive(6002) && t.alive(6003));
}

#[test]
fn a_gone_leader_s_proven_members_alone_empty_the_boundary() {
    let (e, l, t) = one_launch(6000, 50);
    child(&t, &l, 6001, 6000, 60);
    child(&t, &l, 6002, 6000, 61);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Compensated,
            (LaunchEnd::TerminatedByReconcile { survivors: 2 }, true)
        )
    );
    assert_eq!(t.signalled(), vec![6001, 6002]);
}

/// A member that cannot be identified for a moment (a child in the middle of
/// its exec: no command line or environment to read) is looked at again, and
/// killed once it shows the launch's nonce, so emptying the boundary leaves
/// nothing of the launch running. Red if the rounds stop at the first member not
/// identified: it survives, unsignalled.
#[test]
fn a_member_identified_only_after_its_exec_is_killed_in_a_later_round() {
    use godot_mcp_journal::process_table::{FakeProcess, ProcStat};
    let (_e, l, t) = one_launch(6300, 50);
    // The leader is gone (reaped); its group holds what it started.
    let receipt = group_receipt(6300, 50);
    child(&t, &l, 6301, 6300, 60);
    t.insert(
        6302,
        FakeProcess {
            stat: Some(ProcStat {
                state: 'R',
                pgrp: 6300,
                start_time: 61,
                exiting: false,
            }),
            environ: vec![format!("{NONCE_ENV}={}", l.nonce)],
            hidden_reads: 4,
            ..FakeProcess::default()
        },
    );
    let members = launch::empty_boundary(
        &t,
        &receipt,
        &l.nonce,
        Some(PinnedSignal::Kill),
        std::time::Duration::from_secs(5),
    );
    assert!(members.empty(), "{members:?}");
    assert_eq!(t.signalled(), vec![6301, 6302]);
    assert!(!t.alive(6302));
}

/// A member inside its exit (a child the leader's SIGKILL reached: its memory,
/// so its environment, already released, not yet a zombie) carries no nonce any
/// more. It is dying, not a stranger: waited for, never quarantining the row.
#[test]
fn a_member_inside_its_exit_is_waited_for_not_held_against_the_boundary() {
    use godot_mcp_journal::process_table::{FakeProcess, ProcStat};
    let (e, l, t) = one_launch(6100, 50);
    child(&t, &l, 6101, 6100, 60);
    let dying = |survives_kill| FakeProcess {
        stat: Some(ProcStat {
            state: 'R',
            pgrp: 6100,
            start_time: 61,
            exiting: true,
        }),
        survives_kill,
        // Still in the group when reconciliation enumerates it.
        exit_snapshots: 20,
        ..FakeProcess::default()
    };
    t.insert(6102, dying(false));
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Compensated,
            (LaunchEnd::TerminatedByReconcile { survivors: 1 }, true)
        )
    );
    // Never signalled: it could not be identified, and it was already dying.
    assert_eq!(t.signalled(), vec![6101]);
    assert!(!t.alive(6102));
}

/// A dying member that never finishes its exit keeps the boundary unproven.
#[test]
fn a_member_stuck_in_its_exit_keeps_the_boundary_unproven() {
    use godot_mcp_journal::process_table::{FakeProcess, ProcStat};
    let (e, l, t) = one_launch(6200, 50);
    t.insert(
        6201,
        FakeProcess {
            stat: Some(ProcStat {
                state: 'D',
                pgrp: 6200,
                start_time: 61,
                exiting: true,
            }),
            survives_kill: true,
            ..FakeProcess::default()
        },
    );
    let j = restart(&e, &t);
    assert_ne!(status_of(&j, l.txn), TxnStatus::Compensated);
    assert!(
        !end_of(&j, l.txn).1,
        "a stuck exit is not an empty boundary"
    );
    assert!(t.signalled().is_empty());
}

#[test]
fn a_receipt_from_another_boot_signals_nothing() {
    let (e, l, _) = one_launch(7000, 5);
    // This boot has an exact look-alike at the pid: it cannot be ours.
    let t = FakeTable::new("another-boot");
    leader(&t, &l, 7000, 5);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Compensated,
            (
                LaunchEnd::EndedWithBoot {
                    recorded_boot: BOOT.into()
                },
                true
            )
        )
    );
    assert!(t.signalled().is_empty());
}

#[test]
fn a_survivor_that_ignores_sigkill_is_quarantined() {
    let (e, l, t) = one_launch(8000, 5);
    leader(&t, &l, 8000, 5);
    child(&t, &l, 8001, 8000, 6);
    t.survive_kill(8001);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Quarantined,
            (LaunchEnd::TerminatedByReconcile { survivors: 2 }, false)
        )
    );
    assert!(t.alive(8001));
}

#[test]
fn where_processes_cannot_be_observed_every_launch_is_quarantined_untouched() {
    let (e, l, _) = one_launch(9000, 5);
    let j = restart(&e, &Unobservable);
    assert_eq!(
        verdict(&j, l.txn),
        (TxnStatus::Quarantined, (LaunchEnd::Unobservable, false))
    );
    assert!(l.session.exists());
}

/// A table that observes less than [`FakeTable`]: what it cannot see, it
/// answers as an OS that cannot see it does.
struct Limited(FakeTable, Limits);

#[derive(Clone, Copy)]
struct Limits {
    /// Process groups and nonces ([`ProcessTable::observable`]).
    groups: bool,
    /// The live processes can be listed.
    listable: bool,
    /// Named Job Objects.
    jobs: bool,
}

/// Windows' table in miniature: pids and start (creation) times are
/// observable, process groups and nonces are not; jobs are.
const IDENTITY_ONLY: Limits = Limits {
    groups: false,
    listable: true,
    jobs: true,
};

/// A table whose live processes cannot be listed (an unreadable `/proc`):
/// everything else reads.
const UNLISTABLE: Limits = Limits {
    groups: true,
    listable: false,
    jobs: false,
};

impl ProcessTable for Limited {
    fn observable(&self) -> bool {
        self.1.groups
    }
    fn boot_id(&self) -> Option<String> {
        self.0.boot_id()
    }
    fn stat(&self, pid: i32) -> Option<godot_mcp_journal::process_table::ProcStat> {
        self.0.stat(pid)
    }
    fn is_live(&self, pid: i32, stat: &godot_mcp_journal::process_table::ProcStat) -> bool {
        self.0.is_live(pid, stat)
    }
    fn live(&self) -> Option<Vec<(i32, godot_mcp_journal::process_table::ProcStat)>> {
        self.0.live().filter(|_| self.1.listable)
    }
    fn cmdline_contains(&self, pid: i32, needle: &str) -> bool {
        self.0.cmdline_contains(pid, needle)
    }
    fn environ_contains(&self, pid: i32, entry: &str) -> bool {
        self.0.environ_contains(pid, entry)
    }
    fn signal_pinned(&self, pid: i32, start_time: u64, nonce: &str, signal: PinnedSignal) {
        self.0.signal_pinned(pid, start_time, nonce, signal);
    }
    fn observes_jobs(&self) -> bool {
        self.1.jobs && self.0.observes_jobs()
    }
    fn job_members(&self, name: &str) -> JobState {
        self.0.job_members(name)
    }
    fn terminate_job(&self, name: &str) -> bool {
        self.0.terminate_job(name)
    }
}

#[test]
fn where_process_groups_cannot_be_observed_an_exact_survivor_is_quarantined_unsignalled() {
    let (e, l, t) = one_launch(9050, 5);
    // The exact leader and its child: an observable table would kill both.
    leader(&t, &l, 9050, 5);
    child(&t, &l, 9051, 9050, 6);
    let table = Limited(t, IDENTITY_ONLY);
    let j = restart(&e, &table);
    assert_eq!(
        verdict(&j, l.txn),
        (TxnStatus::Quarantined, (LaunchEnd::Unobservable, false))
    );
    assert!(table.0.signalled().is_empty());
    assert!(table.0.alive(9050) && table.0.alive(9051));
    assert!(l.session.exists(), "left where it is, not archived");
}

#[test]
fn a_zombie_leader_with_an_empty_group_is_gone() {
    use godot_mcp_journal::process_table::{FakeProcess, ProcStat};
    let (e, l, t) = one_launch(9100, 5);
    // Exited but not reaped: its entry remains, it is not live.
    t.insert(
        9100,
        FakeProcess {
            stat: Some(ProcStat {
                state: 'Z',
                pgrp: 9100,
                start_time: 5,
                exiting: false,
            }),
            cmdline: vec![format!("--godot-mcp-nonce={}", l.nonce)],
            ..FakeProcess::default()
        },
    );
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, l.txn),
        (
            TxnStatus::Compensated,
            (LaunchEnd::GoneBeforeReconcile, true)
        )
    );
    assert!(t.signalled().is_empty());
}

// ---------------------------------------------------------------------------------
// Job Objects (the Windows boundary), through the same seam
// ---------------------------------------------------------------------------------

/// One launch bounded by its Job Object, recorded as the Windows process plane
/// records it (pgid 0, no boot id), and an empty table.
fn one_job_launch(pid: i32, start: u64) -> (Env, Launch, FakeTable, String) {
    let e = env();
    let mut j = open(&e);
    j.reconcile_with(&FakeTable::new(BOOT)).unwrap();
    let l = record_in(&mut j, &e, 1, pid, start, None, |nonce| {
        Boundary::JobObject {
            name: launch::job_name(nonce),
        }
    });
    let name = launch::job_name(&l.nonce);
    (e, l, FakeTable::new(BOOT), name)
}

/// A process of the job: no process group, no nonce anywhere (Windows'
/// table reads neither), only pid and creation time.
fn member(t: &FakeTable, pid: i32, start: u64) {
    t.spawn(pid, 0, start, &["godot"], &[]);
}

/// Reconciles the job launch `l` with Windows' table in miniature over `t`;
/// the table (what was signalled, what lives) and the row's verdict.
fn reconcile_job(e: &Env, l: &Launch, t: FakeTable) -> (Limited, Verdict) {
    let table = Limited(t, IDENTITY_ONLY);
    let v = verdict(&restart(e, &table), l.txn);
    (table, v)
}

/// A row recorded `compensated`, its boundary proven empty, ended by `end`.
fn proven(end: LaunchEnd) -> Verdict {
    (TxnStatus::Compensated, (end, true))
}

/// A row quarantined, its boundary not proven empty, for `end`.
fn unproven(end: LaunchEnd) -> Verdict {
    (TxnStatus::Quarantined, (end, false))
}

/// Members not proven the launch's, none terminated.
fn unaccounted(pids: &[i32]) -> LaunchEnd {
    LaunchEnd::UnaccountedMembers {
        killed: 0,
        unaccounted: pids.to_vec(),
    }
}

#[test]
fn a_job_that_no_longer_exists_has_no_member_left() {
    let (e, l, t, name) = one_job_launch(9300, 50);
    // The server died: its last handle closed, which killed the job's tree.
    member(&t, 9300, 50);
    t.create_job(&name, &[9300]);
    t.close_job(&name);
    let (_, v) = reconcile_job(&e, &l, t);
    assert_eq!(v, proven(LaunchEnd::GoneBeforeReconcile));
    assert!(!l.session.exists(), "the session was archived");
}

#[test]
fn a_job_of_proven_members_is_terminated_and_proven_empty() {
    let (e, l, t, name) = one_job_launch(9310, 50);
    member(&t, 9310, 50);
    member(&t, 9311, 60);
    t.create_job(&name, &[9310, 9311]);
    // Windows' table: no process groups, no nonces; jobs are observed.
    let (table, v) = reconcile_job(&e, &l, t);
    assert_eq!(v, proven(LaunchEnd::TerminatedByReconcile { survivors: 2 }));
    assert_eq!(table.0.signalled(), [9310, 9311]);
}

#[test]
fn a_job_with_the_leader_gone_still_terminates_its_proven_children() {
    let (e, l, t, name) = one_job_launch(9320, 50);
    // The leader's pid was reused outside the job; its child is in the job.
    member(&t, 9320, 99);
    member(&t, 9321, 70);
    t.create_job(&name, &[9321]);
    let (table, v) = reconcile_job(&e, &l, t);
    assert_eq!(v, proven(LaunchEnd::TerminatedByReconcile { survivors: 1 }));
    assert_eq!(table.0.signalled(), [9321], "the reused pid is not touched");
}

#[test]
fn a_job_member_older_than_the_leader_quarantines_and_nothing_is_terminated() {
    let (e, l, t, name) = one_job_launch(9330, 50);
    member(&t, 9330, 50);
    // Put into the job by someone else: created before the leader.
    member(&t, 9331, 40);
    t.create_job(&name, &[9330, 9331]);
    let (table, v) = reconcile_job(&e, &l, t);
    assert_eq!(v, unproven(unaccounted(&[9331])));
    assert!(table.0.signalled().is_empty());
    assert!(l.session.exists(), "left where it is, not archived");
}

#[test]
fn a_job_member_whose_identity_is_unreadable_quarantines_while_it_is_listed() {
    use godot_mcp_journal::process_table::FakeProcess;
    let (e, l, t, name) = one_job_launch(9340, 50);
    member(&t, 9340, 50);
    // Listed in the job, but its creation time cannot be read.
    t.insert(9341, FakeProcess::default());
    t.create_job(&name, &[9340, 9341]);
    let (table, v) = reconcile_job(&e, &l, t);
    assert_eq!(v, unproven(unaccounted(&[9341])));
    assert!(table.0.signalled().is_empty());
}

#[test]
fn a_job_that_cannot_be_opened_quarantines_untouched() {
    let (e, l, t, name) = one_job_launch(9350, 50);
    member(&t, 9350, 50);
    // Any error but "no such job" (here: access denied) proves nothing.
    t.job_open_error(&name, "Access is denied. (os error 5)");
    let (table, v) = reconcile_job(&e, &l, t);
    let error = "Access is denied. (os error 5)".into();
    assert_eq!(v, unproven(LaunchEnd::BoundaryUnreadable { error }));
    assert!(table.0.signalled().is_empty());
    assert!(table.0.alive(9350));
    assert!(l.session.exists(), "left where it is, not archived");
}

#[test]
fn a_job_member_that_survives_termination_quarantines() {
    let (e, l, t, name) = one_job_launch(9360, 50);
    member(&t, 9360, 50);
    member(&t, 9361, 60);
    t.survive_kill(9361);
    t.create_job(&name, &[9360, 9361]);
    let (_, v) = reconcile_job(&e, &l, t);
    assert_eq!(
        v,
        unproven(LaunchEnd::TerminatedByReconcile { survivors: 2 })
    );
}

#[test]
fn where_jobs_cannot_be_observed_a_job_launch_is_quarantined_untouched() {
    let (e, l, _, _) = one_job_launch(9370, 50);
    let j = restart(&e, &Unobservable);
    assert_eq!(
        verdict(&j, l.txn),
        (TxnStatus::Quarantined, (LaunchEnd::Unobservable, false))
    );
    assert!(l.session.exists());
}

#[test]
fn where_only_jobs_are_observed_a_launch_without_receipt_is_quarantined() {
    let e = env();
    let mut j = open(&e);
    j.reconcile_with(&FakeTable::new(BOOT)).unwrap();
    let session = e.state.path().join("s0");
    std::fs::create_dir_all(&session).unwrap();
    let intent = support::launch_intent(
        "play_scene",
        "godot",
        "00112233445566778899aabbccddeeff",
        &session,
        0,
    );
    let txn = j
        .begin_launch(&intent, "runtime", "play_scene", None, false)
        .unwrap();
    drop(j);
    // No receipt: the gated child is found by the nonce on its command line,
    // which a table that observes only jobs cannot read.
    let j = restart(&e, &Limited(FakeTable::new(BOOT), IDENTITY_ONLY));
    assert_eq!(
        verdict(&j, txn),
        (TxnStatus::Quarantined, (LaunchEnd::Unobservable, false))
    );
}

#[test]
fn boundaries_serialize_with_their_kind_and_old_receipts_still_parse() {
    let old =
        r#"{"pid":42,"start_time":7,"pgid":42,"boundary":{"type":"process_group","pgid":42}}"#;
    let r: LaunchReceipt = serde_json::from_str(old).unwrap();
    assert_eq!(r.boundary, Boundary::ProcessGroup { pgid: 42 });
    assert_eq!(r.boot_id, None);
    let job = Boundary::JobObject {
        name: launch::job_name("ab12"),
    };
    assert_eq!(
        serde_json::to_string(&job).unwrap(),
        r#"{"type":"job_object","name":"godot-mcp-launch-ab12"}"#
    );
    assert_eq!(
        serde_json::from_str::<Boundary>(&serde_json::to_string(&job).unwrap()).unwrap(),
        job
    );
}

/// Repair of the quarantined launch `l`, asking `procs`: every operation is
/// refused with `why`, and the row is left as it was (item 2's repair side:
/// what cannot be observed is never proven gone, nor acknowledged).
fn repair_refuses_untouched(e: &Env, l: &Launch, procs: &dyn ProcessTable, why: &str) {
    let identity = open(e).identity().clone();
    let row = |j: &Journal| verdict(j, l.txn);
    let before = row(&open(e));
    for op in [
        RepairOperation::Reconcile,
        RepairOperation::Terminate,
        RepairOperation::AcknowledgeSafeState,
    ] {
        let proof = RepairProof {
            schema: PROOF_SCHEMA.into(),
            transaction_id: l.txn,
            project_object_id: identity.object_id.clone(),
            generation: identity.generation,
            operation: op,
            effect_kind: EffectKind::ProcessLaunch,
            file: None,
        };
        let proof_file = e.state.path().join("proof.json");
        std::fs::write(&proof_file, serde_json::to_vec(&proof).unwrap()).unwrap();
        let request = RepairRequest {
            project: e.project.path().to_path_buf(),
            transaction_id: l.txn,
            operation: op,
            proof_file,
            dry_run: false,
        };
        let err = repair::run_with(e.state.path(), &request, procs).unwrap_err();
        assert!(err.to_string().contains(why), "{op}: {err}");
        assert_eq!(row(&open(e)), before, "{op}");
    }
}

/// Guards against (issue 26, item 2): a boot id that cannot be read taken as
/// "another boot" — the launch recorded compensated with its boundary
/// "empty", nothing signalled, while the game runs on.
#[test]
fn an_unreadable_boot_id_is_quarantined_never_another_boot() {
    let (e, l, _) = one_launch(7100, 5);
    // A table that answers no boot id, with the exact leader alive.
    let t = FakeTable::default();
    leader(&t, &l, 7100, 5);
    let j = restart(&e, &t);
    let (status, (_, empty)) = verdict(&j, l.txn);
    assert_eq!((status, empty), (TxnStatus::Quarantined, false));
    drop(j);
    repair_refuses_untouched(&e, &l, &t, "this boot's id cannot be read");
    assert!(t.signalled().is_empty());
    assert!(t.alive(7100));
}

/// Guards against (issue 26, item 2): a process list that cannot be read
/// taken as an empty one — an exact live leader with zero listed members
/// recorded `Gone`.
#[test]
fn an_unlistable_process_table_is_quarantined_never_gone() {
    let (e, l, t) = one_launch(7200, 5);
    leader(&t, &l, 7200, 5);
    let table = Limited(t, UNLISTABLE);
    let j = restart(&e, &table);
    let (status, (_, empty)) = verdict(&j, l.txn);
    assert_eq!((status, empty), (TxnStatus::Quarantined, false));
    drop(j);
    repair_refuses_untouched(&e, &l, &table, "the live processes cannot be listed");
    assert!(table.0.signalled().is_empty());
    assert!(table.0.alive(7200));
}

/// Guards against (issue 26, item 3): an exact leader's whole group killed
/// without identifying its members. One rule for both paths: only proven
/// members are signalled; a member that is not proven the launch's is left
/// running and keeps the row quarantined, as on the gone-leader path.
#[test]
fn an_exact_leader_s_unproven_member_is_never_signalled() {
    let (e, l, t) = one_launch(7300, 5);
    leader(&t, &l, 7300, 5);
    // In the group, without the nonce: not proven the launch's.
    t.spawn(7301, 7300, 6, &["other"], &[]);
    let j = restart(&e, &t);
    let (status, (_, empty)) = verdict(&j, l.txn);
    assert_eq!((status, empty), (TxnStatus::Quarantined, false));
    assert!(t.alive(7301), "an unproven member was signalled");
    assert!(!t.signalled().contains(&7301));
    assert!(!t.alive(7300), "the proven leader is killed");
}

/// Guards against (issue 26, item 3) on the server's own path: a session's
/// stop, timeout and cancel signalled the recorded process group as a whole,
/// also after the leader was reaped — when the group id can lead someone
/// else's group. They use the rule reconciliation uses: the group is
/// enumerated, each member identified, and only proven ones are signalled.
#[test]
fn a_stop_signals_proven_members_only_and_never_a_reused_group() {
    let (_e, l, t) = one_launch(7400, 5);
    let receipt = group_receipt(7400, 5);
    // Running: the leader, its child, and a member not proven the launch's.
    leader(&t, &l, 7400, 5);
    child(&t, &l, 7401, 7400, 6);
    t.spawn(7402, 7400, 7, &["other"], &[]);
    let m = launch::signal_proven_members(&t, &receipt, &l.nonce, PinnedSignal::Term);
    assert_eq!((m.proven.len(), m.unaccounted), (2, vec![7402]));
    assert_eq!(t.signalled(), [7400, 7401]);
    assert!(t.alive(7402));

    // The leader was reaped and its group emptied; the id now leads another
    // group, whose processes carry no nonce of ours.
    let t = FakeTable::new(BOOT);
    t.spawn(7400, 7400, 90, &["someone-else"], &[]);
    t.spawn(7403, 7400, 91, &["its-child"], &[]);
    for signal in [PinnedSignal::Term, PinnedSignal::Kill] {
        let m = launch::signal_proven_members(&t, &receipt, &l.nonce, signal);
        assert_eq!((m.proven.len(), m.unaccounted), (0, vec![7400, 7403]));
    }
    assert!(t.signalled().is_empty(), "a reused group was signalled");
}

/// A child that left the leader's process group: Godot's `OS.create_process`
/// calls `setsid()` in the child, which keeps the session nonce in the
/// environment it inherited.
fn escaped(t: &FakeTable, l: &Launch, pid: i32, start: u64) {
    child(t, l, pid, pid, start);
}

/// Guards against (issue 41, item 7): a boundary called empty while a child the
/// game started with `OS.create_process` (in a session and group of its own,
/// the nonce in its environment) still runs. Reconciliation kills it through a
/// pinned handle like any proven member, whether the exact leader lives or is
/// gone with an empty group; what carries the nonce but predates the leader, or
/// no nonce at all, is never touched. Red without `identify_escaped` in
/// `identify_live`: 6601/6611 are never signalled and the rows are recorded
/// empty.
#[test]
fn a_child_that_left_the_group_is_killed_before_the_boundary_is_empty() {
    let e = env();
    let ls = recorded(&e, 2, |i| (6500 + 10 * i as i32, 50));
    let t = FakeTable::new(BOOT);
    // Launch 0: the exact leader lives, its setsid child too.
    leader(&t, &ls[0], 6500, 50);
    escaped(&t, &ls[0], 6601, 60);
    // Launch 1: the leader is gone, its group empty; its setsid child lives.
    escaped(&t, &ls[1], 6611, 61);
    // Launch 0's nonce, but older than its leader; a later stranger without it.
    escaped(&t, &ls[0], 6700, 10);
    t.spawn(6800, 6800, 70, &["stranger"], &[]);
    let j = restart(&e, &t);
    assert_eq!(
        verdict(&j, ls[0].txn),
        proven(LaunchEnd::TerminatedByReconcile { survivors: 2 })
    );
    assert_eq!(
        verdict(&j, ls[1].txn),
        proven(LaunchEnd::TerminatedByReconcile { survivors: 1 })
    );
    assert!(!t.alive(6601) && !t.alive(6611));
    assert!(t.alive(6700) && t.alive(6800), "{:?}", t.signalled());

    // The server's own path (stop, session end, timeout): the same rule.
    let t = FakeTable::new(BOOT);
    leader(&t, &ls[0], 6500, 50);
    escaped(&t, &ls[0], 6601, 60);
    let m = launch::empty_boundary(
        &t,
        &group_receipt(6500, 50),
        &ls[0].nonce,
        Some(PinnedSignal::Kill),
        std::time::Duration::from_secs(5),
    );
    assert!(m.empty(), "{m:?}");
    assert_eq!(t.signalled(), [6500, 6601]);
}

/// Issue 41, item 7: a process of this server's user that left the group and
/// whose environment cannot be read (a set-user-ID program the game ran, say)
/// may carry the nonce unseen. It is not proof of empty: never signalled, it is
/// recorded unaccounted and the row quarantined; repair will not acknowledge
/// the launch safe while it runs. Red without the `environ_hidden` arm of
/// `identify_escaped`: recorded compensated, boundary "empty".
#[test]
fn a_child_whose_environment_cannot_be_read_is_unaccounted() {
    use godot_mcp_journal::process_table::{FakeProcess, ProcStat};
    let (e, l, t) = one_launch(6900, 50);
    leader(&t, &l, 6900, 50);
    t.insert(
        6901,
        FakeProcess {
            stat: Some(ProcStat {
                state: 'S',
                pgrp: 6901,
                start_time: 60,
                exiting: false,
            }),
            environ: vec![format!("{NONCE_ENV}={}", l.nonce)],
            environ_hidden: true,
            ..FakeProcess::default()
        },
    );
    let j = restart(&e, &t);
    assert_eq!(verdict(&j, l.txn), unproven(unaccounted_after(1, &[6901])));
    assert_eq!(t.signalled(), [6900]);
    assert!(t.alive(6901));
    drop(j);
    let identity = open(&e).identity().clone();
    let proof = RepairProof {
        schema: PROOF_SCHEMA.into(),
        transaction_id: l.txn,
        project_object_id: identity.object_id.clone(),
        generation: identity.generation,
        operation: RepairOperation::AcknowledgeSafeState,
        effect_kind: EffectKind::ProcessLaunch,
        file: None,
    };
    let proof_file = e.state.path().join("proof.json");
    std::fs::write(&proof_file, serde_json::to_vec(&proof).unwrap()).unwrap();
    let request = RepairRequest {
        project: e.project.path().to_path_buf(),
        transaction_id: l.txn,
        operation: RepairOperation::AcknowledgeSafeState,
        proof_file,
        dry_run: false,
    };
    let err = repair::run_with(e.state.path(), &request, &t).unwrap_err();
    assert!(err.to_string().contains("still holds 1 live"), "{err}");
    assert_eq!(status_of(&open(&e), l.txn), TxnStatus::Quarantined);
}

/// Issue 41, item 7, its other side: a process of this user whose environment cannot
/// be read is not the launch's when its ancestry says so — a `sudo` in the user's
/// terminal, a sandboxed browser tab opened while the game ran (both unreadable, both
/// started after the leader) descend from processes older than the leader that carry
/// no nonce. Counting them quarantined every launch that ran beside them. One whose
/// parent is the leader stays unaccounted. Red without `born_outside(..)` in
/// `identify_escaped`: 7001 and 7002 unaccounted, the row quarantined.
#[test]
fn an_unreadable_process_the_user_started_meanwhile_is_not_the_launchs() {
    use godot_mcp_journal::process_table::{FakeProcess, ProcStat};
    let (e, l, t) = one_launch(7000, 50);
    leader(&t, &l, 7000, 50);
    let stat = |pgrp, start_time| {
        Some(ProcStat {
            state: 'S',
            pgrp,
            start_time,
            exiting: false,
        })
    };
    // The user's shell (started before the game) and a browser started meanwhile.
    t.spawn(4000, 4000, 10, &["bash"], &[]);
    t.insert(
        7003,
        FakeProcess {
            stat: stat(7003, 55),
            parent: Some(4000),
            ..FakeProcess::default()
        },
    );
    for (pid, parent) in [(7001, 4000), (7002, 7003)] {
        t.insert(
            pid,
            FakeProcess {
                stat: stat(pid, 60),
                environ_hidden: true,
                parent: Some(parent),
                ..FakeProcess::default()
            },
        );
    }
    // The game's own child, unreadable: its parent is the leader.
    t.insert(
        7004,
        FakeProcess {
            stat: stat(7004, 61),
            environ_hidden: true,
            parent: Some(7000),
            ..FakeProcess::default()
        },
    );
    let j = restart(&e, &t);
    assert_eq!(verdict(&j, l.txn), unproven(unaccounted_after(1, &[7004])));
    assert_eq!(t.signalled(), [7000]);
    assert!(t.alive(7001) && t.alive(7002) && t.alive(7003));
}

fn unaccounted_after(killed: usize, pids: &[i32]) -> LaunchEnd {
    LaunchEnd::UnaccountedMembers {
        killed,
        unaccounted: pids.to_vec(),
    }
}

#[test]
fn no_open_launch_reads_no_process_table() {
    // A start with nothing launched must not snapshot every process on the machine.
    let e = env();
    let t = FakeTable::new(BOOT);
    t.spawn(4242, 4242, 1, &["godot"], &[]);
    let mut j = open(&e);
    j.reconcile_with(&t).unwrap();
    drop(j);
    // Reopened with closed rows only: still no snapshot.
    restart(&e, &t);
    assert_eq!(t.snapshots(), 0);
    // An open launch is what makes reconciliation ask.
    let (e, _l, t) = one_launch(5000, 7);
    restart(&e, &t);
    assert!(t.snapshots() >= 1);
}
