//! The godot-mcp editor add-on: a Rust GDExtension loaded by the Godot editor.
//!
//! It executes what the server asks and decides nothing: no policy, no journal here.
//!
//! # Layout
//!
//! - `plugin`: `GodotMcpEditorPlugin`, the auto-registered `EditorPlugin` that owns the
//!   executor and the bridge thread, applies the executor switch and drains requests on the
//!   main thread once a frame.
//! - the socket thread (discovery, hello, reconnect) is `godot_mcp_editor_core::client`.
//! - `dock`: the "Godot MCP" editor dock (texts from `godot_mcp_editor_core::dock`).
//! - `exec`: the executors, through `EditorUndoRedoManager`: `execute` hands each
//!   command to its domain's file under `exec/` (scene, node, script, signal, resource,
//!   batch, history, steps with its plan, tilemap and physics, files, audio, shader,
//!   editor, animation, animation_tree, ui), each with its own `run`; the helpers they
//!   share are `exec/ctx.rs`, which imports no domain.
//! - `variant`: `Variant` ⇄ the bridge's JSON value form (rules in `godot-mcp-editor-core`).
//! - `api`: `GodotMcp`, the small class the add-on's GDScript `plugin.gd` calls to turn
//!   the executor on and off, and to read versions.
//! - `switch`: the process-wide executor switch both of them share.
//! - `probe`: `GodotMcpProbe`, the runtime probe of a managed game session: an
//!   extension `SceneTree` the game gets on the command line (`--script probe.gd`);
//!   its input clock in `probe_clock`, its watches and reads in `probe_observe`, its
//!   socket in `probe_conn`, the pieces they share in `probe_kit`.
//! - `capture`: screenshots of the editor's views, and the PNG encoding the probe shares.
//! - `perf`: the performance monitors the probe and `editor.monitors` both read.
//! - `engine_version`: the running Godot's version, read once when the extension loads.
//! - `docs_settle`: keeps a short headless session that found the add-on from crashing at
//!   exit on Godot 4.5+ (an engine bug, godotengine/godot#111048).
//!
//! # Why a GDScript plugin flips the switch
//!
//! Godot adds a GDExtension `EditorPlugin` to the editor whenever the library loads,
//! whatever Project Settings → Plugins says. The user-facing on/off toggle is therefore the
//! GDScript `addons/godot_mcp/plugin.gd`: its `_enter_tree` turns the executor on, its
//! `_exit_tree` turns it off. While the switch is off nothing executes (and no socket is open).
//!
//! # FFI discipline
//!
//! No panic may cross into Godot: callbacks report problems with `godot_error!` and return.
//! The one `unsafe` item is the entry point below.

#![warn(unreachable_pub)]
mod api;
mod capture;
mod dock;
mod docs_settle;
mod engine_version;
mod exec;
mod perf;
mod plugin;
mod probe;
mod probe_clock;
mod probe_conn;
mod probe_kit;
mod probe_observe;
mod startup;
mod switch;
mod variant;

use godot::prelude::*;

/// Version of this add-on, reported in the bridge hello and by `GodotMcp.version()`.
pub(crate) const ADDON_VERSION: &str = env!("CARGO_PKG_VERSION");

struct GodotMcpExtension;

// SAFETY: `#[gdextension]` generates the `gdext_rust_init` entry symbol that the
// `.gdextension` manifest names; implementing `ExtensionLibrary` is unsafe only because
// this type must be the one and only entry point of the library, which it is.
#[gdextension]
unsafe impl ExtensionLibrary for GodotMcpExtension {
    fn on_stage_init(stage: InitStage) {
        // `Engine` is available from the Scene level on, before any editor plugin exists.
        if stage == InitStage::Scene {
            let version = engine_version::capture();
            docs_settle::note_load();
            godot_print!(
                "godot-mcp: extension loaded (add-on {ADDON_VERSION}, Godot {version}, bridge protocol {})",
                godot_mcp_protocol::BRIDGE_PROTOCOL_VERSION
            );
        }
    }

    fn on_stage_deinit(stage: InitStage) {
        if stage == InitStage::Scene {
            // The plugin left the tree long before; make sure a reload starts switched off.
            switch::set_requested(false);
        }
    }
}
