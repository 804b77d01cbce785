//! The command names of the bridge and what the server must know about each before it
//! sends one: whether it changes the editor, and whether it may write a file (a lost
//! answer to such a command quarantines its transaction).
//!
//! Parameters and results are documented in `docs/editor-bridge.md`; their decoding lives
//! in `godot-mcp-editor-core`, the add-on's pure half.

/// Answers `{}`; measures the round trip.
pub const PING: &str = "ping";
/// `{}` → `{active_scene, open_scenes, dirty}`.
pub const EDITOR_STATE: &str = "editor.state";
pub const SCENE_TREE: &str = "scene.tree";
pub const SCENE_OPEN: &str = "scene.open";
pub const SCENE_CREATE: &str = "scene.create";
pub const SCENE_SAVE: &str = "scene.save";
pub const SCENE_CLOSE: &str = "scene.close";
pub const SCENE_RELOAD: &str = "scene.reload";
pub const NODE_CREATE: &str = "node.create";
pub const NODE_RENAME: &str = "node.rename";
pub const NODE_MOVE: &str = "node.move";
pub const NODE_DUPLICATE: &str = "node.duplicate";
pub const NODE_DELETE: &str = "node.delete";
pub const NODE_GET_PROPERTY: &str = "node.get_property";
pub const NODE_SET_PROPERTY: &str = "node.set_property";
/// The read-only persistence probe (`cmd_node_persistence`): answers with the verdict the
/// real handler would stamp, so a dry run and the real run agree.
pub const NODE_PERSISTENCE: &str = "node.persistence";
pub const SCRIPT_ATTACH: &str = "script.attach";
pub const SCRIPT_DETACH: &str = "script.detach";
pub const SIGNAL_CONNECT: &str = "signal.connect";
pub const SIGNAL_DISCONNECT: &str = "signal.disconnect";
pub const RESOURCE_SET_PROPERTY: &str = "resource.set_property";
pub const BATCH_APPLY: &str = "scene.batch.apply";
pub const UNDO: &str = "editor.undo";
pub const REDO: &str = "editor.redo";
pub const HISTORY: &str = "editor.history";
/// `{view: "2d"|"3d"|"window", max_edge?, max_bytes, node?}` → `{captured: true,
/// png_base64, width, height, view, scale, canvas_transform?, crop?}`, or `{captured: false,
/// reason, …}` when there is nothing to read (no renderer, a view not on screen yet, a PNG
/// above `max_bytes`, a node outside the view): a read, so not an error reply.
pub const EDITOR_SCREENSHOT: &str = "editor.screenshot";
/// `{parent, name, type: AudioStreamPlayer|AudioStreamPlayer2D|AudioStreamPlayer3D,
/// stream?, bus?, autoplay?, volume_db?}` → the player, its properties set, added as one
/// undo action.
pub const AUDIO_ADD_PLAYER: &str = "audio.add_player";
/// `{node, shader}` → a new ShaderMaterial with that shader on the node's `material`
/// (CanvasItem) or `material_override` (GeometryInstance3D); one undo action.
pub const SHADER_ASSIGN_MATERIAL: &str = "shader.assign_material";
/// `{node}` → `{uniforms: [{name, type, hint, hint_string, value}]}` of the node's
/// ShaderMaterial.
pub const SHADER_UNIFORMS: &str = "shader.uniforms";
/// `{node, name, value}` → the uniform set on the node's ShaderMaterial; one undo action.
pub const SHADER_SET_UNIFORM: &str = "shader.set_uniform";

/// Every command, in documentation order.
pub const ALL: [&str; 30] = [
    PING,
    EDITOR_STATE,
    SCENE_TREE,
    SCENE_OPEN,
    SCENE_CREATE,
    SCENE_SAVE,
    SCENE_CLOSE,
    SCENE_RELOAD,
    NODE_CREATE,
    NODE_RENAME,
    NODE_MOVE,
    NODE_DUPLICATE,
    NODE_DELETE,
    NODE_GET_PROPERTY,
    NODE_SET_PROPERTY,
    NODE_PERSISTENCE,
    SCRIPT_ATTACH,
    SCRIPT_DETACH,
    SIGNAL_CONNECT,
    SIGNAL_DISCONNECT,
    RESOURCE_SET_PROPERTY,
    BATCH_APPLY,
    UNDO,
    REDO,
    HISTORY,
    EDITOR_SCREENSHOT,
    AUDIO_ADD_PLAYER,
    SHADER_ASSIGN_MATERIAL,
    SHADER_UNIFORMS,
    SHADER_SET_UNIFORM,
];

/// Whether the command only reads.
pub fn is_read_only(cmd: &str) -> bool {
    matches!(
        cmd,
        PING | EDITOR_STATE
            | SCENE_TREE
            | NODE_GET_PROPERTY
            | NODE_PERSISTENCE
            | HISTORY
            | EDITOR_SCREENSHOT
            | SHADER_UNIFORMS
    )
}

/// Whether the command may write a file in the project: a lost answer to it leaves the
/// disk in an unknown state, so its transaction is quarantined (writes blocked).
pub fn may_save_file(cmd: &str) -> bool {
    matches!(cmd, SCENE_SAVE | SCENE_CREATE | RESOURCE_SET_PROPERTY)
}

/// Batch sets above this many nodes bypass the undo stack (`undoable: false`).
pub const UNDO_BATCH_LIMIT: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_file_writers_may_save() {
        let savers: Vec<_> = ALL.iter().filter(|c| may_save_file(c)).collect();
        assert_eq!(savers, [&SCENE_CREATE, &SCENE_SAVE, &RESOURCE_SET_PROPERTY]);
        assert!(savers.iter().all(|c| !is_read_only(c)));
        assert!(!may_save_file("unknown.command"));
    }
}
