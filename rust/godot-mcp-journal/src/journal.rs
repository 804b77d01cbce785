//! [`Journal`]: the write gate and the lifecycle of `file` transactions —
//! intent (with pre-state) durable before the effect, an atomic durable effect,
//! and a terminal row carrying a proof re-derived from disk.
//!
//! # Layout
//!
//! `types` (the gate, the errors, the requests and outcomes) and `rows` (the
//! `transactions` rows every kind records) are below `handle` ([`Journal`] itself: its
//! connection, the intent log, the gate, replay lookup), which is below `open` and
//! `file_txn` (the `file` transactions). This module only re-exports.

pub(crate) use crate::effect::to_json;
pub use crate::ids::IdempotencyKey;
pub(crate) use crate::ids::now_ms;

mod file_txn;
mod handle;
mod open;
mod rows;
mod types;
pub(crate) use crate::durable::{apply_effect, ensure_parent};
pub use handle::{JOURNAL_FILE, Journal};
pub(crate) use rows::{NewTxn, in_txn, insert_txn, record_terminal};
pub(crate) use types::journal_error;
pub use types::{DeleteError, WriteError};
pub use types::{
    FileDelete, FileWrite, OpenError, QuarantinedTxn, ReconcileError, ReplayLookupError,
    ReplayProjection, TxnOutcome, WriteGate, canonical_request_hash,
};
pub(crate) use types::{FileEffect, TxnFailure};

#[cfg(test)]
mod tests;
