//! The input map, the rest: read one action (deadzone and decoded events) and clear
//! an action's events. The clear is a line-level edit of project.godot through the
//! journal, like the other input-map tools (destructive by the classification rule:
//! ProjectSettings persistence, and it removes data).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use godot_mcp_formats::input_event::events_array_span;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::settings::{
    EditPlan, SettingChange, check_action_name, no_events_array, plan_action_edit,
};
use crate::tools::{CallFlags, ToolDef, ToolMeta};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "get_input_action",
                title: "Get an input action",
                description: "Read one input-map action from project.godot: its deadzone and \
                    its key, mouse and joypad events, decoded.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::InputMap,
                effect: None,
            },
            get_input_action,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "clear_input_action_events",
                title: "Clear an input action's events",
                description: "Remove every event of an input-map action in project.godot, \
                    keeping the action and its deadzone.",
                class: SafetyClass::Destructive,
                toolset: Toolset::InputMap,
                effect: Some(EffectKind::File),
            },
            plan_clear_input_action_events,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionArgs {
    /// The action, e.g. move_left.
    action: String,
}

/// One input action as project.godot holds it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InputActionOut {
    action: String,
    deadzone: Option<f64>,
    event_count: usize,
    /// The decoded events (`kind` and that kind's fields), as the formats crate
    /// summarizes them.
    events: Vec<Value>,
}

async fn get_input_action(
    state: Arc<AppState>,
    args: ActionArgs,
    _f: CallFlags,
) -> Result<InputActionOut, ToolError> {
    check_action_name(&args.action).map_err(|e| e.param("action"))?;
    let pg = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let real = state.project.resolve("path", &pg)?;
    let text = crate::tools::common::read_text(&state, "path", &pg, &real)?;
    let info = godot_mcp_formats::parse_project(&text)
        .map_err(|e| crate::tools::scene::read::parse_error(&pg, &e))?;
    let Some(action) = info.input_actions.iter().find(|a| a.name == args.action) else {
        let names: Vec<&str> = info.input_actions.iter().map(|a| a.name.as_str()).collect();
        // Godot's built-in ui_* actions live in the engine until a project overrides them.
        let builtin = if args.action.starts_with("ui_") {
            " Built-in ui_* actions appear in project.godot only once the project changes them."
        } else {
            ""
        };
        return Err(
            ToolError::not_found(format!("input action {} does not exist", args.action))
                .param("action")
                .hint(format!(
                    "Actions in project.godot: {}.{builtin}",
                    names.join(", ")
                )),
        );
    };
    let events = action
        .events
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(InputActionOut {
        action: action.name.clone(),
        deadzone: action.deadzone,
        event_count: action.events.len(),
        events,
    })
}

fn plan_clear_input_action_events(
    state: Arc<AppState>,
    args: ActionArgs,
) -> Result<EditPlan<SettingChange>, ToolError> {
    check_action_name(&args.action).map_err(|e| e.param("action"))?;
    plan_action_edit(
        state,
        args.action,
        |config| format!("Existing: {}", config.keys("input").join(", ")),
        |previous, action| {
            let (open, close) =
                events_array_span(previous).ok_or_else(|| no_events_array(action))?;
            // Only the array's contents change; the deadzone and every other byte stay.
            Ok(format!("{}[]{}", &previous[..open], &previous[close + 1..]))
        },
    )
}
