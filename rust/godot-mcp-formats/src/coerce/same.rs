//! The read-back's judge: what Godot holds against what was asked.

use serde_json::Value as Json;

use crate::variant::Value;

/// Whether `held` (what Godot holds after a set) is `asked` (what was set): equal,
/// reals compared as the 32-bit floats Godot stores them in (a few units of the last
/// place apart, the rounding a setter that recomposes a transform can add).
pub fn same(asked: &Value, held: &Value) -> bool {
    match (asked, held) {
        // Godot converts an array set on a typed-array property (`Array[PackedVector2Array]`)
        // into that typed array: the same items are the same value.
        (
            Value::Array(a) | Value::TypedArray { items: a, .. },
            Value::Array(h) | Value::TypedArray { items: h, .. },
        ) => {
            a.len() == h.len() && (a.iter().zip(h).all(|(p, q)| same(p, q)) || same_named_set(a, h))
        }
        // A String and a StringName of the same text are one value to Godot (`==` says
        // so, and a property of either type converts the other on set: `autoplay`).
        (Value::String(a) | Value::StringName(a), Value::String(h) | Value::StringName(h)) => {
            a == h
        }
        (Value::Dictionary(a), Value::Dictionary(h)) => {
            a.len() == h.len()
                && a.iter()
                    .all(|(k, v)| h.iter().any(|(j, w)| j == k && same(v, w)))
        }
        _ => same_json(&asked.to_json(), &held.to_json()),
    }
}

/// Arrays of dictionaries each named by a distinct `name` (SpriteFrames' `animations`):
/// Godot keeps them by name and gives them back in its own order, so the same named
/// entries in another order are the same value.
fn same_named_set(a: &[Value], h: &[Value]) -> bool {
    fn name(v: &Value) -> Option<String> {
        match v {
            Value::Dictionary(entries) => entries.iter().find_map(|(k, v)| match v {
                Value::String(n) | Value::StringName(n) if k == "name" => Some(n.clone()),
                _ => None,
            }),
            _ => None,
        }
    }
    let names: Option<Vec<String>> = a.iter().map(name).collect();
    let Some(names) = names else {
        return false;
    };
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    distinct.len() == names.len()
        && a.iter().zip(&names).all(|(p, n)| {
            h.iter()
                .find(|q| name(q).as_ref() == Some(n))
                .is_some_and(|q| same(p, q))
        })
}

fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) if !x.is_f64() && !y.is_f64() => i == j,
            _ => match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => same_real(p, q),
                _ => false,
            },
        },
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

fn same_real(p: f64, q: f64) -> bool {
    let (p, q) = (p as f32, q as f32);
    p == q || (p - q).abs() <= 1e-6 + 2e-6 * p.abs().max(q.abs())
}
