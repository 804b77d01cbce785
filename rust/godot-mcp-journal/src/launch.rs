//! `process_launch` transactions: the durable launch receipt of a supervised
//! Godot process, its terminal result, and the reconciliation of survivors.
//!
//! # Lifecycle
//!
//! 1. [`Journal::begin_launch`] records the intent (nonce, endpoint, control
//!    socket inode, session directory) before anything is spawned: in the WAL,
//!    so it survives the death of the server; fsynced with the receipt.
//! 2. The supervisor spawns a *gated* process: it cannot run Godot until the
//!    supervisor releases it, which it does only after
//!    [`Journal::record_receipt`] made the receipt (pid, start time, process
//!    group) durable. A supervisor killed before that closes the gate pipe by
//!    dying, and the gated process exits without ever running Godot.
//! 3. [`Journal::finish_launch`] records the terminal result (exit code or
//!    signal, and the emptiness of the boundary) as `committed`.
//!
//! # Reconciliation of survivors
//!
//! An open launch found at startup is resolved from its receipt (see
//! `derive_launches`): a receipt from another boot signals nothing; pid and
//! start time (field 22 of `/proc/<pid>/stat`) say whether the process at the
//! recorded pid is the launched one, and if so its process group, nonce and
//! control-socket inode must all match too — anything less is a partial match,
//! quarantined and never signalled. An exact leader's group is killed; a gone
//! leader's group is enumerated and only members proven the launch's (nonce in
//! their environment or command line, started after the leader) are killed,
//! as are the launch's processes that left the group (a child Godot starts
//! with `OS.create_process` is in a session of its own, with the nonce in its
//! environment).
//! The boundary is then proven empty (or not); the session's output is
//! archived; the row becomes `compensated` (nothing of the launch runs any
//! more) or `quarantined`.
//!
//! On Windows the boundary is a named Job Object ([`Boundary::JobObject`], named
//! by [`job_name`] from the nonce); see `derive_launches` for how it is
//! reconciled.
//!
//! # Layout
//!
//! `types` (the words) is below `record` (the journal side) and `boundary` (the
//! processes, through the process-table seam), which are below `derive` (reconciling
//! open launches). This module only re-exports.
//!
//! [`Journal::begin_launch`]: crate::Journal::begin_launch
//! [`Journal::record_receipt`]: crate::Journal::record_receipt
//! [`Journal::finish_launch`]: crate::Journal::finish_launch

mod boundary;
mod derive;
mod record;
mod types;

pub use boundary::{
    GroupMembers, JobView, LeaderMatch, archive_session, empty_boundary, identify_escaped,
    identify_job_members, identify_members, match_leader, retained_export_bytes,
    signal_proven_members,
};
pub(crate) use derive::derive_launches;
pub use types::NONCE_ENV;
pub use types::{
    ARCHIVE_DIR, Boundary, EXPORT_PARTIAL, LaunchEnd, LaunchError, LaunchIntent, LaunchProof,
    LaunchReceipt, SESSIONS_DIR, job_name,
};
