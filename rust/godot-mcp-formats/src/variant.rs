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

mod check;
mod from_text;
mod json;
#[cfg(test)]
mod tests;
mod to_text;
mod value;

pub use crate::type_names::TYPE_NAMES;
pub use check::{
    MAX_VARIANT_TEXT, Scan, base64_decode, check_text, plain_json_text, scan_balanced,
};
pub use from_text::{Refs, from_text, from_variant_text, real};
pub use json::is_class_name;
pub use to_text::{float_text, quote, to_text, write_text};
pub use value::{MAX_RESOURCE_DEPTH, Value, ValueError};
