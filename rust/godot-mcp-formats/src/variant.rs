//! The one Godot value model: the JSON form of Godot values an agent sees and sends,
//! whichever plane the value came from (a file read, the editor, the running game).
//!
//! JSON scalars are themselves (`true`, `3`, `2.5`, `"text"`, `null`); arrays are arrays;
//! an object without a `"$type"` key is a Dictionary with string keys. Every other Godot
//! type is an object tagged by `"$type"`:
//!
//! | `$type` | fields |
//! |---|---|
//! | `Vector2` | `x`, `y` |
//! | `Vector3` | `x`, `y`, `z` |
//! | `Color` | `r`, `g`, `b`, `a` (default 1) |
//! | `StringName` | `value`: the name (`&"idle"` in Godot's text) |
//! | `NodePath` | `path` |
//! | `Transform2D` | `x`, `y`, `origin` (each `[x, y]`) |
//! | `Transform3D` | `basis` (three `[x, y, z]` columns), `origin` (`[x, y, z]`) |
//! | `Resource` | `path` (`res://…`): the resource loaded from that path |
//! | `Resource` | `class`, `properties` (an object of values): a new built-in sub-resource of that class |
//! | `Vector2i` / `Vector3i` | `x`, `y` (, `z`): integers |
//! | `Rect2` / `Rect2i` | `position`, `size` (each `[x, y]`; integers for `Rect2i`) |
//! | `Quaternion` | `x`, `y`, `z`, `w` |
//! | `PackedVector2Array` / `PackedVector3Array` | `values`: `[[x, y], …]` / `[[x, y, z], …]` |
//! | `PackedFloat32Array` / `PackedInt32Array` | `values`: `[n, …]` (32-bit integers for the latter) |
//! | `PackedColorArray` | `values`: `[[r, g, b, a], …]` |
//! | `Raw` | `text`: the value in Godot's Variant text, for a type this table does not type (`PackedStringArray("a")`, `AABB(…)`, an `Object(…)`) |
//!
//! A value read from a file ([`from_text`]) and the same value read from the editor or a
//! running game (the add-on's `from_variant`) have the same JSON form; [`to_text`] writes
//! any value as Godot's Variant text.
//!
//! A built-in sub-resource (one saved inside the scene, not in its own file) reads back in
//! the `class` form with the properties that differ from the class defaults, nested at
//! most [`MAX_RESOURCE_DEPTH`] deep (deeper ones read as `"<Class (embedded)>"`).
//!
//! An integer stays an integer and a float a float (`1.0` on the wire is a float), so a
//! value read and written back round-trips exactly. Anything else is refused with a
//! message naming what was wrong, never approximated.

use serde_json::{Map, Number, Value as Json, json};

use crate::error::InputError;

/// Deepest nesting accepted.
const MAX_DEPTH: usize = 32;

/// Godot's Variant type names (`Variant::get_type_name`), indexed by `Variant::Type`
/// (the number the binary encoding and the debugger carry).
pub const TYPE_NAMES: [&str; 39] = [
    "Nil",
    "bool",
    "int",
    "float",
    "String",
    "Vector2",
    "Vector2i",
    "Rect2",
    "Rect2i",
    "Vector3",
    "Vector3i",
    "Transform2D",
    "Vector4",
    "Vector4i",
    "Plane",
    "Quaternion",
    "AABB",
    "Basis",
    "Transform3D",
    "Projection",
    "Color",
    "StringName",
    "NodePath",
    "RID",
    "Object",
    "Callable",
    "Signal",
    "Dictionary",
    "Array",
    "PackedByteArray",
    "PackedInt32Array",
    "PackedInt64Array",
    "PackedFloat32Array",
    "PackedFloat64Array",
    "PackedStringArray",
    "PackedVector2Array",
    "PackedVector3Array",
    "PackedColorArray",
    "PackedVector4Array",
];

/// How deep built-in sub-resources are read back in the `class` form.
pub const MAX_RESOURCE_DEPTH: usize = 4;

/// Longest class name accepted for a new sub-resource.
const MAX_CLASS_LEN: usize = 128;

crate::godot_value_enum! {
/// A Godot value the bridge can carry.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Vector2([f64; 2]),
    Vector3([f64; 3]),
    Color([f64; 4]),
    NodePath(String),
    Transform2D {
        x: [f64; 2],
        y: [f64; 2],
        origin: [f64; 2],
    },
    Transform3D {
        basis: [[f64; 3]; 3],
        origin: [f64; 3],
    },
    /// A resource named by its `res://` path.
    Resource(String),
    /// A new built-in sub-resource: its class and the properties set on it, in order.
    NewResource {
        class: String,
        properties: Vec<(String, Value)>,
    },
    Vector2i([i64; 2]),
    Vector3i([i64; 3]),
    Rect2 {
        position: [f64; 2],
        size: [f64; 2],
    },
    Rect2i {
        position: [i64; 2],
        size: [i64; 2],
    },
    Quaternion([f64; 4]),
    PackedVector2Array(Vec<[f64; 2]>),
    PackedVector3Array(Vec<[f64; 3]>),
    PackedFloat32Array(Vec<f64>),
    PackedInt32Array(Vec<i64>),
    PackedColorArray(Vec<[f64; 4]>),
    Vector4([f64; 4]),
    Vector4i([i64; 4]),
    Plane {
        normal: [f64; 3],
        d: f64,
    },
    Aabb {
        position: [f64; 3],
        size: [f64; 3],
    },
    /// Columns x, y, z.
    Basis([[f64; 3]; 3]),
    /// Columns x, y, z, w.
    Projection([[f64; 4]; 4]),
    PackedStringArray(Vec<String>),
    PackedByteArray(Vec<u8>),
    PackedInt64Array(Vec<i64>),
    PackedFloat64Array(Vec<f64>),
    PackedVector4Array(Vec<[f64; 4]>),
    /// `Array[int]([…])`: the element type as written (`int`, `Node`, `ExtResource("1_x")`).
    TypedArray {
        of: String,
        items: Vec<Value>,
    },
    /// A dictionary with keys other than strings, or typed (`Dictionary[String, int]({…})`):
    /// key and value types as written, entries in order.
    Map {
        key: Option<String>,
        value: Option<String>,
        entries: Vec<(Value, Value)>,
    },
    Array(Vec<Value>),
    Dictionary(Vec<(String, Value)>),
    /// A value of a type this model does not type, as Godot's Variant text.
    Raw(String),
}
}

impl Value {
    /// The first [`Value::Raw`] text inside this value (itself, an item, an entry, a
    /// sub-resource's property), depth first: what the model did not type.
    pub fn first_raw(&self) -> Option<&str> {
        match self {
            Value::Raw(text) => Some(text),
            Value::Array(items) | Value::TypedArray { items, .. } => {
                items.iter().find_map(Value::first_raw)
            }
            Value::Dictionary(entries) => entries.iter().find_map(|(_, v)| v.first_raw()),
            Value::NewResource { properties, .. } => {
                properties.iter().find_map(|(_, v)| v.first_raw())
            }
            Value::Map { entries, .. } => entries
                .iter()
                .find_map(|(k, v)| k.first_raw().or_else(|| v.first_raw())),
            _ => None,
        }
    }
}

/// Why a JSON value is not a Godot value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError(pub String);

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(msg.into()))
}

impl Value {
    /// Decode the JSON form.
    pub fn from_json(json: &Json) -> Result<Self, ValueError> {
        decode(json, 0)
    }

    /// Encode to the JSON form; `from_json(to_json(v)) == v` for every finite value.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Nil => Json::Null,
            Value::Bool(b) => json!(b),
            Value::Int(i) => json!(i),
            Value::Float(f) => Number::from_f64(*f).map_or_else(
                || json!({"$type": "float", "value": non_finite_name(*f)}),
                Json::Number,
            ),
            Value::String(s) => json!(s),
            Value::StringName(s) => json!({"$type": "StringName", "value": s}),
            Value::Vector2([x, y]) => json!({"$type": "Vector2", "x": x, "y": y}),
            Value::Vector3([x, y, z]) => json!({"$type": "Vector3", "x": x, "y": y, "z": z}),
            Value::Color([r, g, b, a]) => json!({"$type": "Color", "r": r, "g": g, "b": b, "a": a}),
            Value::NodePath(p) => json!({"$type": "NodePath", "path": p}),
            Value::Transform2D { x, y, origin } => {
                json!({"$type": "Transform2D", "x": x, "y": y, "origin": origin})
            }
            Value::Transform3D { basis, origin } => {
                json!({"$type": "Transform3D", "basis": basis, "origin": origin})
            }
            Value::Resource(p) => json!({"$type": "Resource", "path": p}),
            Value::NewResource { class, properties } => json!({
                "$type": "Resource",
                "class": class,
                "properties": properties
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect::<Map<_, _>>(),
            }),
            Value::Vector2i([x, y]) => json!({"$type": "Vector2i", "x": x, "y": y}),
            Value::Vector3i([x, y, z]) => json!({"$type": "Vector3i", "x": x, "y": y, "z": z}),
            Value::Rect2 { position, size } => {
                json!({"$type": "Rect2", "position": position, "size": size})
            }
            Value::Rect2i { position, size } => {
                json!({"$type": "Rect2i", "position": position, "size": size})
            }
            Value::Quaternion([x, y, z, w]) => {
                json!({"$type": "Quaternion", "x": x, "y": y, "z": z, "w": w})
            }
            Value::PackedVector2Array(v) => json!({"$type": "PackedVector2Array", "values": v}),
            Value::PackedVector3Array(v) => json!({"$type": "PackedVector3Array", "values": v}),
            Value::PackedFloat32Array(v) => json!({"$type": "PackedFloat32Array", "values": v}),
            Value::PackedInt32Array(v) => json!({"$type": "PackedInt32Array", "values": v}),
            Value::PackedColorArray(v) => json!({"$type": "PackedColorArray", "values": v}),
            Value::Vector4([x, y, z, w]) => {
                json!({"$type": "Vector4", "x": x, "y": y, "z": z, "w": w})
            }
            Value::Vector4i([x, y, z, w]) => {
                json!({"$type": "Vector4i", "x": x, "y": y, "z": z, "w": w})
            }
            Value::Plane { normal, d } => json!({"$type": "Plane", "normal": normal, "d": d}),
            Value::Aabb { position, size } => {
                json!({"$type": "AABB", "position": position, "size": size})
            }
            Value::Basis([x, y, z]) => json!({"$type": "Basis", "x": x, "y": y, "z": z}),
            Value::Projection([x, y, z, w]) => {
                json!({"$type": "Projection", "x": x, "y": y, "z": z, "w": w})
            }
            Value::PackedStringArray(v) => json!({"$type": "PackedStringArray", "values": v}),
            Value::PackedByteArray(v) => json!({"$type": "PackedByteArray", "values": v}),
            Value::PackedInt64Array(v) => json!({"$type": "PackedInt64Array", "values": v}),
            Value::PackedFloat64Array(v) => json!({
                "$type": "PackedFloat64Array",
                "values": v.iter().map(|f| Value::Float(*f).to_json()).collect::<Vec<_>>(),
            }),
            Value::PackedVector4Array(v) => json!({"$type": "PackedVector4Array", "values": v}),
            Value::TypedArray { of, items } => json!({
                "$type": "Array",
                "of": of,
                "values": items.iter().map(Value::to_json).collect::<Vec<_>>(),
            }),
            Value::Map {
                key,
                value,
                entries,
            } => {
                let mut m = Map::new();
                m.insert("$type".into(), json!("Dictionary"));
                if let Some(k) = key {
                    m.insert("key".into(), json!(k));
                }
                if let Some(v) = value {
                    m.insert("value".into(), json!(v));
                }
                m.insert(
                    "entries".into(),
                    Json::Array(
                        entries
                            .iter()
                            .map(|(k, v)| json!([k.to_json(), v.to_json()]))
                            .collect(),
                    ),
                );
                Json::Object(m)
            }
            Value::Array(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Dictionary(entries) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect::<Map<_, _>>(),
            ),
            Value::Raw(text) => json!({"$type": "Raw", "text": text}),
        }
    }
}

fn float(json: Option<&Json>, what: &str) -> Result<f64, ValueError> {
    match json.and_then(Json::as_f64) {
        Some(f) if f.is_finite() => Ok(f),
        Some(_) => err(format!("{what} is not finite")),
        None => err(format!("{what} must be a number")),
    }
}

fn floats<const N: usize>(json: Option<&Json>, what: &str) -> Result<[f64; N], ValueError> {
    fixed(json, what, "numbers", float)
}

fn int(json: Option<&Json>, what: &str) -> Result<i64, ValueError> {
    match json {
        Some(Json::Number(n)) if !n.is_f64() => n
            .as_i64()
            .map_or_else(|| err(format!("{what} does not fit a 64-bit int")), Ok),
        _ => err(format!("{what} must be an integer")),
    }
}

fn ints<const N: usize>(json: Option<&Json>, what: &str) -> Result<[i64; N], ValueError> {
    fixed(json, what, "integers", int)
}

/// An array of exactly `N` items, each decoded by `one`.
fn fixed<T: Copy + Default, const N: usize>(
    json: Option<&Json>,
    what: &str,
    items_are: &str,
    one: fn(Option<&Json>, &str) -> Result<T, ValueError>,
) -> Result<[T; N], ValueError> {
    let Some(items) = json.and_then(Json::as_array).filter(|a| a.len() == N) else {
        return err(format!("{what} must be an array of {N} {items_are}"));
    };
    let mut out = [T::default(); N];
    for (i, item) in items.iter().enumerate() {
        out[i] = one(Some(item), &format!("{what}[{i}]"))?;
    }
    Ok(out)
}

/// `values` of a packed array: each item decoded by `one`.
fn packed<T>(
    m: &Map<String, Json>,
    ty: &str,
    one: impl Fn(&Json, &str) -> Result<T, ValueError>,
) -> Result<Vec<T>, ValueError> {
    only_fields(m, ty, &["values"])?;
    let Some(items) = m.get("values").and_then(Json::as_array) else {
        return err(format!("{ty}.values must be an array"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| one(item, &format!("values[{i}]")))
        .collect()
}

/// `"inf"`, `"-inf"` or `"nan"`: a non-finite float's JSON name.
fn non_finite_name(f: f64) -> &'static str {
    if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// A typed collection's type parameter: a type or class name, or a script's
/// `ExtResource("id")` as the file writes it; one line, balanced.
fn type_param_ok(t: &str) -> bool {
    is_class_name(t)
        || (t.starts_with("ExtResource(")
            && !t.contains(['\n', '\r', ']', '['])
            && scan_balanced(t) == Scan::Balanced)
}

/// A Godot class name: an identifier (letters, digits, `_`), not starting with a digit.
pub fn is_class_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_CLASS_LEN
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn only_fields(map: &Map<String, Json>, ty: &str, fields: &[&str]) -> Result<(), ValueError> {
    for k in map.keys() {
        if k != "$type" && !fields.contains(&k.as_str()) {
            return err(format!(
                "{ty} has no field {k:?} (fields: {})",
                fields.join(", ")
            ));
        }
    }
    Ok(())
}

fn decode(json: &Json, depth: usize) -> Result<Value, ValueError> {
    if depth > MAX_DEPTH {
        return err(format!("nests deeper than {MAX_DEPTH} levels"));
    }
    Ok(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Value::Int(i),
            _ if n.is_u64() => return err(format!("{n} does not fit Godot's 64-bit int")),
            _ => Value::Float(float(Some(json), "number")?),
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| decode(i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) => match map.get("$type") {
            None => Value::Dictionary(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), decode(v, depth + 1)?)))
                    .collect::<Result<_, ValueError>>()?,
            ),
            Some(Json::String(ty)) => typed(ty, map, depth)?,
            Some(_) => return err("\"$type\" must be a string"),
        },
    })
}

fn typed(ty: &str, m: &Map<String, Json>, depth: usize) -> Result<Value, ValueError> {
    Ok(match ty {
        "Vector2" => {
            only_fields(m, ty, &["x", "y"])?;
            Value::Vector2([float(m.get("x"), "x")?, float(m.get("y"), "y")?])
        }
        "Vector3" => {
            only_fields(m, ty, &["x", "y", "z"])?;
            Value::Vector3([
                float(m.get("x"), "x")?,
                float(m.get("y"), "y")?,
                float(m.get("z"), "z")?,
            ])
        }
        "Color" => {
            only_fields(m, ty, &["r", "g", "b", "a"])?;
            let a = if m.contains_key("a") {
                float(m.get("a"), "a")?
            } else {
                1.0
            };
            Value::Color([
                float(m.get("r"), "r")?,
                float(m.get("g"), "g")?,
                float(m.get("b"), "b")?,
                a,
            ])
        }
        "StringName" => {
            only_fields(m, ty, &["value"])?;
            match m.get("value") {
                Some(Json::String(s)) => Value::StringName(s.clone()),
                _ => return err("StringName.value must be a string"),
            }
        }
        "NodePath" => {
            only_fields(m, ty, &["path"])?;
            match m.get("path") {
                Some(Json::String(p)) => Value::NodePath(p.clone()),
                _ => return err("NodePath.path must be a string"),
            }
        }
        "Transform2D" => {
            only_fields(m, ty, &["x", "y", "origin"])?;
            Value::Transform2D {
                x: floats(m.get("x"), "x")?,
                y: floats(m.get("y"), "y")?,
                origin: floats(m.get("origin"), "origin")?,
            }
        }
        "Transform3D" => {
            only_fields(m, ty, &["basis", "origin"])?;
            let Some(cols) = m
                .get("basis")
                .and_then(Json::as_array)
                .filter(|c| c.len() == 3)
            else {
                return err("basis must be an array of three [x, y, z] columns");
            };
            let mut basis = [[0.0; 3]; 3];
            for (i, c) in cols.iter().enumerate() {
                basis[i] = floats(Some(c), &format!("basis[{i}]"))?;
            }
            Value::Transform3D {
                basis,
                origin: floats(m.get("origin"), "origin")?,
            }
        }
        "Resource" if m.contains_key("class") => {
            only_fields(m, ty, &["class", "properties"])?;
            let class = match m.get("class") {
                Some(Json::String(c)) if is_class_name(c) => c.clone(),
                _ => return err("Resource.class must be a Godot class name, like BoxShape3D"),
            };
            let properties = match m.get("properties") {
                None => Vec::new(),
                Some(Json::Object(props)) => props
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), decode(v, depth + 1)?)))
                    .collect::<Result<_, ValueError>>()?,
                Some(_) => return err("Resource.properties must be an object"),
            };
            Value::NewResource { class, properties }
        }
        "Vector2i" => {
            only_fields(m, ty, &["x", "y"])?;
            Value::Vector2i([int(m.get("x"), "x")?, int(m.get("y"), "y")?])
        }
        "Vector3i" => {
            only_fields(m, ty, &["x", "y", "z"])?;
            Value::Vector3i([
                int(m.get("x"), "x")?,
                int(m.get("y"), "y")?,
                int(m.get("z"), "z")?,
            ])
        }
        "Rect2" => {
            only_fields(m, ty, &["position", "size"])?;
            Value::Rect2 {
                position: floats(m.get("position"), "position")?,
                size: floats(m.get("size"), "size")?,
            }
        }
        "Rect2i" => {
            only_fields(m, ty, &["position", "size"])?;
            Value::Rect2i {
                position: ints(m.get("position"), "position")?,
                size: ints(m.get("size"), "size")?,
            }
        }
        "Quaternion" => {
            only_fields(m, ty, &["x", "y", "z", "w"])?;
            Value::Quaternion([
                float(m.get("x"), "x")?,
                float(m.get("y"), "y")?,
                float(m.get("z"), "z")?,
                float(m.get("w"), "w")?,
            ])
        }
        "PackedVector2Array" => {
            Value::PackedVector2Array(packed(m, ty, |j, at| floats(Some(j), at))?)
        }
        "PackedVector3Array" => {
            Value::PackedVector3Array(packed(m, ty, |j, at| floats(Some(j), at))?)
        }
        "PackedFloat32Array" => {
            Value::PackedFloat32Array(packed(m, ty, |j, at| float(Some(j), at))?)
        }
        "PackedInt32Array" => Value::PackedInt32Array(packed(m, ty, |j, at| {
            let i = int(Some(j), at)?;
            if i32::try_from(i).is_err() {
                return err(format!("{at} does not fit a 32-bit int"));
            }
            Ok(i)
        })?),
        "PackedColorArray" => Value::PackedColorArray(packed(m, ty, |j, at| floats(Some(j), at))?),
        "float" => {
            only_fields(m, ty, &["value"])?;
            match m.get("value").and_then(Json::as_str) {
                Some("inf") => Value::Float(f64::INFINITY),
                Some("-inf") => Value::Float(f64::NEG_INFINITY),
                Some("nan") => Value::Float(f64::NAN),
                _ => return err("float.value must be \"inf\", \"-inf\" or \"nan\""),
            }
        }
        "Vector4" => {
            only_fields(m, ty, &["x", "y", "z", "w"])?;
            Value::Vector4([
                float(m.get("x"), "x")?,
                float(m.get("y"), "y")?,
                float(m.get("z"), "z")?,
                float(m.get("w"), "w")?,
            ])
        }
        "Vector4i" => {
            only_fields(m, ty, &["x", "y", "z", "w"])?;
            Value::Vector4i([
                int(m.get("x"), "x")?,
                int(m.get("y"), "y")?,
                int(m.get("z"), "z")?,
                int(m.get("w"), "w")?,
            ])
        }
        "Plane" => {
            only_fields(m, ty, &["normal", "d"])?;
            Value::Plane {
                normal: floats(m.get("normal"), "normal")?,
                d: float(m.get("d"), "d")?,
            }
        }
        "AABB" => {
            only_fields(m, ty, &["position", "size"])?;
            Value::Aabb {
                position: floats(m.get("position"), "position")?,
                size: floats(m.get("size"), "size")?,
            }
        }
        "Basis" => {
            only_fields(m, ty, &["x", "y", "z"])?;
            Value::Basis([
                floats(m.get("x"), "x")?,
                floats(m.get("y"), "y")?,
                floats(m.get("z"), "z")?,
            ])
        }
        "Projection" => {
            only_fields(m, ty, &["x", "y", "z", "w"])?;
            Value::Projection([
                floats(m.get("x"), "x")?,
                floats(m.get("y"), "y")?,
                floats(m.get("z"), "z")?,
                floats(m.get("w"), "w")?,
            ])
        }
        "PackedStringArray" => Value::PackedStringArray(packed(m, ty, |j, at| match j {
            Json::String(s) => Ok(s.clone()),
            _ => err(format!("{at} must be a string")),
        })?),
        "PackedByteArray" => Value::PackedByteArray(packed(m, ty, |j, at| {
            u8::try_from(int(Some(j), at)?).or_else(|_| err(format!("{at} must be 0-255")))
        })?),
        "PackedInt64Array" => Value::PackedInt64Array(packed(m, ty, |j, at| int(Some(j), at))?),
        "PackedFloat64Array" => {
            Value::PackedFloat64Array(packed(m, ty, |j, at| match decode(j, depth + 1)? {
                Value::Float(f) => Ok(f),
                Value::Int(i) => Ok(i as f64),
                _ => err(format!("{at} must be a number")),
            })?)
        }
        "PackedVector4Array" => {
            Value::PackedVector4Array(packed(m, ty, |j, at| floats(Some(j), at))?)
        }
        "Array" => {
            only_fields(m, ty, &["of", "values"])?;
            let of = match m.get("of") {
                Some(Json::String(t)) if type_param_ok(t) => t.clone(),
                _ => return err("Array.of must be a type name, like int or Node"),
            };
            let Some(items) = m.get("values").and_then(Json::as_array) else {
                return err("Array.values must be an array");
            };
            Value::TypedArray {
                of,
                items: items
                    .iter()
                    .map(|i| decode(i, depth + 1))
                    .collect::<Result<_, _>>()?,
            }
        }
        "Dictionary" => {
            only_fields(m, ty, &["key", "value", "entries"])?;
            let param = |name: &str| -> Result<Option<String>, ValueError> {
                match m.get(name) {
                    None => Ok(None),
                    Some(Json::String(t)) if type_param_ok(t) => Ok(Some(t.clone())),
                    _ => err(format!(
                        "Dictionary.{name} must be a type name, like String"
                    )),
                }
            };
            let (key, value) = (param("key")?, param("value")?);
            if key.is_some() != value.is_some() {
                return err("Dictionary.key and Dictionary.value are given together");
            }
            let Some(items) = m.get("entries").and_then(Json::as_array) else {
                return err("Dictionary.entries must be an array of [key, value] pairs");
            };
            let entries = items
                .iter()
                .map(|e| match e.as_array().map(Vec::as_slice) {
                    Some([k, v]) => Ok((decode(k, depth + 1)?, decode(v, depth + 1)?)),
                    _ => err("Dictionary.entries must be an array of [key, value] pairs"),
                })
                .collect::<Result<_, _>>()?;
            Value::Map {
                key,
                value,
                entries,
            }
        }
        "Raw" => {
            only_fields(m, ty, &["text"])?;
            match m.get("text") {
                Some(Json::String(t)) if !t.trim().is_empty() => Value::Raw(t.clone()),
                _ => return err("Raw.text must be a non-empty Godot Variant text"),
            }
        }
        "Resource" => {
            only_fields(m, ty, &["path"])?;
            match m.get("path") {
                Some(Json::String(p)) if p.starts_with("res://") && !p.contains("..") => {
                    Value::Resource(p.clone())
                }
                _ => return err("Resource.path must be a res:// path inside the project"),
            }
        }
        other => {
            return err(format!(
                "unsupported $type {other:?} (supported: Vector2, Vector2i, Vector3, Vector3i, \
                 Rect2, Rect2i, Quaternion, Color, StringName, NodePath, Transform2D, Transform3D, Resource, \
                 PackedVector2Array, PackedVector3Array, PackedFloat32Array, PackedInt32Array, \
                 PackedColorArray, Vector4, Vector4i, Plane, AABB, Basis, Projection, \
                 PackedStringArray, PackedByteArray, PackedInt64Array, PackedFloat64Array, \
                 PackedVector4Array, Array, Dictionary, float, Raw)"
            ));
        }
    })
}

// ---------------------------------------------------------------------------------
// Godot's Variant text: a file's value in this model, and this model as text
// ---------------------------------------------------------------------------------

use crate::literal::Literal as Text;
use crate::resource::{ExtResource, SubResource};

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

// What a write tool accepts as Variant text, and plain JSON written as such text.

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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn json_converts_to_variant_text() {
        assert_eq!(
            plain_json_text(&json!("a\"b\\c\nd"), "v").unwrap(),
            r#""a\"b\\c\nd""#
        );
        assert_eq!(plain_json_text(&json!(true), "v").unwrap(), "true");
        assert_eq!(plain_json_text(&json!(-3), "v").unwrap(), "-3");
        assert_eq!(plain_json_text(&json!(1.0), "v").unwrap(), "1.0");
        assert_eq!(plain_json_text(&json!(0.25), "v").unwrap(), "0.25");
        assert_eq!(
            plain_json_text(&json!([1, "x", null]), "v").unwrap(),
            r#"[1, "x", null]"#
        );
        assert_eq!(
            plain_json_text(&json!({"a": 1}), "v").unwrap(),
            "{\n\"a\": 1\n}"
        );
        let e = plain_json_text(&json!(u64::MAX), "value").unwrap_err();
        assert_eq!(e.param, "value");
    }

    /// Every type docs/values.md types: Godot's text → the model (never Raw) →
    /// the same text, and the model → JSON → the same model.
    #[test]
    fn typed_values_round_trip_through_text_and_json() {
        for text in [
            "PackedStringArray(\"dash\", \"double_jump\")",
            "PackedStringArray()",
            "PackedByteArray(0, 1, 255)",
            "PackedInt64Array(1, -9007199254740993)",
            "PackedFloat64Array(0.1, 2, -3.25)",
            "PackedVector4Array(1, 2, 3, 4, 5, 6, 7, 8)",
            "Vector4(1, 2.5, 3, 4)",
            "Vector4i(1, -2, 3, 4)",
            "Plane(0, 1, 0, 2.5)",
            "AABB(0, 0, 0, 1, 2, 3)",
            "Basis(1, 2, 3, 4, 5, 6, 7, 8, 9)",
            "Projection(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)",
            "Array[int]([1, 2, 3])",
            "Array[StringName]([])",
            "&\"idle\"",
            "Array[StringName]([&\"a\", &\"b\"])",
            "{\n&\"\": 1\n}",
            "Array[ExtResource(\"1_ab\")]([])",
            "Dictionary[String, int]({\n\"a\": 1\n})",
            "{\n1: \"one\",\nVector2(1, 2): null\n}",
            "inf",
            "inf_neg",
            "nan",
        ] {
            let parsed = crate::parse_value(text).unwrap();
            let v = from_text(&parsed, &Refs::default());
            assert!(!matches!(v, Value::Raw(_)), "{text}: Raw");
            assert_eq!(to_text(&v).as_deref(), Some(text), "{text}");
            let back = Value::from_json(&v.to_json()).unwrap();
            assert_eq!(to_text(&back), to_text(&v), "{text}: {}", v.to_json());
        }
        // Godot 4.3+'s base64 form is the same value as the list form.
        let b64 = crate::parse_value("PackedByteArray(\"AAH/\")").unwrap();
        assert_eq!(
            from_text(&b64, &Refs::default()),
            Value::PackedByteArray(vec![0, 1, 255])
        );
        // Basis is written row by row; the model holds columns.
        let basis = crate::parse_value("Basis(1, 2, 3, 4, 5, 6, 7, 8, 9)").unwrap();
        assert_eq!(
            from_text(&basis, &Refs::default()).to_json()["x"],
            json!([1.0, 4.0, 7.0])
        );
        // A StringName is typed, apart from a String; a key of one is a non-string key.
        let name = crate::parse_value("&\"idle\"").unwrap();
        assert_eq!(
            from_text(&name, &Refs::default()).to_json(),
            json!({"$type": "StringName", "value": "idle"})
        );
        let keyed = crate::parse_value("{\n&\"run\": 1\n}").unwrap();
        assert_eq!(
            from_text(&keyed, &Refs::default()).to_json(),
            json!({"$type": "Dictionary", "entries": [[{"$type": "StringName", "value": "run"}, 1]]})
        );
        assert!(Value::from_json(&json!({"$type": "StringName", "value": 3})).is_err());
        assert_eq!(
            Value::Float(f64::NEG_INFINITY).to_json(),
            json!({"$type": "float", "value": "-inf"})
        );
        assert_eq!(
            Value::from_json(&json!({"$type": "Dictionary", "entries": [[1, "one"]]})).unwrap(),
            Value::Map {
                key: None,
                value: None,
                entries: vec![(Value::Int(1), Value::String("one".into()))],
            }
        );
        assert!(Value::from_json(&json!({"$type": "Array", "of": "in t", "values": []})).is_err());
    }

    #[test]
    fn first_raw_finds_an_untyped_value_at_any_depth() {
        let read = |t: &str| from_text(&crate::parse_value(t).unwrap(), &Refs::default());
        assert_eq!(read("Vector2(1, 2)").first_raw(), None);
        assert_eq!(
            read("[1, {\n\"k\": Object(InputEventKey,\"keycode\":4)\n}]").first_raw(),
            Some("Object(InputEventKey,\"keycode\":4)")
        );
        assert_eq!(read("{\n1: Callable()\n}").first_raw(), Some("Callable()"));
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
            assert_eq!(e.param, "value_text", "{bad:?}");
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let values = [
            Value::Nil,
            Value::Bool(true),
            Value::Int(-7),
            Value::Int(i64::MAX),
            Value::Float(1.0),
            Value::Float(-0.25),
            Value::String("héllo \"x\"".into()),
            Value::Vector2([1.5, -2.0]),
            Value::Vector3([0.0, 1.0, 2.0]),
            Value::Color([1.0, 0.5, 0.25, 0.75]),
            Value::NodePath("../Player:position".into()),
            Value::Transform2D {
                x: [1.0, 0.0],
                y: [0.0, 1.0],
                origin: [10.0, 20.0],
            },
            Value::Transform3D {
                basis: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                origin: [1.0, 2.0, 3.0],
            },
            Value::Resource("res://icon.svg".into()),
            Value::NewResource {
                class: "RectangleShape2D".into(),
                properties: vec![("size".into(), Value::Vector2([32.0, 16.0]))],
            },
            Value::NewResource {
                class: "Gradient".into(),
                properties: vec![],
            },
            Value::Vector2i([-3, 4]),
            Value::Vector3i([1, -2, 3]),
            Value::Rect2 {
                position: [0.5, 1.0],
                size: [16.0, 8.0],
            },
            Value::Rect2i {
                position: [0, -1],
                size: [16, 16],
            },
            Value::Quaternion([0.0, 0.0, 0.0, 1.0]),
            Value::PackedVector2Array(vec![[0.0, 0.0], [1.5, 2.0]]),
            Value::PackedVector3Array(vec![[0.0, 1.0, 2.0]]),
            Value::PackedFloat32Array(vec![0.0, 0.5]),
            Value::PackedInt32Array(vec![1, -2, i32::MAX as i64]),
            Value::PackedColorArray(vec![[1.0, 0.0, 0.0, 1.0]]),
            Value::Array(vec![Value::Int(1), Value::Vector2([0.0, 0.0])]),
            Value::Dictionary(vec![("hp".into(), Value::Int(3))]),
        ];
        for v in values {
            let wire = serde_json::to_string(&v.to_json()).unwrap();
            let back = Value::from_json(&serde_json::from_str(&wire).unwrap()).unwrap();
            assert_eq!(back, v, "{wire}");
        }
    }

    /// Finite floats that are exact in f32 too (what Godot stores), so the comparison is
    /// about the wire form, not about decimal printing.
    fn finite() -> impl Strategy<Value = f64> {
        (-1_000_000i32..1_000_000).prop_map(|i| f64::from(i) / 64.0)
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Nil),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            finite().prop_map(Value::Float),
            "[a-z]{0,8}".prop_map(Value::String),
            "[a-z]{0,8}".prop_map(Value::StringName),
            [finite(), finite()].prop_map(Value::Vector2),
            [any::<i64>(), any::<i64>()].prop_map(Value::Vector2i),
            [any::<i64>(), any::<i64>(), any::<i64>()].prop_map(Value::Vector3i),
            ([finite(), finite()], [finite(), finite()])
                .prop_map(|(position, size)| Value::Rect2 { position, size }),
            ([any::<i64>(), any::<i64>()], [any::<i64>(), any::<i64>()])
                .prop_map(|(position, size)| Value::Rect2i { position, size }),
            [finite(), finite(), finite(), finite()].prop_map(Value::Quaternion),
            prop::collection::vec([finite(), finite()], 0..4).prop_map(Value::PackedVector2Array),
            prop::collection::vec([finite(), finite(), finite()], 0..4)
                .prop_map(Value::PackedVector3Array),
            prop::collection::vec(finite(), 0..4).prop_map(Value::PackedFloat32Array),
            prop::collection::vec(any::<i32>().prop_map(i64::from), 0..4)
                .prop_map(Value::PackedInt32Array),
            prop::collection::vec([finite(), finite(), finite(), finite()], 0..4)
                .prop_map(Value::PackedColorArray),
        ]
    }

    fn any_value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                (
                    "[A-Z][A-Za-z0-9]{0,12}",
                    prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                )
                    .prop_map(|(class, props)| Value::NewResource {
                        class,
                        properties: props.into_iter().collect(),
                    }),
            ]
        })
    }

    proptest! {
        #[test]
        fn random_values_round_trip_through_the_wire(v in any_value()) {
            let wire = serde_json::to_string(&v.to_json()).unwrap();
            let back = Value::from_json(&serde_json::from_str(&wire).unwrap()).unwrap();
            prop_assert_eq!(back, v, "{}", wire);
        }
    }

    proptest! {
        /// JSON → value → Godot text → value: the text writer and the reader agree
        /// (a new sub-resource has no text of its own and is left out).
        #[test]
        fn random_values_round_trip_through_godot_text(v in any_value()) {
            if let Some(text) = to_text(&v) {
                let parsed = crate::text::parse_value(&text).unwrap();
                prop_assert_eq!(from_text(&parsed, &Refs::default()), reals(v), "{}", text);
            }
        }
    }

    /// Plain JSON an agent sends to a settings or property write: scalars (any finite
    /// float, any string), arrays and objects.
    fn plain_json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::from),
            any::<i64>().prop_map(Json::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Json::from),
            ".{0,8}".prop_map(Json::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Plain JSON → Godot text → value → JSON: what a write stores reads back as
        /// the JSON the agent sent, through the parser Godot's files go through.
        #[test]
        fn plain_json_round_trips_through_godot_text(json in plain_json()) {
            let text = plain_json_text(&json, "value").unwrap();
            let parsed = crate::text::parse_value(&text).unwrap();
            prop_assert_eq!(from_text(&parsed, &Refs::default()).to_json(), json, "{}", text);
        }
    }

    /// `v` with every 32-bit (`real_t`) component as Godot holds it ([`real`]): what
    /// a value reads back as once it went through a file, the editor or the game.
    fn reals(v: Value) -> Value {
        let a = |x: &mut [f64]| x.iter_mut().for_each(|f| *f = real(*f));
        match v {
            Value::Vector2(mut x) => {
                a(&mut x);
                Value::Vector2(x)
            }
            Value::Vector3(mut x) => {
                a(&mut x);
                Value::Vector3(x)
            }
            Value::Color(mut x) => {
                a(&mut x);
                Value::Color(x)
            }
            Value::Quaternion(mut x) => {
                a(&mut x);
                Value::Quaternion(x)
            }
            Value::Rect2 {
                mut position,
                mut size,
            } => {
                a(&mut position);
                a(&mut size);
                Value::Rect2 { position, size }
            }
            Value::PackedVector2Array(mut v) => {
                v.iter_mut().for_each(|x| a(x));
                Value::PackedVector2Array(v)
            }
            Value::PackedVector3Array(mut v) => {
                v.iter_mut().for_each(|x| a(x));
                Value::PackedVector3Array(v)
            }
            Value::PackedColorArray(mut v) => {
                v.iter_mut().for_each(|x| a(x));
                Value::PackedColorArray(v)
            }
            Value::PackedFloat32Array(mut v) => {
                a(&mut v);
                Value::PackedFloat32Array(v)
            }
            Value::Array(items) => Value::Array(items.into_iter().map(reals).collect()),
            other => other,
        }
    }

    /// Godot 4.4.1's own `var_to_str` output (captured from the engine), read into the
    /// model: the row order of Transform3D, the default alpha, reals as Godot holds
    /// them, and untyped values kept as their text.
    #[test]
    fn the_engines_text_reads_as_the_model() {
        let read = |t: &str| from_text(&crate::text::parse_value(t).unwrap(), &Refs::default());
        assert_eq!(
            read("Transform3D(1, 4, 7, 2, 5, 8, 3, 6, 9, 10, 11, 12)"),
            Value::Transform3D {
                basis: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
                origin: [10.0, 11.0, 12.0],
            }
        );
        assert_eq!(
            read("Transform2D(1, 2, 3, 4, 5, 6)"),
            Value::Transform2D {
                x: [1.0, 2.0],
                y: [3.0, 4.0],
                origin: [5.0, 6.0]
            }
        );
        assert_eq!(read("Vector2(0.1, 0.2)"), Value::Vector2([0.1, 0.2]));
        assert_eq!(
            read("Color(0.784314, 0.392157, 0.196078, 1)"),
            Value::Color([0.784314, 0.392157, 0.196078, 1.0])
        );
        assert_eq!(read("0.1"), Value::Float(0.1));
        assert_eq!(read("1.0"), Value::Float(1.0));
        assert_eq!(read("&\"sn\""), Value::StringName("sn".into()));
        assert_eq!(read("NodePath(\"A/B\")"), Value::NodePath("A/B".into()));
        assert_eq!(
            read("PackedVector2Array(1, 2, 3.5, 4)"),
            Value::PackedVector2Array(vec![[1.0, 2.0], [3.5, 4.0]])
        );
        assert_eq!(
            read("Vector2(1e-07, 1.23457e+08)"),
            Value::Vector2([1e-7, 123457000.0])
        );
        assert_eq!(
            read("PackedStringArray(\"dash\", \"b\")"),
            Value::PackedStringArray(vec!["dash".into(), "b".into()])
        );
        assert_eq!(
            read("{\n\"a\": 1,\n\"b\": [1, 2.5]\n}"),
            Value::Dictionary(vec![
                ("a".into(), Value::Int(1)),
                (
                    "b".into(),
                    Value::Array(vec![Value::Int(1), Value::Float(2.5)])
                ),
            ])
        );
        // The writer gives the engine's text back for these.
        for t in [
            "Transform3D(1, 4, 7, 2, 5, 8, 3, 6, 9, 10, 11, 12)",
            "Transform2D(1, 2, 3, 4, 5, 6)",
            "Vector2(0.1, 0.2)",
            "PackedVector2Array(1, 2, 3.5, 4)",
            "Rect2(1, 2, 3, 4)",
            "{\n\"a\": 1,\n\"b\": [1, 2.5]\n}",
            "PackedStringArray(\"dash\", \"b\")",
        ] {
            assert_eq!(to_text(&read(t)).as_deref(), Some(t));
        }
    }

    /// References resolve through the file: an ext_resource to its path, a
    /// sub_resource to its class and properties; an unknown id stays raw text.
    #[test]
    fn references_resolve_through_the_file() {
        let scene = crate::parse_scene(
            "[gd_scene load_steps=3 format=3]\n\n\
             [ext_resource type=\"Texture2D\" path=\"res://icon.svg\" id=\"1_a\"]\n\n\
             [sub_resource type=\"RectangleShape2D\" id=\"R\"]\nsize = Vector2(32, 16)\n\n\
             [node name=\"Main\" type=\"Node2D\"]\n",
        )
        .unwrap();
        let refs = Refs::of_scene(&scene);
        let read = |t: &str| from_text(&crate::text::parse_value(t).unwrap(), &refs);
        assert_eq!(
            read("ExtResource(\"1_a\")"),
            Value::Resource("res://icon.svg".into())
        );
        assert_eq!(
            read("SubResource(\"R\")"),
            Value::NewResource {
                class: "RectangleShape2D".into(),
                properties: vec![("size".into(), Value::Vector2([32.0, 16.0]))],
            }
        );
        assert_eq!(
            read("ExtResource(\"nope\")"),
            Value::Raw("ExtResource(\"nope\")".into())
        );
    }

    #[test]
    fn ints_and_floats_stay_apart() {
        assert_eq!(Value::from_json(&json!(1)).unwrap(), Value::Int(1));
        assert_eq!(
            Value::from_json(&serde_json::from_str("1.0").unwrap()).unwrap(),
            Value::Float(1.0)
        );
        assert_eq!(
            serde_json::to_string(&Value::Float(1.0).to_json()).unwrap(),
            "1.0"
        );
    }

    #[test]
    fn color_alpha_defaults_to_one() {
        let v = Value::from_json(&json!({"$type": "Color", "r": 1, "g": 0, "b": 0})).unwrap();
        assert_eq!(v, Value::Color([1.0, 0.0, 0.0, 1.0]));
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        for (bad, says) in [
            (json!({"$type": "Vector2", "x": 1}), "y must be a number"),
            (
                json!({"$type": "Vector2", "x": 1, "y": 2, "z": 3}),
                "no field \"z\"",
            ),
            (json!({"$type": "Basis2"}), "unsupported $type"),
            (json!({"$type": "Basis"}), "x must be an array of 3 numbers"),
            (
                json!({"$type": "Vector2i", "x": 1.5, "y": 2}),
                "x must be an integer",
            ),
            (
                json!({"$type": "PackedInt32Array", "values": [1, 4294967296_i64]}),
                "32-bit",
            ),
            (
                json!({"$type": "PackedVector2Array", "values": [[1, 2], [3]]}),
                "values[1] must be an array of 2",
            ),
            (
                json!({"$type": "Resource", "class": "Box Shape", "properties": {}}),
                "Godot class name",
            ),
            (
                json!({"$type": "Resource", "class": "BoxShape3D", "path": "res://a.tres"}),
                "no field \"path\"",
            ),
            (
                json!({"$type": "Resource", "class": "BoxShape3D", "properties": [1]}),
                "properties must be an object",
            ),
            (
                json!({"$type": "Resource", "class": "ShaderMaterial", "properties":
                    {"shader": {"$type": "Resource", "path": "/etc/passwd"}}}),
                "res:// path",
            ),
            (json!({"$type": 3}), "must be a string"),
            (
                json!({"$type": "Resource", "path": "/etc/passwd"}),
                "res:// path",
            ),
            (
                json!({"$type": "Resource", "path": "res://../x"}),
                "res:// path",
            ),
            (
                json!({"$type": "Transform2D", "x": [1], "y": [0, 1], "origin": [0, 0]}),
                "x must be an array of 2",
            ),
            (json!(u64::MAX), "64-bit"),
        ] {
            let e = Value::from_json(&bad).unwrap_err();
            assert!(e.0.contains(says), "{bad}: {e}");
        }
        let mut deep = json!(1);
        for _ in 0..40 {
            deep = json!([deep]);
        }
        assert!(Value::from_json(&deep).is_err());
    }
}
