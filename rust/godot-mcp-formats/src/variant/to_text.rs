//! The model written as Godot's Variant text: [`to_text`], and a parsed value written
//! back ([`write_text`]).

use crate::literal::Literal as Text;

use super::value::Value;

/// A number inside a constructor, as Godot writes it: integral values without a
/// decimal point (`Vector2(1, 2)`), others as the shortest decimal.
fn num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// A float on its own, as Godot writes it: always a float (`1.0`, not `1`), so it
/// reads back as a float and not an int.
pub fn float_text(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "inf_neg" }.into();
    }
    let s = format!("{f}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// A Godot string literal (the escapes Godot's text saver writes; other control
/// characters as `\\uXXXX`, so a value never spans lines).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn call(name: &str, nums: impl IntoIterator<Item = String>) -> String {
    format!(
        "{name}({})",
        nums.into_iter().collect::<Vec<_>>().join(", ")
    )
}

/// A parsed value written back as Godot's Variant text.
pub fn write_text(v: &Text) -> String {
    match v {
        Text::Nil => "null".into(),
        Text::Bool(b) => b.to_string(),
        Text::Int(i) => i.to_string(),
        Text::Float(f) => float_text(*f),
        Text::String(s) => quote(s),
        Text::StringName(s) => format!("&{}", quote(s)),
        Text::NodePath(p) => format!("NodePath({})", quote(p)),
        Text::Array(items) => format!(
            "[{}]",
            items.iter().map(write_text).collect::<Vec<_>>().join(", ")
        ),
        Text::Dictionary(entries) if entries.is_empty() => "{}".into(),
        Text::Dictionary(entries) => format!(
            "{{\n{}\n}}",
            entries
                .iter()
                .map(|e| format!("{}: {}", write_text(&e.key), write_text(&e.value)))
                .collect::<Vec<_>>()
                .join(",\n")
        ),
        Text::ExtResource(id) => format!("ExtResource({})", quote(id)),
        Text::SubResource(id) => format!("SubResource({})", quote(id)),
        Text::Object { class, properties } => {
            let mut parts = vec![class.clone()];
            parts.extend(
                properties
                    .iter()
                    .map(|p| format!("{}:{}", quote(&p.name), write_text(&p.value))),
            );
            format!("Object({})", parts.join(","))
        }
        Text::Constructor { name, args } => call(
            name,
            args.iter().map(|a| match a {
                Text::Float(f) if f.is_finite() => num(*f),
                other => write_text(other),
            }),
        ),
    }
}

/// A value of the model written as Godot's Variant text: what a file write of it
/// stores. `None` for what has no text of its own (a new built-in sub-resource is a
/// `[sub_resource]` section, a `Resource` path an `[ext_resource]`).
pub fn to_text(v: &Value) -> Option<String> {
    let fs = |a: &[f64]| a.iter().map(|f| num(*f)).collect::<Vec<_>>();
    let is = |a: &[i64]| a.iter().map(i64::to_string).collect::<Vec<_>>();
    Some(match v {
        Value::Nil => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float_text(*f),
        Value::String(s) => quote(s),
        Value::StringName(s) => format!("&{}", quote(s)),
        Value::NodePath(p) => format!("NodePath({})", quote(p)),
        Value::Vector2(a) => call("Vector2", fs(a)),
        Value::Vector3(a) => call("Vector3", fs(a)),
        Value::Color(a) => call("Color", fs(a)),
        Value::Quaternion(a) => call("Quaternion", fs(a)),
        Value::Vector2i(a) => call("Vector2i", is(a)),
        Value::Vector3i(a) => call("Vector3i", is(a)),
        Value::Rect2 { position, size } => {
            call("Rect2", fs(&[position[0], position[1], size[0], size[1]]))
        }
        Value::Rect2i { position, size } => {
            call("Rect2i", is(&[position[0], position[1], size[0], size[1]]))
        }
        Value::Transform2D { x, y, origin } => call(
            "Transform2D",
            fs(&[x[0], x[1], y[0], y[1], origin[0], origin[1]]),
        ),
        Value::Transform3D {
            basis: b,
            origin: o,
        } => call(
            "Transform3D",
            fs(&[
                b[0][0], b[1][0], b[2][0], b[0][1], b[1][1], b[2][1], b[0][2], b[1][2], b[2][2],
                o[0], o[1], o[2],
            ]),
        ),
        Value::PackedVector2Array(items) => {
            call("PackedVector2Array", items.iter().flat_map(|p| fs(p)))
        }
        Value::PackedVector3Array(items) => {
            call("PackedVector3Array", items.iter().flat_map(|p| fs(p)))
        }
        Value::PackedColorArray(items) => {
            call("PackedColorArray", items.iter().flat_map(|p| fs(p)))
        }
        Value::PackedFloat32Array(items) => call("PackedFloat32Array", fs(items)),
        Value::PackedInt32Array(items) => call("PackedInt32Array", is(items)),
        Value::Vector4(a) => call("Vector4", fs(a)),
        Value::Vector4i(a) => call("Vector4i", is(a)),
        Value::Plane { normal: n, d } => call("Plane", fs(&[n[0], n[1], n[2], *d])),
        Value::Aabb {
            position: p,
            size: z,
        } => call("AABB", fs(&[p[0], p[1], p[2], z[0], z[1], z[2]])),
        Value::Basis(b) => call(
            "Basis",
            fs(&[
                b[0][0], b[1][0], b[2][0], b[0][1], b[1][1], b[2][1], b[0][2], b[1][2], b[2][2],
            ]),
        ),
        Value::Projection(c) => call("Projection", c.iter().flat_map(|col| fs(col))),
        Value::PackedStringArray(items) => {
            call("PackedStringArray", items.iter().map(|s| quote(s)))
        }
        // The list form: every Godot 4.x reads it, in a file of any format=.
        Value::PackedByteArray(items) => call("PackedByteArray", items.iter().map(u8::to_string)),
        Value::PackedInt64Array(items) => call("PackedInt64Array", is(items)),
        Value::PackedFloat64Array(items) => call(
            "PackedFloat64Array",
            items.iter().map(|f| {
                if f.is_finite() {
                    num(*f)
                } else {
                    float_text(*f)
                }
            }),
        ),
        Value::PackedVector4Array(items) => {
            call("PackedVector4Array", items.iter().flat_map(|p| fs(p)))
        }
        Value::TypedArray { of, items } => format!(
            "Array[{of}]([{}])",
            items
                .iter()
                .map(to_text)
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Value::Map {
            key,
            value,
            entries,
        } => {
            let body = if entries.is_empty() {
                "{}".to_string()
            } else {
                format!(
                    "{{\n{}\n}}",
                    entries
                        .iter()
                        .map(|(k, v)| Some(format!("{}: {}", to_text(k)?, to_text(v)?)))
                        .collect::<Option<Vec<_>>>()?
                        .join(",\n")
                )
            };
            match (key, value) {
                (Some(k), Some(v)) => format!("Dictionary[{k}, {v}]({body})"),
                _ => body,
            }
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(to_text)
                .collect::<Option<Vec<_>>>()?
                .join(", ")
        ),
        Value::Dictionary(entries) if entries.is_empty() => "{}".into(),
        Value::Dictionary(entries) => format!(
            "{{\n{}\n}}",
            entries
                .iter()
                .map(|(k, v)| Some(format!("{}: {}", quote(k), to_text(v)?)))
                .collect::<Option<Vec<_>>>()?
                .join(",\n")
        ),
        Value::Raw(text) => text.clone(),
        Value::Resource(_) | Value::NewResource { .. } => return None,
    })
}
