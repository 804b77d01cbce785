//! The editor-plane tools themselves: node edits, scene files, resource properties,
//! scene batches and the editor's undo history, each planned and applied through the
//! plumbing in `mod.rs`.

use super::{
    BatchApplied, BatchSize, BridgeCommand, CreatedNode, Deserialize, DeserializeOwned, History,
    InScene, JsonSchema, NoReplyFields, NodeField, NodeProperty, Precondition, PropertySet,
    ResPath, ResourcePropertySet, ScriptAttached, Serialize, SignalConnection, ToolDef, ToolError,
    ToolMeta, Toolset, Undo, UndoStep, Value, ask, batch_undo, cmd, godot_value, node_edit,
    path_scene_plan, persistence, query_as, scene_plan,
};
use crate::tools::Call;
use crate::tools::kit::editor::{NoArgs, NodeArgs, blocking_as, meta};
use crate::tools::reply_map;
use serde_json::json;

/// The first Godot whose EditorInterface has close_scene.
const CLOSE_SCENE_SINCE: &str = "4.5";

// ---------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateNodeArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Godot class, e.g. Sprite2D.
    #[serde(rename = "type")]
    node_type: String,
    /// Node name.
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RenameArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// The new name.
    new_name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MoveArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// New parent's path.
    new_parent: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DuplicateArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// Name of the copy (default: Godot's).
    #[serde(default)]
    new_name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetPropertyArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// Property name, e.g. position.
    property: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetPropertyArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// Property name, e.g. position.
    property: String,
    /// Read by the property's type: [10, 20] (Vector2), "#ff0000" or "red" (Color),
    /// Godot's text ("Rect2(0, 0, 16, 16)"), enum names, a res:// path (Resource), or new:
    /// {"$type": "Resource", "class": "CircleShape2D", "properties": {…}}; $type objects too.
    value: Value,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenePathArgs {
    /// The .tscn.
    path: ResPath,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptScenePathArgs {
    /// The open scene (default: the edited one).
    #[serde(default)]
    pub(super) path: Option<ResPath>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateSceneArgs {
    /// The new .tscn.
    path: ResPath,
    /// Root node's Godot class, e.g. Node2D.
    root_type: String,
    /// Root node's name (default: from the file name).
    #[serde(default)]
    root_name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttachScriptArgs {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// The script file.
    script: ResPath,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalArgs {
    /// Emitting node's path.
    from: String,
    /// The signal, e.g. pressed.
    signal: String,
    /// Receiving node's path.
    to: String,
    /// Receiver's method.
    method: String,
}

impl From<SignalArgs> for cmd::Connection {
    fn from(a: SignalArgs) -> Self {
        Self {
            from: a.from,
            signal: a.signal,
            to: a.to,
            method: a.method,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResourcePropertyArgs {
    /// The .tres file.
    path: ResPath,
    /// Property name.
    property: String,
    /// JSON, or a Godot type as in set_node_property.
    value: Value,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchSet {
    /// Node path from the scene root ("." is the root).
    node: String,
    /// Property name.
    property: String,
    /// JSON, or a Godot type as in set_node_property.
    value: Value,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchArgs {
    /// The property sets.
    sets: Vec<BatchSet>,
}

// ---------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------

/// The node a node command acts on: where the reply says it happened, and what a dry
/// run probes.
trait Target {
    fn target(&self) -> &str;
}

macro_rules! target {
    ($($command:ty => $($field:tt).+;)*) => {
        $(impl Target for $command {
            fn target(&self) -> &str {
                &self.$($field).+
            }
        })*
    };
}

target! {
    cmd::NodeCreate => parent;
    cmd::NodeRename => node;
    cmd::NodeMove => node;
    cmd::NodeDuplicate => node;
    cmd::NodeDelete => node;
    cmd::NodeSetProperty => 0.node;
    cmd::ScriptAttach => node;
    cmd::ScriptDetach => node;
    cmd::SignalConnect => 0.from;
    cmd::SignalDisconnect => 0.from;
}

/// A node edit tool: `build` turns its arguments into the command, which names the
/// node it acts on; the reply's own fields are `T` (see [`node_edit`]).
fn node_tool<A, T, P>(
    meta: ToolMeta<impl crate::rules::class::Plans>,
    op: &'static str,
    build: fn(A) -> Result<P, ToolError>,
) -> ToolDef
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    T: DeserializeOwned + Serialize + JsonSchema + 'static,
    P: BridgeCommand + Target + Clone + Send + 'static,
{
    ToolDef::planned(meta, move |state, a: A| {
        let p = build(a)?;
        let node = p.target().to_owned();
        node_edit::<P, T, InScene>(state, op, node, p)
    })
}

pub(crate) fn tools() -> Vec<ToolDef> {
    [
        node_tools(),
        property_tools(),
        script_signal_tools(),
        file_tools(),
        history_tools(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Nodes: create, rename, move, duplicate, delete.
fn node_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    use Toolset::*;
    vec![
        node_tool::<_, CreatedNode, _>(
            meta(
                "create_node",
                "Create a node",
                "Add a node of a Godot class to the edited scene (one undo action; \
                  unsaved until save_scene).",
                Mutating,
                SceneEdit,
            ),
            "create",
            |a: CreateNodeArgs| {
                Ok(cmd::NodeCreate {
                    parent: a.parent,
                    node_type: a.node_type,
                    name: a.name,
                })
            },
        )
        .staged(|a: CreateNodeArgs| {
            let out = reply_map(json!({"command": cmd::NODE_CREATE, "type": a.node_type}));
            let step = cmd::Step::Create {
                parent: a.parent,
                node_type: a.node_type,
                name: a.name,
            };
            Ok((vec![step], out))
        }),
        node_tool::<_, NodeField, _>(
            meta(
                "rename_node",
                "Rename a node",
                "Rename a node in the edited scene (one undo action).",
                Mutating,
                SceneEdit,
            ),
            "rename",
            |a: RenameArgs| {
                Ok(cmd::NodeRename {
                    node: a.node,
                    new_name: a.new_name,
                })
            },
        ),
        node_tool::<_, NodeField, _>(
            meta(
                "move_node",
                "Move a node",
                "Reparent a node in the edited scene (one undo action).",
                Mutating,
                SceneEdit,
            ),
            "move",
            |a: MoveArgs| {
                Ok(cmd::NodeMove {
                    node: a.node,
                    new_parent: a.new_parent,
                })
            },
        ),
        node_tool::<_, NodeField, _>(
            meta(
                "duplicate_node",
                "Duplicate a node",
                "Duplicate a node (and its children) beside it (one undo action).",
                Mutating,
                SceneEdit,
            ),
            "duplicate",
            |a: DuplicateArgs| {
                Ok(cmd::NodeDuplicate {
                    node: a.node,
                    new_name: a.new_name,
                })
            },
        ),
        node_tool::<_, NodeField, _>(
            meta(
                "delete_node",
                "Delete a node",
                "Delete a node and its children from the edited scene (one undo action).",
                Destructive,
                SceneEdit,
            ),
            "delete",
            |a: NodeArgs| Ok(cmd::NodeDelete { node: a.node }),
        ),
    ]
}

/// Node properties: get and set one, set many as one undo action.
fn property_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Mutating, ReadOnly};
    use Toolset::*;
    vec![
        ToolDef::new(
            meta(
                "get_node_property",
                "Get a node property",
                "A node property of the edited scene (live editor), as typed JSON.",
                ReadOnly,
                SceneRead,
            ),
            |Call { state, args: a, .. }: Call<GetPropertyArgs>| async move {
                blocking_as(move || {
                    let p = cmd::NodeGetProperty {
                        node: a.node,
                        property: a.property,
                    };
                    query_as::<_, NodeProperty>(&state, &p, Some(&p.node))
                })
                .await
            },
        ),
        node_tool::<_, PropertySet, _>(
            meta(
                "set_node_property",
                "Set a node property",
                "Set a node property in the edited scene (one undo action).",
                Mutating,
                SceneEdit,
            ),
            "set_property",
            |a: SetPropertyArgs| {
                Ok(cmd::NodeSetProperty(cmd::PropertySet {
                    value: godot_value("value", &a.value)?,
                    node: a.node,
                    property: a.property,
                }))
            },
        )
        .staged(|a: SetPropertyArgs| {
            let out = reply_map(json!({
                "command": cmd::NODE_SET_PROPERTY,
                "node": a.node,
                "property": a.property,
                "value": a.value,
            }));
            let step = cmd::Step::Set {
                value: godot_value("value", &a.value)?,
                node: a.node,
                property: a.property,
            };
            Ok((vec![step], out))
        }),
        ToolDef::planned(
            meta(
                "apply_scene_batch",
                "Apply a batch of property sets",
                "Set many node properties in the edited scene as one undo action \
                  (over 20 nodes: no undo, undoable: false).",
                Mutating,
                SceneEdit,
            ),
            |state, a: BatchArgs| {
                if a.sets.is_empty() {
                    return Err(ToolError::invalid_params(
                        "sets",
                        "a batch needs at least one set",
                    ));
                }
                let (policy, nodes) = batch_undo(a.sets.iter().map(|s| s.node.as_str()));
                let undo = Undo {
                    undoable: policy.undoable(),
                    undo_hint: (!policy.undoable()).then(|| {
                        format!(
                            "More than {} nodes: applied without the editor's undo history.",
                            cmd::UNDO_BATCH_LIMIT
                        )
                    }),
                };
                let size = BatchSize {
                    sets: a.sets.len(),
                    nodes,
                };
                let sets = a
                    .sets
                    .into_iter()
                    .enumerate()
                    .map(|(i, s)| {
                        Ok(cmd::PropertySet {
                            value: godot_value(&format!("sets[{i}].value"), &s.value)?,
                            node: s.node,
                            property: s.property,
                        })
                    })
                    .collect::<Result<_, ToolError>>()?;
                let mut plan = scene_plan::<_, BatchApplied, _>(
                    state,
                    cmd::BatchApply { sets, undo: policy },
                    None,
                    true,
                    size,
                )?;
                plan.effect.verdict.undo = undo;
                Ok(plan)
            },
        ),
    ]
}

/// Scripts on nodes, and signal connections.
fn script_signal_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    use Toolset::*;
    vec![
        ToolDef::planned(
            meta(
                "attach_script",
                "Attach a script",
                "Attach a script file to a node in the edited scene (one undo action); a .cs \
                  must be named as its class and derive from the node's class.",
                Mutating,
                ScriptEdit,
            ),
            |state, a: AttachScriptArgs| {
                if a.script.extension().as_deref() == Some("cs") {
                    // The node's class, from the live editor (node.properties answers it).
                    let probe = cmd::NodeProperties {
                        node: a.node.clone(),
                        list: true,
                        offset: 0,
                        limit: Some(1),
                    };
                    let reply = ask(&state, &probe, Some(&a.node))?;
                    if let Some(class) = reply.get("class").and_then(Value::as_str) {
                        crate::tools::kit::cs_script::check_cs_attach(
                            &state, &a.script, &a.node, class,
                        )?;
                    }
                }
                let p = cmd::ScriptAttach {
                    node: a.node,
                    script: a.script.to_string(),
                };
                let node = p.target().to_owned();
                node_edit::<_, ScriptAttached, InScene>(state, "attach_script", node, p)
            },
        ),
        node_tool::<_, NodeField, _>(
            meta(
                "detach_script",
                "Detach a script",
                "Remove a node's script in the edited scene (one undo action).",
                Destructive,
                ScriptEdit,
            ),
            "detach_script",
            |a: NodeArgs| Ok(cmd::ScriptDetach { node: a.node }),
        ),
        node_tool::<_, SignalConnection, _>(
            meta(
                "connect_signal",
                "Connect a signal",
                "Connect a node's signal to a method of another node in the edited \
                  scene, saved with the scene (one undo action).",
                Mutating,
                SceneEdit,
            ),
            "connect_signal",
            |a: SignalArgs| Ok(cmd::SignalConnect(a.into())),
        ),
        node_tool::<_, SignalConnection, _>(
            meta(
                "disconnect_signal",
                "Disconnect a signal",
                "Disconnect a signal connection in the edited scene (one undo action).",
                Destructive,
                SceneEdit,
            ),
            "disconnect_signal",
            |a: SignalArgs| Ok(cmd::SignalDisconnect(a.into())),
        ),
    ]
}

/// Resource and scene files: set a .tres property; open, create, save, close, reload a scene.
fn file_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    use Toolset::*;
    vec![
        ToolDef::planned(
            meta(
                "set_resource_property",
                "Set a resource property",
                "Set a property of a .tres resource through the editor (undo-tracked) \
                  and save it.",
                Mutating,
                ResourceEdit,
            ),
            |state, a: ResourcePropertyArgs| {
                let p = cmd::ResourceSetProperty {
                    path: a.path.to_string(),
                    property: a.property,
                    value: godot_value("value", &a.value)?,
                };
                let scene = Some(a.path.to_string());
                scene_plan::<_, ResourcePropertySet, _>(state, p, scene, false, NoReplyFields {})
            },
        ),
        ToolDef::planned(
            meta(
                "open_scene",
                "Open a scene",
                "Open a .tscn in the editor as the edited scene.",
                Mutating,
                SceneFiles,
            ),
            |state, a: ScenePathArgs| {
                let path = a.path.to_string();
                scene_plan::<_, NoReplyFields, _>(
                    state,
                    cmd::SceneOpen { path: path.clone() },
                    Some(path),
                    false,
                    NoReplyFields {},
                )
            },
        ),
        ToolDef::planned(
            meta(
                "create_scene",
                "Create a scene",
                "Create a .tscn with a root node of a Godot class, save it and open it \
                  in the editor.",
                Destructive,
                SceneFiles,
            ),
            |state, a: CreateSceneArgs| {
                let path = a.path.to_string();
                if state.project.resolve("path", &a.path)?.exists() {
                    return Err(ToolError::invalid_params(
                        "path",
                        format!("{path} already exists"),
                    ));
                }
                let p = cmd::SceneCreate {
                    path: path.clone(),
                    root_type: a.root_type,
                    root_name: a.root_name,
                };
                scene_plan::<_, NoReplyFields, _>(state, p, Some(path), false, NoReplyFields {})
            },
        ),
        ToolDef::planned(
            meta(
                "save_scene",
                "Save the scene",
                "Save the edited scene (or the open scene at path) to its .tscn.",
                Destructive,
                SceneFiles,
            ),
            |state, a: OptScenePathArgs| {
                let path = a.path.map(|p| p.to_string());
                // The rule's undo verdict for a save, with what to do about it.
                let undo = Undo {
                    undoable: persistence::verdict_of(persistence::Effect::SceneSave, "").undoable,
                    undo_hint: Some(
                        "Saving is not on the undo history; the edits before it are.".into(),
                    ),
                };
                let p = cmd::SceneSave { path: path.clone() };
                let mut plan =
                    scene_plan::<_, NoReplyFields, _>(state, p, path, true, NoReplyFields {})?;
                plan.effect.verdict.undo = undo;
                Ok(plan)
            },
        ),
        ToolDef::planned(
            meta(
                "close_scene",
                "Close a scene",
                "Close the edited scene (or the open scene at path) without saving. Godot \
                 4.5+.",
                Destructive,
                SceneFiles,
            ),
            |state, a: OptScenePathArgs| {
                // EditorInterface.close_scene exists from Godot 4.5: on 4.4 it is refused
                // before anything is sent, naming what 4.4 can do instead.
                state
                    .editor
                    .bridge_status()
                    .require(&Precondition::GodotVersion {
                        required: CLOSE_SCENE_SINCE.into(),
                        found: None,
                    })
                    .map_err(|e| match e.required.as_deref() {
                        Some("godot_version") => e.hint(
                            "Godot 4.4 cannot close a scene from a plugin: reload_scene \
                             discards its unsaved changes, open_scene switches to another.",
                        ),
                        _ => e,
                    })?;
                path_scene_plan::<cmd::SceneClose>(state, a)
            },
        ),
        ToolDef::planned(
            meta(
                "reload_scene",
                "Reload a scene",
                "Reload the edited scene from its .tscn, discarding unsaved changes.",
                Destructive,
                SceneFiles,
            ),
            path_scene_plan::<cmd::SceneReload>,
        ),
    ]
}

/// The edited scene's undo history.
fn history_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Mutating, ReadOnly};
    use Toolset::*;
    vec![
        ToolDef::planned(
            meta(
                "editor_undo",
                "Undo in the editor",
                "Undo the edited scene's last action (agent's or human's).",
                Mutating,
                UndoRedo,
            ),
            |state, _a: NoArgs| {
                scene_plan::<_, UndoStep, _>(
                    state,
                    cmd::Undo::default(),
                    None,
                    true,
                    NoReplyFields {},
                )
            },
        ),
        ToolDef::planned(
            meta(
                "editor_redo",
                "Redo in the editor",
                "Redo the edited scene's last undone action.",
                Mutating,
                UndoRedo,
            ),
            |state, _a: NoArgs| {
                scene_plan::<_, UndoStep, _>(state, cmd::Redo {}, None, true, NoReplyFields {})
            },
        ),
        ToolDef::new(
            meta(
                "editor_history",
                "Editor undo history",
                "The edited scene's undo history: version, can undo/redo, action names.",
                ReadOnly,
                Journal,
            ),
            |Call { state, .. }: Call<NoArgs>| async move {
                blocking_as(move || query_as::<_, History>(&state, &cmd::History::default(), None))
                    .await
            },
        ),
    ]
}
