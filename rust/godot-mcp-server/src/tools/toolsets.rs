//! Toolset discovery and switching: `list_toolsets` says what every toolset is for and
//! whether it is on; `manage_toolsets` turns toolsets on or off within the operator's
//! ceiling. A change sends notifications/tools/list_changed (server.rs).
//!
//! `manage_toolsets` changes this server's tool surface, never the project. By the
//! classification rule it is `mutating`: a reversible change (disabling undoes
//! enabling), with a dry run that says what would change. It must not claim
//! `readOnlyHint`: a client that auto-approves read-only tools would otherwise let an
//! agent widen its own surface unseen; as a mutating call it also goes to the approval
//! gate when one is configured. Toolsets keep the tool list small; they are not the
//! human-oversight layer (that is the gate, and the operator's ceiling bounds them).

use std::collections::BTreeSet;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::rules::{SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::{Call, Out, Plan, ToolDef, ToolMeta};

/// Every registered tool's description, filled in by `Registry::builtin` once every
/// tool is registered (list_toolsets is one of them).
pub type Catalog = Arc<std::sync::OnceLock<Vec<ToolMeta>>>;

pub fn tools(catalog: Catalog) -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "list_toolsets",
                title: "List toolsets",
                description: "Every toolset: purpose, tools, safety classes, whether enabled, \
                    whether the operator allows enabling it.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::Toolsets,
                effect: None,
            },
            move |call| list_toolsets(call, catalog.clone()),
        ),
        ToolDef::planned(
            ToolMeta {
                name: "manage_toolsets",
                title: "Enable or disable toolsets",
                description: "Enable or disable toolsets by name (see list_toolsets): adds or \
                    removes their tools from tools/list.",
                class: SafetyClass::Mutating,
                toolset: Toolset::Toolsets,
                effect: None,
            },
            plan_manage_toolsets,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListToolsetsArgs {}

/// Every toolset, in declaration order.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolsetList {
    toolsets: Vec<ToolsetInfo>,
}

/// One toolset: what it is for, its tools, and whether it is (or may be) on.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolsetInfo {
    name: &'static str,
    purpose: &'static str,
    enabled: bool,
    allowed: bool,
    tool_count: usize,
    classes: Vec<&'static str>,
    tools: Vec<&'static str>,
}

async fn list_toolsets(
    Call { state, .. }: Call<ListToolsetsArgs>,
    catalog: Catalog,
) -> Out<ToolsetList> {
    let catalog = catalog.get().map(Vec::as_slice).unwrap_or_default();
    let enabled = state.safety.enabled();
    let toolsets: Vec<ToolsetInfo> = Toolset::ALL
        .iter()
        .map(|t| {
            let tools: Vec<_> = catalog.iter().filter(|m| m.toolset == *t).collect();
            let classes: BTreeSet<SafetyClass> = tools.iter().map(|m| m.class).collect();
            ToolsetInfo {
                name: t.as_str(),
                purpose: t.purpose(),
                enabled: enabled.contains(t),
                allowed: state.safety.allows(*t),
                tool_count: tools.len(),
                classes: classes.iter().map(|c| c.as_str()).collect(),
                tools: tools.iter().map(|m| m.name).collect(),
            }
        })
        .collect();
    Ok(ToolsetList { toolsets })
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

fn names(set: &BTreeSet<Toolset>) -> Vec<&'static str> {
    set.iter().map(|t| t.as_str()).collect()
}

/// Whether the enabled set changes, and the set afterwards (planned, then as applied).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolsetChange {
    changed: bool,
    enabled: Vec<&'static str>,
}

/// Plan: every name known, nothing outside the ceiling, `toolsets` kept; the effect is
/// the enabled set afterwards. Apply re-checks under the lock and changes the set.
fn plan_manage_toolsets(
    state: Arc<AppState>,
    args: ManageToolsetsArgs,
) -> Result<Plan<ToolsetChange, ToolsetChange>, ToolError> {
    let enable = parse_all("enable", &args.enable)?;
    let disable = parse_all("disable", &args.disable)?;
    let before = state.safety.enabled();
    let after = state.safety.preview_toolsets(&enable, &disable)?;
    let effect = ToolsetChange {
        changed: after != before,
        enabled: names(&after),
    };
    Plan::new(effect, move |_| {
        let changed = state.safety.set_toolsets(&enable, &disable)?;
        Ok(ToolsetChange {
            changed,
            enabled: names(&state.safety.enabled()),
        })
    })
}
