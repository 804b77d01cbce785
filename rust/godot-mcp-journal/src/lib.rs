//! The durable journal of godot-mcp: every durable mutation of a project is a
//! transaction that ends in exactly one of `compensated`, `committed` or
//! `quarantined`, each backed by a proof re-derived from disk.
//!
//! # Layout
//!
//! Each module imports only modules listed above it (no file imports a file that
//! imports it back: `scripts/file_cycles.py rust/godot-mcp-journal/src`).
//!
//! - [`ids`]: transaction ids, project object ids, content hashes, file states,
//!   idempotency keys.
//! - [`state_dir`]: where a project's private state lives, and path hygiene.
//! - [`failpoints`]: the names of every crash boundary, for the crash sweep.
//! - [`durable`]: the bare atomic durable write (temp, fsync, rename, fsync dir).
//! - [`storage`]: the seam every durable file effect of a write goes through, and
//!   (feature `failpoints`) the power-loss simulation the crash sweep runs on.
//! - [`identity`]: the project's object identity and generation (`project.json`).
//! - [`lease`]: the per-project writer lease (`lease.lock`, an `flock`).
//! - [`process_table`]: the process-table seam the launch kind reads.
//! - [`preimage`]: the bounded pre-images of overwrites and deletes, for repair.
//! - [`effect`]: the [`effect::Effect`] trait every effect kind implements (its tag,
//!   its proof), the tagged JSON rows are stored as, and the `file` kind's intent and
//!   proof.
//! - `derive`: re-deriving a `file` intent's outcome from disk.
//! - [`intent_log`]: the intent log a `file` write records first, folded into SQLite.
//! - [`schema`]: the SQLite schema and its `user_version` migrations.
//! - [`journal`]: [`Journal`]: open, write gate, file write/delete transactions,
//!   compare-and-swap, idempotency.
//! - The effect kinds, each a type implementing [`effect::Effect`]: [`launch`]
//!   (`process_launch`), [`editor`] (`editor_runtime` transactions: intent before the
//!   bridge request, the terminal state from the reply; a lost answer never resent),
//!   [`change`] (many file effects, one transaction, one terminal state), and
//!   [`artifact`] (export artifacts outside the project).
//! - [`proof`]: the stored [`proof::Intent`] and [`Proof`] read back whatever their
//!   kind, for the modules below.
//! - [`listing`]: transactions as the read-only tool and resource list them.
//! - [`reconcile`]: startup reconciliation and its stderr report.
//! - [`repair`]: the operator's `transaction repair` operations and proof file.
//!
//! The recovery model as built is documented in `docs/recovery.md`.
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

pub mod artifact;
pub mod change;
mod derive;
pub mod durable;
pub mod editor;
pub mod effect;
pub mod failpoints;
pub mod identity;
pub mod ids;
pub mod intent_log;
pub mod journal;
pub mod launch;
pub mod lease;
pub mod listing;
pub mod preimage;
pub mod process_table;
pub mod proof;
pub mod reconcile;
pub mod repair;
pub mod schema;
/// Where a project's private state lives, and path hygiene: the items live in
/// [`durable`]; this path re-exports them.
pub mod state_dir {
    pub use crate::durable::{
        PathError, TEMP_PREFIX, project_state_dir, state_root, validate_relative,
    };
}
pub mod storage;

pub use change::{
    Applied, ChangeEditorPart, ChangeEffect, ChangeError, ChangeFile, ChangeIntent, ChangeOp,
    ChangeOutcome, ChangeProof, EditorHook, EditorPartOutcome, EditorSent, FileChange, HeldChange,
    HeldEnd,
};
pub use editor::{
    EditorIntent, EditorLeft, EditorProof, EditorRecord, EditorSettle, EditorTxnError, NamedFile,
    SavedFile, derive_files, derive_refusal, pre_state_proven,
};
pub use identity::ProjectIdentity;
pub use ids::{ContentHash, EffectKind, FileState, TxnId, TxnStatus};
pub use journal::{
    DeleteError, FileDelete, FileWrite, IdempotencyKey, Journal, OpenError, QuarantinedTxn,
    ReplayLookupError, ReplayProjection, TxnOutcome, WriteError, WriteGate, canonical_request_hash,
};
pub use listing::{ListError, TxnFilter, TxnRecord};
pub use proof::{FileProof, Proof};
pub use reconcile::{ReconcileError, ReconcileReport};
pub use repair::{RepairOperation, RepairProof, RepairRefusal, RepairReport, RepairRequest};
