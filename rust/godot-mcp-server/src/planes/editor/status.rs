//! The dock's status feed: what the bridge's status publisher sends the add-on (write
//! gate, recent journal rows), read from a serving server's state.

use std::sync::{Arc, Weak};

use godot_mcp_journal::{TxnFilter, WriteGate};
use godot_mcp_protocol::{
    GateState, QuarantinedRow, RecentAction, STATUS_RECENT_LIMIT, ServerStatus,
};

use crate::planes::project::Store;

/// Where the status publisher gets what it sends.
pub struct StatusFeed {
    /// Cheap, called every `STATUS_POLL`: a value that changes whenever the status may
    /// have changed (`None`: nothing to report, e.g. the server is shutting down).
    pub stamp: Box<dyn Fn() -> Option<StatusStamp> + Send>,
    /// The full status, read only when the stamp moved or a new connection came.
    pub read: Box<dyn Fn() -> Option<ServerStatus> + Send>,
}

/// The journal's change stamp and the gate's shape: a quarantine or a reconciliation
/// changes journal rows, but the gate is compared too so no gate change can hide.
pub(crate) type StatusStamp = (u64, GateStamp);

/// The write gate reduced to what a change of it must change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateStamp {
    Open,
    Unreconciled,
    Closed(usize),
}

/// The class of a tool by its name (`read_only`, `mutating`, ...), as the registry
/// above the planes knows it; the dock shows it beside each recent action.
pub(crate) type ClassOf = Arc<dyn Fn(&str) -> Option<&'static str> + Send + Sync>;

/// The status feed of a serving server: its journal's change stamp, gate and newest rows.
/// Holds the state weakly, so it never keeps a stopped server alive.
pub(crate) fn status_feed<S: Store + Send + Sync + 'static>(
    state: &Arc<S>,
    class_of: ClassOf,
) -> StatusFeed {
    let weak: Weak<S> = Arc::downgrade(state);
    let w2 = weak.clone();
    StatusFeed {
        stamp: Box::new(move || {
            let state = weak.upgrade()?;
            let journal = state.journal().lock();
            let gate = match journal.gate() {
                WriteGate::Open => GateStamp::Open,
                WriteGate::Unreconciled => GateStamp::Unreconciled,
                WriteGate::Closed { quarantined } => GateStamp::Closed(quarantined.len()),
            };
            Some((journal.change_stamp(), gate))
        }),
        read: Box::new(move || w2.upgrade().and_then(|s| read_status(&*s, &*class_of))),
    }
}

/// The status as it is now (`None` if the journal cannot be read; logged).
pub(super) fn read_status(
    state: &impl Store,
    class_of: &(dyn Fn(&str) -> Option<&'static str> + Send + Sync),
) -> Option<ServerStatus> {
    let journal = state.journal().lock();
    let write_gate = match journal.gate() {
        WriteGate::Open => GateState::Open,
        WriteGate::Unreconciled => GateState::Unreconciled,
        WriteGate::Closed { quarantined } => GateState::Closed {
            quarantined: quarantined
                .iter()
                .map(|q| QuarantinedRow {
                    transaction_id: q.transaction_id.to_string(),
                    reason: q.reason.clone(),
                })
                .collect(),
        },
    };
    let rows = journal
        .list_transactions(&TxnFilter {
            status: None,
            limit: STATUS_RECENT_LIMIT,
        })
        .map_err(|e| {
            tracing::warn!(error = %e, "editor bridge: the journal could not be read for the dock");
        })
        .ok()?;
    drop(journal);
    let recent = rows
        .into_iter()
        .map(|r| RecentAction {
            transaction_id: r.transaction_id.to_string(),
            class: class_of(&r.operation)
                .unwrap_or(r.effect_kind.as_str())
                .to_owned(),
            tool: r.operation,
            status: r.status.as_str().to_owned(),
            undoable: r.undoable,
            files: r.files,
        })
        .collect();
    Some(ServerStatus {
        server_version: env!("CARGO_PKG_VERSION").into(),
        project_root: state.project().root().display().to_string(),
        write_gate,
        recent,
    })
}
