//! project.godot edits: settings and autoloads (the input map's are in
//! `tools/input/map.rs`), and layer names ([`layers`]). All destructive by the
//! classification rule (ProjectSettings persistence; spec names set_setting and
//! register_autoload/unregister_autoload). Each is a line-level edit of the file
//! (`godot_mcp_formats::project_edit`) that leaves every other byte as it was, written
//! through the one write seam with the plan's hash of project.godot as the
//! compare-and-swap expectation.

pub(crate) mod declared;
pub(crate) mod layers;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use godot_mcp_formats::input_event::{self, InputEventSpec, KeyArg};
use godot_mcp_formats::project_edit::{ConfigText, split_setting};
use godot_mcp_formats::variant;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::state::AppState;
use crate::tools::ToolDef;
use crate::tools::kit::common::is_identifier;
use crate::tools::kit::project_godot::{
    EditPlan, NameArgs, SettingChange, SettingsSet, meta, plan_edit, plan_remove,
};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::planned(
            meta(
                "set_setting",
                "Set a project setting",
                "Set project settings in project.godot from JSON `value` or Godot text \
                 `value_text` (several: `settings`; `autoload/Name`: \"res://x.gd\"; \
                 `input/action`: [\"A\", \"Left\"]); other bytes kept. An open editor must reload the project.",
                Toolset::Build,
            ),
            plan_set_setting,
        ),
        ToolDef::planned(
            meta(
                "register_autoload",
                "Register an autoload",
                "Add an autoload (singleton) script or scene to project.godot under a \
                 global name.",
                Toolset::Settings,
            ),
            plan_register_autoload,
        ),
        ToolDef::planned(
            meta(
                "unregister_autoload",
                "Unregister an autoload",
                "Remove an autoload from project.godot (its file is kept).",
                Toolset::Settings,
            ),
            plan_unregister_autoload,
        ),
    ]
}

fn check_setting_name(name: &str) -> Result<(&str, &str), ToolError> {
    let ok = !name.is_empty()
        && name.len() <= 256
        && name.split('/').all(|seg| !seg.is_empty())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '-'));
    // Any section, autoload and input included ([`autoload_setting`], [`input_setting`]:
    // runs 6 and 9 spent refusals and toolset calls on them when they were refused here).
    split_setting(name).filter(|_| ok).ok_or_else(|| {
        ToolError::invalid_params(
            "name",
            format!("{name:?} is not a setting name like application/config/name"),
        )
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetSettingArgs {
    /// Setting path, e.g. application/config/name.
    #[serde(default)]
    name: Option<String>,
    /// The value as JSON.
    #[serde(default)]
    value: Option<Value>,
    /// The value as Godot text, e.g. Vector2i(1280, 720).
    #[serde(default)]
    value_text: Option<String>,
    /// Several at once, name to JSON value (one write), e.g.
    /// {"display/window/size/viewport_width": 480}.
    #[serde(default)]
    settings: Option<serde_json::Map<String, Value>>,
}

/// set_setting's change: the (first) setting, and any others set in the same write.
/// A setting's value as sent: JSON (read by the setting's declared type) or Godot text.
enum SettingValue {
    Json(Value),
    Text(String),
}

/// The value of `name`: exactly one of `value` (JSON) or `value_text` (Godot text).
fn setting_arg(
    value: &Option<Value>,
    value_text: &Option<String>,
) -> Result<SettingValue, ToolError> {
    match (value, value_text) {
        (Some(v), None) => Ok(SettingValue::Json(v.clone())),
        (None, Some(t)) => {
            variant::check_text(t, "value_text")?;
            Ok(SettingValue::Text(t.clone()))
        }
        _ => Err(ToolError::invalid_params(
            "value",
            "give exactly one of `value` (JSON) or `value_text` (Godot Variant text)",
        )),
    }
}

/// The Variant type of a value as project.godot spells it: `"…"` a String, `true` a
/// bool, a number an int or float, `Color(…)` a Color; `None` for what is none of these.
fn text_type(text: &str) -> Option<&'static str> {
    let t = text.trim();
    if t.starts_with('"') {
        return Some("String");
    }
    if t == "true" || t == "false" {
        return Some("bool");
    }
    if t.parse::<i64>().is_ok() {
        return Some("int");
    }
    if t.parse::<f64>().is_ok() {
        return Some("float");
    }
    let head = t.split('(').next().filter(|h| h.len() < t.len())?;
    variant::TYPE_NAMES.iter().copied().find(|n| *n == head)
}

/// A setting's JSON value as Variant text, read by the setting's declared type: the type
/// of the value project.godot holds, else the one Godot declares (`declared`, asked only
/// for a setting the file lacks and a value whose type is not plain: a string, array or
/// object; [`declared::declared_type`] in the server). `"#203040"` for a Color setting is a Color, `[1280, 720]` a Vector2i.
fn typed_setting_text(
    name: &str,
    value: &Value,
    previous: Option<&str>,
    declared: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ToolError> {
    let param = format!("settings.{name}");
    let plain = || Ok(variant::plain_json_text(value, &param)?);
    let ty = match previous.map(text_type) {
        Some(ty) => ty.map(str::to_string),
        None if matches!(value, Value::String(_) | Value::Array(_) | Value::Object(_)) => {
            declared(name)
        }
        None => None,
    };
    // Which types JSON already says (String, Array, Dictionary, any): json_as_declared_text.
    let Some(ty) = ty else {
        return plain();
    };
    match godot_mcp_formats::coerce::json_as_declared_text(value, &ty) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => plain(),
        Err(e) => Err(ToolError::invalid_params(
            &param,
            format!("{name} is a {ty}: {e}"),
        )),
    }
}

fn plan_set_setting(
    state: Arc<AppState>,
    args: SetSettingArgs,
) -> Result<EditPlan<SettingsSet>, ToolError> {
    let mut sets: Vec<(String, SettingValue)> = Vec::new();
    match &args.name {
        Some(name) => sets.push((name.clone(), setting_arg(&args.value, &args.value_text)?)),
        None if args.value.is_some() || args.value_text.is_some() => {
            return Err(ToolError::invalid_params(
                "name",
                "a value needs the setting's name, e.g. {\"name\": \"application/config/name\", \"value\": \"My Game\"}",
            ));
        }
        None => {}
    }
    for (name, v) in args.settings.iter().flatten() {
        sets.push((name.clone(), SettingValue::Json(v.clone())));
    }
    if sets.is_empty() {
        return Err(ToolError::invalid_params(
            "name",
            "name a setting and its value ({\"name\": \"application/config/name\", \"value\": \"My Game\"}) or several in settings ({\"settings\": {\"display/window/size/viewport_width\": 480}})",
        ));
    }
    for (name, _) in &sets {
        check_setting_name(name)?;
    }
    let st = state.clone();
    plan_edit(state, move |config| {
        let declared = |name: &str| declared::declared_type(name).map(str::to_string);
        let mut config = config.clone();
        let mut changes = Vec::with_capacity(sets.len());
        for (name, value) in sets {
            let (section, key) = check_setting_name(&name)?;
            let previous = config.get(section, key).map(str::to_string);
            let value = match value {
                _ if section == "autoload" => autoload_setting(&st, key, &value)?,
                SettingValue::Json(v) if section == "input" => input_setting(key, &v)?,
                SettingValue::Text(t) => t,
                SettingValue::Json(v) => {
                    typed_setting_text(&name, &v, previous.as_deref(), &declared)?
                }
            };
            config = ConfigText::parse(&config.set(section, key, &value));
            changes.push(SettingChange {
                setting: name.clone(),
                previous,
                value: Some(value),
            });
        }
        Ok((config.text().to_string(), SettingsSet::of(changes)))
    })
}

fn check_identifier(param: &str, name: &str) -> Result<(), ToolError> {
    if name.len() <= 128 && is_identifier(name) {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            param,
            format!("{name:?} is not a valid name (letters, digits, _)"),
        ))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegisterAutoloadArgs {
    /// Global name, e.g. GameState.
    name: String,
    /// The script or scene.
    path: ResPath,
    /// Reachable by name as a global (default true).
    #[serde(default)]
    singleton: Option<bool>,
}

/// `autoload/<name>` through set_setting: `"res://x.gd"` (a singleton, as
/// register_autoload makes it) or project.godot's own `"*res://x.gd"`, checked as
/// register_autoload checks it.
fn autoload_setting(
    state: &AppState,
    name: &str,
    value: &SettingValue,
) -> Result<String, ToolError> {
    let text = match value {
        SettingValue::Json(Value::String(s)) => s.clone(),
        SettingValue::Text(t) => t
            .strip_prefix('"')
            .and_then(|u| u.strip_suffix('"'))
            .unwrap_or(t)
            .to_string(),
        SettingValue::Json(_) => {
            return Err(ToolError::invalid_params(
                "value",
                format!("autoload/{name} takes the script or scene: \"res://game_state.gd\""),
            ));
        }
    };
    let path = ResPath::parse(text.strip_prefix('*').unwrap_or(&text))
        .map_err(|e| ToolError::invalid_params("value", format!("autoload/{name}: {e}")))?;
    autoload_value(state, ("name", "value"), name, &path, true)
}

/// `input/<action>` through set_setting, as add_input_action writes it: its events, a
/// key by name (`["A", "Left"]`, the physical key, as the editor records) or an event
/// object (`{"type": "key", "keycode": "Space"}`, `{"type": "mouse_button", …}`), or
/// `{"deadzone": 0.5, "events": [...]}`.
fn input_setting(action: &str, v: &Value) -> Result<String, ToolError> {
    let bad = || {
        ToolError::invalid_params(
            "value",
            format!(
                "input/{action} takes its events: [\"A\", \"Left\"] (keys by name), or \
                 [{{\"type\": \"key\", \"keycode\": \"Space\"}}, {{\"type\": \
                 \"mouse_button\", \"button_index\": 1}}], or {{\"deadzone\": 0.5, \
                 \"events\": [...]}}"
            ),
        )
    };
    let (deadzone, events) = match v {
        Value::Array(e) => (0.5, e),
        Value::Object(m) if m.keys().all(|k| k == "events" || k == "deadzone") => {
            let Some(Value::Array(e)) = m.get("events") else {
                return Err(bad());
            };
            let d = match m.get("deadzone") {
                None => 0.5,
                Some(d) => d.as_f64().ok_or_else(bad)?,
            };
            (d, e)
        }
        _ => return Err(bad()),
    };
    if !(0.0..=1.0).contains(&deadzone) {
        return Err(ToolError::invalid_params(
            "value",
            "deadzone must be between 0.0 and 1.0",
        ));
    }
    let texts = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let at = format!("value[{i}]");
            let spec: InputEventSpec = match e {
                Value::String(key) => InputEventSpec::Key {
                    keycode: None,
                    physical_keycode: Some(KeyArg::Name(key.clone())),
                    shift: false,
                    ctrl: false,
                    alt: false,
                },
                _ => serde_json::from_value(e.clone())
                    .map_err(|err| ToolError::invalid_params(at.clone(), err.to_string()))?,
            };
            spec.to_variant(&at).map_err(ToolError::from)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(input_event::input_action_value(deadzone, &texts))
}

/// An autoload entry's value (`"*res://…"` for a singleton), its name and file checked;
/// a refusal names the parameter that holds each (the name's, the path's).
fn autoload_value(
    state: &AppState,
    (name_param, path_param): (&str, &str),
    name: &str,
    path: &ResPath,
    singleton: bool,
) -> Result<String, ToolError> {
    check_identifier(name_param, name)?;
    if !matches!(
        path.extension().as_deref(),
        Some("gd" | "cs" | "tscn" | "scn")
    ) {
        return Err(ToolError::invalid_params(
            path_param,
            "an autoload is a script (.gd, .cs) or a scene (.tscn, .scn)",
        ));
    }
    let real = state.project.resolve(path_param, path)?;
    if !real.is_file() {
        return Err(ToolError::not_found(format!("{path} does not exist"))
            .param(path_param)
            .hint("Create the script first (write_script), or list files with list_files."));
    }
    let star = if singleton { "*" } else { "" };
    Ok(variant::quote(&format!("{star}{path}")))
}

fn plan_register_autoload(
    state: Arc<AppState>,
    args: RegisterAutoloadArgs,
) -> Result<EditPlan<SettingChange>, ToolError> {
    let value = autoload_value(
        &state,
        ("name", "path"),
        &args.name,
        &args.path,
        args.singleton.unwrap_or(true),
    )?;
    plan_add(
        state,
        ("autoload", "autoload"),
        args.name,
        value,
        "Unregister it first with unregister_autoload.",
    )
}

/// Plan adding `name = value` to `section`, refused when `name` is there already.
/// `what` names the entry in the refusal; `hint` says what to do instead.
pub(crate) fn plan_add(
    state: Arc<AppState>,
    (section, what): (&'static str, &'static str),
    name: String,
    value: String,
    hint: &'static str,
) -> Result<EditPlan<SettingChange>, ToolError> {
    plan_edit(state, move |config| {
        if config.get(section, &name).is_some() {
            return Err(
                ToolError::invalid_params("name", format!("{what} {name} already exists"))
                    .hint(hint),
            );
        }
        Ok((
            config.set(section, &name, &value),
            SettingChange {
                setting: format!("{section}/{name}"),
                previous: None,
                value: Some(value),
            },
        ))
    })
}

fn plan_unregister_autoload(
    state: Arc<AppState>,
    args: NameArgs,
) -> Result<EditPlan<SettingChange>, ToolError> {
    plan_remove(state, "autoload", args.name, "autoload")
}

#[cfg(test)]
mod tests {
    use super::typed_setting_text;
    use serde_json::json;

    fn typed(value: serde_json::Value, previous: Option<&str>, declared: Option<&str>) -> String {
        typed_setting_text("a/b", &value, previous, &|_| declared.map(String::from))
            .unwrap_or_else(|e| format!("error: {}", e.message))
    }

    /// A JSON value is read by the setting's declared type: the type of the value the
    /// file holds, else the declared one; plain JSON only when neither says.
    #[test]
    fn a_setting_value_is_read_by_its_declared_type() {
        let clear = "Color(0.1254902, 0.1882353, 0.2509804, 1)";
        assert_eq!(
            typed(json!("#203040"), Some("Color(1, 1, 1, 1)"), None),
            clear
        );
        assert_eq!(typed(json!("#203040"), None, Some("Color")), clear);
        assert_eq!(typed(json!("#203040"), None, None), "\"#203040\"");
        assert_eq!(
            typed(json!([1280, 720]), Some("Vector2i(1, 1)"), None),
            "Vector2i(1280, 720)"
        );
        assert_eq!(
            typed(json!([1280, 720]), None, Some("Vector2i")),
            "Vector2i(1280, 720)"
        );
        assert_eq!(typed(json!(2), Some("1.5"), None), "2.0");
        assert_eq!(
            typed(json!("My Game"), Some("\"Old\""), Some("int")),
            "\"My Game\""
        );
        assert_eq!(
            typed(
                json!(["4.4", "Mobile"]),
                Some("PackedStringArray(\"4.4\")"),
                None
            ),
            "PackedStringArray(\"4.4\", \"Mobile\")"
        );
        let e = typed(json!("wide"), Some("480"), None);
        assert!(e.starts_with("error: a/b is a int"), "{e}");
        // The declared type is asked only for an absent setting with a non-plain value.
        let asked = std::cell::Cell::new(0);
        let declared = |_: &str| {
            asked.set(asked.get() + 1);
            Some("Color".to_string())
        };
        typed_setting_text("a/b", &json!(3), None, &declared).unwrap();
        typed_setting_text("a/b", &json!("x"), Some("\"y\""), &declared).unwrap();
        assert_eq!(asked.get(), 0);
    }
}
