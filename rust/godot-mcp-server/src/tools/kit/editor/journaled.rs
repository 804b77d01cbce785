//! Applying an editor command as an `editor_runtime` journal transaction (see the
//! module doc of `tools/editor`): the intent before the request, the files a command
//! may save named with their pre-state, the reply (or its loss) deciding the terminal
//! state, and late replies settling what a timeout left open.

use std::sync::Arc;

use godot_mcp_journal::durable::FileStamp;
use godot_mcp_journal::{
    EditorIntent, EditorLeft, EditorProof, EditorSettle, EditorTxnError, FileState, NamedFile,
    SavedFile, TxnStatus, canonical_request_hash,
};
use godot_mcp_protocol::commands::BridgeCommand;
use godot_mcp_protocol::{BridgeError, ErrorEffect};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::{connected, details_json, editor_error, editor_timeout, from_reply, never_saved};
use crate::error::{ErrorCode, ToolError};
use crate::honesty::{MayHaveApplied, TimedOut};
use crate::planes::editor::{Bridge, RequestFailure};
use crate::respath::ResPath;
use crate::rules::Precondition;
use crate::state::AppState;

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
    let may_save_file = P::MAY_SAVE_FILE;
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
                return Err(files_not_landed(
                    command,
                    txn,
                    status,
                    &why.unwrap_or_default(),
                ));
            }
            if status == TxnStatus::Quarantined {
                return Err(write_not_proven(command, txn));
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
            Err(no_answer_error(command, txn, status, timed_out, &reason))
        }
    }
}

/// An `ok` reply whose files did not all land: compensated (nothing written) or
/// quarantined (writes blocked until repaired), as the disk showed.
fn files_not_landed(
    command: &str,
    txn: godot_mcp_journal::TxnId,
    status: TxnStatus,
    why: &str,
) -> ToolError {
    let e = ToolError::new(
        ErrorCode::EditorError,
        format!("the editor answered {command} ok, but not every file landed: {why}"),
    );
    let e = if status == TxnStatus::Compensated {
        e.hint("Nothing was written. Check that the files are writable, then save again.")
    } else {
        e.hint(
            "Writes are blocked until the files are checked and the transaction \
             resolved with `godot-mcp transaction repair` (list_transactions shows it).",
        )
    };
    e.details(details_json(&RefusedDetails {
        transaction_id: txn.to_string(),
        status: status.as_str(),
        reason: Some(why),
        honesty: MayHaveApplied {
            may_have_applied: status != TxnStatus::Compensated,
        },
    }))
}

/// An `ok` reply whose saved file could not be read afterwards (quarantined).
fn write_not_proven(command: &str, txn: godot_mcp_journal::TxnId) -> ToolError {
    ToolError::new(
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
    }))
}

/// A request sent and not answered (timed out, or the connection lost): it may have
/// run, and is never resent.
fn no_answer_error(
    command: &str,
    txn: godot_mcp_journal::TxnId,
    status: TxnStatus,
    timed_out: bool,
    reason: &str,
) -> ToolError {
    let honesty = TimedOut {
        may_have_applied: true,
        hint: "The editor may still run (or may have run) this command: it is never resent. \
               Re-read the state (get_scene_tree, get_node_property) before deciding anything."
            .into(),
    };
    let message = if timed_out {
        format!("the editor did not answer {command} in time ({reason})")
    } else {
        format!("the connection to the editor was lost before it answered {command} ({reason})")
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
    ToolError::new(ErrorCode::Timeout, message)
        .hint(honesty.hint.clone())
        .details(details)
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
pub(crate) fn settle_late_replies(state: &Arc<AppState>, bridge: &Arc<Bridge>) {
    match state.journal.lock().last_editor_request_id() {
        Ok(last) => bridge.number_above(last),
        // Then the journal refuses every editor transaction: none is sent.
        Err(e) => {
            tracing::error!(error = %e, "the journal's last editor request id could not be read")
        }
    }
    let (weak, bridge_weak) = (Arc::downgrade(state), Arc::downgrade(bridge));
    let owed: crate::planes::editor::ConnectHandler = Arc::new(move || {
        if let (Some(state), Some(bridge)) = (weak.upgrade(), bridge_weak.upgrade()) {
            super::staged::settle_owed(&state, &bridge);
        }
    });
    bridge.on_connect(owed.clone());
    // An add-on that connected before the handler was in place (the bridge listens
    // from the start, reconciliation runs after) is owed the same.
    if matches!(bridge.status(), crate::planes::editor::Status::Connected(_)) {
        let _ = std::thread::Builder::new()
            .name("bridge-connected".into())
            .spawn(move || owed());
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
