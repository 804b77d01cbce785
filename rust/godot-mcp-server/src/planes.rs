//! The planes the server acts through: the project plane (files under `res://`) and the
//! editor plane (the bridge to the godot_mcp add-on).

pub(crate) mod editor;
pub(crate) mod process;
pub(crate) mod project;
