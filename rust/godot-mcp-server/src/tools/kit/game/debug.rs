//! The running game's remote debugger connection (`planes::process::debugger`), as the
//! debugger tools and profile_game_functions (`tools/profiler/functions.rs`) share it:
//! the session with its debugger connected, a debugger failure as the error an agent can
//! act on, and the debugger tools' metadata.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::session::session_of;
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::Session;
use crate::planes::process::debugger::{DebugError, Debugger};
use crate::rules::class;
use crate::rules::{Precondition, Toolset};
use crate::state::AppState;
use crate::tools::ToolMeta;

/// How long a stopped game may take to answer a question (stack, variables).
pub(crate) const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// How long a just-launched game may take to connect to its debugger.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

pub(crate) fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::Runtime> {
    ToolMeta {
        name,
        title,
        description,
        class: class::Runtime,
        toolset: Toolset::Debugger,
        effect: None,
    }
}

/// The game session and its debugger, connected.
pub(crate) async fn debugged(
    state: &AppState,
    session_id: Option<&str>,
) -> Result<(Arc<Session>, Arc<Debugger>), ToolError> {
    let session = session_of(state, session_id)?;
    let Some(d) = session.debugger.clone() else {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "Session {} ({}) was not started with a debugger.",
                session.txn, session.purpose
            ),
        )
        .required("debugger_connected")
        .hint("Start the game with play_scene; its games connect to this server's debugger."));
    };
    if !d.state().connected {
        d.wait_connected(CONNECT_WAIT).await;
    }
    Ok((session, d))
}

/// A debugger failure as the tool error an agent can act on. `what` names the request
/// in a timeout's message.
pub(crate) fn debug_error(e: DebugError, what: &str, waited: Duration) -> ToolError {
    match e {
        DebugError::NotConnected => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game has not connected to the server's debugger.",
        )
        .required("debugger_connected")
        .hint("The game may still be starting, or it ended; list_sessions shows which."),
        DebugError::Closed => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game's debugger connection ended (the game ended or crashed).",
        )
        .required("debugger_connected")
        .hint("list_sessions shows how it ended; start it again with play_scene."),
        DebugError::NotStopped => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game is running, not stopped in the debugger.",
        )
        .required("game_breaked")
        .hint("Stop it first: set_breakpoint on a line it runs, or debug_break."),
        DebugError::Timeout { left_stop } => ToolError::new(
            ErrorCode::Timeout,
            format!(
                "The game did not confirm the {what} within {} ms.",
                waited.as_millis()
            ),
        )
        .hint(if left_stop {
            "It left the stop and runs (it may stop later); debug_break stops it again."
        } else {
            "Its state is unknown: get_stack_frames answers if it is stopped; list_sessions \
             shows whether it still runs."
        })
        .details(json!({"left_stop": left_stop})),
        DebugError::Resumed => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game resumed instead of answering: the engine does that for an evaluation \
             in a frame without a script instance (a static function).",
        )
        .required("game_breaked")
        .hint("Stop it again (debug_break or a breakpoint) and evaluate in a frame of an instance method.")
        .details(json!({"resumed": true})),
        DebugError::NoCaller => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game is stopped in its outermost script frame: there is no caller to step \
             out to.",
        )
        .required("caller_frame")
        .hint("Use step_over, or continue_execution to let the engine call the script again."),
        DebugError::Breaked => {
            let mut e = Precondition::GameNotBreaked.error();
            e.message = "The game is stopped in the debugger: it runs no frames to profile.".into();
            e
        }
        DebugError::Lagged => ToolError::new(
            ErrorCode::Internal,
            format!(
                "The server fell behind the game's debugger messages during the {what} and \
                 lost some; nothing partial is reported."
            ),
        )
        .hint("Try again with a shorter window."),
    }
}
