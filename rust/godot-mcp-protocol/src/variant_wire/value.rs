//! The binary encoding's value type, its type numbers and its decode error; the
//! value's JSON form.

use serde_json::{Map, Number, Value as Json, json};

/// Deepest nesting decoded (the engine's own limit is 1024; a debugger value is shallow).
pub const MAX_DEPTH: usize = 128;

pub(super) const TYPE_MASK: u32 = 0xFF;
pub(super) const FLAG_64: u32 = 1 << 16;
pub(super) const FLAG_OBJECT_AS_ID: u32 = 1 << 16;
pub(super) const TYPED_ARRAY_SHIFT: u32 = 16;
pub(super) const TYPED_DICT_KEY_SHIFT: u32 = 16;
pub(super) const TYPED_DICT_VALUE_SHIFT: u32 = 18;

/// `Variant::Type` numbers of Godot 4.
pub(super) mod ty {
    pub(crate) const NIL: u32 = 0;
    pub(crate) const BOOL: u32 = 1;
    pub(crate) const INT: u32 = 2;
    pub(crate) const FLOAT: u32 = 3;
    pub(crate) const STRING: u32 = 4;
    pub(crate) const VECTOR2: u32 = 5;
    pub(crate) const VECTOR2I: u32 = 6;
    pub(crate) const RECT2: u32 = 7;
    pub(crate) const RECT2I: u32 = 8;
    pub(crate) const VECTOR3: u32 = 9;
    pub(crate) const VECTOR3I: u32 = 10;
    pub(crate) const TRANSFORM2D: u32 = 11;
    pub(crate) const VECTOR4: u32 = 12;
    pub(crate) const VECTOR4I: u32 = 13;
    pub(crate) const PLANE: u32 = 14;
    pub(crate) const QUATERNION: u32 = 15;
    pub(crate) const AABB: u32 = 16;
    pub(crate) const BASIS: u32 = 17;
    pub(crate) const TRANSFORM3D: u32 = 18;
    pub(crate) const PROJECTION: u32 = 19;
    pub(crate) const COLOR: u32 = 20;
    pub(crate) const STRING_NAME: u32 = 21;
    pub(crate) const NODE_PATH: u32 = 22;
    pub(crate) const RID: u32 = 23;
    pub(crate) const OBJECT: u32 = 24;
    pub(crate) const CALLABLE: u32 = 25;
    pub(crate) const SIGNAL: u32 = 26;
    pub(crate) const DICTIONARY: u32 = 27;
    pub(crate) const ARRAY: u32 = 28;
    pub(crate) const PACKED_BYTE_ARRAY: u32 = 29;
    pub(crate) const PACKED_INT32_ARRAY: u32 = 30;
    pub(crate) const PACKED_INT64_ARRAY: u32 = 31;
    pub(crate) const PACKED_FLOAT32_ARRAY: u32 = 32;
    pub(crate) const PACKED_FLOAT64_ARRAY: u32 = 33;
    pub(crate) const PACKED_STRING_ARRAY: u32 = 34;
    pub(crate) const PACKED_VECTOR2_ARRAY: u32 = 35;
    pub(crate) const PACKED_VECTOR3_ARRAY: u32 = 36;
    pub(crate) const PACKED_COLOR_ARRAY: u32 = 37;
    pub(crate) const PACKED_VECTOR4_ARRAY: u32 = 38;
}

/// The element type of a typed Array or Dictionary (`ContainerTypeKind`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ContainerType {
    /// Untyped.
    #[default]
    None,
    /// A built-in `Variant::Type`.
    Builtin(u32),
    /// An object class (the debugger writes `EncodedObjectAsID`).
    ClassName(String),
    /// A script path (full-object encoding only).
    Script(String),
}

impl ContainerType {
    pub(super) fn kind(&self) -> u32 {
        match self {
            Self::None => 0,
            Self::Builtin(_) => 1,
            Self::ClassName(_) => 2,
            Self::Script(_) => 3,
        }
    }
}

godot_mcp_formats::godot_value_enum! {
/// One Godot value as the engine's binary encoding carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum Variant {
    NodePath {
        names: Vec<String>,
        subnames: Vec<String>,
        absolute: bool,
    },
    Vector2([f64; 2]),
    Vector2i([i32; 2]),
    Rect2([f64; 4]),
    Rect2i([i32; 4]),
    Vector3([f64; 3]),
    Vector3i([i32; 3]),
    Transform2D([f64; 6]),
    Vector4([f64; 4]),
    Vector4i([i32; 4]),
    Plane([f64; 4]),
    Quaternion([f64; 4]),
    Aabb([f64; 6]),
    Basis([f64; 9]),
    Transform3D([f64; 12]),
    Projection([f64; 16]),
    Color([f32; 4]),
    Rid(u64),
    /// An object by instance id (0: null). The debugger never sends object bodies.
    Object(u64),
    /// A Callable: the engine encodes none of it.
    Callable,
    Signal {
        name: String,
        object: u64,
    },
    Dictionary {
        key_type: ContainerType,
        value_type: ContainerType,
        entries: Vec<(Variant, Variant)>,
    },
    Array {
        element_type: ContainerType,
        items: Vec<Variant>,
    },
    PackedByteArray(Vec<u8>),
    PackedInt32Array(Vec<i32>),
    PackedInt64Array(Vec<i64>),
    PackedFloat32Array(Vec<f32>),
    PackedFloat64Array(Vec<f64>),
    PackedStringArray(Vec<String>),
    PackedVector2Array(Vec<[f64; 2]>),
    PackedVector3Array(Vec<[f64; 3]>),
    PackedColorArray(Vec<[f32; 4]>),
    PackedVector4Array(Vec<[f64; 4]>),
}
}

/// Why bytes are not a Variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end inside a value.
    Truncated,
    /// A header names a type Godot 4.4 does not have.
    UnknownType(u32),
    /// A string is not UTF-8.
    BadUtf8,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A full object body (only ids are accepted).
    FullObject,
    /// A NodePath in the pre-4.0 string form, or a bad container-type kind.
    Malformed(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated => f.write_str("the bytes end inside a value"),
            Self::UnknownType(t) => write!(f, "unknown Variant type {t}"),
            Self::BadUtf8 => f.write_str("a string is not UTF-8"),
            Self::TooDeep => write!(f, "nested deeper than {MAX_DEPTH} levels"),
            Self::FullObject => f.write_str("a full object body (only instance ids are accepted)"),
            Self::Malformed(what) => write!(f, "malformed {what}"),
        }
    }
}

impl std::error::Error for DecodeError {}

fn num(f: f64) -> Json {
    Number::from_f64(f).map_or(Json::Null, Json::Number)
}

fn reals(a: &[f64]) -> Json {
    Json::Array(a.iter().map(|v| num(*v)).collect())
}

impl Variant {
    /// An untyped Array.
    pub fn array(items: Vec<Variant>) -> Self {
        Self::Array {
            element_type: ContainerType::None,
            items,
        }
    }

    /// The items of an Array, typed or not.
    pub fn as_array(&self) -> Option<&[Variant]> {
        match self {
            Self::Array { items, .. } => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) | Self::StringName(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The engine's type name (`Variant::get_type_name`).
    pub fn type_name(&self) -> &'static str {
        type_name(self.type_id())
    }

    /// The `Variant::Type` number.
    pub fn type_id(&self) -> u32 {
        match self {
            Self::Nil => ty::NIL,
            Self::Bool(_) => ty::BOOL,
            Self::Int(_) => ty::INT,
            Self::Float(_) => ty::FLOAT,
            Self::String(_) => ty::STRING,
            Self::StringName(_) => ty::STRING_NAME,
            Self::NodePath { .. } => ty::NODE_PATH,
            Self::Vector2(_) => ty::VECTOR2,
            Self::Vector2i(_) => ty::VECTOR2I,
            Self::Rect2(_) => ty::RECT2,
            Self::Rect2i(_) => ty::RECT2I,
            Self::Vector3(_) => ty::VECTOR3,
            Self::Vector3i(_) => ty::VECTOR3I,
            Self::Transform2D(_) => ty::TRANSFORM2D,
            Self::Vector4(_) => ty::VECTOR4,
            Self::Vector4i(_) => ty::VECTOR4I,
            Self::Plane(_) => ty::PLANE,
            Self::Quaternion(_) => ty::QUATERNION,
            Self::Aabb(_) => ty::AABB,
            Self::Basis(_) => ty::BASIS,
            Self::Transform3D(_) => ty::TRANSFORM3D,
            Self::Projection(_) => ty::PROJECTION,
            Self::Color(_) => ty::COLOR,
            Self::Rid(_) => ty::RID,
            Self::Object(_) => ty::OBJECT,
            Self::Callable => ty::CALLABLE,
            Self::Signal { .. } => ty::SIGNAL,
            Self::Dictionary { .. } => ty::DICTIONARY,
            Self::Array { .. } => ty::ARRAY,
            Self::PackedByteArray(_) => ty::PACKED_BYTE_ARRAY,
            Self::PackedInt32Array(_) => ty::PACKED_INT32_ARRAY,
            Self::PackedInt64Array(_) => ty::PACKED_INT64_ARRAY,
            Self::PackedFloat32Array(_) => ty::PACKED_FLOAT32_ARRAY,
            Self::PackedFloat64Array(_) => ty::PACKED_FLOAT64_ARRAY,
            Self::PackedStringArray(_) => ty::PACKED_STRING_ARRAY,
            Self::PackedVector2Array(_) => ty::PACKED_VECTOR2_ARRAY,
            Self::PackedVector3Array(_) => ty::PACKED_VECTOR3_ARRAY,
            Self::PackedColorArray(_) => ty::PACKED_COLOR_ARRAY,
            Self::PackedVector4Array(_) => ty::PACKED_VECTOR4_ARRAY,
        }
    }

    /// The JSON form the bridge uses for values (scalars as themselves, arrays as
    /// arrays, string-keyed dictionaries as objects, everything else tagged by
    /// `"$type"`), extended to every type the debugger carries. An object is
    /// `{"$type": "Object", "id": …}`: its instance id in the game.
    pub fn to_json(&self) -> Json {
        match self {
            Self::Nil => Json::Null,
            Self::Bool(b) => json!(b),
            Self::Int(i) => json!(i),
            Self::Float(f) => num(*f),
            Self::String(s) => json!(s),
            Self::StringName(s) => json!({"$type": "StringName", "name": s}),
            Self::NodePath {
                names,
                subnames,
                absolute,
            } => {
                let mut p = if *absolute {
                    "/".to_string()
                } else {
                    String::new()
                };
                p.push_str(&names.join("/"));
                for s in subnames {
                    p.push(':');
                    p.push_str(s);
                }
                json!({"$type": "NodePath", "path": p})
            }
            Self::Vector2([x, y]) => json!({"$type": "Vector2", "x": num(*x), "y": num(*y)}),
            Self::Vector2i([x, y]) => json!({"$type": "Vector2i", "x": x, "y": y}),
            Self::Vector3([x, y, z]) => {
                json!({"$type": "Vector3", "x": num(*x), "y": num(*y), "z": num(*z)})
            }
            Self::Vector3i([x, y, z]) => json!({"$type": "Vector3i", "x": x, "y": y, "z": z}),
            Self::Color([r, g, b, a]) => json!({"$type": "Color", "r": num(f64::from(*r)),
                "g": num(f64::from(*g)), "b": num(f64::from(*b)), "a": num(f64::from(*a))}),
            Self::Transform2D(a) => json!({"$type": "Transform2D", "x": reals(&a[0..2]),
                "y": reals(&a[2..4]), "origin": reals(&a[4..6])}),
            Self::Transform3D(a) => json!({"$type": "Transform3D",
                "basis": [reals(&a[0..3]), reals(&a[3..6]), reals(&a[6..9])],
                "origin": reals(&a[9..12])}),
            Self::Rect2(a) => json!({"$type": "Rect2", "components": reals(a)}),
            Self::Rect2i(a) => json!({"$type": "Rect2i", "components": a}),
            Self::Vector4(a) => json!({"$type": "Vector4", "components": reals(a)}),
            Self::Vector4i(a) => json!({"$type": "Vector4i", "components": a}),
            Self::Plane(a) => json!({"$type": "Plane", "components": reals(a)}),
            Self::Quaternion(a) => json!({"$type": "Quaternion", "components": reals(a)}),
            Self::Aabb(a) => json!({"$type": "AABB", "components": reals(a)}),
            Self::Basis(a) => json!({"$type": "Basis", "components": reals(a)}),
            Self::Projection(a) => json!({"$type": "Projection", "components": reals(a)}),
            Self::Rid(id) => json!({"$type": "RID", "id": id}),
            Self::Object(id) => json!({"$type": "Object", "id": id}),
            Self::Callable => json!({"$type": "Callable"}),
            Self::Signal { name, object } => {
                json!({"$type": "Signal", "name": name, "object_id": object})
            }
            Self::Dictionary { entries, .. } => {
                if entries.iter().all(|(k, _)| matches!(k, Self::String(_))) {
                    Json::Object(
                        entries
                            .iter()
                            .map(|(k, v)| (k.as_str().unwrap_or("").to_string(), v.to_json()))
                            .collect::<Map<_, _>>(),
                    )
                } else {
                    json!({"$type": "Dictionary", "entries": entries.iter()
                        .map(|(k, v)| json!([k.to_json(), v.to_json()])).collect::<Vec<_>>()})
                }
            }
            Self::Array { items, .. } => Json::Array(items.iter().map(Self::to_json).collect()),
            Self::PackedByteArray(b) => json!({"$type": "PackedByteArray", "items": b}),
            Self::PackedInt32Array(a) => json!({"$type": "PackedInt32Array", "items": a}),
            Self::PackedInt64Array(a) => json!({"$type": "PackedInt64Array", "items": a}),
            Self::PackedFloat32Array(a) => json!({"$type": "PackedFloat32Array",
                "items": a.iter().map(|v| num(f64::from(*v))).collect::<Vec<_>>()}),
            Self::PackedFloat64Array(a) => {
                json!({"$type": "PackedFloat64Array", "items": reals(a)})
            }
            Self::PackedStringArray(a) => json!({"$type": "PackedStringArray", "items": a}),
            Self::PackedVector2Array(a) => json!({"$type": "PackedVector2Array",
                "items": a.iter().map(|v| reals(v)).collect::<Vec<_>>()}),
            Self::PackedVector3Array(a) => json!({"$type": "PackedVector3Array",
                "items": a.iter().map(|v| reals(v)).collect::<Vec<_>>()}),
            Self::PackedColorArray(a) => json!({"$type": "PackedColorArray",
                "items": a.iter().map(|c| c.iter().map(|v| num(f64::from(*v))).collect::<Vec<_>>())
                    .collect::<Vec<_>>()}),
            Self::PackedVector4Array(a) => json!({"$type": "PackedVector4Array",
                "items": a.iter().map(|v| reals(v)).collect::<Vec<_>>()}),
        }
    }
}

/// `Variant::get_type_name` for a type number (the debugger sends the number).
pub fn type_name(t: u32) -> &'static str {
    godot_mcp_formats::variant::TYPE_NAMES
        .get(t as usize)
        .copied()
        .unwrap_or("unknown")
}
