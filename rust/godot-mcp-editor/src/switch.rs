//! The executor switch: whether the user has the add-on enabled in Project Settings.
//!
//! `GodotMcp.set_enabled` (called by `plugin.gd`) records the request here; the Rust
//! `EditorPlugin` applies it on its own frame. Applying it in the plugin, never inside the
//! GDScript call, keeps starting and stopping the executor (later: the bridge thread) in one
//! place and avoids re-entrant borrows of the plugin from a foreign call.
//!
//! The request is remembered even when no plugin exists yet: on start-up Godot may enter the
//! GDScript plugin before the extension's plugin (the extension's is added at the end of the
//! frame that loaded the library), and the plugin reads the switch when it enters the tree.

use std::sync::atomic::{AtomicBool, Ordering};

/// Off until `plugin.gd` says otherwise: a project that merely contains the add-on but has
/// it disabled in Project Settings executes nothing.
static REQUESTED: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_requested(enabled: bool) {
    REQUESTED.store(enabled, Ordering::SeqCst);
}

pub(crate) fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_last_request() {
        set_requested(true);
        assert!(requested());
        set_requested(false);
        assert!(!requested());
    }
}
