//! The input map in project.godot: add and remove actions, add an event, read one action
//! (deadzone and decoded events) and clear an action's events. Each edit is a line-level
//! edit of project.godot through the journal, like every settings edit (destructive by
//! the classification rule: ProjectSettings persistence).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use godot_mcp_formats::input_event::events_array_span;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use godot_mcp_formats::input_event::{self, InputEventSpec};
use godot_mcp_formats::project_edit::ConfigText;

use crate::error::ErrorCode;
use crate::tools::kit::project_godot::{
    EditPlan, NameArgs, SettingChange, SettingsSet, meta, plan_edit, plan_remove,
};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "get_input_action",
                title: "Get an input action",
                description: "Read one input-map action from project.godot: its deadzone and \
                    its key, mouse and joypad events, decoded.",
                class: class::ReadOnly,
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
                class: class::Destructive,
                toolset: Toolset::InputMap,
                effect: Some(EffectKind::File),
            },
            plan_clear_input_action_events,
        ),
        ToolDef::planned(
            meta(
                "add_input_action",
                "Add an input action",
                "Add input-map actions to project.godot (several: actions) with a deadzone \
                 and key, mouse or joypad events, in one write.",
                Toolset::InputMap,
            ),
            plan_add_input_action,
        ),
        ToolDef::planned(
            meta(
                "remove_input_action",
                "Remove an input action",
                "Remove an input-map action from project.godot.",
                Toolset::InputMap,
            ),
            plan_remove_input_action,
        ),
        ToolDef::planned(
            meta(
                "add_input_event",
                "Add an event to an input action",
                "Append a key, mouse or joypad event to an input-map action in \
                 project.godot.",
                Toolset::InputMap,
            ),
            plan_add_input_event,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ActionArgs {
    /// The action, e.g. move_left.
    action: String,
}

/// One input action as project.godot holds it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct InputActionOut {
    action: String,
    deadzone: Option<f64>,
    event_count: usize,
    /// The decoded events (`kind` and that kind's fields), as the formats crate
    /// summarizes them.
    events: Vec<Value>,
}

async fn get_input_action(Call { state, args, .. }: Call<ActionArgs>) -> Out<InputActionOut> {
    check_action_name(&args.action).map_err(|e| e.param("action"))?;
    let pg = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let real = state.project.resolve("path", &pg)?;
    let text = crate::tools::kit::common::read_text(&state, "path", &pg, &real)?;
    let info = godot_mcp_formats::parse_project(&text)
        .map_err(|e| crate::tools::kit::scene_doc::parse_error(&pg, &e))?;
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

fn plan_remove_input_action(
    state: Arc<AppState>,
    args: NameArgs,
) -> Result<EditPlan<SettingChange>, ToolError> {
    check_action_name(&args.name)?;
    plan_remove(state, "input", args.name, "input action")
}

pub(crate) fn check_action_name(name: &str) -> Result<(), ToolError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            "name",
            format!("{name:?} is not an action name (letters, digits, _ . -)"),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddInputActionArgs {
    /// Action name, e.g. move_left.
    #[serde(default)]
    name: Option<String>,
    /// Analog deadzone 0-1 (default 0.5).
    #[serde(default)]
    deadzone: Option<f64>,
    /// Events that trigger it.
    #[serde(default)]
    events: Vec<InputEventSpec>,
    /// Several actions in one write, each {name, deadzone, events}.
    #[serde(default)]
    #[schemars(length(max = 256))]
    actions: Vec<ActionSpec>,
}

/// One action of `actions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ActionSpec {
    name: String,
    #[serde(default)]
    deadzone: Option<f64>,
    #[serde(default)]
    events: Vec<InputEventSpec>,
}

/// An action's name and its project.godot value, checked (`at`: where it was given).
fn action_value(at: &str, a: ActionSpec) -> Result<(String, String), ToolError> {
    let param = |p: &str| {
        if at.is_empty() {
            p.to_string()
        } else {
            format!("{at}.{p}")
        }
    };
    check_action_name(&a.name).map_err(|e| e.param(param("name")))?;
    let deadzone = a.deadzone.unwrap_or(0.5);
    if !(0.0..=1.0).contains(&deadzone) {
        return Err(ToolError::invalid_params(
            param("deadzone"),
            "deadzone must be between 0.0 and 1.0",
        ));
    }
    let events = a
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| e.to_variant(&param(&format!("events[{i}]"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((a.name, input_event::input_action_value(deadzone, &events)))
}

fn plan_add_input_action(
    state: Arc<AppState>,
    args: AddInputActionArgs,
) -> Result<EditPlan<SettingsSet>, ToolError> {
    let mut adds = Vec::new();
    match args.name {
        Some(name) => adds.push(action_value(
            "",
            ActionSpec {
                name,
                deadzone: args.deadzone,
                events: args.events,
            },
        )?),
        None if args.deadzone.is_some() || !args.events.is_empty() => {
            return Err(ToolError::invalid_params(
                "name",
                "events need the action's name, e.g. {\"name\": \"jump\", \"events\": [...]}",
            ));
        }
        None => {}
    }
    for (i, a) in args.actions.into_iter().enumerate() {
        adds.push(action_value(&format!("actions[{i}]"), a)?);
    }
    if adds.is_empty() {
        return Err(ToolError::invalid_params(
            "name",
            "name an action ({\"name\": \"jump\", \"events\": [...]}) or several in actions",
        ));
    }
    for (i, (name, _)) in adds.iter().enumerate() {
        if adds[..i].iter().any(|(n, _)| n == name) {
            return Err(ToolError::invalid_params(
                format!("actions[{i}].name"),
                format!("input action {name} is given twice"),
            ));
        }
    }
    plan_edit(state, move |config| {
        let mut config = config.clone();
        let mut changes = Vec::with_capacity(adds.len());
        for (name, value) in adds {
            if config.get("input", &name).is_some() {
                return Err(ToolError::invalid_params(
                    "name",
                    format!("input action {name} already exists"),
                )
                .hint("Add events to it with add_input_event, or remove it first."));
            }
            config = ConfigText::parse(&config.set("input", &name, &value));
            changes.push(SettingChange {
                setting: format!("input/{name}"),
                previous: None,
                value: Some(value),
            });
        }
        Ok((config.text().to_string(), SettingsSet::of(changes)))
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddInputEventArgs {
    /// The action.
    action: String,
    /// The event to append.
    event: InputEventSpec,
}

fn plan_add_input_event(
    state: Arc<AppState>,
    args: AddInputEventArgs,
) -> Result<EditPlan<SettingChange>, ToolError> {
    check_action_name(&args.action).map_err(|e| e.param("action"))?;
    let event = args.event.to_variant("event")?;
    plan_action_edit(
        state,
        args.action,
        |_| "Create it with add_input_action.".to_string(),
        |previous, action| {
            input_event::append_input_event(previous, &event).ok_or_else(|| no_events_array(action))
        },
    )
}

/// Plan replacing input action `action`'s value with what `edit` makes of it
/// (`edit` gets the current value and the action's name). A missing action is
/// NOT_FOUND with the hint `missing` gives for the parsed project.godot.
pub(crate) fn plan_action_edit(
    state: Arc<AppState>,
    action: String,
    missing: impl FnOnce(&ConfigText) -> String,
    edit: impl FnOnce(&str, &str) -> Result<String, ToolError>,
) -> Result<EditPlan<SettingChange>, ToolError> {
    plan_edit(state, move |config| {
        let Some(previous) = config.get("input", &action) else {
            return Err(
                ToolError::not_found(format!("input action {action} does not exist"))
                    .param("action")
                    .hint(missing(config)),
            );
        };
        let value = edit(previous, &action)?;
        Ok((
            config.set("input", &action, &value),
            SettingChange {
                setting: format!("input/{action}"),
                previous: Some(previous.to_string()),
                value: Some(value),
            },
        ))
    })
}

/// An input action whose value has no `events` array this server can edit.
pub(crate) fn no_events_array(action: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ParseError,
        format!("input action {action} has no \"events\" array this server can edit"),
    )
    .param("action")
}
