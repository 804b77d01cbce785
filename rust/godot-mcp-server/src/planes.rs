//! The planes the server acts through: the project plane (files under `res://`) and the
//! editor plane (the bridge to the godot_mcp add-on).

pub mod editor;
pub mod process;
pub mod project;
