//! Managed sessions as the game tools find them: the session an id names, or the newest
//! running game (and the refusal when none runs); how a supervised process ended, as
//! every process tool reports it.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::display;
use crate::error::{ErrorCode, ToolError};
use crate::honesty::ProcessEnd;
use crate::planes::process::{Ended, Session};
use crate::state::AppState;

pub(crate) fn process_end(e: &Ended) -> ProcessEnd {
    if e.timed_out {
        ProcessEnd::Timeout { after_ms: e.ran_ms }
    } else if let Some(code) = e.code {
        ProcessEnd::Exit { code }
    } else {
        ProcessEnd::Crash {
            signal: e.signal.unwrap_or(0),
        }
    }
}

/// How a supervised process ended, as every process tool reports it (`end`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct EndReport {
    #[serde(flatten)]
    pub how: HowEnded,
    pub exit_code: Option<i32>,
    // After `how`: a crash's own `signal` is this one (the same number).
    pub signal: Option<i32>,
    pub boundary_empty: bool,
    pub transaction_status: &'static str,
}

/// Who ended a process: itself or the time limit ([`ProcessEnd`]), or a stop request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum HowEnded {
    Natural(ProcessEnd),
    Stopped(StoppedEnd),
}

/// A process the server stopped on request (stop_scene, stop_editor): not a crash.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct StoppedEnd {
    pub ended_by: StoppedTag,
    /// Its exit code, when it exited by itself on SIGTERM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StoppedTag {
    Stopped,
}

/// How `e` ended, typed.
pub(crate) fn end_report(e: &Ended) -> EndReport {
    let natural = process_end(e);
    let how = if e.sent_by_server && !e.timed_out {
        let code = match natural {
            ProcessEnd::Exit { code } => Some(code),
            _ => None,
        };
        HowEnded::Stopped(StoppedEnd {
            ended_by: StoppedTag::Stopped,
            code,
        })
    } else {
        HowEnded::Natural(natural)
    };
    EndReport {
        how,
        exit_code: e.code,
        signal: e.signal,
        boundary_empty: e.boundary_empty,
        transaction_status: e.status.as_str(),
    }
}

/// [`end_report`] as JSON (for results not yet typed).
pub(crate) fn ended_json(e: &Ended) -> Value {
    serde_json::to_value(end_report(e)).unwrap_or(json!({}))
}

/// The purpose of a game session (play_scene's launches).
pub(crate) const GAME: &str = "play_scene";

/// What the server runs besides games, in words, each with the tool that stops it.
fn running_others(state: &AppState) -> Vec<String> {
    state
        .process
        .sessions()
        .iter()
        .filter(|s| s.ended().is_none() && s.purpose != GAME)
        .map(|s| match s.purpose {
            "editor" => format!(
                "the managed editor (session {}; stop_editor stops it)",
                s.txn
            ),
            other => format!("{other} (session {}; it ends with its call)", s.txn),
        })
        .collect()
}

/// The refusal of a game tool when no game runs: what runs instead, and how the newest
/// game ended (its exit code and last lines when it exited by itself).
fn no_game(state: &AppState) -> ToolError {
    let mut message = "No game is running.".to_string();
    let newest_game = state
        .process
        .sessions()
        .into_iter()
        .rev()
        .find(|s| s.purpose == GAME);
    let mut details = None;
    if let Some(s) = &newest_game
        && let Some(e) = s.ended()
    {
        if e.sent_by_server {
            message.push_str(&format!(
                " The newest game (session {}) was stopped ({}).",
                s.txn,
                display::ended_words(&e)
            ));
        } else {
            let early = display::exited_early("The newest game", s, &e, None);
            message.push(' ');
            message.push_str(&early.message);
            details = early.details;
        }
    }
    let others = running_others(state);
    if others.is_empty() {
        message.push_str(" Nothing else runs.");
    } else {
        message.push_str(&format!(" Running: {}.", others.join(", ")));
    }
    let mut e = ToolError::new(ErrorCode::ResourceNotFound, message)
        .hint("Start one with play_scene; list sessions with list_sessions.");
    e.details = details;
    e
}

/// The session `id` names (any purpose), or without one the newest running game.
pub(crate) fn session_of(state: &AppState, id: Option<&str>) -> Result<Arc<Session>, ToolError> {
    let sessions = state.process.sessions();
    match id {
        Some(id) => sessions
            .into_iter()
            .find(|s| s.txn.to_string() == id)
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("No managed session {id}."),
                )
                .param("session_id")
                .hint("list_sessions lists them; without session_id the newest game is used.")
            }),
        None => sessions
            .into_iter()
            .rev()
            .find(|s| s.ended().is_none() && s.purpose == GAME)
            .ok_or_else(|| no_game(state)),
    }
}

#[cfg(test)]
mod tests {
    use super::{Ended, end_report};

    use godot_mcp_journal::TxnStatus;
    use serde_json::json;

    fn ended(code: Option<i32>, signal: Option<i32>, by_server: bool, timed_out: bool) -> Ended {
        Ended {
            code,
            signal,
            sent_by_server: by_server,
            timed_out,
            cancelled: false,
            boundary_empty: true,
            status: TxnStatus::Committed,
            archived_to: None,
            ran_ms: 7,
        }
    }

    /// `end` keeps its contract shape: a stop request is `stopped` (never a crash), a
    /// timeout kill is `timeout`, and `exit_code` / `signal` are always there (null when
    /// not applicable); the typed result matches its own schema.
    #[test]
    fn end_reports_who_ended_the_process() {
        let cases = [
            (
                ended(Some(0), None, true, false),
                json!({"ended_by": "stopped", "code": 0, "exit_code": 0, "signal": null}),
            ),
            (
                ended(None, Some(15), true, false),
                json!({"ended_by": "stopped", "exit_code": null, "signal": 15}),
            ),
            (
                ended(None, Some(9), true, true),
                json!({"ended_by": "timeout", "after_ms": 7, "exit_code": null, "signal": 9}),
            ),
            (
                ended(None, Some(11), false, false),
                json!({"ended_by": "crash", "exit_code": null, "signal": 11}),
            ),
            (
                ended(Some(3), None, false, false),
                json!({"ended_by": "exit", "code": 3, "exit_code": 3, "signal": null}),
            ),
        ];
        for (e, mut want) in cases {
            want["boundary_empty"] = json!(true);
            want["transaction_status"] = json!("committed");
            let got = serde_json::to_value(end_report(&e)).unwrap();
            assert_eq!(got, want);
            #[cfg(feature = "output-check")]
            {
                let schema = crate::tools::output_schema_for::<super::EndReport>().unwrap();
                let strict = crate::output_check::strict(serde_json::Value::Object(schema));
                let v = jsonschema::draft202012::new(&strict).unwrap();
                assert!(v.is_valid(&got), "{got}");
            }
        }
    }
}
