//! The JSON shapes a vector, rectangle, colour or transform is accepted in, read
//! into the model's arrays.

use crate::variant::{Value, from_variant_text};

use super::colors::parse_color;

pub(super) fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

pub(super) fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
        _ => None,
    }
}

pub(super) fn reals<const N: usize>(v: &Value) -> Option<[f64; N]> {
    match v {
        Value::Array(items) if items.len() == N => {
            let mut out = [0.0; N];
            for (o, i) in out.iter_mut().zip(items) {
                *o = num(i)?;
            }
            Some(out)
        }
        _ => None,
    }
}

pub(super) fn ints<const N: usize>(v: &Value) -> Option<[i64; N]> {
    match v {
        Value::Array(items) if items.len() == N => {
            let mut out = [0; N];
            for (o, i) in out.iter_mut().zip(items) {
                *o = int(i).filter(|i| i32::try_from(*i).is_ok())?;
            }
            Some(out)
        }
        _ => None,
    }
}

/// `[[..N], [..N]]` or a flat `[..2N]`: a position and a size.
pub(super) fn pair<const N: usize>(v: &Value) -> Option<([f64; N], [f64; N])> {
    if let Some([a, b]) = columns::<2, N>(v) {
        return Some((a, b));
    }
    match v {
        Value::Array(items) if items.len() == 2 * N => {
            let mut a = [0.0; N];
            let mut b = [0.0; N];
            for k in 0..N {
                a[k] = num(&items[k])?;
                b[k] = num(&items[N + k])?;
            }
            Some((a, b))
        }
        _ => None,
    }
}

pub(super) fn columns<const C: usize, const R: usize>(v: &Value) -> Option<[[f64; R]; C]> {
    match v {
        Value::Array(items) if items.len() == C => {
            let mut out = [[0.0; R]; C];
            for (o, i) in out.iter_mut().zip(items) {
                *o = reals::<R>(i)?;
            }
            Some(out)
        }
        _ => None,
    }
}

pub(super) fn rows<T>(v: &Value, each: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    match v {
        Value::Array(items) => items.iter().map(each).collect(),
        _ => None,
    }
}

fn field<'a>(entries: &'a [(String, Value)], k: &str) -> Option<&'a Value> {
    entries.iter().find(|(n, _)| n == k).map(|(_, v)| v)
}

/// `{"x": .., "y": ..}` (and `z`, `w`) as an array, when those are exactly its keys.
fn xyz(v: &Value, keys: &[&str]) -> Option<Value> {
    match v {
        Value::Dictionary(e) if e.len() == keys.len() => Some(Value::Array(
            keys.iter()
                .map(|k| field(e, k).cloned())
                .collect::<Option<_>>()?,
        )),
        _ => None,
    }
}

pub(super) fn vector2(v: &Value) -> Option<Value> {
    match v {
        Value::Vector2(_) => Some(v.clone()),
        Value::Vector2i([x, y]) => Some(Value::Vector2([*x as f64, *y as f64])),
        Value::Dictionary(_) => vector2(&xyz(v, &["x", "y"])?),
        _ => reals::<2>(v).map(Value::Vector2),
    }
}

pub(super) fn vector2i(v: &Value) -> Option<Value> {
    match v {
        Value::Vector2i(_) => Some(v.clone()),
        Value::Vector2([x, y]) => vector2i(&Value::Array(vec![Value::Float(*x), Value::Float(*y)])),
        Value::Dictionary(_) => vector2i(&xyz(v, &["x", "y"])?),
        _ => ints::<2>(v).map(Value::Vector2i),
    }
}

pub(super) fn vector3(v: &Value) -> Option<Value> {
    match v {
        Value::Vector3(_) => Some(v.clone()),
        Value::Vector3i([x, y, z]) => Some(Value::Vector3([*x as f64, *y as f64, *z as f64])),
        Value::Dictionary(_) => vector3(&xyz(v, &["x", "y", "z"])?),
        _ => reals::<3>(v).map(Value::Vector3),
    }
}

pub(super) fn vector3i(v: &Value) -> Option<Value> {
    match v {
        Value::Vector3i(_) => Some(v.clone()),
        Value::Vector3(c) => vector3i(&Value::Array(c.iter().map(|f| Value::Float(*f)).collect())),
        Value::Dictionary(_) => vector3i(&xyz(v, &["x", "y", "z"])?),
        _ => ints::<3>(v).map(Value::Vector3i),
    }
}

pub(super) fn color(v: &Value) -> Option<Value> {
    match v {
        Value::Color(_) => Some(v.clone()),
        // A colour's text, or Godot's own: "Color(1, 1, 1, 0)" (an item of a packed
        // array, where the whole-value text fallback does not reach).
        Value::String(s) => {
            parse_color(s.trim())
                .map(Value::Color)
                .or_else(|| match from_variant_text(s.trim()) {
                    c @ Value::Color(_) => Some(c),
                    _ => None,
                })
        }
        Value::Dictionary(e) => {
            let a = field(e, "a").map_or(Some(1.0), num)?;
            let [r, g, b] = reals::<3>(&xyz(
                &Value::Dictionary(e.iter().filter(|(k, _)| k != "a").cloned().collect()),
                &["r", "g", "b"],
            )?)?;
            Some(Value::Color([r, g, b, a]))
        }
        _ => reals::<4>(v)
            .or_else(|| reals::<3>(v).map(|[r, g, b]| [r, g, b, 1.0]))
            .map(Value::Color),
    }
}

pub(super) fn rect2(v: &Value) -> Option<Value> {
    match v {
        Value::Rect2 { .. } => Some(v.clone()),
        Value::Rect2i { position, size } => Some(Value::Rect2 {
            position: position.map(|i| i as f64),
            size: size.map(|i| i as f64),
        }),
        Value::Dictionary(e) if e.len() == 2 => {
            let p = field(e, "position").and_then(|p| reals::<2>(vector_array(p)?.as_ref()))?;
            let s = field(e, "size").and_then(|s| reals::<2>(vector_array(s)?.as_ref()))?;
            Some(Value::Rect2 {
                position: p,
                size: s,
            })
        }
        _ => pair::<2>(v).map(|(position, size)| Value::Rect2 { position, size }),
    }
}

/// A Vector2 form as a `[x, y]` array.
fn vector_array(v: &Value) -> Option<Box<Value>> {
    match vector2(v)? {
        Value::Vector2([x, y]) => Some(Box::new(Value::Array(vec![
            Value::Float(x),
            Value::Float(y),
        ]))),
        _ => None,
    }
}

pub(super) fn rect2i(v: &Value) -> Option<Value> {
    let r = match v {
        Value::Rect2i { .. } => return Some(v.clone()),
        other => rect2(other)?,
    };
    let Value::Rect2 { position, size } = r else {
        return None;
    };
    let i = |f: f64| (f.fract() == 0.0 && i32::try_from(f as i64).is_ok()).then_some(f as i64);
    Some(Value::Rect2i {
        position: [i(position[0])?, i(position[1])?],
        size: [i(size[0])?, i(size[1])?],
    })
}
