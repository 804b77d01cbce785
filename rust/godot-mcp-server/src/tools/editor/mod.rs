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

mod edits;

pub use edits::*;

use std::sync::Arc;
use std::time::Duration;

use godot_mcp_formats::variant::Value as GodotValue;
use godot_mcp_journal::durable::FileStamp;
use godot_mcp_journal::{
    EditorIntent, EditorLeft, EditorProof, EditorSettle, EditorTxnError, FileState, NamedFile,
    SavedFile, TxnStatus, canonical_request_hash,
};
use godot_mcp_protocol::commands::{self as cmd, BridgeCommand};
use godot_mcp_protocol::persistence;
use godot_mcp_protocol::{BridgeError, ErrorEffect};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{MayHaveApplied, Persistence, TimedOut, Undo, absent_when_none};
use crate::planes::editor::{Bridge, RequestFailure};
use crate::respath::ResPath;
use crate::rules::{EffectKind, Precondition, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::{CallFlags, Plan, ToolDef, ToolMeta};
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
pub fn editor_timeout(state: &AppState) -> Duration {
    Duration::from_millis(state.config.editor_timeout_ms)
}

/// The connected bridge, or the precondition that says why there is none.
pub(crate) fn connected(state: &AppState) -> Result<Arc<Bridge>, ToolError> {
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

/// The bridge error's code as the journal spells it.
fn reply_code(e: &BridgeError) -> String {
    serde_json::to_value(e.code)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "error".into())
}

/// What the add-on said an error left in the editor, as the journal records it.
fn editor_left(e: &BridgeError) -> EditorLeft {
    match e.effect {
        Some(ErrorEffect::Unchanged) => EditorLeft::Unchanged,
        Some(ErrorEffect::RolledBack) => EditorLeft::RolledBack,
        Some(ErrorEffect::Changed) => EditorLeft::Changed,
        None => EditorLeft::Unreported,
    }
}

/// The file a command that may save one acts on, resolved inside the project (symlinks
/// included), and its state now. Refused before anything is recorded or sent when there
/// is no such file name or it cannot be read: without a pre-state no error reply could
/// ever be proven harmless.
fn saved_file(
    state: &AppState,
    command: &str,
    scene: Option<&str>,
) -> Result<(std::path::PathBuf, FileState), ToolError> {
    let Some(res) = scene.filter(|s| !s.is_empty()) else {
        let e = never_saved();
        let hint = format!(
            "{} Nothing was sent.",
            e.hint.as_deref().unwrap_or_default()
        );
        return Err(e.hint(hint));
    };
    let path = ResPath::parse(res)
        .map_err(|r| ToolError::new(ErrorCode::PathRefused, format!("{command}: {r}")))?;
    let abs = state.project.resolve("path", &path)?;
    let pre = godot_mcp_journal::durable::read_state(&abs).map_err(|e| {
        ToolError::io(res, &e).hint(format!(
            "{command} may write {res}; its current state must be read first (to prove an \
             error left it as it was). Nothing was sent."
        ))
    })?;
    Ok((abs, pre))
}

/// The editor's edited scene (`None`: no scene is open).
pub(crate) fn active_scene(state: &AppState) -> Result<Option<String>, ToolError> {
    let st = ask(state, &cmd::EditorState {}, None)?;
    Ok(st
        .get("active_scene")
        .and_then(Value::as_str)
        .map(String::from))
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

/// The details of an editor command that did not succeed: its transaction, the state
/// the journal derived for it, and whether it may have applied.
#[derive(Serialize)]
struct RefusedDetails<'a> {
    transaction_id: String,
    status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(flatten)]
    honesty: MayHaveApplied,
}

/// The details of a command whose answer was lost.
#[derive(Serialize)]
struct LostDetails<'a> {
    #[serde(flatten)]
    honesty: &'a TimedOut,
    transaction_id: String,
    transaction_status: &'a str,
    timed_out: bool,
}

/// Error details as JSON (these structs always serialize).
fn details_json<T: Serialize>(details: &T) -> Value {
    serde_json::to_value(details).unwrap_or(Value::Null)
}

fn gate_error(e: EditorTxnError) -> ToolError {
    match e {
        EditorTxnError::GateClosed { quarantined } => {
            let ids: Vec<String> = quarantined.iter().map(ToString::to_string).collect();
            ToolError::new(
                ErrorCode::WriteGateClosed,
                format!("writes are refused: quarantined transaction(s) {} must be resolved first", ids.join(", ")),
            )
            .required("write_gate_open")
            .hint("An operator resolves them with `godot-mcp transaction repair` (docs/recovery.md); list_transactions shows why.")
            .details(json!({"quarantined": ids}))
        }
        EditorTxnError::NotReconciled => {
            ToolError::new(ErrorCode::WriteGateClosed, e.to_string()).required("write_gate_open")
        }
        other => {
            tracing::error!(error = %other, "journal failed for an editor transaction");
            ToolError::internal("the journal failed while recording an editor transaction")
        }
    }
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

/// Apply the typed command `p` as an `editor_runtime` transaction, the reply decoded
/// into its typed form `R` (see [`from_reply`]).
pub(crate) fn run_effect_as<P: BridgeCommand, R: DeserializeOwned + Serialize>(
    state: &AppState,
    p: &P,
    scene: Option<String>,
    node: Option<&str>,
) -> Result<R, ToolError> {
    run_effect_files_as(state, p, scene, node, &[])
}

/// A file named in the intent of a command that may write several: where it is on disk,
/// and what was read before the request was sent.
struct Named {
    abs: std::path::PathBuf,
    file: NamedFile,
}

/// Every file in `files` (`res://…`), resolved inside the project and read (state and
/// stamp) before anything is recorded or sent: refused when one cannot be read.
fn named_files(state: &AppState, command: &str, files: &[String]) -> Result<Vec<Named>, ToolError> {
    files
        .iter()
        .map(|res| {
            let path = ResPath::parse(res)
                .map_err(|r| ToolError::new(ErrorCode::PathRefused, format!("{command}: {r}")))?;
            let abs = state.project.resolve("path", &path)?;
            let read = || -> std::io::Result<_> {
                let stamp = FileStamp::read(&abs)?;
                let pre = godot_mcp_journal::durable::read_state(&abs)?;
                Ok((pre, stamp))
            };
            let (pre_state, pre_stamp) = read().map_err(|e| {
                ToolError::io(res, &e).hint(format!(
                    "{command} may write {res}; its current state must be read first (to \
                     prove afterwards what was written). Nothing was sent."
                ))
            })?;
            Ok(Named {
                abs,
                file: NamedFile {
                    path: res.clone(),
                    pre_state,
                    pre_stamp,
                },
            })
        })
        .collect()
}

/// Each named file as the disk shows it now; `expected`: the files the editor's reply
/// says it writes.
fn saved_files(named: &[Named], expected: &[String]) -> Vec<SavedFile> {
    named
        .iter()
        .map(|n| {
            let now = (|| -> std::io::Result<_> {
                let stamp = FileStamp::read(&n.abs)?;
                let post = godot_mcp_journal::durable::read_state(&n.abs)?;
                // Read the stamp again: a write between the two reads is not hidden.
                let again = FileStamp::read(&n.abs)?;
                Ok((post, stamp, again))
            })();
            let (post_state, written) = match now {
                Ok((post, stamp, again)) => (
                    Some(post),
                    post != n.file.pre_state
                        || stamp != n.file.pre_stamp
                        || again != n.file.pre_stamp,
                ),
                Err(_) => (None, true),
            };
            SavedFile {
                path: n.file.path.clone(),
                pre_state: n.file.pre_state,
                post_state,
                written,
                expected: expected.contains(&n.file.path),
            }
        })
        .collect()
}

/// The `scenes` of an editor reply: the files it says it writes.
fn reply_scenes(v: &Value) -> Vec<String> {
    v.get("scenes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// [`run_effect_as`] for a command that may write every file in `files` (`res://…`, may
/// be empty): each is named in the intent with its pre-state and proven from disk after
/// the reply ([`godot_mcp_journal::derive_files`]); an `ok` whose files did not all land
/// is an error, compensated or quarantined as the disk shows.
pub(crate) fn run_effect_files_as<P: BridgeCommand, R: DeserializeOwned + Serialize>(
    state: &AppState,
    p: &P,
    scene: Option<String>,
    node: Option<&str>,
    files: &[String],
) -> Result<R, ToolError> {
    let (command, params) = (P::METHOD, p.params());
    let bridge = connected(state)?;
    let may_save_file = cmd::may_save_file(command);
    let named = named_files(state, command, files)?;
    let file = if may_save_file && named.is_empty() {
        Some(saved_file(state, command, scene.as_deref())?)
    } else {
        None
    };
    let id = bridge.allocate_id();
    let intent = EditorIntent {
        cmd: command.into(),
        request_id: id,
        may_save_file,
        scene,
        params_sha256: canonical_request_hash(&params).to_string(),
        pre_state: file.as_ref().map(|(_, pre)| *pre),
        files: named.iter().map(|n| n.file.clone()).collect(),
    };
    // The file's state once the reply is in (`None`: unreadable, so nothing is proven).
    let post_state = || {
        file.as_ref()
            .and_then(|(abs, _)| godot_mcp_journal::durable::read_state(abs).ok())
    };
    let txn = state
        .journal
        .lock()
        .begin_editor(&intent, "editor", command)
        .map_err(gate_error)?;
    let outcome = bridge.request_with_id(id, command, params, editor_timeout(state));
    let settle = |s: EditorSettle| -> Result<TxnStatus, ToolError> {
        state
            .journal
            .lock()
            .settle_editor(txn, &intent, s)
            .map_err(gate_error)
    };
    match outcome {
        Ok(v) => {
            let proof = EditorProof {
                undoable: v.get("undoable").and_then(Value::as_bool),
                post_state: post_state(),
                files: saved_files(&named, &reply_scenes(&v)),
                ..EditorProof::reply(id, "ok")
            };
            let (derived, why) = godot_mcp_journal::derive_files(&intent, &proof, None);
            let status = settle(EditorSettle::Applied(proof))?;
            if !named.is_empty() && status != TxnStatus::Committed {
                debug_assert_eq!(derived, status);
                let why = why.unwrap_or_default();
                let e = ToolError::new(
                    ErrorCode::EditorError,
                    format!("the editor answered {command} ok, but not every file landed: {why}"),
                );
                let e = if status == TxnStatus::Compensated {
                    e.hint(
                        "Nothing was written. Check that the files are writable, then save again.",
                    )
                } else {
                    e.hint(
                        "Writes are blocked until the files are checked and the transaction \
                         resolved with `godot-mcp transaction repair` (list_transactions shows it).",
                    )
                };
                return Err(e.details(details_json(&RefusedDetails {
                    transaction_id: txn.to_string(),
                    status: status.as_str(),
                    reason: Some(&why),
                    honesty: MayHaveApplied {
                        may_have_applied: status != TxnStatus::Compensated,
                    },
                })));
            }
            if status == TxnStatus::Quarantined {
                return Err(ToolError::new(
                    ErrorCode::Io,
                    format!(
                        "the editor answered {command} ok, but its file could not be read \
                         afterwards: the write is not proven"
                    ),
                )
                .hint(
                    "Writes are blocked until the file is checked and the transaction \
                     resolved with `godot-mcp transaction repair` (list_transactions shows it).",
                )
                .details(details_json(&RefusedDetails {
                    transaction_id: txn.to_string(),
                    status: TxnStatus::Quarantined.as_str(),
                    reason: None,
                    honesty: MayHaveApplied {
                        may_have_applied: true,
                    },
                })));
            }
            let mut out = match v {
                Value::Object(m) => m,
                Value::Null => Map::new(),
                other => Map::from_iter([("result".to_string(), other)]),
            };
            out.insert("transaction_id".into(), json!(txn.to_string()));
            from_reply(command, out)
        }
        Err(RequestFailure::Editor(e)) => {
            let proof = EditorProof {
                editor_left: Some(editor_left(&e)),
                post_state: post_state(),
                files: saved_files(&named, &[]),
                ..EditorProof::reply(id, reply_code(&e))
            };
            let (status, why) = if named.is_empty() {
                godot_mcp_journal::derive_refusal(
                    &intent,
                    &EditorProof {
                        pre_state: intent.pre_state,
                        ..proof.clone()
                    },
                )
            } else {
                let (s, why) = godot_mcp_journal::derive_files(&intent, &proof, proof.editor_left);
                (s, why.unwrap_or_default())
            };
            let settled = settle(EditorSettle::Refused(proof))?;
            debug_assert_eq!(settled, status);
            Err(refusal_error(&e, node, txn, settled, &why))
        }
        Err(RequestFailure::NotSent(reason)) => {
            settle(EditorSettle::NotSent(EditorProof::reply(id, "not_sent")))?;
            let mut e = Precondition::BridgeConnected.error();
            e.message = format!("{} Nothing was sent: {reason}.", e.message);
            Err(e)
        }
        Err(RequestFailure::NoAnswer { timed_out, reason }) => {
            let status = settle(EditorSettle::Lost {
                reason: reason.clone(),
            })?;
            let honesty = TimedOut {
                may_have_applied: true,
                hint: "The editor may still run (or may have run) this command: it is never resent. \
                       Re-read the state (get_scene_tree, get_node_property) before deciding anything."
                    .into(),
            };
            let message = if timed_out {
                format!("the editor did not answer {command} in time ({reason})")
            } else {
                format!(
                    "the connection to the editor was lost before it answered {command} ({reason})"
                )
            };
            let details = details_json(&LostDetails {
                honesty: &honesty,
                transaction_id: txn.to_string(),
                transaction_status: if status == TxnStatus::Open {
                    "unresolved"
                } else {
                    status.as_str()
                },
                timed_out,
            });
            Err(ToolError::new(ErrorCode::Timeout, message)
                .hint(honesty.hint.clone())
                .details(details))
        }
    }
}

/// The tool error for an editor error reply, by the state the journal derived: only a
/// compensated one says nothing was changed; otherwise the hint is the derived reason
/// (what is known of the editor and the file, and what to do).
fn refusal_error(
    e: &BridgeError,
    node: Option<&str>,
    txn: godot_mcp_journal::TxnId,
    status: TxnStatus,
    why: &str,
) -> ToolError {
    let base = editor_error(e, node);
    let shown = if status == TxnStatus::Open {
        "unresolved"
    } else {
        status.as_str()
    };
    let details = details_json(&RefusedDetails {
        transaction_id: txn.to_string(),
        status: shown,
        reason: Some(why),
        honesty: MayHaveApplied {
            may_have_applied: status != TxnStatus::Compensated,
        },
    });
    match status {
        TxnStatus::Compensated => {
            let hint = match &base.hint {
                Some(h) => format!("Nothing was changed ({why}). {h}"),
                None => format!("Nothing was changed ({why})."),
            };
            base.hint(hint).details(details)
        }
        TxnStatus::Quarantined => ToolError::new(ErrorCode::EditorError, e.message.clone())
            .hint(format!(
                "The project may have been changed: {why}. Writes are blocked until then \
                 (list_transactions shows the row)."
            ))
            .details(details),
        _ => ToolError::new(ErrorCode::EditorError, e.message.clone())
            .hint(format!(
                "The editor may still hold a change: {why}. It blocks no writes."
            ))
            .details(details),
    }
}

/// A reply that arrives after its request gave up settles the unresolved transaction from
/// it (`ok` → committed, an error → compensated). Only open rows are touched: a quarantined
/// one (the command may have written a file) stays for the operator, and nothing is resent.
///
/// A late reply is matched by its request id, so the bridge first numbers its requests
/// above every id the journal recorded (an earlier server's rows may still be open).
pub fn settle_late_replies(state: &Arc<AppState>, bridge: &Bridge) {
    match state.journal.lock().last_editor_request_id() {
        Ok(last) => bridge.number_above(last),
        // Then the journal refuses every editor transaction: none is sent.
        Err(e) => {
            tracing::error!(error = %e, "the journal's last editor request id could not be read")
        }
    }
    let weak = Arc::downgrade(state);
    bridge.on_late_reply(Arc::new(move |id, outcome| {
        let Some(state) = weak.upgrade() else { return };
        let mut journal = state.journal.lock();
        let Ok(Some((txn, intent))) = journal.unresolved_editor_txn(id) else {
            return;
        };
        if intent.may_save_file {
            return;
        }
        let settle = match outcome {
            godot_mcp_protocol::Outcome::Ok(v) => EditorSettle::Applied(EditorProof {
                undoable: v.get("undoable").and_then(Value::as_bool),
                ..EditorProof::reply(id, "ok (late)")
            }),
            godot_mcp_protocol::Outcome::Error(e) => EditorSettle::Refused(EditorProof {
                editor_left: Some(editor_left(e)),
                ..EditorProof::reply(id, format!("{} (late)", reply_code(e)))
            }),
        };
        match journal.settle_editor(txn, &intent, settle) {
            Ok(status) => tracing::info!(%txn, status = status.as_str(), "editor transaction settled by a late reply"),
            Err(e) => tracing::warn!(%txn, error = %e, "a late reply could not settle its transaction"),
        }
    }));
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

/// The verdict an editor edit carries: whether it is on disk (`persisted`, `reason`,
/// `hint`) and whether the editor's undo history holds it (`undoable`, `undo_hint`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EditVerdict {
    #[serde(flatten)]
    pub persistence: Persistence,
    #[serde(flatten)]
    pub undo: Undo,
}

impl From<persistence::Verdict> for EditVerdict {
    fn from(v: persistence::Verdict) -> Self {
        Self {
            persistence: Persistence {
                persisted: v.persisted,
                reason: v.reason,
                hint: v.hint,
            },
            undo: Undo {
                undoable: v.undoable,
                undo_hint: None,
            },
        }
    }
}

/// An editor command's reply as a tool reports it (and, for a node command's dry run,
/// the persistence probe's answer): the verdict the add-on stamps, the scene, the
/// transaction a real run made, and the command's own fields `T` (all optional: a
/// preview has none of them).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EditorReply<T> {
    #[serde(flatten)]
    pub verdict: EditVerdict,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub scene: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub transaction_id: Option<String>,
    #[serde(flatten)]
    pub fields: T,
}

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
pub struct NoReplyFields {}

reply_fields!(
    /// The node a node command acted on (a created or duplicated node's own path).
    pub struct NodeField {
        node: String,
    }
);

reply_fields!(
    pub struct CreatedNode {
        node: String,
        #[serde(rename = "type")]
        node_type: String,
    }
);

reply_fields!(
    /// A property as the editor reads it back after setting it (typed value JSON).
    pub struct PropertySet {
        node: String,
        property: String,
        #[serde(deserialize_with = "present")]
        value: Value,
    }
);

reply_fields!(
    pub struct ScriptAttached {
        node: String,
        script: String,
    }
);

reply_fields!(
    pub struct SignalConnection {
        from: String,
        signal: String,
        to: String,
        method: String,
    }
);

reply_fields!(
    pub struct ResourcePropertySet {
        path: String,
        property: String,
        #[serde(deserialize_with = "present")]
        value: Value,
    }
);

reply_fields!(
    /// What the add-on's batch reply adds. Its `applied` (how many sets ran) is replaced in
    /// the tool's result by the policy's `applied: true`.
    pub struct BatchApplied {
        applied: usize,
        nodes: usize,
    }
);

reply_fields!(
    /// The action undone or redone and the history's version after it.
    pub struct UndoStep {
        action: String,
        version: u64,
    }
);

/// What a scene-level command's plan reports before it runs: the verdict from the one
/// rule, and the tool's own fields `T`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SceneCommand<T> {
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
pub struct BatchSize {
    sets: usize,
    nodes: usize,
}

/// A node property in the edited scene, as typed value JSON.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NodeProperty {
    pub node: String,
    pub property: String,
    pub value: Value,
}

/// The edited scene's undo history.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct History {
    pub scene: String,
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

/// A node command's plan, typed: [`node_plan_as`] with its reply's own fields `T`.
type NodePlan<T> = Plan<NodeCommand, EditorReply<T>>;

fn node_edit<T, P: BridgeCommand + Clone + Send + 'static>(
    state: Arc<AppState>,
    op: &'static str,
    node: String,
    p: P,
) -> Result<NodePlan<T>, ToolError>
where
    T: DeserializeOwned + Serialize + 'static,
{
    node_plan_as(state, op, node, &p)
}

/// A plan for a scene-level command: the editor state is the precondition check, and
/// the verdict comes from the one rule (`undo` replaces its undo part where the tool
/// knows better; `fields` adds the tool's own).
fn scene_plan<T, R, P: BridgeCommand + Send + 'static>(
    state: Arc<AppState>,
    p: P,
    scene: Option<String>,
    needs_active_scene: bool,
    undo: Option<Undo>,
    fields: T,
) -> Result<Plan<SceneCommand<T>, EditorReply<R>>, ToolError>
where
    R: DeserializeOwned + Serialize + 'static,
{
    let command = P::METHOD;
    let active = active_scene(&state)?;
    if needs_active_scene && active.is_none() {
        return Err(Precondition::ActiveScene.error());
    }
    let Some(effect) = persistence::Effect::of_scene_command(command) else {
        return Err(ToolError::internal(format!(
            "{command} is not a scene-level command"
        )));
    };
    let mut verdict: EditVerdict =
        persistence::verdict_of(effect, active.as_deref().unwrap_or("")).into();
    if let Some(undo) = undo {
        verdict.undo = undo;
    }
    let scene = scene.or(active);
    if cmd::may_save_file(command) && scene.as_deref().is_none_or(str::is_empty) {
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

/// The plan of a scene command that takes only an optional path (the edited scene when
/// absent) and needs an edited scene: close, reload.
fn path_scene_plan<P>(
    state: Arc<AppState>,
    a: OptScenePathArgs,
) -> Result<Plan<SceneCommand<NoReplyFields>, EditorReply<NoReplyFields>>, ToolError>
where
    P: BridgeCommand + From<Option<String>> + Send + 'static,
{
    let path = a.path.map(|p| p.to_string());
    let p = P::from(path.clone());
    scene_plan(state, p, path, true, None, NoReplyFields {})
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let typed: EditorReply<PropertySet> =
            from_reply(cmd::NODE_SET_PROPERTY, reply.clone()).unwrap();
        let back = serde_json::to_value(&typed).unwrap();
        assert_eq!(back, Value::Object(reply.clone()));
        reply.insert("extra".into(), json!(1));
        let e = from_reply::<EditorReply<PropertySet>>(cmd::NODE_SET_PROPERTY, reply).unwrap_err();
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
