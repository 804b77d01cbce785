//! [`Journal`]: the write gate and the lifecycle of `file` transactions —
//! intent (with pre-state) durable before the effect, an atomic durable effect,
//! and a terminal row carrying a proof re-derived from disk.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::derive::derive_file_linked;
use crate::durable;
pub(crate) use crate::effect::to_json;
use crate::effect::{Deriver, FileIntent, FileProof, ProofBasis, intent_json, proof_json};
use crate::failpoints::{self as fp, cross};
use crate::identity::{IdentityError, ProjectIdentity};
pub use crate::ids::IdempotencyKey;
pub(crate) use crate::ids::now_ms;
use crate::ids::{ContentHash, EffectKind, FileState, TxnId, TxnStatus};
use crate::intent_log::IntentLog;
use crate::lease::{Lease, LeaseError};
use crate::schema::{self, MigrateError};
use crate::state_dir::{self, PathError};
use crate::storage::{BackgroundSync, RealStorage, Storage};

/// The journal's file name inside the project state dir.
pub const JOURNAL_FILE: &str = "journal.sqlite3";

/// An open journal for one project, holding that project's writer lease.
pub struct Journal {
    /// The database. Read and written through [`Journal::conn`] (or after
    /// [`Journal::flush_pending`]), so a pending terminal row is never missed.
    db: Connection,
    /// The terminal row of the last committed write, decided and proven but not
    /// yet written: it is written in the same SQLite transaction as the next
    /// intent, or before any other use of the database, or on drop (see
    /// [`Journal::defer_terminal`]).
    pending: std::sync::Mutex<Option<PendingTerminal>>,
    /// Writing a pending terminal row failed outside a write: the gate is
    /// `Unreconciled` from then on.
    pending_failed: std::sync::atomic::AtomicBool,
    /// A sync of the journal's own files (the WAL before a log restart, the
    /// intent log before an effect) failed: nothing this process wrote since
    /// is proven durable — a later fsync that succeeds does not prove pages an
    /// earlier failed one dropped. The gate stays `Unreconciled` until the
    /// journal is opened again (its open folds the log afresh, durably), and
    /// the log is never restarted over records whose fold is unproven: it
    /// grows instead.
    sync_failed: std::sync::atomic::AtomicBool,
    /// The largest request id any editor row recorded when this process first
    /// asked, and the ids recorded since (see [`Journal::last_editor_request_id`]).
    pub(crate) editor_ids: Option<(u64, std::collections::HashSet<u64>)>,
    /// The intent log (see [`crate::intent_log`]): its records not yet
    /// folded into `transactions` are folded before any other use of the
    /// database.
    log: std::sync::Mutex<IntentLog>,
    /// The WAL, opened for the durable fold before the log restarts.
    wal: std::sync::OnceLock<fs::File>,
    /// The connection is at `synchronous=NORMAL`, where the last write's
    /// unsynced commit left it; [`Journal::conn`] restores `FULL` before any
    /// other use. Consecutive writes so pay no `PRAGMA` (SQLite re-prepares a
    /// `synchronous` statement on every run, which profiled at a seventh of a
    /// write's SQLite time when done twice per write).
    sync_normal: std::sync::atomic::AtomicBool,
    pub(crate) identity: ProjectIdentity,
    /// Canonical project root; every target is joined onto it.
    pub(crate) root: PathBuf,
    pub(crate) state_dir: PathBuf,
    pub(crate) gate: WriteGate,
    /// Every durable file effect of a write goes through it (see [`crate::storage`]).
    pub(crate) storage: Arc<dyn Storage>,
    /// The intent log's fsync, overlapped with the temp file's (started on
    /// the first write).
    log_sync: Option<BackgroundSync>,
    /// The most bytes of pre-images one change may retain
    /// ([`crate::preimage::MAX_CHANGE_PREIMAGE_BYTES`]; tests lower it).
    pub(crate) change_preimage_limit: u64,
    /// Where this open set aside an intent log a previous journal left (see
    /// [`clear_for_new_journal`]).
    set_aside_log: Option<PathBuf>,
    /// Held for the journal's lifetime: one project, one writer.
    _lease: Lease,
    /// The same, inside the project folder ([`crate::lease::PROJECT_FILE`]).
    _project_lease: Lease,
}

/// A live write's terminal row, waiting to be written (see [`Journal::pending`]).
struct PendingTerminal {
    txn: TxnId,
    proof: FileProof,
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

/// Whether writes are accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WriteGate {
    /// Startup reconciliation has not run (or the journal failed mid-write and
    /// must be reconciled again): writes are refused.
    Unreconciled,
    /// Writes are accepted.
    Open,
    /// Quarantined transactions of this project block every write.
    Closed {
        /// The quarantined transactions, oldest first, with their reasons.
        quarantined: Vec<QuarantinedTxn>,
    },
}

/// A quarantined transaction and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QuarantinedTxn {
    /// Its id.
    pub transaction_id: TxnId,
    /// Why neither state could be proven.
    pub reason: String,
}

/// The journal could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The project directory is missing or unreadable.
    #[error("project {path}: {source}")]
    Project {
        /// The path given.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// No state root: none of `$GODOT_MCP_STATE_DIR`, `$XDG_STATE_HOME`, `$HOME`.
    #[error("no state directory: set GODOT_MCP_STATE_DIR, XDG_STATE_HOME or HOME")]
    NoStateRoot,
    /// The state directory could not be created.
    #[error("state directory {path}: {source}")]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Another server holds the project lease, or it could not be taken.
    #[error(transparent)]
    Lease(#[from] LeaseError),
    /// The project identity could not be loaded or established.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The journal database could not be opened or migrated.
    #[error(transparent)]
    Schema(#[from] MigrateError),
}

/// Reconciliation could not finish; the open rows stay open and the gate stays
/// `Unreconciled`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// The journal database failed.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
    /// Making the project's filesystem durable failed.
    #[error("syncfs of the project failed: {0}")]
    Sync(std::io::Error),
}

/// A durable file write.
#[derive(Clone, Debug)]
pub struct FileWrite {
    /// Project-relative path, already validated by the server.
    pub rel_path: PathBuf,
    /// The new bytes.
    pub bytes: Vec<u8>,
    /// Compare-and-swap: the state the caller last saw (`Absent` = create only).
    pub expected: Option<FileState>,
    /// Idempotent replay, when the request carried an identifier.
    pub idempotency: Option<IdempotencyKey>,
    /// The tool family, e.g. `project.files`.
    pub tool_family: String,
    /// The operation, e.g. `write`.
    pub operation: String,
}

impl FileWrite {
    /// An unconditional write (no compare-and-swap, no idempotent replay).
    pub fn new(rel_path: &str, bytes: &[u8], tool_family: &str, operation: &str) -> Self {
        Self {
            rel_path: rel_path.into(),
            bytes: bytes.to_vec(),
            expected: None,
            idempotency: None,
            tool_family: tool_family.into(),
            operation: operation.into(),
        }
    }
}

/// A durable file delete, recorded with a tombstone (post-state `absent`): a
/// [`FileWrite`] without bytes, its fields meaning the same.
#[derive(Clone, Debug)]
pub struct FileDelete {
    pub rel_path: PathBuf,
    pub expected: Option<FileState>,
    pub idempotency: Option<IdempotencyKey>,
    pub tool_family: String,
    pub operation: String,
}

/// What a replay answers: the recorded status and id, never the typed proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplayProjection {
    /// The recorded status.
    pub status: TxnStatus,
    /// The recorded transaction.
    pub transaction_id: TxnId,
    /// The recorded terminal reason, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The result of a successful mutating call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnOutcome {
    /// This call executed the effect and proved it committed.
    Committed {
        /// The transaction.
        transaction_id: TxnId,
        /// The proof, re-derived from disk.
        proof: FileProof,
    },
    /// An exact same-context replay: nothing was executed.
    Replayed(ReplayProjection),
}

impl TxnOutcome {
    /// The transaction the result is about.
    pub fn transaction_id(&self) -> TxnId {
        match self {
            Self::Committed { transaction_id, .. } => *transaction_id,
            Self::Replayed(p) => p.transaction_id,
        }
    }
}

/// A journal error enum: the refusals and failures every journaled change shares (a
/// bad path, not reconciled, an idempotency conflict, I/O before the intent, the
/// database), written here once, then the enum's own variants.
macro_rules! journal_error {
    ($(#[$m:meta])* $name:ident { $($extra:tt)* }) => {
        $(#[$m])*
        #[derive(Debug, thiserror::Error)]
        #[non_exhaustive]
        pub enum $name {
            /// A path is not a plain project-relative path.
            #[error(transparent)]
            Path(#[from] PathError),
            /// Startup reconciliation has not run (or must run again).
            #[error("write refused: the journal is not reconciled; restart the server")]
            NotReconciled,
            /// The idempotency id was used in a different context (or for a
            /// different request); nothing was executed and nothing is revealed.
            #[error("conflict: idempotency id {id:?} was already used in a different context; nothing was written")]
            Conflict {
                /// The identifier.
                id: String,
            },
            /// Reading a target or creating its parent failed before the intent; no
            /// transaction, nothing was written.
            #[error("{path}: {source}")]
            Io {
                /// The path involved.
                path: PathBuf,
                /// The cause.
                source: io::Error,
            },
            /// The journal database failed; writes stay refused until reconciled.
            #[error("journal: {0}")]
            Journal(#[from] rusqlite::Error),
            $($extra)*
        }
    };
}
pub(crate) use journal_error;

/// Failures shared by writes and deletes.
macro_rules! mutation_error {
    ($(#[$m:meta])* $name:ident { $($extra:tt)* }) => {
        journal_error!(
            $(#[$m])*
            $name {
                /// Quarantined transactions close the write gate.
                #[error("write gate closed: quarantined transaction(s) {}; resolve with `godot-mcp transaction repair`", ids_list(quarantined))]
                GateClosed {
                    /// The quarantined transactions.
                    quarantined: Vec<TxnId>,
                },
                /// Compare-and-swap: the target changed; nothing was written.
                #[error("stale: {path} is {current}, not the expected {expected}; re-read and decide, nothing was written")]
                Stale {
                    /// The target.
                    path: PathBuf,
                    /// What the caller expected.
                    expected: FileState,
                    /// What is on disk.
                    current: FileState,
                    /// Set when the change was caught after the intent was recorded
                    /// (that transaction is `compensated`, proof `not_applied`).
                    transaction_id: Option<TxnId>,
                },
                /// The effect failed after its intent was recorded; the transaction
                /// was settled from disk (compensated, or quarantined if unprovable).
                #[error("transaction {transaction_id} failed ({source}); settled as {status}")]
                EffectFailed {
                    /// The transaction.
                    transaction_id: TxnId,
                    /// Its recorded terminal state (`Open` if even that failed).
                    status: TxnStatus,
                    /// The cause.
                    source: io::Error,
                },
                $($extra)*
            }
        );
    };
}

mutation_error!(
    /// A [`Journal::write_file`] failed; unless said otherwise, nothing was written.
    WriteError {}
);
mutation_error!(
    /// A [`Journal::delete_file`] failed; unless said otherwise, nothing was deleted.
    DeleteError {
        /// There is no file to delete.
        #[error("{path} does not exist; nothing to delete")]
        Absent {
            /// The target.
            path: PathBuf,
        },
    }
);

fn ids_list(ids: &[TxnId]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// An idempotency lookup failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayLookupError {
    /// The id was used in a different context; nothing is revealed about it.
    #[error("conflict: idempotency id {id:?} was already used in a different context")]
    Conflict {
        /// The identifier.
        id: String,
    },
    /// The journal database failed.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
}

/// The SHA-256 of `request` with object keys sorted recursively and no
/// whitespace, so equal requests hash equally whatever the key order.
pub fn canonical_request_hash(request: &serde_json::Value) -> ContentHash {
    fn write(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k], out);
                }
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(request, &mut out);
    ContentHash::of(out.as_bytes())
}

/// The effect half of a file transaction.
#[derive(Clone, Copy)]
pub(crate) enum FileEffect<'a> {
    Write { bytes: &'a [u8] },
    Delete,
}

/// Internal failure of a file transaction, mapped onto each operation's enum.
pub(crate) enum TxnFailure {
    Path(PathError),
    NotReconciled,
    GateClosed(Vec<TxnId>),
    Stale {
        path: PathBuf,
        expected: FileState,
        current: FileState,
        transaction_id: Option<TxnId>,
    },
    Conflict(String),
    Absent(PathBuf),
    Io(PathBuf, io::Error),
    EffectFailed(TxnId, TxnStatus, io::Error),
    Journal(rusqlite::Error),
}

macro_rules! map_failure {
    ($err:ident, $f:expr, $absent:expr) => {
        match $f {
            TxnFailure::Path(e) => $err::Path(e),
            TxnFailure::NotReconciled => $err::NotReconciled,
            TxnFailure::GateClosed(quarantined) => $err::GateClosed { quarantined },
            TxnFailure::Stale {
                path,
                expected,
                current,
                transaction_id,
            } => $err::Stale {
                path,
                expected,
                current,
                transaction_id,
            },
            TxnFailure::Conflict(id) => $err::Conflict { id },
            TxnFailure::Absent(path) => $absent(path),
            TxnFailure::Io(path, source) => $err::Io { path, source },
            TxnFailure::EffectFailed(transaction_id, status, source) => $err::EffectFailed {
                transaction_id,
                status,
                source,
            },
            TxnFailure::Journal(e) => $err::Journal(e),
        }
    };
}

/// Creates the journal at `path`, whole or not at all: written beside it
/// ([`schema::new_journal`]), made durable and renamed into place (the lease
/// is held: nobody else creates it meanwhile). The caller syncs the folder.
fn create_journal(storage: &dyn Storage, path: &Path) -> Result<(), MigrateError> {
    let temp = path.with_extension("sqlite3.new");
    for leftover in [temp.clone(), path.with_extension("sqlite3.new-journal")] {
        match fs::remove_file(&leftover) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(MigrateError::Io(e)),
            _ => {}
        }
    }
    let bytes = schema::new_journal().map_err(MigrateError::Io)?;
    crate::storage::stage_and_rename(storage, &temp, path, &bytes, 0o644).map_err(MigrateError::Io)
}

/// Clears what a previous journal left beside `db_path` before a new one is made
/// there: its `-wal` and `-shm` (SQLite would replay the old WAL into the new
/// image) are removed, and its intent log, whose records the new journal's salt
/// cannot read (open intents among them), is set aside under a name of its own,
/// not overwritten: returned, and reported by reconciliation. Durable (the folder
/// fsynced) before the new journal is renamed into place.
fn clear_for_new_journal(
    storage: &dyn Storage,
    state_dir: &Path,
    db_path: &Path,
) -> io::Result<Option<PathBuf>> {
    let mut touched = false;
    for suffix in ["-wal", "-shm"] {
        let mut stale = db_path.as_os_str().to_owned();
        stale.push(suffix);
        match fs::remove_file(PathBuf::from(stale)) {
            Ok(()) => touched = true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let log = state_dir.join(crate::intent_log::LOG_FILE);
    let aside = state_dir.join(format!(
        "{}.set-aside-{}",
        crate::intent_log::LOG_FILE,
        now_ms()
    ));
    // Directly, as SQLite and the log itself write the state dir; the folder is
    // fsynced through the seam below.
    let set_aside = match godot_mcp_os::fs::rename_noreplace(&log, &aside) {
        Ok(()) => Some(aside),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if touched || set_aside.is_some() {
        storage.sync_dir(state_dir)?;
    }
    Ok(set_aside)
}

impl Journal {
    /// An intent log a previous journal left, set aside when this journal was
    /// made anew (its records are not reconciled: the journal that could read
    /// them is gone). `None` on every other open.
    pub fn set_aside_intent_log(&self) -> Option<&Path> {
        self.set_aside_log.as_deref()
    }

    /// Opens the journal of `project_root` under the state root `state_root`
    /// (see [`state_dir::state_root`]): takes the project lease (in the state
    /// dir, and inside the project folder, see [`Lease::acquire_in_project`]), loads or
    /// establishes the project identity, opens and migrates the SQLite journal.
    ///
    /// Writes are refused until [`Journal::reconcile`] has run.
    pub fn open(state_root: &Path, project_root: &Path) -> Result<Self, OpenError> {
        Self::open_with_storage(state_root, project_root, Arc::new(RealStorage))
    }

    /// [`Journal::open`] with the file effects of writes going through
    /// `storage` (the crash tests pass a power-loss simulation).
    pub fn open_with_storage(
        state_root: &Path,
        project_root: &Path,
        storage: Arc<dyn Storage>,
    ) -> Result<Self, OpenError> {
        let root = fs::canonicalize(project_root).map_err(|source| OpenError::Project {
            path: project_root.to_path_buf(),
            source,
        })?;
        let state_dir = state_dir::project_state_dir(state_root, &root);
        fs::create_dir_all(&state_dir)
            .and_then(|()| godot_mcp_os::fs::ensure_mode(&state_dir, 0o700))
            .map_err(|source| OpenError::StateDir {
                path: state_dir.clone(),
                source,
            })?;
        let lease = Lease::acquire(&state_dir)?;
        // And inside the project: a server with another state dir, or reaching
        // the folder by another path, meets this one there (issue 41, item 9).
        let project_lease = Lease::acquire_in_project(&root)?;
        let (identity, identity_renamed) =
            ProjectIdentity::load_or_establish(&*storage, &state_dir, &root)?;
        let db_path = state_dir.join(JOURNAL_FILE);
        let created = !db_path.try_exists().map_err(MigrateError::Io)?;
        let mut set_aside_log = None;
        if created {
            set_aside_log =
                clear_for_new_journal(&*storage, &state_dir, &db_path).map_err(|source| {
                    OpenError::StateDir {
                        path: state_dir.clone(),
                        source,
                    }
                })?;
            create_journal(&*storage, &db_path)?;
        }
        // One folder fsync makes both renames durable (a fresh start's two
        // files). Until it returns a power loss may keep either rename without
        // the other, and each is safe: an identity without a journal gets a
        // new journal; a journal without an identity is the empty one just
        // created (nothing is written before this), and gets a new identity.
        // Each file's bytes were fsynced before its rename.
        if identity_renamed || created {
            storage
                .sync_dir(&state_dir)
                .map_err(|source| OpenError::StateDir {
                    path: state_dir.clone(),
                    source,
                })?;
        }
        let mut conn = Connection::open(&db_path).map_err(MigrateError::from)?;
        schema::prepare(&mut conn)?;
        // The records a process left in the intent log: folded now, durably
        // (the connection is at synchronous=FULL), before anything —
        // reconciliation included — reads `transactions`. Durably even when
        // there are none: the log restarts at its start next, and what it
        // held must be in the database for good before it is overwritten.
        // A missing log (no write ever made one) holds nothing, and its
        // numbering starts right above `folded_seq` (`last_seq()` is
        // `folded_seq`): the fold changes no row, and SQLite writes no page
        // for an unchanged row, so the open writes nothing (no WAL, no fsync).
        let state = crate::intent_log::log_state(&conn).map_err(MigrateError::from)?;
        let (mut log, records) =
            IntentLog::open(&state_dir, state).map_err(|source| OpenError::StateDir {
                path: state_dir.join(crate::intent_log::LOG_FILE),
                source,
            })?;
        let tx = conn.transaction().map_err(MigrateError::from)?;
        crate::intent_log::fold(&tx, &records, log.last_seq()).map_err(MigrateError::from)?;
        tx.commit().map_err(MigrateError::from)?;
        log.restart();
        crate::preimage::sweep_released(&conn).map_err(MigrateError::from)?;
        Ok(Self {
            db: conn,
            pending: std::sync::Mutex::new(None),
            pending_failed: std::sync::atomic::AtomicBool::new(false),
            sync_failed: std::sync::atomic::AtomicBool::new(false),
            editor_ids: None,
            log: std::sync::Mutex::new(log),
            wal: std::sync::OnceLock::new(),
            sync_normal: std::sync::atomic::AtomicBool::new(false),
            identity,
            root,
            state_dir,
            gate: WriteGate::Unreconciled,
            storage,
            log_sync: None,
            change_preimage_limit: crate::preimage::MAX_CHANGE_PREIMAGE_BYTES,
            set_aside_log,
            _lease: lease,
            _project_lease: project_lease,
        })
    }

    /// Like [`Journal::open`] with the state root from the environment.
    pub fn open_default(project_root: &Path) -> Result<Self, OpenError> {
        let root = state_dir::state_root().ok_or(OpenError::NoStateRoot)?;
        Self::open(&root, project_root)
    }

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
    fn append_to_log(
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
    fn fold_log(&self, log: &mut IntentLog, restart: bool) -> rusqlite::Result<()> {
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

    /// Writes `req.bytes` to `req.rel_path` as one journaled transaction.
    pub fn write_file(&mut self, req: FileWrite) -> Result<TxnOutcome, WriteError> {
        self.write_file_with_link(req, None)
    }

    /// [`Journal::write_file`] for a composite: `link` is the linked `process_launch`
    /// and the verdict on its proof, which a failed effect's settling re-reads (the
    /// launch kind owns it, so this module does not know launches).
    pub(crate) fn write_file_with_link(
        &mut self,
        req: FileWrite,
        link: Option<(TxnId, LinkVerdict)>,
    ) -> Result<TxnOutcome, WriteError> {
        let ctx = Ctx {
            linked_launch: link.map(|(txn, _)| txn),
            link_verdict: link.map(|(_, verdict)| verdict),
            rel: &req.rel_path,
            expected: req.expected,
            idem: req.idempotency.as_ref(),
            tool_family: &req.tool_family,
            operation: &req.operation,
        };
        self.run_file_txn(ctx, FileEffect::Write { bytes: &req.bytes })
            .map_err(|f| {
                map_failure!(WriteError, f, |path: PathBuf| WriteError::Io {
                    source: io::Error::from(io::ErrorKind::NotFound),
                    path,
                })
            })
    }

    /// Deletes `req.rel_path` as one journaled transaction; the post-state
    /// `absent` is the tombstone.
    pub fn delete_file(&mut self, req: FileDelete) -> Result<TxnOutcome, DeleteError> {
        let ctx = Ctx {
            linked_launch: None,
            link_verdict: None,
            rel: &req.rel_path,
            expected: req.expected,
            idem: req.idempotency.as_ref(),
            tool_family: &req.tool_family,
            operation: &req.operation,
        };
        self.run_file_txn(ctx, FileEffect::Delete)
            .map_err(|f| map_failure!(DeleteError, f, |path| DeleteError::Absent { path }))
    }

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

    fn run_file_txn(
        &mut self,
        ctx: Ctx<'_>,
        effect: FileEffect<'_>,
    ) -> Result<TxnOutcome, TxnFailure> {
        state_dir::validate_relative(ctx.rel).map_err(TxnFailure::Path)?;
        let rel_str = ctx
            .rel
            .to_str()
            .ok_or_else(|| {
                TxnFailure::Path(PathError::NotRelative {
                    path: ctx.rel.to_path_buf(),
                })
            })?
            .to_owned();
        self.check_gate()?;
        if let Some(key) = ctx.idem
            && let Some(replay) = self.replay_lookup(key, ctx.tool_family, ctx.operation)?
        {
            return Ok(TxnOutcome::Replayed(replay));
        }
        let target = self.root.join(ctx.rel);
        let io = |e| TxnFailure::Io(target.clone(), e);

        // Pre-state and compare-and-swap, before anything is recorded. The
        // identity (device, inode) read here is compared again right before
        // the effect, with the bytes.
        let (seen, pre_bytes) = durable::observe_bytes(&target).map_err(io)?;
        let pre = seen.state;
        let mode = seen.mode.unwrap_or(0o644);
        if let Some(expected) = ctx.expected
            && expected != pre
        {
            return Err(TxnFailure::Stale {
                path: ctx.rel.to_path_buf(),
                expected,
                current: pre,
                transaction_id: None,
            });
        }
        let post = match effect {
            FileEffect::Write { bytes } => FileState::of(bytes),
            FileEffect::Delete if pre == FileState::Absent => {
                return Err(TxnFailure::Absent(ctx.rel.to_path_buf()));
            }
            FileEffect::Delete => FileState::Absent,
        };
        if let FileEffect::Write { .. } = effect {
            ensure_parent(&*self.storage, &self.root, ctx.rel).map_err(io)?;
        }

        // Intent, durable before the effect.
        let txn = TxnId::random().map_err(io)?;
        let temp = match effect {
            FileEffect::Write { .. } => Some(durable::temp_path_for(&target, txn)),
            FileEffect::Delete => None,
        };
        let intent = FileIntent {
            path: rel_str.clone(),
            pre,
            post,
            temp: temp
                .as_ref()
                .and_then(|t| t.strip_prefix(&self.root).ok())
                .and_then(Path::to_str)
                .map(str::to_owned),
            linked_launch: ctx.linked_launch,
        };
        let pre_image = pre_bytes.as_deref().map(|b| (b, mode));
        self.insert_intent(txn, &intent, pre_image, &ctx)
            .map_err(TxnFailure::Journal)?;
        cross(fp::AFTER_INTENT);

        // From here on every exit records a terminal state.
        //
        // The intent was appended without its fsync (`insert_intent`): its
        // record is written, so it survives the death of this process, and the
        // fsync that makes it survive the machine runs on a second thread while
        // this one writes and fsyncs the temp file. Both are joined before the
        // effect: the intent is durable before it, and the journal costs one
        // fsync less on the critical path.
        if self.log_sync.is_none() {
            let log = self
                .log
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .path()
                .to_path_buf();
            match BackgroundSync::start(self.storage.clone(), log) {
                Ok(sync) => self.log_sync = Some(sync),
                Err(e) => return Err(self.settle(txn, &intent, ctx.link_verdict, e)),
            }
        }
        let storage = &*self.storage;
        let effect_result = (|| -> io::Result<Option<FileState>> {
            let log_sync = self.log_sync.as_ref().expect("started above");
            log_sync.begin()?;
            let prepared = (|| -> io::Result<()> {
                if let (FileEffect::Write { bytes }, Some(temp)) = (effect, temp.as_deref()) {
                    let file = storage.create_temp(temp, bytes, mode)?;
                    cross(fp::AFTER_TEMP_WRITE);
                    storage.sync_file(temp, &file)?;
                    cross(fp::AFTER_TEMP_FSYNC);
                }
                Ok(())
            })();
            let synced = log_sync.wait();
            if synced.is_err() {
                self.sync_failed
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            prepared?;
            synced?;
            apply_effect(storage, &target, temp.as_deref(), effect, &seen)
        })();
        let effect_result = match effect_result {
            Ok(Some(changed)) => {
                // Not applied: drop our temp (if any) and make that durable.
                let temp_removed = match temp.as_deref() {
                    Some(t) => storage.remove_file(t).is_ok(),
                    None => false,
                };
                if temp_removed {
                    let _ = storage.sync_dir(durable::parent_dir(&target));
                }
                Ok(Some((changed, temp_removed)))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };

        match effect_result {
            Ok(Some((changed, temp_removed))) => {
                // Someone changed the target between our read and our effect:
                // nothing was written, say so with a proof, answer stale.
                let proof = FileProof {
                    path: rel_str,
                    observed: changed,
                    basis: ProofBasis::NotApplied,
                    temp_removed,
                    derived_by: Deriver::Live,
                };
                self.record_live(txn, TxnStatus::Compensated, Some(&proof), None)?;
                Err(TxnFailure::Stale {
                    path: ctx.rel.to_path_buf(),
                    expected: pre,
                    current: changed,
                    transaction_id: Some(txn),
                })
            }
            Ok(None) => {
                let observed = durable::read_state(&target);
                cross(fp::AFTER_POST_HASH);
                match observed {
                    Ok(observed) if observed == post => {
                        let proof = FileProof {
                            path: rel_str,
                            observed,
                            basis: ProofBasis::PostState,
                            temp_removed: false,
                            derived_by: Deriver::Live,
                        };
                        self.defer_terminal(txn, proof.clone());
                        Ok(TxnOutcome::Committed {
                            transaction_id: txn,
                            proof,
                        })
                    }
                    Ok(other) => Err(self.settle(
                        txn,
                        &intent,
                        ctx.link_verdict,
                        io::Error::other(format!(
                            "post-state re-derived as {other}, expected {post}"
                        )),
                    )),
                    Err(e) => Err(self.settle(txn, &intent, ctx.link_verdict, e)),
                }
            }
            Err(e) => Err(self.settle(txn, &intent, ctx.link_verdict, e)),
        }
    }

    /// Settles a transaction whose effect failed: re-derive from disk exactly
    /// as reconciliation would, record that, and report it.
    fn settle(
        &mut self,
        txn: TxnId,
        intent: &FileIntent,
        verdict: Option<LinkVerdict>,
        cause: io::Error,
    ) -> TxnFailure {
        let link = intent
            .linked_launch
            .zip(verdict)
            .map(|(l, verdict)| verdict(self, l));
        let derived = derive_file_linked(&self.root, intent, Deriver::Live, link);
        if let Some(temp) = &derived.remove_temp {
            let _ = fs::remove_file(temp);
        }
        let result = self.record_live(
            txn,
            derived.status,
            derived.proof.as_ref(),
            derived.reason.as_deref(),
        );
        if derived.status == TxnStatus::Quarantined {
            let reason = derived.reason.clone().unwrap_or_default();
            match &mut self.gate {
                WriteGate::Closed { quarantined } => quarantined.push(QuarantinedTxn {
                    transaction_id: txn,
                    reason,
                }),
                gate => {
                    *gate = WriteGate::Closed {
                        quarantined: vec![QuarantinedTxn {
                            transaction_id: txn,
                            reason,
                        }],
                    }
                }
            }
        }
        match result {
            Ok(()) => TxnFailure::EffectFailed(txn, derived.status, cause),
            Err(_) => TxnFailure::EffectFailed(txn, TxnStatus::Open, cause),
        }
    }

    /// Appends the intent, with `pre_image` (the bytes and mode of the read
    /// its pre-state was hashed from, when the target exists), and the previous
    /// write's terminal row to the intent log in one write, not synced (see
    /// [`crate::intent_log`]); the caller fsyncs the log before the effect. A
    /// full log is folded first.
    fn insert_intent(
        &mut self,
        txn: TxnId,
        intent: &FileIntent,
        pre_image: Option<(&[u8], u32)>,
        ctx: &Ctx<'_>,
    ) -> rusqlite::Result<()> {
        let intent_json = intent_json(intent)?;
        let previous = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let result = (|| {
            let mut heads = Vec::with_capacity(2);
            if let Some(p) = &previous {
                let proof = proof_json::<FileIntent>(&p.proof)?;
                heads.push((
                    crate::intent_log::terminal(p.txn, TxnStatus::Committed, Some(proof)),
                    None,
                ));
            }
            heads.push(
                crate::intent_log::LoggedIntent {
                    txn,
                    operation: ctx.operation,
                    tool_family: ctx.tool_family,
                    intent_json: &intent_json,
                    idem: ctx.idem,
                    pre_image,
                    pre: intent.pre,
                }
                .head(&self.identity),
            );
            let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
            let full = log.unfolded() + heads.len() > crate::intent_log::FOLD_AT;
            let batch = log.batch(&heads).map_err(|e| log_error(&log, e))?;
            if !full && log.fits(&batch) {
                return log.append(batch).map_err(|e| log_error(&log, e));
            }
            // The previous terminal row goes into the fold, so that write is
            // folded proven (its pre-image never copied to `preimages`).
            if heads.len() == 2 {
                let terminal = heads.remove(0);
                self.append_to_log(&mut log, std::slice::from_ref(&terminal))?;
            }
            self.fold_log(&mut log, true)?;
            log.append_heads(&heads).map_err(|e| log_error(&log, e))
        })();
        if previous.is_some() {
            match &result {
                // The previous row is written; its boundary is crossed now.
                Ok(()) => cross(fp::AFTER_TERMINAL),
                // The previous row stays open; it is re-derived from disk when
                // reconciliation runs again, which the closed gate demands.
                Err(_) => self.gate = WriteGate::Unreconciled,
            }
        }
        result
    }

    /// Leaves the terminal row of a committed write pending: written with the
    /// next intent, before any other use of the database, or on drop. The
    /// effect is durable and the proof derived from disk already; the row was
    /// never fsynced on its own (see [`Journal::record_live`]), and a row not
    /// written when the process dies is `open` at the next start and re-derived
    /// from disk, exactly like a crash after the post-hash.
    fn defer_terminal(&mut self, txn: TxnId, proof: FileProof) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        debug_assert!(pending.is_none(), "flushed by this write's intent");
        *pending = Some(PendingTerminal { txn, proof });
    }

    /// Records the live terminal state; on failure the gate falls back to
    /// `Unreconciled` so nothing more is written until reconciliation runs.
    fn record_live(
        &mut self,
        txn: TxnId,
        status: TxnStatus,
        proof: Option<&FileProof>,
        reason: Option<&str>,
    ) -> Result<(), TxnFailure> {
        // Committed without its own fsync: the effect is already durable and
        // the proof derived from disk, and a row lost with the power is open
        // again and re-derived from disk at the next start, exactly like a
        // crash after the post-hash (the power-loss sweep pins that). A later
        // restart fold's WAL fsync, a checkpoint or the close makes it durable.
        // This keeps a third fsync off the critical path of every write.
        // One statement: in autocommit it is its own transaction.
        let result = self.flush_pending().and_then(|()| {
            self.set_unsynced(true)?;
            let proof = proof.map(proof_json::<FileIntent>).transpose()?;
            record_terminal(&self.db, txn, TxnStatus::Open, status, proof, reason)
        });
        result.map_err(|e| {
            self.gate = WriteGate::Unreconciled;
            TxnFailure::Journal(e)
        })
    }
}

/// The effect itself, after the intent and the temp file are durable: the
/// compare-and-swap re-checked against the identity and bytes read at step 1,
/// then the conditional rename (or the unlink) and the directory fsync.
/// `Ok(Some(state))`: the target was changed by someone else and nothing of
/// theirs was overwritten; `state` is what it holds.
///
/// A create renames with `RENAME_NOREPLACE`, so a file created meanwhile is
/// never replaced. An overwrite exchanges the temp and the target atomically
/// (`RENAME_EXCHANGE`) and then verifies that the file it displaced is the very
/// file (device, inode, bytes) it checked; if not, it exchanges them back. So a
/// write that lands between the re-check and the rename is detected and kept,
/// not overwritten and committed. (Windows has no atomic exchange: there it
/// is two steps, `godot_mcp_os::fs::exchange`; the checks are the same.) A
/// delete has no conditional form: the re-check runs immediately before the
/// unlink (see docs/recovery.md).
pub(crate) fn apply_effect(
    storage: &dyn Storage,
    target: &Path,
    temp: Option<&Path>,
    effect: FileEffect<'_>,
    seen: &durable::Observed,
) -> io::Result<Option<FileState>> {
    let now = durable::observe(target)?;
    if now.state != seen.state || now.id != seen.id {
        return Ok(Some(now.state));
    }
    cross(fp::AFTER_PRE_HASH);
    match (effect, temp) {
        (FileEffect::Write { .. }, Some(temp)) if seen.id.is_none() => {
            match storage.rename_noreplace(temp, target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return durable::read_state(target).map(Some);
                }
                Err(e) => return Err(e),
            }
            cross(fp::AFTER_RENAME);
        }
        (FileEffect::Write { .. }, Some(temp)) => {
            storage.exchange(temp, target)?;
            cross(fp::AFTER_RENAME);
            let displaced = durable::observe(temp)?;
            if displaced.state != seen.state || displaced.id != seen.id {
                // Someone wrote between the re-check and the exchange: put
                // their file back; ours is left at the temp path.
                storage.exchange(temp, target)?;
                return Ok(Some(displaced.state));
            }
            storage.remove_file(temp)?;
        }
        (FileEffect::Write { .. }, None) => {
            return Err(io::Error::other("a write without its temp"));
        }
        (FileEffect::Delete, _) => {
            storage.remove_file(target)?;
            cross(fp::AFTER_UNLINK);
        }
    }
    storage.sync_dir(durable::parent_dir(target))?;
    cross(fp::AFTER_DIR_FSYNC);
    Ok(None)
}

/// An I/O failure of the intent log, as the SQLite I/O error the journal's
/// callers already handle (the gate falls back to `Unreconciled`).
fn log_error(log: &IntentLog, e: io::Error) -> rusqlite::Error {
    io_error(log.path(), e)
}

fn io_error(path: &Path, e: io::Error) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
        Some(format!("{}: {e}", path.display())),
    )
}

/// Runs `f` in one SQLite transaction (cached `BEGIN`/`COMMIT` statements: this
/// runs on every write), rolled back if `f` fails.
pub(crate) fn in_txn<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached("BEGIN")?.execute([])?;
    let result = f(conn).and_then(|v| {
        conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(v)
    });
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// The verdict on a composite's linked `process_launch` proof: `Ok` when it shows a
/// clean terminal state (`Journal::linked_launch_verdict`, in `launch`).
pub(crate) type LinkVerdict = fn(&Journal, TxnId) -> Result<(), String>;

struct Ctx<'a> {
    /// A composite's linked `process_launch` (the canonical-write helper).
    linked_launch: Option<TxnId>,
    /// The verdict on its proof, re-read when a failed effect is settled.
    link_verdict: Option<LinkVerdict>,
    rel: &'a Path,
    expected: Option<FileState>,
    idem: Option<&'a IdempotencyKey>,
    tool_family: &'a str,
    operation: &'a str,
}

/// Creates missing parent directories of `rel` under `root`, each made durable
/// in its own parent. Created directories are not journaled: an empty directory
/// left behind by a compensated create is not project content.
pub(crate) fn ensure_parent(storage: &dyn Storage, root: &Path, rel: &Path) -> io::Result<()> {
    let Some(parent) = rel.parent() else {
        return Ok(());
    };
    let mut dir = root.to_path_buf();
    for component in parent.components() {
        let next = dir.join(component);
        match storage.create_dir(&next) {
            Ok(()) => storage.sync_dir(&dir)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        dir = next;
    }
    Ok(())
}

/// A new `transactions` row. A row born terminal (an artifact recorded after
/// the fact) gets its terminal time at creation.
pub(crate) struct NewTxn<'a> {
    pub txn: TxnId,
    pub kind: EffectKind,
    pub operation: &'a str,
    pub tool_family: &'a str,
    pub state: TxnStatus,
    pub intent_json: &'a str,
    pub proof_json: Option<&'a str>,
    pub parent: Option<TxnId>,
    pub idem: Option<&'a IdempotencyKey>,
}

/// Inserts `row` for the project `identity`: the one statement every effect
/// kind records its intent with.
pub(crate) fn insert_txn(
    conn: &Connection,
    identity: &ProjectIdentity,
    row: &NewTxn<'_>,
) -> rusqlite::Result<()> {
    let now = now_ms();
    let terminal_at = (row.state != TxnStatus::Open).then_some(now);
    conn.prepare_cached(
        "INSERT INTO transactions (id, project_object_id, generation, effect_kind, operation,
             tool_family, state, intent_json, proof_json, parent_txn, idem_id, idem_principal,
             idem_session, idem_request_hash, created_at_ms, terminal_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        row.txn.to_string(),
        identity.object_id,
        identity.generation as i64,
        row.kind.as_str(),
        row.operation,
        row.tool_family,
        row.state.as_str(),
        row.intent_json,
        row.proof_json,
        row.parent.map(|p| p.to_string()),
        row.idem.map(|k| &k.id),
        row.idem.map(|k| &k.principal),
        row.idem.map(|k| &k.session),
        row.idem.map(|k| k.request_hash.to_string()),
        now,
        terminal_at,
    ])
    .map(|_| ())
}

/// Moves `txn` from `from` to `to` with its proof and reason; exactly one row
/// must change, so a transition never applies to a row in another state.
pub(crate) fn record_terminal(
    conn: &Connection,
    txn: TxnId,
    from: TxnStatus,
    to: TxnStatus,
    proof_json: Option<String>,
    reason: Option<&str>,
) -> rusqlite::Result<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE transactions SET state = ?2, proof_json = ?3, reason = ?4, terminal_at_ms = ?5
             WHERE id = ?1 AND state = ?6",
        )?
        .execute(params![
            txn.to_string(),
            to.as_str(),
            proof_json,
            reason,
            now_ms(),
            from.as_str()
        ])?;
    if changed == 1 {
        crate::preimage::release_if_proven(conn, txn, to)
    } else {
        Err(rusqlite::Error::QueryReturnedNoRows)
    }
}

#[cfg(test)]
mod tests;
