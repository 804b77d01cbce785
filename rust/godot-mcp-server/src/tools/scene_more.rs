//! Scene editing, the rest, in the live editor: instancing a scene, persistent groups,
//! editable children, the editor's selection, saving every open scene, the open scenes,
//! and live reads of a node's signal connections, properties and property list.
//!
//! Edits plan like every node edit (`editor::node_plan`: the add-on's persistence probe
//! for a dry run, one request for the real run); reads are plain bridge queries. Selection
//! changes no project state and nothing an undo could restore, so it is read_only by the
//! class rule (the effect, not the verb). [`authoring_plan`] is the plan of an authoring
//! command judged at scene level (save all, a theme file), shared with `tools/ui.rs`.

use std::sync::Arc;

use godot_mcp_protocol::commands as cmd;
use godot_mcp_protocol::persistence;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::safety::{Precondition, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::editor::{blocking, node_plan, query, run_effect};
use crate::tools::{CallFlags, Plan, ToolDef, ToolMeta};

/// The meta of an editor-plane tool (the effect kind follows the class).
pub(crate) fn editor_meta(
    toolset: Toolset,
    class: SafetyClass,
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta {
    let effect = if class == SafetyClass::ReadOnly {
        crate::safety::EffectKind::None
    } else {
        crate::safety::EffectKind::EditorRuntime
    };
    ToolMeta {
        name,
        title,
        description,
        class,
        toolset,
        effect,
    }
}

/// A read-only tool that sends `command` with `params(args)` to the editor.
pub(crate) fn editor_read<A>(
    meta: ToolMeta,
    command: &'static str,
    params: fn(&A) -> (Value, Option<String>),
) -> ToolDef
where
    A: serde::de::DeserializeOwned + JsonSchema + Send + 'static,
{
    ToolDef::new(meta, move |state, a: A, _f: CallFlags| {
        let (p, node) = params(&a);
        async move { blocking(move || query(&state, command, p, node.as_deref())).await }
    })
}

/// A plan for an authoring command judged at scene level: it needs an edited scene (its
/// undo history holds the action), and its verdict comes from the one rule
/// (`godot_mcp_protocol::persistence::Effect::of_scene_command`), which the add-on stamps
/// its reply with too.
/// `file`: the file it saves (default: the edited scene), whose pre-state the journal
/// records when the command may save one.
pub(crate) fn authoring_plan(
    state: Arc<AppState>,
    command: &'static str,
    params: Value,
    file: Option<String>,
) -> Result<Plan, ToolError> {
    let effect = persistence::Effect::of_scene_command(command)
        .ok_or_else(|| ToolError::internal(format!("{command} has no scene-level verdict")))?;
    let st = query(&state, cmd::EDITOR_STATE, json!({}), None)?;
    let Some(active) = st
        .get("active_scene")
        .and_then(Value::as_str)
        .map(String::from)
    else {
        return Err(Precondition::ActiveScene.error());
    };
    let file = file.unwrap_or_else(|| active.clone());
    if file.is_empty() {
        return Err(Precondition::ActiveScene.error().hint(
            "The edited scene has never been saved to a file: save it under a res:// path in \
             the editor first.",
        ));
    }
    let mut out: Map<String, Value> =
        match serde_json::to_value(persistence::verdict_of(effect, &file)) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
    out.insert("command".into(), json!(command));
    out.insert("scene".into(), json!(active));
    Ok(Plan {
        effect: out,
        apply: Box::new(move || run_effect(&state, command, params, Some(file), None)),
        preview: None,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstanceArgs {
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
pub struct GroupArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// Group name.
    group: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditableArgs {
    /// Path of an instanced scene's node.
    node: String,
    /// true: its children are editable (and saved as overrides); false drops them.
    editable: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectArgs {
    /// Node paths from the scene root; [] clears the selection.
    nodes: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PropertiesArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// First property of the page.
    #[serde(default)]
    offset: usize,
    /// Page size (1 to 2000).
    #[serde(default)]
    limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

fn properties_params(a: &PropertiesArgs, list: bool) -> (Value, Option<String>) {
    let mut p = json!({"node": a.node, "list": list, "offset": a.offset});
    if let Some(l) = a.limit {
        p["limit"] = json!(l);
    }
    (p, Some(a.node.clone()))
}

pub fn tools() -> Vec<ToolDef> {
    use SafetyClass::*;
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
                let p = json!({"parent": a.parent, "scene": a.scene.to_string(), "name": a.name});
                node_plan(state, cmd::NODE_INSTANCE, "create", a.parent, p)
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
            |state, a: GroupArgs| {
                let p = json!({"node": a.node, "group": a.group, "add": true});
                node_plan(state, cmd::NODE_GROUP, "set_property", a.node, p)
            },
        ),
        ToolDef::planned(
            editor_meta(
                SceneEdit,
                Destructive,
                "remove_from_group",
                "Remove a node from a group",
                "Remove a node from a group in the edited scene (one undo action).",
            ),
            |state, a: GroupArgs| {
                let p = json!({"node": a.node, "group": a.group, "add": false});
                node_plan(state, cmd::NODE_GROUP, "set_property", a.node, p)
            },
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
                let p = json!({"node": a.node, "editable": a.editable});
                node_plan(
                    state,
                    cmd::NODE_EDITABLE_CHILDREN,
                    "set_property",
                    a.node,
                    p,
                )
            },
        ),
        editor_read(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "select_nodes",
                "Select nodes",
                "Set the editor's node selection (no project change); returns the selection.",
            ),
            cmd::EDITOR_SELECT,
            |a: &SelectArgs| (json!({"nodes": a.nodes}), None),
        ),
        editor_read(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "get_selected_nodes",
                "Get the selected nodes",
                "The nodes selected in the editor: paths and classes.",
            ),
            cmd::EDITOR_SELECTION,
            |_a: &NoArgs| (json!({}), None),
        ),
        editor_read(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "list_editor_signal_connections",
                "List a node's live signal connections",
                "A node's live signal connections in the editor (unsaved included), outgoing \
                 and incoming, persistent (saved) ones marked.",
            ),
            cmd::NODE_CONNECTIONS,
            |a: &NodeArgs| (json!({"node": a.node}), Some(a.node.clone())),
        ),
        editor_read(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "get_editor_node_properties",
                "Get all live node properties",
                "Every stored or editor-visible property of a node in the live edited scene, \
                 with type and typed value (paged).",
            ),
            cmd::NODE_PROPERTIES,
            |a: &PropertiesArgs| properties_params(a, false),
        ),
        editor_read(
            editor_meta(
                SceneEdit,
                ReadOnly,
                "get_editor_property_list",
                "Get a node's property list",
                "A live node's property list: names, types, class names, hints, hint \
                 strings, usage flags (paged).",
            ),
            cmd::NODE_PROPERTIES,
            |a: &PropertiesArgs| properties_params(a, true),
        ),
        ToolDef::planned(
            editor_meta(
                SceneFiles,
                Destructive,
                "save_all_scenes",
                "Save all scenes",
                "Save every scene open in the editor that has a file.",
            ),
            |state, _a: NoArgs| authoring_plan(state, cmd::SCENE_SAVE_ALL, json!({}), None),
        ),
        ToolDef::new(
            editor_meta(
                SceneFiles,
                ReadOnly,
                "list_open_scenes",
                "List open scenes",
                "The scenes open in the editor and the edited (active) one.",
            ),
            |state, _a: NoArgs, _f: CallFlags| async move {
                blocking(move || {
                    let st = query(&state, cmd::EDITOR_STATE, json!({}), None)?;
                    Ok(json!({
                        "active_scene": st.get("active_scene").cloned().unwrap_or(Value::Null),
                        "open_scenes": st.get("open_scenes").cloned().unwrap_or(json!([])),
                    }))
                })
                .await
            },
        ),
    ]
}
