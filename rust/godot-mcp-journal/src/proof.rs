//! Intents and proofs as they are stored: JSON tagged by effect kind, so each
//! kind's executor owns its own shape and none needs a second journal.

use serde::{Deserialize, Serialize};

pub use crate::effect::{Deriver, FileIntent, FileProof, ProofBasis};

/// A stored intent, tagged by effect kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Intent {
    /// An on-disk mutation.
    File(FileIntent),
    /// A supervised process launch and its receipt.
    ProcessLaunch(crate::launch::LaunchIntent),
    /// An effect applied through the editor bridge.
    EditorRuntime(crate::editor::EditorIntent),
    /// A change: many file effects, one terminal state (see [`crate::change`]).
    Change(crate::change::ChangeIntent),
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
            Proof::EditorRuntime(p) => format!(
                "editor replied {} to request {}{}{}{}{}",
                p.reply,
                p.request_id,
                match p.undoable {
                    Some(true) => " (on the editor's undo history)",
                    Some(false) => " (not undoable)",
                    None => "",
                },
                match p.editor_left {
                    Some(left) => format!(
                        "; editor {}",
                        serde_json::to_value(left)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default()
                    ),
                    None => String::new(),
                },
                match (&p.pre_state, &p.post_state) {
                    (Some(pre), Some(post)) => format!("; file {pre} before, {post} after"),
                    (Some(pre), None) => format!("; file {pre} before, unreadable after"),
                    (None, Some(post)) => format!("; file {post} after"),
                    (None, None) => String::new(),
                },
                p.files
                    .iter()
                    .map(|f| match &f.post_state {
                        Some(post) => format!(
                            "; {} {} ({} before, {post} after)",
                            f.path,
                            if f.written { "written" } else { "not written" },
                            f.pre_state
                        ),
                        None => format!("; {} unreadable after ({} before)", f.path, f.pre_state),
                    })
                    .collect::<String>()
            ),
            Proof::File(p) => {
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
            Proof::ProcessLaunch(p) => p.summary(),
            Proof::Change(p) => p.summary(),
        }
    }
}
