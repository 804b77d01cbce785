//! Editor-plane tools: live edits of the scene open in the Godot editor, executed by the
//! godot_mcp add-on through `EditorUndoRedoManager` (spec: safety-model.md, recovery.md).
//!
//! Every tool plans first: the bridge must be connected (`bridge_connected`, or the
//! version precondition that kept it from connecting), a scene must be open
//! (`active_scene`), the node must exist (`RESOURCE_NOT_FOUND`), and the add-on's
//! read-only persistence probe (`node.persistence`) supplies the verdict the real run will
//! stamp — the add-on answers it with the same rule its handlers use, so a dry run and the
//! real run agree.
//!
//! Scene-level commands (scenes, resources, batch, undo/redo) get their verdict from the same
//! rule (`godot_mcp_protocol::persistence`) at plan time, fed the editor's active scene:
//! the add-on stamps the real reply with that rule too.
//!
//! Applying is an `editor_runtime` journal transaction: the intent (with the request id) is
//! durable before the request is sent; the reply decides the terminal state. A command that
//! may save a file records the file's pre-state (absent, or its hash) in the intent and its
//! post-state after the reply; an error reply is `compensated` only when the editor reports
//! itself unchanged or rolled back AND the file's hash equals the pre-state, otherwise
//! `quarantined` with a reason that says what is known (`godot_mcp_journal::derive_refusal`).
//! Only a compensated error tells the agent that nothing was changed. A lost answer is never
//! resent: the result is a `TIMEOUT` carrying `may_have_applied: true`, and the transaction
//! stays unresolved — quarantined (writes blocked) when the command may have saved a file.

mod around;
mod journaled;
mod staged;
mod tool;

pub(crate) use around::{in_scene, in_scene_args, saved_diff, scene_text};
pub(crate) use journaled::settle_late_replies;
pub(crate) use journaled::{run_effect_as, run_effect_files_as};
pub(crate) use staged::{check_still_edited, editor_part, own_paths, stage_edit};
pub(crate) use tool::{NoArgs, NodeArgs};
pub(crate) use tool::{
    SceneLevel, authoring_plan, blocking_as, editor_meta, editor_read, meta, wire_name,
};

use std::sync::Arc;
use std::time::Duration;

use godot_mcp_formats::variant::Value as GodotValue;
use godot_mcp_protocol::BridgeError;
use godot_mcp_protocol::commands::{self as cmd, BridgeCommand};
use godot_mcp_protocol::persistence;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ErrorCode, ToolError};
pub(crate) use crate::honesty::{EditReply, EditVerdict};
use crate::honesty::{MayHaveApplied, absent_when_none};
use crate::planes::editor::{Bridge, RequestFailure};
use crate::planes::process::Session;
use crate::rules::Precondition;
use crate::state::AppState;
use crate::tools::Plan;
use serde::de::DeserializeOwned;

/// The reply fields of an editor command: each optional (a dry run's probe lacks
/// them), left out when absent, and so never `null` in the published schema. A field
/// the add-on may send as null also takes `#[serde(deserialize_with = "present")]`, so
/// that null stays null.
macro_rules! reply_fields {
    ($(#[$sm:meta])* $vis:vis struct $name:ident {
        $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$sm])*
        #[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        $vis struct $name {
            $(
                #[serde(default, skip_serializing_if = "Option::is_none")]
                #[schemars(transform = $crate::honesty::absent_when_none)]
                $(#[$fm])*
                pub $field: Option<$ty>,
            )*
        }
    };
}
pub(crate) use reply_fields;

/// How long a tool waits for the editor (`GODOT_MCP_EDITOR_TIMEOUT_MS`, read into
/// the server's `Config` at start).
pub(crate) fn editor_timeout(state: &AppState) -> Duration {
    Duration::from_millis(state.config.editor_timeout_ms)
}

/// The connected bridge, or the precondition that says why there is none.
pub(crate) fn connected(state: &AppState) -> Result<Arc<Bridge>, ToolError> {
    // A managed editor still loading is waited for (bounded), not refused.
    wait_for_loading_editor(state);
    state
        .editor
        .bridge_status()
        .require(&Precondition::BridgeConnected)?;
    state
        .editor
        .bridge()
        .cloned()
        .ok_or_else(|| Precondition::BridgeConnected.error())
}

/// An editor error reply as a tool error.
fn editor_error(e: &BridgeError, node: Option<&str>) -> ToolError {
    use godot_mcp_protocol::ErrorCode as B;
    match e.code {
        B::NotFound => match node {
            Some(n) => {
                let mut err = Precondition::NodeExists { path: n.into() }.error();
                err.message = e.message.clone();
                err
            }
            None => ToolError::not_found(e.message.clone()),
        },
        B::NoActiveScene => Precondition::ActiveScene.error(),
        B::SceneMismatch => {
            let mut err = Precondition::ActiveScene.error().hint(
                "Another scene is being edited now (opened by the user or another session): \
                 open_scene the one you meant, then retry.",
            );
            err.message = e.message.clone();
            err
        }
        B::ExecutorDisabled => Precondition::BridgeConnected
            .error()
            .hint("The godot_mcp add-on is loaded but disabled: enable it in Project > Project Settings > Plugins."),
        B::InvalidParams => ToolError::new(ErrorCode::InvalidParams, e.message.clone()),
        // Whether anything changed is for the caller to say: only a proven pre-state
        // (run_effect) may tell the agent so.
        _ => ToolError::new(ErrorCode::EditorError, e.message.clone())
            .hint("Godot refused the command. Check the names and types (get_scene_tree)."),
    }
}

/// The editor's edited scene (`None`: no scene is open).
pub(crate) fn active_scene(state: &AppState) -> Result<Option<String>, ToolError> {
    let st = ask(state, &cmd::EditorState {}, None)?;
    Ok(st
        .get("active_scene")
        .and_then(Value::as_str)
        .map(String::from))
}

/// The edited scene and its root's instance id (`None`: no scene is open; no id: an
/// add-on that does not report it).
pub(crate) fn edited_scene(state: &AppState) -> Result<Option<(String, Option<i64>)>, ToolError> {
    let st = ask(state, &cmd::EditorState {}, None)?;
    Ok(st
        .get("active_scene")
        .and_then(Value::as_str)
        .map(|s| (s.to_owned(), st.get("root_id").and_then(Value::as_i64))))
}

/// The refusal of a command that needs the edited scene's file when it has none.
pub(crate) fn never_saved() -> ToolError {
    Precondition::ActiveScene.error().hint(
        "The edited scene has never been saved to a file: save it under a res:// path in the \
         editor first.",
    )
}

/// A read-only request: the typed command `p` (its params are the protocol's struct).
/// `node`: the node an error names.
pub(crate) fn ask<P: BridgeCommand>(
    state: &AppState,
    p: &P,
    node: Option<&str>,
) -> Result<Value, ToolError> {
    let (command, bridge) = (P::METHOD, connected(state)?);
    match bridge.request(command, p.params(), editor_timeout(state)) {
        Ok(v) => Ok(v),
        Err(RequestFailure::Editor(e)) => Err(editor_error(&e, node)),
        Err(RequestFailure::NotSent(_)) => Err(Precondition::BridgeConnected.error()),
        Err(RequestFailure::NoAnswer { timed_out, reason }) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("the editor did not answer {command}: {reason}"),
        )
        .hint("A read changes nothing; try again once the editor is responsive.")
        .details(details_json(&LostRead {
            honesty: MayHaveApplied {
                may_have_applied: false,
            },
            timed_out,
        }))),
    }
}

/// [`ask`], with the reply decoded into its typed form `R` (see [`from_reply`]).
pub(crate) fn query_as<P: BridgeCommand, R: DeserializeOwned + Serialize>(
    state: &AppState,
    p: &P,
    node: Option<&str>,
) -> Result<R, ToolError> {
    match ask(state, p, node)? {
        Value::Object(reply) => from_reply(P::METHOD, reply),
        other => Err(ToolError::internal(format!(
            "the editor's reply to {} is not an object: {other}",
            P::METHOD
        ))),
    }
}

/// An agent's JSON value as the Godot value the bridge carries. A value the model
/// refuses is the caller's error, refused before anything is sent.
pub(crate) fn godot_value(param: &str, v: &Value) -> Result<GodotValue, ToolError> {
    GodotValue::from_json(v).map_err(|e| ToolError::invalid_params(param, e.to_string()))
}

/// The details of a read that got no answer.
#[derive(Serialize)]
struct LostRead {
    #[serde(flatten)]
    honesty: MayHaveApplied,
    timed_out: bool,
}

/// Error details as JSON (these structs always serialize).
fn details_json<T: Serialize>(details: &T) -> Value {
    serde_json::to_value(details).unwrap_or(Value::Null)
}

/// An editor reply (or probe answer) in its typed form `R`. A field the reply carries
/// and `R` does not declare is an internal error, never silently dropped.
pub(crate) fn from_reply<R: serde::de::DeserializeOwned + serde::Serialize>(
    command: &str,
    reply: Map<String, Value>,
) -> Result<R, ToolError> {
    let keys: Vec<String> = reply.keys().cloned().collect();
    let typed: R = serde_json::from_value(Value::Object(reply)).map_err(|e| {
        ToolError::internal(format!(
            "the editor's reply to {command} is not of its type: {e}"
        ))
    })?;
    if let Ok(Value::Object(back)) = serde_json::to_value(&typed)
        && let Some(lost) = keys.iter().find(|k| !back.contains_key(*k))
    {
        return Err(ToolError::internal(format!(
            "the editor's reply to {command} carries `{lost}`, which its type does not declare"
        )));
    }
    Ok(typed)
}

/// The add-on's persistence verdict for `op` on `node` (also checks the scene and node).
fn probe(state: &AppState, node: &str, op: &str) -> Result<Map<String, Value>, ToolError> {
    let v = ask(
        state,
        &cmd::NodePersistence {
            node: node.into(),
            op: op.into(),
        },
        Some(node),
    )?;
    let mut out = Map::new();
    for k in ["persisted", "reason", "hint", "undoable", "scene"] {
        if let Some(x) = v.get(k) {
            out.insert(k.into(), x.clone());
        }
    }
    Ok(out)
}

/// What a node command's plan reports before it runs.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeCommand {
    pub command: &'static str,
    pub node: String,
}

/// A plan for a node command, its reply typed as `R`. A dry run asks the add-on's
/// persistence probe; a real run sends the command alone, and the add-on checks the
/// scene and the node and stamps the verdict by the same rule in the same frame (one
/// round trip, not two; no window between a check and the edit). `bridge_connected` is
/// checked here, before anything is recorded. The preview (`persisted`, `reason`,
/// `hint`, `undoable`, `scene`) decodes into `R` too, so `R`'s other fields are optional.
pub(crate) fn node_plan_as<P, R>(
    state: Arc<AppState>,
    op: &'static str,
    node: String,
    p: &P,
) -> Result<Plan<NodeCommand, R>, ToolError>
where
    P: BridgeCommand + Clone + Send + 'static,
    R: DeserializeOwned + Serialize + 'static,
{
    connected(&state)?;
    let (command, p) = (P::METHOD, p.clone());
    let effect = NodeCommand {
        command,
        node: node.clone(),
    };
    let (probe_state, probe_node) = (state.clone(), node.clone());
    Ok(Plan {
        effect,
        apply: Box::new(move |_| run_effect_as(&state, &p, None, Some(&node))),
        preview: Some(Box::new(move || {
            from_reply(command, probe(&probe_state, &probe_node, op)?)
        })),
    })
}

// ---------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------

/// For a reply field that may be absent (a dry run's probe lacks it) or present as
/// null: present, whatever it holds, is `Some`, so a null stays null (`Option` alone
/// reads a null as absent, and `from_reply` would refuse the reply). Every editor
/// reply type uses this one.
pub(crate) fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A reply with no fields of its own.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NoReplyFields {}

reply_fields!(
    /// The node a node command acted on (a created or duplicated node's own path).
    pub(crate) struct NodeField {
        node: String,
    }
);

reply_fields!(
    pub(crate) struct CreatedNode {
        node: String,
        #[serde(rename = "type")]
        node_type: String,
    }
);

reply_fields!(
    /// A property as the editor reads it back after setting it (typed value JSON).
    pub(crate) struct PropertySet {
        node: String,
        property: String,
        #[serde(deserialize_with = "present")]
        value: Value,
    }
);

reply_fields!(
    pub(crate) struct ScriptAttached {
        node: String,
        script: String,
    }
);

reply_fields!(
    pub(crate) struct SignalConnection {
        from: String,
        signal: String,
        to: String,
        method: String,
    }
);

reply_fields!(
    pub(crate) struct ResourcePropertySet {
        path: String,
        property: String,
        #[serde(deserialize_with = "present")]
        value: Value,
    }
);

reply_fields!(
    /// What the add-on's batch reply adds. Its `applied` (how many sets ran) is replaced in
    /// the tool's result by the policy's `applied: true`.
    pub(crate) struct BatchApplied {
        applied: usize,
        nodes: usize,
    }
);

reply_fields!(
    /// The action undone or redone and the history's version after it.
    pub(crate) struct UndoStep {
        action: String,
        version: u64,
    }
);

/// What a scene-level command's plan reports before it runs: the verdict from the one
/// rule, and the tool's own fields `T`.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SceneCommand<T> {
    pub command: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub scene: Option<String>,
    #[serde(flatten)]
    pub verdict: EditVerdict,
    #[serde(flatten)]
    pub fields: T,
}

/// The size of a property batch.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BatchSize {
    pub(crate) sets: usize,
    pub(crate) nodes: usize,
}

/// A node property in the edited scene, as typed value JSON.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NodeProperty {
    pub node: String,
    pub property: String,
    pub value: Value,
}

/// The edited scene's undo history.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct History {
    pub scene: String,
    /// The scene root's instance id (another one once the scene is reopened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<i64>,
    pub version: u64,
    pub has_undo: bool,
    pub has_redo: bool,
    /// Index of the current action (-1: none).
    pub current_action: i64,
    pub actions: Vec<String>,
}

/// The undo rule of a batch, decided here and nowhere else, and sent in the command (the
/// add-on executes it): ONE undo action, unless the batch sets more than
/// [`cmd::UNDO_BATCH_LIMIT`] distinct nodes (spec: safety-model.md), which bypasses the
/// history. Also answers the number of distinct nodes.
pub(crate) fn batch_undo<'a>(nodes: impl Iterator<Item = &'a str>) -> (cmd::UndoPolicy, usize) {
    let n = nodes.collect::<std::collections::BTreeSet<_>>().len();
    let policy = if n > cmd::UNDO_BATCH_LIMIT {
        cmd::UndoPolicy::Bypass
    } else {
        cmd::UndoPolicy::OneAction
    };
    (policy, n)
}

/// A node command's plan with its reply typed: [`node_plan_as`] with the reply's own
/// fields `T` and where it happened `S` (see [`EditReply`]).
pub(crate) fn node_edit<P: BridgeCommand + Clone + Send + 'static, T, S>(
    state: Arc<AppState>,
    op: &'static str,
    node: String,
    p: P,
) -> Result<Plan<NodeCommand, EditReply<T, S>>, ToolError>
where
    T: DeserializeOwned + Serialize + 'static,
    S: DeserializeOwned + Serialize + 'static,
{
    node_plan_as(state, op, node, &p)
}

/// A plan for a scene-level command: the editor state is the precondition check, and
/// the verdict comes from the one rule (a tool that knows better replaces the plan's
/// `effect.verdict.undo`); `fields` adds the tool's own.
pub(crate) fn scene_plan<T, R, P: BridgeCommand + Send + 'static>(
    state: Arc<AppState>,
    p: P,
    scene: Option<String>,
    needs_active_scene: bool,
    fields: T,
) -> Result<Plan<SceneCommand<T>, EditReply<R>>, ToolError>
where
    R: DeserializeOwned + Serialize + 'static,
{
    let command = P::METHOD;
    let active = active_scene(&state)?;
    if needs_active_scene && active.is_none() {
        return Err(Precondition::ActiveScene.error());
    }
    let Some(effect) = P::KIND.scene_effect() else {
        return Err(ToolError::internal(format!(
            "{command} is not a scene-level command"
        )));
    };
    let verdict: EditVerdict =
        persistence::verdict_of(effect, active.as_deref().unwrap_or("")).into();
    let scene = scene.or(active);
    if P::MAY_SAVE_FILE && scene.as_deref().is_none_or(str::is_empty) {
        // Nothing to hash, so nothing could prove an error harmless: refused up front.
        return Err(never_saved());
    }
    let effect = SceneCommand {
        command,
        scene: scene.clone(),
        verdict,
        fields,
    };
    Plan::new(effect, move |_| run_effect_as(&state, &p, scene, None))
}

// A managed editor still loading (start_editor launched it; its add-on has not said
// hello yet): the wait every editor call makes, and what start_editor asks of it.

pub(crate) fn managed_editor(state: &AppState) -> Option<Arc<Session>> {
    state
        .process
        .sessions()
        .into_iter()
        .find(|s| s.purpose == "editor" && s.ended().is_none())
}

/// Until how long after its launch an editor call waits for a managed editor that is
/// still loading (its add-on has not said hello yet).
pub(crate) const EDITOR_LOAD_WAIT: Duration = Duration::from_secs(120);

/// Whether the project has the godot_mcp add-on (whose hello makes the editor ready).
pub(crate) fn addon_installed(state: &AppState) -> bool {
    state
        .project
        .root()
        .join("addons/godot_mcp/plugin.cfg")
        .is_file()
}

pub(crate) fn bridge_connected(state: &AppState) -> bool {
    matches!(
        state.editor.bridge_status(),
        crate::rules::BridgeStatus::Connected { .. }
    )
}

/// Blocks (a bridge call's thread, never an async one) while a managed editor this
/// server started is still loading: no add-on connected yet, the add-on installed, the
/// editor running and launched less than [`EDITOR_LOAD_WAIT`] ago. So the first editor
/// call after start_editor waits for the editor instead of failing.
pub(crate) fn wait_for_loading_editor(state: &AppState) {
    if bridge_connected(state) || !addon_installed(state) {
        return;
    }
    let Some(editor) = managed_editor(state) else {
        return;
    };
    let deadline = editor.released_at() + EDITOR_LOAD_WAIT;
    while std::time::Instant::now() < deadline
        && editor.ended().is_none()
        && !bridge_connected(state)
    {
        // The bridge has no hello signal to wait on from here; its status is a lock read.
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdict() -> Map<String, Value> {
        let v = persistence::verdict(true, "res://main.tscn");
        match serde_json::to_value(v).unwrap() {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    /// A property set to null reads back as `"value": null`; the typed reply keeps it
    /// (absent and null are different answers), and an undeclared field is refused.
    #[test]
    fn a_null_value_is_kept_and_an_undeclared_field_refused() {
        let mut reply = verdict();
        reply.insert("node".into(), json!("A"));
        reply.insert("property".into(), json!("texture"));
        reply.insert("value".into(), Value::Null);
        let typed: EditReply<PropertySet> =
            from_reply(cmd::NODE_SET_PROPERTY, reply.clone()).unwrap();
        let back = serde_json::to_value(&typed).unwrap();
        assert_eq!(back, Value::Object(reply.clone()));
        reply.insert("extra".into(), json!(1));
        let e = from_reply::<EditReply<PropertySet>>(cmd::NODE_SET_PROPERTY, reply).unwrap_err();
        assert!(e.message.contains("`extra`"), "{}", e.message);
    }

    /// The server's batch rule: counted in distinct nodes, 20 is one undo action, 21
    /// bypasses the history; many sets on few nodes stay undoable.
    #[test]
    fn the_batch_undo_rule_counts_distinct_nodes() {
        let names = |n: usize, per: usize| -> Vec<String> {
            (0..n)
                .flat_map(|i| std::iter::repeat_n(format!("N{i}"), per))
                .collect()
        };
        let rule = |v: &[String]| batch_undo(v.iter().map(String::as_str));
        assert_eq!(rule(&names(1, 1)), (cmd::UndoPolicy::OneAction, 1));
        assert_eq!(rule(&names(20, 3)), (cmd::UndoPolicy::OneAction, 20));
        assert_eq!(rule(&names(21, 1)), (cmd::UndoPolicy::Bypass, 21));
        assert_eq!(rule(&names(2, 50)), (cmd::UndoPolicy::OneAction, 2));
    }
}
