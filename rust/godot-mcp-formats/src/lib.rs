//! Parsers for Godot 4's text formats — `project.godot`, `.tscn`, `.tres` —
//! in pure Rust, with no Godot needed.
//!
//! # Layout
//!
//! - [`text`]: the tokenizer/parser of the format the three files share
//!   (sections, `key = value` lines, Variant values), keeping each value's
//!   original text next to its syntax tree, a [`Literal`].
//! - [`literal`]: that syntax tree (references unresolved; no JSON form of its own).
//! - [`coerce`]: a value as an agent sends it, read by the property's declared type.
//! - [`variant`]: the one Godot value model (its JSON form, its Variant text writer)
//!   and the checks on Variant text an agent supplies.
//! - [`project`]: `project.godot` → [`ProjectInfo`].
//! - [`project_edit`]: a byte-preserving editor of `project.godot`'s `key=value` entries.
//! - [`scene_edit`]: line-level edits of one property in a `.tscn` or `.tres` that keep
//!   every other byte.
//! - [`input_event`]: the `InputEvent` objects of an input-map action, in Godot's layout.
//! - [`scene`]: `.tscn` → [`Scene`] (node tree, connections, editable paths).
//! - [`resource`]: `.tres` → [`Resource`], and the header / ext / sub
//!   resource tables `.tscn` shares with it.
//! - [`deps`]: the reference graph (dependencies, dependents, cycles, reach).
//! - [`animation`], [`audio_bus`], [`theme`], [`tilemap`]: what Godot's
//!   animation, bus layout, theme and tile resources store, decoded.
//! - [`visual_shader`]: a VisualShader's graph (nodes, connections), read and written.
//! - [`type_names`]: Godot's Variant type names, the one table [`text`] and [`variant`] share.
//! - [`ids`]: resource uids and ext_resource ids, encoded as the engine does.
//! - [`relink`]: rewriting `res://` references when a file moves or is copied.
//! - [`classdoc`]: the class reference XML `godot --doctool` writes.
//! - [`export_presets`]: `export_presets.cfg` → the export presets.
//! - [`error`]: the one [`ParseError`] (kind, line, column, message), and the
//!   [`InputError`] a writer returns for a value it refuses (parameter, message, hint).
//! - [`testreport`]: GUT's and gdUnit4's test results (JUnit XML, console log).
//! - [`testing`]: generators of large realistic inputs for benches and tests.
//!
//! # Guarantees
//!
//! The parsers never panic, whatever the input. A malformed file is an error
//! with a 1-based line and column, never a partial result.
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

/// Declares a Godot value enum: the scalars every value model shares (nil, bool, int,
/// float, string, string name), written here once, then the enum's own variants.
/// [`literal::Literal`] (the text formats), [`variant::Value`] (the bridge) and the
/// protocol's binary `Variant` are the three.
#[macro_export]
macro_rules! godot_value_enum {
    ($(#[$attr:meta])* $vis:vis enum $name:ident { $($own:tt)* }) => {
        $(#[$attr])*
        $vis enum $name {
            /// `null`.
            Nil,
            Bool(bool),
            Int(i64),
            Float(f64),
            String(String),
            /// `&"name"`: a StringName, kept apart from a String (Godot holds them as two
            /// types, and a Dictionary key of one is not a key of the other).
            StringName(String),
            $($own)*
        }
    };
}

pub mod animation;
pub mod audio_bus;
pub mod classdoc;
pub mod coerce;
pub mod deps;
pub mod error;
pub mod export_presets;
pub mod ids;
pub mod input_event;
pub mod literal;
pub mod project;
pub mod project_edit;
pub mod relink;
pub mod resource;
pub mod scene;
pub mod scene_edit;
pub mod testing;
pub mod testreport;
pub mod text;
pub mod theme;
pub mod tilemap;
pub mod type_names;
pub mod variant;
pub mod visual_shader;

pub use error::{ErrorKind, InputError, ParseError, Position};
pub use literal::{DictEntry, Literal, ObjectProperty};
pub use project::{Autoload, InputAction, InputEventSummary, ProjectInfo, parse_project};
pub use resource::{ExtLink, ExtResource, Resource, ResourceLink, SubResource, parse_resource};
pub use scene::{Connection, Node, Scene, parse_scene};
pub use text::{Property, Section, parse_value};
