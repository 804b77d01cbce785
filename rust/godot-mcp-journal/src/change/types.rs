//! A change's words: the request ([`FileChange`]), what is stored ([`ChangeIntent`],
//! [`ChangeProof`]), the editor part and its hook, the outcomes and the error.

use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::durable::PathError;
use crate::effect::{Deriver, Effect, FileProof, ProofBasis};
use crate::ids::{FileState, TxnId, TxnStatus};
use crate::journal::{IdempotencyKey, ReplayProjection, TxnFailure};

/// A change to make: its files in the order they are applied.
#[derive(Clone, Debug)]
pub struct FileChange {
    /// Every file effect, in order (each path at most once).
    pub effects: Vec<ChangeEffect>,
    /// Idempotent replay of the whole change.
    pub idempotency: Option<IdempotencyKey>,
    /// The tool family, e.g. `files`.
    pub tool_family: String,
    /// The operation, e.g. `move_file`.
    pub operation: String,
}

/// One file of a change.
#[derive(Clone, Debug)]
pub struct ChangeEffect {
    /// Project-relative path, already validated by the server.
    pub rel_path: PathBuf,
    /// Write these bytes, or delete.
    pub op: ChangeOp,
    /// Compare-and-swap: the state the caller last saw (`Absent` = create only).
    pub expected: Option<FileState>,
}

/// What a change does to one file.
#[derive(Clone, Debug)]
pub enum ChangeOp {
    /// Write these bytes (create or overwrite).
    Write(Vec<u8>),
    /// Delete the file (its post-state `absent` is the tombstone).
    Delete,
}

/// A change's intent, as stored: every file with its pre- and post-state, and
/// the editor part when the change has one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeIntent {
    /// Every file, in the order the change applies them.
    pub files: Vec<ChangeFile>,
    /// Edits of the scene open in the editor, sent as ONE request (one undo action)
    /// after this intent is durable and before any file is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<ChangeEditorPart>,
    /// The check the change waits on before it is settled (`build`: a `dotnet build`
    /// of the files in place; [`Journal::apply_change_held`]). A change with a check
    /// that a previous process left open is put back: its check never passed.
    ///
    /// [`Journal::apply_change_held`]: crate::Journal::apply_change_held
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

/// The editor part of a change: its staged node steps, sent as one `scene.steps`
/// request whose undo action is named `action`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEditorPart {
    /// The undo action's name in the editor, `godot-mcp change <id>`.
    pub action: String,
    /// The scene the edits act on (`res://…`).
    pub scene: String,
    /// The bridge request id it is sent with; never reused, never resent.
    pub request_id: u64,
    /// SHA-256 of the canonical request parameters.
    pub params_sha256: String,
    /// How many steps the request carries.
    pub steps: usize,
    /// The instance id of the scene's root when the edits were staged: the undo
    /// history the action lives in belongs to that root (a scene closed and opened
    /// again has another root and another history). `None` in intents written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<i64>,
}

/// What became of a change's editor part, as its proof records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditorPartOutcome {
    /// The editor applied the edits as one undo action (and it stays).
    Applied,
    /// The editor did not apply them (it said so, or its history never had the action).
    NotApplied,
    /// Applied, then undone by its own action name.
    Undone,
}

/// How the editor answered the editor part's request ([`EditorHook::apply`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorSent {
    /// Applied, one undo action.
    Applied,
    /// Refused, and the editor reports itself unchanged or rolled back.
    NotApplied(String),
    /// Anything else: an error that may have left an edit, or no answer.
    Unknown(String),
}

/// Where the server sends a change's editor part, and takes it back.
pub trait EditorHook {
    /// Send the editor part's request (once).
    fn apply(&mut self) -> EditorSent;
    /// Take the editor part back: undo it when the editor's current action is the
    /// change's own (`Ok(Undone)`), or find it never applied (`Ok(NotApplied)`: the
    /// history does not name it). `Err`: neither is known; nothing was guessed.
    fn undo(&mut self) -> Result<EditorPartOutcome, String>;
}

/// One file of a change's intent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeFile {
    /// Project-relative path of the target.
    pub path: String,
    /// Its state before the change (`absent`: the change creates it).
    pub pre: FileState,
    /// Its state after the change (`absent`: the change deletes it).
    pub post: FileState,
    /// Project-relative path of the temp file beside it: a write's new bytes
    /// go there before the rename; `<temp>.undo` holds restored bytes while a
    /// compensation puts the file back.
    pub temp: String,
}

impl Effect for ChangeIntent {
    const TAG: &'static str = "change";
    type Proof = ChangeProof;
    fn summary(proof: &ChangeProof) -> String {
        proof.summary()
    }
}

/// A change's proof: every file as re-derived from disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeProof {
    /// One proof per file, in the intent's order; every basis is the post-state
    /// (committed) or every one the pre-state (compensated).
    pub files: Vec<FileProof>,
    /// The editor part's outcome, when the change has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<EditorPartOutcome>,
}

impl ChangeProof {
    /// One human line, for listings.
    pub fn summary(&self) -> String {
        let basis = match self.files.first().map(|f| f.basis) {
            Some(ProofBasis::PostState) => "post-state",
            Some(ProofBasis::PreState) => "pre-state",
            _ => "no file",
        };
        let derived = match self.files.first().map(|f| f.derived_by) {
            Some(Deriver::Reconcile) => "reconcile",
            Some(Deriver::Repair) => "repair",
            _ => "live",
        };
        let editor = match self.editor {
            Some(EditorPartOutcome::Applied) => "; the editor part applied",
            Some(EditorPartOutcome::NotApplied) => "; the editor part not applied",
            Some(EditorPartOutcome::Undone) => "; the editor part undone",
            None => "",
        };
        format!(
            "all {} files at their {basis} on disk ({derived}){editor}",
            self.files.len()
        )
    }
}

/// The result of a successful change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeOutcome {
    /// Every file is proven at its post-state.
    Committed {
        /// The change's transaction.
        transaction_id: TxnId,
        /// Every file's proof.
        proof: ChangeProof,
    },
    /// An exact same-context replay: nothing was executed. Its status is the
    /// whole change's (`compensated` when an earlier attempt was put back).
    Replayed(ReplayProjection),
}

impl ChangeOutcome {
    /// The change's transaction.
    pub fn transaction_id(&self) -> TxnId {
        match self {
            Self::Committed { transaction_id, .. } => *transaction_id,
            Self::Replayed(p) => p.transaction_id,
        }
    }
}

/// What [`Journal::apply_change_held`] did.
///
/// [`Journal::apply_change_held`]: crate::Journal::apply_change_held
#[derive(Debug)]
pub enum Applied {
    /// Settled already: a replay (or, for [`Journal::apply_change_with`], the change).
    ///
    /// [`Journal::apply_change_with`]: crate::Journal::apply_change_with
    Done(ChangeOutcome),
    /// Every file at its post-state, the change open until [`Journal::finish_held`].
    ///
    /// [`Journal::finish_held`]: crate::Journal::finish_held
    Held(HeldChange),
}

/// A change applied and held open for its check ([`Journal::apply_change_held`]).
///
/// [`Journal::apply_change_held`]: crate::Journal::apply_change_held
#[derive(Debug)]
pub struct HeldChange {
    /// The change's transaction (`open` until finished).
    pub transaction_id: TxnId,
    pub(super) intent: ChangeIntent,
    pub(super) preimages: Vec<Option<PreImage>>,
    pub(super) editor_outcome: Option<EditorPartOutcome>,
}

/// How a held change ended ([`Journal::finish_held`]), derived from disk.
///
/// [`Journal::finish_held`]: crate::Journal::finish_held
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldEnd {
    /// The change's transaction.
    pub transaction_id: TxnId,
    /// `committed`, `compensated` or `quarantined` (`open`: recording it failed).
    pub status: TxnStatus,
    /// Every file's proof (committed or compensated).
    pub proof: Option<ChangeProof>,
    /// Why it was put back or quarantined.
    pub reason: Option<String>,
}

crate::journal::journal_error!(
    /// A change failed. Unless it names a transaction, nothing was written.
    ChangeError {
        /// The change names no file, or one file twice.
        #[error("invalid change: {0}")]
        Invalid(String),
        /// The files the change overwrites or deletes hold more bytes than a
        /// change retains as pre-images; nothing was recorded or written.
        #[error(
            "the change overwrites or deletes {total} bytes, more than the {limit} bytes a \
             change keeps to put its files back; nothing was written"
        )]
        TooLarge {
            /// The pre-images' bytes in sum.
            total: u64,
            /// [`MAX_CHANGE_PREIMAGE_BYTES`].
            ///
            /// [`MAX_CHANGE_PREIMAGE_BYTES`]: crate::preimage::MAX_CHANGE_PREIMAGE_BYTES
            limit: u64,
        },
        /// Quarantined transactions close the write gate.
        #[error("write gate closed: quarantined transaction(s) must be resolved first")]
        GateClosed {
            /// The quarantined transactions.
            quarantined: Vec<TxnId>,
        },
        /// Compare-and-swap: a file is not in the expected state; nothing was written.
        #[error("stale: {path} is {current}, not the expected {expected}; nothing was written")]
        Stale {
            /// The file.
            path: PathBuf,
            /// What the caller expected.
            expected: FileState,
            /// What is on disk.
            current: FileState,
        },
        /// A delete of a file that does not exist; nothing was written.
        #[error("{path} does not exist; nothing to delete")]
        Absent {
            /// The file.
            path: PathBuf,
        },
        /// A file failed after the intent was recorded; the whole change was settled
        /// before this answer: `compensated` (every file back at its pre-state),
        /// `quarantined` (every file kept as it is), or `open` if even recording
        /// that failed.
        #[error("change {transaction_id} failed at {path} ({source}); settled as {status}")]
        Failed {
            /// The change's transaction.
            transaction_id: TxnId,
            /// The whole change's recorded state.
            status: TxnStatus,
            /// The file that failed.
            path: String,
            /// What that file holds now, when someone changed it under the change.
            changed_to: Option<FileState>,
            /// Why it failed.
            source: io::Error,
            /// Why the change is quarantined, when it is.
            reason: Option<String>,
        },
        /// The change's editor part failed or could not be taken back; the change was
        /// settled before this answer (`compensated`: no file written and nothing left
        /// in the editor; `quarantined`: the reason names the editor part).
        #[error("change {transaction_id}: {reason}; settled as {status}")]
        Editor {
            /// The change's transaction.
            transaction_id: TxnId,
            /// The whole change's recorded state.
            status: TxnStatus,
            /// What happened.
            reason: String,
        },
    }
);

impl From<TxnFailure> for ChangeError {
    fn from(f: TxnFailure) -> Self {
        match f {
            TxnFailure::Path(e) => Self::Path(e),
            TxnFailure::NotReconciled => Self::NotReconciled,
            TxnFailure::GateClosed(quarantined) => Self::GateClosed { quarantined },
            TxnFailure::Conflict(id) => Self::Conflict { id },
            TxnFailure::Journal(e) => Self::Journal(e),
            TxnFailure::Io(path, source) => Self::Io { path, source },
            TxnFailure::Absent(path) => Self::Absent { path },
            TxnFailure::Stale {
                path,
                expected,
                current,
                ..
            } => Self::Stale {
                path,
                expected,
                current,
            },
            TxnFailure::EffectFailed(_, _, source) => Self::Io {
                path: PathBuf::new(),
                source,
            },
        }
    }
}

/// A retained pre-image: the bytes and permission bits of one file.
#[derive(Clone, Debug)]
pub(crate) struct PreImage {
    pub bytes: Vec<u8>,
    pub mode: u32,
}
