//! Scene parameters: the tree, opening and creating scenes, node edits, signals, batches,
//! instancing, groups, editable children, and live reads of a node.

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
