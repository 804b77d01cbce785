//! [`Command`]: every command the add-on executes, well-formed (decoded and checked by
//! [`crate::decode`]), and the checks of the scene, node, file and editor commands
//! (`res://` paths, node names, ranges, and `$N` step references); the authoring
//! commands' checks are in [`crate::authoring`].
//!
//! The parameters' shapes are the protocol's (`godot_mcp_protocol::commands`, the structs
//! the server sends); most variants hold their struct as it came.

use godot_mcp_protocol::commands as c;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};

use crate::check::{invalid, res_path};
use crate::value::Value;

pub use godot_mcp_protocol::commands::{
    EditorScreenshot as ScreenshotRequest, FitKind, GridCell, PropertySet, ScreenshotView, Terrain,
    TileCell, UndoPolicy,
};

/// A node a step acts on: a path from the edited scene's root, or the node an earlier
/// `create` step made (`"$2"` on the wire: step 2's node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeRef {
    Path(String),
    Step(usize),
}

impl NodeRef {
    fn parse(s: String, index: usize, creates: &[bool], at: &str) -> Result<Self, BridgeError> {
        let Some(n) = s.strip_prefix('$') else {
            return Ok(NodeRef::Path(s));
        };
        match n.parse::<usize>() {
            Ok(i) if i < index && creates[i] => Ok(NodeRef::Step(i)),
            _ => Err(invalid(format!(
                "{at}: {s:?} must name an earlier create step (\"$0\" is step 0's node)"
            ))),
        }
    }
}

/// One step of a `scene.steps` action, its node references resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A new node of `node_type` named `name` under `parent`.
    Create {
        parent: NodeRef,
        node_type: String,
        name: String,
    },
    Set {
        node: NodeRef,
        property: String,
        value: Value,
    },
    /// Add the node to a persistent group (saved with the scene).
    Group {
        node: NodeRef,
        group: String,
    },
    /// Connect the node's `signal` to `method` of `to`, persistent (saved with the scene).
    Connect {
        node: NodeRef,
        signal: String,
        to: NodeRef,
        method: String,
    },
    TileCells {
        node: NodeRef,
        cells: Vec<TileCell>,
    },
    GridCells {
        node: NodeRef,
        cells: Vec<GridCell>,
    },
    /// Give a CollisionShape2D/3D a new shape sized (and placed) to `to`'s bounds.
    FitShape {
        node: NodeRef,
        to: NodeRef,
        shape: FitKind,
    },
    /// Bake a NavigationRegion2D/3D's polygon or mesh into a new resource (the old one
    /// is what undo restores).
    BakeNavigation {
        node: NodeRef,
    },
    /// Add an atlas source (a texture cut into `tile_size` tiles, every tile created) to
    /// a TileMapLayer's built-in TileSet, making the TileSet if it has none.
    TilesetAtlas {
        node: NodeRef,
        texture: String,
        tile_size: [i32; 2],
        source_id: Option<i32>,
    },
    /// Add a physics layer to a TileMapLayer's built-in TileSet.
    TilesetPhysicsLayer {
        node: NodeRef,
        collision_layer: u32,
        collision_mask: u32,
    },
    /// Add a terrain set (mode 0 corners and sides, 1 corners, 2 sides) with its terrains.
    TilesetTerrainSet {
        node: NodeRef,
        mode: i32,
        terrains: Vec<Terrain>,
    },
    /// A tile's collision on a physics layer becomes one polygon (tile coordinates, the
    /// centre at 0, 0; empty: the whole tile).
    TileCollision {
        node: NodeRef,
        source_id: i32,
        atlas: [i32; 2],
        physics_layer: i32,
        polygon: Vec<[f64; 2]>,
    },
}

pub use godot_mcp_protocol::commands::{
    Graph, Interpolation, LoopMode, ThemeKind, TrackSettings, TrackType as TrackKind, UpdateMode,
};

/// A theme item's value, checked against its kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ThemeValue {
    /// A color, constant or font size.
    Plain(Value),
    /// A font, icon or stylebox saved in its own file.
    File(String),
    /// A new StyleBoxFlat with these properties (embedded where it is stored).
    StyleBoxFlat(Vec<(String, Value)>),
    /// Remove the item (overrides only).
    Remove,
}

/// A key to insert, checked: time 0 or more, both numbers finite, the value decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub time: f64,
    pub value: Value,
    pub transition: f64,
}

/// A new track, checked: its kind, path, modes, and the keys inserted into it in the
/// same undo action.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTrack {
    pub kind: TrackKind,
    pub path: String,
    pub update_mode: Option<UpdateMode>,
    pub interpolation: Option<Interpolation>,
    pub keys: Vec<Key>,
}

/// Most steps in one action, and most cells in one step.
pub const MAX_STEPS: usize = 256;
pub const MAX_CELLS: usize = 100_000;

/// Every command the add-on executes.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Ping,
    EditorState,
    SceneTree(c::SceneTree),
    SceneOpen(c::SceneOpen),
    SceneCreate(c::SceneCreate),
    /// `path: None` saves the edited scene.
    SceneSave(c::SceneSave),
    SceneClose(c::SceneClose),
    SceneReload(c::SceneReload),
    NodeCreate(c::NodeCreate),
    NodeRename(c::NodeRename),
    NodeMove(c::NodeMove),
    NodeDuplicate(c::NodeDuplicate),
    NodeDelete(c::NodeDelete),
    NodeGetProperty(c::NodeGetProperty),
    NodeSetProperty(PropertySet),
    /// The read-only persistence check: the persistence verdict `op` would get on `node`.
    NodePersistence(c::NodePersistence),
    ScriptAttach(c::ScriptAttach),
    ScriptDetach(c::ScriptDetach),
    SignalConnect(c::Connection),
    SignalDisconnect(c::Connection),
    ResourceSetProperty(c::ResourceSetProperty),
    BatchApply(c::BatchApply),
    /// Ordered steps applied as ONE undo action named `action`; validated before the
    /// first change, so a failing step leaves the editor unchanged.
    Steps {
        action: String,
        steps: Vec<Step>,
        /// Check every step, change nothing, answer the verdict (a dry run).
        check_only: bool,
        /// Only on this scene.
        on: OnScene,
        /// A dry run's stand-in scene: the file the call would open, or the root of
        /// the scene it would create.
        check_in: Option<c::CheckIn>,
    },
    /// The used cells of a TileMapLayer (`[x, y, source, ax, ay, alternative]`) or a
    /// GridMap (`[x, y, z, item, orientation]`), paged.
    Cells(c::Cells),
    /// A MeshLibrary's items: id, name, mesh class.
    MeshLibraryItems(c::MeshLibraryItems),
    /// Undo the current action; with `action`, only when it is the current one.
    Undo {
        action: Option<String>,
        /// Only on this scene.
        on: OnScene,
    },
    Redo,
    /// The edited scene's undo history; only on `on`'s scene when it names one.
    History(OnScene),
    /// A picture of an editor view, as PNG.
    EditorScreenshot(ScreenshotRequest),
    /// The editor's performance monitors now.
    EditorMonitors,
    /// Start a file-system scan (reimports what changed).
    FilesystemScan,
    /// Whether a scan runs, and how far it is.
    FilesystemStatus,
    /// Tell the file system of files the server wrote (`res://` paths, checked).
    FilesystemUpdate(c::FilesystemUpdate),
    /// An AudioStreamPlayer (2D/3D) with its properties, added as one undo action.
    AudioAddPlayer(c::AudioAddPlayer),
    /// A new ShaderMaterial with `shader` on the node's material slot.
    ShaderAssignMaterial(c::ShaderAssignMaterial),
    /// The uniforms of the node's ShaderMaterial, with their values.
    ShaderUniforms(c::ShaderUniforms),
    /// One uniform of the node's ShaderMaterial.
    ShaderSetUniform(c::ShaderSetUniform),
    // Scene, animation, theme and UI authoring (their checks: [`crate::authoring`]).
    NodeInstance {
        parent: String,
        scene: String,
        name: Option<String>,
    },
    NodeGroup {
        node: String,
        group: String,
        add: bool,
    },
    EditableChildren {
        node: String,
        editable: bool,
    },
    Select {
        nodes: Vec<String>,
    },
    Selection,
    SaveAll,
    Connections {
        node: String,
    },
    Properties {
        node: String,
        /// The property list (types, hints, usage) instead of the values.
        list: bool,
        offset: usize,
        limit: usize,
    },
    AnimationAdd {
        player: String,
        library: String,
        name: String,
        length: f64,
        loop_mode: LoopMode,
        /// `None`: Godot's default.
        step: Option<f64>,
        /// Also the player's autoplay animation.
        autoplay: bool,
        /// Made with the animation, in the same undo action.
        tracks: Vec<NewTrack>,
    },
    /// An animation's settings: what is `Some` (or listed) is set, in one undo action.
    AnimationSet {
        player: String,
        animation: String,
        length: Option<f64>,
        step: Option<f64>,
        loop_mode: Option<LoopMode>,
        tracks: Vec<TrackSettings>,
    },
    AnimationRemove {
        player: String,
        animation: String,
    },
    TrackAdd {
        player: String,
        animation: String,
        track: NewTrack,
    },
    TrackRemove {
        player: String,
        animation: String,
        track: i32,
    },
    /// One key or several, in one undo action (at least one; distinct times).
    KeyInsert {
        player: String,
        animation: String,
        track: i32,
        keys: Vec<Key>,
    },
    KeyRemove {
        player: String,
        animation: String,
        track: i32,
        time: f64,
    },
    AnimationGet {
        player: String,
        animation: String,
        max_keys: usize,
    },
    TreeAddNode {
        tree: String,
        /// The nested graph's path ("a/b"), "" for the tree's root.
        parent: String,
        graph: Graph,
        name: String,
        node_type: String,
        animation: Option<String>,
        position: [f64; 2],
    },
    TreeConnect {
        tree: String,
        state_machine: String,
        from: String,
        to: String,
        /// `AnimationNodeStateMachineTransition.SwitchMode`.
        switch_mode: i32,
        /// `AnimationNodeStateMachineTransition.AdvanceMode`.
        advance_mode: i32,
        advance_condition: Option<String>,
        xfade_time: f64,
    },
    TreeBlendConnect {
        tree: String,
        blend_tree: String,
        /// The consuming node (`output` is the blend tree's result).
        to: String,
        port: i32,
        /// The producing node.
        from: String,
    },
    ThemeSetItem {
        path: String,
        theme_type: String,
        kind: ThemeKind,
        name: String,
        value: ThemeValue,
    },
    ThemeOverride {
        node: String,
        kind: ThemeKind,
        name: String,
        value: ThemeValue,
    },
    /// The editor's anchor preset menu: anchors layout mode, then the preset's anchors,
    /// offsets (as Godot computes them) and grow direction.
    AnchorsPreset {
        node: String,
        /// `Control.LayoutPreset`'s ordinal.
        preset: i32,
    },
    AddContainer {
        parent: String,
        container_type: String,
        name: String,
        separation: Option<i64>,
        columns: Option<i64>,
        margin: Option<i64>,
    },
}

/// The player classes `audio.add_player` creates.
pub const AUDIO_PLAYER_TYPES: [&str; 3] = [
    "AudioStreamPlayer",
    "AudioStreamPlayer2D",
    "AudioStreamPlayer3D",
];

/// Smallest `max_edge` a screenshot may ask for.
pub const MIN_MAX_EDGE: u32 = 16;

/// The size an image of `width`×`height` is scaled to so that its longer edge is at most
/// `max_edge` (never enlarged; each edge at least 1 pixel).
pub fn fit_within(width: u32, height: u32, max_edge: Option<u32>) -> (u32, u32) {
    let Some(max) = max_edge else {
        return (width, height);
    };
    let long = width.max(height);
    if long <= max || long == 0 {
        return (width, height);
    }
    let scale = |v: u32| {
        ((u64::from(v) * u64::from(max) + u64::from(long) / 2) / u64::from(long)).max(1) as u32
    };
    (scale(width), scale(height))
}

/// Largest page of a tree read.
pub const MAX_TREE_PAGE: usize = 20_000;

/// `a`, once `check` (what serde cannot check) passes.
pub(crate) fn checked<T>(
    a: T,
    check: impl FnOnce(&T) -> Result<(), BridgeError>,
) -> Result<T, BridgeError> {
    check(&a)?;
    Ok(a)
}

/// The scene a request is meant for (`scene`, `root_id` of `commands::Steps`,
/// `Undo`, `History`): an agent's change names the scene its edits were staged on, so
/// they never land on, and its undo never reads, another one opened meanwhile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnScene {
    /// The scene's `res://` path (`None`: the edited scene, whichever it is).
    pub scene: Option<String>,
    /// Its root's instance id: a scene closed and opened again has a new root (and a
    /// new undo history).
    pub root_id: Option<i64>,
}

impl OnScene {
    pub(crate) fn decode(scene: Option<String>, root_id: Option<i64>) -> Result<Self, BridgeError> {
        if let Some(s) = &scene {
            res_path(s)?;
        } else if root_id.is_some() {
            return Err(invalid("root_id: only with scene"));
        }
        Ok(Self { scene, root_id })
    }

    /// Whether the edited scene (`edited`, its root's instance id `root_id`) is the one
    /// meant: otherwise `scene_mismatch`, nothing done.
    pub fn check(&self, edited: &str, root_id: i64) -> Result<(), BridgeError> {
        let Some(scene) = &self.scene else {
            return Ok(());
        };
        let refuse = |why: String| {
            BridgeError::new(ErrorCode::SceneMismatch, why).with_effect(ErrorEffect::Unchanged)
        };
        if scene != edited {
            let edited = if edited.is_empty() {
                "an unsaved scene".to_owned()
            } else {
                edited.to_owned()
            };
            return Err(refuse(format!(
                "this request is for {scene}, and the editor is editing {edited}; nothing was done"
            )));
        }
        match self.root_id {
            Some(want) if want != root_id => Err(refuse(format!(
                "{scene} was closed and opened again since this request was prepared (its \
                 root is another instance); nothing was done"
            ))),
            _ => Ok(()),
        }
    }
}

pub(crate) fn page_ok(limit: usize) -> Result<(), BridgeError> {
    if limit == 0 || limit > MAX_TREE_PAGE {
        return Err(invalid(format!("limit must be 1..={MAX_TREE_PAGE}")));
    }
    Ok(())
}

pub(crate) fn opt_res_path(p: &Option<String>) -> Result<(), BridgeError> {
    p.as_deref().map_or(Ok(()), res_path)
}

pub(crate) fn opt_name_ok(n: &Option<String>) -> Result<(), BridgeError> {
    n.as_deref().map_or(Ok(()), name_ok)
}

/// A `tileset_terrain_set` step's checks: a mode Godot has, at most 64 terrains.
fn terrain_set(
    at: &str,
    node: NodeRef,
    mode: i32,
    terrains: Vec<Terrain>,
) -> Result<Step, BridgeError> {
    if !(0..=2).contains(&mode) || terrains.len() > 64 {
        return Err(invalid(format!(
            "{at}: mode is 0 (corners and sides), 1 (corners) or 2 (sides); at most 64 \
             terrains"
        )));
    }
    Ok(Step::TilesetTerrainSet {
        node,
        mode,
        terrains,
    })
}

/// A `tile_collision` step's checks: ids at least 0, a polygon of 3 to 1000 finite points
/// or none (the whole tile).
fn tile_collision(
    at: &str,
    node: NodeRef,
    source_id: i32,
    atlas: [i32; 2],
    physics_layer: i32,
    polygon: Vec<[f64; 2]>,
) -> Result<Step, BridgeError> {
    let finite = polygon.iter().flatten().all(|v| v.is_finite());
    if source_id < 0
        || physics_layer < 0
        || !finite
        || polygon.len() > 1000
        || (!polygon.is_empty() && polygon.len() < 3)
    {
        return Err(invalid(format!(
            "{at}: source_id and physics_layer are at least 0; a polygon is 3 to 1000 \
             finite points (none: the whole tile)"
        )));
    }
    Ok(Step::TileCollision {
        node,
        source_id,
        atlas,
        physics_layer,
        polygon,
    })
}

/// A dry run's stand-in scene (`check_in`): with `check_only` only, a contained path or
/// a root with its type and name.
fn check_in_ok(a: &c::Steps) -> Result<(), BridgeError> {
    match &a.check_in {
        Some(_) if !a.check_only => Err(invalid("check_in is for a dry run: it needs check_only")),
        Some(c::CheckIn::File(p)) => res_path(p),
        Some(c::CheckIn::NewRoot { node_type, name })
            if node_type.is_empty() || name.is_empty() =>
        {
            Err(invalid("check_in: a new root needs its type and name"))
        }
        _ => Ok(()),
    }
}

pub(crate) fn steps(a: c::Steps) -> Result<Command, BridgeError> {
    check_in_ok(&a)?;
    if a.steps.is_empty() || a.steps.len() > MAX_STEPS {
        return Err(invalid(format!("steps: 1 to {MAX_STEPS} steps")));
    }
    if a.action.is_empty() || a.action.len() > 200 {
        return Err(invalid("action: a name of 1 to 200 bytes"));
    }
    let mut creates = Vec::with_capacity(a.steps.len());
    let mut out = Vec::with_capacity(a.steps.len());
    for (i, w) in a.steps.into_iter().enumerate() {
        let at = format!("steps[{i}]");
        let r = |s: String| NodeRef::parse(s, i, &creates, &at);
        let step = match w {
            c::Step::Create {
                parent,
                node_type,
                name,
            } => {
                name_ok(&name).map_err(|e| invalid(format!("{at}: {}", e.message)))?;
                Step::Create {
                    parent: r(parent)?,
                    node_type,
                    name,
                }
            }
            c::Step::Set {
                node,
                property,
                value,
            } => Step::Set {
                node: r(node)?,
                value,
                property,
            },
            c::Step::Group { node, group } => {
                if group.is_empty() {
                    return Err(invalid(format!("{at}: the group name is empty")));
                }
                Step::Group {
                    node: r(node)?,
                    group,
                }
            }
            c::Step::Connect {
                node,
                signal,
                to,
                method,
            } => {
                if signal.is_empty() || method.is_empty() {
                    return Err(invalid(format!(
                        "{at}: the signal and the method need names"
                    )));
                }
                Step::Connect {
                    node: r(node)?,
                    signal,
                    to: r(to)?,
                    method,
                }
            }
            c::Step::TileCells { node, cells } => {
                cells_ok(cells.len(), &at)?;
                Step::TileCells {
                    node: r(node)?,
                    cells,
                }
            }
            c::Step::GridCells { node, cells } => {
                cells_ok(cells.len(), &at)?;
                Step::GridCells {
                    node: r(node)?,
                    cells,
                }
            }
            c::Step::FitShape { node, to, shape } => Step::FitShape {
                node: r(node)?,
                to: r(to)?,
                shape,
            },
            c::Step::BakeNavigation { node } => match r(node)? {
                NodeRef::Step(_) => {
                    return Err(invalid(format!(
                        "{at}: baking needs a region already in the scene (its geometry is \
                         parsed from the tree)"
                    )));
                }
                n => Step::BakeNavigation { node: n },
            },
            c::Step::TilesetAtlas {
                node,
                texture,
                tile_size,
                source_id,
            } => {
                res_path(&texture).map_err(|e| invalid(format!("{at}: {}", e.message)))?;
                if tile_size.iter().any(|v| *v <= 0) || source_id.is_some_and(|i| i < 0) {
                    return Err(invalid(format!(
                        "{at}: tile_size must be positive and source_id at least 0"
                    )));
                }
                Step::TilesetAtlas {
                    node: r(node)?,
                    texture,
                    tile_size,
                    source_id,
                }
            }
            c::Step::TilesetPhysicsLayer {
                node,
                collision_layer,
                collision_mask,
            } => Step::TilesetPhysicsLayer {
                node: r(node)?,
                collision_layer,
                collision_mask,
            },
            c::Step::TilesetTerrainSet {
                node,
                mode,
                terrains,
            } => terrain_set(&at, r(node)?, mode, terrains)?,
            c::Step::TileCollision {
                node,
                source_id,
                atlas,
                physics_layer,
                polygon,
            } => tile_collision(&at, r(node)?, source_id, atlas, physics_layer, polygon)?,
        };
        creates.push(matches!(step, Step::Create { .. }));
        out.push(step);
    }
    Ok(Command::Steps {
        action: a.action,
        steps: out,
        check_only: a.check_only,
        on: OnScene::decode(a.scene, a.root_id)?,
        check_in: a.check_in,
    })
}

fn cells_ok(n: usize, at: &str) -> Result<(), BridgeError> {
    if n == 0 || n > MAX_CELLS {
        return Err(invalid(format!("{at}: 1 to {MAX_CELLS} cells")));
    }
    Ok(())
}

pub(crate) fn name_ok(name: &str) -> Result<(), BridgeError> {
    if name.is_empty() || name.contains(['/', ':', '@', '%', '.', '"']) {
        return Err(invalid(format!("{name:?} is not a valid node name")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::decode::decode;

    #[test]
    fn every_protocol_command_decodes_from_its_documented_params() {
        let examples = [
            (c::PING, json!(null)),
            (c::EDITOR_STATE, json!({})),
            (c::SCENE_TREE, json!({"offset": 0, "limit": 10})),
            (c::SCENE_OPEN, json!({"path": "res://a.tscn"})),
            (
                c::SCENE_CREATE,
                json!({"path": "res://b.tscn", "root_type": "Node2D"}),
            ),
            (c::SCENE_SAVE, json!({})),
            (c::SCENE_CLOSE, json!({"path": "res://a.tscn"})),
            (c::SCENE_RELOAD, json!({})),
            (
                c::NODE_CREATE,
                json!({"parent": ".", "type": "Sprite2D", "name": "S"}),
            ),
            (c::NODE_RENAME, json!({"node": "S", "new_name": "T"})),
            (c::NODE_MOVE, json!({"node": "S", "new_parent": "A"})),
            (c::NODE_DUPLICATE, json!({"node": "S"})),
            (c::NODE_DELETE, json!({"node": "S"})),
            (
                c::NODE_GET_PROPERTY,
                json!({"node": "S", "property": "position"}),
            ),
            (
                c::NODE_SET_PROPERTY,
                json!({"node": "S", "property": "position", "value": {"$type": "Vector2", "x": 1, "y": 2}}),
            ),
            (
                c::NODE_PERSISTENCE,
                json!({"node": "S", "op": "set_property"}),
            ),
            (
                c::SCRIPT_ATTACH,
                json!({"node": "S", "script": "res://s.gd"}),
            ),
            (c::SCRIPT_DETACH, json!({"node": "S"})),
            (
                c::SIGNAL_CONNECT,
                json!({"from": "B", "signal": "pressed", "to": ".", "method": "go"}),
            ),
            (
                c::SIGNAL_DISCONNECT,
                json!({"from": "B", "signal": "pressed", "to": ".", "method": "go"}),
            ),
            (
                c::RESOURCE_SET_PROPERTY,
                json!({"path": "res://r.tres", "property": "hp", "value": 3}),
            ),
            (
                c::BATCH_APPLY,
                json!({"sets": [{"node": "S", "property": "visible", "value": false}],
                       "undo": "one_action"}),
            ),
            (
                c::STEPS,
                json!({"action": "MCP: add body", "steps": [
                    {"op": "create", "parent": ".", "type": "StaticBody2D", "name": "Body"},
                    {"op": "create", "parent": "$0", "type": "CollisionShape2D", "name": "Shape"},
                    {"op": "set", "node": "$1", "property": "shape", "value":
                        {"$type": "Resource", "class": "RectangleShape2D", "properties": {}}},
                    {"op": "group", "node": "$0", "group": "walls"},
                    {"op": "tile_cells", "node": "Ground", "cells": [{"coords": [0, 0], "source": 0}]},
                    {"op": "grid_cells", "node": "Grid", "cells": [{"coords": [0, 0, 0], "item": 1}]},
                    {"op": "fit_shape", "node": "$1", "to": "Sprite", "shape": "rectangle"},
                    {"op": "bake_navigation", "node": "Region"},
                    {"op": "tileset_atlas", "node": "Ground", "texture": "res://t.png", "tile_size": [16, 16]},
                    {"op": "tileset_physics_layer", "node": "Ground", "collision_layer": 1, "collision_mask": 1},
                    {"op": "tileset_terrain_set", "node": "Ground", "mode": 0,
                     "terrains": [{"name": "grass", "color": [0, 1, 0, 1]}]},
                    {"op": "tile_collision", "node": "Ground", "source_id": 0, "atlas": [0, 0],
                     "physics_layer": 0, "polygon": []}
                ]}),
            ),
            (c::CELLS_GET, json!({"node": "Ground"})),
            (c::MESH_LIBRARY_ITEMS, json!({"path": "res://lib.tres"})),
            (c::UNDO, json!({})),
            (c::REDO, json!({})),
            (c::HISTORY, json!({})),
            (
                c::EDITOR_SCREENSHOT,
                json!({"view": "2d", "max_edge": 640, "max_bytes": 4194304}),
            ),
            (c::EDITOR_MONITORS, json!({})),
            (c::FILESYSTEM_SCAN, json!({})),
            (c::FILESYSTEM_STATUS, json!({})),
            (c::FILESYSTEM_UPDATE, json!({"paths": ["res://a.gd"]})),
            (
                c::AUDIO_ADD_PLAYER,
                json!({"parent": ".", "name": "Music", "type": "AudioStreamPlayer",
                       "stream": "res://a.ogg", "bus": "Music", "autoplay": true}),
            ),
            (
                c::SHADER_ASSIGN_MATERIAL,
                json!({"node": "S", "shader": "res://s.gdshader"}),
            ),
            (c::SHADER_UNIFORMS, json!({"node": "S"})),
            (
                c::SHADER_SET_UNIFORM,
                json!({"node": "S", "name": "tint", "value": {"$type": "Color", "r": 1, "g": 0, "b": 0}}),
            ),
        ];
        // The table's commands up to the authoring ones (those: `authoring::tests`).
        let all: Vec<_> = c::TABLE.iter().map(|(m, _)| *m).collect();
        let names: Vec<_> = examples.iter().map(|(m, _)| *m).collect();
        assert_eq!(names, all[..names.len()]);
        for (cmd, p) in examples {
            decode(cmd, &p).unwrap_or_else(|e| panic!("{cmd}: {e:?}"));
        }
        // A tile's collision polygon: three points at least (none: the whole tile).
        let two = json!({"action": "MCP: c", "steps": [{"op": "tile_collision", "node": "G",
            "source_id": 0, "atlas": [0, 0], "physics_layer": 0, "polygon": [[0, 0], [1, 1]]}]});
        let e = decode(c::STEPS, &two).unwrap_err();
        assert!(e.message.contains("3 to 1000"), "{e:?}");
        assert_eq!(
            decode(c::NODE_SET_PROPERTY, &json!({"node": "S", "property": "position", "value": {"$type": "Vector2", "x": 1, "y": 2}})).unwrap(),
            Command::NodeSetProperty(PropertySet { node: "S".into(), property: "position".into(), value: Value::Vector2([1.0, 2.0]) })
        );
    }

    #[test]
    fn fit_within_keeps_the_aspect_and_never_enlarges() {
        assert_eq!(fit_within(1280, 720, Some(640)), (640, 360));
        assert_eq!(fit_within(720, 1280, Some(640)), (360, 640));
        assert_eq!(fit_within(100, 50, Some(640)), (100, 50));
        assert_eq!(fit_within(1280, 720, None), (1280, 720));
        assert_eq!(fit_within(5000, 1, Some(16)), (16, 1));
    }

    #[test]
    fn bad_requests_get_structured_errors() {
        let cases = [
            ("launch.missiles", json!({}), ErrorCode::UnknownCommand),
            (c::NODE_DELETE, json!({}), ErrorCode::InvalidParams),
            (
                c::NODE_DELETE,
                json!({"node": "a", "extra": 1}),
                ErrorCode::InvalidParams,
            ),
            (
                c::SCENE_OPEN,
                json!({"path": "/etc/passwd"}),
                ErrorCode::InvalidParams,
            ),
            (
                c::SCENE_OPEN,
                json!({"path": "res://../../x.tscn"}),
                ErrorCode::InvalidParams,
            ),
            (
                c::NODE_CREATE,
                json!({"parent": ".", "type": "Node", "name": "a/b"}),
                ErrorCode::InvalidParams,
            ),
            (c::SCENE_TREE, json!({"limit": 0}), ErrorCode::InvalidParams),
            (
                c::BATCH_APPLY,
                json!({"sets": [], "undo": "one_action"}),
                ErrorCode::InvalidParams,
            ),
            (
                c::BATCH_APPLY,
                json!({"sets": [{"node": "a", "property": "p", "value": {"$type": "Nope"}}],
                       "undo": "one_action"}),
                ErrorCode::InvalidParams,
            ),
            (c::PING, json!([1]), ErrorCode::InvalidParams),
            (
                c::BATCH_APPLY,
                json!({"sets": [{"node": "a", "property": "p", "value": 1}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": []}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": [{"op": "tileset_atlas", "node": "G",
                    "texture": "res://../x.png", "tile_size": [16, 16]}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": [{"op": "set", "node": "$0", "property": "p", "value": 1}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": [
                    {"op": "set", "node": ".", "property": "p", "value": 1},
                    {"op": "set", "node": "$0", "property": "p", "value": 1}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": [{"op": "launch", "node": "."}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": [
                    {"op": "create", "parent": ".", "type": "NavigationRegion2D", "name": "R"},
                    {"op": "bake_navigation", "node": "$0"}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "a", "steps": [{"op": "create", "parent": ".", "type": "Node", "name": "a:b"}]}),
                ErrorCode::InvalidParams,
            ),
            (
                c::EDITOR_SCREENSHOT,
                json!({"view": "4d", "max_bytes": 1}),
                ErrorCode::InvalidParams,
            ),
            (
                c::EDITOR_SCREENSHOT,
                json!({"view": "2d", "max_edge": 2, "max_bytes": 1}),
                ErrorCode::InvalidParams,
            ),
            (
                c::EDITOR_SCREENSHOT,
                json!({"view": "3d", "node": "Box", "max_bytes": 1}),
                ErrorCode::InvalidParams,
            ),
            // A stand-in scene is for a dry run only, and a contained path.
            (
                c::STEPS,
                json!({"action": "x", "steps": [{"op": "group", "node": ".", "group": "g"}],
                       "check_in": {"file": "res://a.tscn"}}),
                ErrorCode::InvalidParams,
            ),
            (
                c::STEPS,
                json!({"action": "x", "steps": [{"op": "group", "node": ".", "group": "g"}],
                       "check_only": true, "check_in": {"file": "res://../a.tscn"}}),
                ErrorCode::InvalidParams,
            ),
        ];
        for (cmd, p, code) in cases {
            let e = decode(cmd, &p).unwrap_err();
            assert_eq!(e.code, code, "{cmd} {p}: {}", e.message);
            assert_eq!(e.effect, Some(ErrorEffect::Unchanged), "never ran");
        }
    }

    /// Guards against (issue 41, item 3): an agent's change applied to, or its undo
    /// read from, a scene other than the one its edits were staged on. A request that
    /// names its scene runs only there, on that root.
    #[test]
    fn a_request_for_one_scene_is_refused_on_another_or_on_a_reopened_root() {
        let on = |p: Json| match decode(c::UNDO, &p).unwrap() {
            Command::Undo { on, .. } => on,
            other => panic!("{other:?}"),
        };
        let a = on(json!({"scene": "res://a.tscn", "root_id": 7}));
        assert_eq!(a.check("res://a.tscn", 7), Ok(()));
        let other = a.check("res://b.tscn", 7).unwrap_err();
        assert_eq!(other.code, ErrorCode::SceneMismatch, "{}", other.message);
        assert_eq!(other.effect, Some(ErrorEffect::Unchanged));
        assert!(other.message.contains("res://b.tscn"), "{}", other.message);
        let reopened = a.check("res://a.tscn", 8).unwrap_err();
        assert_eq!(reopened.code, ErrorCode::SceneMismatch);
        assert_eq!(a.check("", 7).unwrap_err().code, ErrorCode::SceneMismatch);
        // Without a root id, the path alone; without a scene, whichever is edited.
        assert_eq!(
            on(json!({"scene": "res://a.tscn"})).check("res://a.tscn", 9),
            Ok(())
        );
        assert_eq!(on(json!({})).check("res://b.tscn", 9), Ok(()));
        // scene.steps and editor.history carry it too.
        match decode(
            c::STEPS,
            &json!({"action": "x", "steps": [{"op": "group", "node": ".", "group": "g"}],
                   "scene": "res://a.tscn", "root_id": 3}),
        )
        .unwrap()
        {
            Command::Steps { on, .. } => assert!(on.check("res://b.tscn", 3).is_err()),
            other => panic!("{other:?}"),
        }
        match decode(c::HISTORY, &json!({"scene": "res://a.tscn"})).unwrap() {
            Command::History(on) => assert!(on.check("res://b.tscn", 1).is_err()),
            other => panic!("{other:?}"),
        }
        // A root id alone, or a scene that is not a res:// path: invalid, never run.
        for bad in [json!({"root_id": 3}), json!({"scene": "/etc/a.tscn"})] {
            let e = decode(c::UNDO, &bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidParams, "{}", e.message);
        }
        assert_eq!(
            decode(c::HISTORY, &json!({"root_id": 3})).unwrap_err().code,
            ErrorCode::InvalidParams,
            "history takes no root id: the server compares the one it answers"
        );
    }

    /// A dry run for a scene the call would open or create carries where to check it.
    #[test]
    fn a_dry_run_carries_its_stand_in_scene() {
        let got = decode(
            c::STEPS,
            &json!({"action": "x", "steps": [{"op": "group", "node": ".", "group": "g"}],
                   "check_only": true, "check_in": {"new_root": {"node_type": "Node2D", "name": "L"}}}),
        )
        .unwrap();
        match got {
            Command::Steps { check_in, .. } => assert_eq!(
                check_in,
                Some(c::CheckIn::NewRoot {
                    node_type: "Node2D".into(),
                    name: "L".into()
                })
            ),
            other => panic!("{other:?}"),
        }
    }
}
