//! Editor node edits inside an agent's change (docs/recovery.md, "An agent's own
//! change"). `set_node_property`, `create_node`, `add_to_group` and `create_nodes` are
//! checked as their dry run would be (`scene.steps` with `check_only`, every step
//! staged so far first, so a `"$N"` and a path to a staged node resolve) and kept in
//! the change as protocol steps, all on the scene open in the editor when the first was
//! staged. The commit sends them as ONE `scene.steps` request named
//! `godot-mcp change <id>` (one undo action) after the change's intent is durable and
//! before any file; if the files then fail and are put back, `editor.undo` with that
//! action name takes it back ([`BridgeHook`]). Reads inside the change see the editor
//! as it is, not the staged edits.

use std::sync::Arc;

use godot_mcp_journal::{ChangeEditorPart, EditorHook, EditorPartOutcome, EditorSent};
use godot_mcp_protocol::ErrorEffect;
use godot_mcp_protocol::commands::{self as cmd, BridgeCommand, Step};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{active_scene, connected, editor_error, editor_timeout, godot_value};
use crate::error::{ErrorCode, ToolError};
use crate::planes::editor::{Bridge, RequestFailure};
use crate::planes::project::{Stage, StageHandle, StagedEditor};
use crate::state::AppState;
use crate::tools::{ToolResult, decode_args};

/// The editor tools whose edits a change stages (the others are refused inside one).
pub(crate) fn stageable(tool: &str) -> bool {
    matches!(
        tool,
        "set_node_property" | "create_node" | "add_to_group" | "create_nodes"
    )
}

// The arguments of the staged tools, as their published schemas give them (checked
// against those before a call gets here).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetPropertyArgs {
    node: String,
    property: String,
    value: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateNodeArgs {
    parent: String,
    #[serde(rename = "type")]
    node_type: String,
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupArgs {
    node: String,
    group: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepsArgs {
    steps: Vec<Step>,
    #[serde(default)]
    scene: Option<String>,
    #[serde(default)]
    save: bool,
}

/// The call's steps as the agent named them, and the fields of its answer.
fn steps_of(tool: &str, args: Value) -> Result<(Vec<Step>, Map<String, Value>), ToolError> {
    let mut out = Map::new();
    let steps = match tool {
        "set_node_property" => {
            let a: SetPropertyArgs = decode_args(args)?;
            out.insert("command".into(), json!(cmd::NODE_SET_PROPERTY));
            out.insert("node".into(), json!(a.node));
            out.insert("property".into(), json!(a.property));
            out.insert("value".into(), a.value.clone());
            vec![Step::Set {
                value: godot_value("value", &a.value)?,
                node: a.node,
                property: a.property,
            }]
        }
        "create_node" => {
            let a: CreateNodeArgs = decode_args(args)?;
            out.insert("command".into(), json!(cmd::NODE_CREATE));
            out.insert("type".into(), json!(a.node_type));
            vec![Step::Create {
                parent: a.parent,
                node_type: a.node_type,
                name: a.name,
            }]
        }
        "add_to_group" => {
            let a: GroupArgs = decode_args(args)?;
            out.insert("command".into(), json!(cmd::NODE_GROUP));
            out.insert("node".into(), json!(a.node));
            out.insert("group".into(), json!(a.group));
            vec![Step::Group {
                node: a.node,
                group: a.group,
            }]
        }
        "create_nodes" => {
            let a: StepsArgs = decode_args(args)?;
            if a.scene.is_some() || a.save {
                return Err(ToolError::invalid_params(
                    if a.save { "save" } else { "scene" },
                    "inside a change, create_nodes edits the scene open in the editor and \
                     commit_change applies it: leave out scene and save (save_scene after \
                     the commit)",
                ));
            }
            if let Some(i) = a.steps.iter().position(|s| !s.is_node_step()) {
                return Err(ToolError::invalid_params(
                    format!("steps[{i}].op"),
                    "create_nodes takes create, set, group and connect steps",
                ));
            }
            out.insert("command".into(), json!(cmd::STEPS));
            out.insert("steps".into(), json!(a.steps.len()));
            a.steps
        }
        other => {
            return Err(ToolError::internal(format!("{other} has no staged form")));
        }
    };
    Ok((steps, out))
}

/// One call's steps with every path that names a node an earlier step of the call
/// creates replaced by that step's `"$N"` (`Slots/Slot1` after `Slots` is made under
/// the root): the add-on resolves paths in the scene as it is before the call.
pub(crate) fn own_paths(steps: Vec<Step>) -> Vec<Step> {
    let none = StagedEditor {
        scene: String::new(),
        steps: Vec::new(),
        created: Vec::new(),
    };
    rebase(&none, steps).0
}

/// `steps` re-based onto the change's steps: a `"$N"` shifted past them, a path to a
/// node a staged create makes replaced by its `"$N"`.
fn rebase(editor: &StagedEditor, steps: Vec<Step>) -> (Vec<Step>, Vec<(String, usize)>) {
    let base = editor.steps.len();
    let mut own: Vec<(String, usize)> = Vec::new();
    let mut out = Vec::with_capacity(steps.len());
    for (i, step) in steps.into_iter().enumerate() {
        let step = match step {
            Step::Create {
                parent,
                node_type,
                name,
            } => {
                let parent = editor.rebase(&parent, base, &own);
                own.push((editor.path_of(&parent, &name, &own), base + i));
                Step::Create {
                    parent,
                    node_type,
                    name,
                }
            }
            other => other.map_nodes(|n| editor.rebase(n, base, &own)),
        };
        out.push(step);
    }
    (out, own)
}

/// Stage one editor call in the change: checked, then kept. The answer says it is
/// staged (`applied: false`) under the change's transaction.
pub(crate) async fn stage_edit(
    state: Arc<AppState>,
    tool: &'static str,
    args: Map<String, Value>,
    stage: StageHandle,
) -> ToolResult {
    let staged = tokio::task::spawn_blocking(move || {
        let (steps, mut out) = steps_of(tool, Value::Object(args))?;
        let scene = active_scene(&state)?
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                crate::rules::Precondition::ActiveScene.error().hint(
                    "Inside a change, editor edits act on the scene open in the editor, \
                     saved under a res:// path.",
                )
            })?;
        let mut s = stage.lock();
        s.check_open()?;
        let id = s.id.to_string();
        let mut editor = s.editor.clone().unwrap_or_else(|| StagedEditor {
            scene: scene.clone(),
            steps: Vec::new(),
            created: Vec::new(),
        });
        if editor.scene != scene {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "{tool} is refused inside change {id}: its editor edits act on {}, and \
                     the editor now has {scene} open; nothing was staged",
                    editor.scene
                ),
            )
            .hint(format!(
                "Open {} again, or commit_change first.",
                editor.scene
            )));
        }
        let (steps, own) = rebase(&editor, steps);
        editor.steps.extend(steps);
        // Checked as the dry run is: every step of the change, nothing changed.
        let check = cmd::Steps {
            action: s.action(),
            steps: editor.steps.clone(),
            check_only: true,
        };
        let bridge = connected(&state)?;
        bridge
            .request(cmd::STEPS, check.params(), editor_timeout(&state))
            .map_err(|f| match f {
                RequestFailure::Editor(e) => editor_error(&e, None),
                RequestFailure::NotSent(_) => crate::rules::Precondition::BridgeConnected.error(),
                RequestFailure::NoAnswer { reason, .. } => ToolError::new(
                    ErrorCode::Timeout,
                    format!("the editor did not answer the check of {tool}: {reason}"),
                ),
            })
            .map_err(|e| {
                let message = format!("{}; nothing was staged", e.message);
                ToolError { message, ..e }
            })?;
        editor.created.extend(own);
        s.editor = Some(editor);
        out.insert("dry_run".into(), json!(false));
        out.insert("applied".into(), json!(false));
        out.insert("scene".into(), json!(scene));
        out.insert("transaction_id".into(), json!(id));
        if tool == "create_nodes" {
            out.insert("action".into(), json!(s.action()));
        } else if !out.contains_key("node") {
            // create_node: the node's path, as later calls in the change may name it.
            if let Some((path, _)) = s.editor.as_ref().and_then(|e| e.created.last()) {
                out.insert("node".into(), json!(path));
            }
        }
        out.insert(
            "hint".into(),
            json!(format!(
                "staged in change {id}: commit_change applies it as one undo action with \
                 the change's files"
            )),
        );
        Ok(Value::Object(out))
    });
    staged
        .await
        .map_err(|e| ToolError::internal(format!("editor task failed: {e}")))?
}

/// The bridge side of a change's editor part: the request its commit sends, and the
/// undo that takes it back.
pub(crate) struct BridgeHook {
    state: Arc<AppState>,
    bridge: Arc<Bridge>,
    id: godot_mcp_protocol::RequestId,
    action: String,
    params: Value,
}

/// The editor part of `stage` and where it goes, or `None` when it has no editor
/// edits. Refused (nothing recorded) when no editor is connected.
pub(crate) fn editor_part(
    state: &Arc<AppState>,
    stage: &Stage,
) -> Result<Option<(ChangeEditorPart, BridgeHook)>, ToolError> {
    let Some(editor) = &stage.editor else {
        return Ok(None);
    };
    let bridge = connected(state).map_err(|e| {
        let message = format!(
            "{}; change {} has editor edits, so nothing was written",
            e.message, stage.id
        );
        ToolError { message, ..e }
    })?;
    let action = stage.action();
    let params = cmd::Steps {
        action: action.clone(),
        steps: editor.steps.clone(),
        check_only: false,
    }
    .params();
    let id = bridge.allocate_id();
    let part = ChangeEditorPart {
        action: action.clone(),
        scene: editor.scene.clone(),
        request_id: id,
        params_sha256: godot_mcp_journal::canonical_request_hash(&params).to_string(),
        steps: editor.steps.len(),
    };
    Ok(Some((
        part,
        BridgeHook {
            state: state.clone(),
            bridge,
            id,
            action,
            params,
        },
    )))
}

impl EditorHook for BridgeHook {
    fn apply(&mut self) -> EditorSent {
        let params = std::mem::take(&mut self.params);
        match self
            .bridge
            .request_with_id(self.id, cmd::STEPS, params, editor_timeout(&self.state))
        {
            Ok(_) => EditorSent::Applied,
            Err(RequestFailure::Editor(e))
                if matches!(
                    e.effect,
                    Some(ErrorEffect::Unchanged | ErrorEffect::RolledBack)
                ) =>
            {
                EditorSent::NotApplied(e.message)
            }
            Err(RequestFailure::NotSent(why)) => {
                EditorSent::NotApplied(format!("nothing was sent: {why}"))
            }
            Err(RequestFailure::Editor(e)) => EditorSent::Unknown(e.message),
            Err(RequestFailure::NoAnswer { reason, .. }) => {
                EditorSent::Unknown(format!("no answer: {reason}"))
            }
        }
    }

    fn undo(&mut self) -> Result<EditorPartOutcome, String> {
        take_back(&self.bridge, &self.action, editor_timeout(&self.state))
            .map_err(|e| e.to_string())
    }
}

/// Settle what the server owes the editor that just connected: every change a
/// previous process left with its files put back and its editor part possibly
/// applied ([`godot_mcp_journal::Journal::owed_editor_parts`]). Undone by its action
/// name, or found never applied → `compensated`; found under later actions →
/// `quarantined`; anything unknown (no answer) → stays open for the next connection.
pub(crate) fn settle_owed(state: &Arc<AppState>, bridge: &Bridge) {
    let owed = match state.journal.lock().owed_editor_parts() {
        Ok(owed) => owed,
        Err(e) => {
            tracing::error!(error = %e, "the journal's owed editor parts could not be read");
            return;
        }
    };
    for (txn, part) in owed {
        let outcome = match take_back(bridge, &part.action, editor_timeout(state)) {
            Ok(outcome) => Ok(outcome),
            Err(TakeBack::Unknown(why)) => {
                tracing::warn!(%txn, action = %part.action, "the change's editor part stays unresolved: {why}");
                continue;
            }
            Err(TakeBack::Refused(why)) => Err(why),
        };
        match state.journal.lock().settle_owed_editor(txn, outcome) {
            Ok(status) => {
                tracing::info!(%txn, status = status.as_str(), "a change's editor part was settled by the editor")
            }
            Err(e) => {
                tracing::warn!(%txn, error = %e, "a change's editor part could not be recorded")
            }
        }
    }
}

/// Why an editor part was not taken back.
#[derive(Debug)]
pub(crate) enum TakeBack {
    /// The editor's history shows it under later actions, or refused the undo: it
    /// cannot be taken back without undoing someone else's edits.
    Refused(String),
    /// No answer, or no editor: nothing is known.
    Unknown(String),
}

impl std::fmt::Display for TakeBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(w) | Self::Unknown(w) => f.write_str(w),
        }
    }
}

/// Take the action `action` back in the connected editor, never guessing: its history
/// names it as the current action → `editor.undo` with that name; names it after the
/// current one (undone already) → undone; does not name it → never applied.
pub(crate) fn take_back(
    bridge: &Bridge,
    action: &str,
    timeout: std::time::Duration,
) -> Result<EditorPartOutcome, TakeBack> {
    let history = bridge
        .request(cmd::HISTORY, cmd::History {}.params(), timeout)
        .map_err(|f| TakeBack::Unknown(format!("editor.history failed: {}", failure_text(&f))))?;
    let actions: Vec<&str> = history
        .get("actions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let current = history
        .get("current_action")
        .and_then(Value::as_i64)
        .unwrap_or(-1);
    let Some(at) = actions.iter().position(|a| *a == action) else {
        return Ok(EditorPartOutcome::NotApplied);
    };
    let at = at as i64;
    if at > current {
        return Ok(EditorPartOutcome::Undone);
    }
    if at < current {
        return Err(TakeBack::Refused(format!(
            "{action} is in the editor's history under later actions; it was not undone"
        )));
    }
    let undo = cmd::Undo {
        action: Some(action.to_owned()),
    };
    bridge
        .request(cmd::UNDO, undo.params(), timeout)
        .map(|_| EditorPartOutcome::Undone)
        .map_err(|f| {
            let why = format!("editor.undo: {}", failure_text(&f));
            match f {
                RequestFailure::Editor(_) => TakeBack::Refused(why),
                _ => TakeBack::Unknown(why),
            }
        })
}

fn failure_text(f: &RequestFailure) -> String {
    match f {
        RequestFailure::NotSent(why) => format!("not sent ({why})"),
        RequestFailure::NoAnswer { reason, .. } => format!("no answer ({reason})"),
        RequestFailure::Editor(e) => e.message.clone(),
    }
}
