//! Crash sweep of a change (issue 28): a real child process applies one 5-file
//! change — the shape of a `move_file`: create the new file and its `.uid`,
//! rewrite the scene that names it, delete the old file and its `.uid` — and
//! dies (process exit, status 77) at every boundary inside it, each file's
//! crossing of a per-file boundary counted. The next start reconciles; then
//! the same with a second death at every boundary of the compensation that
//! reconciliation runs.
//!
//! After the final reconciliation: exactly one transaction, `committed` with
//! every file byte-for-byte at its post-state or `compensated` with every file
//! at its pre-state (never a mix), the verdict pinned per boundary (committed
//! once the last file's effect landed, compensated before); no transaction
//! open, none quarantined, the gate open, no temp file left, no pre-image
//! retained. Every boundary of the list must be reached.
#![cfg(feature = "failpoints")]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use godot_mcp_journal::failpoints as fp;
use godot_mcp_journal::{Journal, TxnFilter, TxnStatus, WriteGate};

mod support;

const CHILD: &str = env!("CARGO_BIN_EXE_journal-test-child");

const OLD: &str = "[gd_scene format=3 uid=\"uid://old\"]\n[node name=\"Old\" type=\"Node\"]\n";
const OLD_UID: &str = "uid://old\n";
const MAIN_PRE: &str = "[ext_resource path=\"res://a/old.tscn\" id=\"1\"]\n";
const MAIN_POST: &str = "[ext_resource path=\"res://b/new.tscn\" id=\"1\"]\n";

/// (path, pre, post) of every file of the change, in its order.
const FILES: [(&str, Option<&str>, Option<&str>); 5] = [
    ("b/new.tscn", None, Some(OLD)),
    ("b/new.tscn.uid", None, Some(OLD_UID)),
    ("main.tscn", Some(MAIN_PRE), Some(MAIN_POST)),
    ("a/old.tscn", Some(OLD), None),
    ("a/old.tscn.uid", Some(OLD_UID), None),
];

fn specs() -> Vec<String> {
    FILES
        .iter()
        .map(|(path, _, post)| match post {
            Some(text) => format!("w={path}={text}"),
            None => format!("d={path}"),
        })
        .collect()
}

/// Every boundary the change crosses, in order, as (failpoint, crossing).
fn boundaries() -> Vec<(&'static str, usize)> {
    let mut out = vec![(fp::CHANGE_AFTER_INTENT, 1)];
    for n in 1..=3 {
        out.push((fp::AFTER_TEMP_WRITE, n));
        out.push((fp::AFTER_TEMP_FSYNC, n));
    }
    let (mut renames, mut unlinks) = (0, 0);
    for (n, (_, _, post)) in FILES.iter().enumerate() {
        let n = n + 1;
        out.push((fp::AFTER_PRE_HASH, n));
        if post.is_some() {
            renames += 1;
            out.push((fp::AFTER_RENAME, renames));
        } else {
            unlinks += 1;
            out.push((fp::AFTER_UNLINK, unlinks));
        }
        out.push((fp::AFTER_DIR_FSYNC, n));
        out.push((fp::CHANGE_AFTER_EFFECT, n));
    }
    out.push((fp::CHANGE_AFTER_POST_HASH, 1));
    out.push((fp::CHANGE_AFTER_TERMINAL, 1));
    out
}

/// The verdict a death at boundary `at` (its index) must reconcile to: the
/// change is whole once its last file's effect landed.
fn expected(at: usize) -> TxnStatus {
    let all = boundaries();
    let landed = all
        .iter()
        .position(|b| *b == (fp::AFTER_UNLINK, 2))
        .unwrap();
    if at >= landed {
        TxnStatus::Committed
    } else {
        TxnStatus::Compensated
    }
}

/// How many files are at their post-state after a death at boundary `at`
/// (each file's effect lands at its rename or unlink).
fn landed_files(at: usize) -> usize {
    boundaries()[..=at]
        .iter()
        .filter(|(p, _)| *p == fp::AFTER_RENAME || *p == fp::AFTER_UNLINK)
        .count()
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (state, project) = (dir.path().join("state"), dir.path().join("project"));
    fs::create_dir_all(project.join("a")).unwrap();
    for (path, pre, _) in FILES {
        if let Some(text) = pre {
            fs::write(project.join(path), text).unwrap();
        }
    }
    (dir, state, project)
}

fn child(state: &Path, project: &Path, args: &[String], crash: Option<(&str, usize)>) -> Output {
    let mut cmd = Command::new(CHILD);
    cmd.arg(state).arg(project).args(args);
    cmd.env_remove("JOURNAL_POWER_LOSS");
    match crash {
        Some((point, n)) => cmd
            .env("JOURNAL_CRASH_AT", point)
            .env("JOURNAL_CRASH_SKIP", (n - 1).to_string()),
        None => cmd
            .env_remove("JOURNAL_CRASH_AT")
            .env_remove("JOURNAL_CRASH_SKIP"),
    };
    cmd.output().unwrap()
}

fn die_at(state: &Path, project: &Path, args: &[String], point: &str, n: usize) {
    let out = child(state, project, args, Some((point, n)));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(77),
        "child did not die at {point}@{n}: stdout={stdout} stderr={}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("FAILPOINT_REACHED {point}")),
        "{stdout}"
    );
}

fn temps(project: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in [project.to_path_buf(), project.join("a"), project.join("b")] {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with(".gmcp-") {
                found.push(format!("{}/{name}", dir.display()));
            }
        }
    }
    found
}

fn read(project: &Path, path: &str) -> Option<String> {
    match fs::read(project.join(path)) {
        Ok(b) => Some(String::from_utf8(b).unwrap()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("{path}: {e}"),
    }
}

/// Reconciles in-process and checks every invariant; `what` names the case.
fn check(state: &Path, project: &Path, expected: TxnStatus, what: &str) {
    let mut journal = Journal::open(state, project).unwrap();
    let report = journal.reconcile().unwrap();
    assert!(report.quarantined.is_empty(), "{what}: {report:?}");
    assert_eq!(report.gate, WriteGate::Open, "{what}");
    let all = journal.list_transactions(&TxnFilter::default()).unwrap();
    assert_eq!(all.len(), 1, "{what}: exactly the one change: {all:?}");
    let change = &all[0];
    assert_eq!(change.status, expected, "{what}: {change:?}");
    assert_eq!(change.files.len(), 5, "{what}: the change names its files");
    for (path, pre, post) in FILES {
        let want = match expected {
            TxnStatus::Committed => post,
            _ => pre,
        };
        assert_eq!(read(project, path).as_deref(), want, "{what}: {path}");
    }
    assert_eq!(temps(project), Vec::<String>::new(), "{what}: temps left");
    assert_eq!(journal.retained_change_preimages().unwrap(), 0, "{what}");
}

/// Guards against: a change that reconciles to a mix (some files moved, some
/// not) after a crash anywhere inside it, a verdict that does not match the
/// disk, and a boundary the sweep silently stops reaching.
#[test]
fn a_crash_at_every_boundary_of_a_change_reconciles_to_all_or_nothing() {
    let _one = support::one_at_a_time();
    let args: Vec<String> = std::iter::once("change".to_owned())
        .chain(specs())
        .collect();
    for (at, (point, n)) in boundaries().into_iter().enumerate() {
        let (_dir, state, project) = setup();
        die_at(&state, &project, &args, point, n);
        check(&state, &project, expected(at), &format!("{point}@{n}"));
    }
}

/// Guards against: a compensation at reconciliation that a second crash cuts
/// short leaving a mix or a torn file: after a death at each boundary of the
/// compensation, the next reconciliation still puts every file back.
#[test]
fn a_crash_inside_the_compensation_still_puts_every_file_back() {
    let _one = support::one_at_a_time();
    let args: Vec<String> = std::iter::once("change".to_owned())
        .chain(specs())
        .collect();
    let all = boundaries();
    let mut second_deaths = 0;
    for (at, (point, n)) in all.iter().copied().enumerate() {
        if expected(at) != TxnStatus::Compensated {
            continue;
        }
        // A file that landed is put back: one undo boundary each.
        for undo in 1..=landed_files(at) {
            let (_dir, state, project) = setup();
            die_at(&state, &project, &args, point, n);
            let reconcile = ["reconcile".to_owned()];
            die_at(&state, &project, &reconcile, fp::CHANGE_AFTER_UNDO, undo);
            second_deaths += 1;
            check(
                &state,
                &project,
                TxnStatus::Compensated,
                &format!("{point}@{n}, then undo {undo}"),
            );
        }
    }
    assert!(second_deaths >= 10, "{second_deaths}");
}

/// The change itself, without a crash: committed, every file at its post-state.
#[test]
fn a_change_without_a_crash_commits_every_file() {
    let _one = support::one_at_a_time();
    let args: Vec<String> = std::iter::once("change".to_owned())
        .chain(specs())
        .collect();
    let (_dir, state, project) = setup();
    let out = child(&state, &project, &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check(&state, &project, TxnStatus::Committed, "no crash");
}
