//! Intents and proofs as they are read back, whatever their kind: JSON tagged by effect
//! kind, so each kind's executor owns its own shape and none needs a second journal.
//!
//! Each kind is a type implementing [`Effect`] (its tag, its proof, its summary) and
//! writes and reads its own rows through it ([`crate::effect`]); these two enums are the
//! read side for the modules above every kind (listing, reconciliation, repair), and
//! sit above the kinds they name. They store the same bytes as [`Effect`]'s tagged JSON.

use serde::{Deserialize, Serialize};

use crate::change::ChangeIntent;
use crate::editor::EditorIntent;
pub use crate::effect::{Deriver, Effect, FileIntent, FileProof, ProofBasis};
use crate::launch::LaunchIntent;

/// A stored intent, tagged by effect kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Intent {
    /// An on-disk mutation.
    File(FileIntent),
    /// A supervised process launch and its receipt.
    ProcessLaunch(LaunchIntent),
    /// An effect applied through the editor bridge.
    EditorRuntime(EditorIntent),
    /// A change: many file effects, one terminal state (see [`crate::change`]).
    Change(ChangeIntent),
}

/// A stored proof, tagged by effect kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Proof {
    /// Proof of an on-disk mutation.
    File(FileProof),
    /// Proof of a supervised launch's terminal result.
    ProcessLaunch(crate::launch::LaunchProof),
    /// The editor's reply to an editor effect.
    EditorRuntime(crate::editor::EditorProof),
    /// Every file of a change, proven at its post-state (committed) or its
    /// pre-state (compensated).
    Change(crate::change::ChangeProof),
}

impl Proof {
    /// One human line, for listings.
    pub fn summary(&self) -> String {
        match self {
            Proof::EditorRuntime(p) => EditorIntent::summary(p),
            Proof::File(p) => FileIntent::summary(p),
            Proof::ProcessLaunch(p) => LaunchIntent::summary(p),
            Proof::Change(p) => ChangeIntent::summary(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::{intent_json, parse_intent, parse_proof, proof_json};
    use crate::ids::{FileState, TxnId};

    /// Each kind's own tagged JSON ([`Effect`]) is byte for byte what the enums write,
    /// and each reads the other's: rows written either way read back either way.
    #[test]
    fn each_kinds_tagged_json_is_the_enums() {
        let state = FileState::of(b"x");
        let file = FileIntent {
            path: "a.gd".into(),
            pre: FileState::Absent,
            post: state,
            temp: Some(".a.gd.tmp".into()),
            linked_launch: Some(TxnId::from_bytes([7; 16])),
        };
        let json = intent_json(&file).unwrap();
        assert_eq!(
            json,
            serde_json::to_string(&Intent::File(file.clone())).unwrap()
        );
        assert!(json.starts_with(r#"{"kind":"file","#), "{json}");
        assert_eq!(parse_intent::<FileIntent>(&json), Some(file.clone()));
        assert_eq!(
            parse_intent::<ChangeIntent>(&json),
            None,
            "another kind's row"
        );
        let proof = FileProof::repaired("a.gd".into(), state, ProofBasis::PostState);
        let json = proof_json::<FileIntent>(&proof).unwrap();
        assert_eq!(
            json,
            serde_json::to_string(&Proof::File(proof.clone())).unwrap()
        );
        assert_eq!(parse_proof::<FileIntent>(&json), Some(proof.clone()));
        assert_eq!(
            Proof::File(proof).summary(),
            format!("post-state {state} on disk (repair)")
        );
    }
}
