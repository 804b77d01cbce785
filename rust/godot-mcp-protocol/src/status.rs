//! The server's status frame: what the add-on's dock shows about the server's side.
//!
//! The server sends one [`ServerStatus`] right after the hello and again whenever the
//! write gate or the journal changed, never more often than it changes; the add-on keeps
//! the newest. An older add-on does not know the `status` frame type and ignores it.

use serde::{Deserialize, Serialize};

/// How many recent journal rows a status frame carries at most.
pub const STATUS_RECENT_LIMIT: usize = 20;

/// The server's side of the dock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// The `godot-mcp` server version.
    pub server_version: String,
    /// The project folder the server serves, absolute (what the repair command names).
    pub project_root: String,
    /// Whether the journal accepts writes.
    pub write_gate: GateState,
    /// The newest journal rows, newest first, at most [`STATUS_RECENT_LIMIT`].
    pub recent: Vec<RecentAction>,
}

/// The write gate, as the journal reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum GateState {
    Open,
    /// Start-up reconciliation has not finished (or must run again): writes are refused.
    Unreconciled,
    /// Quarantined transactions block every write until an operator repairs them.
    Closed {
        quarantined: Vec<QuarantinedRow>,
    },
}

/// A quarantined transaction and why it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuarantinedRow {
    pub transaction_id: String,
    pub reason: String,
}

/// One journaled agent action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentAction {
    pub transaction_id: String,
    /// The tool (or, for an editor row, the bridge command) the journal recorded.
    pub tool: String,
    /// The tool's safety class (`mutating`, `destructive`…) when the server knows the
    /// tool by that name; else the effect kind (`file`, `editor_runtime`,
    /// `process_launch`).
    pub class: String,
    /// `open`, `committed`, `compensated` or `quarantined`.
    pub status: String,
    /// Whether the editor put it on its undo history; `None` when not an editor effect
    /// or the reply did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoable: Option<bool>,
    /// A change's files (many files, one transaction), in order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}
