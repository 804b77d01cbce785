//! Godot's Variant text read into the model: a file's value ([`from_text`]) and the
//! text the editor and the game give ([`from_variant_text`]).

use crate::literal::Literal as Text;
use crate::resource::{ExtResource, SubResource};

use super::check::base64_decode;
use super::to_text::write_text;
use super::value::{MAX_RESOURCE_DEPTH, Value};

/// What a file's references mean: `ExtResource("id")` names one of its
/// `[ext_resource]`s, `SubResource("id")` one of its `[sub_resource]`s.
#[derive(Debug, Clone, Copy, Default)]
pub struct Refs<'a> {
    pub ext: &'a [ExtResource],
    pub sub: &'a [SubResource],
}

impl<'a> Refs<'a> {
    pub fn of_scene(scene: &'a crate::Scene) -> Self {
        Self {
            ext: &scene.ext_resources,
            sub: &scene.sub_resources,
        }
    }

    pub fn of_resource(res: &'a crate::Resource) -> Self {
        Self {
            ext: &res.ext_resources,
            sub: &res.sub_resources,
        }
    }
}

/// A real (`real_t`, 32-bit) component as the shortest decimal that reads back as
/// the same 32-bit float: what the editor and the game hold for a value loaded from
/// that text, so every plane reports the same number.
pub fn real(x: f64) -> f64 {
    let f = x as f32;
    if !f.is_finite() {
        return x;
    }
    format!("{f}").parse().unwrap_or(x)
}

/// The value a file's text means, in the one value model. References resolve through
/// `refs` (an `ExtResource` to its path, a `SubResource` to its class and properties,
/// [`MAX_RESOURCE_DEPTH`] levels deep, like the editor reads them); a value the model
/// does not type is [`Value::Raw`] with its Variant text.
pub fn from_text(v: &Text, refs: &Refs<'_>) -> Value {
    text_at(v, refs, 0)
}

fn text_at(v: &Text, refs: &Refs<'_>, depth: usize) -> Value {
    let raw = || Value::Raw(write_text(v));
    match v {
        Text::Nil => Value::Nil,
        Text::Bool(b) => Value::Bool(*b),
        Text::Int(i) => Value::Int(*i),
        Text::Float(f) => Value::Float(*f),
        Text::String(s) => Value::String(s.clone()),
        Text::StringName(s) => Value::StringName(s.clone()),
        Text::NodePath(p) => Value::NodePath(p.clone()),
        Text::Array(items) => {
            Value::Array(items.iter().map(|i| text_at(i, refs, depth + 1)).collect())
        }
        Text::Dictionary(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for e in entries {
                let key = match &e.key {
                    Text::String(k) => k,
                    _ => {
                        // Keys other than strings: the [key, value] pairs form.
                        return Value::Map {
                            key: None,
                            value: None,
                            entries: map_entries(entries, refs, depth),
                        };
                    }
                };
                out.push((key.clone(), text_at(&e.value, refs, depth + 1)));
            }
            Value::Dictionary(out)
        }
        Text::ExtResource(id) => match refs.ext.iter().find(|e| &e.id == id) {
            Some(e) => Value::Resource(e.path.clone()),
            None => raw(),
        },
        Text::SubResource(id) => match refs.sub.iter().find(|s| &s.id == id) {
            Some(s) if depth < MAX_RESOURCE_DEPTH => Value::NewResource {
                class: s.resource_type.clone(),
                properties: s
                    .properties
                    .iter()
                    .map(|p| (p.name.clone(), text_at(&p.value, refs, depth + 1)))
                    .collect(),
            },
            Some(s) => Value::String(format!("<{} (embedded)>", s.resource_type)),
            None => raw(),
        },
        Text::Object { .. } => raw(),
        Text::Constructor { name, args } => match (typed_collection(name), args.as_slice()) {
            (Some((of, None)), [Text::Array(items)]) if name.starts_with("Array[") => {
                Value::TypedArray {
                    of: of.to_string(),
                    items: items.iter().map(|i| text_at(i, refs, depth + 1)).collect(),
                }
            }
            (Some((k, Some(v))), [Text::Dictionary(entries)]) => Value::Map {
                key: Some(k.to_string()),
                value: Some(v.to_string()),
                entries: map_entries(entries, refs, depth),
            },
            _ => constructor(name, args).unwrap_or_else(raw),
        },
    }
}

fn map_entries(
    entries: &[crate::literal::DictEntry],
    refs: &Refs<'_>,
    depth: usize,
) -> Vec<(Value, Value)> {
    entries
        .iter()
        .map(|e| {
            (
                text_at(&e.key, refs, depth + 1),
                text_at(&e.value, refs, depth + 1),
            )
        })
        .collect()
}

/// `Array[T]` → `(T, None)`, `Dictionary[K, V]` → `(K, Some(V))`: the type
/// parameters of a typed collection's constructor name, split at the top-level comma.
fn typed_collection(name: &str) -> Option<(&str, Option<&str>)> {
    let (base, rest) = name.split_once('[')?;
    let params = rest.strip_suffix(']')?.trim();
    match base.trim() {
        "Array" => Some((params, None)),
        "Dictionary" => {
            let mut depth = 0i32;
            let mut in_string = false;
            for (i, c) in params.char_indices() {
                match c {
                    '"' => in_string = !in_string,
                    '(' if !in_string => depth += 1,
                    ')' if !in_string => depth -= 1,
                    ',' if !in_string && depth == 0 => {
                        return Some((params[..i].trim(), Some(params[i + 1..].trim())));
                    }
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// Godot's Variant text of one value (what `var_to_str` gives) in the model: the
/// form a file's same value reads as; `Raw` with the text when it does not parse.
pub fn from_variant_text(text: &str) -> Value {
    match crate::parse_value(text) {
        Ok(parsed) => from_text(&parsed, &Refs::default()),
        Err(_) => Value::Raw(text.to_string()),
    }
}

/// A typed constructor, when every argument is a number and the count is right
/// (or, for `PackedStringArray`, every argument a string; for `PackedByteArray`,
/// one base64 string, the form Godot 4.3+ writes).
fn constructor(name: &str, args: &[Text]) -> Option<Value> {
    match (name, args) {
        ("PackedStringArray", _) => {
            return args
                .iter()
                .map(|a| match a {
                    Text::String(s) => Some(s.clone()),
                    _ => None,
                })
                .collect::<Option<_>>()
                .map(Value::PackedStringArray);
        }
        ("PackedByteArray", [Text::String(b64)]) => {
            return base64_decode(b64).map(Value::PackedByteArray);
        }
        _ => {}
    }
    let nums: Vec<f64> = args
        .iter()
        .map(|a| match a {
            Text::Int(i) => Some(*i as f64),
            Text::Float(f) if f.is_finite() => Some(*f),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let ints = || -> Option<Vec<i64>> { args.iter().map(Text::as_int).collect() };
    let r = |i: usize| real(nums[i]);
    let n = nums.len();
    Some(match (name, n) {
        ("Vector2", 2) => Value::Vector2([r(0), r(1)]),
        ("Vector3", 3) => Value::Vector3([r(0), r(1), r(2)]),
        ("Color", 3) => Value::Color([r(0), r(1), r(2), 1.0]),
        ("Color", 4) => Value::Color([r(0), r(1), r(2), r(3)]),
        ("Quaternion", 4) => Value::Quaternion([r(0), r(1), r(2), r(3)]),
        ("Rect2", 4) => Value::Rect2 {
            position: [r(0), r(1)],
            size: [r(2), r(3)],
        },
        ("Transform2D", 6) => Value::Transform2D {
            x: [r(0), r(1)],
            y: [r(2), r(3)],
            origin: [r(4), r(5)],
        },
        // Written row by row (basis.rows[i][j]); the model holds columns.
        ("Transform3D", 12) => Value::Transform3D {
            basis: [[r(0), r(3), r(6)], [r(1), r(4), r(7)], [r(2), r(5), r(8)]],
            origin: [r(9), r(10), r(11)],
        },
        ("Vector2i", 2) => {
            let i = ints()?;
            Value::Vector2i([i[0], i[1]])
        }
        ("Vector3i", 3) => {
            let i = ints()?;
            Value::Vector3i([i[0], i[1], i[2]])
        }
        ("Rect2i", 4) => {
            let i = ints()?;
            Value::Rect2i {
                position: [i[0], i[1]],
                size: [i[2], i[3]],
            }
        }
        ("PackedVector2Array", n) if n % 2 == 0 => {
            Value::PackedVector2Array((0..n / 2).map(|k| [r(2 * k), r(2 * k + 1)]).collect())
        }
        ("PackedVector3Array", n) if n % 3 == 0 => Value::PackedVector3Array(
            (0..n / 3)
                .map(|k| [r(3 * k), r(3 * k + 1), r(3 * k + 2)])
                .collect(),
        ),
        ("PackedColorArray", n) if n % 4 == 0 => Value::PackedColorArray(
            (0..n / 4)
                .map(|k| [r(4 * k), r(4 * k + 1), r(4 * k + 2), r(4 * k + 3)])
                .collect(),
        ),
        ("PackedFloat32Array", _) => Value::PackedFloat32Array((0..n).map(r).collect()),
        ("PackedInt32Array", _) => {
            let i = ints()?;
            if i.iter().any(|v| i32::try_from(*v).is_err()) {
                return None;
            }
            Value::PackedInt32Array(i)
        }
        ("Vector4", 4) => Value::Vector4([r(0), r(1), r(2), r(3)]),
        ("Vector4i", 4) => {
            let i = ints()?;
            Value::Vector4i([i[0], i[1], i[2], i[3]])
        }
        ("Plane", 4) => Value::Plane {
            normal: [r(0), r(1), r(2)],
            d: r(3),
        },
        ("AABB", 6) => Value::Aabb {
            position: [r(0), r(1), r(2)],
            size: [r(3), r(4), r(5)],
        },
        // Written row by row, like Transform3D's basis.
        ("Basis", 9) => Value::Basis([[r(0), r(3), r(6)], [r(1), r(4), r(7)], [r(2), r(5), r(8)]]),
        // Written column by column.
        ("Projection", 16) => Value::Projection([
            [r(0), r(1), r(2), r(3)],
            [r(4), r(5), r(6), r(7)],
            [r(8), r(9), r(10), r(11)],
            [r(12), r(13), r(14), r(15)],
        ]),
        ("PackedByteArray", _) => Value::PackedByteArray(
            ints()?
                .into_iter()
                .map(|i| u8::try_from(i).ok())
                .collect::<Option<_>>()?,
        ),
        ("PackedInt64Array", _) => Value::PackedInt64Array(ints()?),
        // 64-bit: kept as written, not rounded to a 32-bit real.
        ("PackedFloat64Array", _) => Value::PackedFloat64Array(nums),
        ("PackedVector4Array", n) if n % 4 == 0 => Value::PackedVector4Array(
            (0..n / 4)
                .map(|k| [r(4 * k), r(4 * k + 1), r(4 * k + 2), r(4 * k + 3)])
                .collect(),
        ),
        _ => return None,
    })
}
