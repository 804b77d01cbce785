//! godot-mcp server library.
#![forbid(unsafe_code)]
