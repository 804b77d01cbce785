//! The syntax tree of a Godot Variant written in text (`Vector2(1, 2)`,
//! `ExtResource("1_x")`, `{ "a": [1, 2] }`, …), as the parsers read it: references
//! unresolved, constructors by name. It has no JSON form: what an agent sees is the
//! one value model, [`crate::variant::Value`] ([`crate::variant::from_text`] reads a
//! [`Literal`] into it). The original text is kept next to it in
//! [`crate::text::Property::text`] so tools can show it verbatim.

use std::borrow::Cow;

crate::godot_value_enum! {
/// A Godot Variant value as written in Godot's text formats, parsed. Its scalars:
/// `null` (or the legacy `nil`), `true` / `false`, an integer (no `.` and no
/// exponent), a float (or `inf`, `-inf`, `inf_neg`, `nan`), `"text"` with escapes
/// resolved, `&"name"`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// `NodePath("A/B")` or `^"A/B"`.
    NodePath(String),
    /// `[a, b, …]`.
    Array(Vec<Literal>),
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
        args: Vec<Literal>,
    },
}
}

/// One `key: value` pair of a [`Literal::Dictionary`].
#[derive(Debug, Clone, PartialEq)]
pub struct DictEntry {
    pub key: Literal,
    pub value: Literal,
}

/// One `"name": value` pair of a [`Literal::Object`].
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectProperty {
    pub name: String,
    pub value: Literal,
}

impl Literal {
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
    pub fn as_array(&self) -> Option<&[Literal]> {
        match self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Looks up a key in a `Dictionary` whose keys are strings.
    pub fn dict_get(&self, key: &str) -> Option<&Literal> {
        match self {
            Self::Dictionary(entries) => entries
                .iter()
                .find(|e| e.key.as_str() == Some(key))
                .map(|e| &e.value),
            _ => None,
        }
    }

    /// Looks up a property of an `Object`.
    pub fn object_get(&self, name: &str) -> Option<&Literal> {
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
