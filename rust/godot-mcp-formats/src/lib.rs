//! Godot 4 text formats.
#![forbid(unsafe_code)]
