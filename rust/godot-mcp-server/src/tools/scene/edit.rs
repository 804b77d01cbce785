//! Scene editing, the rest, in the live editor: instancing a scene, persistent groups,
//! editable children, the editor's selection, saving every open scene, the open scenes,
//! and live reads of a node's signal connections, properties and property list.
//!
//! Edits plan like every node edit (`editor::node_plan_as`: the add-on's persistence probe
//! for a dry run, one request for the real run); reads are plain bridge queries. Selection
//! changes no project state and nothing an undo could restore, so it is read_only by the
//! class rule (the effect, not the verb). `authoring_plan` is the plan of an authoring
//! command judged at scene level (save all, a theme file), shared with `tools/ui/edit.rs`.
//! Every reply and answer decodes into its declared type (`editor::from_reply`): the
//! tool's outputSchema, where a field the add-on adds undeclared is an internal error.

use std::sync::Arc;

use godot_mcp_protocol::commands as cmd;
use godot_mcp_protocol::commands::BridgeCommand;
use godot_mcp_protocol::persistence;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::honesty::{EditReply, InSceneOrNull, InTransaction};
use crate::respath::ResPath;
use crate::rules::{Precondition, Toolset};
use crate::state::AppState;
use crate::tools::kit::editor::{
    NoArgs, NodeArgs, NodeCommand, SceneLevel, ask, blocking_as, editor_meta, editor_read,
    never_saved, node_edit, reply_fields, run_effect_files_as,
};
use crate::tools::reply_map;
use crate::tools::{Call, Plan, ToolDef};
use serde_json::json;

/// `save_all_scenes`: every open scene that has a file may be written, so each is named
/// in the intent with its pre-state and proven from disk after the reply.
fn save_all_plan(
    state: Arc<AppState>,
) -> Result<Plan<SceneLevel, EditReply<SavedAll, InTransaction>>, ToolError> {
    let command = cmd::SceneSaveAll::METHOD;
    let st = ask(&state, &cmd::EditorState {}, None)?;
    let open: OpenScenes = serde_json::from_value(st)
        .map_err(|e| ToolError::internal(format!("the editor's state is not of its type: {e}")))?;
    let Some(active) = open.active_scene.clone() else {
        return Err(Precondition::ActiveScene.error());
    };
    if active.is_empty() {
        return Err(never_saved());
    }
    let files: Vec<String> = open
        .open_scenes
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    let effect = SceneLevel {
        verdict: persistence::verdict_of(persistence::Effect::SceneSave, &active).into(),
        command,
        scene: Some(active.clone()),
    };
    Plan::new(effect, move |_| {
        run_effect_files_as(&state, &cmd::SceneSaveAll {}, Some(active), None, &files)
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InstanceArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// The .tscn to instance.
    scene: ResPath,
    /// Instance name (default: the scene's root name).
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GroupArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// Group name.
    group: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditableArgs {
    /// Path of an instanced scene's node.
    node: String,
    /// true: its children are editable (and saved as overrides); false drops them.
    editable: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SelectArgs {
    /// Node paths from the scene root; [] clears the selection.
    nodes: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PropertiesArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// First property of the page.
    #[serde(default)]
    offset: usize,
    /// Page size (1 to 2000).
    #[serde(default)]
    limit: Option<usize>,
}

reply_fields!(
    pub(crate) struct Instanced {
        node: String,
        instance: String,
    }
);

reply_fields!(
    pub(crate) struct Grouped {
        node: String,
        group: String,
        groups: Vec<String>,
    }
);

reply_fields!(
    pub(crate) struct EditableSet {
        node: String,
        editable: bool,
    }
);

reply_fields!(
    pub(crate) struct SavedAll {
        scene: String,
        scenes: Vec<String>,
    }
);

/// The editor's selection (`editor.select`, `editor.selection`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Selection {
    scene: String,
    nodes: Vec<SelectedNode>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SelectedNode {
    node: String,
    #[serde(rename = "type")]
    class: String,
}

/// A node's live connections (`node.connections`); an end outside the scene's tree is
/// named by its class, a missing one is null.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Connections {
    scene: String,
    node: String,
    outgoing: Vec<Outgoing>,
    incoming: Vec<Incoming>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Outgoing {
    signal: String,
    to: Option<String>,
    method: Option<String>,
    flags: i64,
    persistent: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Incoming {
    from: Option<String>,
    signal: Option<String>,
    method: Option<String>,
    flags: i64,
    persistent: bool,
}

/// A page of a live node's properties (`node.properties`), as values or as the list.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Properties<T> {
    scene: String,
    node: String,
    class: String,
    total: usize,
    next_offset: Option<usize>,
    properties: Vec<T>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct PropertyValue {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    /// The editor's typed value JSON.
    value: Value,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct PropertyInfo {
    name: String,
    #[serde(rename = "type")]
    type_name: String,
    class_name: Option<String>,
    hint: i64,
    hint_string: String,
    usage: i64,
}

/// The scenes open in the editor (from `editor.state`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct OpenScenes {
    active_scene: Option<String>,
    #[serde(default)]
    open_scenes: Vec<String>,
}

fn properties(a: &PropertiesArgs, list: bool) -> (cmd::NodeProperties, Option<String>) {
    let p = cmd::NodeProperties {
        node: a.node.clone(),
        list,
        offset: a.offset,
        limit: a.limit,
    };
    (p, Some(a.node.clone()))
}

/// `add_to_group` (`add`) and `remove_from_group`.
fn group(
    state: Arc<AppState>,
    a: GroupArgs,
    add: bool,
) -> Result<Plan<NodeCommand, EditReply<Grouped, InSceneOrNull>>, ToolError> {
    let p = cmd::NodeGroup {
        node: a.node.clone(),
        group: a.group,
        add,
    };
    node_edit(state, "set_property", a.node, p)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    [node_tools(), live_tools(), open_scenes_tools()]
        .into_iter()
        .flatten()
        .collect()
}

/// Node edits: instancing, groups, editable children.
fn node_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    use Toolset::*;
    vec![
        ToolDef::planned(
            editor_meta(
                SceneEdit,
                Mutating,
                "instance_scene",
                "Instance a scene",
                "Instance a PackedScene (.tscn) under a parent node in the edited scene \
                 (one undo action).",
            ),
            |state, a: InstanceArgs| {
                let p = cmd::NodeInstance {
                    parent: a.parent.clone(),
                    scene: a.scene.to_string(),
                    name: a.name,
                };
                node_edit::<_, Instanced, InSceneOrNull>(state, "create", a.parent, p)
            },
        ),
        ToolDef::planned(
            editor_meta(
                SceneEdit,
                Mutating,
                "add_to_group",
                "Add a node to a group",
                "Add a node to a persistent group, saved with the scene (one undo action).",
            ),
            |state, a: GroupArgs| group(state, a, true),
        )
        .staged(|a: GroupArgs| {
            let out = reply_map(json!({
                "command": cmd::NODE_GROUP,
                "node": a.node,
                "group": a.group,
            }));
            let step = cmd::Step::Group {
                node: a.node,
                group: a.group,
            };
            Ok((vec![step], out))
        }),
        ToolDef::planned(
            editor_meta(
                SceneEdit,
                Destructive,
                "remove_from_group",
                "Remove a node from a group",
                "Remove a node from a group in the edited scene (one undo action).",
            ),
            |state, a: GroupArgs| group(state, a, false),
        ),
        ToolDef::planned(
            editor_meta(
                SceneEdit,
                Destructive,
                "set_editable_children",
                "Set editable children",
                "Make an instanced scene's children editable, or not (dropping their \
                 overrides on save); one undo action.",
            ),
            |state, a: EditableArgs| {
                let p = cmd::NodeEditableChildren {
                    node: a.node.clone(),
                    editable: a.editable,
                };
                node_edit::<_, EditableSet, InSceneOrNull>(state, "set_property", a.node, p)
            },
        ),
    ]
}

/// The editor's selection, and live reads of a node.
fn live_tools() -> Vec<ToolDef> {
    use crate::rules::class::ReadOnly;
    use Toolset::*;
    vec![
        editor_read::<_, _, Selection>(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "select_nodes",
                "Select nodes",
                "Set the editor's node selection (no project change); returns the selection.",
            ),
            |a: &SelectArgs| {
                let p = cmd::EditorSelect {
                    nodes: a.nodes.clone(),
                };
                (p, None)
            },
        ),
        editor_read::<_, _, Selection>(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "get_selected_nodes",
                "Get the selected nodes",
                "The nodes selected in the editor: paths and classes.",
            ),
            |_a: &NoArgs| (cmd::EditorSelection {}, None),
        ),
        editor_read::<_, _, Connections>(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "list_editor_signal_connections",
                "List a node's live signal connections",
                "A node's live signal connections in the editor (unsaved included), outgoing \
                 and incoming, persistent (saved) ones marked.",
            ),
            |a: &NodeArgs| {
                let p = cmd::NodeConnections {
                    node: a.node.clone(),
                };
                (p, Some(a.node.clone()))
            },
        ),
        editor_read::<_, _, Properties<PropertyValue>>(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "get_editor_node_properties",
                "Get all live node properties",
                "Every stored or editor-visible property of a node in the live edited scene, \
                 with type and typed value (paged).",
            ),
            |a: &PropertiesArgs| properties(a, false),
        ),
        editor_read::<_, _, Properties<PropertyInfo>>(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "get_editor_property_list",
                "Get a node's property list",
                "A live node's property list: names, types, class names, hints, hint \
                 strings, usage flags (paged).",
            ),
            |a: &PropertiesArgs| properties(a, true),
        ),
    ]
}

/// Every scene open in the editor.
fn open_scenes_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, ReadOnly};
    use Toolset::*;
    vec![
        ToolDef::planned(
            editor_meta(
                SceneFiles,
                Destructive,
                "save_all_scenes",
                "Save all scenes",
                "Save every scene open in the editor that has a file.",
            ),
            |state, _a: NoArgs| save_all_plan(state),
        ),
        ToolDef::new(
            editor_meta(
                SceneFiles,
                ReadOnly,
                "list_open_scenes",
                "List open scenes",
                "The scenes open in the editor and the edited (active) one.",
            ),
            |Call { state, .. }: Call<NoArgs>| async move {
                blocking_as(move || {
                    let st = ask(&state, &cmd::EditorState {}, None)?;
                    // Only these two of the editor's state are the result.
                    serde_json::from_value::<OpenScenes>(st).map_err(|e| {
                        ToolError::internal(format!("the editor's state is not of its type: {e}"))
                    })
                })
                .await
            },
        ),
    ]
}
