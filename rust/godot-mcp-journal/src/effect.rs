//! The shared words of every effect kind, below all of them: a `file` transaction's
//! intent and proof, who re-derived a proof and what it matched. Imports nothing of
//! the crate but [`crate::ids`].

use serde::{Deserialize, Serialize};

use crate::ids::{FileState, TxnId};

/// What a `file` transaction intends, durable before its effect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIntent {
    /// Project-relative path of the target (UTF-8, validated).
    pub path: String,
    /// The target's state before the effect (`absent` for a create).
    pub pre: FileState,
    /// The target's state after the effect (`absent` is a delete's tombstone).
    pub post: FileState,
    /// Project-relative path of the temp file a write renames over the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp: Option<String>,
    /// For a composite (e.g. a canonical resource write by a Godot helper): the
    /// `process_launch` transaction whose proof must also hold to commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_launch: Option<TxnId>,
}

/// What the re-derived on-disk state proved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProofBasis {
    /// The target is in the recorded post-state.
    PostState,
    /// The target is in the recorded pre-state.
    PreState,
    /// Live only: the target changed under the transaction after its intent
    /// and before its effect; nothing was written (the write answers `stale`).
    NotApplied,
}

/// Who re-derived a proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Deriver {
    /// The live transaction, right after its effect.
    Live,
    /// Startup reconciliation.
    Reconcile,
    /// `godot-mcp transaction repair`.
    Repair,
}

/// The proof of a `file` transaction's terminal state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileProof {
    /// Project-relative path of the target.
    pub path: String,
    /// The target's state as re-derived from disk.
    pub observed: FileState,
    /// Which recorded state `observed` matches.
    pub basis: ProofBasis,
    /// A leftover temp file was removed before recording.
    pub temp_removed: bool,
    /// Who re-derived it.
    pub derived_by: Deriver,
}

impl FileProof {
    /// A proof that repair re-derived: `path` at `observed`, matching `basis`.
    pub fn repaired(path: String, observed: FileState, basis: ProofBasis) -> Self {
        Self {
            path,
            observed,
            basis,
            temp_removed: false,
            derived_by: Deriver::Repair,
        }
    }
}
