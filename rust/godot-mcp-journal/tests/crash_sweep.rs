//! Crash-point sweep: a real child process dies (process exit, status 77) at
//! each named journal boundary; the next start reconciles; then the same with a
//! second crash during that reconciliation.
//!
//! After the final reconciliation, for every scenario and point: no transaction
//! is open; `committed` only where the target's bytes are the post-state,
//! `compensated` only where they are the pre-state, no `quarantined` (nothing
//! else touched the project, so every state is provable); the target is
//! byte-for-byte its pre- or post-state; no temp file is left. The expected
//! outcome per point is pinned too, and every failpoint must have been reached.
//!
//! A process death keeps the page cache, so it cannot tell whether anything was
//! fsynced. The power-loss sweep runs the same writes with their file effects
//! going through the journal's power-loss simulation
//! (`storage::PowerLossSim`): at each boundary the disk is rewritten to what a
//! power loss would leave — file bytes only if fsynced, directory entries only
//! if their directory was fsynced, the WAL only up to its last fsync — and the
//! same invariants must hold, with the outcome pinned by what was durable.
//! Removing any fsync of the write path (the temp file's, the directory's after
//! the rename or unlink, a created parent directory's, the intent log's fsync,
//! a restart fold's WAL fsync) fails it.
#![cfg(feature = "failpoints")]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use godot_mcp_journal::failpoints;
use godot_mcp_journal::{FileState, Journal, TxnFilter, TxnStatus, WriteGate};

mod support;

const CHILD: &str = env!("CARGO_BIN_EXE_journal-test-child");

#[derive(Clone, Copy, Debug)]
enum Scenario {
    /// Create a file that does not exist.
    Create,
    /// Overwrite an existing file.
    Overwrite,
    /// Delete an existing file.
    Delete,
    /// Create a file whose parent directories do not exist yet.
    CreateNested,
}

const PRE: &str = "pre-state bytes\n";
const POST: &str = "post-state bytes, longer than before\n";
const REL: &str = "scenes/level.tscn";
const NESTED: &str = "new/deeper/level.tscn";

/// How the child dies at its failpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Death {
    /// The process exits; the page cache (everything written) survives.
    Process,
    /// The machine loses power: only what was made durable survives.
    Power,
}

impl Scenario {
    const ALL: [Scenario; 4] = [
        Scenario::Create,
        Scenario::Overwrite,
        Scenario::Delete,
        Scenario::CreateNested,
    ];

    fn rel(self) -> &'static str {
        match self {
            Scenario::CreateNested => NESTED,
            _ => REL,
        }
    }

    fn points(self) -> &'static [&'static str] {
        match self {
            Scenario::Delete => failpoints::DELETE_POINTS,
            _ => failpoints::WRITE_POINTS,
        }
    }

    fn pre(self) -> Option<&'static str> {
        match self {
            Scenario::Create | Scenario::CreateNested => None,
            _ => Some(PRE),
        }
    }

    fn post(self) -> Option<&'static str> {
        match self {
            Scenario::Delete => None,
            _ => Some(POST),
        }
    }

    fn setup(self, project: &Path) {
        fs::create_dir_all(project.join("scenes")).unwrap();
        if let Some(pre) = self.pre() {
            fs::write(project.join(REL), pre).unwrap();
        }
    }

    /// A temp dir holding the journal's `state` root and a `project` set up
    /// for this scenario.
    fn dirs(self) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let (state, project) = (dir.path().join("state"), dir.path().join("project"));
        fs::create_dir_all(&project).unwrap();
        self.setup(&project);
        (dir, state, project)
    }

    fn command(self) -> Vec<&'static str> {
        match self {
            Scenario::Delete => vec!["delete", REL],
            _ => vec!["write", self.rel(), POST],
        }
    }

    /// The outcome a crash at `point` must reconcile to: before the effect
    /// (rename/unlink) nothing landed; from it on, the post-state did.
    fn expected(self, point: &str) -> TxnStatus {
        let effect = match self {
            Scenario::Delete => failpoints::AFTER_UNLINK,
            _ => failpoints::AFTER_RENAME,
        };
        self.landed_from(point, effect)
    }

    /// Compensated when `point` comes before `boundary` on this scenario's
    /// path, committed from it on.
    fn landed_from(self, point: &str, boundary: &str) -> TxnStatus {
        if self.before(point, boundary) {
            TxnStatus::Compensated
        } else {
            TxnStatus::Committed
        }
    }

    /// Whether `point` comes before `boundary` on this scenario's path.
    fn before(self, point: &str, boundary: &str) -> bool {
        let points = self.points();
        let at = |b: &str| points.iter().position(|p| *p == b).unwrap();
        at(point) < at(boundary)
    }

    /// The outcome after a power loss at `point`: the effect survives only
    /// once its directory was fsynced.
    fn expected_after_power_loss(self, point: &str) -> TxnStatus {
        self.landed_from(point, failpoints::AFTER_DIR_FSYNC)
    }

    /// Whether the intent must have survived a power loss at `point`: its WAL
    /// fsync runs beside the temp file's and is joined before the re-check.
    fn intent_durable_at(self, point: &str) -> bool {
        !self.before(point, failpoints::AFTER_PRE_HASH)
    }
}

fn child(state: &Path, project: &Path, args: &[&str], crash_at: Option<&str>) -> Output {
    child_dying(state, project, args, crash_at, Death::Process)
}

fn child_dying(
    state: &Path,
    project: &Path,
    args: &[&str],
    crash_at: Option<&str>,
    death: Death,
) -> Output {
    let mut cmd = Command::new(CHILD);
    cmd.arg(state).arg(project).args(args);
    match death {
        Death::Power => cmd.env("JOURNAL_POWER_LOSS", "1"),
        Death::Process => cmd.env_remove("JOURNAL_POWER_LOSS"),
    };
    match crash_at {
        Some(p) => cmd.env("JOURNAL_CRASH_AT", p),
        None => cmd.env_remove("JOURNAL_CRASH_AT"),
    };
    cmd.output().unwrap()
}

/// Runs the child expecting it to die at `point`; returns the point it reported.
fn crash_at(state: &Path, project: &Path, args: &[&str], point: &str) -> String {
    crash_dying(state, project, args, point, Death::Process)
}

fn crash_dying(state: &Path, project: &Path, args: &[&str], point: &str, death: Death) -> String {
    let out = child_dying(state, project, args, Some(point), death);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(77),
        "child did not die at {point}: stdout={stdout} stderr={}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reached = stdout
        .lines()
        .find_map(|l| l.strip_prefix("FAILPOINT_REACHED "))
        .unwrap_or_else(|| panic!("no FAILPOINT_REACHED line: {stdout}"))
        .to_owned();
    assert_eq!(reached, point);
    reached
}

fn temp_files(dir: &Path) -> Vec<String> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".gmcp-"))
        .collect()
}

/// The final start: reconcile in-process and check every invariant.
fn check_after_recovery(scenario: Scenario, state: &Path, project: &Path, expected: TxnStatus) {
    check_recovered(scenario, state, project, expected, true);
}

/// [`check_after_recovery`]; with `intent_durable` false the intent may have
/// been lost with the power (then nothing may have landed either).
fn check_recovered(
    scenario: Scenario,
    state: &Path,
    project: &Path,
    expected: TxnStatus,
    intent_durable: bool,
) {
    let mut journal = Journal::open(state, project).unwrap();
    let report = journal.reconcile().unwrap();
    assert!(report.quarantined.is_empty(), "{scenario:?}: {report:?}");
    assert_eq!(report.gate, WriteGate::Open);
    let all = journal.list_transactions(&TxnFilter::default()).unwrap();
    let on_disk = match fs::read(project.join(scenario.rel())) {
        Ok(b) => Some(String::from_utf8(b).unwrap()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{e}"),
    };
    if all.is_empty() && !intent_durable {
        assert_eq!(expected, TxnStatus::Compensated, "{scenario:?}");
        assert_eq!(
            on_disk.as_deref(),
            scenario.pre(),
            "{scenario:?}: no intent, no effect"
        );
        return;
    }
    assert_eq!(all.len(), 1, "{scenario:?}: exactly the one transaction");
    let txn = &all[0];
    assert_eq!(txn.status, expected, "{scenario:?}: {txn:?}");

    let on_disk = match fs::read(project.join(scenario.rel())) {
        Ok(b) => Some(String::from_utf8(b).unwrap()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{e}"),
    };
    let on_disk = on_disk.as_deref();
    match txn.status {
        TxnStatus::Committed => assert_eq!(on_disk, scenario.post(), "{scenario:?}"),
        TxnStatus::Compensated => assert_eq!(on_disk, scenario.pre(), "{scenario:?}"),
        other => panic!("{scenario:?}: transaction left {other}"),
    }
    assert!(
        on_disk == scenario.pre() || on_disk == scenario.post(),
        "byte-for-byte pre or post"
    );
    let dir = project.join(scenario.rel());
    assert_eq!(temp_files(dir.parent().unwrap()), Vec::<String>::new());
    assert!(
        journal
            .list_transactions(&TxnFilter {
                status: Some(TxnStatus::Open),
                limit: 0
            })
            .unwrap()
            .is_empty()
    );
}

/// Guards against: an effect that lands without a durable intent, a temp file
/// or half-written target surviving a crash, reconciliation declaring
/// `committed` from the intent rather than the bytes, and any boundary that the
/// sweep silently stops reaching when the write path is refactored.
#[test]
fn a_crash_at_every_boundary_reconciles_to_a_proven_state() {
    let _one = support::one_at_a_time();
    sweep(|scenario, point, state, project| {
        let reached = crash_at(state, project, &scenario.command(), point);
        check_after_recovery(scenario, state, project, scenario.expected(point));
        reached
    });
}

/// Runs `crash_and_check` once per scenario and failpoint, each in fresh dirs;
/// the failpoints it reports reached must be every write/delete failpoint.
fn sweep(crash_and_check: impl Fn(Scenario, &str, &Path, &Path) -> String) {
    let mut reached = BTreeSet::new();
    for scenario in Scenario::ALL {
        for point in scenario.points() {
            let (_dir, state, project) = scenario.dirs();
            reached.insert(crash_and_check(scenario, point, &state, &project));
        }
    }
    let write_and_delete: BTreeSet<String> = failpoints::WRITE_POINTS
        .iter()
        .chain(failpoints::DELETE_POINTS)
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        reached, write_and_delete,
        "every write/delete failpoint reached"
    );
}

/// Guards against: a missing fsync anywhere in the write path — the temp
/// file's `sync_all` (a committed target would be empty), the directory fsync
/// after the rename or unlink (the effect would vanish under a committed row),
/// a created parent directory's fsync (the nested create would vanish), and the
/// intent log's fsync (an effect would land with no durable intent). Each is
/// invisible to a process death; a power loss at each boundary shows it.
#[test]
fn a_power_loss_at_every_boundary_keeps_only_what_was_made_durable() {
    let _one = support::one_at_a_time();
    sweep(|scenario, point, state, project| {
        let reached = crash_dying(state, project, &scenario.command(), point, Death::Power);
        check_recovered(
            scenario,
            state,
            project,
            scenario.expected_after_power_loss(point),
            scenario.intent_durable_at(point),
        );
        reached
    });
}

/// Guards against: the intent log restarting — overwriting its records from
/// its start — before the fold that put those records into the database is
/// durable (the fold's WAL fsync through the storage seam). A power loss after
/// a few restarts must keep every earlier write's transaction, committed; the
/// last write, whose intent was never fsynced, left nothing.
#[test]
fn a_power_loss_after_the_log_restarts_keeps_every_earlier_write() {
    let _one = support::one_at_a_time();
    const WRITES: usize = 150; // folds every 32 writes: four restarts
    let (_dir, state, project) = Scenario::Overwrite.dirs();
    let mut cmd = Command::new(CHILD);
    cmd.arg(&state)
        .arg(&project)
        .args(["write-many", REL, &WRITES.to_string()])
        .env("JOURNAL_POWER_LOSS", "1")
        .env("JOURNAL_CRASH_AT", failpoints::AFTER_INTENT)
        .env("JOURNAL_CRASH_SKIP", (WRITES - 1).to_string());
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(77),
        "stdout={} stderr={}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut journal = Journal::open(&state, &project).unwrap();
    let report = journal.reconcile().unwrap();
    assert!(report.quarantined.is_empty(), "{report:?}");
    let all = journal
        .list_transactions(&TxnFilter {
            status: None,
            limit: 1000,
        })
        .unwrap();
    let committed = all
        .iter()
        .filter(|t| t.status == TxnStatus::Committed)
        .count();
    assert_eq!(
        (committed, all.len()),
        (WRITES - 1, WRITES - 1),
        "every write before the last, committed"
    );
    assert_eq!(
        fs::read_to_string(project.join(REL)).unwrap(),
        format!("version {}\n", WRITES - 2)
    );
}

/// Guards against: reconciliation that is not idempotent — a crash after it
/// removed a temp file or recorded some rows must re-derive the same outcome,
/// never quarantine (or worse, flip) a transaction whose state it had proven.
#[test]
fn a_second_crash_during_reconciliation_still_converges() {
    let _one = support::one_at_a_time();
    let mut reached = BTreeSet::new();
    for scenario in Scenario::ALL {
        for point in scenario.points() {
            for second in failpoints::RECONCILE_POINTS {
                let dir = tempfile::tempdir().unwrap();
                let (state, project) = (dir.path().join("state"), dir.path().join("project"));
                fs::create_dir_all(&project).unwrap();
                scenario.setup(&project);
                reached.insert(crash_at(&state, &project, &scenario.command(), point));
                reached.insert(crash_at(&state, &project, &["reconcile"], second));
                check_after_recovery(scenario, &state, &project, scenario.expected(point));
            }
        }
    }
    assert_eq!(
        reached,
        failpoints::ALL.iter().map(|s| s.to_string()).collect(),
        "every failpoint of the crate reached"
    );
}

/// Guards against: startup output drifting from the spec's exact text (one
/// line per non-zero outcome, in the order compensated, committed, then the
/// gate), as printed by a real process.
#[test]
fn the_next_start_prints_the_spec_lines() {
    let _one = support::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (state, project) = (dir.path().join("state"), dir.path().join("project"));
    fs::create_dir_all(&project).unwrap();
    let (identity, state_dir) = support::identity_and_state_dir(&state, &project);
    fs::write(project.join("a.txt"), "a0").unwrap();
    fs::write(project.join("b.txt"), "b1").unwrap();
    fs::write(project.join("c.txt"), "c1").unwrap();
    support::insert_open_intents(
        &state_dir,
        &identity,
        &[
            ("a.txt", FileState::of(b"a0"), FileState::of(b"a1")),
            ("b.txt", FileState::of(b"b0"), FileState::of(b"b1")),
            ("c.txt", FileState::Absent, FileState::of(b"c1")),
        ],
    );
    let out = child(&state, &project, &["reconcile"], None);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "godot-mcp serve: startup reconciliation compensated=1\n\
         godot-mcp serve: startup reconciliation committed=2\n\
         godot-mcp serve: write gate open\n"
    );
}

/// Guards against: a closed gate that lets writes through, or that does not
/// name the quarantined transaction, after a third party changed the target.
#[test]
fn unprovable_state_closes_the_gate_and_names_the_transaction() {
    let _one = support::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (state, project) = (dir.path().join("state"), dir.path().join("project"));
    fs::create_dir_all(&project).unwrap();
    Scenario::Overwrite.setup(&project);
    crash_at(
        &state,
        &project,
        &Scenario::Overwrite.command(),
        failpoints::AFTER_RENAME,
    );
    fs::write(project.join(REL), "someone else's bytes").unwrap();
    let out = child(&state, &project, &["write", "other.txt", "x"], None);
    assert!(!out.status.success(), "a write through a closed gate");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let mut lines = stderr.lines();
    assert_eq!(
        lines.next(),
        Some("godot-mcp serve: startup reconciliation quarantined=1")
    );
    let gate = lines.next().unwrap();
    assert!(
        gate.starts_with("godot-mcp serve: write gate closed: 1 quarantined transaction(s): "),
        "{gate}"
    );
    assert!(gate.contains("neither its pre-state"), "{gate}");
    assert!(
        lines.next().unwrap().contains("write gate closed"),
        "{stderr}"
    );
    assert!(!project.join("other.txt").exists());
    assert_eq!(
        fs::read_to_string(project.join(REL)).unwrap(),
        "someone else's bytes"
    );
}
