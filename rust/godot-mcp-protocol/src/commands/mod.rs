//! The bridge's commands, each one type: its parameters are one struct, in the file of
//! its domain (`scene.rs`, `animation.rs`, `tilemap.rs`, `ui.rs`, …, all re-exported
//! here), and one row of the table at the end of this file (`bridge_commands!`) ties it
//! to its name and what the server must know before it sends one ([`Kind`]: whether it
//! changes the editor, and whether it may write a file: a lost answer to such a command
//! quarantines its transaction). The table implements [`BridgeCommand`] per struct and
//! generates [`Request`] (one variant per command, decoded once) and [`TABLE`]. Results
//! are documented in `docs/editor-bridge.md`.

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
/// `{paths}` → `{updated, scan_started}`: files the server wrote, told to the editor's
/// file system (`EditorFileSystem.update_file`) before the server answers, so their
/// types, uids and `class_name`s are registered; a file in a folder the editor has not
/// seen yet starts a scan instead (`scan_started`, `filesystem.status` tells when done).
pub const FILESYSTEM_UPDATE: &str = "filesystem.update";
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

// The authoring commands (scene editing, the rest; animation; theme and UI). Parameters
// are in the domain files; results are in `docs/editor-bridge.md`; the add-on's checks
// in `godot_mcp_editor_core::authoring`.

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
/// `{player, library, name, length, loop_mode, step?}`: a new animation (undo action).
pub const ANIMATION_ADD: &str = "animation.add";
/// `{player, animation}`: remove an animation (undo action).
pub const ANIMATION_REMOVE: &str = "animation.remove";
/// `{player, animation, track_type, path, update_mode?, interpolation?}` → `{track}`: a
/// new track (undo action).
pub const ANIMATION_TRACK_ADD: &str = "animation.track_add";
/// `{player, animation, track}`: remove a track and its keys (undo action).
pub const ANIMATION_TRACK_REMOVE: &str = "animation.track_remove";
/// `{player, animation, track, time, value, transition}`: a new key (undo action).
pub const ANIMATION_KEY_INSERT: &str = "animation.key_insert";
/// `{player, animation, track, time}`: remove the key at `time` (undo action).
pub const ANIMATION_KEY_REMOVE: &str = "animation.key_remove";
/// `{player, animation}` → the live animation: length, loop mode, step, tracks (update
/// mode, interpolation) and keys.
pub const ANIMATION_GET: &str = "animation.get";
/// `{player, animation, length?, step?, loop_mode?, tracks?: [{track, update_mode?,
/// interpolation?}]}`: an animation's settings (undo action).
pub const ANIMATION_SET: &str = "animation.set";
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

/// Batch sets above this many nodes bypass the undo stack (`undoable: false`); the
/// server applies the rule and sends its [`UndoPolicy`].
pub const UNDO_BATCH_LIMIT: usize = 20;

// ---------------------------------------------------------------------------------
// Parameters: one struct per command, the one definition both ends use. The server
// serializes them ([`BridgeCommand::params`]); the add-on deserializes them and adds the
// checks serde cannot make (`res://` paths, node names, step references, ranges).
// ---------------------------------------------------------------------------------

use godot_mcp_formats::variant::Value;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{BridgeError, ErrorCode, ErrorEffect};

/// What a command does, as far as the server's safety and the persistence verdict go:
/// one fact per command, stated once in the table at the end of this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only reads.
    Read,
    /// An undo-tracked edit judged on the node it edits (its dry run asks the add-on's
    /// `node.persistence` probe, which answers with [`verdict_of`]).
    NodeEdit,
    /// A scene-level command, judged without a node by its [`Effect`].
    Scene(Effect),
    /// Changes the editor, not the project (the selection, its view of the disk): no
    /// persistence verdict.
    Editor,
}

impl Kind {
    /// Whether the command only reads.
    pub const fn is_read_only(self) -> bool {
        matches!(self, Kind::Read)
    }

    /// The effect of a scene-level command; `None` for a read and for a command whose
    /// verdict depends on the node it edits.
    pub const fn scene_effect(self) -> Option<Effect> {
        match self {
            Kind::Scene(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the command may write a file in the project: a lost answer to it leaves
    /// the disk in an unknown state, so its transaction is quarantined (writes blocked).
    /// The effects that write: a scene saved or created, a resource saved.
    pub const fn may_save_file(self) -> bool {
        matches!(
            self,
            Kind::Scene(Effect::SceneSave | Effect::SceneCreate | Effect::ResourceSave)
        )
    }
}

/// A bridge command: its parameters (this struct), tied to its name and its facts. Each
/// command implements it once, in the table at the end of this file.
pub trait BridgeCommand: Serialize + DeserializeOwned {
    /// The command name sent as the request's `cmd`.
    const METHOD: &'static str;
    /// What it does ([`Kind`]).
    const KIND: Kind;
    /// Whether it may write a file ([`Kind::may_save_file`]).
    const MAY_SAVE_FILE: bool = Self::KIND.may_save_file();

    /// The request's `params`: these parameters as JSON.
    fn params(&self) -> serde_json::Value {
        // Plain structs of strings, numbers and values: serialization cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// `p` as the parameters of `T` (`null` reads as `{}`); a mismatch is `invalid_params`
/// (`effect: unchanged`: a request that does not decode never ran), its message
/// prefixed with the command's name.
fn decode_params<T: BridgeCommand>(p: &serde_json::Value) -> Result<T, BridgeError> {
    let r = if p.is_null() {
        T::deserialize(&serde_json::Value::Object(Default::default()))
    } else {
        T::deserialize(p)
    };
    r.map_err(|e| {
        BridgeError::new(ErrorCode::InvalidParams, format!("{}: {e}", T::METHOD))
            .with_effect(ErrorEffect::Unchanged)
    })
}

/// The table: every bridge command, once, with its name and [`Kind`], in documentation
/// order. It implements [`BridgeCommand`] for each struct, and generates [`Request`]
/// (one variant per command, decoded once by [`Request::decode`]) and [`TABLE`] (the
/// lookup by name).
macro_rules! bridge_commands {
    ($($ty:ident => $method:ident, $kind:expr;)*) => {
        $(impl BridgeCommand for $ty {
            const METHOD: &'static str = $method;
            const KIND: Kind = $kind;
        })*

        /// Every command's name and kind, in documentation order.
        pub const TABLE: &[(&str, Kind)] = &[$(($method, $kind)),*];

        /// One bridge request: the command, its parameters decoded into its struct.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $($ty($ty),)*
        }

        impl Request {
            /// The request `cmd` with `params`, decoded once: `unknown_command` for a name
            /// not in the table, `invalid_params` for parameters that do not fit (both
            /// `effect: unchanged`).
            pub fn decode(cmd: &str, params: &serde_json::Value) -> Result<Self, BridgeError> {
                match cmd {
                    $($method => decode_params::<$ty>(params).map(Request::$ty),)*
                    other => Err(BridgeError::new(
                        ErrorCode::UnknownCommand,
                        format!("unknown command {other:?}"),
                    )
                    .with_effect(ErrorEffect::Unchanged)),
                }
            }

            /// The command's name.
            pub fn method(&self) -> &'static str {
                match self {
                    $(Request::$ty(_) => $method,)*
                }
            }
        }
    };
}

/// The kind of the command named `cmd` (`None`: not a bridge command).
pub fn kind_of(cmd: &str) -> Option<Kind> {
    TABLE.iter().find(|(m, _)| *m == cmd).map(|(_, k)| *k)
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

macro_rules! no_params {
    ($($(#[$doc:meta])* $ty:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $ty {}
        )*
    };
}

no_params! {
    Ping,
    EditorState,
    Redo,
    EditorMonitors,
    FilesystemScan,
    FilesystemStatus,
}

/// `filesystem.update`: `res://` paths of files the server wrote (or removed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesystemUpdate {
    pub paths: Vec<String>,
}

/// `editor.undo`: undo the edited scene's current action. With `action`, only when
/// the current action is the one of that name (an agent's change undoing its own
/// action, never someone else's); otherwise refused, nothing undone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Undo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Only on this scene: refused (`scene_mismatch`, nothing done) when another one
    /// is edited. An agent's change names the scene its edits were staged on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// Only while the edited scene's root is this instance (needs `scene`): a scene
    /// closed and opened again has a new root, and a new undo history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<i64>,
}

/// `editor.history`: the edited scene's undo history (`scene`, `root_id`, `actions`,
/// `current_action`…). With `scene`, only when that scene is the edited one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct History {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
}

/// The default page of a tree or cell read.
pub const DEFAULT_PAGE_LIMIT: usize = 1000;

fn default_page_limit() -> usize {
    DEFAULT_PAGE_LIMIT
}

macro_rules! opt_path {
    ($($(#[$doc:meta])* $ty:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $ty {
                /// `None`: the edited scene.
                #[serde(default)]
                pub path: Option<String>,
            }

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
    SceneSave,
    /// `scene.close`.
    SceneClose,
    /// `scene.reload`.
    SceneReload,
}

macro_rules! node_only {
    ($($(#[$doc:meta])* $ty:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $ty {
                /// A path from the edited scene's root (`.` is the root).
                pub node: String,
            }
        )*
    };
}

node_only! {
    /// `node.delete`.
    NodeDelete,
    /// `script.detach`.
    ScriptDetach,
    /// `shader.uniforms`.
    ShaderUniforms,
}

// The cells and terrains below are also the family tools' arguments (one type each,
// hence the schema; their doc comments are the agent's descriptions).

// One terrain of a terrain set (no doc comment: the agent's schema has no description).

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
    schemars(description = "A node is a path or \"$N\": the node step N made.")
)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// A new node under parent ("." is the scene root).
    Create {
        parent: String,
        /// Godot class, e.g. Sprite2D.
        #[serde(rename = "type")]
        node_type: String,
        name: String,
    },
    /// Set a property (or "resource:sub_property") of a node.
    Set {
        node: String,
        property: String,
        /// Read by type: [10, 20] (Vector2), "#ff0000" (Color), Godot's text
        /// ("Rect2(0, 0, 16, 16)"), enum names, a res:// path, or new:
        /// {"$type": "Resource", "class": "CircleShape2D", "properties": {…}}.
        #[serde(with = "value_json")]
        #[cfg_attr(feature = "schema", schemars(with = "serde_json::Value"))]
        value: Value,
    },
    /// Add a node to a group (saved with the scene).
    Group { node: String, group: String },
    /// Connect a node's signal to a method of `to` (saved with the scene).
    Connect {
        node: String,
        signal: String,
        to: String,
        method: String,
    },
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
    /// A tile's collision on a physics layer becomes one polygon, in Godot's tile
    /// coordinates ((0, 0) the tile's centre); empty: the whole tile.
    #[cfg_attr(feature = "schema", schemars(skip))]
    TileCollision {
        node: String,
        source_id: i32,
        atlas: [i32; 2],
        physics_layer: i32,
        polygon: Vec<[f64; 2]>,
    },
}

impl Step {
    /// Whether this is a node step (create, set, group), the ones create_nodes takes.
    /// The step with every node it names (`parent`, `node`, `to`) of a node step
    /// replaced by `f` of it; other steps unchanged.
    pub fn map_nodes(self, mut f: impl FnMut(&str) -> String) -> Step {
        match self {
            Step::Create {
                parent,
                node_type,
                name,
            } => Step::Create {
                parent: f(&parent),
                node_type,
                name,
            },
            Step::Set {
                node,
                property,
                value,
            } => Step::Set {
                node: f(&node),
                property,
                value,
            },
            Step::Group { node, group } => Step::Group {
                node: f(&node),
                group,
            },
            Step::Connect {
                node,
                signal,
                to,
                method,
            } => Step::Connect {
                node: f(&node),
                signal,
                to: f(&to),
                method,
            },
            other => other,
        }
    }

    pub fn is_node_step(&self) -> bool {
        matches!(
            self,
            Step::Create { .. } | Step::Set { .. } | Step::Group { .. } | Step::Connect { .. }
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
    /// Only on this scene: refused (`scene_mismatch`, nothing done) when another one
    /// is edited (see [`Undo::scene`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// Only while the edited scene's root is this instance (needs `scene`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<i64>,
    /// A dry run (`check_only`) of steps meant for a scene that is not the edited one
    /// yet: checked on this scene instead, made apart from the editor's and freed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_in: Option<CheckIn>,
}

/// Where a dry run checks steps for a scene the call would open or create first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum CheckIn {
    /// The scene file (res://), loaded and instanced.
    File(String),
    /// A new scene's root: a node of `node_type` named `name`.
    NewRoot { node_type: String, name: String },
}

fn is_false(b: &bool) -> bool {
    !*b
}

// The parameters, one file per domain; declared after the macros above, which they use.
mod animation;
mod audio;
mod editor;
mod physics;
mod resource;
mod scene;
mod script;
mod shader;
mod tilemap;
mod ui;
pub use animation::*;
pub use audio::*;
pub use editor::*;
pub use physics::*;
pub use resource::*;
pub use scene::*;
pub use script::*;
pub use shader::*;
pub use tilemap::*;
pub use ui::*;

use Kind::{Editor, NodeEdit, Read, Scene};
const EDIT: Kind = Scene(Effect::SceneEdit {
    owned_by_scene: true,
});

bridge_commands! {
    Ping => PING, Read;
    EditorState => EDITOR_STATE, Read;
    SceneTree => SCENE_TREE, Read;
    SceneOpen => SCENE_OPEN, Scene(Effect::SceneOpen);
    SceneCreate => SCENE_CREATE, Scene(Effect::SceneCreate);
    SceneSave => SCENE_SAVE, Scene(Effect::SceneSave);
    SceneClose => SCENE_CLOSE, Scene(Effect::SceneClose);
    SceneReload => SCENE_RELOAD, Scene(Effect::SceneReload);
    NodeCreate => NODE_CREATE, NodeEdit;
    NodeRename => NODE_RENAME, NodeEdit;
    NodeMove => NODE_MOVE, NodeEdit;
    NodeDuplicate => NODE_DUPLICATE, NodeEdit;
    NodeDelete => NODE_DELETE, NodeEdit;
    NodeGetProperty => NODE_GET_PROPERTY, Read;
    NodeSetProperty => NODE_SET_PROPERTY, NodeEdit;
    NodePersistence => NODE_PERSISTENCE, Read;
    ScriptAttach => SCRIPT_ATTACH, NodeEdit;
    ScriptDetach => SCRIPT_DETACH, NodeEdit;
    SignalConnect => SIGNAL_CONNECT, NodeEdit;
    SignalDisconnect => SIGNAL_DISCONNECT, NodeEdit;
    ResourceSetProperty => RESOURCE_SET_PROPERTY, Scene(Effect::ResourceSave);
    BatchApply => BATCH_APPLY, EDIT;
    Steps => STEPS, EDIT;
    Cells => CELLS_GET, Read;
    MeshLibraryItems => MESH_LIBRARY_ITEMS, Read;
    Undo => UNDO, EDIT;
    Redo => REDO, EDIT;
    History => HISTORY, Read;
    EditorScreenshot => EDITOR_SCREENSHOT, Read;
    EditorMonitors => EDITOR_MONITORS, Read;
    FilesystemScan => FILESYSTEM_SCAN, Editor;
    FilesystemStatus => FILESYSTEM_STATUS, Read;
    FilesystemUpdate => FILESYSTEM_UPDATE, Editor;
    AudioAddPlayer => AUDIO_ADD_PLAYER, NodeEdit;
    ShaderAssignMaterial => SHADER_ASSIGN_MATERIAL, NodeEdit;
    ShaderUniforms => SHADER_UNIFORMS, Read;
    ShaderSetUniform => SHADER_SET_UNIFORM, NodeEdit;
    NodeInstance => NODE_INSTANCE, NodeEdit;
    NodeGroup => NODE_GROUP, NodeEdit;
    NodeEditableChildren => NODE_EDITABLE_CHILDREN, NodeEdit;
    EditorSelect => EDITOR_SELECT, Editor;
    EditorSelection => EDITOR_SELECTION, Read;
    SceneSaveAll => SCENE_SAVE_ALL, Scene(Effect::SceneSave);
    NodeConnections => NODE_CONNECTIONS, Read;
    NodeProperties => NODE_PROPERTIES, Read;
    AnimationAdd => ANIMATION_ADD, NodeEdit;
    AnimationRemove => ANIMATION_REMOVE, NodeEdit;
    AnimationTrackAdd => ANIMATION_TRACK_ADD, NodeEdit;
    AnimationTrackRemove => ANIMATION_TRACK_REMOVE, NodeEdit;
    AnimationKeyInsert => ANIMATION_KEY_INSERT, NodeEdit;
    AnimationKeyRemove => ANIMATION_KEY_REMOVE, NodeEdit;
    AnimationGet => ANIMATION_GET, Read;
    AnimationSet => ANIMATION_SET, NodeEdit;
    AnimationTreeAddNode => ANIMATION_TREE_ADD_NODE, NodeEdit;
    AnimationTreeConnect => ANIMATION_TREE_CONNECT, NodeEdit;
    AnimationTreeBlendConnect => ANIMATION_TREE_BLEND_CONNECT, NodeEdit;
    ThemeSetItem => THEME_SET_ITEM, Scene(Effect::ResourceSave);
    ControlThemeOverride => CONTROL_THEME_OVERRIDE, NodeEdit;
    ControlAnchorsPreset => CONTROL_ANCHORS_PRESET, NodeEdit;
    ControlAddContainer => CONTROL_ADD_CONTAINER, NodeEdit;
}

#[cfg(test)]
mod tests;
