//! project.godot as a file the tools edit: read it (bounded), plan an edit of it through
//! the one write seam (`file_write::plan_write`, guarded by the file's hash), remove a
//! section's key, and the shapes such an edit answers with. The settings domain
//! (`set_setting`, autoloads, layer names) and the input map build on it; neither imports
//! the other.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use godot_mcp_formats::project_edit::ConfigText;

use crate::error::{ErrorCode, ToolError};
use crate::honesty::Persistence;
use crate::planes::project::Expect;
use crate::respath::ResPath;
use crate::rules::{Toolset, class};
use crate::state::AppState;
use crate::tools::kit::file_write::{FileEffect, plan_write};
use crate::tools::{Also, Committed, Plan, ToolMeta};

/// A project.godot tool: destructive, its effect a file write (every ProjectSettings
/// write is).
pub(crate) fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    toolset: Toolset,
) -> ToolMeta<class::Destructive> {
    ToolMeta::file_write(toolset, name, title, description)
}

/// What a project.godot edit changes, on top of the file write itself.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SettingChange {
    pub(crate) setting: String,
    /// Variant text before; `None` when the setting was absent.
    pub(crate) previous: Option<String>,
    /// Variant text after; `None` when the setting is removed.
    pub(crate) value: Option<String>,
}

const PROJECT_GODOT: &str = "res://project.godot";
const MAX_PROJECT_GODOT: u64 = 4 * 1024 * 1024;

pub(crate) fn read_project_godot(state: &AppState) -> Result<(ResPath, String), ToolError> {
    let path = ResPath::parse(PROJECT_GODOT).map_err(|e| ToolError::internal(e.to_string()))?;
    let real = state.project.resolve("path", &path)?;
    let meta = std::fs::metadata(&real).map_err(|e| ToolError::io(PROJECT_GODOT, &e))?;
    if meta.len() > MAX_PROJECT_GODOT {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            "project.godot is larger than 4 MiB",
        ));
    }
    let text = std::fs::read_to_string(&real).map_err(|e| ToolError::io(PROJECT_GODOT, &e))?;
    Ok((path, text))
}

/// A project.godot edit: the file write's effect joined with the change it makes.
pub(crate) type EditPlan<C> = Plan<Also<FileEffect, C>, Committed>;

/// Plan an edit of project.godot: `edit` gets the parsed file and returns the new
/// text and the change it makes.
pub(crate) fn plan_edit<C: Serialize + JsonSchema>(
    state: Arc<AppState>,
    edit: impl FnOnce(&ConfigText) -> Result<(String, C), ToolError>,
) -> Result<EditPlan<C>, ToolError> {
    let (path, text) = read_project_godot(&state)?;
    let config = ConfigText::parse(&text);
    let (new_text, change) = edit(&config)?;
    let before = godot_mcp_journal::ContentHash::of(text.as_bytes()).to_string();
    let plan = plan_write(
        &state,
        "path",
        path,
        new_text.into_bytes(),
        Expect::Sha256(&before),
        Persistence::project_settings_on_disk(),
    )?;
    Ok(plan.map_effect(|base| Also { base, more: change }))
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SettingsSet {
    setting: String,
    /// Variant text before; `None` when the setting was absent.
    previous: Option<String>,
    /// Variant text after.
    value: Option<String>,
    /// The other settings set, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    more: Vec<SettingChange>,
}

impl SettingsSet {
    /// The changes of one write: the first at the top level, the others in `more`.
    pub(crate) fn of(changes: Vec<SettingChange>) -> Self {
        let mut changes = changes.into_iter();
        let first = changes.next().expect("one setting at least");
        Self {
            setting: first.setting,
            previous: first.previous,
            value: first.value,
            more: changes.collect(),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NameArgs {
    /// The autoload or input action name.
    pub(crate) name: String,
}

pub(crate) fn plan_remove(
    state: Arc<AppState>,
    section: &'static str,
    name: String,
    what: &'static str,
) -> Result<EditPlan<SettingChange>, ToolError> {
    plan_edit(state, move |config| {
        let previous = config.get(section, &name).map(str::to_string);
        let text = config.remove(section, &name).ok_or_else(|| {
            ToolError::not_found(format!("{what} {name} does not exist in project.godot"))
                .param("name")
                .hint(format!("Existing: {}", config.keys(section).join(", ")))
        })?;
        Ok((
            text,
            SettingChange {
                setting: format!("{section}/{name}"),
                previous,
                value: None,
            },
        ))
    })
}
