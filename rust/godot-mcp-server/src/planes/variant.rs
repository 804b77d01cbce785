//! Godot's Variant text syntax, the little of it the server writes: JSON values
//! converted to Variant text, checks on Variant text an agent supplies, and the
//! `InputEvent` objects an input-map action holds.
//!
//! What cannot be represented is refused with a structured error naming the
//! parameter, never written approximately.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ToolError;

/// Longest Variant text accepted for one value, in bytes.
pub const MAX_VARIANT_TEXT: usize = 64 * 1024;
/// Deepest nesting of arrays and dictionaries accepted.
const MAX_DEPTH: usize = 32;

/// Convert a JSON value to Godot Variant text: strings quoted with escapes, bools,
/// integers, floats, arrays and dictionaries (string keys).
pub fn from_json(value: &Value, param: &str) -> Result<String, ToolError> {
    let mut out = String::new();
    write_json(value, param, 0, &mut out)?;
    if out.len() > MAX_VARIANT_TEXT {
        return Err(ToolError::invalid_params(
            param,
            format!("`{param}` is longer than {MAX_VARIANT_TEXT} bytes as Variant text"),
        ));
    }
    Ok(out)
}

fn write_json(value: &Value, param: &str, depth: usize, out: &mut String) -> Result<(), ToolError> {
    if depth > MAX_DEPTH {
        return Err(ToolError::invalid_params(
            param,
            format!("`{param}` nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if n.is_u64() {
                return Err(ToolError::invalid_params(
                    param,
                    format!("`{param}`: {n} does not fit Godot's 64-bit signed int"),
                ));
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if !f.is_finite() {
                    return Err(ToolError::invalid_params(
                        param,
                        format!("`{param}`: {n} is not finite"),
                    ));
                }
                out.push_str(&float_text(f));
            }
        }
        Value::String(s) => out.push_str(&quote(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(item, param, depth + 1, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push_str("{\n");
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                out.push_str(&quote(k));
                out.push_str(": ");
                write_json(v, param, depth + 1, out)?;
            }
            out.push_str("\n}");
        }
    }
    Ok(())
}

/// Godot's float and string-literal text, from the value model's one writer.
pub use godot_mcp_formats::variant::{float_text, quote};

/// Check Variant text supplied by an agent: one line, balanced brackets, closed
/// strings. Those are exactly what keeps a `key=value` line from spilling into the
/// next key or section of a Godot text file.
pub fn check_text(text: &str, param: &str) -> Result<(), ToolError> {
    let bad = |why: &str| {
        Err(ToolError::invalid_params(param, format!("`{param}` is not usable Variant text: {why}"))
            .hint("Give Variant text on one line, e.g. Vector2(1, 2), \"text\", [1, 2] or {\"a\": 1}; or pass a JSON value in `value` instead."))
    };
    if text.trim().is_empty() {
        return bad("it is empty");
    }
    if text.len() > MAX_VARIANT_TEXT {
        return bad("it is too long");
    }
    if text.chars().any(|c| c.is_control() && c != '\t') {
        return bad("it contains a newline or control character");
    }
    match scan_balanced(text) {
        Scan::Balanced => Ok(()),
        Scan::Open => bad("a bracket or string is not closed"),
        Scan::Unmatched => bad("a closing bracket has no opening one"),
    }
}

/// Result of scanning text for bracket and string balance.
#[derive(Debug, PartialEq, Eq)]
pub enum Scan {
    Balanced,
    /// More opened than closed (a value continues on the next line).
    Open,
    /// A closer without an opener.
    Unmatched,
}

/// Scan Variant text, string-aware (escapes honoured), for bracket balance.
pub fn scan_balanced(text: &str) -> Scan {
    let mut depth: i64 = 0;
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return Scan::Unmatched;
                }
            }
            _ => {}
        }
    }
    if depth > 0 || in_string {
        Scan::Open
    } else {
        Scan::Balanced
    }
}

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
    pub fn to_variant(&self, param: &str) -> Result<String, ToolError> {
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
                    return Err(ToolError::invalid_params(
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
                    return Err(ToolError::invalid_params(
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
pub(crate) fn events_array_span(text: &str) -> Option<(usize, usize)> {
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
    use serde_json::json;

    #[test]
    fn json_converts_to_variant_text() {
        assert_eq!(
            from_json(&json!("a\"b\\c\nd"), "v").unwrap(),
            r#""a\"b\\c\nd""#
        );
        assert_eq!(from_json(&json!(true), "v").unwrap(), "true");
        assert_eq!(from_json(&json!(-3), "v").unwrap(), "-3");
        assert_eq!(from_json(&json!(1.0), "v").unwrap(), "1.0");
        assert_eq!(from_json(&json!(0.25), "v").unwrap(), "0.25");
        assert_eq!(
            from_json(&json!([1, "x", null]), "v").unwrap(),
            r#"[1, "x", null]"#
        );
        assert_eq!(from_json(&json!({"a": 1}), "v").unwrap(), "{\n\"a\": 1\n}");
        let e = from_json(&json!(u64::MAX), "value").unwrap_err();
        assert_eq!(e.param.as_deref(), Some("value"));
    }

    #[test]
    fn variant_text_must_be_one_balanced_line() {
        for ok in [
            "Vector2(1, 2)",
            "\"a ) b\"",
            "[1, [2]]",
            "{\"a\": \"]\"}",
            "Color(1, 0, 0, 1)",
        ] {
            check_text(ok, "value_text").unwrap();
        }
        for bad in [
            "",
            "Vector2(1, 2",
            "1)\n[autoload]",
            "\"open",
            "a\nb=1",
            "][",
        ] {
            let e = check_text(bad, "value_text").unwrap_err();
            assert_eq!(e.param.as_deref(), Some("value_text"), "{bad:?}");
        }
    }

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
