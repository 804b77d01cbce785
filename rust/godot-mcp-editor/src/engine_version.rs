//! The running Godot's version, read once from `Engine.get_version_info()`.
//!
//! The bridge hello reports it; the server checks it as the `godot_version` precondition.

use std::sync::OnceLock;

use godot::classes::Engine;
use godot::prelude::*;
use godot_mcp_protocol::GodotVersion;

static ENGINE_VERSION: OnceLock<GodotVersion> = OnceLock::new();

/// Reads the engine's version (main thread, Scene level or later), stores it and returns it.
/// Logs an error if the engine is older than the add-on supports; the manifest's
/// `compatibility_minimum` should have stopped such an engine from loading us at all.
pub(crate) fn capture() -> &'static GodotVersion {
    ENGINE_VERSION.get_or_init(|| {
        let version = read_engine_version();
        if !version.is_supported() {
            godot_error!(
                "godot-mcp: Godot {version} is not supported; the add-on needs Godot {}.{} or newer 4.x",
                godot_mcp_protocol::MIN_GODOT_VERSION.major,
                godot_mcp_protocol::MIN_GODOT_VERSION.minor
            );
        }
        version
    })
}

/// The version captured at load; reads it now if the load hook did not run (it always
/// should, but a missing value must not become a panic).
pub(crate) fn get() -> &'static GodotVersion {
    match ENGINE_VERSION.get() {
        Some(version) => version,
        None => capture(),
    }
}

fn read_engine_version() -> GodotVersion {
    let info = Engine::singleton().get_version_info();
    let number = |key: &str| -> u32 {
        info.get(key)
            .and_then(|v| v.try_to::<i64>().ok())
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or_else(|| {
                godot_error!("godot-mcp: Engine.get_version_info() has no usable {key:?}");
                0
            })
    };
    let text = |key: &str| -> String {
        info.get(key)
            .and_then(|v| v.try_to::<GString>().ok())
            .map(|s| s.to_string())
            .unwrap_or_default()
    };
    GodotVersion {
        major: number("major"),
        minor: number("minor"),
        patch: number("patch"),
        status: text("status"),
        build: text("build"),
    }
}
