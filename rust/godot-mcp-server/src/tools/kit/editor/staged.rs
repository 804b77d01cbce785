//! Editor node edits inside an agent's change (docs/recovery.md, "An agent's own
//! change"). The tools defined with a staged form (`ToolDef::staged`:
//! `set_node_property`, `create_node`, `add_to_group`, `create_nodes`) are checked as
//! their dry run would be (`scene.steps` with `check_only`, every step
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
use serde_json::{Map, Value, json};

use super::{connected, edited_scene, editor_error, editor_timeout};
use crate::error::{ErrorCode, ToolError};
use crate::planes::editor::{Bridge, RequestFailure};
use crate::planes::project::{Stage, StageHandle, StagedEditor};
use crate::state::AppState;
use crate::tools::{StageFn, ToolResult};

/// The refusal when the editor no longer edits the scene a change's edits were staged
/// on (`scene`: the one it edits now); `what` says what was not done.
fn moved(editor: &StagedEditor, scene: &str, id: &str, what: &str) -> Option<ToolError> {
    (editor.scene != scene).then(|| {
        let now = if scene.is_empty() {
            "an unsaved scene"
        } else {
            scene
        };
        ToolError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "change {id}'s editor edits were staged on {}, and the editor now has {now} \
                 open: {what}",
                editor.scene
            ),
        )
        .hint(format!(
            "Open {} again (open_scene), then retry; or abandon_change.",
            editor.scene
        ))
    })
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

/// Stage one editor call in the change: checked, then kept. `form` is the tool's staged
/// form ([`ToolDef::staged`](crate::tools::ToolDef::staged)). The answer says it is
/// staged (`applied: false`) under the change's transaction.
pub(crate) async fn stage_edit(
    state: Arc<AppState>,
    tool: &'static str,
    form: StageFn,
    args: Map<String, Value>,
    stage: StageHandle,
) -> ToolResult {
    let staged = tokio::task::spawn_blocking(move || {
        let (steps, mut out) = form(Value::Object(args))?;
        let (scene, root_id) = edited_scene(&state)?
            .filter(|(s, _)| !s.is_empty())
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
        if let Some(e) = moved(
            &editor,
            &scene,
            &id,
            &format!("{tool} is refused; nothing was staged"),
        ) {
            return Err(e);
        }
        let (steps, own) = rebase(&editor, steps);
        editor.steps.extend(steps);
        // Checked as the dry run is: every step of the change, nothing changed.
        let check = cmd::Steps {
            action: s.action(),
            steps: editor.steps.clone(),
            check_only: true,
            scene: Some(editor.scene.clone()),
            root_id,
            check_in: None,
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
        if out.get("command").and_then(Value::as_str) == Some(cmd::STEPS) {
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

/// The edited scene and its root, when it is the one `stage`'s editor edits were
/// staged on; otherwise the refusal, saying `what` was not done.
fn still_edited(
    state: &AppState,
    stage: &Stage,
    what: &str,
) -> Result<(String, Option<i64>), ToolError> {
    let id = stage.id.to_string();
    let (scene, root_id) = edited_scene(state)
        .map_err(|e| {
            let message = format!(
                "{}; change {id} has editor edits, so nothing was written",
                e.message
            );
            ToolError { message, ..e }
        })?
        .unwrap_or_default();
    match stage
        .editor
        .as_ref()
        .and_then(|editor| moved(editor, &scene, &id, what))
    {
        Some(e) => Err(e),
        None => Ok((scene, root_id)),
    }
}

/// Whether the editor still edits the scene `stage`'s editor edits were staged on,
/// asked before a commit ends the change: refused, the change stays open (the agent
/// opens the scene again and commits). Nothing is asked when it has no editor edits.
pub(crate) fn check_still_edited(state: &AppState, stage: &Stage) -> Result<(), ToolError> {
    if stage.editor.is_none() {
        return Ok(());
    }
    still_edited(
        state,
        stage,
        "commit_change is refused; the change stays open and nothing was written",
    )
    .map(|_| ())
}

/// The bridge side of a change's editor part: the request its commit sends, and the
/// undo that takes it back.
pub(crate) struct BridgeHook {
    state: Arc<AppState>,
    bridge: Arc<Bridge>,
    id: godot_mcp_protocol::RequestId,
    action: String,
    /// The scene the edits were staged on, and its root when the commit sent them.
    scene: String,
    root_id: Option<i64>,
    params: Value,
}

/// The editor part of `stage` and where it goes, or `None` when it has no editor
/// edits. Refused (nothing recorded) when no editor is connected or it no longer edits
/// the scene the edits were staged on; the request then names that scene and its root
/// as they are now, so the add-on refuses it on any other.
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
    // The scene the edits were staged on (the edited one, as just asked) and its root
    // now: the add-on refuses the request on any other, should it change meanwhile.
    let (_, root_id) = still_edited(
        state,
        stage,
        "commit_change is refused; nothing was written",
    )?;
    let scene = editor.scene.clone();
    let action = stage.action();
    let params = cmd::Steps {
        action: action.clone(),
        steps: editor.steps.clone(),
        check_only: false,
        scene: Some(scene.clone()),
        root_id,
        check_in: None,
    }
    .params();
    let id = bridge.allocate_id();
    let part = ChangeEditorPart {
        action: action.clone(),
        scene: editor.scene.clone(),
        request_id: id,
        params_sha256: godot_mcp_journal::canonical_request_hash(&params).to_string(),
        steps: editor.steps.len(),
        root_id,
    };
    Ok(Some((
        part,
        BridgeHook {
            state: state.clone(),
            bridge,
            id,
            action,
            scene,
            root_id,
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
            // Applied there, by its own word: a reply naming another scene (or none)
            // proves nothing.
            Ok(v) if v.get("scene").and_then(Value::as_str) == Some(self.scene.as_str()) => {
                EditorSent::Applied
            }
            Ok(v) => EditorSent::Unknown(format!(
                "the editor's reply names the scene {}, not {}",
                v.get("scene").unwrap_or(&Value::Null),
                self.scene
            )),
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
        let on = Owed {
            action: &self.action,
            scene: &self.scene,
            root_id: self.root_id,
        };
        take_back(&self.bridge, &on, editor_timeout(&self.state)).map_err(|e| e.to_string())
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
        let on = Owed {
            action: &part.action,
            scene: &part.scene,
            root_id: part.root_id,
        };
        let outcome = match take_back(bridge, &on, editor_timeout(state)) {
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

/// An applied (or possibly applied) editor part: its action, the scene it was sent to
/// and that scene's root then (`None`: an intent written before roots were recorded).
pub(crate) struct Owed<'a> {
    pub action: &'a str,
    pub scene: &'a str,
    pub root_id: Option<i64>,
}

/// Where the editor's history (an `editor.history` reply) puts an owed action.
#[derive(Debug, PartialEq)]
enum InHistory {
    /// The current action: `editor.undo` by its name takes it back.
    Current,
    /// Undone already (after the current one).
    Undone,
    /// Not in the history of the root it was applied on: never applied.
    Absent,
}

/// Read `history` for `on`, never guessing: only a reply for `on`'s scene, on the root
/// the action was applied on, with its `actions` and `current_action`, is a proof. A
/// reply for another scene or with a field missing is [`TakeBack::Unknown`]; the scene
/// on another root (closed and opened again: the history the action was in is gone)
/// is [`TakeBack::Refused`], since nothing can ever tell.
fn in_history(history: &Value, on: &Owed<'_>) -> Result<InHistory, TakeBack> {
    let unknown = |what: &str| {
        TakeBack::Unknown(format!(
            "editor.history answered {what}; nothing is known of {}",
            on.action
        ))
    };
    let scene = history.get("scene").and_then(Value::as_str);
    if scene != Some(on.scene) {
        return Err(unknown(&format!(
            "for {}, not {}",
            scene.unwrap_or("no scene"),
            on.scene
        )));
    }
    if let Some(want) = on.root_id {
        match history.get("root_id").and_then(Value::as_i64) {
            None => return Err(unknown("without the scene's root")),
            Some(root) if root != want => {
                return Err(TakeBack::Refused(format!(
                    "{} was closed and opened again since {} was sent to it: the undo \
                     history it went into is gone, so whether the scene holds its edits \
                     cannot be known",
                    on.scene, on.action
                )));
            }
            Some(_) => {}
        }
    }
    let (Some(actions), Some(current)) = (
        history.get("actions").and_then(Value::as_array),
        history.get("current_action").and_then(Value::as_i64),
    ) else {
        return Err(unknown("without its actions and current action"));
    };
    let Some(at) = actions.iter().position(|a| a.as_str() == Some(on.action)) else {
        return Ok(InHistory::Absent);
    };
    let at = at as i64;
    match at.cmp(&current) {
        std::cmp::Ordering::Greater => Ok(InHistory::Undone),
        std::cmp::Ordering::Equal => Ok(InHistory::Current),
        std::cmp::Ordering::Less => Err(TakeBack::Refused(format!(
            "{} is in the editor's history under later actions; it was not undone",
            on.action
        ))),
    }
}

/// Take `on` back in the connected editor, never guessing: the history of its scene
/// names it as the current action → `editor.undo` with that name, on that scene and
/// root; names it after the current one (undone already) → undone; does not name it →
/// never applied. Another scene edited now → unknown (it waits for the scene).
pub(crate) fn take_back(
    bridge: &Bridge,
    on: &Owed<'_>,
    timeout: std::time::Duration,
) -> Result<EditorPartOutcome, TakeBack> {
    let ask = cmd::History {
        scene: Some(on.scene.to_owned()),
    };
    let history = bridge
        .request(cmd::HISTORY, ask.params(), timeout)
        .map_err(|f| TakeBack::Unknown(format!("editor.history failed: {}", failure_text(&f))))?;
    match in_history(&history, on)? {
        InHistory::Absent => return Ok(EditorPartOutcome::NotApplied),
        InHistory::Undone => return Ok(EditorPartOutcome::Undone),
        InHistory::Current => {}
    }
    let undo = cmd::Undo {
        action: Some(on.action.to_owned()),
        scene: Some(on.scene.to_owned()),
        root_id: on.root_id,
    };
    bridge
        .request(cmd::UNDO, undo.params(), timeout)
        .map(|_| EditorPartOutcome::Undone)
        .map_err(|f| {
            let why = format!("editor.undo: {}", failure_text(&f));
            match f {
                RequestFailure::Editor(e)
                    if e.code != godot_mcp_protocol::ErrorCode::SceneMismatch =>
                {
                    TakeBack::Refused(why)
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "res://a.tscn";

    fn owed(root_id: Option<i64>) -> Owed<'static> {
        Owed {
            action: "godot-mcp change x",
            scene: A,
            root_id,
        }
    }

    /// Guards against (issue 41, item 3): the history of whatever scene is open read as
    /// the proof that a change's editor part was never applied. Only a reply for the
    /// part's scene, on the root it was applied on, with both fields, proves anything.
    #[test]
    fn only_the_history_of_the_parts_own_scene_and_root_is_a_proof() {
        let reply = |scene: &str, root: i64, actions: Value, current: i64| {
            json!({"scene": scene, "root_id": root, "actions": actions,
                   "current_action": current, "version": 3})
        };
        let ours = json!(["godot-mcp change x"]);
        let other = json!(["Move node"]);
        // Its own scene and root: a proof either way.
        assert_eq!(
            in_history(&reply(A, 5, ours.clone(), 0), &owed(Some(5))).unwrap(),
            InHistory::Current
        );
        assert_eq!(
            in_history(&reply(A, 5, ours.clone(), -1), &owed(Some(5))).unwrap(),
            InHistory::Undone
        );
        assert_eq!(
            in_history(&reply(A, 5, other.clone(), 0), &owed(Some(5))).unwrap(),
            InHistory::Absent
        );
        // Another scene's history does not name the action: unknown, never "absent".
        assert!(matches!(
            in_history(&reply("res://b.tscn", 5, other.clone(), 0), &owed(Some(5))),
            Err(TakeBack::Unknown(_))
        ));
        // The scene reopened: its history is another one; nothing can ever tell.
        assert!(matches!(
            in_history(&reply(A, 6, other.clone(), 0), &owed(Some(5))),
            Err(TakeBack::Refused(_))
        ));
        // A field missing is unknown, not an empty history or "nothing current".
        for missing in ["scene", "root_id", "actions", "current_action"] {
            let mut r = reply(A, 5, other.clone(), 0);
            r.as_object_mut().unwrap().remove(missing);
            assert!(
                matches!(in_history(&r, &owed(Some(5))), Err(TakeBack::Unknown(_))),
                "without {missing}"
            );
        }
        // An intent written before roots were recorded: the scene alone.
        assert_eq!(
            in_history(&reply(A, 9, other, 0), &owed(None)).unwrap(),
            InHistory::Absent
        );
    }
}
