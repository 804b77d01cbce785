//! manage_toolsets: list toolsets and enable or disable them for this server at run
//! time. Changing the set sends notifications/tools/list_changed.
//!
//! Classed read_only: it changes which tools this server offers, never the project.
//! Toolsets keep the tool list small and focused; they are not the human-oversight
//! layer (that is the approval gate), so an agent may turn them on.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::error::ToolError;
use crate::safety::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::{CallFlags, ToolDef, ToolMeta, ToolResult};

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "manage_toolsets",
            title: "List, enable or disable toolsets",
            description: "List the tool families (toolsets) of this server, which are enabled and \
                which tools each holds; enable or disable some. Disabled tools are hidden from \
                tools/list and refused, inside run_commands too.",
            class: SafetyClass::ReadOnly,
            toolset: Toolset::Toolsets,
            effect: EffectKind::None,
        },
        manage_toolsets,
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManageToolsetsArgs {
    /// Toolsets to enable.
    #[serde(default)]
    enable: Vec<String>,
    /// Toolsets to disable.
    #[serde(default)]
    disable: Vec<String>,
}

fn parse_all(param: &str, names: &[String]) -> Result<Vec<Toolset>, ToolError> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Toolset::parse(n).ok_or_else(|| {
                ToolError::invalid_params(
                    format!("{param}[{i}]"),
                    format!(
                        "unknown toolset {n:?}; toolsets are: {}",
                        Toolset::ALL.map(Toolset::as_str).join(", ")
                    ),
                )
            })
        })
        .collect()
}

async fn manage_toolsets(
    state: Arc<AppState>,
    args: ManageToolsetsArgs,
    _flags: CallFlags,
) -> ToolResult {
    let enable = parse_all("enable", &args.enable)?;
    let disable = parse_all("disable", &args.disable)?;
    let changed = state.safety.set_toolsets(&enable, &disable)?;
    let enabled = state.safety.enabled();
    let toolsets: Vec<_> = Toolset::ALL
        .iter()
        .map(|t| {
            let tools: Vec<&str> = state
                .registry
                .iter()
                .filter(|d| d.meta.toolset == *t)
                .map(|d| d.meta.name)
                .collect();
            json!({
                "name": t.as_str(),
                "enabled": enabled.contains(t),
                "default": Toolset::DEFAULT.contains(t),
                "tools": tools,
            })
        })
        .collect();
    Ok(json!({ "changed": changed, "toolsets": toolsets }))
}
