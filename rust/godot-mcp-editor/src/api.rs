//! `GodotMcp`: the add-on's script-facing API, called by `addons/godot_mcp/plugin.gd`.
//!
//! A plain `RefCounted` with no state of its own: every instance reads and writes the same
//! process-wide [`switch`](crate::switch), so GDScript may create one with
//! `ClassDB.instantiate("GodotMcp")` whenever it needs it.

use godot::prelude::*;

use crate::{ADDON_VERSION, engine_version, switch};

#[derive(GodotClass)]
#[class(tool, init, base = RefCounted)]
pub(crate) struct GodotMcp {
    base: Base<RefCounted>,
}

#[godot_api]
impl GodotMcp {
    /// Turns the executor on or off. The editor plugin applies it on its next frame.
    #[func]
    fn set_enabled(&self, enabled: bool) {
        switch::set_requested(enabled);
    }

    /// Whether the executor switch is on (as last set by `set_enabled`).
    #[func]
    fn is_enabled(&self) -> bool {
        switch::requested()
    }

    /// The add-on version, e.g. `0.1.0`.
    #[func]
    fn version(&self) -> GString {
        GString::from(ADDON_VERSION)
    }

    /// The running engine's version as read at load, e.g. `4.4.1.stable.official`.
    #[func]
    fn godot_version(&self) -> GString {
        GString::from(engine_version::get().to_string().as_str())
    }

    /// The bridge protocol version this add-on speaks.
    #[func]
    fn protocol_version(&self) -> i64 {
        i64::from(godot_mcp_protocol::BRIDGE_PROTOCOL_VERSION)
    }
}
