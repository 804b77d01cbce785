//! The typed view of a Godot Variant written in text (`Vector2(1, 2)`,
//! `ExtResource("1_x")`, `{ "a": [1, 2] }`, …).
//!
//! A [`Value`] is what a parsed value *means*; the original text is kept next
//! to it in [`crate::text::Property::text`] so tools can show it verbatim.

use std::borrow::Cow;

use serde::{Serialize, Serializer};

/// A Godot Variant value, as written in Godot's text formats.
///
/// Serialized to JSON adjacently tagged: `{"type": "int", "value": 3}`.
/// Non-finite floats (`inf`, `-inf`, `nan`), which JSON cannot carry as
/// numbers, are serialized as the strings `"inf"`, `"-inf"`, `"nan"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Value {
    /// `null` (or the legacy `nil`).
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer literal (no `.` and no exponent).
    Int(i64),
    /// A float literal, or `inf`, `-inf`, `inf_neg`, `nan`.
    Float(#[serde(serialize_with = "serialize_float")] f64),
    /// `"text"`, with escapes resolved.
    String(String),
    /// `&"name"`.
    StringName(String),
    /// `NodePath("A/B")` or `^"A/B"`.
    NodePath(String),
    /// `[a, b, …]`.
    Array(Vec<Value>),
    /// `{ key: value, … }`, in file order.
    Dictionary(Vec<DictEntry>),
    /// `ExtResource("id")`: a reference to an `[ext_resource]` of the same file.
    ExtResource(String),
    /// `SubResource("id")`: a reference to a `[sub_resource]` of the same file.
    SubResource(String),
    /// `Object(Class, "prop": value, …)`, e.g. input events in `project.godot`.
    Object {
        /// The class name, e.g. `InputEventKey`.
        class: String,
        /// Properties in file order.
        properties: Vec<ObjectProperty>,
    },
    /// Any other constructor: `Vector2(1, 2)`, `Transform3D(…)`, `Color(…)`,
    /// `PackedStringArray("a")`, and typed collections such as
    /// `Array[int]([1, 2])` (name `Array[int]`).
    Constructor {
        /// The constructor name, including a type parameter list if any.
        /// (Borrowed for Godot's built-in types, to save an allocation per value.)
        name: Cow<'static, str>,
        /// The arguments in order.
        args: Vec<Value>,
    },
}

/// One `key: value` pair of a [`Value::Dictionary`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DictEntry {
    pub key: Value,
    pub value: Value,
}

/// One `"name": value` pair of a [`Value::Object`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectProperty {
    pub name: String,
    pub value: Value,
}

fn serialize_float<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else if v.is_nan() {
        s.serialize_str("nan")
    } else if *v > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

impl Value {
    /// The string inside a `String`, `StringName` or `NodePath`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) | Self::StringName(s) | Self::NodePath(s) => Some(s),
            _ => None,
        }
    }

    /// The integer inside an `Int`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// An `Int` or `Float` as `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Int(i) => Some(*i as f64),
            Self::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The boolean inside a `Bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The elements of an `Array`.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Looks up a key in a `Dictionary` whose keys are strings.
    pub fn dict_get(&self, key: &str) -> Option<&Value> {
        match self {
            Self::Dictionary(entries) => entries
                .iter()
                .find(|e| e.key.as_str() == Some(key))
                .map(|e| &e.value),
            _ => None,
        }
    }

    /// Looks up a property of an `Object`.
    pub fn object_get(&self, name: &str) -> Option<&Value> {
        match self {
            Self::Object { properties, .. } => {
                properties.iter().find(|p| p.name == name).map(|p| &p.value)
            }
            _ => None,
        }
    }

    /// For `PackedStringArray("a", "b")` (or an array of strings), the strings.
    pub fn as_string_list(&self) -> Option<Vec<String>> {
        let items = match self {
            Self::Constructor { name, args } if name == "PackedStringArray" => args.as_slice(),
            Self::Array(items) => items.as_slice(),
            _ => return None,
        };
        items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect()
    }
}
