//! The `InputEvent` objects an input-map action holds in `project.godot`, written in
//! Godot 4's own layout, and the edits of an action's `"events"` array.
//!
//! What cannot be represented is refused with an [`InputError`] naming the
//! parameter, never written approximately.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::InputError;
use crate::variant::float_text;

/// An input-map event.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum InputEventSpec {
    /// A key: physical_keycode (as the editor records) or keycode, Godot `Key`
    /// values (A 65, Space 32, Escape 4194305).
    Key {
        #[serde(default)]
        keycode: Option<u32>,
        #[serde(default)]
        physical_keycode: Option<u32>,
        #[serde(default)]
        shift: bool,
        #[serde(default)]
        ctrl: bool,
        #[serde(default)]
        alt: bool,
    },
    /// Mouse button: 1 left, 2 right, 3 middle.
    MouseButton { button_index: u32 },
    /// Joypad button (0 A/Cross).
    JoypadButton { button_index: u32 },
    /// Joypad axis (0 left stick X), axis_value -1 or 1.
    JoypadMotion { axis: u32, axis_value: f64 },
}

impl InputEventSpec {
    /// The event as Godot 4 writes it inside project.godot.
    pub fn to_variant(&self, param: &str) -> Result<String, InputError> {
        const HEAD: &str = "\"resource_local_to_scene\":false,\"resource_name\":\"\",\"device\":-1";
        Ok(match self {
            Self::Key {
                keycode,
                physical_keycode,
                shift,
                ctrl,
                alt,
            } => {
                if keycode.is_none() && physical_keycode.is_none() {
                    return Err(InputError::new(
                        param,
                        "a key event needs `physical_keycode` or `keycode`",
                    ));
                }
                format!(
                    "Object(InputEventKey,{HEAD},\"window_id\":0,\"alt_pressed\":{alt},\"shift_pressed\":{shift},\"ctrl_pressed\":{ctrl},\"meta_pressed\":false,\"pressed\":false,\"keycode\":{},\"physical_keycode\":{},\"key_label\":0,\"unicode\":0,\"location\":0,\"echo\":false,\"script\":null)",
                    keycode.unwrap_or(0),
                    physical_keycode.unwrap_or(0)
                )
            }
            Self::MouseButton { button_index } => format!(
                "Object(InputEventMouseButton,{HEAD},\"window_id\":0,\"alt_pressed\":false,\"shift_pressed\":false,\"ctrl_pressed\":false,\"meta_pressed\":false,\"button_mask\":0,\"position\":Vector2(0, 0),\"global_position\":Vector2(0, 0),\"factor\":1.0,\"button_index\":{button_index},\"canceled\":false,\"pressed\":false,\"double_click\":false,\"script\":null)"
            ),
            Self::JoypadButton { button_index } => format!(
                "Object(InputEventJoypadButton,{HEAD},\"button_index\":{button_index},\"pressure\":0.0,\"pressed\":false,\"script\":null)"
            ),
            Self::JoypadMotion { axis, axis_value } => {
                if !axis_value.is_finite() || axis_value.abs() > 1.0 {
                    return Err(InputError::new(
                        param,
                        "axis_value must be between -1.0 and 1.0",
                    ));
                }
                format!(
                    "Object(InputEventJoypadMotion,{HEAD},\"axis\":{axis},\"axis_value\":{},\"script\":null)",
                    float_text(*axis_value)
                )
            }
        })
    }
}

/// The value of an input-map action: `{"deadzone": …, "events": [...]}` in Godot's layout.
pub fn input_action_value(deadzone: f64, events: &[String]) -> String {
    let events = if events.is_empty() {
        "[]".to_string()
    } else {
        format!("[{}\n]", events.join("\n, "))
    };
    format!(
        "{{\n\"deadzone\": {},\n\"events\": {events}\n}}",
        float_text(deadzone)
    )
}

/// Append an event to an action value, keeping everything else byte-for-byte.
/// `None` when the value has no `"events": [...]` array.
pub fn append_input_event(action_value: &str, event: &str) -> Option<String> {
    let (open, close) = events_array_span(action_value)?;
    let inner = &action_value[open + 1..close];
    let trimmed = inner.trim_end();
    let new_inner = if trimmed.trim().is_empty() {
        format!("{event}\n")
    } else {
        format!("{trimmed}\n, {event}\n")
    };
    Some(format!(
        "{}{}{}",
        &action_value[..=open],
        new_inner,
        &action_value[close..]
    ))
}

/// Byte offsets of the `[` and `]` of the top-level `"events"` array.
pub fn events_array_span(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut depth = 0i64;
    let mut i = 0;
    let mut open = None;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' {
            // A string token: find its end.
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            let token = &text[start..(i + 1).min(text.len())];
            if depth == 1 && open.is_none() && token == "\"events\"" {
                let rest = &text[i + 1..];
                let after_colon = rest.trim_start().strip_prefix(':')?;
                let ws = after_colon.len() - after_colon.trim_start().len();
                if after_colon.trim_start().starts_with('[') {
                    let pos = text.len() - after_colon.len() + ws;
                    open = Some(pos);
                    depth += 1;
                    i = pos + 1;
                    continue;
                }
            }
            i += 1;
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 1
                    && let Some(o) = open
                    && c == b']'
                {
                    return Some((o, i));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::{Scan, scan_balanced};

    #[test]
    fn input_events_match_godot_layout() {
        let k = InputEventSpec::Key {
            keycode: None,
            physical_keycode: Some(65),
            shift: false,
            ctrl: false,
            alt: false,
        }
        .to_variant("e")
        .unwrap();
        assert!(k.starts_with("Object(InputEventKey,\"resource_local_to_scene\":false,"));
        assert!(k.contains("\"physical_keycode\":65,"));
        assert_eq!(scan_balanced(&k), Scan::Balanced);
        let v = input_action_value(0.5, std::slice::from_ref(&k));
        assert_eq!(
            v,
            format!("{{\n\"deadzone\": 0.5,\n\"events\": [{k}\n]\n}}")
        );
        let empty = input_action_value(0.2, &[]);
        assert_eq!(empty, "{\n\"deadzone\": 0.2,\n\"events\": []\n}");
        let one = append_input_event(&empty, "E1").unwrap();
        assert_eq!(one, "{\n\"deadzone\": 0.2,\n\"events\": [E1\n]\n}");
        let two = append_input_event(&one, "E2").unwrap();
        assert_eq!(two, "{\n\"deadzone\": 0.2,\n\"events\": [E1\n, E2\n]\n}");
        assert_eq!(append_input_event("{\n\"deadzone\": 0.5\n}", "E"), None);
    }
}
