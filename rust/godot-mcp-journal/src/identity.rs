//! The project's object identity and generation, kept in `project.json` in the
//! state directory.
//!
//! The object id is 128 random bits created once. The generation is bumped (and
//! a fresh object id drawn) whenever the directory at the project path is no
//! longer the same directory — its device or inode changed, e.g. the project
//! was deleted and re-cloned. Journal rows carry both, so rows written for one
//! project are never applied to a different project at the same path.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::durable;
use crate::ids::{TxnId, random_bytes};
use crate::storage::Storage;

/// Which project, and which incarnation of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectIdentity {
    /// 32 hex digits, random, stable for the life of one project directory.
    pub object_id: String,
    /// Starts at 1; bumped every time the identity is re-established.
    pub generation: u64,
    /// The canonical project path this identity was established for.
    pub canonical_path: PathBuf,
    /// Device of the project directory when the identity was established.
    pub dev: u64,
    /// Inode of the project directory when the identity was established.
    pub ino: u64,
}

/// The identity could not be loaded or established.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// Reading, writing or stat-ing failed.
    #[error("project identity I/O on {path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// `project.json` exists but is not a valid identity.
    #[error("project identity {path} is corrupt: {source}")]
    Corrupt {
        /// The file involved.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
}

/// The file name inside the project state dir.
pub const FILE_NAME: &str = "project.json";

impl ProjectIdentity {
    /// Loads the identity for `canonical_project` from `state_dir`, creating it
    /// or re-establishing it (new object id, generation + 1) when the directory
    /// at the path is not the one recorded.
    ///
    /// A new identity is written through `storage` (temp file, fsync, rename)
    /// but its folder is not synced: `.1` is `true` when the caller owes that
    /// `fsync` of `state_dir`, before anything that carries the identity is
    /// written. [`crate::Journal::open`] folds it into the one a new journal
    /// needs (both are renamed into the same folder).
    pub(crate) fn load_or_establish(
        storage: &dyn Storage,
        state_dir: &Path,
        canonical_project: &Path,
    ) -> Result<(Self, bool), IdentityError> {
        let path = state_dir.join(FILE_NAME);
        let io_err = |source| IdentityError::Io {
            path: path.clone(),
            source,
        };
        // The path is canonical: no symlink left to follow.
        let meta =
            godot_mcp_os::fs::path_id(canonical_project).map_err(|source| IdentityError::Io {
                path: canonical_project.to_path_buf(),
                source,
            })?;
        let previous: Option<Self> =
            match fs::read(&path) {
                Ok(bytes) => Some(serde_json::from_slice(&bytes).map_err(|source| {
                    IdentityError::Corrupt {
                        path: path.clone(),
                        source,
                    }
                })?),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(io_err(e)),
            };
        if let Some(prev) = &previous
            && prev.dev == meta.dev
            && prev.ino == meta.ino
            && prev.canonical_path == canonical_project
        {
            return Ok((prev.clone(), false));
        }
        let fresh = Self {
            object_id: hex::encode(random_bytes::<16>().map_err(io_err)?),
            generation: previous.as_ref().map_or(1, |p| p.generation + 1),
            canonical_path: canonical_project.to_path_buf(),
            dev: meta.dev,
            ino: meta.ino,
        };
        let json = serde_json::to_vec_pretty(&fresh).map_err(|e| io_err(io::Error::other(e)))?;
        let temp = durable::temp_path_for(&path, TxnId::random().map_err(io_err)?);
        crate::storage::stage_and_rename(storage, &temp, &path, &json, 0o644).map_err(io_err)?;
        if previous.is_some() {
            tracing::warn!(
                object_id = %fresh.object_id,
                generation = fresh.generation,
                "project directory changed identity; journal rows of the old project will not be applied to it"
            );
        }
        Ok((fresh, true))
    }
}
