//! The shapes every editor tool takes, whatever its domain: its meta (the effect kind
//! follows the class), a live read, an authoring command judged at scene level, an
//! argument enum's wire name, a blocking bridge call off the async threads, and the two
//! argument structs many share (no arguments; one node).

use std::sync::Arc;

use godot_mcp_protocol::commands::BridgeCommand;
use godot_mcp_protocol::persistence;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{active_scene, never_saved, query_as, run_effect_as};
use crate::error::ToolError;
use crate::honesty::{EditReply, EditVerdict, InTransaction};
use crate::rules::class::{Class, OneStep};
use crate::rules::{EffectKind, Precondition, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::{Call, Plan, ToolDef, ToolMeta};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeArgs {
    /// Node path from the scene root ("." is the root).
    pub(crate) node: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// The meta of an editor-plane tool: a read has no effect, anything else is an
/// editor-runtime effect (recipes::meta and [`editor_meta`] are this one).
pub(crate) const fn meta<C: Class>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    class: C,
    toolset: Toolset,
) -> ToolMeta<C> {
    let effect = match C::CLASS {
        SafetyClass::ReadOnly => None,
        _ => Some(EffectKind::EditorRuntime),
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

/// The meta of an editor-plane tool (the effect kind follows the class).
pub(crate) fn editor_meta<C: Class>(
    toolset: Toolset,
    class: C,
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<C> {
    meta(name, title, description, class, toolset)
}

/// A read-only tool that sends the command `request(args)` builds to the editor (with
/// the node an error names); its answer is the result, typed as `R`.
pub(crate) fn editor_read<A, P, R>(
    meta: ToolMeta<impl OneStep>,
    request: fn(&A) -> (P, Option<String>),
) -> ToolDef
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    P: BridgeCommand + Send + 'static,
    R: DeserializeOwned + Serialize + JsonSchema + Send + 'static,
{
    ToolDef::new(meta, move |Call { state, args: a, .. }: Call<A>| {
        let (p, node) = request(&a);
        async move { blocking_as(move || query_as::<P, R>(&state, &p, node.as_deref())).await }
    })
}

/// An argument enum's name on the wire, for a command that takes it as a string (the
/// add-on names the valid ones when it is not): its serde name.
pub(crate) fn wire_name<T: Serialize>(v: T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// What an authoring command judged at scene level reports before it runs: the verdict
/// of the one rule, the command, the edited scene.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SceneLevel {
    #[serde(flatten)]
    pub verdict: EditVerdict,
    pub command: &'static str,
    /// The edited scene; none when a resource file is edited with no scene open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
}

/// A plan for an authoring command judged at scene level: it needs an edited scene (its
/// undo history holds the action; a resource file's save goes without one, see above),
/// and its verdict comes from the one rule
/// (the command's `BridgeCommand::KIND`), which the add-on stamps
/// its reply with too.
/// `file`: the file it saves (default: the edited scene), whose pre-state the journal
/// records when the command may save one.
pub(crate) fn authoring_plan<P, T>(
    state: Arc<AppState>,
    p: P,
    file: Option<String>,
) -> Result<Plan<SceneLevel, EditReply<T, InTransaction>>, ToolError>
where
    P: BridgeCommand + Send + 'static,
    T: DeserializeOwned + Serialize + 'static,
{
    let command = P::METHOD;
    let effect = P::KIND
        .scene_effect()
        .ok_or_else(|| ToolError::internal(format!("{command} has no scene-level verdict")))?;
    let active = active_scene(&state)?;
    // A resource file's edit (a Theme .tres) with no scene open: Godot's undo histories
    // belong to open scenes, so the add-on sets and saves it outside any (its verdict
    // says so); the journal records the file's pre-state as for any save.
    let (file, effect) = match (file, &active) {
        (Some(f), None) if effect == persistence::Effect::ResourceSave => {
            (f, persistence::Effect::ResourceWrite)
        }
        (_, None) => return Err(Precondition::ActiveScene.error()),
        (f, Some(a)) => (f.unwrap_or_else(|| a.clone()), effect),
    };
    if file.is_empty() {
        return Err(never_saved());
    }
    let effect = SceneLevel {
        verdict: persistence::verdict_of(effect, &file).into(),
        command,
        scene: active,
    };
    Plan::new(effect, move |_| run_effect_as(&state, &p, Some(file), None))
}

/// Run a blocking bridge call off the async threads.
pub(crate) async fn blocking_as<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, ToolError> + Send + 'static,
) -> Result<R, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::internal(format!("editor task failed: {e}")))?
}
