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
    /// A key: physical_keycode (as the editor records) or keycode, a Godot `Key` by
    /// name ("Left", "KEY_ENTER", "a", "F1") or value (A 65, Escape 4194305).
    Key {
        #[serde(default)]
        keycode: Option<KeyArg>,
        #[serde(default)]
        physical_keycode: Option<KeyArg>,
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

/// A Godot `Key`: its value, or its name as Godot's `Key` enum spells it, any case, with
/// or without `KEY_` and underscores ("Left", "KEY_PAGEUP", "page_up", "a", "0", "kp_1").
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum KeyArg {
    Value(u32),
    Name(String),
}

/// Godot 4's `Key` enum (core/os/keyboard.h): the special keys are `1 << 22 | n`.
const SPECIAL: u32 = 1 << 22;
const KEYS: &[(&str, u32)] = &[
    ("ESCAPE", SPECIAL | 0x01),
    ("TAB", SPECIAL | 0x02),
    ("BACKTAB", SPECIAL | 0x03),
    ("BACKSPACE", SPECIAL | 0x04),
    ("ENTER", SPECIAL | 0x05),
    ("KPENTER", SPECIAL | 0x06),
    ("INSERT", SPECIAL | 0x07),
    ("DELETE", SPECIAL | 0x08),
    ("PAUSE", SPECIAL | 0x09),
    ("PRINT", SPECIAL | 0x0A),
    ("SYSREQ", SPECIAL | 0x0B),
    ("CLEAR", SPECIAL | 0x0C),
    ("HOME", SPECIAL | 0x0D),
    ("END", SPECIAL | 0x0E),
    ("LEFT", SPECIAL | 0x0F),
    ("UP", SPECIAL | 0x10),
    ("RIGHT", SPECIAL | 0x11),
    ("DOWN", SPECIAL | 0x12),
    ("PAGEUP", SPECIAL | 0x13),
    ("PAGEDOWN", SPECIAL | 0x14),
    ("SHIFT", SPECIAL | 0x15),
    ("CTRL", SPECIAL | 0x16),
    ("META", SPECIAL | 0x17),
    ("ALT", SPECIAL | 0x18),
    ("CAPSLOCK", SPECIAL | 0x19),
    ("NUMLOCK", SPECIAL | 0x1A),
    ("SCROLLLOCK", SPECIAL | 0x1B),
    ("KPMULTIPLY", SPECIAL | 0x81),
    ("KPDIVIDE", SPECIAL | 0x82),
    ("KPSUBTRACT", SPECIAL | 0x83),
    ("KPPERIOD", SPECIAL | 0x84),
    ("KPADD", SPECIAL | 0x85),
    ("MENU", SPECIAL | 0x42),
    ("SPACE", 0x20),
    ("EXCLAM", 0x21),
    ("QUOTEDBL", 0x22),
    ("NUMBERSIGN", 0x23),
    ("DOLLAR", 0x24),
    ("PERCENT", 0x25),
    ("AMPERSAND", 0x26),
    ("APOSTROPHE", 0x27),
    ("PARENLEFT", 0x28),
    ("PARENRIGHT", 0x29),
    ("ASTERISK", 0x2A),
    ("PLUS", 0x2B),
    ("COMMA", 0x2C),
    ("MINUS", 0x2D),
    ("PERIOD", 0x2E),
    ("SLASH", 0x2F),
    ("COLON", 0x3A),
    ("SEMICOLON", 0x3B),
    ("LESS", 0x3C),
    ("EQUAL", 0x3D),
    ("GREATER", 0x3E),
    ("QUESTION", 0x3F),
    ("AT", 0x40),
    ("BRACKETLEFT", 0x5B),
    ("BACKSLASH", 0x5C),
    ("BRACKETRIGHT", 0x5D),
    ("ASCIICIRCUM", 0x5E),
    ("UNDERSCORE", 0x5F),
    ("QUOTELEFT", 0x60),
    ("BRACELEFT", 0x7B),
    ("BAR", 0x7C),
    ("BRACERIGHT", 0x7D),
    ("ASCIITILDE", 0x7E),
    // What people also call them.
    ("RETURN", SPECIAL | 0x05),
    ("ESC", SPECIAL | 0x01),
    ("CONTROL", SPECIAL | 0x16),
    ("DEL", SPECIAL | 0x08),
];

impl KeyArg {
    /// The key's value: a number as given, a name looked up (letters and digits by their
    /// character, F1–F35, KP_0–KP_9, then the table).
    pub fn value(&self, param: &str) -> Result<u32, InputError> {
        let name = match self {
            Self::Value(v) => return Ok(*v),
            Self::Name(n) => n,
        };
        let mut key: String = name
            .chars()
            .filter(|c| *c != '_' && *c != ' ')
            .collect::<String>()
            .to_uppercase();
        if key.len() > 3 && key.starts_with("KEY") {
            key.drain(..3);
        }
        let found = match key.as_bytes() {
            [c] if c.is_ascii_alphanumeric() => Some(u32::from(*c)),
            [b'F', ..] => key[1..]
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=35).contains(n))
                .map(|n| SPECIAL | (0x1B + n)),
            [b'K', b'P', d] if d.is_ascii_digit() => Some(SPECIAL | (0x86 + u32::from(d - b'0'))),
            _ => None,
        }
        .or_else(|| KEYS.iter().find(|(n, _)| *n == key).map(|(_, v)| *v));
        found.ok_or_else(|| {
            InputError::new(
                param,
                format!(
                    "{name:?} is not a Godot key name: give one like \"Left\", \"Enter\", \
                     \"Space\", \"A\", \"F1\", \"KP_1\" (Godot's Key enum, KEY_ optional), or its value"
                ),
            )
        })
    }
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
                let code = |k: &Option<KeyArg>| k.as_ref().map_or(Ok(0), |k| k.value(param));
                let (keycode, physical_keycode) = (code(keycode)?, code(physical_keycode)?);
                format!(
                    "Object(InputEventKey,{HEAD},\"window_id\":0,\"alt_pressed\":{alt},\"shift_pressed\":{shift},\"ctrl_pressed\":{ctrl},\"meta_pressed\":false,\"pressed\":false,\"keycode\":{},\"physical_keycode\":{},\"key_label\":0,\"unicode\":0,\"location\":0,\"echo\":false,\"script\":null)",
                    keycode, physical_keycode
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

    /// Key names as people write them give Godot's values (core/os/keyboard.h).
    #[test]
    fn key_names_read_as_godots_key_values() {
        let v = |n: &str| KeyArg::Name(n.into()).value("k");
        for (name, value) in [
            ("Left", 4194319),
            ("KEY_LEFT", 4194319),
            ("Enter", 4194309),
            ("return", 4194309),
            ("Escape", 4194305),
            ("Space", 32),
            ("a", 65),
            ("KEY_W", 87),
            ("0", 48),
            ("F1", 4194332),
            ("F12", 4194343),
            ("KP_1", 4194439),
            ("page_up", 4194323),
            ("Delete", 4194312),
        ] {
            assert_eq!(v(name).unwrap(), value, "{name}");
        }
        assert!(v("Banana").unwrap_err().to_string().contains("\"Left\""));
        assert!(v("F36").is_err());
        assert_eq!(KeyArg::Value(7).value("k").unwrap(), 7);
        let k: InputEventSpec =
            serde_json::from_value(serde_json::json!({"type": "key", "keycode": "Right"})).unwrap();
        assert!(k.to_variant("e").unwrap().contains("\"keycode\":4194321,"));
    }

    #[test]
    fn input_events_match_godot_layout() {
        let k = InputEventSpec::Key {
            keycode: None,
            physical_keycode: Some(KeyArg::Value(65)),
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
