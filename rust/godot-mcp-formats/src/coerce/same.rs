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

/// Where two dictionaries differ, in words ("Godot kept no key tilts; points differs"),
/// so a read-back error names the part Godot dropped or changed, not only both wholes.
/// `None` unless both are dictionaries.
pub fn what_differs(asked: &Value, held: &Value) -> Option<String> {
    let (Value::Dictionary(a), Value::Dictionary(h)) = (asked, held) else {
        return None;
    };
    let held_of = |k: &str| h.iter().find(|(j, _)| j == k).map(|(_, w)| w);
    let dropped: Vec<&str> = a
        .iter()
        .filter(|(k, _)| held_of(k).is_none())
        .map(|(k, _)| k.as_str())
        .collect();
    let changed: Vec<&str> = a
        .iter()
        .filter(|(k, v)| held_of(k).is_some_and(|w| !same(v, w)))
        .map(|(k, _)| k.as_str())
        .collect();
    let added: Vec<&str> = h
        .iter()
        .filter(|(j, _)| !a.iter().any(|(k, _)| k == j))
        .map(|(j, _)| j.as_str())
        .collect();
    let mut parts = Vec::new();
    if !dropped.is_empty() {
        parts.push(format!("Godot kept no key {}", dropped.join(", ")));
    }
    if !changed.is_empty() {
        parts.push(format!("{} differs", changed.join(", ")));
    }
    if !added.is_empty() {
        parts.push(format!("Godot added {}", added.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
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

#[cfg(test)]
mod what_differs_tests {
    use super::*;

    fn dict(entries: &[(&str, Value)]) -> Value {
        Value::Dictionary(
            entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn a_dropped_key_and_a_changed_one_are_named() {
        let points = Value::PackedVector2Array(vec![[0.0, 0.0], [480.0, 0.0]]);
        let asked = dict(&[
            ("points", points.clone()),
            ("tilts", Value::PackedFloat32Array(vec![0.0])),
            ("bake", Value::Int(1)),
        ]);
        let held = dict(&[("points", points), ("bake", Value::Int(2))]);
        assert_eq!(
            what_differs(&asked, &held).as_deref(),
            Some("Godot kept no key tilts; bake differs")
        );
        assert_eq!(what_differs(&asked, &asked), None);
        assert_eq!(what_differs(&Value::Int(1), &Value::Int(2)), None);
    }
}
