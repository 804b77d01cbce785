//! The journal, read-only: what happened to the project, transaction by transaction.

use std::sync::Arc;

use godot_mcp_journal::{TxnFilter, TxnStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::safety::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::{CallFlags, ToolDef, ToolMeta, ToolResult};

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "list_transactions",
            title: "List journal transactions",
            description: "List journal transactions, newest first: state, operation, path, \
                proof, reason; and the write gate. A quarantined one blocks writes until \
                `godot-mcp transaction repair`.",
            class: SafetyClass::ReadOnly,
            toolset: Toolset::Journal,
            effect: EffectKind::None,
        },
        list_transactions,
    )]
}

/// Which transactions to list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    Open,
    Committed,
    Compensated,
    Quarantined,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTransactionsArgs {
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
pub fn transactions_json(state: &AppState, status: Option<TxnStatus>, limit: usize) -> ToolResult {
    let journal = state.journal.lock();
    let records = journal
        .list_transactions(&TxnFilter { status, limit })
        .map_err(|e| {
            tracing::error!(error = %e, "listing transactions failed");
            ToolError::internal("the journal could not be read")
        })?;
    Ok(json!({
        "write_gate": journal.gate(),
        "project_generation": journal.identity().generation,
        "returned": records.len(),
        "transactions": records,
    }))
}

async fn list_transactions(
    state: Arc<AppState>,
    args: ListTransactionsArgs,
    _flags: CallFlags,
) -> ToolResult {
    let limit = args.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ToolError::invalid_params(
            "limit",
            "limit must be between 1 and 1000",
        ));
    }
    let status = args.status.map(|s| match s {
        StatusFilter::Open => TxnStatus::Open,
        StatusFilter::Committed => TxnStatus::Committed,
        StatusFilter::Compensated => TxnStatus::Compensated,
        StatusFilter::Quarantined => TxnStatus::Quarantined,
    });
    let v: Value = transactions_json(&state, status, limit as usize)?;
    Ok(v)
}
