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

use serde_json::Value as Json;

use crate::variant::{TYPE_NAMES, Value, from_variant_text, real};

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
            "an array of colours, each [r, g, b(, a)] or \"#rrggbb\" (e.g. [\"#ff0000\", [0, 0, 1]])"
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

/// `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa` (the `#` optional for 6 and 8 digits, as
/// Godot's `Color.html`) or a Godot colour name.
pub fn parse_color(t: &str) -> Option<[f64; 4]> {
    let hex = t.strip_prefix('#');
    let digits = hex.unwrap_or(t);
    let all_hex = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_hexdigit());
    if all_hex && (hex.is_some() || matches!(digits.len(), 6 | 8)) {
        let nib = |i: usize| u8::from_str_radix(&digits[i..=i], 16).ok();
        let byte = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
        let c = |v: u8, max: f64| real(f64::from(v) / max);
        return match digits.len() {
            3 | 4 => {
                let a = if digits.len() == 4 { nib(3)? } else { 15 };
                Some([
                    c(nib(0)?, 15.0),
                    c(nib(1)?, 15.0),
                    c(nib(2)?, 15.0),
                    c(a, 15.0),
                ])
            }
            6 | 8 => {
                let a = if digits.len() == 8 { byte(6)? } else { 255 };
                Some([
                    c(byte(0)?, 255.0),
                    c(byte(2)?, 255.0),
                    c(byte(4)?, 255.0),
                    c(a, 255.0),
                ])
            }
            _ => None,
        };
    }
    named_color(t)
}

/// A colour of Godot's named-colour table (`core/math/color_names.inc`), matched as
/// `Color.from_string` matches it: case, spaces, `-`, `_`, `'` and `.` ignored.
pub fn named_color(name: &str) -> Option<[f64; 4]> {
    let key: String = name
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_' | '\'' | '.'))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    NAMED_COLORS
        .iter()
        .find(|(n, _)| n.replace('_', "") == key)
        .map(|(_, [r, g, b, a])| [real(*r), real(*g), real(*b), real(*a)])
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
        _ => None,
    }
}

fn reals<const N: usize>(v: &Value) -> Option<[f64; N]> {
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

fn ints<const N: usize>(v: &Value) -> Option<[i64; N]> {
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
fn pair<const N: usize>(v: &Value) -> Option<([f64; N], [f64; N])> {
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

fn columns<const C: usize, const R: usize>(v: &Value) -> Option<[[f64; R]; C]> {
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

fn rows<T>(v: &Value, each: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
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

fn vector2(v: &Value) -> Option<Value> {
    match v {
        Value::Vector2(_) => Some(v.clone()),
        Value::Vector2i([x, y]) => Some(Value::Vector2([*x as f64, *y as f64])),
        Value::Dictionary(_) => vector2(&xyz(v, &["x", "y"])?),
        _ => reals::<2>(v).map(Value::Vector2),
    }
}

fn vector2i(v: &Value) -> Option<Value> {
    match v {
        Value::Vector2i(_) => Some(v.clone()),
        Value::Vector2([x, y]) => vector2i(&Value::Array(vec![Value::Float(*x), Value::Float(*y)])),
        Value::Dictionary(_) => vector2i(&xyz(v, &["x", "y"])?),
        _ => ints::<2>(v).map(Value::Vector2i),
    }
}

fn vector3(v: &Value) -> Option<Value> {
    match v {
        Value::Vector3(_) => Some(v.clone()),
        Value::Vector3i([x, y, z]) => Some(Value::Vector3([*x as f64, *y as f64, *z as f64])),
        Value::Dictionary(_) => vector3(&xyz(v, &["x", "y", "z"])?),
        _ => reals::<3>(v).map(Value::Vector3),
    }
}

fn vector3i(v: &Value) -> Option<Value> {
    match v {
        Value::Vector3i(_) => Some(v.clone()),
        Value::Vector3(c) => vector3i(&Value::Array(c.iter().map(|f| Value::Float(*f)).collect())),
        Value::Dictionary(_) => vector3i(&xyz(v, &["x", "y", "z"])?),
        _ => ints::<3>(v).map(Value::Vector3i),
    }
}

fn color(v: &Value) -> Option<Value> {
    match v {
        Value::Color(_) => Some(v.clone()),
        Value::String(s) => parse_color(s.trim()).map(Value::Color),
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

fn rect2(v: &Value) -> Option<Value> {
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

fn rect2i(v: &Value) -> Option<Value> {
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

/// Godot's named colours, from `core/math/color_names.inc` (Godot 4).
const NAMED_COLORS: &[(&str, [f64; 4])] = &[
    ("ALICE_BLUE", [0.94, 0.97, 1.00, 1.0]),
    ("ANTIQUE_WHITE", [0.98, 0.92, 0.84, 1.0]),
    ("AQUA", [0.00, 1.00, 1.00, 1.0]),
    ("AQUAMARINE", [0.50, 1.00, 0.83, 1.0]),
    ("AZURE", [0.94, 1.00, 1.00, 1.0]),
    ("BEIGE", [0.96, 0.96, 0.86, 1.0]),
    ("BISQUE", [1.00, 0.89, 0.77, 1.0]),
    ("BLACK", [0.00, 0.00, 0.00, 1.0]),
    ("BLANCHED_ALMOND", [1.00, 0.92, 0.80, 1.0]),
    ("BLUE", [0.00, 0.00, 1.00, 1.0]),
    ("BLUE_VIOLET", [0.54, 0.17, 0.89, 1.0]),
    ("BROWN", [0.65, 0.16, 0.16, 1.0]),
    ("BURLYWOOD", [0.87, 0.72, 0.53, 1.0]),
    ("CADET_BLUE", [0.37, 0.62, 0.63, 1.0]),
    ("CHARTREUSE", [0.50, 1.00, 0.00, 1.0]),
    ("CHOCOLATE", [0.82, 0.41, 0.12, 1.0]),
    ("CORAL", [1.00, 0.50, 0.31, 1.0]),
    ("CORNFLOWER_BLUE", [0.39, 0.58, 0.93, 1.0]),
    ("CORNSILK", [1.00, 0.97, 0.86, 1.0]),
    ("CRIMSON", [0.86, 0.08, 0.24, 1.0]),
    ("CYAN", [0.00, 1.00, 1.00, 1.0]),
    ("DARK_BLUE", [0.00, 0.00, 0.55, 1.0]),
    ("DARK_CYAN", [0.00, 0.55, 0.55, 1.0]),
    ("DARK_GOLDENROD", [0.72, 0.53, 0.04, 1.0]),
    ("DARK_GRAY", [0.66, 0.66, 0.66, 1.0]),
    ("DARK_GREEN", [0.00, 0.39, 0.00, 1.0]),
    ("DARK_KHAKI", [0.74, 0.72, 0.42, 1.0]),
    ("DARK_MAGENTA", [0.55, 0.00, 0.55, 1.0]),
    ("DARK_OLIVE_GREEN", [0.33, 0.42, 0.18, 1.0]),
    ("DARK_ORANGE", [1.00, 0.55, 0.00, 1.0]),
    ("DARK_ORCHID", [0.60, 0.20, 0.80, 1.0]),
    ("DARK_RED", [0.55, 0.00, 0.00, 1.0]),
    ("DARK_SALMON", [0.91, 0.59, 0.48, 1.0]),
    ("DARK_SEA_GREEN", [0.56, 0.74, 0.56, 1.0]),
    ("DARK_SLATE_BLUE", [0.28, 0.24, 0.55, 1.0]),
    ("DARK_SLATE_GRAY", [0.18, 0.31, 0.31, 1.0]),
    ("DARK_TURQUOISE", [0.00, 0.81, 0.82, 1.0]),
    ("DARK_VIOLET", [0.58, 0.00, 0.83, 1.0]),
    ("DEEP_PINK", [1.00, 0.08, 0.58, 1.0]),
    ("DEEP_SKY_BLUE", [0.00, 0.75, 1.00, 1.0]),
    ("DIM_GRAY", [0.41, 0.41, 0.41, 1.0]),
    ("DODGER_BLUE", [0.12, 0.56, 1.00, 1.0]),
    ("FIREBRICK", [0.70, 0.13, 0.13, 1.0]),
    ("FLORAL_WHITE", [1.00, 0.98, 0.94, 1.0]),
    ("FOREST_GREEN", [0.13, 0.55, 0.13, 1.0]),
    ("FUCHSIA", [1.00, 0.00, 1.00, 1.0]),
    ("GAINSBORO", [0.86, 0.86, 0.86, 1.0]),
    ("GHOST_WHITE", [0.97, 0.97, 1.00, 1.0]),
    ("GOLD", [1.00, 0.84, 0.00, 1.0]),
    ("GOLDENROD", [0.85, 0.65, 0.13, 1.0]),
    ("GRAY", [0.75, 0.75, 0.75, 1.0]),
    ("GREEN", [0.00, 1.00, 0.00, 1.0]),
    ("GREEN_YELLOW", [0.68, 1.00, 0.18, 1.0]),
    ("HONEYDEW", [0.94, 1.00, 0.94, 1.0]),
    ("HOT_PINK", [1.00, 0.41, 0.71, 1.0]),
    ("INDIAN_RED", [0.80, 0.36, 0.36, 1.0]),
    ("INDIGO", [0.29, 0.00, 0.51, 1.0]),
    ("IVORY", [1.00, 1.00, 0.94, 1.0]),
    ("KHAKI", [0.94, 0.90, 0.55, 1.0]),
    ("LAVENDER", [0.90, 0.90, 0.98, 1.0]),
    ("LAVENDER_BLUSH", [1.00, 0.94, 0.96, 1.0]),
    ("LAWN_GREEN", [0.49, 0.99, 0.00, 1.0]),
    ("LEMON_CHIFFON", [1.00, 0.98, 0.80, 1.0]),
    ("LIGHT_BLUE", [0.68, 0.85, 0.90, 1.0]),
    ("LIGHT_CORAL", [0.94, 0.50, 0.50, 1.0]),
    ("LIGHT_CYAN", [0.88, 1.00, 1.00, 1.0]),
    ("LIGHT_GOLDENROD", [0.98, 0.98, 0.82, 1.0]),
    ("LIGHT_GRAY", [0.83, 0.83, 0.83, 1.0]),
    ("LIGHT_GREEN", [0.56, 0.93, 0.56, 1.0]),
    ("LIGHT_PINK", [1.00, 0.71, 0.76, 1.0]),
    ("LIGHT_SALMON", [1.00, 0.63, 0.48, 1.0]),
    ("LIGHT_SEA_GREEN", [0.13, 0.70, 0.67, 1.0]),
    ("LIGHT_SKY_BLUE", [0.53, 0.81, 0.98, 1.0]),
    ("LIGHT_SLATE_GRAY", [0.47, 0.53, 0.60, 1.0]),
    ("LIGHT_STEEL_BLUE", [0.69, 0.77, 0.87, 1.0]),
    ("LIGHT_YELLOW", [1.00, 1.00, 0.88, 1.0]),
    ("LIME", [0.00, 1.00, 0.00, 1.0]),
    ("LIME_GREEN", [0.20, 0.80, 0.20, 1.0]),
    ("LINEN", [0.98, 0.94, 0.90, 1.0]),
    ("MAGENTA", [1.00, 0.00, 1.00, 1.0]),
    ("MAROON", [0.69, 0.19, 0.38, 1.0]),
    ("MEDIUM_AQUAMARINE", [0.40, 0.80, 0.67, 1.0]),
    ("MEDIUM_BLUE", [0.00, 0.00, 0.80, 1.0]),
    ("MEDIUM_ORCHID", [0.73, 0.33, 0.83, 1.0]),
    ("MEDIUM_PURPLE", [0.58, 0.44, 0.86, 1.0]),
    ("MEDIUM_SEA_GREEN", [0.24, 0.70, 0.44, 1.0]),
    ("MEDIUM_SLATE_BLUE", [0.48, 0.41, 0.93, 1.0]),
    ("MEDIUM_SPRING_GREEN", [0.00, 0.98, 0.60, 1.0]),
    ("MEDIUM_TURQUOISE", [0.28, 0.82, 0.80, 1.0]),
    ("MEDIUM_VIOLET_RED", [0.78, 0.08, 0.52, 1.0]),
    ("MIDNIGHT_BLUE", [0.10, 0.10, 0.44, 1.0]),
    ("MINT_CREAM", [0.96, 1.00, 0.98, 1.0]),
    ("MISTY_ROSE", [1.00, 0.89, 0.88, 1.0]),
    ("MOCCASIN", [1.00, 0.89, 0.71, 1.0]),
    ("NAVAJO_WHITE", [1.00, 0.87, 0.68, 1.0]),
    ("NAVY_BLUE", [0.00, 0.00, 0.50, 1.0]),
    ("OLD_LACE", [0.99, 0.96, 0.90, 1.0]),
    ("OLIVE", [0.50, 0.50, 0.00, 1.0]),
    ("OLIVE_DRAB", [0.42, 0.56, 0.14, 1.0]),
    ("ORANGE", [1.00, 0.65, 0.00, 1.0]),
    ("ORANGE_RED", [1.00, 0.27, 0.00, 1.0]),
    ("ORCHID", [0.85, 0.44, 0.84, 1.0]),
    ("PALE_GOLDENROD", [0.93, 0.91, 0.67, 1.0]),
    ("PALE_GREEN", [0.60, 0.98, 0.60, 1.0]),
    ("PALE_TURQUOISE", [0.69, 0.93, 0.93, 1.0]),
    ("PALE_VIOLET_RED", [0.86, 0.44, 0.58, 1.0]),
    ("PAPAYA_WHIP", [1.00, 0.94, 0.84, 1.0]),
    ("PEACH_PUFF", [1.00, 0.85, 0.73, 1.0]),
    ("PERU", [0.80, 0.52, 0.25, 1.0]),
    ("PINK", [1.00, 0.75, 0.80, 1.0]),
    ("PLUM", [0.87, 0.63, 0.87, 1.0]),
    ("POWDER_BLUE", [0.69, 0.88, 0.90, 1.0]),
    ("PURPLE", [0.63, 0.13, 0.94, 1.0]),
    ("REBECCA_PURPLE", [0.40, 0.20, 0.60, 1.0]),
    ("RED", [1.00, 0.00, 0.00, 1.0]),
    ("ROSY_BROWN", [0.74, 0.56, 0.56, 1.0]),
    ("ROYAL_BLUE", [0.25, 0.41, 0.88, 1.0]),
    ("SADDLE_BROWN", [0.55, 0.27, 0.07, 1.0]),
    ("SALMON", [0.98, 0.50, 0.45, 1.0]),
    ("SANDY_BROWN", [0.96, 0.64, 0.38, 1.0]),
    ("SEA_GREEN", [0.18, 0.55, 0.34, 1.0]),
    ("SEASHELL", [1.00, 0.96, 0.93, 1.0]),
    ("SIENNA", [0.63, 0.32, 0.18, 1.0]),
    ("SILVER", [0.75, 0.75, 0.75, 1.0]),
    ("SKY_BLUE", [0.53, 0.81, 0.92, 1.0]),
    ("SLATE_BLUE", [0.42, 0.35, 0.80, 1.0]),
    ("SLATE_GRAY", [0.44, 0.50, 0.56, 1.0]),
    ("SNOW", [1.00, 0.98, 0.98, 1.0]),
    ("SPRING_GREEN", [0.00, 1.00, 0.50, 1.0]),
    ("STEEL_BLUE", [0.27, 0.51, 0.71, 1.0]),
    ("TAN", [0.82, 0.71, 0.55, 1.0]),
    ("TEAL", [0.00, 0.50, 0.50, 1.0]),
    ("THISTLE", [0.85, 0.75, 0.85, 1.0]),
    ("TOMATO", [1.00, 0.39, 0.28, 1.0]),
    ("TRANSPARENT", [1.00, 1.00, 1.00, 0.00]),
    ("TURQUOISE", [0.25, 0.88, 0.82, 1.0]),
    ("VIOLET", [0.93, 0.51, 0.93, 1.0]),
    ("WEB_GRAY", [0.50, 0.50, 0.50, 1.0]),
    ("WEB_GREEN", [0.00, 0.50, 0.00, 1.0]),
    ("WEB_MAROON", [0.50, 0.00, 0.00, 1.0]),
    ("WEB_PURPLE", [0.50, 0.00, 0.50, 1.0]),
    ("WHEAT", [0.96, 0.87, 0.70, 1.0]),
    ("WHITE", [1.00, 1.00, 1.00, 1.0]),
    ("WHITE_SMOKE", [0.96, 0.96, 0.96, 1.0]),
    ("YELLOW", [1.00, 1.00, 0.00, 1.0]),
    ("YELLOW_GREEN", [0.60, 0.80, 0.20, 1.0]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn none(_: &str) -> Option<i64> {
        None
    }

    fn c(json: Json, ty: &str) -> Result<Value, CoerceError> {
        coerce(&Value::from_json(&json).unwrap(), &Declared::of(ty), &none)
    }

    fn ok(json: Json, ty: &str) -> Value {
        c(json.clone(), ty).unwrap_or_else(|e| panic!("{json} as {ty}: {e}"))
    }

    #[test]
    fn vectors_from_arrays_objects_and_godot_text() {
        let v2 = Value::Vector2([10.0, 20.0]);
        assert_eq!(ok(json!([10, 20]), "Vector2"), v2);
        assert_eq!(ok(json!([10.0, 20]), "Vector2"), v2);
        assert_eq!(ok(json!("Vector2(10, 20)"), "Vector2"), v2);
        assert_eq!(ok(json!({"x": 10, "y": 20}), "Vector2"), v2);
        assert_eq!(
            ok(json!({"$type": "Vector2", "x": 10, "y": 20}), "Vector2"),
            v2
        );
        assert_eq!(ok(json!("Vector2i(10, 20)"), "Vector2"), v2);
        assert_eq!(ok(json!([10, 20.0]), "Vector2i"), Value::Vector2i([10, 20]));
        assert_eq!(
            ok(json!([1, 2, 3]), "Vector3"),
            Value::Vector3([1.0, 2.0, 3.0])
        );
        assert_eq!(
            ok(json!("Vector3(1, 2, 3)"), "Vector3"),
            Value::Vector3([1.0, 2.0, 3.0])
        );
        assert_eq!(ok(json!([1, 2, 3]), "Vector3i"), Value::Vector3i([1, 2, 3]));
        assert_eq!(
            ok(json!([1, 2, 3, 4]), "Vector4"),
            Value::Vector4([1.0, 2.0, 3.0, 4.0])
        );
        assert_eq!(
            ok(json!([1, 2, 3, 4]), "Vector4i"),
            Value::Vector4i([1, 2, 3, 4])
        );
        assert_eq!(
            ok(json!([0, 0, 0, 1]), "Quaternion"),
            Value::Quaternion([0.0, 0.0, 0.0, 1.0])
        );
        assert!(c(json!([1.5, 2]), "Vector2i").is_err());
        assert!(c(json!([1, 2, 3]), "Vector2").is_err());
    }

    #[test]
    fn rects_boxes_planes_transforms_and_bases() {
        let r = Value::Rect2 {
            position: [0.0, 0.0],
            size: [16.0, 16.0],
        };
        assert_eq!(ok(json!([0, 0, 16, 16]), "Rect2"), r);
        assert_eq!(ok(json!([[0, 0], [16, 16]]), "Rect2"), r);
        assert_eq!(ok(json!("Rect2(0, 0, 16, 16)"), "Rect2"), r);
        assert_eq!(
            ok(json!({"position": [0, 0], "size": [16, 16]}), "Rect2"),
            r
        );
        assert_eq!(
            ok(
                json!({"$type": "Rect2", "position": [0, 0], "size": [16, 16]}),
                "Rect2"
            ),
            r
        );
        assert_eq!(
            ok(json!([0, 0, 16, 16]), "Rect2i"),
            Value::Rect2i {
                position: [0, 0],
                size: [16, 16]
            }
        );
        assert_eq!(
            ok(json!("Rect2i(0, 0, 16, 16)"), "Rect2i"),
            Value::Rect2i {
                position: [0, 0],
                size: [16, 16]
            }
        );
        assert_eq!(
            ok(json!([0, 1, 0, 2]), "Plane"),
            Value::Plane {
                normal: [0.0, 1.0, 0.0],
                d: 2.0
            }
        );
        let aabb = Value::Aabb {
            position: [0.0, 0.0, 0.0],
            size: [1.0, 2.0, 3.0],
        };
        assert_eq!(ok(json!([0, 0, 0, 1, 2, 3]), "AABB"), aabb);
        assert_eq!(ok(json!([[0, 0, 0], [1, 2, 3]]), "AABB"), aabb);
        assert_eq!(ok(json!("AABB(0, 0, 0, 1, 2, 3)"), "AABB"), aabb);
        let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert_eq!(
            ok(json!([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), "Basis"),
            Value::Basis(id)
        );
        let t2 = Value::Transform2D {
            x: [1.0, 0.0],
            y: [0.0, 1.0],
            origin: [10.0, 20.0],
        };
        assert_eq!(ok(json!([[1, 0], [0, 1], [10, 20]]), "Transform2D"), t2);
        assert_eq!(ok(json!([1, 0, 0, 1, 10, 20]), "Transform2D"), t2);
        assert_eq!(
            ok(json!("Transform2D(1, 0, 0, 1, 10, 20)"), "Transform2D"),
            t2
        );
        assert_eq!(
            ok(
                json!([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 2, 0]]),
                "Transform3D"
            ),
            Value::Transform3D {
                basis: id,
                origin: [0.0, 2.0, 0.0]
            }
        );
        assert_eq!(
            ok(
                json!([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
                "Projection"
            ),
            Value::Projection([
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
                [0.0, 0.0, 0.0, 1.0]
            ])
        );
    }

    #[test]
    fn colours_from_hex_names_arrays_and_text() {
        let red = Value::Color([1.0, 0.0, 0.0, 1.0]);
        assert_eq!(ok(json!("#ff0000"), "Color"), red);
        assert_eq!(ok(json!("#FF0000FF"), "Color"), red);
        assert_eq!(ok(json!("#f00"), "Color"), red);
        assert_eq!(ok(json!("ff0000"), "Color"), red);
        assert_eq!(ok(json!("red"), "Color"), red);
        assert_eq!(ok(json!("RED"), "Color"), red);
        assert_eq!(ok(json!([1, 0, 0]), "Color"), red);
        assert_eq!(ok(json!([1, 0, 0, 1]), "Color"), red);
        assert_eq!(ok(json!("Color(1, 0, 0)"), "Color"), red);
        assert_eq!(ok(json!({"r": 1, "g": 0, "b": 0}), "Color"), red);
        assert_eq!(
            ok(json!("#ff000080"), "Color"),
            Value::Color([1.0, 0.0, 0.0, real(128.0 / 255.0)])
        );
        assert_eq!(
            ok(json!("cornflower_blue"), "Color"),
            Value::Color([real(0.39), real(0.58), real(0.93), 1.0])
        );
        assert_eq!(
            ok(json!("Cornflower Blue"), "Color"),
            ok(json!("CORNFLOWER_BLUE"), "Color")
        );
        assert_eq!(
            ok(json!("transparent"), "Color"),
            Value::Color([1.0, 1.0, 1.0, 0.0])
        );
        assert_eq!(NAMED_COLORS.len(), 146);
        assert!(c(json!("#ff00"), "Color").is_ok(), "#rgba");
        assert!(c(json!("#ff00f"), "Color").is_err());
        assert!(c(json!("reddish"), "Color").is_err());
        assert_eq!(
            ok(json!(["#ff0000", [0, 0, 1]]), "PackedColorArray"),
            Value::PackedColorArray(vec![[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
        );
    }

    #[test]
    fn packed_arrays_from_arrays_of_rows() {
        assert_eq!(
            ok(json!([[0, 0], [16, 0]]), "PackedVector2Array"),
            Value::PackedVector2Array(vec![[0.0, 0.0], [16.0, 0.0]])
        );
        assert_eq!(
            ok(json!([[0, 0, 1]]), "PackedVector3Array"),
            Value::PackedVector3Array(vec![[0.0, 0.0, 1.0]])
        );
        assert_eq!(
            ok(json!([[0, 0, 1, 2]]), "PackedVector4Array"),
            Value::PackedVector4Array(vec![[0.0, 0.0, 1.0, 2.0]])
        );
        assert_eq!(
            ok(json!([1, 2.5]), "PackedFloat32Array"),
            Value::PackedFloat32Array(vec![1.0, 2.5])
        );
        assert_eq!(
            ok(json!([1, 2.5]), "PackedFloat64Array"),
            Value::PackedFloat64Array(vec![1.0, 2.5])
        );
        assert_eq!(
            ok(json!([1, 2]), "PackedInt32Array"),
            Value::PackedInt32Array(vec![1, 2])
        );
        assert_eq!(
            ok(json!([1, 2]), "PackedInt64Array"),
            Value::PackedInt64Array(vec![1, 2])
        );
        assert_eq!(
            ok(json!([0, 255]), "PackedByteArray"),
            Value::PackedByteArray(vec![0, 255])
        );
        assert_eq!(
            ok(json!(["a", "b"]), "PackedStringArray"),
            Value::PackedStringArray(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            ok(
                json!("PackedVector2Array(0, 0, 1, 1)"),
                "PackedVector2Array"
            ),
            Value::PackedVector2Array(vec![[0.0, 0.0], [1.0, 1.0]])
        );
        assert!(c(json!([256]), "PackedByteArray").is_err());
        assert!(c(json!([4294967296i64]), "PackedInt32Array").is_err());
        assert!(c(json!([[0, 0], [1]]), "PackedVector2Array").is_err());
    }

    #[test]
    fn scalars_paths_and_names() {
        assert_eq!(ok(json!(2), "float"), Value::Float(2.0));
        assert_eq!(ok(json!(2.0), "int"), Value::Int(2));
        assert_eq!(ok(json!("2.5"), "float"), Value::Float(2.5));
        assert_eq!(ok(json!("true"), "bool"), Value::Bool(true));
        assert!(c(json!(2.5), "int").is_err());
        assert!(c(json!(1), "bool").is_err());
        assert!(c(json!(1), "String").is_err());
        assert_eq!(
            ok(json!("Vector2(1, 2)"), "String"),
            Value::String("Vector2(1, 2)".into())
        );
        assert_eq!(
            ok(json!("idle"), "StringName"),
            Value::StringName("idle".into())
        );
        assert_eq!(
            ok(json!("../Player"), "NodePath"),
            Value::NodePath("../Player".into())
        );
        assert_eq!(
            ok(json!({"$type": "NodePath", "path": "A"}), "NodePath"),
            Value::NodePath("A".into())
        );
        // A property of any type takes the value as sent.
        assert_eq!(
            ok(json!("res://a.png"), "Nil"),
            Value::String("res://a.png".into())
        );
        assert_eq!(
            ok(json!([1, 2]), "Array"),
            Value::Array(vec![Value::Int(1), Value::Int(2)])
        );
        assert_eq!(
            ok(json!({"a": 1}), "Dictionary"),
            Value::Dictionary(vec![("a".into(), Value::Int(1))])
        );
        // Raw text is Godot's to read, whatever the type.
        assert_eq!(
            ok(json!({"$type": "Raw", "text": "Vector2(1, 2)"}), "Vector2"),
            Value::Raw("Vector2(1, 2)".into())
        );
    }

    #[test]
    fn resources_from_res_paths() {
        let icon = Value::Resource("res://icon.svg".into());
        assert_eq!(ok(json!("res://icon.svg"), "Object"), icon);
        assert_eq!(ok(json!("load(\"res://icon.svg\")"), "Object"), icon);
        assert_eq!(ok(json!("preload('res://icon.svg')"), "Object"), icon);
        assert_eq!(ok(json!("Resource(\"res://icon.svg\")"), "Object"), icon);
        assert_eq!(
            ok(
                json!({"$type": "Resource", "path": "res://icon.svg"}),
                "Object"
            ),
            icon
        );
        assert_eq!(ok(json!(null), "Object"), Value::Nil);
        assert!(matches!(
            ok(
                json!({"$type": "Resource", "class": "CircleShape2D", "properties": {}}),
                "Object"
            ),
            Value::NewResource { .. }
        ));
        assert!(c(json!("icon.svg"), "Object").is_err());
        assert!(c(json!(3), "Object").is_err());
        // A res:// string is a resource only where an Object is declared.
        assert_eq!(
            ok(json!("res://icon.svg"), "String"),
            Value::String("res://icon.svg".into())
        );
    }

    #[test]
    fn enum_and_flag_constants_by_name() {
        let d = Declared::from_property(2, HINT_ENUM, "Left,Center,Right,Fill", "");
        assert_eq!(d.names[1], ("Center".into(), 1));
        let by = |s: &str| coerce(&Value::String(s.into()), &d, &none);
        assert_eq!(by("Center"), Ok(Value::Int(1)));
        assert_eq!(by("center"), Ok(Value::Int(1)));
        assert_eq!(by("HORIZONTAL_ALIGNMENT_FILL"), Ok(Value::Int(3)));
        assert_eq!(by("2"), Ok(Value::Int(2)));
        // Names the hint does not list: the class's constants (ClassDB in the add-on).
        let class = |n: &str| (n == "FILL_MODE_COUNTER_CLOCKWISE").then_some(1);
        let plain = Declared::of("int");
        assert_eq!(
            coerce(
                &Value::String("FILL_MODE_COUNTER_CLOCKWISE".into()),
                &plain,
                &class
            ),
            Ok(Value::Int(1))
        );
        let e = coerce(&Value::String("Middle".into()), &d, &none).unwrap_err();
        assert!(e.0.contains("its names: Left, Center, Right, Fill"), "{e}");
        let flags = Declared::from_property(2, HINT_FLAGS, "A,B,C:16", "");
        assert_eq!(
            flags.names,
            vec![("A".into(), 1), ("B".into(), 2), ("C".into(), 16)]
        );
        assert_eq!(
            coerce(&Value::String("A|C".into()), &flags, &none),
            Ok(Value::Int(17))
        );
        assert_eq!(hint_names("Off,On:2,Auto", false)[2], ("Auto".into(), 3));
        let res = Declared::from_property(24, HINT_RESOURCE_TYPE, "Texture2D", "");
        assert_eq!(res.classes, vec!["Texture2D".to_string()]);
        assert_eq!(Declared::from_property(5, 0, "", "").ty, "Vector2");
    }

    #[test]
    fn every_refusal_names_the_accepted_forms_with_an_example() {
        for (ty, bad) in [
            ("Vector2", json!([1])),
            ("Vector2i", json!("x")),
            ("Vector3", json!("Vector2(1, 2)")),
            ("Vector3i", json!([1.5, 2, 3])),
            ("Vector4", json!([1])),
            ("Vector4i", json!([1])),
            ("Rect2", json!([1, 2])),
            ("Rect2i", json!([0.5, 0, 1, 1])),
            ("Color", json!("#ff00f")),
            ("Quaternion", json!([1])),
            ("Plane", json!([1])),
            ("AABB", json!([1])),
            ("Basis", json!([1])),
            ("Transform2D", json!([1])),
            ("Transform3D", json!([1])),
            ("Projection", json!([1])),
            ("PackedVector2Array", json!([1])),
            ("PackedVector3Array", json!([1])),
            ("PackedVector4Array", json!([1])),
            ("PackedColorArray", json!([1])),
            ("PackedFloat32Array", json!(["a"])),
            ("PackedFloat64Array", json!(["a"])),
            ("PackedInt32Array", json!([0.5])),
            ("PackedInt64Array", json!([0.5])),
            ("PackedByteArray", json!([-1])),
            ("PackedStringArray", json!([1])),
            ("Object", json!("icon.svg")),
            ("int", json!("NOT_A_CONSTANT")),
            ("float", json!("fast")),
            ("bool", json!(1)),
            ("String", json!(1)),
            ("StringName", json!(1)),
            ("NodePath", json!(1)),
            ("Array", json!("a")),
            ("Dictionary", json!("a")),
        ] {
            let e = c(bad.clone(), ty).expect_err(&format!("{bad} as {ty} was accepted"));
            assert!(
                e.0.contains(&format!("a {ty} property")) && e.0.contains(forms(ty)),
                "{ty}: {e}"
            );
            assert!(e.0.contains("Accepted: "), "{ty}: {e}");
            assert!(forms(ty).contains("e.g."), "{ty}'s forms show no example");
        }
        let e = c(json!([1]), "Vector2").unwrap_err();
        assert!(
            e.0.contains("[10, 20]") && e.0.contains("Vector2(10, 20)"),
            "{e}"
        );
        let obj = Declared::from_property(24, HINT_RESOURCE_TYPE, "Texture2D", "");
        let e = coerce(&Value::Int(3), &obj, &none).unwrap_err();
        assert!(
            e.0.contains("an Object property (Texture2D)") && e.0.contains("res://icon.svg"),
            "{e}"
        );
    }

    #[test]
    fn reals_compare_as_godot_stores_them() {
        assert!(same(&Value::Float(0.1), &Value::Float(f64::from(0.1f32))));
        assert!(!same(&Value::Float(0.1), &Value::Float(0.2)));
        assert!(same(
            &Value::Vector2([1.0, 0.5]),
            &Value::Vector2([1.000_000_1, 0.5])
        ));
        assert!(!same(
            &Value::Vector2([1.0, 0.5]),
            &Value::Vector2([1.0, 0.6])
        ));
        assert!(same(
            &Value::Resource("res://icon.svg".into()),
            &Value::Resource("res://icon.svg".into())
        ));
        assert!(!same(
            &Value::Resource("res://icon.svg".into()),
            &Value::Nil
        ));
        assert!(!same(&Value::String("res://icon.svg".into()), &Value::Nil));
        // An untyped array set on a typed-array property is held as that typed array.
        let outline = Value::PackedVector2Array(vec![[0.0, 0.0], [256.0, 0.0]]);
        let typed = Value::TypedArray {
            of: "PackedVector2Array".into(),
            items: vec![outline.clone()],
        };
        assert!(same(&Value::Array(vec![outline.clone()]), &typed));
        assert!(!same(&Value::Array(vec![outline.clone(), outline]), &typed));
        // AnimationPlayer.autoplay set from a StringName holds a String: the same name.
        let name = |s: &str| Value::StringName(s.into());
        assert!(same(&name("bounce"), &Value::String("bounce".into())));
        assert!(!same(&name("bounce"), &Value::String("idle".into())));
        let frames = |n: Value| Value::Array(vec![Value::Dictionary(vec![("name".into(), n)])]);
        assert!(same(
            &frames(name("walk")),
            &frames(Value::String("walk".into()))
        ));
        // SpriteFrames gives its animations back in its own order: the same named set.
        let anim = |n: &str, fps: f64| {
            Value::Dictionary(vec![
                ("name".into(), name(n)),
                ("speed".into(), Value::Float(fps)),
            ])
        };
        let asked = Value::Array(vec![anim("walk", 5.0), anim("up", 5.0)]);
        assert!(same(
            &asked,
            &Value::Array(vec![anim("up", 5.0), anim("walk", 5.0)])
        ));
        assert!(!same(
            &asked,
            &Value::Array(vec![anim("up", 5.0), anim("walk", 4.0)])
        ));
        // SpriteFrames' frame textures as res:// strings are resources; nothing else is.
        let anims = |t: Value| {
            Value::Array(vec![Value::Dictionary(vec![
                ("name".into(), Value::String("walk".into())),
                (
                    "frames".into(),
                    Value::Array(vec![Value::Dictionary(vec![
                        ("texture".into(), t),
                        ("duration".into(), Value::Float(1.0)),
                    ])]),
                ),
            ])])
        };
        let text = anims(Value::String("res://art/walk1.svg".into()));
        let loaded = anims(Value::Resource("res://art/walk1.svg".into()));
        assert_eq!(
            nested_resources("SpriteFrames", "animations", &text),
            loaded
        );
        assert_eq!(nested_resources("Node2D", "animations", &text), text);
        let unnamed = |x: i64| Value::Array(vec![Value::Int(x), Value::Int(1 - x)]);
        assert!(
            !same(&unnamed(0), &unnamed(1)),
            "plain arrays keep their order"
        );
        assert!(!same(&Value::Int(1), &Value::Int(2)));
        assert!(same(&Value::Int(3), &Value::Int(3)));
    }
}
