//! `project.godot` ([`ProjectInfo`]): Godot's ConfigFile format read into the
//! settings tools care about (name, main scene, features, autoloads, input
//! actions, enabled editor plugins), with every section also kept raw.

use serde::Serialize;

use crate::error::{ErrorKind, ParseError, Position};
use crate::literal::Literal;
use crate::text::{HeaderMode, Property, Section, parse_document};

/// The `config_version` Godot 4 writes.
pub const SUPPORTED_CONFIG_VERSION: i64 = 5;

/// A parsed `project.godot`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectInfo {
    /// `config_version=` (5 for Godot 4).
    pub config_version: i64,
    /// `application/config/name`.
    pub name: Option<String>,
    /// `application/config/description`.
    pub description: Option<String>,
    /// `application/run/main_scene`: a `res://` path or a `uid://`.
    pub main_scene: Option<String>,
    /// `application/config/icon`.
    pub icon: Option<String>,
    /// `application/config/features`, e.g. `["4.4", "Forward Plus"]`.
    pub features: Vec<String>,
    /// `[autoload]` entries, in file order.
    pub autoloads: Vec<Autoload>,
    /// `[input]` actions, in file order.
    pub input_actions: Vec<InputAction>,
    /// `editor_plugins/enabled`: `res://…/plugin.cfg` paths.
    pub enabled_plugins: Vec<String>,
    /// Lines before the first section (`config_version=5`).
    pub preamble: Vec<Property>,
    /// Every section as written, in file order.
    pub sections: Vec<Section>,
}

/// One `[autoload]` entry: `Name="*res://path"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Autoload {
    /// The autoload's node name (and global name if `singleton`).
    pub name: String,
    /// The script or scene path, without the `*`.
    pub path: String,
    /// `true` when the value starts with `*`: registered as a global singleton.
    pub singleton: bool,
}

/// One `[input]` action.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputAction {
    /// The action name, e.g. `move_left`.
    pub name: String,
    /// `"deadzone"`, when written.
    pub deadzone: Option<f64>,
    /// The bound events, summarized, in file order; `None` for an entry that is
    /// not an `Object(InputEvent…)` (the `null` the editor leaves behind), which
    /// Godot skips.
    pub events: Vec<Option<InputEventSummary>>,
}

/// The gist of one `Object(InputEvent…, …)` of an input action.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum InputEventSummary {
    /// `InputEventKey`.
    Key {
        /// Layout-independent key code (what Godot's editor binds by default); 0 if unused.
        physical_keycode: i64,
        /// Layout-dependent key code; 0 if unused.
        keycode: i64,
        /// Key label; 0 if unused.
        key_label: i64,
        /// A readable name of the key, e.g. `"A"`, `"Left"`, `"Space"`, when known.
        key: Option<String>,
        /// Required modifiers among `alt`, `shift`, `ctrl`, `meta`.
        modifiers: Vec<String>,
    },
    /// `InputEventMouseButton`.
    MouseButton {
        /// Godot's `MouseButton` value (1 left, 2 right, 3 middle, 4/5 wheel …).
        button_index: i64,
        /// A readable name, e.g. `"Left"`, when known.
        button: Option<String>,
        /// Whether a double click is required.
        double_click: bool,
    },
    /// `InputEventJoypadButton`.
    JoypadButton {
        /// Godot's `JoyButton` value.
        button_index: i64,
        /// Device id (-1: all devices).
        device: i64,
    },
    /// `InputEventJoypadMotion`.
    JoypadMotion {
        /// Godot's `JoyAxis` value.
        axis: i64,
        /// Direction: -1.0 or 1.0.
        axis_value: f64,
        /// Device id (-1: all devices).
        device: i64,
    },
    /// Any other `InputEvent` class (kept by name).
    Other {
        /// The class, e.g. `InputEventScreenTouch`.
        class: String,
    },
}

impl ProjectInfo {
    /// The effective value of `key` in `[section]` (the last one written wins,
    /// as in Godot's ConfigFile).
    pub fn setting(&self, section: &str, key: &str) -> Option<&Property> {
        self.sections
            .iter()
            .filter(|s| s.tag == section)
            .flat_map(|s| s.properties.iter())
            .rfind(|p| p.name == key)
    }

    /// The input action named `name`.
    pub fn input_action(&self, name: &str) -> Option<&InputAction> {
        self.input_actions.iter().find(|a| a.name == name)
    }
}

/// Parses `project.godot`.
///
/// ```
/// let p = godot_mcp_formats::parse_project(
///     "config_version=5\n\n[application]\n\nconfig/name=\"Demo\"\n\n[autoload]\n\nGame=\"*res://game.gd\"\n",
/// ).unwrap();
/// assert_eq!(p.name.as_deref(), Some("Demo"));
/// assert!(p.autoloads[0].singleton);
/// ```
pub fn parse_project(src: &str) -> Result<ProjectInfo, ParseError> {
    let doc = parse_document(src, HeaderMode::Simple)?;
    let config_version = match doc.preamble.iter().rfind(|p| p.name == "config_version") {
        None => {
            return Err(ParseError::new(
                ErrorKind::UnsupportedFormat,
                Position { line: 1, column: 1 },
                "no config_version= before the first section",
            ));
        }
        Some(p) => match p.value {
            Literal::Int(v) if v == SUPPORTED_CONFIG_VERSION => v,
            _ => {
                return Err(p.value_mark.error(
                    src,
                    ErrorKind::UnsupportedFormat,
                    format!(
                        "config_version={} is not supported (Godot 4 writes config_version=5)",
                        p.text
                    ),
                ));
            }
        },
    };
    let mut info = ProjectInfo {
        config_version,
        name: None,
        description: None,
        main_scene: None,
        icon: None,
        features: Vec::new(),
        autoloads: Vec::new(),
        input_actions: Vec::new(),
        enabled_plugins: Vec::new(),
        preamble: doc.preamble,
        sections: Vec::new(),
    };
    for section in &doc.sections {
        for prop in &section.properties {
            match (section.tag.as_str(), prop.name.as_str()) {
                ("application", "config/name") => info.name = Some(string(src, prop)?),
                ("application", "config/description") => {
                    info.description = Some(string(src, prop)?);
                }
                ("application", "run/main_scene") => info.main_scene = Some(string(src, prop)?),
                ("application", "config/icon") => info.icon = Some(string(src, prop)?),
                ("application", "config/features") => info.features = string_list(src, prop)?,
                ("editor_plugins", "enabled") => info.enabled_plugins = string_list(src, prop)?,
                ("autoload", _) => {
                    let autoload = autoload(src, prop)?;
                    info.autoloads.retain(|a| a.name != autoload.name);
                    info.autoloads.push(autoload);
                }
                ("input", _) => {
                    let action = input_action(prop);
                    info.input_actions.retain(|a| a.name != action.name);
                    info.input_actions.push(action);
                }
                _ => {}
            }
        }
    }
    info.sections = doc.sections;
    Ok(info)
}

fn structure(src: &str, prop: &Property, message: String) -> ParseError {
    prop.value_mark.error(src, ErrorKind::Structure, message)
}

fn string(src: &str, prop: &Property) -> Result<String, ParseError> {
    match &prop.value {
        Literal::String(s) => Ok(s.clone()),
        _ => Err(structure(
            src,
            prop,
            format!("{} must be a string, found {}", prop.name, prop.text),
        )),
    }
}

fn string_list(src: &str, prop: &Property) -> Result<Vec<String>, ParseError> {
    prop.value.as_string_list().ok_or_else(|| {
        structure(
            src,
            prop,
            format!(
                "{} must be a PackedStringArray, found {}",
                prop.name, prop.text
            ),
        )
    })
}

fn autoload(src: &str, prop: &Property) -> Result<Autoload, ParseError> {
    let value = string(src, prop)?;
    let (singleton, path) = match value.strip_prefix('*') {
        Some(rest) => (true, rest.to_owned()),
        None => (false, value),
    };
    if path.is_empty() {
        return Err(structure(
            src,
            prop,
            format!("autoload {} has an empty path", prop.name),
        ));
    }
    Ok(Autoload {
        name: prop.name.clone(),
        path,
        singleton,
    })
}

/// One action, read as Godot's `InputMap::load_from_project_settings` reads it:
/// a value that is not a dictionary is an action with no events, a `deadzone`
/// that is not a number is absent, and an entry of `events` that is not an
/// `Object(InputEvent…)` (the `null` the editor leaves after a removed event)
/// is kept as `None`, never an error.
fn input_action(prop: &Property) -> InputAction {
    let deadzone = prop.value.dict_get("deadzone").and_then(Literal::as_f64);
    let events = match prop.value.dict_get("events") {
        Some(Literal::Array(items)) => items.iter().map(summarize_event).collect(),
        _ => Vec::new(),
    };
    InputAction {
        name: prop.name.clone(),
        deadzone,
        events,
    }
}

fn summarize_event(event: &Literal) -> Option<InputEventSummary> {
    let Literal::Object { class, .. } = event else {
        return None;
    };
    let int = |name: &str| {
        event
            .object_get(name)
            .and_then(Literal::as_int)
            .unwrap_or(0)
    };
    let flag = |name: &str| {
        event
            .object_get(name)
            .and_then(Literal::as_bool)
            .unwrap_or(false)
    };
    Some(match class.as_str() {
        "InputEventKey" => {
            let physical_keycode = int("physical_keycode");
            let keycode = int("keycode");
            let key_label = int("key_label");
            let code = [physical_keycode, keycode, key_label]
                .into_iter()
                .find(|&c| c != 0)
                .unwrap_or(0);
            let modifiers = ["alt", "shift", "ctrl", "meta"]
                .into_iter()
                .filter(|m| flag(&format!("{m}_pressed")))
                .map(str::to_owned)
                .collect();
            InputEventSummary::Key {
                physical_keycode,
                keycode,
                key_label,
                key: key_name(code),
                modifiers,
            }
        }
        "InputEventMouseButton" => {
            let button_index = int("button_index");
            InputEventSummary::MouseButton {
                button_index,
                button: mouse_button_name(button_index).map(str::to_owned),
                double_click: flag("double_click"),
            }
        }
        "InputEventJoypadButton" => InputEventSummary::JoypadButton {
            button_index: int("button_index"),
            device: int("device"),
        },
        "InputEventJoypadMotion" => InputEventSummary::JoypadMotion {
            axis: int("axis"),
            axis_value: event
                .object_get("axis_value")
                .and_then(Literal::as_f64)
                .unwrap_or(0.0),
            device: int("device"),
        },
        other => InputEventSummary::Other {
            class: other.to_owned(),
        },
    })
}

/// Readable names for Godot's `Key` enum values (printable keys and the
/// common special keys).
fn key_name(code: i64) -> Option<String> {
    const SPECIAL: i64 = 1 << 22; // Godot's KEY_SPECIAL
    let named = match code {
        32 => "Space",
        c if (33..=126).contains(&c) => {
            return u8::try_from(c)
                .ok()
                .map(|b| (b as char).to_ascii_uppercase().to_string());
        }
        c if c == SPECIAL + 1 => "Escape",
        c if c == SPECIAL + 2 => "Tab",
        c if c == SPECIAL + 4 => "Backspace",
        c if c == SPECIAL + 5 => "Enter",
        c if c == SPECIAL + 6 => "Kp Enter",
        c if c == SPECIAL + 7 => "Insert",
        c if c == SPECIAL + 8 => "Delete",
        c if c == SPECIAL + 13 => "Home",
        c if c == SPECIAL + 14 => "End",
        c if c == SPECIAL + 15 => "Left",
        c if c == SPECIAL + 16 => "Up",
        c if c == SPECIAL + 17 => "Right",
        c if c == SPECIAL + 18 => "Down",
        c if c == SPECIAL + 19 => "PageUp",
        c if c == SPECIAL + 20 => "PageDown",
        c if c == SPECIAL + 21 => "Shift",
        c if c == SPECIAL + 22 => "Ctrl",
        c if c == SPECIAL + 23 => "Meta",
        c if c == SPECIAL + 24 => "Alt",
        c if (SPECIAL + 28..=SPECIAL + 39).contains(&c) => {
            return Some(format!("F{}", c - SPECIAL - 27));
        }
        _ => return None,
    };
    Some(named.to_owned())
}

fn mouse_button_name(index: i64) -> Option<&'static str> {
    Some(match index {
        1 => "Left",
        2 => "Right",
        3 => "Middle",
        4 => "WheelUp",
        5 => "WheelDown",
        6 => "WheelLeft",
        7 => "WheelRight",
        8 => "Xbutton1",
        9 => "Xbutton2",
        _ => return None,
    })
}
