//! The JSON form of a value: [`Value::from_json`] and [`Value::to_json`].

use serde_json::{Map, Number, Value as Json, json};

use super::check::{Scan, scan_balanced};
use super::value::{MAX_CLASS_LEN, MAX_DEPTH, Value, ValueError, err};

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

/// A `$type` object: the value it stands for, or the error naming what is wrong.
fn typed(ty: &str, m: &Map<String, Json>, depth: usize) -> Result<Value, ValueError> {
    if let Some(v) = typed_vector(ty, m)? {
        return Ok(v);
    }
    if let Some(v) = typed_compound(ty, m)? {
        return Ok(v);
    }
    if let Some(v) = typed_packed(ty, m, depth)? {
        return Ok(v);
    }
    typed_other(ty, m, depth)
}

/// The vectors, quaternion and color; `None` for another `$type`.
fn typed_vector(ty: &str, m: &Map<String, Json>) -> Result<Option<Value>, ValueError> {
    Ok(Some(match ty {
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
        "Quaternion" => {
            only_fields(m, ty, &["x", "y", "z", "w"])?;
            Value::Quaternion([
                float(m.get("x"), "x")?,
                float(m.get("y"), "y")?,
                float(m.get("z"), "z")?,
                float(m.get("w"), "w")?,
            ])
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
        _ => return Ok(None),
    }))
}

/// The transforms, rectangles, plane, box, basis and projection; `None` for another `$type`.
fn typed_compound(ty: &str, m: &Map<String, Json>) -> Result<Option<Value>, ValueError> {
    Ok(Some(match ty {
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
        _ => return Ok(None),
    }))
}

/// The packed arrays; `None` for another `$type`.
fn typed_packed(
    ty: &str,
    m: &Map<String, Json>,
    depth: usize,
) -> Result<Option<Value>, ValueError> {
    Ok(Some(match ty {
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
        // An item is [r, g, b, a] or a colour's text ("#ffffff00", "red"), as for Color.
        "PackedColorArray" => Value::PackedColorArray(packed(m, ty, |j, at| {
            match j {
            Json::String(t) => crate::coerce::parse_color(t)
                .or(match super::from_variant_text(t.trim()) {
                    Value::Color(c) => Some(c),
                    _ => None,
                })
                .map_or_else(
                || err(format!("{at}: {t:?} is not a colour (\"#rrggbb\", \"#rrggbbaa\", a Godot colour name or [r, g, b, a])")),
                Ok,
            ),
            _ => floats(Some(j), at),
        }
        })?),
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
        _ => return Ok(None),
    }))
}

/// Names, paths, resources, non-finite floats, typed collections and `Raw`; an error
/// naming the supported types for any other `$type`.
fn typed_other(ty: &str, m: &Map<String, Json>, depth: usize) -> Result<Value, ValueError> {
    Ok(match ty {
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
        "float" => {
            only_fields(m, ty, &["value"])?;
            match m.get("value").and_then(Json::as_str) {
                Some("inf") => Value::Float(f64::INFINITY),
                Some("-inf") => Value::Float(f64::NEG_INFINITY),
                Some("nan") => Value::Float(f64::NAN),
                _ => return err("float.value must be \"inf\", \"-inf\" or \"nan\""),
            }
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
