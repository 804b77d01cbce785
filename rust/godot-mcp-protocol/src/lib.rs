//! Wire types of the editor bridge between `godot-mcp serve` and the GDExtension add-on.
//!
//! Serde only, so both sides (and tests) share one definition of the protocol.
#![forbid(unsafe_code)]

/// Version of the bridge protocol; both sides exchange it in the hello.
pub const BRIDGE_PROTOCOL_VERSION: u32 = 1;
