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
//!    before it (`durable::apply_effect`).
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
//!
//! # Layout
//!
//! `types` (the request, the stored intent and proof, the editor part, outcomes and
//! error) is below `settle` (deriving, putting back and recording a change's files),
//! which is below `apply` (the live change) and `recover` (owed editor parts and
//! startup reconciliation of changes).

pub use crate::preimage::MAX_CHANGE_PREIMAGE_BYTES;

mod apply;
mod recover;
mod settle;
mod types;
pub(crate) use settle::{
    PutBack, displaced_reason, load_preimages, put_back, remove_durably, undo_temp,
};
pub(crate) use types::PreImage;
pub use types::{
    Applied, ChangeEditorPart, ChangeEffect, ChangeError, ChangeFile, ChangeIntent, ChangeOp,
    ChangeOutcome, ChangeProof, EditorHook, EditorPartOutcome, EditorSent, FileChange, HeldChange,
    HeldEnd,
};

#[cfg(test)]
mod tests;
