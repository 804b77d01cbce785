//! The JSON form of Godot values on the bridge.
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
//!
//! A built-in sub-resource (one saved inside the scene, not in its own file) reads back in
//! the `class` form with the properties that differ from the class defaults, nested at
//! most [`MAX_RESOURCE_DEPTH`] deep (deeper ones read as `"<Class (embedded)>"`).
//!
//! An integer stays an integer and a float a float (`1.0` on the wire is a float), so a
//! value read and written back round-trips exactly. Anything else is refused with a
//! message naming what was wrong, never approximated.

use serde_json::{Map, Number, Value as Json, json};

/// Deepest nesting accepted.
const MAX_DEPTH: usize = 32;

/// How deep built-in sub-resources are read back in the `class` form.
pub const MAX_RESOURCE_DEPTH: usize = 4;

/// Longest class name accepted for a new sub-resource.
const MAX_CLASS_LEN: usize = 128;

/// A Godot value the bridge can carry.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
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
    Array(Vec<Value>),
    Dictionary(Vec<(String, Value)>),
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
            Value::Float(f) => Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::String(s) => json!(s),
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
            Value::Array(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Dictionary(entries) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect::<Map<_, _>>(),
            ),
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
    let Some(items) = json.and_then(Json::as_array).filter(|a| a.len() == N) else {
        return err(format!("{what} must be an array of {N} numbers"));
    };
    let mut out = [0.0; N];
    for (i, item) in items.iter().enumerate() {
        out[i] = float(Some(item), &format!("{what}[{i}]"))?;
    }
    Ok(out)
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
    let Some(items) = json.and_then(Json::as_array).filter(|a| a.len() == N) else {
        return err(format!("{what} must be an array of {N} integers"));
    };
    let mut out = [0; N];
    for (i, item) in items.iter().enumerate() {
        out[i] = int(Some(item), &format!("{what}[{i}]"))?;
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
                 Rect2, Rect2i, Quaternion, Color, NodePath, Transform2D, Transform3D, Resource, \
                 PackedVector2Array, PackedVector3Array, PackedFloat32Array, PackedInt32Array, \
                 PackedColorArray)"
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

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
            (json!({"$type": "Basis"}), "unsupported $type"),
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
