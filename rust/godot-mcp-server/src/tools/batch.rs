//! run_commands: several tool calls as one batch. The policy lives in
//! `safety::run_batch`; this file only declares the tool.

use rmcp::model::JsonObject;
use serde::Serialize;
use serde_json::Value;

use crate::error::ToolError;
use crate::rules::class;
use crate::rules::{EffectKind, SafetyClass, Toolset};
use crate::tools::{ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::batch::<BatchArgs, BatchResult>(ToolMeta {
        name: "run_commands",
        title: "Run several commands",
        description: "Run several tool calls in order as one batch, each under its own \
            tool's policy, all checked before any runs. A failure stops the batch and reports \
            aborted_at and skipped_count.",
        class: class::Mutating,
        toolset: Toolset::Batch,
        effect: Some(EffectKind::File),
    })]
}

/// Largest batch accepted.
pub(crate) const MAX_BATCH: usize = 100;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchArgs {
    /// Tool calls, in order (destructive ones carry their own confirm=true).
    pub commands: Vec<BatchEntry>,
    /// Stage the entries' file writes and apply them as one transaction at the end:
    /// all land, or none (editor edits and launches are refused).
    #[serde(default)]
    pub atomic: bool,
}

#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchEntry {
    /// Tool name.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: JsonObject,
}

/// run_commands' result (and, on a failure, its error's `details`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct BatchResult {
    #[serde(flatten)]
    pub report: crate::honesty::BatchReport,
    /// The most dangerous entry's class: the batch's.
    pub class: SafetyClass,
    pub dry_run: bool,
    pub may_have_applied: bool,
    /// atomic: the one transaction of every file the batch wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    pub transaction_id: Option<String>,
    pub results: Vec<BatchEntryResult>,
}

/// One entry's outcome in a batch result.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct BatchEntryResult {
    pub index: usize,
    pub tool: String,
    pub ok: bool,
    /// The entry's own result (its tool's outputSchema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The entry's error, when `ok` is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// The error of a batch that stopped (or would stop) at `commands[i]`: the entry's error,
/// its parameter under `commands[i].arguments`, with the full report `out` as details.
/// Half-done is never success.
pub(crate) fn stopped_at(
    i: usize,
    e: ToolError,
    out: Value,
    dry_run: bool,
    hint: Option<String>,
) -> ToolError {
    let verb = if dry_run { "would stop" } else { "stopped" };
    let mut err = ToolError::new(
        e.code,
        format!(
            "run_commands {verb} at commands[{i}] ({}): {}",
            out["results"][i]["tool"].as_str().unwrap_or("?"),
            e.message
        ),
    )
    .param(format!(
        "commands[{i}].arguments{}",
        e.param
            .as_deref()
            .map(|p| format!(".{p}"))
            .unwrap_or_default()
    ))
    .details(out);
    err.required = e.required.clone();
    err.hint = hint.or(e.hint.clone());
    err
}
