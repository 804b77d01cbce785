//! A change: one intent with many file effects and one terminal state for the
//! whole (issue 28). A `move_file` is five files — the new file, its `.uid`,
//! the scene that names it, the old file and its `.uid` deleted — and either all
//! five are in the project or none is.
//!
//! # Lifecycle
//!
//! 1. Every file is read once (its pre-state, the compare-and-swap against its
//!    expected state, and the bytes kept as its pre-image); nothing is recorded
//!    when one is stale.
//! 2. The intent — every file's path, pre-state, post-state and temp path — and
//!    the pre-image of every file that exists are committed in one SQLite
//!    transaction at `synchronous=FULL`: durable before any effect.
//! 3. Every write's temp file is written and fsynced; then each effect is
//!    applied in order, with the single-file re-check (identity and bytes) right
//!    before it (`journal::apply_effect`).
//! 4. Every file is re-derived from disk. All at their post-state: `committed`,
//!    with one proof per file.
//! 5. Anything failing in 3 or 4 (an I/O error, a file someone changed under the
//!    change) compensates before the answer: every file at its post-state is put
//!    back (a created file removed, an overwritten or deleted one restored from
//!    its pre-image through a temp file and a rename, durably), and the change is
//!    `compensated` when every file is then proven at its pre-state.
//!
//! Anything else is `quarantined`, every file named and left as it is.
//! Reconciliation after a crash anywhere runs step 5 on the recorded intent and
//! the retained pre-images (`Journal::reconcile_changes`), so it derives one of
//! the three states too. A change is recorded as a `file` transaction (the
//! effect kind: the spec has three and no fourth) whose intent and proof list
//! its files.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::durable;
use crate::effect::{
    Deriver, Effect, FileProof, ProofBasis, intent_json, parse_intent, parse_proof, proof_json,
};
use crate::failpoints::{self as fp, cross};
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::{
    FileEffect, IdempotencyKey, Journal, NewTxn, QuarantinedTxn, ReplayProjection, TxnFailure,
    WriteGate, apply_effect, ensure_parent, in_txn, insert_txn, record_terminal,
};
pub use crate::preimage::MAX_CHANGE_PREIMAGE_BYTES;
use crate::state_dir::{self, PathError};
use crate::storage::Storage;

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
#[derive(Debug)]
pub enum Applied {
    /// Settled already: a replay (or, for [`Journal::apply_change_with`], the change).
    Done(ChangeOutcome),
    /// Every file at its post-state, the change open until [`Journal::finish_held`].
    Held(HeldChange),
}

/// A change applied and held open for its check ([`Journal::apply_change_held`]).
#[derive(Debug)]
pub struct HeldChange {
    /// The change's transaction (`open` until finished).
    pub transaction_id: TxnId,
    intent: ChangeIntent,
    preimages: Vec<Option<PreImage>>,
    editor_outcome: Option<EditorPartOutcome>,
}

/// How a held change ended ([`Journal::finish_held`]), derived from disk.
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

/// The outcome [`settle`] derived (and, for a compensation, made true).
#[derive(Debug)]
pub(crate) struct Settled {
    pub status: TxnStatus,
    pub proof: Option<ChangeProof>,
    pub reason: Option<String>,
}

/// One file as found on disk.
enum Found {
    Post,
    Pre,
    Other,
}

pub(crate) fn undo_temp(temp: &Path) -> PathBuf {
    let mut s = temp.as_os_str().to_owned();
    s.push(".undo");
    PathBuf::from(s)
}

fn exists(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Removes `path` if it exists, durably (its directory fsynced).
pub(crate) fn remove_durably(storage: &dyn Storage, path: &Path) -> io::Result<()> {
    match storage.remove_file(path) {
        Ok(()) => storage.sync_dir(durable::parent_dir(path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Settles a change from disk: `committed` when every file is at its post-state
/// (leftover temps removed); otherwise compensates — every file at its
/// post-state put back from `preimages` (indexed like `files`), durably — and
/// `compensated` when every file is then proven at its pre-state. A file in
/// neither state, a temp holding bytes that are neither (someone else's, left
/// by an exchange cut short), or a pre-image missing: `quarantined`, every file
/// named and nothing more touched. `prefer_compensate`: a live failure puts the
/// change back even when every file reached its post-state.
///
/// Safe to run again after a crash anywhere inside it: each restore goes
/// through `<temp>.undo` and a rename, so every file is at all times at its
/// pre- or post-state, and the temps are the change's own.
/// After every file of a change was put back (`settled` compensated), its applied
/// editor part is undone through `hook`: the outcome joins the proof, or — when it
/// cannot be undone — the change is quarantined, saying so.
fn undo_editor_part(settled: &mut Settled, part: &ChangeEditorPart, hook: &mut dyn EditorHook) {
    match hook.undo() {
        Ok(outcome) => {
            if let Some(p) = settled.proof.as_mut() {
                p.editor = Some(outcome);
            }
            if let Some(r) = settled.reason.as_mut() {
                r.push_str(" and the editor's action undone");
            }
        }
        Err(e) => {
            settled.status = TxnStatus::Quarantined;
            settled.proof = None;
            settled.reason = Some(format!(
                "every file was put back, but the editor part ({} on {}) could not be \
                 undone ({e})",
                part.action, part.scene
            ));
        }
    }
}

pub(crate) fn settle(
    root: &Path,
    storage: &dyn Storage,
    files: &[ChangeFile],
    preimages: &[Option<PreImage>],
    by: Deriver,
    prefer_compensate: bool,
) -> Settled {
    let quarantine = |reason: String| Settled {
        status: TxnStatus::Quarantined,
        proof: None,
        reason: Some(reason),
    };
    let found = match find(root, files) {
        Ok(found) => found,
        Err(reason) => return quarantine(reason),
    };
    if let Err(reason) = check_temps(root, files, &found) {
        return quarantine(reason);
    }
    let all_post = found.iter().all(|f| matches!(f, Found::Post));
    if all_post && !prefer_compensate {
        if let Err(e) = remove_temps(root, storage, files) {
            return quarantine(format!("cannot remove the change's temp files: {e}"));
        }
        return Settled {
            status: TxnStatus::Committed,
            proof: Some(proof(files, ProofBasis::PostState, by)),
            reason: None,
        };
    }
    // Compensate, last file first.
    for (i, (file, found)) in files.iter().zip(&found).enumerate().rev() {
        if !matches!(found, Found::Post) || file.pre == file.post {
            continue;
        }
        let target = root.join(&file.path);
        let temp = root.join(&file.temp);
        let image = match file.pre {
            FileState::Absent => None,
            FileState::Present { .. } => match preimages.get(i) {
                Some(Some(image)) => Some(image),
                _ => {
                    return quarantine(format!(
                        "{} is at its post-state and its pre-image is missing; the change \
                         cannot be put back: {}",
                        file.path,
                        names(files)
                    ));
                }
            },
        };
        match put_back(storage, &target, &temp, image, file.post) {
            Ok(PutBack::Done) => {}
            Ok(PutBack::Displaced { found, kept }) => {
                return quarantine(format!(
                    "{}; files: {}",
                    displaced_reason(&file.path, found, kept.as_deref()),
                    names(files)
                ));
            }
            Err(e) => {
                return quarantine(format!(
                    "putting {} back failed ({e}); files: {}",
                    file.path,
                    names(files)
                ));
            }
        }
        cross(fp::CHANGE_AFTER_UNDO);
    }
    if let Err(e) = remove_temps(root, storage, files) {
        return quarantine(format!("cannot remove the change's temp files: {e}"));
    }
    match find(root, files) {
        Ok(found) if found.iter().all(|f| matches!(f, Found::Pre)) => Settled {
            status: TxnStatus::Compensated,
            proof: Some(proof(files, ProofBasis::PreState, by)),
            reason: None,
        },
        Ok(_) => quarantine(format!(
            "after compensation not every file is at its pre-state: {}",
            names(files)
        )),
        Err(reason) => quarantine(reason),
    }
}

/// Every file's path, for a reason.
fn names(files: &[ChangeFile]) -> String {
    files
        .iter()
        .map(|f| f.path.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each file's state: at its post-state (checked first: a file the change does
/// not alter is both), at its pre-state, or the reason it is neither.
fn find(root: &Path, files: &[ChangeFile]) -> Result<Vec<Found>, String> {
    let mut found = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for file in files {
        match durable::read_state(&root.join(&file.path)) {
            Ok(s) if s == file.post => found.push(Found::Post),
            Ok(s) if s == file.pre => found.push(Found::Pre),
            Ok(s) => {
                problems.push(format!(
                    "{} is {s}, neither its pre-state {} nor its post-state {}",
                    file.path, file.pre, file.post
                ));
                found.push(Found::Other);
            }
            Err(e) => {
                problems.push(format!("{}: cannot re-derive state: {e}", file.path));
                found.push(Found::Other);
            }
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(format!(
            "change of {} file(s) ({}): {}",
            files.len(),
            names(files),
            problems.join("; ")
        ))
    }
}

/// A leftover temp beside a file at its post-state holds what an exchange
/// displaced: ours when it is the pre- or post-state, someone else's otherwise
/// (kept as evidence, the change quarantined). Beside a file at its pre-state
/// nothing was exchanged: the temp is our own.
fn check_temps(root: &Path, files: &[ChangeFile], found: &[Found]) -> Result<(), String> {
    for (file, found) in files.iter().zip(found) {
        if !matches!(found, Found::Post) {
            continue;
        }
        let temp = root.join(&file.temp);
        match durable::read_state(&temp) {
            Ok(FileState::Absent) => {}
            Ok(held) if held == file.pre || held == file.post => {}
            Ok(held) => {
                return Err(format!(
                    "{} is at its post-state, but {} holds {held}, neither its pre-state nor its \
                     post-state: a file someone wrote during the exchange, kept there as evidence",
                    file.path, file.temp
                ));
            }
            Err(e) => return Err(format!("{}: cannot inspect its temp: {e}", file.path)),
        }
    }
    Ok(())
}

/// Removes every temp of the change (and its `.undo`), durably.
fn remove_temps(root: &Path, storage: &dyn Storage, files: &[ChangeFile]) -> io::Result<()> {
    for file in files {
        let temp = root.join(&file.temp);
        for path in [undo_temp(&temp), temp] {
            if exists(&path)? {
                remove_durably(storage, &path)?;
            }
        }
    }
    Ok(())
}

/// What [`put_back`] found at the target when it took it.
#[derive(Debug)]
pub(crate) enum PutBack {
    /// The target held the expected state and now holds the pre-state, durably.
    Done,
    /// The target held `found`, not the expected state (someone wrote it after it
    /// was proven): it was left holding that, and `kept` (when `Some`) holds the
    /// bytes that were to be put back.
    Displaced {
        found: FileState,
        kept: Option<PathBuf>,
    },
}

/// Puts a file of a change back at its pre-state — `image` written back, or
/// (`None`) the file the change created removed — taking the target only while it
/// holds `expect` (the state it was proven at). Through `<temp>.undo`: written and
/// fsynced, then **exchanged** with the target (`renameat2(RENAME_EXCHANGE)`; see
/// `godot_mcp_os::fs::exchange` for macOS and Windows), so whatever the target
/// held is displaced, not overwritten; what was displaced is checked against
/// `expect`, and anything else is swapped back (the user's bytes at the target,
/// ours kept at `.undo`) and reported. A created file is first renamed aside to
/// `.undo` and checked the same way. The directory is fsynced.
pub(crate) fn put_back(
    storage: &dyn Storage,
    target: &Path,
    temp: &Path,
    image: Option<&PreImage>,
    expect: FileState,
) -> io::Result<PutBack> {
    let undo = undo_temp(temp);
    if exists(&undo)? {
        storage.remove_file(&undo)?;
    }
    let dir = durable::parent_dir(target);
    match image {
        Some(image) => {
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent)?;
            }
            let file = storage.create_temp(&undo, &image.bytes, image.mode)?;
            storage.sync_file(&undo, &file)?;
            drop(file);
            if expect == FileState::Absent {
                // Nothing to displace: the target must still be absent.
                match storage.rename_noreplace(&undo, target) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        return Ok(PutBack::Displaced {
                            found: durable::read_state(target)?,
                            kept: Some(undo),
                        });
                    }
                    Err(e) => return Err(e),
                }
            } else {
                storage.exchange(&undo, target)?;
                let found = durable::read_state(&undo)?;
                if found != expect {
                    storage.exchange(&undo, target)?;
                    storage.sync_dir(dir)?;
                    return Ok(PutBack::Displaced {
                        found,
                        kept: Some(undo),
                    });
                }
                storage.remove_file(&undo)?;
            }
        }
        None => {
            storage.rename_noreplace(target, &undo)?;
            let found = durable::read_state(&undo)?;
            if found != expect {
                let kept = match storage.rename_noreplace(&undo, target) {
                    Ok(()) => None,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Some(undo),
                    Err(e) => return Err(e),
                };
                storage.sync_dir(dir)?;
                return Ok(PutBack::Displaced { found, kept });
            }
            storage.remove_file(&undo)?;
        }
    }
    storage.sync_dir(dir)?;
    Ok(PutBack::Done)
}

/// A [`PutBack::Displaced`] as a quarantine reason.
pub(crate) fn displaced_reason(path: &str, found: FileState, kept: Option<&Path>) -> String {
    let kept = match kept {
        Some(k) => format!("; the bytes of its pre-state are kept at {}", k.display()),
        None => String::new(),
    };
    format!(
        "{path} changed while it was being put back (it holds {found}): it was left as it \
         is{kept}"
    )
}

fn proof(files: &[ChangeFile], basis: ProofBasis, by: Deriver) -> ChangeProof {
    ChangeProof {
        editor: None,
        files: files
            .iter()
            .map(|f| FileProof {
                path: f.path.clone(),
                observed: match basis {
                    ProofBasis::PostState => f.post,
                    _ => f.pre,
                },
                basis,
                temp_removed: false,
                derived_by: by,
            })
            .collect(),
    }
}

/// The first two entries of `ids` naming one file (device and inode), if any;
/// `None` entries (absent files) never match.
pub(crate) fn same_file(ids: &[Option<godot_mcp_os::fs::FileId>]) -> Option<(usize, usize)> {
    ids.iter().enumerate().find_map(|(j, b)| {
        let b = (*b)?;
        ids[..j].iter().position(|a| *a == Some(b)).map(|i| (i, j))
    })
}

/// A file of a change, read and checked before the intent.
struct Planned<'a> {
    target: PathBuf,
    rel: String,
    effect: FileEffect<'a>,
    seen: durable::Observed,
    pre_bytes: Option<Vec<u8>>,
    post: FileState,
    temp: PathBuf,
}

impl Journal {
    /// Applies `req` as one change: every file at its post-state (committed),
    /// or, when anything fails after the intent, every file put back before
    /// this returns (see the module docs).
    pub fn apply_change(&mut self, req: FileChange) -> Result<ChangeOutcome, ChangeError> {
        self.apply_change_as(req, None)
    }

    /// [`Journal::apply_change`] recorded under `id` when given (an agent's change
    /// draws its id when it begins, so every answer inside it names the transaction
    /// its commit will be); a fresh id otherwise. The server draws `id` at random
    /// and uses it for one commit only.
    pub fn apply_change_as(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
    ) -> Result<ChangeOutcome, ChangeError> {
        self.apply_change_with(req, id, None)
    }

    /// [`Journal::apply_change_as`] with an editor part: recorded in the intent,
    /// sent through `hook` after the intent is durable and before any file, and
    /// taken back through `hook` when the files fail and are put back.
    pub fn apply_change_with(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
        editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>,
    ) -> Result<ChangeOutcome, ChangeError> {
        match self.apply_change_inner(req, id, editor, None)? {
            Applied::Done(outcome) => Ok(outcome),
            Applied::Held(_) => unreachable!("a change without a check is never held"),
        }
    }

    /// [`Journal::apply_change_with`] that, when every file is proven at its
    /// post-state, leaves the change `open` (its intent naming `check`) instead of
    /// recording it: the caller runs its check on the files in place (the journal's
    /// lock released: a check may itself be journaled, a launch) and then settles it
    /// with [`Journal::finish_held`], which derives the outcome from disk. A failure
    /// before the check settles as [`Journal::apply_change_with`] does. Should the
    /// process end while the change is held, reconciliation puts every file back.
    pub fn apply_change_held(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
        editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>,
        check: &str,
    ) -> Result<Applied, ChangeError> {
        self.apply_change_inner(req, id, editor, Some(check))
    }

    /// Settles a held change from disk: `keep`, every file re-derived at its
    /// post-state: `committed`; not `keep` (its check failed, `why`): every file put
    /// back from its pre-image and proven at its pre-state, `compensated`, the
    /// editor part undone through `editor` when it was applied. Anything else (a
    /// file someone changed during the check) is `quarantined`, as any change.
    pub fn finish_held(
        &mut self,
        held: HeldChange,
        keep: bool,
        why: &str,
        editor: Option<&mut dyn EditorHook>,
    ) -> HeldEnd {
        let HeldChange {
            transaction_id: txn,
            intent,
            preimages,
            editor_outcome,
        } = held;
        let mut settled = settle(
            &self.root,
            &*self.storage,
            &intent.files,
            &preimages,
            Deriver::Live,
            !keep,
        );
        if settled.status == TxnStatus::Compensated {
            settled.reason = Some(format!("{why}; every file was put back"));
        }
        if let (Some(part), Some(applied)) = (&intent.editor, editor_outcome) {
            match (settled.status, editor) {
                (TxnStatus::Committed, _) => {
                    if let Some(p) = settled.proof.as_mut() {
                        p.editor = Some(applied);
                    }
                }
                (TxnStatus::Compensated, Some(hook)) => undo_editor_part(&mut settled, part, hook),
                _ => {
                    let r = settled.reason.get_or_insert_with(String::new);
                    r.push_str(&format!(
                        "; the editor part ({} on {}) is left applied",
                        part.action, part.scene
                    ));
                    if settled.status == TxnStatus::Compensated {
                        settled.status = TxnStatus::Quarantined;
                        settled.proof = None;
                    }
                }
            }
        }
        let recorded = self.record_change(txn, &settled);
        cross(fp::CHANGE_AFTER_TERMINAL);
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, settled.reason.clone().unwrap_or_default());
        }
        HeldEnd {
            transaction_id: txn,
            status: if recorded.is_ok() {
                settled.status
            } else {
                TxnStatus::Open
            },
            proof: settled.proof,
            reason: settled.reason,
        }
    }

    fn apply_change_inner(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
        mut editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>,
        check: Option<&str>,
    ) -> Result<Applied, ChangeError> {
        if req.effects.is_empty() && editor.is_none() {
            return Err(ChangeError::Invalid(
                "a change names at least one file".into(),
            ));
        }
        let mut rels = Vec::with_capacity(req.effects.len());
        for e in &req.effects {
            state_dir::validate_relative(&e.rel_path)?;
            let rel = e
                .rel_path
                .to_str()
                .ok_or_else(|| PathError::NotRelative {
                    path: e.rel_path.clone(),
                })?
                .to_owned();
            if rels.contains(&rel) {
                return Err(ChangeError::Invalid(format!("{rel} is named twice")));
            }
            rels.push(rel);
        }
        for a in &rels {
            if let Some(b) = rels.iter().find(|b| b.starts_with(&format!("{a}/"))) {
                return Err(ChangeError::Invalid(format!(
                    "{a} is a file of the change and the folder of {b}"
                )));
            }
        }
        self.check_gate()?;
        if let Some(key) = &req.idempotency
            && let Some(replay) = self.replay_lookup(key, &req.tool_family, &req.operation)?
        {
            return Ok(Applied::Done(ChangeOutcome::Replayed(replay)));
        }
        let txn = match id {
            Some(id) => id,
            None => TxnId::random().map_err(|source| ChangeError::Io {
                path: PathBuf::new(),
                source,
            })?,
        };

        // 1. Every file read once: pre-state, compare-and-swap, pre-image.
        let mut planned = Vec::with_capacity(req.effects.len());
        for (e, rel) in req.effects.iter().zip(rels) {
            let target = self.root.join(&e.rel_path);
            let io = |source| ChangeError::Io {
                path: e.rel_path.clone(),
                source,
            };
            let (seen, pre_bytes) = durable::observe_bytes(&target).map_err(io)?;
            if let Some(expected) = e.expected
                && expected != seen.state
            {
                return Err(ChangeError::Stale {
                    path: e.rel_path.clone(),
                    expected,
                    current: seen.state,
                });
            }
            let (effect, post) = match &e.op {
                ChangeOp::Write(bytes) => (FileEffect::Write { bytes }, FileState::of(bytes)),
                ChangeOp::Delete if seen.state == FileState::Absent => {
                    return Err(ChangeError::Absent {
                        path: e.rel_path.clone(),
                    });
                }
                ChangeOp::Delete => (FileEffect::Delete, FileState::Absent),
            };
            let temp = durable::temp_path_for(&target, TxnId::random().map_err(io)?);
            planned.push(Planned {
                target,
                rel,
                effect,
                seen,
                pre_bytes,
                post,
                temp,
            });
        }
        // One file named twice by two paths (a case variant on a case-insensitive
        // file system, a hard link) would be applied twice and then found at neither
        // state: refused before anything is recorded.
        let ids: Vec<_> = planned.iter().map(|p| p.seen.id).collect();
        if let Some((a, b)) = same_file(&ids) {
            return Err(ChangeError::Invalid(format!(
                "{} and {} are one file (the same device and inode: two spellings of one \
                 path on a case-insensitive file system, or hard links); name it once",
                planned[a].rel, planned[b].rel
            )));
        }
        let total: u64 = planned
            .iter()
            .map(|p| p.pre_bytes.as_ref().map_or(0, |b| b.len() as u64))
            .sum();
        if total > self.change_preimage_limit {
            return Err(ChangeError::TooLarge {
                total,
                limit: self.change_preimage_limit,
            });
        }
        for (p, e) in planned.iter().zip(&req.effects) {
            if let FileEffect::Write { .. } = p.effect {
                ensure_parent(&*self.storage, &self.root, &e.rel_path).map_err(|source| {
                    ChangeError::Io {
                        path: e.rel_path.clone(),
                        source,
                    }
                })?;
            }
        }
        let files: Vec<ChangeFile> = planned
            .iter()
            .map(|p| ChangeFile {
                path: p.rel.clone(),
                pre: p.seen.state,
                post: p.post,
                temp: p
                    .temp
                    .strip_prefix(&self.root)
                    .ok()
                    .and_then(Path::to_str)
                    .unwrap_or_default()
                    .to_owned(),
            })
            .collect();
        let preimages: Vec<Option<PreImage>> = planned
            .iter_mut()
            .map(|p| {
                p.pre_bytes.take().map(|bytes| PreImage {
                    bytes,
                    mode: p.seen.mode.unwrap_or(0o644),
                })
            })
            .collect();

        // 2. The intent and the pre-images, durable before any effect.
        let intent = ChangeIntent {
            files,
            editor: editor.as_ref().map(|(part, _)| part.clone()),
            check: check.map(str::to_owned),
        };
        self.insert_change(txn, &intent, &preimages, &req)?;
        cross(fp::CHANGE_AFTER_INTENT);

        // 2b. The editor part, before any file: one request, one undo action.
        let storage = self.storage.clone();
        // Every file re-derived from disk; `put_back`: compensating what is not at its
        // pre-state.
        let settle_live = |put_back: bool| {
            settle(
                &self.root,
                &*storage,
                &intent.files,
                &preimages,
                Deriver::Live,
                put_back,
            )
        };
        let mut editor_outcome = None;
        if let Some((part, hook)) = editor.as_mut() {
            let refused = match hook.apply() {
                EditorSent::Applied => {
                    cross(fp::CHANGE_AFTER_EDITOR);
                    editor_outcome = Some(EditorPartOutcome::Applied);
                    None
                }
                EditorSent::NotApplied(why) => Some((Ok(EditorPartOutcome::NotApplied), why)),
                EditorSent::Unknown(why) => Some((hook.undo(), why)),
            };
            if let Some((taken_back, why)) = refused {
                // No file was written: every one is proven at its pre-state.
                let mut settled = settle_live(true);
                let reason = match taken_back {
                    Ok(outcome) if settled.status == TxnStatus::Compensated => {
                        if let Some(p) = settled.proof.as_mut() {
                            p.editor = Some(outcome);
                        }
                        format!(
                            "the editor did not apply the change's edits ({why}); no file was \
                             written"
                        )
                    }
                    Ok(_) => settled.reason.clone().unwrap_or_default(),
                    Err(e) => {
                        settled.status = TxnStatus::Quarantined;
                        settled.proof = None;
                        format!(
                            "the editor part ({} on {}) may be applied and could not be undone \
                             ({why}; {e}); no file was written",
                            part.action, part.scene
                        )
                    }
                };
                settled.reason = Some(reason.clone());
                let recorded = self.record_change(txn, &settled);
                cross(fp::CHANGE_AFTER_TERMINAL);
                if settled.status == TxnStatus::Quarantined {
                    self.close_gate(txn, reason.clone());
                }
                return Err(ChangeError::Editor {
                    transaction_id: txn,
                    status: if recorded.is_ok() {
                        settled.status
                    } else {
                        TxnStatus::Open
                    },
                    reason,
                });
            }
        }

        // 3. Temps written and fsynced, then each effect in order.
        let mut failed: Option<(usize, Option<FileState>, io::Error)> = None;
        for (i, p) in planned.iter().enumerate() {
            if let FileEffect::Write { bytes } = p.effect {
                let mode = p.seen.mode.unwrap_or(0o644);
                let made = storage.create_temp(&p.temp, bytes, mode).and_then(|f| {
                    cross(fp::AFTER_TEMP_WRITE);
                    storage.sync_file(&p.temp, &f)
                });
                if let Err(e) = made {
                    failed = Some((i, None, e));
                    break;
                }
                cross(fp::AFTER_TEMP_FSYNC);
            }
        }
        if failed.is_none() {
            for (i, p) in planned.iter().enumerate() {
                let temp = matches!(p.effect, FileEffect::Write { .. }).then_some(p.temp.as_path());
                match apply_effect(&*storage, &p.target, temp, p.effect, &p.seen) {
                    Ok(None) => cross(fp::CHANGE_AFTER_EFFECT),
                    Ok(Some(now)) => {
                        failed = Some((
                            i,
                            Some(now),
                            io::Error::other(format!(
                                "{} changed under the change (now {now})",
                                p.rel
                            )),
                        ));
                        break;
                    }
                    Err(e) => {
                        failed = Some((i, None, e));
                        break;
                    }
                }
            }
        }

        // 4. Every file re-derived from disk.
        let settled = match &failed {
            None => {
                let s = settle_live(false);
                cross(fp::CHANGE_AFTER_POST_HASH);
                s
            }
            // 5. A failure puts every file back.
            Some(_) => settle_live(true),
        };
        if check.is_some() && failed.is_none() && settled.status == TxnStatus::Committed {
            // Every file proven in place: held open for the check.
            return Ok(Applied::Held(HeldChange {
                transaction_id: txn,
                intent,
                preimages,
                editor_outcome,
            }));
        }
        let mut settled = settled;
        if let (Some((i, _, cause)), TxnStatus::Compensated) = (&failed, settled.status) {
            settled.reason = Some(format!(
                "{} failed ({cause}); every file was put back",
                intent.files[*i].path
            ));
        }
        // The files did not all land: the editor part is taken back too.
        if let (Some((part, hook)), Some(_)) = (editor.as_mut(), editor_outcome) {
            if settled.status == TxnStatus::Committed {
                if let Some(p) = settled.proof.as_mut() {
                    p.editor = editor_outcome;
                }
            } else if settled.status == TxnStatus::Compensated {
                undo_editor_part(&mut settled, part, *hook);
            } else {
                let r = settled.reason.get_or_insert_with(String::new);
                r.push_str(&format!(
                    "; the editor part ({} on {}) is left applied",
                    part.action, part.scene
                ));
            }
        }
        let recorded = self.record_change(txn, &settled);
        cross(fp::CHANGE_AFTER_TERMINAL);
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, settled.reason.clone().unwrap_or_default());
        }
        match (failed, settled.status) {
            (None, TxnStatus::Committed) => {
                recorded?;
                Ok(Applied::Done(ChangeOutcome::Committed {
                    transaction_id: txn,
                    proof: settled.proof.expect("a committed settle has its proof"),
                }))
            }
            (failed, status) => {
                let (i, changed_to, source) = failed.unwrap_or_else(|| {
                    (
                        0,
                        None,
                        io::Error::other(
                            settled
                                .reason
                                .clone()
                                .unwrap_or_else(|| "not every file reached its post-state".into()),
                        ),
                    )
                });
                Err(ChangeError::Failed {
                    transaction_id: txn,
                    status: if recorded.is_ok() {
                        status
                    } else {
                        TxnStatus::Open
                    },
                    path: intent.files[i].path.clone(),
                    changed_to,
                    source,
                    reason: settled.reason,
                })
            }
        }
    }

    /// Records the change's intent row and its pre-images in one SQLite
    /// transaction at `synchronous=FULL` (after any pending terminal row).
    fn insert_change(
        &mut self,
        txn: TxnId,
        intent: &ChangeIntent,
        preimages: &[Option<PreImage>],
        req: &FileChange,
    ) -> Result<(), ChangeError> {
        let intent_json = intent_json(intent)?;
        let identity = self.identity.clone();
        // Any pending terminal row is written first; when that fails (a failed WAL
        // sync, a fold) the gate is closed and nothing of this change is recorded
        // or touched.
        self.conn_mut();
        self.check_gate()?;
        let conn = self.conn_mut();
        let result = in_txn(conn, |conn| {
            insert_txn(
                conn,
                &identity,
                &NewTxn {
                    txn,
                    kind: EffectKind::File,
                    operation: &req.operation,
                    tool_family: &req.tool_family,
                    state: TxnStatus::Open,
                    intent_json: &intent_json,
                    proof_json: None,
                    parent: None,
                    idem: req.idempotency.as_ref(),
                },
            )?;
            let mut st = conn.prepare_cached(
                "INSERT INTO change_preimages (txn_id, idx, mode, sha256, bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (i, (image, file)) in preimages.iter().zip(&intent.files).enumerate() {
                if let (Some(image), FileState::Present { sha256 }) = (image, file.pre) {
                    st.execute(params![
                        txn.to_string(),
                        i as i64,
                        i64::from(image.mode),
                        sha256.to_string(),
                        image.bytes,
                    ])?;
                }
            }
            Ok(())
        });
        result.map_err(|e| {
            self.gate = WriteGate::Unreconciled;
            ChangeError::Journal(e)
        })
    }

    /// Records a settled change terminal (its pre-images released when proven);
    /// on failure the gate falls back to `Unreconciled`.
    fn record_change(&mut self, txn: TxnId, settled: &Settled) -> rusqlite::Result<()> {
        let result = in_txn(self.conn(), |conn| {
            record_change_terminal(conn, txn, settled)
        });
        if result.is_err() {
            self.gate = WriteGate::Unreconciled;
        }
        result
    }

    /// The changes whose editor part is owed an undo: open, with an editor part, as a
    /// previous process left them (reconciliation put their files back). A change in
    /// flight holds the journal's lock for its whole commit, so none is seen here.
    pub fn owed_editor_parts(&self) -> rusqlite::Result<Vec<(TxnId, ChangeEditorPart)>> {
        let mut st = self.conn().prepare_cached(
            "SELECT id, intent_json, proof_json IS NOT NULL FROM transactions
             WHERE state = 'open' AND effect_kind = 'file' ORDER BY rowid",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, intent, put_back)| {
                let Some(ChangeIntent {
                    editor: Some(part),
                    check,
                    ..
                }) = parse_intent::<ChangeIntent>(&intent)
                else {
                    return None;
                };
                // A change held for its check in this process (no put-back proof
                // yet) is its caller's to settle.
                if check.is_some() && !put_back {
                    return None;
                }
                Some((id.parse().ok()?, part))
            })
            .collect())
    }

    /// Settles an owed editor part ([`Journal::owed_editor_parts`]): `Ok(outcome)`
    /// (undone, or never applied) with every file proven at its pre-state →
    /// `compensated`; `Err(reason)` (the editor's history shows the action under
    /// later ones: it cannot be taken back) → `quarantined`. Returns the state
    /// recorded (`open`: the row was no longer owed).
    pub fn settle_owed_editor(
        &mut self,
        txn: TxnId,
        outcome: Result<EditorPartOutcome, String>,
    ) -> rusqlite::Result<TxnStatus> {
        let Some(part) = self
            .owed_editor_parts()?
            .into_iter()
            .find(|(t, _)| *t == txn)
            .map(|(_, p)| p)
        else {
            return Ok(TxnStatus::Open);
        };
        let intent: Option<ChangeIntent> = self
            .conn()
            .query_row(
                "SELECT intent_json FROM transactions WHERE id = ?1",
                [txn.to_string()],
                |r| r.get::<_, String>(0),
            )
            .ok()
            .and_then(|j| parse_intent::<ChangeIntent>(&j));
        let Some(intent) = intent else {
            return Ok(TxnStatus::Open);
        };
        // Files reconciliation proved back are never re-derived (someone may have
        // written them since, through a later committed write).
        let mut settled = match self.files_put_back(txn)? {
            Some(proof) => Settled {
                status: TxnStatus::Compensated,
                proof: Some(proof),
                reason: None,
            },
            None => self.settle_recorded(txn, &intent, true)?,
        };
        match outcome {
            Ok(outcome) if settled.status == TxnStatus::Compensated => {
                if let Some(p) = settled.proof.as_mut() {
                    p.editor = Some(outcome);
                }
                settled.reason = Some(format!(
                    "the server stopped before the change completed; every file was put back \
                     and its editor part ({}) {}",
                    part.action,
                    match outcome {
                        EditorPartOutcome::NotApplied => "was never applied",
                        _ => "undone",
                    }
                ));
            }
            Ok(_) => {}
            Err(why) => {
                settled.status = TxnStatus::Quarantined;
                settled.proof = None;
                settled.reason = Some(format!(
                    "its editor part ({} on {}) cannot be taken back: {why}",
                    part.action, part.scene
                ));
            }
        }
        let recorded = in_txn(self.conn(), |conn| {
            record_change_terminal(conn, txn, &settled)
        });
        if recorded.is_err() {
            self.gate = WriteGate::Unreconciled;
        }
        recorded?;
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, settled.reason.clone().unwrap_or_default());
        }
        Ok(settled.status)
    }

    /// How many pre-images of changes the journal retains (open or
    /// quarantined changes keep theirs).
    pub fn retained_change_preimages(&self) -> rusqlite::Result<usize> {
        self.conn()
            .query_row("SELECT COUNT(*) FROM change_preimages", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| usize::try_from(n).unwrap_or(0))
    }

    fn close_gate(&mut self, txn: TxnId, reason: String) {
        let q = QuarantinedTxn {
            transaction_id: txn,
            reason,
        };
        match &mut self.gate {
            WriteGate::Closed { quarantined } => quarantined.push(q),
            gate => {
                *gate = WriteGate::Closed {
                    quarantined: vec![q],
                }
            }
        }
    }

    /// A recorded change's files re-derived from disk by reconciliation, with its
    /// retained pre-images (`prefer_compensate`: put back what is not at its pre-state).
    fn settle_recorded(
        &self,
        txn: TxnId,
        intent: &ChangeIntent,
        prefer_compensate: bool,
    ) -> rusqlite::Result<Settled> {
        let preimages = load_preimages(self.conn(), txn, &intent.files)?;
        Ok(settle(
            &self.root,
            &*self.storage,
            &intent.files,
            &preimages,
            Deriver::Reconcile,
            prefer_compensate,
        ))
    }

    /// The proof recorded on an open change whose files reconciliation already
    /// proved back at their pre-state (its editor part still owed): those files are
    /// never re-derived or touched again. `None`: not recorded.
    fn files_put_back(&self, txn: TxnId) -> rusqlite::Result<Option<ChangeProof>> {
        let json: Option<Option<String>> = self
            .conn()
            .query_row(
                "SELECT proof_json FROM transactions WHERE id = ?1 AND state = 'open'",
                [txn.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        Ok(json.flatten().and_then(|j| parse_proof::<ChangeIntent>(&j)))
    }

    /// Settles every change a previous process left open (of this project
    /// object and generation; others are quarantined like any foreign row):
    /// committed, compensated (put back from the retained pre-images) or
    /// quarantined. Every outcome is derived first, then the project's file
    /// system is synced once (`syncfs`: the last rename or unlink a change made
    /// may not be durable yet), then each is recorded in its own SQLite
    /// transaction, so a crash in here leaves the rest open for the next run,
    /// which derives the same outcome. A change whose editor part is owed an undo
    /// stays open with its files' put-back proof recorded (and its pre-images
    /// released): a later run never re-derives those files. Returns what it recorded.
    pub(crate) fn reconcile_changes(
        &mut self,
        rows: &[(TxnId, ChangeIntent)],
    ) -> Result<Vec<(TxnId, TxnStatus, Option<String>)>, crate::journal::ReconcileError> {
        let mut out = Vec::with_capacity(rows.len());
        // (txn, settled, whether the row stays open with the files' proof).
        let mut to_record: Vec<(TxnId, Settled, bool)> = Vec::new();
        for (txn, intent) in rows {
            if let Some(part) = &intent.editor
                && self.files_put_back(*txn)?.is_some()
            {
                out.push((
                    *txn,
                    TxnStatus::Open,
                    Some(format!(
                        "every file was put back; its editor part ({} on {}) waits for the \
                         editor to connect",
                        part.action, part.scene
                    )),
                ));
                continue;
            }
            // A held change's check never passed: it is put back.
            let mut settled = self.settle_recorded(*txn, intent, intent.check.is_some())?;
            if settled.status == TxnStatus::Compensated {
                settled.reason = Some(match &intent.check {
                    Some(check) => format!(
                        "the server stopped before the change's {check} check passed; every \
                         file was put back"
                    ),
                    None => "the server stopped before the change completed; every file was \
                             put back"
                        .into(),
                });
            }
            let mut owed = false;
            if let Some(part) = &intent.editor {
                match settled.status {
                    // A file is written only after the editor applied its part.
                    TxnStatus::Committed if !intent.files.is_empty() => {
                        if let Some(p) = settled.proof.as_mut() {
                            p.editor = Some(EditorPartOutcome::Applied);
                        }
                    }
                    TxnStatus::Quarantined => {
                        let r = settled.reason.get_or_insert_with(String::new);
                        r.push_str(&format!(
                            "; its editor part ({} on {}) may be applied",
                            part.action, part.scene
                        ));
                    }
                    // Files back at their pre-state (or none): the editor part may have
                    // been applied; it is owed an undo, settled when an editor connects
                    // ([`Journal::owed_editor_parts`]). The row stays open, the files'
                    // proof recorded on it.
                    _ => {
                        owed = true;
                        settled.reason = Some(format!(
                            "every file was put back; its editor part ({} on {}) waits \
                             for the editor to connect",
                            part.action, part.scene
                        ));
                    }
                }
            }
            to_record.push((*txn, settled, owed));
        }
        // Durable before any row claims it: the files a row proves (a committed
        // change's last unlink, say) may still be only in the page cache.
        if to_record
            .iter()
            .any(|(_, s, _)| s.status != TxnStatus::Quarantined)
        {
            let mut dirs: Vec<PathBuf> = rows
                .iter()
                .flat_map(|(_, i)| &i.files)
                .map(|f| durable::parent_dir(&self.root.join(&f.path)).to_path_buf())
                .collect();
            dirs.sort();
            dirs.dedup();
            crate::storage::sync_tree(&*self.storage, &self.root, &dirs)
                .map_err(crate::journal::ReconcileError::Sync)?;
        }
        for (txn, settled, owed) in to_record {
            if owed {
                in_txn(self.conn(), |conn| {
                    record_files_put_back(conn, txn, settled.proof.as_ref())
                })?;
                out.push((txn, TxnStatus::Open, settled.reason));
                continue;
            }
            in_txn(self.conn(), |conn| {
                record_change_terminal(conn, txn, &settled)
            })?;
            out.push((txn, settled.status, settled.reason));
        }
        Ok(out)
    }
}

/// Records on an open change that its files are proven back at their pre-state
/// (`proof`), and releases its pre-images: nothing will put them back again.
fn record_files_put_back(
    conn: &rusqlite::Connection,
    txn: TxnId,
    proof: Option<&ChangeProof>,
) -> rusqlite::Result<()> {
    let Some(proof) = proof else {
        return Ok(());
    };
    let json = proof_json::<ChangeIntent>(proof)?;
    conn.prepare_cached(
        "UPDATE transactions SET proof_json = ?2 WHERE id = ?1 AND state = 'open'",
    )?
    .execute(params![txn.to_string(), json])?;
    conn.prepare_cached("DELETE FROM change_preimages WHERE txn_id = ?1")?
        .execute([txn.to_string()])?;
    Ok(())
}

/// Moves the change from `open` to its settled state; its pre-images go with a
/// proven state.
fn record_change_terminal(
    conn: &rusqlite::Connection,
    txn: TxnId,
    settled: &Settled,
) -> rusqlite::Result<()> {
    record_terminal(
        conn,
        txn,
        TxnStatus::Open,
        settled.status,
        settled
            .proof
            .as_ref()
            .map(proof_json::<ChangeIntent>)
            .transpose()?,
        settled.reason.as_deref(),
    )?;
    if matches!(
        settled.status,
        TxnStatus::Committed | TxnStatus::Compensated
    ) {
        conn.prepare_cached("DELETE FROM change_preimages WHERE txn_id = ?1")?
            .execute([txn.to_string()])?;
    }
    Ok(())
}

/// The retained pre-images of `txn`, indexed like `files`; a row whose bytes do
/// not hash to the recorded pre-state is no pre-image.
pub(crate) fn load_preimages(
    conn: &rusqlite::Connection,
    txn: TxnId,
    files: &[ChangeFile],
) -> rusqlite::Result<Vec<Option<PreImage>>> {
    let mut out: Vec<Option<PreImage>> = vec![None; files.len()];
    let mut st =
        conn.prepare_cached("SELECT idx, mode, bytes FROM change_preimages WHERE txn_id = ?1")?;
    let rows = st.query_map([txn.to_string()], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, Vec<u8>>(2)?,
        ))
    })?;
    for row in rows {
        let (idx, mode, bytes) = row?;
        let Some(file) = usize::try_from(idx).ok().and_then(|i| files.get(i)) else {
            continue;
        };
        if FileState::of(&bytes) == file.pre {
            out[idx as usize] = Some(PreImage {
                bytes,
                mode: u32::try_from(mode).unwrap_or(0o644) & 0o7777,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
