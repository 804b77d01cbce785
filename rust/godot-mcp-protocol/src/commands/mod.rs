//! The command names of the bridge and what the server must know about each before it
//! sends one: whether it changes the editor, and whether it may write a file (a lost
//! answer to such a command quarantines its transaction).
//!
//! Each command's parameters are one struct below (the authoring commands' in
//! commands_authoring.rs, re-exported here); results are documented in
//! `docs/editor-bridge.md`.

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
/// `{action, steps: [{op: create|set|group|tile_cells|grid_cells|fit_shape|bake_navigation,
/// …}]}` → `{nodes: [created paths], steps, undoable, persisted…}`: ordered steps as ONE
/// undo action, all validated before the first change.
pub const STEPS: &str = "scene.steps";
/// `{node, offset?, limit?}` → the used cells of a TileMapLayer or GridMap, paged.
pub const CELLS_GET: &str = "node.cells";
/// `{path}` → a MeshLibrary's items (id, name, mesh class).
pub const MESH_LIBRARY_ITEMS: &str = "mesh_library.items";
pub const UNDO: &str = "editor.undo";
pub const REDO: &str = "editor.redo";
pub const HISTORY: &str = "editor.history";
/// `{view: "2d"|"3d"|"window", max_edge?, max_bytes, node?}` → `{captured: true,
/// png_base64, width, height, view, scale, canvas_transform?, crop?}`, or `{captured: false,
/// reason, …}` when there is nothing to read (no renderer, a view not on screen yet, a PNG
/// above `max_bytes`, a node outside the view): a read, so not an error reply.
pub const EDITOR_SCREENSHOT: &str = "editor.screenshot";
/// `{}` → `{monitors: {fps, process_time_ms, …}}`: the editor's performance monitors now.
pub const EDITOR_MONITORS: &str = "editor.monitors";
/// `{}` → `{started, scanning, scans_finished}`: starts `EditorFileSystem.scan()` (which reimports what
/// changed on disk); `filesystem.status` tells when it is done.
pub const FILESYSTEM_SCAN: &str = "filesystem.scan";
/// `{}` → `{scanning, progress, scans_finished}`; a scan started at `scans_finished = n`
/// is applied (reimports included) once not scanning and `scans_finished > n`.
pub const FILESYSTEM_STATUS: &str = "filesystem.status";
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
pub const ALL: [&str; 36] = [
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
    STEPS,
    CELLS_GET,
    MESH_LIBRARY_ITEMS,
    UNDO,
    REDO,
    HISTORY,
    EDITOR_SCREENSHOT,
    EDITOR_MONITORS,
    FILESYSTEM_SCAN,
    FILESYSTEM_STATUS,
    AUDIO_ADD_PLAYER,
    SHADER_ASSIGN_MATERIAL,
    SHADER_UNIFORMS,
    SHADER_SET_UNIFORM,
];

/// The authoring commands (scene editing, the rest; animation; theme and UI). Parameters
/// are the structs of commands_authoring.rs; results are in `docs/editor-bridge.md`; the
/// add-on's checks in `godot_mcp_editor_core::authoring`.
/// `{parent, scene, name?}`: instance a PackedScene under `parent` (undo action).
pub const NODE_INSTANCE: &str = "node.instance";
/// `{node, group, add}`: add to (or remove from) a persistent group (undo action).
pub const NODE_GROUP: &str = "node.group";
/// `{node, editable}`: an instanced sub-scene's editable children (undo action).
pub const NODE_EDITABLE_CHILDREN: &str = "node.editable_children";
/// `{nodes}`: the editor's selection (not project state; no undo action).
pub const EDITOR_SELECT: &str = "editor.select";
/// `{}` → `{scene, nodes}`: the editor's selection.
pub const EDITOR_SELECTION: &str = "editor.selection";
/// `{}`: save every open scene that has a file.
pub const SCENE_SAVE_ALL: &str = "scene.save_all";
/// `{node}` → outgoing and incoming signal connections, persistent ones marked.
pub const NODE_CONNECTIONS: &str = "node.connections";
/// `{node, list, offset, limit}` → stored/editor properties with values, or (`list`) the
/// property list with types, hints, hint strings and usage.
pub const NODE_PROPERTIES: &str = "node.properties";
/// `{player, library, name, length, loop_mode}`: a new animation (undo action).
pub const ANIMATION_ADD: &str = "animation.add";
/// `{player, animation}`: remove an animation (undo action).
pub const ANIMATION_REMOVE: &str = "animation.remove";
/// `{player, animation, track_type, path}` → `{track}`: a new track (undo action).
pub const ANIMATION_TRACK_ADD: &str = "animation.track_add";
/// `{player, animation, track}`: remove a track and its keys (undo action).
pub const ANIMATION_TRACK_REMOVE: &str = "animation.track_remove";
/// `{player, animation, track, time, value, transition}`: a new key (undo action).
pub const ANIMATION_KEY_INSERT: &str = "animation.key_insert";
/// `{player, animation, track, time}`: remove the key at `time` (undo action).
pub const ANIMATION_KEY_REMOVE: &str = "animation.key_remove";
/// `{player, animation}` → the live animation: length, loop mode, tracks and keys.
pub const ANIMATION_GET: &str = "animation.get";
/// `{tree, parent, graph, name, node_type, animation?, position}`: a node in an
/// AnimationTree's state machine or blend tree (`parent`: the nested graph's path, "" the
/// root; a missing root is created); undo action.
pub const ANIMATION_TREE_ADD_NODE: &str = "animation_tree.add_node";
/// `{tree, state_machine, from, to, switch_mode, advance_mode, advance_condition?,
/// xfade_time}`: a state machine transition (undo action).
pub const ANIMATION_TREE_CONNECT: &str = "animation_tree.connect";
/// `{tree, blend_tree, to, port, from}`: `from`'s output into `to`'s input `port` in a
/// blend tree (an occupied port is refused; undo action).
pub const ANIMATION_TREE_BLEND_CONNECT: &str = "animation_tree.blend_connect";
/// `{path, theme_type, kind, name, value}`: a Theme .tres item, set under the edited
/// scene's undo history, then the file saved (its undo saves it again).
pub const THEME_SET_ITEM: &str = "theme.set_item";
/// `{node, kind, name, value}`: a Control's theme override (`null` removes it; undo action).
pub const CONTROL_THEME_OVERRIDE: &str = "control.theme_override";
/// `{node, preset}`: anchors and offsets of a layout preset (undo action).
pub const CONTROL_ANCHORS_PRESET: &str = "control.anchors_preset";
/// `{parent, type, name, separation?, columns?, margin?}`: a new Container (undo action).
pub const CONTROL_ADD_CONTAINER: &str = "control.add_container";

/// Every authoring command, in documentation order.
pub const AUTHORING: [&str; 22] = [
    NODE_INSTANCE,
    NODE_GROUP,
    NODE_EDITABLE_CHILDREN,
    EDITOR_SELECT,
    EDITOR_SELECTION,
    SCENE_SAVE_ALL,
    NODE_CONNECTIONS,
    NODE_PROPERTIES,
    ANIMATION_ADD,
    ANIMATION_REMOVE,
    ANIMATION_TRACK_ADD,
    ANIMATION_TRACK_REMOVE,
    ANIMATION_KEY_INSERT,
    ANIMATION_KEY_REMOVE,
    ANIMATION_GET,
    ANIMATION_TREE_ADD_NODE,
    ANIMATION_TREE_CONNECT,
    ANIMATION_TREE_BLEND_CONNECT,
    THEME_SET_ITEM,
    CONTROL_THEME_OVERRIDE,
    CONTROL_ANCHORS_PRESET,
    CONTROL_ADD_CONTAINER,
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
            | CELLS_GET
            | MESH_LIBRARY_ITEMS
            | EDITOR_SELECTION
            | NODE_CONNECTIONS
            | NODE_PROPERTIES
            | ANIMATION_GET
            | EDITOR_MONITORS
            | FILESYSTEM_STATUS
            | SHADER_UNIFORMS
    )
}

/// Whether the command may write a file in the project: a lost answer to it leaves the
/// disk in an unknown state, so its transaction is quarantined (writes blocked).
pub fn may_save_file(cmd: &str) -> bool {
    matches!(
        cmd,
        SCENE_SAVE | SCENE_CREATE | RESOURCE_SET_PROPERTY | SCENE_SAVE_ALL | THEME_SET_ITEM
    )
}

/// Batch sets above this many nodes bypass the undo stack (`undoable: false`); the
/// server applies the rule and sends its [`UndoPolicy`].
pub const UNDO_BATCH_LIMIT: usize = 20;

// ---------------------------------------------------------------------------------
// Parameters: one struct per command, the one definition both ends use. The server
// serializes them ([`BridgeCommand::params`]); the add-on deserializes them and adds the
// checks serde cannot make (`res://` paths, node names, step references, ranges).
// ---------------------------------------------------------------------------------

use godot_mcp_formats::variant::Value;
use serde::{Deserialize, Serialize};

/// A bridge command's parameters, tied to the command's name.
pub trait BridgeCommand: Serialize {
    /// The command name sent as the request's `cmd`.
    const METHOD: &'static str;

    /// The request's `params`: these parameters as JSON.
    fn params(&self) -> serde_json::Value {
        // Plain structs of strings, numbers and values: serialization cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// A Godot value travels in its JSON form (`Value::to_json` / `Value::from_json`).
pub mod value_json {
    use godot_mcp_formats::variant::Value;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        v.to_json().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let json = serde_json::Value::deserialize(d)?;
        Value::from_json(&json).map_err(|e| D::Error::custom(format!("value: {e}")))
    }
}

macro_rules! bridge_command {
    ($($ty:ident => $method:ident),* $(,)?) => {
        $(impl BridgeCommand for $ty {
            const METHOD: &'static str = $method;
        })*
    };
}

macro_rules! no_params {
    ($($(#[$doc:meta])* $ty:ident => $method:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $ty {}
            bridge_command!($ty => $method);
        )*
    };
}

no_params! {
    Ping => PING,
    EditorState => EDITOR_STATE,
    Undo => UNDO,
    Redo => REDO,
    History => HISTORY,
    EditorMonitors => EDITOR_MONITORS,
    FilesystemScan => FILESYSTEM_SCAN,
    FilesystemStatus => FILESYSTEM_STATUS,
}

/// The default page of a tree or cell read.
pub const DEFAULT_PAGE_LIMIT: usize = 1000;

fn default_page_limit() -> usize {
    DEFAULT_PAGE_LIMIT
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

macro_rules! opt_path {
    ($($(#[$doc:meta])* $ty:ident => $method:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $ty {
                /// `None`: the edited scene.
                #[serde(default)]
                pub path: Option<String>,
            }
            bridge_command!($ty => $method);

            impl From<Option<String>> for $ty {
                fn from(path: Option<String>) -> Self {
                    Self { path }
                }
            }
        )*
    };
}

opt_path! {
    /// `scene.save`.
    SceneSave => SCENE_SAVE,
    /// `scene.close`.
    SceneClose => SCENE_CLOSE,
    /// `scene.reload`.
    SceneReload => SCENE_RELOAD,
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

macro_rules! node_only {
    ($($(#[$doc:meta])* $ty:ident => $method:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $ty {
                /// A path from the edited scene's root (`.` is the root).
                pub node: String,
            }
            bridge_command!($ty => $method);
        )*
    };
}

node_only! {
    /// `node.delete`.
    NodeDelete => NODE_DELETE,
    /// `script.detach`.
    ScriptDetach => SCRIPT_DETACH,
    /// `shader.uniforms`.
    ShaderUniforms => SHADER_UNIFORMS,
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

/// `script.attach`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptAttach {
    pub node: String,
    pub script: String,
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

/// `resource.set_property`: a `.tres` property, set and saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSetProperty {
    pub path: String,
    pub property: String,
    #[serde(with = "value_json")]
    pub value: Value,
}

/// `scene.batch.apply`: many property sets, applied as `undo` says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchApply {
    pub sets: Vec<PropertySet>,
    /// Decided by the server (its batch rule, [`UNDO_BATCH_LIMIT`]); the add-on executes
    /// it and never decides again.
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

// The cells and terrains below are also the family tools' arguments (one type each,
// hence the schema; their doc comments are the agent's descriptions).

/// One cell: source -1 erases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TileCell {
    pub coords: [i32; 2],
    /// TileSet source id.
    pub source: i32,
    /// Atlas coords of the tile (default [0,0]).
    #[serde(default)]
    pub atlas: [i32; 2],
    /// Alternative tile (default 0).
    #[serde(default)]
    pub alternative: i32,
}

/// One GridMap cell: item -1 erases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GridCell {
    pub coords: [i32; 3],
    /// MeshLibrary item id.
    pub item: i32,
    /// Orthogonal orientation index 0-23.
    #[serde(default)]
    pub orientation: i32,
}

/// The collision shape `fit_shape` sizes to a Sprite2D's rect or a mesh's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FitKind {
    Rectangle,
    Circle,
    Capsule,
    Box,
    Sphere,
}

// One terrain of a terrain set (no doc comment: the agent's schema has no description).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Terrain {
    pub name: String,
    /// [r,g,b,a] 0-1.
    pub color: [f64; 4],
}

/// One step of `scene.steps` as it travels. A node is a path from the edited scene's
/// root, or `"$N"`: the node step N (an earlier `create`) made.
///
/// Also create_nodes' step argument (one type for both, hence the schema): an agent's
/// schema offers the node steps (create, set, group) and skips the family tools' own;
/// the server refuses those in create_nodes ([`Step::is_node_step`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(description = "One step of create_nodes.")
)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// A new node; parent is a path or "$N" (the node step N created).
    Create {
        parent: String,
        /// Godot class, e.g. Sprite2D.
        #[serde(rename = "type")]
        node_type: String,
        name: String,
    },
    /// Set a property (or "resource:sub_property") of a path or "$N".
    Set {
        node: String,
        property: String,
        /// As in set_node_property.
        #[serde(with = "value_json")]
        #[cfg_attr(feature = "schema", schemars(with = "serde_json::Value"))]
        value: Value,
    },
    /// Add a path or "$N" to a group (saved with the scene).
    Group { node: String, group: String },
    #[cfg_attr(feature = "schema", schemars(skip))]
    TileCells { node: String, cells: Vec<TileCell> },
    #[cfg_attr(feature = "schema", schemars(skip))]
    GridCells { node: String, cells: Vec<GridCell> },
    #[cfg_attr(feature = "schema", schemars(skip))]
    FitShape {
        node: String,
        to: String,
        shape: FitKind,
    },
    #[cfg_attr(feature = "schema", schemars(skip))]
    BakeNavigation { node: String },
    #[cfg_attr(feature = "schema", schemars(skip))]
    TilesetAtlas {
        node: String,
        texture: String,
        tile_size: [i32; 2],
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source_id: Option<i32>,
    },
    #[cfg_attr(feature = "schema", schemars(skip))]
    TilesetPhysicsLayer {
        node: String,
        collision_layer: u32,
        collision_mask: u32,
    },
    #[cfg_attr(feature = "schema", schemars(skip))]
    TilesetTerrainSet {
        node: String,
        mode: i32,
        terrains: Vec<Terrain>,
    },
}

impl Step {
    /// Whether this is a node step (create, set, group), the ones create_nodes takes.
    pub fn is_node_step(&self) -> bool {
        matches!(
            self,
            Step::Create { .. } | Step::Set { .. } | Step::Group { .. }
        )
    }
}

/// `scene.steps`: ordered steps as ONE undo action named `action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steps {
    pub action: String,
    pub steps: Vec<Step>,
    /// Check every step, change nothing, answer the verdict (a dry run).
    #[serde(default, skip_serializing_if = "is_false")]
    pub check_only: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `node.cells`: a page of a TileMapLayer's or GridMap's used cells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cells {
    pub node: String,
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "default_page_limit")]
    pub limit: usize,
}

/// `mesh_library.items`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshLibraryItems {
    pub path: String,
}

/// Which part of the editor a screenshot shows (also capture_editor_screenshot's `view`
/// argument, hence the schema; its variants' notes are plain comments so that the
/// schema stays a plain `enum` of names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ScreenshotView {
    // The 2D editor's viewport (the edited scene, no rulers or gizmos).
    #[serde(rename = "2d")]
    TwoD,
    // The first 3D editor viewport.
    #[serde(rename = "3d")]
    ThreeD,
    // The whole editor window.
    #[serde(rename = "window")]
    Window,
}

impl ScreenshotView {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TwoD => "2d",
            Self::ThreeD => "3d",
            Self::Window => "window",
        }
    }
}

/// `editor.screenshot`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditorScreenshot {
    pub view: ScreenshotView,
    /// Downscale (keeping the aspect) so that the longer edge is at most this many pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_edge: Option<u32>,
    /// Refuse a PNG larger than this (it could not travel or be shown).
    pub max_bytes: usize,
    /// 2D only: crop to this node's bounds in the view (a path from the edited scene's root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// `audio.add_player`: an AudioStreamPlayer (2D/3D) with its properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AudioAddPlayer {
    pub parent: String,
    pub name: String,
    #[serde(rename = "type")]
    pub player_type: String,
    #[serde(default)]
    pub stream: Option<String>,
    #[serde(default)]
    pub bus: Option<String>,
    #[serde(default)]
    pub autoplay: bool,
    #[serde(default)]
    pub volume_db: Option<f64>,
}

/// `shader.assign_material`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaderAssignMaterial {
    pub node: String,
    pub shader: String,
}

/// `shader.set_uniform`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaderSetUniform {
    pub node: String,
    pub name: String,
    #[serde(with = "value_json")]
    pub value: Value,
}

/// `node.set_property`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeSetProperty(pub PropertySet);

// The authoring commands' parameters, in a file of their own (this one would pass
// 1,300 lines); declared after the macros above, which they use.
mod animation;
pub use animation::*;

bridge_command! {
    SceneTree => SCENE_TREE,
    SceneOpen => SCENE_OPEN,
    SceneCreate => SCENE_CREATE,
    NodeCreate => NODE_CREATE,
    NodeRename => NODE_RENAME,
    NodeMove => NODE_MOVE,
    NodeDuplicate => NODE_DUPLICATE,
    NodeGetProperty => NODE_GET_PROPERTY,
    NodeSetProperty => NODE_SET_PROPERTY,
    NodePersistence => NODE_PERSISTENCE,
    ScriptAttach => SCRIPT_ATTACH,
    SignalConnect => SIGNAL_CONNECT,
    SignalDisconnect => SIGNAL_DISCONNECT,
    ResourceSetProperty => RESOURCE_SET_PROPERTY,
    BatchApply => BATCH_APPLY,
    Steps => STEPS,
    Cells => CELLS_GET,
    MeshLibraryItems => MESH_LIBRARY_ITEMS,
    EditorScreenshot => EDITOR_SCREENSHOT,
    AudioAddPlayer => AUDIO_ADD_PLAYER,
    ShaderAssignMaterial => SHADER_ASSIGN_MATERIAL,
    ShaderSetUniform => SHADER_SET_UNIFORM,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_file_writers_may_save() {
        let savers: Vec<_> = ALL.iter().filter(|c| may_save_file(c)).collect();
        assert_eq!(savers, [&SCENE_CREATE, &SCENE_SAVE, &RESOURCE_SET_PROPERTY]);
        assert!(savers.iter().all(|c| !is_read_only(c)));
        assert!(!may_save_file("unknown.command"));
        let authoring_savers: Vec<_> = AUTHORING.iter().filter(|c| may_save_file(c)).collect();
        assert_eq!(authoring_savers, [&SCENE_SAVE_ALL, &THEME_SET_ITEM]);
        assert!(AUTHORING.iter().all(|c| !ALL.contains(c)), "one list each");
    }

    /// Each command's parameters survive serialize → deserialize, carry their command's
    /// name, and a field the struct does not know is refused.
    #[test]
    fn every_command_params_round_trip() {
        use serde::de::DeserializeOwned;
        use serde_json::json;

        fn round<T: BridgeCommand + DeserializeOwned + PartialEq + std::fmt::Debug>(
            v: T,
        ) -> &'static str {
            let j = v.params();
            assert_eq!(serde_json::from_value::<T>(j.clone()).unwrap(), v, "{j}");
            let mut extra = j.clone();
            if let Some(m) = extra.as_object_mut() {
                m.insert("extra".into(), json!(1));
                assert!(serde_json::from_value::<T>(extra).is_err(), "{}", T::METHOD);
            }
            T::METHOD
        }
        let s = String::from;
        let v2 = Value::Vector2([1.0, 2.5]);
        let set = PropertySet {
            node: s("A"),
            property: s("position"),
            value: v2.clone(),
        };
        let conn = Connection {
            from: s("B"),
            signal: s("pressed"),
            to: s("."),
            method: s("go"),
        };
        let seen = [
            round(Ping {}),
            round(EditorState {}),
            round(SceneTree {
                offset: 3,
                limit: 10,
            }),
            round(SceneOpen {
                path: s("res://a.tscn"),
            }),
            round(SceneCreate {
                path: s("res://b.tscn"),
                root_type: s("Node2D"),
                root_name: None,
            }),
            round(SceneSave { path: None }),
            round(SceneClose {
                path: Some(s("res://a.tscn")),
            }),
            round(SceneReload { path: None }),
            round(NodeCreate {
                parent: s("."),
                node_type: s("Sprite2D"),
                name: s("S"),
            }),
            round(NodeRename {
                node: s("S"),
                new_name: s("T"),
            }),
            round(NodeMove {
                node: s("S"),
                new_parent: s("A"),
            }),
            round(NodeDuplicate {
                node: s("S"),
                new_name: Some(s("S2")),
            }),
            round(NodeDelete { node: s("S") }),
            round(NodeGetProperty {
                node: s("S"),
                property: s("position"),
            }),
            round(NodeSetProperty(set.clone())),
            round(NodePersistence {
                node: s("S"),
                op: s("set_property"),
            }),
            round(ScriptAttach {
                node: s("S"),
                script: s("res://s.gd"),
            }),
            round(ScriptDetach { node: s("S") }),
            round(SignalConnect(conn.clone())),
            round(SignalDisconnect(conn)),
            round(ResourceSetProperty {
                path: s("res://r.tres"),
                property: s("hp"),
                value: Value::Int(3),
            }),
            round(BatchApply {
                sets: vec![set],
                undo: UndoPolicy::Bypass,
            }),
            round(Steps {
                action: s("MCP: add"),
                steps: vec![
                    Step::Create {
                        parent: s("."),
                        node_type: s("StaticBody2D"),
                        name: s("Body"),
                    },
                    Step::Set {
                        node: s("$0"),
                        property: s("position"),
                        value: v2.clone(),
                    },
                    Step::TileCells {
                        node: s("G"),
                        cells: vec![TileCell {
                            coords: [0, 1],
                            source: 0,
                            atlas: [1, 0],
                            alternative: 0,
                        }],
                    },
                    Step::FitShape {
                        node: s("$0"),
                        to: s("Sprite"),
                        shape: FitKind::Capsule,
                    },
                    Step::TilesetAtlas {
                        node: s("G"),
                        texture: s("res://t.png"),
                        tile_size: [16, 16],
                        source_id: Some(2),
                    },
                    Step::TilesetTerrainSet {
                        node: s("G"),
                        mode: 0,
                        terrains: vec![Terrain {
                            name: s("grass"),
                            color: [0.0, 1.0, 0.0, 1.0],
                        }],
                    },
                ],
                check_only: true,
            }),
            round(Cells {
                node: s("G"),
                offset: 0,
                limit: 5,
            }),
            round(MeshLibraryItems {
                path: s("res://lib.tres"),
            }),
            round(Undo {}),
            round(Redo {}),
            round(History {}),
            round(EditorScreenshot {
                view: ScreenshotView::TwoD,
                max_edge: Some(640),
                max_bytes: 1 << 22,
                node: Some(s("S")),
            }),
            round(EditorMonitors {}),
            round(FilesystemScan {}),
            round(FilesystemStatus {}),
            round(AudioAddPlayer {
                parent: s("."),
                name: s("Music"),
                player_type: s("AudioStreamPlayer"),
                stream: Some(s("res://a.ogg")),
                bus: None,
                autoplay: true,
                volume_db: Some(-3.0),
            }),
            round(ShaderAssignMaterial {
                node: s("S"),
                shader: s("res://s.gdshader"),
            }),
            round(ShaderUniforms { node: s("S") }),
            round(ShaderSetUniform {
                node: s("S"),
                name: s("tint"),
                value: Value::Color([1.0, 0.0, 0.0, 1.0]),
            }),
        ];
        // One params struct for every command, in documentation order.
        assert_eq!(seen, ALL);

        let authoring = [
            round(NodeInstance {
                parent: s("."),
                scene: s("res://p.tscn"),
                name: Some(s("P")),
            }),
            round(NodeGroup {
                node: s("A"),
                group: s("g"),
                add: false,
            }),
            round(NodeEditableChildren {
                node: s("P"),
                editable: true,
            }),
            round(EditorSelect {
                nodes: vec![s("A"), s("B")],
            }),
            round(EditorSelection {}),
            round(SceneSaveAll {}),
            round(NodeConnections { node: s("A") }),
            round(NodeProperties {
                node: s("A"),
                list: true,
                offset: 4,
                limit: Some(20),
            }),
            round(AnimationAdd {
                player: s("AP"),
                library: s("moves"),
                name: s("walk"),
                length: 1.5,
                loop_mode: LoopMode::Pingpong,
            }),
            round(AnimationRemove {
                player: s("AP"),
                animation: s("walk"),
            }),
            round(AnimationTrackAdd {
                player: s("AP"),
                animation: s("walk"),
                track_type: TrackType::Rotation3d,
                path: s("Mesh"),
            }),
            round(AnimationTrackRemove {
                player: s("AP"),
                animation: s("walk"),
                track: 2,
            }),
            round(AnimationKeyInsert {
                player: s("AP"),
                animation: s("walk"),
                track: 0,
                time: 0.5,
                value: json!({"$type": "Vector2", "x": 1, "y": 2}),
                transition: 0.5,
            }),
            round(AnimationKeyRemove {
                player: s("AP"),
                animation: s("walk"),
                track: 0,
                time: 0.5,
            }),
            round(AnimationGet {
                player: s("AP"),
                animation: s("walk"),
                max_keys: Some(10),
            }),
            round(AnimationTreeAddNode {
                tree: s("AT"),
                parent: s("Sub"),
                graph: Graph::BlendTree,
                name: s("Blend"),
                node_type: s("AnimationNodeBlend2"),
                animation: None,
                position: [1.0, 2.0],
            }),
            round(AnimationTreeConnect {
                tree: s("AT"),
                state_machine: String::new(),
                from: s("Start"),
                to: s("Idle"),
                switch_mode: s("at_end"),
                advance_mode: s("auto"),
                advance_condition: Some(s("ready")),
                xfade_time: 0.25,
            }),
            round(AnimationTreeBlendConnect {
                tree: s("AT"),
                blend_tree: String::new(),
                to: s("output"),
                port: 0,
                from: s("Blend"),
            }),
            round(ThemeSetItem {
                path: s("res://t.tres"),
                theme_type: s("Button"),
                kind: ThemeKind::Stylebox,
                name: s("normal"),
                value: json!({"bg_color": {"$type": "Color", "r": 1, "g": 0, "b": 0, "a": 1}}),
            }),
            round(ControlThemeOverride {
                node: s("L"),
                kind: ThemeKind::Color,
                name: s("font_color"),
                value: serde_json::Value::Null,
            }),
            round(ControlAnchorsPreset {
                node: s("L"),
                preset: s("full_rect"),
            }),
            round(ControlAddContainer {
                parent: s("."),
                container_type: s("GridContainer"),
                name: s("G"),
                separation: Some(4),
                columns: Some(3),
                margin: None,
            }),
        ];
        // One params struct for every authoring command too, in documentation order.
        assert_eq!(authoring, AUTHORING);
    }

    /// The wire names the add-on reads: `type` for a node class, `op` tags, a value in
    /// its JSON form, optional paths as `null`.
    #[test]
    fn params_keep_their_wire_names() {
        let j = NodeCreate {
            parent: ".".into(),
            node_type: "Node2D".into(),
            name: "N".into(),
        }
        .params();
        assert_eq!(
            j,
            serde_json::json!({"parent": ".", "type": "Node2D", "name": "N"})
        );
        assert_eq!(
            SceneSave { path: None }.params(),
            serde_json::json!({"path": null})
        );
        let j = NodeSetProperty(PropertySet {
            node: "A".into(),
            property: "position".into(),
            value: Value::Vector2([1.0, 2.0]),
        })
        .params();
        assert_eq!(
            j,
            serde_json::json!({"node": "A", "property": "position",
                "value": {"$type": "Vector2", "x": 1.0, "y": 2.0}})
        );
        // Authoring: `type` for a container class, an absent name as `null`, an unset
        // page or key limit left out (the add-on's default applies), enums by name.
        let j = ControlAddContainer {
            parent: ".".into(),
            container_type: "VBoxContainer".into(),
            name: "V".into(),
            separation: None,
            columns: None,
            margin: Some(2),
        }
        .params();
        assert_eq!(
            j,
            serde_json::json!({"parent": ".", "type": "VBoxContainer", "name": "V",
                "separation": null, "columns": null, "margin": 2})
        );
        assert_eq!(
            NodeInstance {
                parent: ".".into(),
                scene: "res://p.tscn".into(),
                name: None
            }
            .params(),
            serde_json::json!({"parent": ".", "scene": "res://p.tscn", "name": null})
        );
        assert_eq!(
            NodeProperties {
                node: "A".into(),
                list: false,
                offset: 0,
                limit: None
            }
            .params(),
            serde_json::json!({"node": "A", "list": false, "offset": 0})
        );
        assert_eq!(
            AnimationGet {
                player: "AP".into(),
                animation: "walk".into(),
                max_keys: None
            }
            .params(),
            serde_json::json!({"player": "AP", "animation": "walk"})
        );
        let j = AnimationTrackAdd {
            player: "AP".into(),
            animation: "walk".into(),
            track_type: TrackType::Position3d,
            path: "Mesh".into(),
        }
        .params();
        assert_eq!(j["track_type"], "position_3d");
        assert_eq!(
            AnimationAdd {
                player: "AP".into(),
                library: String::new(),
                name: "walk".into(),
                length: 1.0,
                loop_mode: LoopMode::default(),
            }
            .params()["loop_mode"],
            "none"
        );
        assert_eq!(SceneSaveAll {}.params(), serde_json::json!({}));
        let shot = EditorScreenshot {
            view: ScreenshotView::ThreeD,
            max_edge: None,
            max_bytes: 10,
            node: None,
        }
        .params();
        assert_eq!(shot, serde_json::json!({"view": "3d", "max_bytes": 10}));
    }
}
