//! A repair's words: the operations, the request, the operator's proof file, the
//! report and the refusals (each with its exit code).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::OpenError;
use crate::proof::Proof;

/// The `schema` value of a repair-proof file this build accepts.
pub const PROOF_SCHEMA: &str = "godot-mcp.repair-proof/1";

/// The four repair operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepairOperation {
    /// Re-derive and report the would-be transition; records nothing.
    Reconcile,
    /// Undo the effect from a proven pre-state; records `compensated`.
    Compensate,
    /// Terminate a proven, still-contained survivor (`process_launch` only).
    Terminate,
    /// Record a proven post-state as `committed`.
    AcknowledgeSafeState,
}

impl RepairOperation {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reconcile => "reconcile",
            Self::Compensate => "compensate",
            Self::Terminate => "terminate",
            Self::AcknowledgeSafeState => "acknowledge-safe-state",
        }
    }
}

impl fmt::Display for RepairOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Not one of the four operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown repair operation {0:?} (expected reconcile, compensate, terminate or acknowledge-safe-state)"
)]
pub struct ParseOperationError(pub String);

impl FromStr for RepairOperation {
    type Err = ParseOperationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "reconcile" => Self::Reconcile,
            "compensate" => Self::Compensate,
            "terminate" => Self::Terminate,
            "acknowledge-safe-state" => Self::AcknowledgeSafeState,
            other => return Err(ParseOperationError(other.to_owned())),
        })
    }
}

/// The canonical repair-proof file (`--proof-file`). Every field is checked
/// against what the command re-derives; unknown fields are refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairProof {
    /// Always [`PROOF_SCHEMA`].
    pub schema: String,
    /// The transaction being repaired.
    pub transaction_id: TxnId,
    /// The project's object id, from `project.json` (32 hex digits).
    pub project_object_id: String,
    /// The project's generation, from `project.json`.
    pub generation: u64,
    /// The operation this proof is for.
    pub operation: RepairOperation,
    /// The transaction's recorded effect kind.
    pub effect_kind: EffectKind,
    /// For `file`: what the operator observed on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileClaim>,
}

/// The operator's claim about a `file` target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileClaim {
    /// The project-relative target path, as the journal recorded it.
    pub path: String,
    /// Its state now: `{"state":"absent"}` or `{"state":"present","sha256":"…"}`.
    pub observed: FileState,
}

/// One repair invocation.
#[derive(Clone, Debug)]
pub struct RepairRequest {
    /// The project directory.
    pub project: PathBuf,
    /// The transaction to repair.
    pub transaction_id: TxnId,
    /// What to do.
    pub operation: RepairOperation,
    /// The proof file.
    pub proof_file: PathBuf,
    /// Re-derive and report, record and change nothing.
    pub dry_run: bool,
}

/// What a successful repair did (or, for `reconcile` and `--dry-run`, would do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// The transaction.
    pub transaction_id: TxnId,
    /// The operation.
    pub operation: RepairOperation,
    /// Its state before.
    pub from: TxnStatus,
    /// The proven state it moves (or would move) to.
    pub to: TxnStatus,
    /// Whether the transition was journaled.
    pub recorded: bool,
    /// The re-derived proof.
    pub proof: Proof,
    /// Filesystem actions taken (or, when not recorded, that would be taken).
    pub actions: Vec<String>,
}

impl RepairReport {
    /// One line for the terminal.
    pub fn summary(&self) -> String {
        let verb = if self.recorded {
            "recorded"
        } else {
            "would record"
        };
        let mut s = format!(
            "transaction {} {}: {verb} {} -> {} ({})",
            self.transaction_id,
            self.operation,
            self.from,
            self.to,
            self.proof.summary()
        );
        for a in &self.actions {
            s.push_str("; ");
            s.push_str(a);
        }
        s
    }
}

/// Why a repair was refused. Every refusal leaves the transaction exactly as
/// it was and exits non-zero ([`RepairRefusal::exit_code`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RepairRefusal {
    /// The proof file is missing or unreadable.
    #[error("no proof: cannot read proof file {path}: {source}")]
    NoProof {
        /// The proof file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The proof file is not a valid repair proof.
    #[error("proof file {path} is not a valid {PROOF_SCHEMA} document: {reason}")]
    InvalidProof {
        /// The proof file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The journal could not be opened (e.g. a server holds the lease).
    #[error("cannot open the journal: {0}")]
    Open(#[from] OpenError),
    /// No such transaction in this project's journal.
    #[error("no transaction {0} in this project's journal")]
    UnknownTransaction(TxnId),
    /// The transaction or proof belongs to another project object or generation.
    #[error(
        "wrong project: {what} names project object {found} generation {found_generation}, \
         this project is object {current} generation {current_generation}"
    )]
    WrongProject {
        /// `transaction` or `proof`.
        what: &'static str,
        /// The object id found.
        found: String,
        /// The generation found.
        found_generation: u64,
        /// The current object id.
        current: String,
        /// The current generation.
        current_generation: u64,
    },
    /// A proof field disagrees with the request or with what was re-derived.
    #[error("wrong proof: {field} is {claimed} in the proof file, re-derived {derived}")]
    ProofMismatch {
        /// The field.
        field: &'static str,
        /// The proof file's value.
        claimed: String,
        /// The re-derived value.
        derived: String,
    },
    /// Only quarantined transactions are repaired.
    #[error("transaction {transaction_id} is {status}, not quarantined; nothing to repair")]
    NotQuarantined {
        /// The transaction.
        transaction_id: TxnId,
        /// Its state.
        status: TxnStatus,
    },
    /// The operation does not apply to the transaction's effect kind.
    #[error("{operation} does not apply to a {kind} transaction")]
    NotApplicable {
        /// The operation.
        operation: RepairOperation,
        /// The effect kind.
        kind: EffectKind,
    },
    /// The state the operation needs could not be proven.
    #[error("unproven: {0}")]
    Unproven(String),
    /// Re-deriving failed with an I/O error.
    #[error("I/O error while re-deriving {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The journal database failed; nothing was recorded.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
}

impl RepairRefusal {
    /// The process exit status: 3 when the journal is unavailable (a server
    /// holds the lease), 1 for every other refusal. (2 is the CLI's usage error.)
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Open(_) => 3,
            _ => 1,
        }
    }
}
