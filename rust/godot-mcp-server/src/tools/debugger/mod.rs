//! The debugger family: breakpoints, breaks, steps, the stack, a frame's variables
//! and evaluation in a frame, through the engine's own remote-debug protocol. Every
//! game `play_scene` starts connects to a debugger this server owns
//! (`planes::process::debugger`); breakpoints set before a launch are passed to it on
//! the command line.
//!
//! `profile_game_functions` (toolset `profiling`) uses the same connection; it is in
//! `tools/profiler/functions.rs`. What both use (`debugged`, `debug_error`,
//! `ANSWER_WAIT`, the tools' `meta`) is the kit's, `tools/kit/game/debug.rs`.
//!
//! All runtime class: they control the game's execution. `evaluate_in_frame` executes
//! code, so it is approval-gated like `evaluate_expression`.

use std::time::Duration;

use godot_mcp_protocol::remote_debug::{StackFrame, StackVar, VarScope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::Session;
use crate::planes::process::debugger::{Debugger, Delivery, Stop};
use crate::respath::ResPath;
use crate::rules::RuntimeFlags;
use crate::state::AppState;
use crate::tools::kit::game::debug::{ANSWER_WAIT, debug_error, debugged, meta};
use crate::tools::{Call, Out, ToolDef};

/// How long a step, a break or a continue may take to be confirmed, by default.
const DEFAULT_WAIT: Duration = Duration::from_secs(5);
/// The longest wait a caller may ask for.
const MAX_WAIT_MS: u64 = 60_000;
/// The longest expression accepted, in bytes.
const MAX_EXPRESSION: usize = 16 * 1024;

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "set_breakpoint",
                "Set a script breakpoint",
                "Set a breakpoint at a GDScript line: sent to running games now and passed to \
                 every game play_scene starts (the engine does not acknowledge it).",
            ),
            set_breakpoint,
        ),
        ToolDef::new(
            meta(
                "remove_breakpoint",
                "Remove a script breakpoint",
                "Remove one breakpoint, from running games and future launches.",
            ),
            remove_breakpoint,
        ),
        ToolDef::new(
            meta(
                "clear_breakpoints",
                "Remove every breakpoint",
                "Remove every breakpoint, from running games and future launches.",
            ),
            clear_breakpoints,
        ),
        ToolDef::new(
            meta(
                "debug_break",
                "Stop the running game (break)",
                "Force the running game to stop in the debugger; answers where it stopped \
                 once the game confirms it.",
            ),
            |call| stop_after(call, Motion::Break),
        ),
        ToolDef::new(
            meta(
                "step_into",
                "Step into (one line, entering calls)",
                "From a stop, run one line, entering calls; answers the new location once \
                 the game confirms it, else TIMEOUT.",
            ),
            |call| stop_after(call, Motion::StepInto),
        ),
        ToolDef::new(
            meta(
                "step_over",
                "Step over (one line in this function)",
                "From a stop, run one line without entering calls; answers the new location \
                 once the game confirms it, else TIMEOUT.",
            ),
            |call| stop_after(call, Motion::StepOver),
        ),
        ToolDef::new(
            meta(
                "step_out",
                "Step out (to the caller)",
                "From a stop, run until the current function returns (steps over, as Godot \
                 4.4 has no step-out); answers the caller's line, else TIMEOUT.",
            ),
            |call| stop_after(call, Motion::StepOut),
        ),
        ToolDef::new(
            meta(
                "continue_execution",
                "Continue the stopped game",
                "Resume a game stopped at a breakpoint, step or break; answers once the game \
                 confirms it runs.",
            ),
            continue_execution,
        ),
        ToolDef::new(
            meta(
                "get_stack_frames",
                "Call stack of the stopped game",
                "The stopped game's call stack, innermost first: file, line, function.",
            ),
            get_stack_frames,
        ),
        ToolDef::new(
            meta(
                "get_frame_variables",
                "Variables of a stack frame",
                "Locals and members (self first) of one frame of the stopped game, with \
                 types and values; globals on request.",
            ),
            get_frame_variables,
        ),
        ToolDef::new(
            meta(
                "evaluate_in_frame",
                "Evaluate an expression in a stack frame",
                "Evaluate a Godot Expression with a frame's locals and self in the stopped \
                 game (executes code; approval-gated).",
            ),
            evaluate_in_frame,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BreakpointArgs {
    /// The GDScript file (res://…).
    path: ResPath,
    /// The line, from 1.
    #[schemars(range(min = 1))]
    line: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// How long to wait for the game's confirmation, 1-60000 ms (default 5000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 60000))]
    timeout_ms: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrameArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// The frame, 0 innermost (default 0).
    #[serde(default)]
    frame: Option<u32>,
    /// Also list the globals (autoloads, global constants); default false.
    #[serde(default)]
    include_globals: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvaluateArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// The frame, 0 innermost (default 0).
    #[serde(default)]
    frame: Option<u32>,
    /// A Godot Expression, e.g. `velocity.length() * 2`.
    expression: String,
}

/// The engine splits `--breakpoints` on commas and a breakpoint's own line off at the
/// last colon: a path with a comma cannot be passed at launch.
fn checked_breakpoint(args: &BreakpointArgs) -> Result<String, ToolError> {
    let path = args.path.to_string();
    if path.contains(',') {
        return Err(ToolError::invalid_params(
            "path",
            format!("{path} contains a comma, which Godot's --breakpoints list cannot carry"),
        ));
    }
    if !path.ends_with(".gd") {
        return Err(ToolError::invalid_params(
            "path",
            format!("{path} is not a GDScript file (.gd)"),
        ));
    }
    if args.line == 0 {
        return Err(ToolError::invalid_params("line", "lines count from 1"));
    }
    Ok(path)
}

/// One breakpoint: a script and a line.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BreakpointAt {
    path: String,
    line: u32,
}

/// What sending a breakpoint change did for one running game.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GameDelivery {
    session_id: String,
    delivered: bool,
    /// Not connected yet: sent the moment it connects.
    queued: bool,
}

/// The running games with a debugger, and what sending `set` did for each.
async fn broadcast_breakpoint(
    state: &AppState,
    path: &str,
    line: u32,
    set: bool,
) -> Vec<GameDelivery> {
    let mut out = Vec::new();
    for s in state.process.sessions() {
        let Some(d) = &s.debugger else { continue };
        if s.ended().is_some() {
            continue;
        }
        let sent = d.breakpoint(path, line, set).await;
        out.push(GameDelivery {
            session_id: s.txn.to_string(),
            delivered: sent == Ok(Delivery::Sent),
            queued: sent == Ok(Delivery::Queued),
        });
    }
    out
}

fn breakpoint_list(state: &AppState) -> Vec<BreakpointAt> {
    state
        .process
        .breakpoints()
        .into_iter()
        .map(|(path, line)| BreakpointAt { path, line })
        .collect()
}

/// set_breakpoint's and remove_breakpoint's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BreakpointChange {
    path: String,
    line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    added: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    removed: Option<bool>,
    running_games: Vec<GameDelivery>,
    breakpoints: Vec<BreakpointAt>,
}

async fn set_breakpoint(Call { state, args, .. }: Call<BreakpointArgs>) -> Out<BreakpointChange> {
    let path = checked_breakpoint(&args)?;
    if !state.project.resolve("path", &args.path)?.is_file() {
        return Err(ToolError::not_found(format!("{path} does not exist")));
    }
    let added = state.process.set_breakpoint(&path, args.line, true);
    let running_games = broadcast_breakpoint(&state, &path, args.line, true).await;
    Ok(BreakpointChange {
        path,
        line: args.line,
        added: Some(added),
        removed: None,
        running_games,
        breakpoints: breakpoint_list(&state),
    })
}

async fn remove_breakpoint(
    Call { state, args, .. }: Call<BreakpointArgs>,
) -> Out<BreakpointChange> {
    let path = checked_breakpoint(&args)?;
    let removed = state.process.set_breakpoint(&path, args.line, false);
    if !removed {
        return Err(
            ToolError::not_found(format!("No breakpoint is set at {path}:{}", args.line)).hint(
                "set_breakpoint and remove_breakpoint answer the current list in `breakpoints`.",
            ),
        );
    }
    let running_games = broadcast_breakpoint(&state, &path, args.line, false).await;
    Ok(BreakpointChange {
        path,
        line: args.line,
        added: None,
        removed: Some(true),
        running_games,
        breakpoints: breakpoint_list(&state),
    })
}

/// clear_breakpoints' result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Cleared {
    removed: Vec<BreakpointAt>,
    running_games: Vec<GameDelivery>,
    breakpoints: Vec<BreakpointAt>,
}

async fn clear_breakpoints(Call { state, .. }: Call<NoArgs>) -> Out<Cleared> {
    let removed = state.process.clear_breakpoints();
    // Each running game gets every removal; it counts as delivered only if all were.
    let mut games: Vec<GameDelivery> = Vec::new();
    for (path, line) in &removed {
        for g in broadcast_breakpoint(&state, path, *line, false).await {
            match games.iter_mut().find(|x| x.session_id == g.session_id) {
                Some(x) => x.delivered = x.delivered && g.delivered,
                None => games.push(g),
            }
        }
    }
    Ok(Cleared {
        removed: removed
            .into_iter()
            .map(|(path, line)| BreakpointAt { path, line })
            .collect(),
        running_games: games,
        breakpoints: Vec::new(),
    })
}

fn wait_of(timeout_ms: Option<u64>) -> Result<Duration, ToolError> {
    match timeout_ms {
        None => Ok(DEFAULT_WAIT),
        Some(ms) if (1..=MAX_WAIT_MS).contains(&ms) => Ok(Duration::from_millis(ms)),
        Some(_) => Err(ToolError::invalid_params(
            "timeout_ms",
            "timeout_ms must be 1–60000",
        )),
    }
}

/// One stack frame.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Frame {
    index: usize,
    file: String,
    line: i64,
    function: String,
}

fn frame_json(index: usize, f: &StackFrame) -> Frame {
    Frame {
        index,
        file: f.file.clone(),
        line: f.line,
        function: f.function.clone(),
    }
}

/// Where the game stopped (debug_break and the steps; `steps` for step_out only).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Stopped {
    session_id: String,
    stopped: bool,
    reason: String,
    can_continue: bool,
    location: Option<Frame>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<u32>,
}

/// Where the game stopped: the reason, and the innermost frame when it has a stack.
async fn stop_json(session: &Session, d: &Debugger, stop: &Stop) -> Stopped {
    let location = if stop.has_stack {
        d.stack(ANSWER_WAIT)
            .await
            .ok()
            .and_then(|frames| frames.first().map(|f| frame_json(0, f)))
    } else {
        None
    };
    Stopped {
        session_id: session.txn.to_string(),
        stopped: true,
        reason: stop.reason.clone(),
        can_continue: stop.can_continue,
        location,
        steps: None,
    }
}

/// What debug_break and the steps ask of the game; each answers where it stopped.
#[derive(Debug, Clone, Copy)]
enum Motion {
    Break,
    StepInto,
    StepOver,
    StepOut,
}

impl Motion {
    /// How a timeout's message names it.
    fn what(self) -> &'static str {
        match self {
            Motion::Break => "break",
            Motion::StepInto => "step into",
            Motion::StepOver => "step over",
            Motion::StepOut => "step out",
        }
    }
}

/// Ask the game for `motion` and answer where it stopped (with the steps a step out
/// took).
async fn stop_after(Call { state, args, .. }: Call<WaitArgs>, motion: Motion) -> Out<Stopped> {
    let wait = wait_of(args.timeout_ms)?;
    let (session, d) = debugged(&state, args.session_id.as_deref()).await?;
    let (stop, steps) = match motion {
        Motion::Break => d.force_break(wait).await.map(|s| (s, None)),
        Motion::StepInto => d.step("step", wait).await.map(|s| (s, None)),
        Motion::StepOver => d.step("next", wait).await.map(|s| (s, None)),
        Motion::StepOut => d.step_out(wait).await.map(|(s, n)| (s, Some(n))),
    }
    .map_err(|e| debug_error(e, motion.what(), wait))?;
    let mut stopped = stop_json(&session, &d, &stop).await;
    stopped.steps = steps;
    Ok(stopped)
}

/// continue_execution's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Resumed {
    session_id: String,
    resumed: bool,
}

async fn continue_execution(Call { state, args, .. }: Call<WaitArgs>) -> Out<Resumed> {
    let wait = wait_of(args.timeout_ms)?;
    let (session, d) = debugged(&state, args.session_id.as_deref()).await?;
    d.resume(wait)
        .await
        .map_err(|e| debug_error(e, "continue", wait))?;
    Ok(Resumed {
        session_id: session.txn.to_string(),
        resumed: true,
    })
}

/// get_stack_frames' result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Frames {
    session_id: String,
    reason: Option<String>,
    frames: Vec<Frame>,
}

async fn get_stack_frames(Call { state, args, .. }: Call<SessionArgs>) -> Out<Frames> {
    let (session, d) = debugged(&state, args.session_id.as_deref()).await?;
    let reason = d.state().stopped.map(|s| s.reason);
    let frames = d
        .stack(ANSWER_WAIT)
        .await
        .map_err(|e| debug_error(e, "stack dump", ANSWER_WAIT))?;
    Ok(Frames {
        session_id: session.txn.to_string(),
        reason,
        frames: frames
            .iter()
            .enumerate()
            .map(|(i, f)| frame_json(i, f))
            .collect(),
    })
}

/// Refuses a frame the stack does not have (the engine would answer with nothing).
async fn check_frame(d: &Debugger, frame: u32) -> Result<(), ToolError> {
    let frames = d
        .stack(ANSWER_WAIT)
        .await
        .map_err(|e| debug_error(e, "stack dump", ANSWER_WAIT))?;
    if frame as usize >= frames.len() {
        return Err(ToolError::invalid_params(
            "frame",
            format!(
                "frame {frame} does not exist: the stack has {} frame(s)",
                frames.len()
            ),
        ));
    }
    Ok(())
}

/// One variable of a frame: its name, the engine's type name and its value.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Var {
    name: String,
    #[serde(rename = "type")]
    type_name: &'static str,
    /// A Godot value, as JSON.
    value: Value,
}

fn var_json(v: &StackVar) -> Var {
    Var {
        name: v.name.clone(),
        type_name: v.type_name,
        value: v.value.to_json(),
    }
}

/// get_frame_variables' result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FrameVars {
    session_id: String,
    frame: u32,
    locals: Vec<Var>,
    members: Vec<Var>,
    globals_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    globals: Option<Vec<Var>>,
}

async fn get_frame_variables(Call { state, args, .. }: Call<FrameArgs>) -> Out<FrameVars> {
    let frame = args.frame.unwrap_or(0);
    let (session, d) = debugged(&state, args.session_id.as_deref()).await?;
    check_frame(&d, frame).await?;
    let vars = d
        .frame_vars(frame, ANSWER_WAIT)
        .await
        .map_err(|e| debug_error(e, "frame variables", ANSWER_WAIT))?;
    let of = |scope: VarScope| -> Vec<Var> {
        vars.iter()
            .filter(|v| v.scope == scope)
            .map(var_json)
            .collect()
    };
    let globals = of(VarScope::Global);
    Ok(FrameVars {
        session_id: session.txn.to_string(),
        frame,
        locals: of(VarScope::Local),
        members: of(VarScope::Member),
        globals_count: globals.len(),
        globals: args.include_globals.unwrap_or(false).then_some(globals),
    })
}

/// evaluate_in_frame's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Evaluated {
    session_id: String,
    frame: u32,
    expression: String,
    #[serde(rename = "type")]
    type_name: &'static str,
    /// A Godot value, as JSON.
    value: Value,
}

async fn evaluate_in_frame(Call { state, args, .. }: Call<EvaluateArgs>) -> Out<Evaluated> {
    let frame = args.frame.unwrap_or(0);
    if args.expression.trim().is_empty() {
        return Err(ToolError::invalid_params(
            "expression",
            "expression is empty",
        ));
    }
    if args.expression.len() > MAX_EXPRESSION {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!("expression is longer than {MAX_EXPRESSION} bytes"),
        )
        .param("expression"));
    }
    let (session, d) = debugged(&state, args.session_id.as_deref()).await?;
    check_frame(&d, frame).await?;
    let (v, errors) = d
        .evaluate(&args.expression, frame, ANSWER_WAIT)
        .await
        .map_err(|e| debug_error(e, "evaluation", ANSWER_WAIT))?;
    if let Some(first) = errors.iter().find(|e| !e.warning) {
        // A nil value with an engine error before it is the error, not a result.
        return Err(ToolError::new(
            ErrorCode::InvalidParams,
            format!("Godot could not evaluate it: {}", first.error),
        )
        .param("expression")
        .details(json!({"engine_errors": errors.iter().map(|e| json!({
            "error": e.error, "description": e.description})).collect::<Vec<_>>()})));
    }
    Ok(Evaluated {
        session_id: session.txn.to_string(),
        frame,
        expression: args.expression,
        type_name: v.type_name,
        value: v.value.to_json(),
    })
}

// ---- profile_game_functions ----------------------------------------------------
