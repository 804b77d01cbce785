//! The godot-mcp editor add-on (GDExtension).
use godot::prelude::*;

struct GodotMcpExtension;

// SAFETY: the one entry point Godot calls; gdext generates the FFI glue.
#[gdextension]
unsafe impl ExtensionLibrary for GodotMcpExtension {}
