//! `GodotMcpEditorPlugin`: the add-on's presence in the editor.
//!
//! Godot adds it to the editor as soon as the library loads (GDExtension editor plugins are
//! not governed by the Project Settings → Plugins toggle). It owns the executor and turns
//! it on and off as the [`switch`](crate::switch) says; today the executor is only the
//! `enabled` flag — the bridge thread and command executors arrive with the bridge.

use godot::classes::{EditorPlugin, IEditorPlugin};
use godot::prelude::*;

use crate::{ADDON_VERSION, engine_version, switch};

#[derive(GodotClass)]
#[class(tool, init, base = EditorPlugin)]
pub struct GodotMcpEditorPlugin {
    /// Whether the executor runs. Off by default; follows the switch once a frame while the
    /// plugin is in the tree, and is forced off when it leaves.
    enabled: bool,
    base: Base<EditorPlugin>,
}

#[godot_api]
impl IEditorPlugin for GodotMcpEditorPlugin {
    fn enter_tree(&mut self) {
        godot_print!(
            "godot-mcp: editor plugin entered the tree (add-on {ADDON_VERSION}, Godot {})",
            engine_version::get()
        );
        // The GDScript plugin may have flipped the switch before we existed.
        self.apply_switch(switch::requested());
    }

    fn exit_tree(&mut self) {
        self.apply_switch(false);
        godot_print!("godot-mcp: editor plugin left the tree");
    }

    fn process(&mut self, _delta: f64) {
        self.apply_switch(switch::requested());
    }
}

impl GodotMcpEditorPlugin {
    /// Starts or stops the executor when `enabled` differs from its state; a no-op otherwise,
    /// so calling it every frame costs one comparison.
    fn apply_switch(&mut self, enabled: bool) {
        if self.enabled == enabled {
            return;
        }
        self.enabled = enabled;
        if enabled {
            godot_print!("godot-mcp: executor enabled");
        } else {
            godot_print!("godot-mcp: executor disabled");
        }
    }
}
