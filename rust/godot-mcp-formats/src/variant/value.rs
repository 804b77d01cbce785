//! The value model's type, its limits and its error.

/// Deepest nesting accepted.
pub(super) const MAX_DEPTH: usize = 32;

/// How deep built-in sub-resources are read back in the `class` form.
pub const MAX_RESOURCE_DEPTH: usize = 4;

/// Longest class name accepted for a new sub-resource.
pub(super) const MAX_CLASS_LEN: usize = 128;

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

pub(super) fn err<T>(msg: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(msg.into()))
}
