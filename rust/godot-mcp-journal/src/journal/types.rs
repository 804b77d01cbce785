//! The journal's words: the write gate, quarantined rows, the errors of opening and of
//! each file operation, the write and delete requests and their outcomes.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::durable::PathError;
use crate::effect::FileProof;
use crate::identity::IdentityError;
use crate::ids::IdempotencyKey;
use crate::ids::{ContentHash, FileState, TxnId, TxnStatus};
use crate::lease::LeaseError;
use crate::schema::MigrateError;

/// Defined beside `durable::apply_effect`, which applies it.
pub(crate) use crate::durable::FileEffect;

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
    ///
    /// [`Journal::write_file`]: crate::Journal::write_file
    WriteError {}
);
mutation_error!(
    /// A [`Journal::delete_file`] failed; unless said otherwise, nothing was deleted.
    ///
    /// [`Journal::delete_file`]: crate::Journal::delete_file
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
