//! run_commands: several tool calls as one batch. The policy lives in
//! `safety::run_batch`; this file only declares the tool.

use crate::safety::{BatchArgs, EffectKind, SafetyClass, Toolset};
use crate::tools::{ToolDef, ToolMeta};

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::batch::<BatchArgs>(ToolMeta {
        name: "run_commands",
        title: "Run several commands",
        description: "Run several tool calls in order, as one batch. Each entry names a tool and its \
            arguments exactly as a direct call would and is held to that tool's own policy: its \
            toolset must be enabled, a destructive entry needs its own confirm=true, paths are \
            checked; every entry is checked before any runs. The batch goes to the approval gate as \
            its most dangerous entry's class. A failure stops the batch: the result reports \
            aborted_at, skipped_count and what was applied. dry_run previews every entry.",
        class: SafetyClass::Mutating,
        toolset: Toolset::Batch,
        effect: EffectKind::File,
    })]
}
