//! run_commands: several tool calls as one batch. The policy lives in
//! `safety::run_batch`; this file only declares the tool.

use crate::safety::{BatchArgs, BatchResult, EffectKind, SafetyClass, Toolset};
use crate::tools::{ToolDef, ToolMeta};

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::batch::<BatchArgs, BatchResult>(ToolMeta {
        name: "run_commands",
        title: "Run several commands",
        description: "Run several tool calls in order as one batch, each under its own \
            tool's policy, all checked before any runs. A failure stops the batch and reports \
            aborted_at and skipped_count.",
        class: SafetyClass::Mutating,
        toolset: Toolset::Batch,
        effect: Some(EffectKind::File),
    })]
}
