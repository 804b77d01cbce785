//! The editor domain's own tools (`edits.rs`): node edits, scene files, resource
//! properties, scene batches and the editor's undo history. The bridge plumbing they and
//! every other domain's editor tools use (asking the editor, a node edit's plan, applying a
//! command as a journal transaction, the staged form inside a change, the scene open/save
//! wrapper) is the kit's: `tools/kit/editor/`.

mod edits;
pub(crate) use edits::*;

use std::sync::Arc;

use godot_mcp_protocol::commands::{self as cmd, BridgeCommand};
use godot_mcp_protocol::persistence;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::honesty::{EditReply, InScene, Undo};
use crate::respath::ResPath;
use crate::rules::{Precondition, Toolset};
use crate::state::AppState;
use crate::tools::kit::editor::{
    BatchApplied, BatchSize, CreatedNode, History, NoReplyFields, NodeField, NodeProperty,
    PropertySet, ResourcePropertySet, SceneCommand, ScriptAttached, SignalConnection, UndoStep,
    ask, batch_undo, godot_value, node_edit, query_as, scene_plan,
};
use crate::tools::{Plan, ToolDef, ToolMeta};

/// The plan of a scene command that takes only an optional path (the edited scene when
/// absent) and needs an edited scene: close, reload.
pub(crate) fn path_scene_plan<P>(
    state: Arc<AppState>,
    a: OptScenePathArgs,
) -> Result<Plan<SceneCommand<NoReplyFields>, EditReply<NoReplyFields>>, ToolError>
where
    P: BridgeCommand + From<Option<String>> + Send + 'static,
{
    let path = a.path.map(|p| p.to_string());
    let p = P::from(path.clone());
    scene_plan(state, p, path, true, NoReplyFields {})
}
