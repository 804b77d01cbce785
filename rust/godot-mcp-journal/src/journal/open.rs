//! Opening a journal: creating or migrating the database, folding the intent log an
//! earlier process left, taking the leases.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;

use crate::durable as state_dir;
use crate::identity::ProjectIdentity;
use crate::ids::now_ms;
use crate::intent_log::IntentLog;
use crate::lease::Lease;
use crate::schema::{self, MigrateError};
use crate::storage::{RealStorage, Storage};

use super::handle::{JOURNAL_FILE, Journal};
use super::types::{OpenError, WriteGate};

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
}
