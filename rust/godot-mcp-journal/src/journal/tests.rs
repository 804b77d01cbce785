use super::*;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;

use crate::ids::TxnStatus;
use crate::listing::TxnFilter;
use crate::schema::{self};
use crate::storage::RealStorage;

/// A journal of a fresh project, reconciled (its temp dir kept alive by the caller).
fn reconciled() -> (tempfile::TempDir, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    let mut j = Journal::open(&dir.path().join("s"), &project).unwrap();
    j.reconcile().unwrap();
    (dir, j)
}

/// Guards against: the connection a write leaves at `synchronous=NORMAL`
/// used at that level by anything else, which would silently drop the
/// fsync of every other commit (launches, editor rows, reconciliation,
/// repair): every other use goes through `conn()`, which restores `FULL`.
#[test]
fn every_use_after_a_write_sees_synchronous_full() {
    let (_dir, mut j) = reconciled();
    let full = |j: &Journal| -> i64 {
        j.conn()
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap()
    };
    assert_eq!(full(&j), 2);
    j.write_file(FileWrite::new("a.txt", b"x", "t", "write"))
        .unwrap();
    assert_eq!(
        full(&j),
        2,
        "FULL (2) again after the write's unsynced commits"
    );
}

/// Guards against: a start that creates the intent log (a 1 MiB
/// preallocation and two fsyncs) or commits an empty fold although no
/// write ever made a log: a journal that never wrote has no log, and
/// opening it again writes nothing to the database (no WAL frame). The
/// first write creates the log, and the next open folds what it holds.
#[test]
fn a_journal_that_never_wrote_has_no_log_and_its_open_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    let state = dir.path().join("s");
    let open = || {
        let mut j = Journal::open(&state, &project).unwrap();
        j.reconcile().unwrap();
        j
    };
    let log_of = |j: &Journal| j.state_dir().join(crate::intent_log::LOG_FILE);
    let j = open();
    let (log, wal) = (
        log_of(&j),
        j.state_dir().join(format!("{JOURNAL_FILE}-wal")),
    );
    assert!(!log.exists(), "no write, no intent log");
    drop(j);
    let mut j = open();
    let frames = fs::metadata(&wal).map_or(0, |m| m.len());
    assert_eq!(
        frames, 0,
        "the open of a journal without a log wrote to the WAL"
    );
    assert!(!log.exists());
    j.write_file(FileWrite::new("a.txt", b"x", "t", "write"))
        .unwrap();
    assert_eq!(fs::metadata(&log).unwrap().len(), 1 << 20, "preallocated");
    drop(j);
    let j = open();
    assert_eq!(
        count(
            &j,
            "SELECT COUNT(*) FROM transactions WHERE state = 'committed'"
        ),
        1
    );
}

/// Guards against: a new journal that a power loss right after its
/// creation can leave missing or half built (its rename not synced, or
/// built in place): after the open and a simulated power loss, the
/// journal is there, whole, at the current schema, and no temp is left.
#[cfg(feature = "failpoints")]
#[test]
fn a_new_journal_survives_a_power_loss_right_after_its_creation() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    let state = dir.path().join("s");
    let sim = Arc::new(crate::storage::PowerLossSim::default());
    let j = Journal::open_with_storage(&state, &project, sim.clone()).unwrap();
    let db = j.state_dir().join(JOURNAL_FILE);
    let identity = j.identity().clone();
    drop(j);
    sim.power_loss().unwrap();
    let again = Journal::open(&state, &project).unwrap();
    assert_eq!(again.identity(), &identity, "the created identity was lost");
    drop(again);
    assert!(db.exists(), "the created journal was lost");
    assert!(!db.with_extension("sqlite3.new").exists());
    let conn = Connection::open(&db).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::CURRENT_VERSION);
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

/// Guards against: a fresh open that a power loss at some step leaves in
/// a state the next open refuses (a torn identity or journal), or that
/// makes more than the one folder fsync both of its renames need. The
/// machine stops before each storage step of a fresh open in turn (what
/// was not made durable is dropped); the next open must succeed and take
/// a write. The complete open's sync steps are pinned.
#[cfg(feature = "failpoints")]
#[test]
fn a_power_loss_at_any_step_of_a_fresh_open_leaves_a_start_the_next_open_takes() {
    use crate::storage::{Injected, PowerLossSim, StorageOp};
    use std::sync::Mutex;

    /// Where the machine stops (before that step), and every step's kind.
    struct Stop {
        at: usize,
        steps: Mutex<Vec<&'static str>>,
    }
    let hook = |stop: &Stop, op: StorageOp<'_>| {
        let mut steps = stop.steps.lock().unwrap();
        steps.push(match op {
            StorageOp::SyncFile(_) => "SyncFile",
            StorageOp::SyncData(_) => "SyncData",
            StorageOp::SyncDir(_) => "SyncDir",
            _ => "other",
        });
        if steps.len() > stop.at {
            return Err(io::Error::other("the machine stopped"));
        }
        Ok(())
    };

    for stop_at in 0.. {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        fs::create_dir_all(&project).unwrap();
        let state = dir.path().join("s");
        let storage = Arc::new(Injected {
            state: Stop {
                at: stop_at,
                steps: Mutex::new(Vec::new()),
            },
            hook,
            inner: PowerLossSim::default(),
        });
        let opened = Journal::open_with_storage(&state, &project, storage.clone());
        let identity = opened.as_ref().ok().map(|j| j.identity().clone());
        drop(opened);
        storage.inner.power_loss().unwrap();
        let mut next = Journal::open(&state, &project)
            .unwrap_or_else(|e| panic!("stopped before step {stop_at}: next open: {e}"));
        next.reconcile().unwrap();
        next.write_file(FileWrite::new("a.txt", b"x", "t", "write"))
            .unwrap_or_else(|e| panic!("stopped before step {stop_at}: write: {e}"));
        if let Some(identity) = identity {
            assert_eq!(next.identity(), &identity, "an opened identity was lost");
            let steps = storage.state.steps.lock().unwrap().clone();
            let syncs: Vec<&str> = steps.iter().copied().filter(|s| *s != "other").collect();
            assert_eq!(
                syncs,
                ["SyncFile", "SyncFile", "SyncDir"],
                "a fresh open's syncs (every step: {steps:?})"
            );
            break;
        }
    }
}

fn count(j: &Journal, sql: &str) -> usize {
    // The raw connection: no fold first.
    j.db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize
}

/// Guards against: an intent log that only grows while nothing else reads
/// the journal (the fold at `FOLD_AT` records missing): every write's
/// records reach `transactions` in bounded time, proven and without
/// pre-images, and the log restarts instead of growing.
#[test]
fn the_intent_log_is_folded_while_writes_go_on() {
    let (_dir, mut j) = reconciled();
    let writes = crate::intent_log::FOLD_AT * 2 + 3;
    let mut ids = Vec::new();
    for i in 0..writes {
        // Overwrites after the first: each intent carries a pre-image.
        let bytes = format!("v{i}");
        let outcome = j
            .write_file(FileWrite::new("a.txt", bytes.as_bytes(), "t", "write"))
            .unwrap();
        ids.push(outcome.transaction_id());
    }
    let unfolded = j.log.lock().unwrap().unfolded();
    assert!(
        unfolded <= crate::intent_log::FOLD_AT,
        "{unfolded} records unfolded after {writes} writes"
    );
    let committed = count(
        &j,
        "SELECT COUNT(*) FROM transactions WHERE state = 'committed'",
    );
    assert!(committed + unfolded >= writes, "{committed} committed");
    assert_eq!(count(&j, "SELECT COUNT(*) FROM preimages"), 0);
    let log_len = fs::metadata(j.state_dir().join(crate::intent_log::LOG_FILE))
        .unwrap()
        .len();
    assert_eq!(log_len, 1 << 20, "restarted, not grown");
    // Any read folds the rest first.
    let newest = j
        .list_transactions(&TxnFilter {
            status: None,
            limit: 1,
        })
        .unwrap();
    assert_eq!(newest[0].transaction_id, ids[writes - 1]);
    assert_eq!(newest[0].status, TxnStatus::Committed);
    assert_eq!(j.log.lock().unwrap().unfolded(), 0);
    assert_eq!(
        count(
            &j,
            "SELECT COUNT(*) FROM transactions WHERE state = 'committed'"
        ),
        writes
    );
}

/// Guards against: an intent log read with a database it was not written
/// for — the operator step that moves the journal aside and starts afresh
/// must not fold the old log's records into the new journal.
#[test]
fn a_new_database_does_not_read_the_old_intent_log() {
    let (dir, mut j) = reconciled();
    j.write_file(FileWrite::new("a.txt", b"x", "t", "write"))
        .unwrap();
    let state_dir = j.state_dir().to_path_buf();
    drop(j);
    for suffix in ["", "-wal", "-shm"] {
        let _ = fs::remove_file(state_dir.join(format!("{JOURNAL_FILE}{suffix}")));
    }
    let mut j = Journal::open(&dir.path().join("s"), &dir.path().join("p")).unwrap();
    j.reconcile().unwrap();
    let all = j
        .list_transactions(&TxnFilter {
            status: None,
            limit: 10,
        })
        .unwrap();
    assert!(all.is_empty(), "{all:?}");
}

/// Guards against: a committed write's deferred terminal row lost when the
/// journal closes (the `Drop` flush): the row must read `committed` from
/// the database alone, without a reconciliation re-deriving it.
#[test]
fn a_closed_journal_has_written_the_last_terminal_row() {
    let (_dir, mut j) = reconciled();
    let txn = j
        .write_file(FileWrite::new("a.txt", b"x", "t", "write"))
        .unwrap()
        .transaction_id();
    let db = j.state_dir().join(JOURNAL_FILE);
    let sql = format!("SELECT COUNT(*) FROM transactions WHERE id = '{txn}'");
    assert_eq!(count(&j, &sql), 0, "only in the intent log");
    assert_eq!(j.log.lock().unwrap().unfolded(), 1, "the terminal pending");
    drop(j);
    let conn = Connection::open(&db).unwrap();
    let state: String = conn
        .query_row(
            "SELECT state FROM transactions WHERE id = ?1",
            [txn.to_string()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(state, "committed");
}

/// A storage whose next `sync_data` of the WAL fails, once, when armed.
fn flaky_wal() -> Arc<crate::storage::Injected<std::sync::atomic::AtomicBool>> {
    Arc::new(crate::storage::Injected {
        state: false.into(),
        hook: |fail_next, op| match op {
            crate::storage::StorageOp::SyncData(path)
                if path.to_string_lossy().ends_with("-wal")
                    && fail_next.swap(false, std::sync::atomic::Ordering::SeqCst) =>
            {
                Err(io::Error::other("injected WAL sync failure"))
            }
            _ => Ok(()),
        },
        inner: RealStorage,
    })
}

/// Guards against (issue 26, item 5): a failed WAL sync during a log
/// restart that leaves the gate open when no terminal row was pending —
/// the next write would restart the log over records whose fold was
/// never proven durable (a later successful fsync does not prove pages an
/// earlier failed one dropped). Any failed sync closes the gate, and
/// reconciling again in this process does not reopen it.
#[test]
fn a_failed_wal_sync_closes_the_gate_and_keeps_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    let storage = flaky_wal();
    let mut j =
        Journal::open_with_storage(&dir.path().join("s"), &project, storage.clone()).unwrap();
    j.reconcile().unwrap();
    // Overwrites carry their pre-images: the log fills up.
    for i in 0..3u8 {
        j.write_file(FileWrite::new("big.bin", &vec![i; 400_000], "t", "write"))
            .unwrap();
    }
    // No terminal row pending: a read flushes it.
    j.list_transactions(&TxnFilter {
        status: None,
        limit: 1,
    })
    .unwrap();
    let log_path = j.state_dir().join(crate::intent_log::LOG_FILE);
    let head = |p: &Path| fs::read(p).unwrap()[..4096].to_vec();
    let before = head(&log_path);
    storage
        .state
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let failed = j.write_file(FileWrite::new("big.bin", &vec![9; 500_000], "t", "write"));
    assert!(matches!(failed, Err(WriteError::Journal(_))), "{failed:?}");
    assert!(!storage.state.load(std::sync::atomic::Ordering::SeqCst));
    let next = j.write_file(FileWrite::new("c.txt", b"c", "t", "write"));
    assert!(matches!(next, Err(WriteError::NotReconciled)), "{next:?}");
    j.reconcile().unwrap();
    let again = j.write_file(FileWrite::new("c.txt", &vec![1; 600_000], "t", "write"));
    assert!(matches!(again, Err(WriteError::NotReconciled)), "{again:?}");
    assert_eq!(head(&log_path), before, "the log was not restarted");
    assert!(!project.join("c.txt").exists());
}

/// Guards against (issue 41, item 5): a change going ahead after the write of
/// the pending terminal row failed. The log is filled so that the last write's
/// terminal row does not fit: writing it restarts the log, whose WAL sync fails.
/// The change must answer NOT_RECONCILED, record nothing and touch no file.
#[test]
fn a_change_after_a_failed_flush_is_not_reconciled_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    let storage = flaky_wal();
    let mut j =
        Journal::open_with_storage(&dir.path().join("s"), &project, storage.clone()).unwrap();
    j.reconcile().unwrap();
    let room = |j: &Journal| j.log.lock().unwrap().room();
    let write = |j: &mut Journal, path: &str, n: usize| {
        j.write_file(FileWrite::new(path, &vec![7; n], "t", "write"))
            .unwrap();
    };
    // Calibration: what a create after a write (`create`), and an overwrite
    // carrying 1000 bytes of pre-image (`1000 + over`), take of the log.
    write(&mut j, "g.bin", 1000);
    let r1 = room(&j);
    write(&mut j, "g.bin", 1);
    let over = r1 - room(&j) - 1000;
    let r2 = room(&j);
    write(&mut j, "h.bin", 1);
    let create = r2 - room(&j);
    // The real sequence: a create, then an overwrite whose pre-image leaves
    // 16 bytes, less than any terminal row.
    let n = room(&j) - create - over - 16;
    write(&mut j, "f.bin", n as usize);
    write(&mut j, "f.bin", 1);
    // A terminal record is a 32-byte header and its JSON: it cannot fit.
    assert!(room(&j) <= 32, "the calibration did not hold: {}", room(&j));
    storage
        .state
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let change = crate::change::FileChange {
        effects: vec![crate::change::ChangeEffect {
            rel_path: "c.txt".into(),
            op: crate::change::ChangeOp::Write(b"c".to_vec()),
            expected: None,
        }],
        idempotency: None,
        tool_family: "t".into(),
        operation: "change".into(),
    };
    let answer = j.apply_change(change);
    assert!(!storage.state.load(std::sync::atomic::Ordering::SeqCst));
    assert!(
        matches!(answer, Err(crate::change::ChangeError::NotReconciled)),
        "{answer:?}"
    );
    assert!(!project.join("c.txt").exists(), "a file was touched");
    assert_eq!(
        count(
            &j,
            "SELECT COUNT(*) FROM transactions WHERE operation = 'change'"
        ),
        0,
        "the change was recorded"
    );
}

/// Guards against (issue 41, item 13): a journal made anew (its database file
/// gone) replaying the `-wal` an earlier journal left into the fresh image, and
/// overwriting that journal's intent log unread. The new journal holds no row
/// of the old one; the old log is set aside byte for byte and reported.
#[test]
fn a_new_journal_replays_no_stale_wal_and_sets_the_old_log_aside() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    let state = dir.path().join("s");
    let mut j = Journal::open(&state, &project).unwrap();
    j.reconcile().unwrap();
    for i in 0..3u8 {
        j.write_file(FileWrite::new("a.txt", &[i], "t", "write"))
            .unwrap();
    }
    // Folded into the database: the WAL holds the rows.
    assert_eq!(j.list_transactions(&TxnFilter::default()).unwrap().len(), 3);
    j.write_file(FileWrite::new("b.txt", b"b", "t", "write"))
        .unwrap();
    let db = j.state_dir().join(JOURNAL_FILE);
    let side = |suffix: &str| PathBuf::from(format!("{}{suffix}", db.display()));
    let log = j.state_dir().join(crate::intent_log::LOG_FILE);
    let saved: Vec<(PathBuf, Vec<u8>)> = [side("-wal"), side("-shm"), log.clone()]
        .into_iter()
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    assert!(saved[0].1.len() > 32, "the WAL holds frames");
    drop(j);
    fs::remove_file(&db).unwrap();
    for (p, bytes) in &saved {
        fs::write(p, bytes).unwrap();
    }
    let mut j = Journal::open(&state, &project).unwrap();
    let report = j.reconcile().unwrap();
    assert!(
        j.list_transactions(&TxnFilter::default())
            .unwrap()
            .is_empty(),
        "the new journal replayed the old one's WAL"
    );
    let aside = report.set_aside_log.clone().expect("the old log set aside");
    assert_eq!(fs::read(&aside).unwrap(), saved[2].1);
    assert!(
        report
            .stderr_lines()
            .iter()
            .any(|l| l.contains(&aside.display().to_string())),
        "{report:?}"
    );
    j.write_file(FileWrite::new("c.txt", b"c", "t", "write"))
        .unwrap();
}

#[test]
fn canonical_hash_ignores_key_order() {
    let a = serde_json::json!({"b": 1, "a": {"y": [1, 2], "x": null}});
    let b = serde_json::json!({"a": {"x": null, "y": [1, 2]}, "b": 1});
    assert_eq!(canonical_request_hash(&a), canonical_request_hash(&b));
    let c = serde_json::json!({"a": {"x": null, "y": [2, 1]}, "b": 1});
    assert_ne!(canonical_request_hash(&a), canonical_request_hash(&c));
}
