//! Scene parameters: the tree, opening and creating scenes, node edits, signals, batches,
//! instancing, groups, editable children, and live reads of a node; and the persistence
//! verdict of every editor command ([`verdict_of`], re-exported as
//! `godot_mcp_protocol::persistence`).

use godot_mcp_formats::variant::Value;
use serde::{Deserialize, Serialize};

use super::{default_page_limit, value_json};

/// `node.instance`: a PackedScene instanced under `parent` (`name: None`: the scene's
/// root name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeInstance {
    pub parent: String,
    pub scene: String,
    #[serde(default)]
    pub name: Option<String>,
}

/// `node.group`: add `node` to (`add`) or remove it from a persistent group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGroup {
    pub node: String,
    pub group: String,
    pub add: bool,
}

/// `node.editable_children`: an instanced sub-scene's editable children.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeEditableChildren {
    pub node: String,
    pub editable: bool,
}

/// `node.connections`: a node's live signal connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConnections {
    pub node: String,
}

/// `node.properties`: a page of a live node's properties with values, or (`list`) its
/// property list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeProperties {
    pub node: String,
    #[serde(default)]
    pub list: bool,
    #[serde(default)]
    pub offset: usize,
    /// `None`: [`DEFAULT_PROPERTY_PAGE`](super::DEFAULT_PROPERTY_PAGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// `scene.tree`: a page of the edited scene's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneTree {
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "default_page_limit")]
    pub limit: usize,
}

/// `scene.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneOpen {
    pub path: String,
}

/// `scene.create`: a new `.tscn` with a root of `root_type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneCreate {
    pub path: String,
    pub root_type: String,
    #[serde(default)]
    pub root_name: Option<String>,
}

/// `node.create`: a node of `node_type` (`type` on the wire) named `name` under `parent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeCreate {
    pub parent: String,
    #[serde(rename = "type")]
    pub node_type: String,
    pub name: String,
}

/// `node.rename`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRename {
    pub node: String,
    pub new_name: String,
}

/// `node.move`: reparent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeMove {
    pub node: String,
    pub new_parent: String,
}

/// `node.duplicate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeDuplicate {
    pub node: String,
    #[serde(default)]
    pub new_name: Option<String>,
}

/// `node.get_property`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGetProperty {
    pub node: String,
    pub property: String,
}

/// One property set: `node.set_property`'s parameters, and one entry of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertySet {
    /// Node path relative to the edited scene's root (`.` is the root).
    pub node: String,
    pub property: String,
    #[serde(with = "value_json")]
    pub value: Value,
}

/// `node.persistence`: the verdict `op` would get on `node`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodePersistence {
    pub node: String,
    pub op: String,
}

/// A signal connection: `signal.connect` and `signal.disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    pub from: String,
    pub signal: String,
    pub to: String,
    pub method: String,
}

/// `signal.connect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignalConnect(pub Connection);

/// `signal.disconnect`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignalDisconnect(pub Connection);

/// `scene.batch.apply`: many property sets, applied as `undo` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchApply {
    pub sets: Vec<PropertySet>,
    /// Decided by the server (its batch rule,
    /// [`UNDO_BATCH_LIMIT`](super::UNDO_BATCH_LIMIT)); the add-on executes it and never
    /// decides again.
    pub undo: UndoPolicy,
}

/// How a batch is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UndoPolicy {
    /// All sets in one `EditorUndoRedoManager` action.
    OneAction,
    /// Set directly; not on the undo history.
    Bypass,
}

impl UndoPolicy {
    pub fn undoable(self) -> bool {
        self == UndoPolicy::OneAction
    }
}

/// `node.set_property`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeSetProperty(pub PropertySet);

// The persistence verdict of an editor command: is its effect on disk, why, and what to
// do; the one rule the add-on's replies and the server's dry runs share
// (`godot_mcp_protocol::persistence` re-exports it and says more).

/// What a result says about persistence and undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub persisted: bool,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    pub undoable: bool,
}

/// What a command does, as far as persistence goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// An undo-tracked edit of the edited scene's nodes (`node.*`, `script.*`,
    /// `signal.*`, `scene.batch.apply`, `scene.steps`, `editor.undo`, `editor.redo`). `owned_by_scene`:
    /// the node is the edited scene's root or owned by it. A node inside an instanced
    /// sub-scene is not: an edit to it lives only in this editor session unless it is an
    /// override Godot saves, so the result says so instead of promising.
    SceneEdit {
        owned_by_scene: bool,
    },
    /// `resource.set_property`, `theme.set_item`: set under the undo history, then the
    /// resource file saved.
    ResourceSave,
    /// `theme.set_item` with no scene open: Godot gives each open scene an undo history,
    /// so the edit is set and saved outside any; the journal's pre-state of the file is
    /// what undoes it.
    ResourceWrite,
    SceneOpen,
    SceneCreate,
    SceneSave,
    SceneClose,
    SceneReload,
}

/// The verdict for `effect`. `scene_path` is the edited scene's file, empty for a scene
/// never saved (it matters only to a scene edit).
pub fn verdict_of(effect: Effect, scene_path: &str) -> Verdict {
    let on_disk = |reason: &str, undoable: bool| Verdict {
        persisted: true,
        reason: reason.into(),
        hint: None,
        undoable,
    };
    match effect {
        Effect::SceneEdit {
            owned_by_scene: false,
        } => Verdict {
            persisted: false,
            reason: "the node belongs to an instanced sub-scene, not to the edited scene".into(),
            hint: Some(
                "Open the sub-scene itself (open_scene) to change it for every instance, or make \
                 its children editable in the editor."
                    .into(),
            ),
            undoable: true,
        },
        Effect::SceneEdit { .. } if scene_path.is_empty() => Verdict {
            persisted: false,
            reason: "the edited scene has never been saved to a file".into(),
            hint: Some("Save it under a res:// path in the editor first.".into()),
            undoable: true,
        },
        Effect::SceneEdit { .. } => Verdict {
            persisted: false,
            reason: "the edit is in the scene open in the editor, not on disk".into(),
            hint: Some("Save the scene (save_scene) to persist it.".into()),
            undoable: true,
        },
        Effect::ResourceSave => on_disk("the editor saves the resource file", true),
        Effect::ResourceWrite => on_disk(
            "the editor saves the resource file; with no scene open no undo history holds \
             the edit",
            false,
        ),
        Effect::SceneOpen => on_disk("opening changes no file", false),
        Effect::SceneCreate => on_disk("the editor saves the new scene file", false),
        Effect::SceneSave => on_disk("the editor writes the scene file", false),
        Effect::SceneClose | Effect::SceneReload => {
            on_disk("nothing is written; unsaved edits are discarded", false)
        }
    }
}

/// The verdict for editing a node (see [`Effect::SceneEdit`]).
pub fn verdict(owned_by_scene: bool, scene_path: &str) -> Verdict {
    verdict_of(Effect::SceneEdit { owned_by_scene }, scene_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_node_in_a_saved_scene_needs_a_save() {
        let v = verdict(true, "res://main.tscn");
        assert!(!v.persisted && v.undoable);
        assert!(v.hint.unwrap().contains("save_scene"));
        assert!(
            verdict(false, "res://main.tscn")
                .reason
                .contains("sub-scene")
        );
        assert!(verdict(true, "").reason.contains("never been saved"));
    }

    #[test]
    fn every_mutating_command_has_one_verdict() {
        use crate::commands::{self as c, BridgeCommand, Kind, TABLE};
        // Node commands are judged on their node; every other command that changes the
        // project has a scene-level verdict, and a file-writing one says it is on disk.
        for (cmd, kind) in TABLE {
            if let Kind::Scene(e) = kind {
                let v = verdict_of(*e, "res://main.tscn");
                assert_eq!(
                    v.persisted,
                    kind.may_save_file() || !matches!(e, Effect::SceneEdit { .. }),
                    "{cmd}"
                );
            }
        }
        assert_eq!(c::NodeGetProperty::KIND.scene_effect(), None);
        // Undo and redo edit the scene like any node edit: same text, same hint.
        assert_eq!(
            verdict_of(c::Undo::KIND.scene_effect().unwrap(), "res://a.tscn"),
            verdict(true, "res://a.tscn")
        );
        assert_eq!(
            verdict_of(c::BatchApply::KIND.scene_effect().unwrap(), ""),
            verdict(true, "")
        );
    }
}
