//! The shared words of every effect kind, below all of them: the [`Effect`] trait each
//! kind's intent implements (its tag and its proof), how an intent and a proof are stored
//! (JSON tagged by kind), and the `file` kind's own intent and proof. Imports nothing of
//! the crate but [`crate::ids`].
//!
//! An effect kind is a type, not an entry in a list: [`FileIntent`] here,
//! [`crate::launch::LaunchIntent`], [`crate::editor::EditorIntent`] and
//! [`crate::change::ChangeIntent`] each implement [`Effect`], and each kind's module
//! writes and reads its own rows through `intent_json`, `proof_json`,
//! `parse_intent` and `parse_proof`. Only the read side above every kind
//! ([`crate::proof::Intent`], [`crate::proof::Proof`]: listing, reconciliation, repair)
//! names them all.

use serde::de::DeserializeOwned;
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

/// An effect kind: implemented by the kind's intent type. Its rows store the intent
/// and the proof as JSON objects tagged `"kind": TAG`, the same bytes as the
/// internally tagged [`crate::proof::Intent`] and [`crate::proof::Proof`].
pub trait Effect: Serialize + DeserializeOwned {
    /// The `kind` tag of its stored intent and proof.
    const TAG: &'static str;
    /// The proof of its terminal state.
    type Proof: Serialize + DeserializeOwned;
    /// One human line describing `proof`, for listings.
    fn summary(proof: &Self::Proof) -> String;
}

impl Effect for FileIntent {
    const TAG: &'static str = "file";
    type Proof = FileProof;
    fn summary(p: &FileProof) -> String {
        let basis = match p.basis {
            ProofBasis::PostState => "post-state",
            ProofBasis::PreState => "pre-state",
            ProofBasis::NotApplied => "not applied, target changed before effect",
        };
        let derived = match p.derived_by {
            Deriver::Live => "live",
            Deriver::Reconcile => "reconcile",
            Deriver::Repair => "repair",
        };
        format!("{basis} {} on disk ({derived})", p.observed)
    }
}

/// A value with its kind's tag first, as an internally tagged enum writes it.
#[derive(Serialize)]
struct Tagged<'a, T> {
    kind: &'static str,
    #[serde(flatten)]
    value: &'a T,
}

/// A journal column's JSON text; a value that cannot be serialized is a SQL error.
pub(crate) fn to_json<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// The stored JSON of an intent of kind `E`.
pub(crate) fn intent_json<E: Effect>(intent: &E) -> rusqlite::Result<String> {
    to_json(&Tagged {
        kind: E::TAG,
        value: intent,
    })
}

/// The stored JSON of a proof of kind `E`.
pub(crate) fn proof_json<E: Effect>(proof: &E::Proof) -> rusqlite::Result<String> {
    to_json(&Tagged {
        kind: E::TAG,
        value: proof,
    })
}

/// The intent of kind `E` stored as `json`; `None` when it is another kind's or unreadable.
pub(crate) fn parse_intent<E: Effect>(json: &str) -> Option<E> {
    untag(json, E::TAG).ok().flatten()
}

/// The proof of kind `E` stored as `json`; `None` when it is another kind's or unreadable.
pub(crate) fn parse_proof<E: Effect>(json: &str) -> Option<E::Proof> {
    read_proof::<E>(json).ok().flatten()
}

/// The proof of kind `E` stored as `json`: `Ok(None)` when it is another kind's, an error
/// when it is no tagged JSON object or a proof of kind `E` that does not read.
pub(crate) fn read_proof<E: Effect>(json: &str) -> serde_json::Result<Option<E::Proof>> {
    untag(json, E::TAG)
}

fn untag<T: DeserializeOwned>(json: &str, tag: &str) -> serde_json::Result<Option<T>> {
    let mut map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json)?;
    match map.remove("kind") {
        Some(kind) if kind == tag => {
            serde_json::from_value(serde_json::Value::Object(map)).map(Some)
        }
        Some(serde_json::Value::String(_)) => Ok(None),
        _ => Err(serde::de::Error::missing_field("kind")),
    }
}
