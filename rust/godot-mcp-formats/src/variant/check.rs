//! What a write tool accepts as Variant text, and plain JSON written as such text.

use serde_json::Value as Json;

use crate::error::InputError;

use super::to_text::to_text;
use super::value::{MAX_DEPTH, Value};

/// Longest Variant text accepted for one value, in bytes.
pub const MAX_VARIANT_TEXT: usize = 64 * 1024;

/// Plain JSON written as Godot Variant text, through the model's one writer
/// ([`to_text`]): strings, bools, integers, floats, arrays, and objects as
/// dictionaries with string keys. Unlike [`Value::from_json`], a `"$type"` key is
/// an ordinary key: settings and resource properties take plain JSON.
pub fn plain_json_text(value: &Json, param: &str) -> Result<String, InputError> {
    let text = to_text(&plain_json_value(value, param, 0)?)
        .expect("plain JSON holds no resource, so it always has text");
    if text.len() > MAX_VARIANT_TEXT {
        return Err(InputError::new(
            param,
            format!("`{param}` is longer than {MAX_VARIANT_TEXT} bytes as Variant text"),
        ));
    }
    Ok(text)
}

fn plain_json_value(value: &Json, param: &str, depth: usize) -> Result<Value, InputError> {
    if depth > MAX_DEPTH {
        return Err(InputError::new(
            param,
            format!("`{param}` nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    Ok(match value {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Int(i),
            _ if n.is_u64() => {
                return Err(InputError::new(
                    param,
                    format!("`{param}`: {n} does not fit Godot's 64-bit signed int"),
                ));
            }
            (None, Some(f)) if f.is_finite() => Value::Float(f),
            _ => {
                return Err(InputError::new(
                    param,
                    format!("`{param}`: {n} is not finite"),
                ));
            }
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| plain_json_value(item, param, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) => Value::Dictionary(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), plain_json_value(v, param, depth + 1)?)))
                .collect::<Result<_, InputError>>()?,
        ),
    })
}

/// Check Variant text supplied by an agent: one line, balanced brackets, closed
/// strings. Those are exactly what keeps a `key=value` line from spilling into the
/// next key or section of a Godot text file.
pub fn check_text(text: &str, param: &str) -> Result<(), InputError> {
    let bad = |why: &str| {
        Err(InputError::new(param, format!("`{param}` is not usable Variant text: {why}"))
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

/// The bytes of a base64 `PackedByteArray("…")` (Godot's standard alphabet, padded).
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}
