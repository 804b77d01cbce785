//! `profile_game_functions`: the engine's script profiler, turned on for a window over
//! the debugger connection every game `play_scene` starts has to this server
//! (`planes::process::debugger`); per GDScript function calls, self and total ms.

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::debugger::DebugError;
use crate::rules::Toolset;
use crate::tools::kit::game::debug::{ANSWER_WAIT, debug_error, debugged, meta};
use crate::tools::{Call, Out, ToolDef, ToolMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Duration;

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            toolset: Toolset::Profiling,
            ..meta(
                "profile_game_functions",
                "Per-function script profile of the running game",
                "Run the engine's script profiler on a running game for a window: per \
                     GDScript function calls, self and total ms, file and line, most self \
                     time first.",
            )
        },
        profile_game_functions,
    )]
}

/// The shortest and longest profiling window, ms.
const PROFILE_WINDOW_MS: std::ops::RangeInclusive<u64> = 100..=10_000;
/// The most rows one answer holds.
const MAX_PROFILE_ROWS: u32 = 500;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// How long to profile, 100-10000 ms (default 1000).
    #[serde(default)]
    #[schemars(range(min = 100, max = 10000))]
    window_ms: Option<u64>,
    /// Rows returned, 1-500 (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
}

/// One script function over the window.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FunctionRow {
    function: String,
    /// The script (res://…).
    file: String,
    /// The first line of the function's body, as GDScript reports it (0: implicit).
    line: i64,
    calls: i64,
    /// Time in the function itself, callees excluded.
    self_ms: f64,
    /// Time in the function and its callees.
    total_ms: f64,
}

/// profile_game_functions' result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FunctionProfile {
    session_id: String,
    window_ms: u64,
    /// Frames summed (the frame the profiler started in is left out: it is partial).
    frames_sampled: u64,
    /// Functions seen in the window; `functions` holds the first `limit` of them.
    functions_seen: usize,
    functions: Vec<FunctionRow>,
    truncated: bool,
    /// The game stopped in the debugger during the window (it ran no frames meanwhile).
    stopped_in_window: bool,
}

fn ms(seconds: f64) -> f64 {
    (seconds * 1_000_000.0).round() / 1_000.0
}

async fn profile_game_functions(
    Call { state, args, .. }: Call<ProfileArgs>,
) -> Out<FunctionProfile> {
    let window_ms = ToolError::arg_in(
        "window_ms",
        args.window_ms,
        1000,
        PROFILE_WINDOW_MS,
        "window_ms must be 100–10000",
    )?;
    let limit = ToolError::arg_in(
        "limit",
        args.limit,
        50,
        1..=MAX_PROFILE_ROWS,
        "limit must be 1–500",
    )?;
    let (session, d) = debugged(&state, args.session_id.as_deref()).await?;
    let already_closed = d.state().closed;
    let profile = d
        .profile_scripts(Duration::from_millis(window_ms), ANSWER_WAIT)
        .await
        .map_err(|e| match e {
            DebugError::Closed if !already_closed => ToolError::new(
                ErrorCode::PreconditionFailed,
                "The game's debugger connection ended during the profiling window (the game \
                 ended or crashed); no profile is reported.",
            )
            .required("debugger_connected")
            .hint("list_sessions shows how it ended; start it again with play_scene.")
            .details(json!({"during_window": true})),
            e => debug_error(e, "profiler stop", ANSWER_WAIT),
        })?;
    let mut functions = profile.functions;
    functions.sort_by(|a, b| {
        b.self_s
            .total_cmp(&a.self_s)
            .then_with(|| b.total_s.total_cmp(&a.total_s))
            .then_with(|| (&a.file, a.line, &a.function).cmp(&(&b.file, b.line, &b.function)))
    });
    let functions_seen = functions.len();
    functions.truncate(limit as usize);
    Ok(FunctionProfile {
        session_id: session.txn.to_string(),
        window_ms,
        frames_sampled: profile.frames,
        functions_seen,
        truncated: functions_seen > functions.len(),
        functions: functions
            .into_iter()
            .map(|f| FunctionRow {
                function: f.function,
                file: f.file,
                line: f.line,
                calls: f.calls,
                self_ms: ms(f.self_s),
                total_ms: ms(f.total_s),
            })
            .collect(),
        stopped_in_window: profile.stopped_in_window,
    })
}
