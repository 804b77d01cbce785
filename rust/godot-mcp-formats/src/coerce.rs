//! One value language: a value as an agent sends it, read by the type the property
//! **declares** (the live object's property list, or the class reference), never by the
//! value the property holds now.
//!
//! [`coerce`] takes the value as decoded from JSON ([`Value::from_json`]) and the
//! declared type ([`Declared`]) and answers a [`Value`] of that type, or an error that
//! lists the type's accepted forms with a worked example ([`forms`]). Accepted, besides
//! the `$type` objects of [`crate::variant`] (unchanged):
//!
//! - JSON numbers and arrays: `[10, 20]` for a Vector2, `[x, y, w, h]` for a Rect2,
//!   `[r, g, b]` / `[r, g, b, a]` for a Color, columns for Transform2D/3D and Basis,
//!   arrays of rows for the packed arrays; ints for floats, integral floats for ints;
//! - Godot's own text syntax (`"Vector2(1, 2)"`, `"Rect2(0, 0, 16, 16)"`), read by
//!   [`crate::variant::from_variant_text`];
//! - for a Color: `"#rgb"`, `"#rgba"`, `"#rrggbb"`, `"#rrggbbaa"` and Godot's named
//!   colours (`"red"`, `"cornflower_blue"`, [`named_color`]);
//! - for an Object property: a `res://` path (→ [`Value::Resource`], loaded by the
//!   add-on, which checks the class), or `load("res://…")` / `Resource("res://…")`;
//! - for an int: an enum or flag constant by name (`"FILL_MODE_COUNTER_CLOCKWISE"`, a
//!   name of the property's hint, `"A|B"` for flags); names the hint does not list are
//!   resolved by the caller's `constant` (the add-on: ClassDB over the class chain);
//! - a String for a StringName or a NodePath property.
//!
//! [`same`] is the read-back's judge: what Godot holds against what was asked, reals
//! compared as the 32-bit floats Godot stores.

mod colors;
mod same;
mod shapes;
#[cfg(test)]
mod tests;

use crate::variant::{TYPE_NAMES, Value, from_variant_text};
pub use colors::{named_color, parse_color};
pub use same::{same, what_differs};
use shapes::{
    color, columns, int, ints, num, pair, reals, rect2, rect2i, rows, vector2, vector2i, vector3,
    vector3i,
};

/// Godot's `PROPERTY_HINT_ENUM`.
pub const HINT_ENUM: i64 = 2;
/// Godot's `PROPERTY_HINT_FLAGS`.
pub const HINT_FLAGS: i64 = 6;
/// Godot's `PROPERTY_HINT_RESOURCE_TYPE`.
pub const HINT_RESOURCE_TYPE: i64 = 17;

/// A property's declared type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Declared {
    /// Godot's Variant type name ([`TYPE_NAMES`]: `Vector2`, `Object`, `int`…); `Nil`
    /// for a property that takes any Variant.
    pub ty: String,
    /// For an Object property: the classes it takes (a resource-type hint's list, or the
    /// property's class name); empty when any.
    pub classes: Vec<String>,
    /// For an int property with an enum or flags hint: the hint's names and values.
    pub names: Vec<(String, i64)>,
    /// The names combine with `|` (a flags hint).
    pub flags: bool,
}

impl Declared {
    /// A declared type with no hint.
    pub fn of(ty: &str) -> Self {
        Self {
            ty: ty.to_string(),
            ..Self::default()
        }
    }

    /// From a property-list entry: the Variant type number, the hint, its string and
    /// the class name.
    pub fn from_property(type_id: i64, hint: i64, hint_string: &str, class_name: &str) -> Self {
        let ty = usize::try_from(type_id)
            .ok()
            .and_then(|i| TYPE_NAMES.get(i))
            .copied()
            .unwrap_or("Nil");
        let mut d = Self::of(ty);
        if ty == "Object" {
            let list = if hint == HINT_RESOURCE_TYPE && !hint_string.is_empty() {
                hint_string
            } else {
                class_name
            };
            d.classes = list
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
        }
        if ty == "int" && (hint == HINT_ENUM || hint == HINT_FLAGS) {
            d.flags = hint == HINT_FLAGS;
            d.names = hint_names(hint_string, d.flags);
        }
        d
    }
}

/// The names and values of an enum or flags hint string (`"Off,On:2,Auto"`: 0, 2, 3;
/// flags `"A,B,C"`: 1, 2, 4), as Godot's inspector reads it.
pub fn hint_names(hint_string: &str, flags: bool) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut next: i64 = if flags { 1 } else { 0 };
    for item in hint_string.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (name, value) = match item.rsplit_once(':') {
            Some((n, v)) => match v.trim().parse::<i64>() {
                Ok(v) => (n.trim(), v),
                Err(_) => (item, next),
            },
            None => (item, next),
        };
        out.push((name.to_string(), value));
        next = if flags {
            value.checked_mul(2).unwrap_or(value)
        } else {
            value + 1
        };
    }
    out
}

/// Why a value is not one of its declared type's forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoerceError(pub String);

impl std::fmt::Display for CoerceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The accepted forms of a declared type, with a worked example: what a refusal shows.
pub fn forms(ty: &str) -> &'static str {
    match ty {
        "bool" => "true or false (e.g. true)",
        "int" => {
            "an integer (e.g. 42; 2.0 is read as 2), or an enum/flag constant by name (\"FILL_MODE_COUNTER_CLOCKWISE\", \"A|B\" for flags)"
        }
        "float" => "a number (e.g. 1.5; 2 is read as 2.0)",
        "String" => "a string (e.g. \"text\")",
        "StringName" => "a string (e.g. \"idle\")",
        "NodePath" => {
            "a node path string (e.g. \"../Player\") or {\"$type\": \"NodePath\", \"path\": \"../Player\"}"
        }
        "Vector2" => {
            "[x, y] (e.g. [10, 20]), \"Vector2(10, 20)\" or {\"$type\": \"Vector2\", \"x\": 10, \"y\": 20}"
        }
        "Vector2i" => {
            "[x, y] of integers (e.g. [10, 20]), \"Vector2i(10, 20)\" or {\"$type\": \"Vector2i\", \"x\": 10, \"y\": 20}"
        }
        "Vector3" => {
            "[x, y, z] (e.g. [1, 2, 3]), \"Vector3(1, 2, 3)\" or {\"$type\": \"Vector3\", \"x\": 1, \"y\": 2, \"z\": 3}"
        }
        "Vector3i" => "[x, y, z] of integers (e.g. [1, 2, 3]) or \"Vector3i(1, 2, 3)\"",
        "Vector4" => "[x, y, z, w] (e.g. [1, 2, 3, 4]) or \"Vector4(1, 2, 3, 4)\"",
        "Vector4i" => "[x, y, z, w] of integers (e.g. [1, 2, 3, 4]) or \"Vector4i(1, 2, 3, 4)\"",
        "Rect2" => {
            "[x, y, w, h] (e.g. [0, 0, 16, 16]), [[x, y], [w, h]], \"Rect2(0, 0, 16, 16)\" or {\"$type\": \"Rect2\", \"position\": [0, 0], \"size\": [16, 16]}"
        }
        "Rect2i" => {
            "[x, y, w, h] of integers (e.g. [0, 0, 16, 16]), [[x, y], [w, h]] or \"Rect2i(0, 0, 16, 16)\""
        }
        "Color" => {
            "\"#rrggbb\" (e.g. \"#ff0000\"), \"#rgb\", \"#rrggbbaa\", a Godot colour name (\"red\", \"cornflower_blue\"), [r, g, b] or [r, g, b, a] in 0..1 (e.g. [1, 0, 0]), or \"Color(1, 0, 0)\""
        }
        "Quaternion" => "[x, y, z, w] (e.g. [0, 0, 0, 1]) or \"Quaternion(0, 0, 0, 1)\"",
        "Plane" => {
            "[a, b, c, d] (normal a, b, c; distance d; e.g. [0, 1, 0, 0]) or \"Plane(0, 1, 0, 0)\""
        }
        "AABB" => {
            "[x, y, z, w, h, d] (e.g. [0, 0, 0, 1, 1, 1]), [[x, y, z], [w, h, d]] or \"AABB(0, 0, 0, 1, 1, 1)\""
        }
        "Basis" => {
            "three columns [[xx, xy, xz], [yx, yy, yz], [zx, zy, zz]] (e.g. [[1, 0, 0], [0, 1, 0], [0, 0, 1]])"
        }
        "Transform2D" => {
            "three columns [[xx, xy], [yx, yy], [ox, oy]] (e.g. [[1, 0], [0, 1], [10, 20]]), or \"Transform2D(1, 0, 0, 1, 10, 20)\""
        }
        "Transform3D" => {
            "four columns [x, y, z, origin] of [a, b, c] (e.g. [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 2, 0]])"
        }
        "Projection" => {
            "four columns of [a, b, c, d] (e.g. [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])"
        }
        "PackedVector2Array" => "an array of [x, y] rows (e.g. [[0, 0], [16, 0], [16, 16]])",
        "PackedVector3Array" => "an array of [x, y, z] rows (e.g. [[0, 0, 0], [1, 0, 0]])",
        "PackedVector4Array" => "an array of [x, y, z, w] rows (e.g. [[0, 0, 0, 1]])",
        "PackedColorArray" => {
            "an array of colours, each [r, g, b(, a)], \"#rrggbb\" or \"Color(r, g, b, a)\" (e.g. [\"#ff0000\", [0, 0, 1]])"
        }
        "PackedFloat32Array" | "PackedFloat64Array" => "an array of numbers (e.g. [0.5, 1, 2])",
        "PackedInt32Array" | "PackedInt64Array" => "an array of integers (e.g. [1, 2, 3])",
        "PackedByteArray" => "an array of integers 0..255 (e.g. [0, 127, 255])",
        "PackedStringArray" => "an array of strings (e.g. [\"a\", \"b\"])",
        "Array" => "an array (e.g. [1, \"a\"])",
        "Dictionary" => "an object (e.g. {\"key\": 1})",
        "Object" => {
            "a res:// path (e.g. \"res://icon.svg\"), null, or a new built-in resource {\"$type\": \"Resource\", \"class\": \"CircleShape2D\", \"properties\": {\"radius\": 8}}"
        }
        _ => {
            "a value of that type in Godot's text syntax, or {\"$type\": \"Raw\", \"text\": \"…\"} (e.g. {\"$type\": \"Raw\", \"text\": \"Vector2(1, 2)\"})"
        }
    }
}

fn refuse<T>(value: &Value, d: &Declared) -> Result<T, CoerceError> {
    let sent = value.to_json().to_string();
    let sent = if sent.chars().count() > 120 {
        format!("{}…", sent.chars().take(120).collect::<String>())
    } else {
        sent
    };
    let what = match (d.ty.as_str(), d.classes.as_slice()) {
        ("Object", [_, ..]) => format!("an Object property ({})", d.classes.join(" or ")),
        (ty, _) => format!("a {ty} property"),
    };
    let names = if d.names.is_empty() {
        String::new()
    } else {
        let list: Vec<&str> = d.names.iter().take(12).map(|(n, _)| n.as_str()).collect();
        format!("; its names: {}", list.join(", "))
    };
    Err(CoerceError(format!(
        "{sent} is not a value for {what}. Accepted: {}{names}",
        forms(&d.ty)
    )))
}

/// Resources Godot takes inside plain dictionaries, as `res://` strings an agent writes:
/// `SpriteFrames.animations[*].frames[*].texture` (a Texture2D, in an untyped Array of
/// Dictionaries, so no declared type reaches it). Everything else is returned as given.
pub fn nested_resources(class: &str, property: &str, value: &Value) -> Value {
    if class != "SpriteFrames" || property != "animations" {
        return value.clone();
    }
    let texture = |v: &Value| match v {
        Value::String(p) if p.starts_with("res://") => Value::Resource(p.clone()),
        other => other.clone(),
    };
    let frame = |f: &Value| match f {
        Value::Dictionary(e) => Value::Dictionary(
            e.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        if k == "texture" {
                            texture(v)
                        } else {
                            v.clone()
                        },
                    )
                })
                .collect(),
        ),
        other => other.clone(),
    };
    let animation = |a: &Value| match a {
        Value::Dictionary(e) => Value::Dictionary(
            e.iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("frames", Value::Array(fs)) => {
                        (k.clone(), Value::Array(fs.iter().map(frame).collect()))
                    }
                    _ => (k.clone(), v.clone()),
                })
                .collect(),
        ),
        other => other.clone(),
    };
    match value {
        Value::Array(anims) => Value::Array(anims.iter().map(animation).collect()),
        other => other.clone(),
    }
}

/// `value` as a value of the declared type `d`, or an error naming the accepted forms.
/// `constant` resolves an integer constant name the hint does not list (the add-on:
/// ClassDB over the object's class chain).
pub fn coerce(
    value: &Value,
    d: &Declared,
    constant: &dyn Fn(&str) -> Option<i64>,
) -> Result<Value, CoerceError> {
    coerce_at(value, d, constant, true)
}

/// A Dictionary value (`value`, a JSON object) whose entries are read by the types the
/// property holds now at the same keys (`held`: key, Variant type name), as a property
/// is read by its declared type: Godot's text or our forms of a `PackedVector2Array` under
/// Curve2D's `_data` `points`, say. Keys the property does not hold yet, and `Nil` or
/// `String` ones, are taken as sent. Anything but a plain object is [`coerce`]d whole.
pub fn coerce_entries(
    value: &Value,
    held: &[(String, String)],
    constant: &dyn Fn(&str) -> Option<i64>,
) -> Result<Value, CoerceError> {
    let dictionary = Declared::of("Dictionary");
    let Value::Dictionary(entries) = value else {
        return coerce(value, &dictionary, constant);
    };
    let mut out = Vec::with_capacity(entries.len());
    for (key, v) in entries {
        let ty = held.iter().find(|(k, _)| k == key).map(|(_, t)| t.as_str());
        let v = match ty {
            Some(ty) if !matches!(ty, "Nil" | "String") => {
                coerce(v, &Declared::of(ty), constant)
                    .map_err(|e| CoerceError(format!("{key}: {}", e.0)))?
            }
            _ => v.clone(),
        };
        out.push((key.clone(), v));
    }
    Ok(Value::Dictionary(out))
}

fn coerce_at(
    value: &Value,
    d: &Declared,
    constant: &dyn Fn(&str) -> Option<i64>,
    text_ok: bool,
) -> Result<Value, CoerceError> {
    // Godot's text is always Godot's: parsed by Godot itself.
    if let Value::Raw(_) = value {
        return Ok(value.clone());
    }
    let ty = d.ty.as_str();
    // A string where another type is declared: a form of that type first (a colour,
    // a path, a constant), then Godot's text syntax.
    if let Value::String(s) = value
        && !matches!(ty, "String" | "StringName" | "NodePath" | "Nil")
    {
        if let Some(v) = string_form(s, d, constant) {
            return Ok(v);
        }
        if text_ok {
            let parsed = from_variant_text(s.trim());
            if !matches!(parsed, Value::Raw(_) | Value::String(_)) {
                return coerce_at(&parsed, d, constant, false).or_else(|_| refuse(value, d));
            }
        }
        return refuse(value, d);
    }
    let out = match (ty, value) {
        ("Nil", v) => Some(v.clone()),
        ("bool", Value::Bool(_)) => Some(value.clone()),
        ("int", v) => int(v).map(Value::Int),
        ("float", v) => num(v).map(Value::Float),
        ("String", Value::String(_)) => Some(value.clone()),
        ("String", Value::StringName(s)) => Some(Value::String(s.clone())),
        ("StringName", Value::String(s) | Value::StringName(s)) => {
            Some(Value::StringName(s.clone()))
        }
        ("NodePath", Value::String(s) | Value::NodePath(s)) => Some(Value::NodePath(s.clone())),
        ("Vector2", v) => vector2(v),
        ("Vector2i", v) => vector2i(v),
        ("Vector3", v) => vector3(v),
        ("Vector3i", v) => vector3i(v),
        ("Vector4", Value::Vector4(_)) => Some(value.clone()),
        ("Vector4", v) => reals::<4>(v).map(Value::Vector4),
        ("Vector4i", Value::Vector4i(_)) => Some(value.clone()),
        ("Vector4i", v) => ints::<4>(v).map(Value::Vector4i),
        ("Quaternion", Value::Quaternion(_)) => Some(value.clone()),
        ("Quaternion", v) => reals::<4>(v).map(Value::Quaternion),
        ("Color", v) => color(v),
        ("Rect2", v) => rect2(v),
        ("Rect2i", v) => rect2i(v),
        ("Plane", Value::Plane { .. }) => Some(value.clone()),
        ("Plane", v) => reals::<4>(v).map(|[a, b, c, dd]| Value::Plane {
            normal: [a, b, c],
            d: dd,
        }),
        ("AABB", Value::Aabb { .. }) => Some(value.clone()),
        ("AABB", v) => pair::<3>(v).map(|(position, size)| Value::Aabb { position, size }),
        ("Basis", Value::Basis(_)) => Some(value.clone()),
        ("Basis", v) => columns::<3, 3>(v).map(Value::Basis),
        ("Projection", Value::Projection(_)) => Some(value.clone()),
        ("Projection", v) => columns::<4, 4>(v).map(Value::Projection),
        ("Transform2D", Value::Transform2D { .. }) => Some(value.clone()),
        ("Transform2D", v) => columns::<3, 2>(v)
            .or_else(|| reals::<6>(v).map(|[a, b, c, dd, e, f]| [[a, b], [c, dd], [e, f]]))
            .map(|[x, y, origin]| Value::Transform2D { x, y, origin }),
        ("Transform3D", Value::Transform3D { .. }) => Some(value.clone()),
        ("Transform3D", v) => columns::<4, 3>(v).map(|[x, y, z, origin]| Value::Transform3D {
            basis: [x, y, z],
            origin,
        }),
        ("PackedVector2Array", Value::PackedVector2Array(_)) => Some(value.clone()),
        ("PackedVector2Array", v) => rows(v, reals::<2>).map(Value::PackedVector2Array),
        ("PackedVector3Array", Value::PackedVector3Array(_)) => Some(value.clone()),
        ("PackedVector3Array", v) => rows(v, reals::<3>).map(Value::PackedVector3Array),
        ("PackedVector4Array", Value::PackedVector4Array(_)) => Some(value.clone()),
        ("PackedVector4Array", v) => rows(v, reals::<4>).map(Value::PackedVector4Array),
        ("PackedColorArray", Value::PackedColorArray(_)) => Some(value.clone()),
        ("PackedColorArray", v) => rows(v, |c| match color(c) {
            Some(Value::Color(c)) => Some(c),
            _ => None,
        })
        .map(Value::PackedColorArray),
        ("PackedFloat32Array", Value::PackedFloat32Array(_)) => Some(value.clone()),
        ("PackedFloat32Array", v) => rows(v, num).map(Value::PackedFloat32Array),
        ("PackedFloat64Array", Value::PackedFloat64Array(_)) => Some(value.clone()),
        ("PackedFloat64Array", v) => rows(v, num).map(Value::PackedFloat64Array),
        ("PackedInt32Array", Value::PackedInt32Array(_)) => Some(value.clone()),
        ("PackedInt32Array", v) => {
            rows(v, |i| int(i).filter(|i| i32::try_from(*i).is_ok())).map(Value::PackedInt32Array)
        }
        ("PackedInt64Array", Value::PackedInt64Array(_)) => Some(value.clone()),
        ("PackedInt64Array", v) => rows(v, int).map(Value::PackedInt64Array),
        ("PackedByteArray", Value::PackedByteArray(_)) => Some(value.clone()),
        ("PackedByteArray", v) => {
            rows(v, |i| int(i).and_then(|i| u8::try_from(i).ok())).map(Value::PackedByteArray)
        }
        ("PackedStringArray", Value::PackedStringArray(_)) => Some(value.clone()),
        ("PackedStringArray", v) => rows(v, |s| match s {
            Value::String(s) | Value::StringName(s) => Some(s.clone()),
            _ => None,
        })
        .map(Value::PackedStringArray),
        ("Array", Value::Array(_) | Value::TypedArray { .. }) => Some(value.clone()),
        ("Dictionary", Value::Dictionary(_) | Value::Map { .. }) => Some(value.clone()),
        ("Object", Value::Nil | Value::Resource(_) | Value::NewResource { .. }) => {
            Some(value.clone())
        }
        ("RID" | "Callable" | "Signal", _) => None,
        _ => None,
    };
    match out {
        Some(v) => Ok(v),
        None => refuse(value, d),
    }
}

/// A string that is a form of the declared type other than Godot's text syntax.
fn string_form(s: &str, d: &Declared, constant: &dyn Fn(&str) -> Option<i64>) -> Option<Value> {
    let t = s.trim();
    match d.ty.as_str() {
        "Color" => parse_color(t).map(Value::Color),
        "PackedColorArray" => parse_color(t).map(|c| Value::PackedColorArray(vec![c])),
        "Object" => resource_path(t).map(|p| Value::Resource(p.to_string())),
        "int" => constant_value(t, d, constant).map(Value::Int),
        _ => None,
    }
}

/// `res://…`, `load("res://…")`, `preload("res://…")` or `Resource("res://…")`: the path.
fn resource_path(t: &str) -> Option<&str> {
    if t.starts_with("res://") {
        return Some(t);
    }
    for call in ["load(", "preload(", "Resource(", "ResourceLoader.load("] {
        if let Some(inner) = t.strip_prefix(call).and_then(|r| r.strip_suffix(')')) {
            let inner = inner.trim();
            let unquoted = inner
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .or_else(|| inner.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))?;
            if unquoted.starts_with("res://") && !unquoted.contains(['"', '\'']) {
                return Some(unquoted);
            }
        }
    }
    None
}

/// A name for comparison: upper case, spaces and dashes as underscores.
fn norm(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            ' ' | '-' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

/// An enum or flag constant by name: a name of the hint (`"Center"`), what `constant`
/// resolves (the class's constants), or a global constant of the hint's enum
/// (`"HORIZONTAL_ALIGNMENT_CENTER"`: ending in `_` + exactly one hint name); `"A|B"`
/// ORs flags.
fn constant_value(t: &str, d: &Declared, constant: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    if !t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return None;
    }
    let one = |name: &str| -> Option<i64> {
        let n = norm(name);
        if let Some((_, v)) = d.names.iter().find(|(h, _)| norm(h) == n) {
            return Some(*v);
        }
        if let Some(v) = constant(name.trim()) {
            return Some(v);
        }
        let suffixed: Vec<i64> = d
            .names
            .iter()
            .filter(|(h, _)| n.ends_with(&format!("_{}", norm(h))))
            .map(|(_, v)| *v)
            .collect();
        match suffixed.as_slice() {
            [v] => Some(*v),
            _ => None,
        }
    };
    if t.contains('|') {
        return t
            .split('|')
            .try_fold(0i64, |acc, part| Some(acc | one(part)?));
    }
    one(t)
}

/// A JSON value as Godot text of the declared Variant type `ty`: `"#203040"` for a Color
/// is `Color(0.1254902, 0.1882353, 0.2509804, 1)`, `[1280, 720]` for a Vector2i
/// `Vector2i(1280, 720)`. `Ok(None)` when JSON already says it (a String, Array,
/// Dictionary or any-Variant property) or `ty` is not a Variant type (a class): the
/// caller writes the JSON as it is. An error names the type's accepted forms.
pub fn json_as_declared_text(json: &serde_json::Value, ty: &str) -> Result<Option<String>, String> {
    if !TYPE_NAMES.contains(&ty) || matches!(ty, "Nil" | "String" | "Array" | "Dictionary") {
        return Ok(None);
    }
    let asked = Value::from_json(json).map_err(|e| e.to_string())?;
    let typed = coerce(&asked, &Declared::of(ty), &|_| None).map_err(|e| e.to_string())?;
    Ok(crate::variant::to_text(&typed))
}
