//! The journal, read-only: what happened to the project, transaction by transaction.

use godot_mcp_journal::{TxnFilter, TxnRecord, TxnStatus, WriteGate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::honesty::absent_when_none;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::kit::common::count_param;
use crate::tools::{Call, Out, ToolDef, ToolMeta, ToolResult};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "list_transactions",
            title: "List journal transactions",
            description: "Journal transactions, newest first: state, operation, path, proof, \
                reason; and the write gate (a quarantined one blocks writes until \
                `godot-mcp transaction repair`).",
            class: class::ReadOnly,
            toolset: Toolset::Journal,
            effect: None,
        },
        list_transactions,
    )]
}

/// Which transactions to list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StatusFilter {
    Open,
    Committed,
    Compensated,
    Quarantined,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListTransactionsArgs {
    /// Only transactions in this state.
    #[serde(default)]
    status: Option<StatusFilter>,
    /// Most to return (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

/// The transactions and the gate, as the tool and the `godot-mcp://transactions`
/// resource both show them.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Transactions {
    #[schemars(with = "GateSchema")]
    write_gate: WriteGate,
    project_generation: u64,
    returned: usize,
    #[schemars(with = "Vec<TxnSchema>")]
    transactions: Vec<TxnRecord>,
}

/// An agent's open change (begin_change), as `godot-mcp://transactions` lists it.
#[derive(Debug, Serialize)]
struct OpenChange {
    change_id: String,
    files: Vec<crate::planes::project::StagedFile>,
}

// The journal's own types serialize these fields; the journal does not depend on
// schemars, so their schemas are declared here. Test builds check every result
// against them (output_check), so the two cannot drift apart unnoticed.

/// The schema of a serialized [`WriteGate`].
#[derive(JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct GateSchema {
    status: String,
    #[schemars(transform = absent_when_none)]
    quarantined: Option<Vec<QuarantinedSchema>>,
}

#[derive(JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct QuarantinedSchema {
    transaction_id: String,
    reason: String,
}

/// The schema of a serialized [`TxnRecord`].
#[derive(JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct TxnSchema {
    transaction_id: String,
    status: String,
    effect_kind: String,
    operation: String,
    tool_family: String,
    #[schemars(transform = absent_when_none)]
    path: Option<String>,
    #[schemars(transform = absent_when_none)]
    proof_summary: Option<String>,
    #[schemars(transform = absent_when_none)]
    files: Option<Vec<String>>,
    #[schemars(transform = absent_when_none)]
    reason: Option<String>,
    #[schemars(transform = absent_when_none)]
    parent_txn: Option<String>,
    created_at_ms: i64,
    #[schemars(transform = absent_when_none)]
    terminal_at_ms: Option<i64>,
}

/// The transactions (newest first) and the write gate.
pub(crate) fn transactions(
    state: &AppState,
    status: Option<TxnStatus>,
    limit: usize,
) -> Result<Transactions, ToolError> {
    let journal = state.journal.lock();
    let records = journal
        .list_transactions(&TxnFilter { status, limit })
        .map_err(|e| {
            tracing::error!(error = %e, "listing transactions failed");
            ToolError::internal("the journal could not be read")
        })?;
    Ok(Transactions {
        write_gate: journal.gate().clone(),
        project_generation: journal.identity().generation,
        returned: records.len(),
        transactions: records,
    })
}

/// [`transactions`] as JSON (the `godot-mcp://transactions` resource), with the
/// agents' open changes (`open_changes`: id and staged files; left out when none).
/// list_transactions leaves them out: its schema is in the default tools/list.
pub(crate) fn transactions_json(
    state: &AppState,
    status: Option<TxnStatus>,
    limit: usize,
) -> ToolResult {
    let open: Vec<OpenChange> = state
        .changes
        .list()
        .into_iter()
        .map(|(change_id, files)| OpenChange { change_id, files })
        .collect();
    let mut out = serde_json::to_value(transactions(state, status, limit)?)
        .map_err(|e| ToolError::internal(e.to_string()))?;
    if !open.is_empty()
        && let Value::Object(o) = &mut out
    {
        o.insert("open_changes".into(), json!(open));
    }
    Ok(out)
}

async fn list_transactions(
    Call { state, args, .. }: Call<ListTransactionsArgs>,
) -> Out<Transactions> {
    let limit = count_param("limit", args.limit, 100, 1000)?;
    let status = args.status.map(|s| match s {
        StatusFilter::Open => TxnStatus::Open,
        StatusFilter::Committed => TxnStatus::Committed,
        StatusFilter::Compensated => TxnStatus::Compensated,
        StatusFilter::Quarantined => TxnStatus::Quarantined,
    });
    transactions(&state, status, limit)
}
