//! [`Journal`] itself: its connection, the deferred terminal row, the intent log's
//! appends and folds, the write gate, replay lookup.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension};

use crate::effect::{FileIntent, FileProof, proof_json};
use crate::failpoints::{self as fp, cross};
use crate::identity::ProjectIdentity;
use crate::ids::IdempotencyKey;
use crate::ids::{TxnId, TxnStatus};
use crate::intent_log::IntentLog;
use crate::lease::Lease;
use crate::storage::{BackgroundSync, Storage};

use super::rows::in_txn;
use super::types::{QuarantinedTxn, ReplayLookupError, ReplayProjection, TxnFailure, WriteGate};

/// The journal's file name inside the project state dir.
pub const JOURNAL_FILE: &str = "journal.sqlite3";

/// An open journal for one project, holding that project's writer lease.
pub struct Journal {
    /// The database. Read and written through [`Journal::conn`] (or after
    /// [`Journal::flush_pending`]), so a pending terminal row is never missed.
    pub(super) db: Connection,
    /// The terminal row of the last committed write, decided and proven but not
    /// yet written: it is written in the same SQLite transaction as the next
    /// intent, or before any other use of the database, or on drop (see
    /// [`Journal::defer_terminal`]).
    pub(super) pending: std::sync::Mutex<Option<PendingTerminal>>,
    /// Writing a pending terminal row failed outside a write: the gate is
    /// `Unreconciled` from then on.
    pub(super) pending_failed: std::sync::atomic::AtomicBool,
    /// A sync of the journal's own files (the WAL before a log restart, the
    /// intent log before an effect) failed: nothing this process wrote since
    /// is proven durable — a later fsync that succeeds does not prove pages an
    /// earlier failed one dropped. The gate stays `Unreconciled` until the
    /// journal is opened again (its open folds the log afresh, durably), and
    /// the log is never restarted over records whose fold is unproven: it
    /// grows instead.
    pub(super) sync_failed: std::sync::atomic::AtomicBool,
    /// The largest request id any editor row recorded when this process first
    /// asked, and the ids recorded since (see [`Journal::last_editor_request_id`]).
    pub(crate) editor_ids: Option<(u64, std::collections::HashSet<u64>)>,
    /// The intent log (see [`crate::intent_log`]): its records not yet
    /// folded into `transactions` are folded before any other use of the
    /// database.
    pub(super) log: std::sync::Mutex<IntentLog>,
    /// The WAL, opened for the durable fold before the log restarts.
    pub(super) wal: std::sync::OnceLock<fs::File>,
    /// The connection is at `synchronous=NORMAL`, where the last write's
    /// unsynced commit left it; [`Journal::conn`] restores `FULL` before any
    /// other use. Consecutive writes so pay no `PRAGMA` (SQLite re-prepares a
    /// `synchronous` statement on every run, which profiled at a seventh of a
    /// write's SQLite time when done twice per write).
    pub(super) sync_normal: std::sync::atomic::AtomicBool,
    pub(crate) identity: ProjectIdentity,
    /// Canonical project root; every target is joined onto it.
    pub(crate) root: PathBuf,
    pub(crate) state_dir: PathBuf,
    pub(crate) gate: WriteGate,
    /// Every durable file effect of a write goes through it (see [`crate::storage`]).
    pub(crate) storage: Arc<dyn Storage>,
    /// The intent log's fsync, overlapped with the temp file's (started on
    /// the first write).
    pub(super) log_sync: Option<BackgroundSync>,
    /// The most bytes of pre-images one change may retain
    /// ([`crate::preimage::MAX_CHANGE_PREIMAGE_BYTES`]; tests lower it).
    pub(crate) change_preimage_limit: u64,
    /// Where this open set aside an intent log a previous journal left (see
    /// [`clear_for_new_journal`]).
    pub(super) set_aside_log: Option<PathBuf>,
    /// Held for the journal's lifetime: one project, one writer.
    pub(super) _lease: Lease,
    /// The same, inside the project folder ([`crate::lease::PROJECT_FILE`]).
    pub(super) _project_lease: Lease,
}

/// A live write's terminal row, waiting to be written (see [`Journal::pending`]).
pub(super) struct PendingTerminal {
    pub(super) txn: TxnId,
    pub(super) proof: FileProof,
}

impl Drop for Journal {
    fn drop(&mut self) {
        if let Err(e) = self.flush_pending() {
            tracing::error!(error = %e, "could not record the last write's terminal row; it is re-derived at the next start");
        }
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("root", &self.root)
            .field("state_dir", &self.state_dir)
            .field("identity", &self.identity)
            .field("gate", &self.gate)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// The project's object identity and generation.
    pub fn identity(&self) -> &ProjectIdentity {
        &self.identity
    }

    /// The canonical project root.
    pub fn project_root(&self) -> &Path {
        &self.root
    }

    /// This project's private state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The current write gate.
    pub fn gate(&self) -> &WriteGate {
        &self.gate
    }

    /// The database, with any pending terminal row written first, so every
    /// read and write sees exactly the rows a write without deferral would
    /// have left, and at `synchronous=FULL`. A failure to write it closes the
    /// gate (`Unreconciled`).
    pub(crate) fn conn(&self) -> &Connection {
        if self
            .flush_pending()
            .and_then(|()| self.set_unsynced(false))
            .is_err()
        {
            self.pending_failed
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        &self.db
    }

    /// [`Journal::conn`] for a caller that needs the connection mutably (a
    /// SQLite transaction).
    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        if self
            .flush_pending()
            .and_then(|()| self.set_unsynced(false))
            .is_err()
        {
            self.gate = WriteGate::Unreconciled;
        }
        &mut self.db
    }

    /// Forgets that a pending terminal row could not be written (reconciliation
    /// re-derives that row, still `open`, from disk).
    pub(crate) fn clear_pending_failure(&mut self) {
        self.pending_failed
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Puts the connection at `synchronous=NORMAL` (`true`: a commit writes its
    /// WAL frames without an fsync; a fold before the intent log restarts
    /// fsyncs the WAL itself) or back at `FULL`, running the `PRAGMA` only on a
    /// change.
    pub(crate) fn set_unsynced(&self, unsynced: bool) -> rusqlite::Result<()> {
        use std::sync::atomic::Ordering;
        if self.sync_normal.load(Ordering::SeqCst) == unsynced {
            return Ok(());
        }
        let level = if unsynced { "NORMAL" } else { "FULL" };
        self.db
            .prepare_cached(&format!("PRAGMA synchronous = {level}"))?
            .execute([])?;
        self.sync_normal.store(unsynced, Ordering::SeqCst);
        Ok(())
    }

    /// Appends the pending terminal row, if any, to the intent log and folds
    /// the log's unfolded records into `transactions` (see
    /// [`crate::intent_log`]): one unsynced SQLite transaction, like the live
    /// write's own rows.
    pub(crate) fn flush_pending(&self) -> rusqlite::Result<()> {
        let taken = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if taken.is_none() && log.unfolded() == 0 {
            return Ok(());
        }
        if let Some(p) = &taken {
            let proof = proof_json::<FileIntent>(&p.proof)?;
            let heads = [(
                crate::intent_log::terminal(p.txn, TxnStatus::Committed, Some(proof)),
                None,
            )];
            self.append_to_log(&mut log, &heads)?;
        }
        self.fold_log(&mut log, false)?;
        if taken.is_some() {
            cross(fp::AFTER_TERMINAL);
        }
        Ok(())
    }

    /// Appends `heads` to the log, restarting it first (a durable fold) when
    /// they do not fit after its tail.
    pub(super) fn append_to_log(
        &self,
        log: &mut IntentLog,
        heads: &[(crate::intent_log::Head, Option<&[u8]>)],
    ) -> rusqlite::Result<()> {
        let batch = log.batch(heads).map_err(|e| log_error(log, e))?;
        if !log.fits(&batch) {
            self.fold_log(log, true)?;
        }
        log.append(batch).map_err(|e| log_error(log, e))
    }

    /// Folds the log's unfolded records into `transactions` in one unsynced
    /// SQLite transaction. With `restart`, the fold is then made durable (the
    /// WAL fsynced through the storage seam) and the log is overwritten from
    /// its start.
    pub(super) fn fold_log(&self, log: &mut IntentLog, restart: bool) -> rusqlite::Result<()> {
        let records = log.unfolded_records().map_err(|e| log_error(log, e))?;
        self.set_unsynced(true)?;
        in_txn(&self.db, |conn| {
            crate::intent_log::fold(conn, &records, log.last_seq())
        })?;
        // Folded: never folded again, even if the sync below fails (the log
        // then goes on after its tail instead of restarting).
        log.folded();
        // After a failed sync nothing proves this fold durable: the log keeps
        // its records (and grows) until the journal is opened again.
        if restart && !self.sync_failed() {
            let wal_path = self.state_dir.join(format!("{JOURNAL_FILE}-wal"));
            let synced = match self.wal.get() {
                Some(wal) => self.storage.sync_data(&wal_path, wal),
                // Writable: Windows flushes only a handle opened for writing.
                None => fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&wal_path)
                    .and_then(|wal| {
                        let wal = self.wal.get_or_init(|| wal);
                        self.storage.sync_data(&wal_path, wal)
                    }),
            };
            if let Err(e) = synced {
                self.sync_failed
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                return Err(io_error(&wal_path, e));
            }
            log.restart();
        }
        Ok(())
    }

    /// The gate from the journal: closed while any transaction is unresolved —
    /// every quarantined row, whichever project object or generation it was
    /// recorded for (rows of another incarnation of the project were never
    /// proven harmless here; `transaction repair` resolves them with a proof
    /// naming their recorded identity), and every row whose id this build
    /// cannot parse (it can never be reconciled or repaired by id; see
    /// docs/recovery.md for the operator step). Such a row is listed under
    /// the nil transaction id, its raw id in the reason.
    pub(crate) fn compute_gate(&self) -> rusqlite::Result<WriteGate> {
        let mut st = self.conn().prepare_cached(
            "SELECT id, state, reason, project_object_id, generation FROM transactions
             WHERE state IN ('quarantined', 'open')
             ORDER BY rowid",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut quarantined = Vec::new();
        for (id, state, reason, object_id, generation) in rows {
            match (id.parse::<TxnId>(), state.as_str()) {
                (Ok(transaction_id), "quarantined") => {
                    let mut reason = reason.unwrap_or_default();
                    if object_id != self.identity.object_id
                        || generation != self.identity.generation as i64
                    {
                        reason = format!(
                            "of project object {object_id} generation {generation}: {reason}"
                        );
                    }
                    quarantined.push(QuarantinedTxn {
                        transaction_id,
                        reason,
                    });
                }
                // An open row with a valid id is in flight or is an editor
                // effect that blocks nothing by design.
                (Ok(_), _) => {}
                (Err(_), _) => quarantined.push(QuarantinedTxn {
                    transaction_id: TxnId::from_bytes([0; 16]),
                    reason: format!(
                        "journal row with unparsable id {id:?} ({state}): it cannot be \
                         reconciled or repaired by id; see docs/recovery.md"
                    ),
                }),
            }
        }
        Ok(if quarantined.is_empty() {
            WriteGate::Open
        } else {
            WriteGate::Closed { quarantined }
        })
    }
}

impl Journal {
    /// How many pre-images the journal retains, and their bytes.
    pub fn retained_preimages(&self) -> rusqlite::Result<(usize, u64)> {
        crate::preimage::retained_count(self.conn())
    }

    /// A number that grows with every row this journal inserted, updated or deleted since
    /// it was opened (SQLite's `total_changes`): equal stamps mean nothing was journaled in
    /// between, so a watcher re-reads the journal only when it changed. A terminal row still
    /// pending (see `Journal::conn`) is written first, so it counts as a change.
    pub fn change_stamp(&self) -> u64 {
        self.conn().total_changes()
    }

    /// Whether a sync of the journal's own files failed in this process
    /// (see the field `sync_failed`).
    pub(crate) fn sync_failed(&self) -> bool {
        self.sync_failed.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn check_gate(&self) -> Result<(), TxnFailure> {
        if self.sync_failed()
            || self
                .pending_failed
                .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Err(TxnFailure::NotReconciled);
        }
        match &self.gate {
            WriteGate::Open => Ok(()),
            WriteGate::Unreconciled => Err(TxnFailure::NotReconciled),
            WriteGate::Closed { quarantined } => Err(TxnFailure::GateClosed(
                quarantined.iter().map(|q| q.transaction_id).collect(),
            )),
        }
    }

    /// Looks an idempotency id up before a call is planned, so an exact
    /// same-context replay answers its recorded projection without re-checking (a
    /// compare-and-swap precondition would no longer hold after the first run) and
    /// without executing anything. `Ok(None)`: the id is unused.
    pub fn lookup_replay(
        &self,
        key: &IdempotencyKey,
        tool_family: &str,
        operation: &str,
    ) -> Result<Option<ReplayProjection>, ReplayLookupError> {
        self.replay_lookup(key, tool_family, operation)
            .map_err(|f| match f {
                TxnFailure::Conflict(id) => ReplayLookupError::Conflict { id },
                TxnFailure::Journal(e) => ReplayLookupError::Journal(e),
                _ => ReplayLookupError::Journal(rusqlite::Error::InvalidQuery),
            })
    }

    /// Looks the idempotency id up: `Some(projection)` for an exact replay,
    /// `Err(Conflict)` for any other context, `None` when unused.
    pub(crate) fn replay_lookup(
        &self,
        key: &IdempotencyKey,
        tool_family: &str,
        operation: &str,
    ) -> Result<Option<ReplayProjection>, TxnFailure> {
        let row = self
            .conn()
            .prepare_cached(
                "SELECT id, state, reason, project_object_id, generation, idem_principal,
                        idem_session, tool_family, operation, idem_request_hash
                 FROM transactions WHERE idem_id = ?1",
            )
            .and_then(|mut st| {
                st.query_row([&key.id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        [
                            r.get::<_, String>(3)?,
                            r.get::<_, i64>(4)?.to_string(),
                            r.get::<_, String>(5)?,
                            r.get::<_, String>(6)?,
                            r.get::<_, String>(7)?,
                            r.get::<_, String>(8)?,
                            r.get::<_, String>(9)?,
                        ],
                    ))
                })
                .optional()
            })
            .map_err(TxnFailure::Journal)?;
        let Some((id, state, reason, context)) = row else {
            return Ok(None);
        };
        let ours = [
            self.identity.object_id.clone(),
            self.identity.generation.to_string(),
            key.principal.clone(),
            key.session.clone(),
            tool_family.to_owned(),
            operation.to_owned(),
            key.request_hash.to_string(),
        ];
        if context != ours {
            return Err(TxnFailure::Conflict(key.id.clone()));
        }
        let (Ok(transaction_id), Some(status)) = (id.parse(), TxnStatus::parse(&state)) else {
            return Err(TxnFailure::Journal(rusqlite::Error::InvalidQuery));
        };
        Ok(Some(ReplayProjection {
            status,
            transaction_id,
            reason,
        }))
    }
}

/// An I/O failure of the intent log, as the SQLite I/O error the journal's
/// callers already handle (the gate falls back to `Unreconciled`).
pub(super) fn log_error(log: &IntentLog, e: io::Error) -> rusqlite::Error {
    io_error(log.path(), e)
}

pub(super) fn io_error(path: &Path, e: io::Error) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
        Some(format!("{}: {e}", path.display())),
    )
}
