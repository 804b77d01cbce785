//! The executors: one decoded [`Command`] → one JSON result or a [`BridgeError`]. Main
//! thread only (called from the plugin's `process()`). Every create, rename, move,
//! duplicate, delete and set goes through `EditorUndoRedoManager`; a batch is one action
//! unless it touches more than 20 nodes (then it bypasses the history and says so).
//! Validation happens before the first change, so an error reply says `effect: unchanged`
//! ([`err`], [`failed`]); the few errors that come after a change say what they left:
//! `rolled_back` when its undo action ran and the value read back is the old one
//! (`resource.set_property` whose save failed), `changed` when not, and nothing at all
//! when the editor's state is unknown (a scene that did not open or close as asked).
//!
//! One file per domain, each with its own `run` for its commands; the helpers they share
//! are [`ctx`], which imports no domain. `steps.rs` runs `scene.steps` over the plan of
//! [`plan`], with the tile-map and physics steps in `tilemap.rs` and `physics.rs`.

use godot_mcp_editor_core::command::Command;
use serde_json::json;

mod animation;
mod animation_tree;
mod audio;
mod batch;
mod ctx;
mod editor;
mod files;
mod history;
mod node;
mod physics;
mod plan;
mod resource;
mod scene;
mod script;
mod shader;
mod signal;
mod steps;
mod tilemap;
mod ui;

pub(crate) use ctx::Res;

/// One decoded command, run by its domain's executor: the one dispatch.
pub(crate) fn execute(cmd: Command) -> Res {
    match cmd {
        Command::Ping => Ok(json!({})),
        c @ (Command::EditorState
        | Command::SceneTree(..)
        | Command::SceneOpen(..)
        | Command::SceneCreate(..)
        | Command::SceneSave(..)
        | Command::SceneReload(..)
        | Command::SceneClose(..)
        | Command::NodeInstance { .. }
        | Command::EditableChildren { .. }
        | Command::Connections { .. }
        | Command::Properties { .. }) => scene::run(c),
        c @ (Command::NodeCreate(..)
        | Command::NodeRename(..)
        | Command::NodeMove(..)
        | Command::NodeDuplicate(..)
        | Command::NodeDelete(..)
        | Command::NodeGetProperty(..)
        | Command::NodeSetProperty(..)
        | Command::NodePersistence(..)) => node::run(c),
        c @ (Command::ScriptAttach(..) | Command::ScriptDetach(..)) => script::run(c),
        c @ (Command::SignalConnect(..) | Command::SignalDisconnect(..)) => signal::run(c),
        c @ Command::ResourceSetProperty(..) => resource::run(c),
        c @ Command::BatchApply(..) => batch::run(c),
        c @ (Command::Undo { .. } | Command::Redo | Command::History(..)) => history::run(c),
        Command::EditorScreenshot(req) => crate::capture::editor_screenshot(req),
        c @ Command::Steps { .. } => steps::run(c),
        c @ (Command::Cells(..) | Command::MeshLibraryItems(..)) => tilemap::run(c),
        c @ (Command::NodeGroup { .. }
        | Command::Select { .. }
        | Command::Selection
        | Command::SaveAll) => editor::run(c),
        c @ (Command::AnimationAdd { .. }
        | Command::AnimationSet { .. }
        | Command::AnimationRemove { .. }
        | Command::AnimationGet { .. }
        | Command::TrackAdd { .. }
        | Command::TrackRemove { .. }
        | Command::KeyInsert { .. }
        | Command::KeyRemove { .. }) => animation::run(c),
        c @ (Command::TreeAddNode { .. }
        | Command::TreeConnect { .. }
        | Command::TreeBlendConnect { .. }) => animation_tree::run(c),
        c @ (Command::ThemeSetItem { .. }
        | Command::ThemeOverride { .. }
        | Command::AnchorsPreset { .. }
        | Command::AddContainer { .. }) => ui::run(c),
        Command::EditorMonitors
        | Command::FilesystemScan
        | Command::FilesystemStatus
        | Command::FilesystemUpdate(..) => files::run(&cmd),
        c @ Command::AudioAddPlayer(..) => audio::run(c),
        c @ (Command::ShaderAssignMaterial(..)
        | Command::ShaderUniforms(..)
        | Command::ShaderSetUniform(..)) => shader::run(c),
    }
}
