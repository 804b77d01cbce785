//! Runtime tools: supervised Godot processes (the process plane). Every launch
//! is a `process_launch` transaction whose receipt is durable before the tool
//! answers; see `planes::process`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::ProcessEnd;
use crate::planes::process::{
    self, Ended, LaunchSpec, STOP_GRACE, Session, control::ControlError, errors,
};
use crate::respath::{ExportDest, ExportTarget, ResPath, decide_export_target};
use crate::safety::{
    EffectKind, Precondition, RuntimeFlags, SafetyClass, Toolset, find_godot_binary,
};
use crate::state::AppState;
use crate::tools::screenshots::Shot;
use crate::tools::{CallFlags, Plan, ToolDef, ToolMeta, ToolResult};

/// The probe script the add-on ships (`extends GodotMcpProbe`).
pub const PROBE_SCRIPT: &str = "res://addons/godot_mcp/probe/probe.gd";
/// Most output returned per stream.
const MAX_OUTPUT: usize = 256 * 1024;
/// How long a probe request may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    effect: EffectKind,
) -> ToolMeta {
    ToolMeta {
        name,
        title,
        description,
        class: SafetyClass::Runtime,
        toolset: Toolset::Runtime,
        effect,
    }
}

trait ReadOnly {
    fn read_only(self) -> Self;
    fn in_toolset(self, toolset: Toolset) -> Self;
}

impl ReadOnly for ToolMeta {
    /// A pure read of the server's own state (no process is touched).
    fn read_only(mut self) -> Self {
        self.class = SafetyClass::ReadOnly;
        self
    }

    /// A process-plane tool outside the game `runtime` toolset (editor, export).
    fn in_toolset(mut self, toolset: Toolset) -> Self {
        self.toolset = toolset;
        self
    }
}

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "run_and_capture",
                "Run a scene and capture its output",
                "Run a scene headless for a bounded time or frame count; return stdout, \
                 stderr, parsed script errors (file, line, message) and how it ended (exit, \
                 timeout, crash).",
                EffectKind::ProcessLaunch,
            ),
            run_and_capture,
        ),
        ToolDef::new(
            meta(
                "play_scene",
                "Play a scene (managed game session)",
                "Play the game (or a scene) as a supervised session with the runtime probe \
                 (nothing written to the project); returns its session_id. Stop with stop_scene.",
                EffectKind::ProcessLaunch,
            ),
            play_scene,
        ),
        ToolDef::new(
            meta(
                "stop_scene",
                "Stop a managed game session",
                "Stop a play_scene session (default: all): SIGTERM, SIGKILL after 2 s; \
                 reports how it ended.",
                EffectKind::ProcessLaunch,
            ),
            stop_scene,
        ),
        ToolDef::new(
            meta(
                "start_editor",
                "Start a managed Godot editor",
                "Start a supervised headless Godot editor on the project; its godot_mcp \
                 add-on connects the editor tools. One at a time.",
                EffectKind::ProcessLaunch,
            )
            .in_toolset(Toolset::EditorProcess),
            start_editor,
        ),
        ToolDef::new(
            meta(
                "stop_editor",
                "Stop the managed Godot editor",
                "Stop the editor started by start_editor or serve --editor.",
                EffectKind::ProcessLaunch,
            )
            .in_toolset(Toolset::EditorProcess),
            stop_editor,
        ),
        ToolDef::new(
            meta(
                "list_sessions",
                "List managed sessions",
                "List supervised processes (games, editor, exports): purpose, pid, probe \
                 connected, how each ended.",
                EffectKind::None,
            )
            .read_only(),
            list_sessions,
        ),
        ToolDef::new(
            meta(
                "simulate_input",
                "Inject input into the running game",
                "Send a key, mouse button or input action to a running game, optionally \
                 held for hold_ms. Refused while it is stopped at a breakpoint.",
                EffectKind::None,
            ),
            simulate_input,
        ),
        ToolDef::imaging(
            meta(
                "game_screenshot",
                "Screenshot the running game",
                "Capture the running game's viewport through its probe, after `frames` frames. \
                 A Godot build without a renderer (a headless build) cannot take one: that is a \
                 structured error, never an empty image.",
                EffectKind::None,
            ),
            game_screenshot,
        ),
        ToolDef::new(
            meta(
                "get_game_property",
                "Read a property of the running game",
                "Read a node property in a running game.",
                EffectKind::None,
            ),
            get_game_property,
        ),
        ToolDef::new(
            meta(
                "monitor_property",
                "Sample a property of the running game",
                "Sample a node property in a running game `samples` times every \
                 `interval_ms` (at most 60 s); returns the timed series.",
                EffectKind::None,
            ),
            monitor_property,
        ),
        ToolDef::new(
            meta(
                "evaluate_expression",
                "Evaluate an expression in the running game",
                "Evaluate a Godot Expression in a running game (executes code; \
                 approval-gated).",
                EffectKind::None,
            ),
            evaluate_expression,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
        ToolDef::new(
            meta(
                "export_project",
                "Export the project",
                "Export a build with a preset (godot --export-release), supervised; the \
                 file lands at output_path only if Godot exits 0. Outside the project or over \
                 a file needs confirm=true. Approval-gated.",
                EffectKind::ProcessLaunch,
            )
            .in_toolset(Toolset::Export),
            export_project,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: true,
            executes_code: false,
        }),
        ToolDef::new(
            meta(
                "export_status",
                "Export status (project.export.status)",
                "Running exports, and bytes interrupted exports left as evidence.",
                EffectKind::None,
            )
            .read_only()
            .in_toolset(Toolset::Export),
            export_status,
        ),
    ]
}

pub(crate) fn godot() -> Result<PathBuf, ToolError> {
    find_godot_binary(
        std::env::var_os("GODOT_BIN").as_deref(),
        std::env::var_os("PATH").as_deref(),
    )
}

fn read_capped(path: &std::path::Path) -> (String, bool) {
    let bytes = std::fs::read(path).unwrap_or_default();
    let truncated = bytes.len() > MAX_OUTPUT;
    let slice = &bytes[bytes.len().saturating_sub(MAX_OUTPUT)..];
    (String::from_utf8_lossy(slice).into_owned(), truncated)
}

fn process_end(e: &Ended) -> ProcessEnd {
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
pub struct EndReport {
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
pub enum HowEnded {
    Natural(ProcessEnd),
    Stopped(StoppedEnd),
}

/// A process the server stopped on request (stop_scene, stop_editor): not a crash.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StoppedEnd {
    pub ended_by: StoppedTag,
    /// Its exit code, when it exited by itself on SIGTERM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoppedTag {
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The scene (default: main scene).
    #[serde(default)]
    scene: Option<ResPath>,
    /// Kill it after this many ms, 1-600000 (default 10000).
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// Quit after this many frames.
    #[serde(default)]
    frames: Option<u64>,
}

async fn run_and_capture(
    state: Arc<AppState>,
    args: RunArgs,
    _f: CallFlags,
) -> Result<Captured, ToolError> {
    let program = godot()?;
    let timeout_ms = args.timeout_ms.unwrap_or(10_000);
    if !(1..=600_000).contains(&timeout_ms) {
        return Err(ToolError::invalid_params(
            "timeout_ms",
            "timeout_ms must be 1–600000",
        ));
    }
    let mut engine = vec![
        "--headless".to_string(),
        "--path".into(),
        state.project.root().display().to_string(),
    ];
    if let Some(n) = args.frames {
        engine.push("--quit-after".into());
        engine.push(n.to_string());
    }
    if let Some(scene) = &args.scene {
        engine.push(scene.to_string());
    }
    let session = state
        .process
        .launch(
            &state,
            LaunchSpec {
                purpose: "run_and_capture",
                program,
                args: engine,
                user_args: vec![],
                tool_family: "runtime",
                operation: "run_and_capture",
                parent: None,
                writes_disk: false,
            },
        )
        .await?;
    let limit = Duration::from_millis(timeout_ms);
    let ended = session
        .wait_or_kill(limit)
        .await
        .ok_or_else(|| ToolError::internal("the killed process did not end"))?;
    Ok(capture(&session, &ended))
}

/// What a bounded run printed and how it ended (run_and_capture, export_project).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Captured {
    pub transaction_id: String,
    pub pid: i32,
    pub end: EndReport,
    pub timed_out: bool,
    pub ran_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub output_truncated: bool,
    pub script_errors: Vec<errors::ScriptError>,
}

fn capture(session: &Session, ended: &Ended) -> Captured {
    let dir = session.output_dir();
    let (stdout, out_trunc) = read_capped(&dir.join("stdout.log"));
    let (stderr, err_trunc) = read_capped(&dir.join("stderr.log"));
    let mut errs = errors::parse(&stderr);
    errs.extend(errors::parse(&stdout));
    Captured {
        transaction_id: session.txn.to_string(),
        pid: session.receipt.pid,
        end: end_report(ended),
        timed_out: ended.timed_out,
        ran_ms: ended.ran_ms,
        stdout,
        stderr,
        output_truncated: out_trunc || err_trunc,
        script_errors: errs,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayArgs {
    /// The scene (default: main scene).
    #[serde(default)]
    scene: Option<ResPath>,
    /// Run headless (default true).
    #[serde(default)]
    headless: Option<bool>,
}

/// A supervised process just launched (play_scene, start_editor).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Launched {
    pub session_id: String,
    pub transaction_id: String,
    pub pid: i32,
    pub pgid: i32,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PlayOut {
    #[serde(flatten)]
    pub launched: Launched,
    pub start_time: u64,
    pub receipt_durable: bool,
    pub probe: &'static str,
    pub autoload_installed: bool,
}

fn launched(s: &Session) -> Launched {
    Launched {
        session_id: s.txn.to_string(),
        transaction_id: s.txn.to_string(),
        pid: s.receipt.pid,
        pgid: s.receipt.pgid,
    }
}

async fn play_scene(
    state: Arc<AppState>,
    args: PlayArgs,
    _f: CallFlags,
) -> Result<PlayOut, ToolError> {
    let program = godot()?;
    let mut engine = Vec::new();
    if args.headless.unwrap_or(true) {
        engine.push("--headless".to_string());
    }
    engine.push("--path".into());
    engine.push(state.project.root().display().to_string());
    let probe_installed = state
        .project
        .root()
        .join("addons/godot_mcp/probe/probe.gd")
        .is_file();
    let mut user = Vec::new();
    if probe_installed {
        engine.push("--script".into());
        engine.push(PROBE_SCRIPT.into());
        if let Some(scene) = &args.scene {
            user.push(format!("--godot-mcp-scene={scene}"));
        }
    } else if let Some(scene) = &args.scene {
        engine.push(scene.to_string());
    }
    let session = state
        .process
        .launch(
            &state,
            LaunchSpec {
                purpose: "play_scene",
                program,
                args: engine,
                user_args: user,
                tool_family: "runtime",
                operation: "play_scene",
                parent: None,
                writes_disk: false,
            },
        )
        .await?;
    Ok(PlayOut {
        launched: launched(&session),
        start_time: session.receipt.start_time,
        receipt_durable: true,
        probe: if probe_installed {
            "passed on the command line (--script)"
        } else {
            "not installed: addons/godot_mcp/probe/probe.gd is missing; input, screenshot and \
             properties are unavailable"
        },
        autoload_installed: false,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopArgs {
    /// The session (default: all).
    #[serde(default)]
    session_id: Option<String>,
}

pub(crate) fn session_of(state: &AppState, id: Option<&str>) -> Result<Arc<Session>, ToolError> {
    let sessions = state.process.sessions();
    let found = match id {
        Some(id) => sessions.into_iter().find(|s| s.txn.to_string() == id),
        None => sessions
            .into_iter()
            .rev()
            .find(|s| s.ended().is_none() && s.purpose == "play_scene"),
    };
    found.ok_or_else(|| {
        ToolError::new(
            ErrorCode::ResourceNotFound,
            "No such managed game session is running.",
        )
        .hint("Start one with play_scene; list them with list_sessions.")
    })
}

/// One session a stop request ended (`end` is null if it did not end).
#[derive(Debug, Serialize, JsonSchema)]
pub struct StoppedSession {
    pub session_id: String,
    pub end: Option<EndReport>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StopOut {
    pub stopped: Vec<StoppedSession>,
}

async fn stop_scene(
    state: Arc<AppState>,
    args: StopArgs,
    _f: CallFlags,
) -> Result<StopOut, ToolError> {
    let targets: Vec<Arc<Session>> = match &args.session_id {
        Some(id) => vec![session_of(&state, Some(id))?],
        None => state
            .process
            .sessions()
            .into_iter()
            .filter(|s| s.ended().is_none())
            .collect(),
    };
    let mut out = Vec::new();
    for s in targets {
        let _ = s
            .control
            .request(json!({"cmd": "release_all"}), Duration::from_millis(500))
            .await;
        let ended = s.stop(STOP_GRACE).await;
        out.push(StoppedSession {
            session_id: s.txn.to_string(),
            end: ended.as_ref().map(end_report),
        });
    }
    Ok(StopOut { stopped: out })
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionsOut {
    pub boundary: process::BoundaryReport,
    pub sessions: Vec<SessionRow>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionRow {
    pub session_id: String,
    pub purpose: &'static str,
    pub pid: i32,
    pub pgid: i32,
    pub probe_connected: bool,
    pub debugger: Option<DebuggerRow>,
    pub running: bool,
    pub end: Option<EndReport>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DebuggerRow {
    pub connected: bool,
    pub stopped: bool,
    pub reason: Option<String>,
}

async fn list_sessions(
    state: Arc<AppState>,
    _a: NoArgs,
    _f: CallFlags,
) -> Result<SessionsOut, ToolError> {
    let sessions = state
        .process
        .sessions()
        .iter()
        .map(|s| SessionRow {
            session_id: s.txn.to_string(),
            purpose: s.purpose,
            pid: s.receipt.pid,
            pgid: s.receipt.pgid,
            probe_connected: s.control.hello().is_some(),
            debugger: s.debugger.as_ref().map(|d| {
                let st = d.state();
                DebuggerRow {
                    connected: st.connected && !st.closed,
                    stopped: st.stopped.is_some(),
                    reason: st.stopped.map(|s| s.reason),
                }
            }),
            running: s.ended().is_none(),
            end: s.ended().as_ref().map(end_report),
        })
        .collect();
    Ok(SessionsOut {
        boundary: process::boundary_report(),
        sessions,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// One synthetic input event.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum InputEvent {
    /// A key by Godot name (Space, A, Escape).
    Key { key: String },
    /// Mouse button (1 left, 2 right, 3 middle) at a viewport position.
    MouseButton {
        button: u8,
        #[serde(default)]
        x: Option<f64>,
        #[serde(default)]
        y: Option<f64>,
    },
    /// An input-map action.
    Action { action: String },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    event: InputEvent,
    /// Ms to hold before release, 0-60000 (default 0).
    #[serde(default)]
    hold_ms: Option<u64>,
}

/// How long a running game may take to answer `status` before it counts as stopped.
const BREAK_TIMEOUT: Duration = Duration::from_millis(1000);

pub(crate) fn probe_error(e: ControlError) -> ToolError {
    match e {
        ControlError::NotConnected => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game's runtime probe is not connected.",
        )
        .required("probe_connected")
        .hint(
            "Install the godot_mcp add-on in the project (it ships addons/godot_mcp/probe/probe.gd) \
             and start the game with play_scene.",
        ),
        // Not a server bug: the game did not answer (busy, frozen, or stopped at a
        // breakpoint). The request was delivered, so a command with an effect
        // (evaluate_expression, input) may still run when the game resumes.
        ControlError::Timeout => ToolError::new(
            ErrorCode::Timeout,
            "The game's probe did not answer in time; the request was sent and may still run.",
        )
        .hint(
            "The game may be busy, frozen or stopped at a breakpoint; list_sessions shows whether \
             it runs. Re-read what the request would change before retrying it.",
        )
        .details(json!({"may_have_applied": true})),
        ControlError::Lost => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game's probe connection was lost (the game ended or crashed).",
        )
        .required("probe_connected"),
    }
}

/// Sends `msg` to the game's probe (waiting up to 5 s for it to connect); its reply,
/// refused or not.
pub(crate) async fn probe_reply(session: &Session, msg: Value) -> Result<Value, ToolError> {
    if session.control.hello().is_none() {
        session.control.wait_connected(Duration::from_secs(5)).await;
    }
    session
        .control
        .request(msg, PROBE_TIMEOUT)
        .await
        .map_err(probe_error)
}

/// A probe reply that is not `ok`, as the precondition it names.
pub(crate) fn probe_refusal(v: &Value, fallback: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PreconditionFailed,
        v["message"].as_str().unwrap_or(fallback).to_string(),
    )
    .required(v["error"].as_str().unwrap_or("probe").to_string())
}

pub(crate) async fn probe_request(session: &Session, msg: Value) -> ToolResult {
    let v = probe_reply(session, msg).await?;
    if v["ok"] == json!(true) {
        Ok(v)
    } else {
        Err(probe_refusal(&v, "the probe refused the request"))
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct InputOut {
    pub session_id: String,
    pub delivered: bool,
    pub hold_ms: u64,
    /// Inputs the game holds now.
    pub held: Option<u64>,
}

async fn simulate_input(
    state: Arc<AppState>,
    args: InputArgs,
    _f: CallFlags,
) -> Result<InputOut, ToolError> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let hold = args.hold_ms.unwrap_or(0);
    if hold > 60_000 {
        return Err(ToolError::invalid_params(
            "hold_ms",
            "hold_ms must be 0–60000",
        ));
    }
    ensure_not_breaked(&session).await?;
    let event = args.event.wire();
    let v = probe_request(
        &session,
        json!({"cmd": "input", "event": event, "hold_ms": hold}),
    )
    .await?;
    Ok(InputOut {
        session_id: session.txn.to_string(),
        delivered: true,
        hold_ms: hold,
        held: v["held"].as_u64(),
    })
}

/// Refuses with `game_not_breaked` unless the game's probe answers `status` and is not
/// stopped at a breakpoint: input sent to a stopped game would be lost.
pub(crate) async fn ensure_not_breaked(session: &Session) -> Result<(), ToolError> {
    // game_not_breaked: a game stopped at a breakpoint would lose the input. Its
    // debugger connection says so when it is stopped there; otherwise the probe, which
    // answers on the game's main loop, is asked: one that does not answer `status`
    // within BREAK_TIMEOUT is taken as stopped (or hung), and nothing is sent.
    if let Some(stop) = session.debugger.as_ref().and_then(|d| d.state().stopped) {
        let mut e = Precondition::GameNotBreaked.error();
        e.message = format!(
            "The running game is stopped in the debugger ({}); simulated input would be \
             lost, so none was sent.",
            if stop.reason.is_empty() {
                "a forced break"
            } else {
                stop.reason.as_str()
            }
        );
        return Err(e);
    }
    if session.control.hello().is_none() {
        session.control.wait_connected(Duration::from_secs(5)).await;
    }
    match session
        .control
        .request(json!({"cmd": "status"}), BREAK_TIMEOUT)
        .await
    {
        Ok(status) if status["breaked"] == json!(true) => Err(Precondition::GameNotBreaked.error()),
        Ok(_) => Ok(()),
        Err(ControlError::Timeout) => {
            let mut e = Precondition::GameNotBreaked.error();
            e.message = format!(
                "The running game did not answer within {} ms: it is stopped at a breakpoint \
                 (or hung); simulated input would be lost, so none was sent.",
                BREAK_TIMEOUT.as_millis()
            );
            Err(e)
        }
        Err(e) => Err(probe_error(e)),
    }
}

impl InputEvent {
    /// The probe's wire form of this event.
    pub(crate) fn wire(&self) -> Value {
        match self {
            InputEvent::Key { key } => json!({"type": "key", "key": key}),
            InputEvent::MouseButton { button, x, y } => {
                json!({"type": "mouse_button", "button": button, "x": x, "y": y})
            }
            InputEvent::Action { action } => json!({"type": "action", "action": action}),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// Frames to let pass before the capture, so a scene that just started is drawn
    /// (default 3; 0 takes the frame the viewport holds now).
    #[serde(default)]
    #[schemars(range(max = 120))]
    frames: Option<u32>,
    /// Downscale so the longer edge is at most this many pixels (16–16384).
    #[serde(default)]
    #[schemars(range(min = 16, max = 16384))]
    max_edge: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionId {
    pub session_id: String,
}

async fn game_screenshot(
    state: Arc<AppState>,
    args: ScreenshotArgs,
    _f: CallFlags,
) -> Result<Shot<SessionId>, ToolError> {
    use crate::tools::screenshots;
    let session = session_of(&state, args.session_id.as_deref())?;
    let frames = args.frames.unwrap_or(3);
    if frames > 120 {
        return Err(ToolError::invalid_params(
            "frames",
            format!("frames is {frames}; at most 120 frames can be waited for"),
        ));
    }
    if let Some(m) = args.max_edge
        && !(16..=16384).contains(&m)
    {
        return Err(ToolError::invalid_params(
            "max_edge",
            format!("max_edge is {m}; it must be 16–16384"),
        ));
    }
    let mut msg = json!({"cmd": "screenshot", "frames": frames,
        "max_bytes": screenshots::max_image_bytes()});
    if let Some(m) = args.max_edge {
        msg["max_edge"] = json!(m);
    }
    let v = probe_reply(&session, msg).await?;
    match v["error"].as_str() {
        _ if v["ok"] == json!(true) => {}
        Some("no_renderer") => {
            return Err(screenshots::no_renderer("The game's Godot", "headless"));
        }
        Some("too_large") => return Err(screenshots::producer_too_large(&v)),
        _ => return Err(probe_refusal(&v, "the probe refused the screenshot")),
    }
    screenshots::shot(
        v["png_base64"].as_str().unwrap_or(""),
        SessionId {
            session_id: session.txn.to_string(),
        },
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PropertyArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Node path, e.g. /root/Main/Player.
    node: String,
    /// Property name.
    property: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyOut {
    pub node: String,
    pub property: String,
    /// The property's value as the probe converts it.
    pub value: Value,
}

async fn get_game_property(
    state: Arc<AppState>,
    args: PropertyArgs,
    _f: CallFlags,
) -> Result<PropertyOut, ToolError> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let v = probe_request(
        &session,
        json!({"cmd": "get_property", "node": args.node, "property": args.property}),
    )
    .await?;
    Ok(PropertyOut {
        node: args.node,
        property: args.property,
        value: v["value"].clone(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Node path, e.g. /root/Main/Player.
    node: String,
    /// Property name.
    property: String,
    /// Samples, 1-200 (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    samples: Option<u32>,
    /// Ms between samples, 10-5000 (default 100).
    #[serde(default)]
    #[schemars(range(min = 10, max = 5000))]
    interval_ms: Option<u64>,
}

/// Longest a monitor may run in all.
const MONITOR_MAX: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Debug, Serialize, JsonSchema)]
pub struct MonitorOut {
    pub node: String,
    pub property: String,
    pub requested: u32,
    pub returned: usize,
    pub interval_ms: u64,
    pub distinct_values: usize,
    pub stopped_early: bool,
    pub reason: Option<String>,
    pub samples: Vec<TimedValue>,
}

/// One sample of a property: when (ms since the first) and its value.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TimedValue {
    pub t_ms: u64,
    pub value: Value,
}

async fn monitor_property(
    state: Arc<AppState>,
    args: MonitorArgs,
    _f: CallFlags,
) -> Result<MonitorOut, ToolError> {
    let samples = args.samples.unwrap_or(10);
    if !(1..=200).contains(&samples) {
        return Err(ToolError::invalid_params(
            "samples",
            "samples must be between 1 and 200",
        ));
    }
    let interval_ms = args.interval_ms.unwrap_or(100);
    if !(10..=5000).contains(&interval_ms) {
        return Err(ToolError::invalid_params(
            "interval_ms",
            "interval_ms must be between 10 and 5000",
        ));
    }
    let interval = std::time::Duration::from_millis(interval_ms);
    if interval * samples.saturating_sub(1) > MONITOR_MAX {
        return Err(ToolError::invalid_params(
            "samples",
            format!(
                "samples × interval_ms must stay within {} s",
                MONITOR_MAX.as_secs()
            ),
        ));
    }
    let session = session_of(&state, args.session_id.as_deref())?;
    let start = std::time::Instant::now();
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut series = Vec::with_capacity(samples as usize);
    let mut stopped: Option<String> = None;
    for _ in 0..samples {
        ticker.tick().await;
        match probe_request(
            &session,
            json!({"cmd": "get_property", "node": args.node, "property": args.property}),
        )
        .await
        {
            Ok(v) => series.push(TimedValue {
                t_ms: start.elapsed().as_millis() as u64,
                value: v["value"].clone(),
            }),
            Err(e) if series.is_empty() => return Err(e),
            Err(e) => {
                stopped = Some(e.text());
                break;
            }
        }
    }
    let distinct = {
        let mut seen: Vec<&Value> = Vec::new();
        for s in &series {
            if !seen.contains(&&s.value) {
                seen.push(&s.value);
            }
        }
        seen.len()
    };
    Ok(MonitorOut {
        node: args.node,
        property: args.property,
        requested: samples,
        returned: series.len(),
        interval_ms,
        distinct_values: distinct,
        stopped_early: stopped.is_some(),
        reason: stopped,
        samples: series,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Godot Expression; base: the current scene's root.
    expression: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EvalOut {
    /// The expression's result as the probe converts it.
    pub value: Value,
}

async fn evaluate_expression(
    state: Arc<AppState>,
    args: EvalArgs,
    _f: CallFlags,
) -> Result<EvalOut, ToolError> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let v = probe_request(
        &session,
        json!({"cmd": "evaluate", "expression": args.expression}),
    )
    .await?;
    Ok(EvalOut {
        value: v["value"].clone(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// The export preset's name (export_presets.cfg).
    preset: String,
    /// A res:// path (not in .godot/) or an absolute path.
    output_path: ExportTarget,
    /// Required to export outside the project, or over an existing file.
    #[serde(default)]
    confirm: bool,
    /// Kill it after this many ms (default 600000).
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// The state of `path` now (absent, or its bytes' hash).
fn file_state(path: &std::path::Path) -> Result<godot_mcp_journal::FileState, ToolError> {
    godot_mcp_journal::durable::read_state(path)
        .map_err(|e| ToolError::new(ErrorCode::Io, format!("{}: {e}", path.display())))
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ExportOut {
    #[serde(flatten)]
    pub run: Captured,
    pub registered: bool,
    /// Null when the export did not finish cleanly (nothing registered).
    pub artifact: Option<Artifact>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

/// A clean export's file, recorded in the journal.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Artifact {
    pub path: String,
    pub inside_project: bool,
    pub bytes: usize,
    pub sha256: String,
    pub transaction_id: String,
    pub linked_launch: String,
}

async fn export_project(
    state: Arc<AppState>,
    args: ExportArgs,
    _f: CallFlags,
) -> Result<ExportOut, ToolError> {
    use godot_mcp_journal::FileState;
    // Decided before anything runs (the pipeline's path walk already refused a
    // hostile one); decided again here against the file system as it is now.
    let dest = decide_export_target(&state.project, "output_path", args.output_path.as_str())?;
    let real = match &dest {
        ExportDest::Inside { real, .. } | ExportDest::Outside { real } => real.clone(),
    };
    let pre = file_state(&real)?;
    if !args.confirm {
        let refuse = |message: String| {
            Err(ToolError::new(ErrorCode::PreconditionFailed, message)
                .param("confirm")
                .required("confirm")
                .hint("Check the target, then call again with confirm=true."))
        };
        match (&dest, &pre) {
            (ExportDest::Outside { real }, _) => {
                return refuse(format!(
                    "{} is outside the project; set confirm=True to export there.",
                    real.display()
                ));
            }
            (ExportDest::Inside { res, .. }, FileState::Present { .. }) => {
                return refuse(format!(
                    "{res} exists: exporting there overwrites it. Set confirm=True to proceed."
                ));
            }
            (ExportDest::Inside { .. }, FileState::Absent) => {}
        }
    }
    let program = godot()?;
    let timeout_ms = args.timeout_ms.unwrap_or(600_000).clamp(1, 3_600_000);
    let session = state
        .process
        .launch(
            &state,
            LaunchSpec {
                purpose: "export_project",
                program,
                args: vec![
                    "--headless".into(),
                    "--path".into(),
                    state.project.root().display().to_string(),
                    "--export-release".into(),
                    args.preset.clone(),
                    // Into the session dir: an artifact only once Godot exits 0.
                    format!(
                        "{}/{}",
                        process::SESSION_DIR_PLACEHOLDER,
                        godot_mcp_journal::launch::EXPORT_PARTIAL
                    ),
                ],
                user_args: vec![],
                tool_family: "runtime",
                operation: "export_project",
                parent: None,
                writes_disk: true,
            },
        )
        .await?;
    let ended = session
        .wait_or_kill(Duration::from_millis(timeout_ms))
        .await
        .ok_or_else(|| ToolError::internal("the killed export did not end"))?;
    let partial = session
        .output_dir()
        .join(godot_mcp_journal::launch::EXPORT_PARTIAL);
    let run = capture(&session, &ended);
    if !(ended.code == Some(0) && ended.boundary_empty && partial.is_file()) {
        return Ok(ExportOut {
            run,
            registered: false,
            artifact: None,
            hint: Some(
                "The export did not finish cleanly: no artifact was registered; what it wrote is \
                 kept in the server's private state as evidence (export_status counts it).",
            ),
        });
    }
    let link = session.txn;
    let st = state.clone();
    let artifact =
        tokio::task::spawn_blocking(move || register_artifact(&st, dest, pre, &partial, link))
            .await
            .map_err(|e| ToolError::internal(format!("artifact task failed: {e}")))??;
    Ok(ExportOut {
        run,
        registered: true,
        artifact: Some(artifact),
        hint: None,
    })
}

/// Move a finished export to its target and record it. Inside the project the bytes
/// go through the one write seam as a composite `file` transaction linked to the
/// export's launch (committed only if the launch's proof is clean and the target is
/// still in the state seen before the export: compare-and-swap). Outside, the server
/// writes it atomically and durably and records its post-state hash.
fn register_artifact(
    state: &AppState,
    dest: ExportDest,
    pre: godot_mcp_journal::FileState,
    partial: &std::path::Path,
    link: godot_mcp_journal::TxnId,
) -> Result<Artifact, ToolError> {
    use godot_mcp_journal::{FileState, FileWrite, TxnOutcome};
    let bytes = std::fs::read(partial)
        .map_err(|e| ToolError::new(ErrorCode::Io, format!("the export's output: {e}")))?;
    let size = bytes.len();
    let sha = match FileState::of(&bytes) {
        FileState::Present { sha256 } => sha256.to_string(),
        FileState::Absent => String::new(),
    };
    let (tool_family, operation, idempotency) =
        crate::planes::project::journal_identity("runtime", "export_project");
    let out = match dest {
        ExportDest::Inside { res, .. } => {
            let req = FileWrite {
                rel_path: PathBuf::from(res.rel()),
                bytes,
                expected: Some(pre),
                idempotency,
                tool_family,
                operation,
            };
            let outcome = state
                .journal
                .lock()
                .write_file_linked(req, link)
                .map_err(|e| crate::planes::project::write_error(&res, "output_path", e))?;
            let txn = match outcome {
                TxnOutcome::Committed { transaction_id, .. } => transaction_id,
                TxnOutcome::Replayed(r) => r.transaction_id,
            };
            Artifact {
                path: res.to_string(),
                inside_project: true,
                bytes: size,
                sha256: sha,
                transaction_id: txn.to_string(),
                linked_launch: link.to_string(),
            }
        }
        ExportDest::Outside { real } => {
            let io = |e: std::io::Error| {
                ToolError::new(ErrorCode::Io, format!("{}: {e}", real.display()))
            };
            if let Some(parent) = real.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            godot_mcp_journal::durable::write_atomic(&real, &bytes).map_err(io)?;
            let observed = file_state(&real)?;
            let txn = state
                .journal
                .lock()
                .record_external_artifact(link, &real, pre, observed, &tool_family, &operation)
                .map_err(|e| {
                    ToolError::new(ErrorCode::Io, format!("recording the artifact: {e}"))
                })?;
            let observed = match observed {
                FileState::Present { sha256 } => sha256.to_string(),
                FileState::Absent => String::new(),
            };
            Artifact {
                path: real.display().to_string(),
                inside_project: false,
                bytes: size,
                sha256: observed,
                transaction_id: txn.to_string(),
                linked_launch: link.to_string(),
            }
        }
    };
    // Moved: the evidence of a clean export is its artifact, not a second copy.
    let _ = std::fs::remove_file(partial);
    Ok(out)
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ExportStatusOut {
    pub running: Vec<String>,
    pub interrupted_exports_retained: usize,
    pub retained_bytes: u64,
    pub retained_bytes_served: bool,
}

async fn export_status(
    state: Arc<AppState>,
    _a: NoArgs,
    _f: CallFlags,
) -> Result<ExportStatusOut, ToolError> {
    let state_dir = state.journal.lock().state_dir().to_path_buf();
    let (count, bytes) = godot_mcp_journal::launch::retained_export_bytes(&state_dir);
    let running: Vec<String> = state
        .process
        .sessions()
        .iter()
        .filter(|s| s.purpose == "export_project" && s.ended().is_none())
        .map(|s| s.txn.to_string())
        .collect();
    Ok(ExportStatusOut {
        running,
        interrupted_exports_retained: count,
        retained_bytes: bytes,
        retained_bytes_served: false,
    })
}

/// Launches the managed editor (`start_editor`, `serve --editor`).
pub async fn launch_editor(state: &Arc<AppState>) -> Result<Arc<Session>, ToolError> {
    if let Some(s) = state
        .process
        .sessions()
        .into_iter()
        .find(|s| s.purpose == "editor" && s.ended().is_none())
    {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            format!("A managed editor is already running (session {}).", s.txn),
        )
        .hint("Stop it with stop_editor first."));
    }
    let program = godot()?;
    state
        .process
        .launch(
            state,
            LaunchSpec {
                purpose: "editor",
                program,
                args: vec![
                    "-e".into(),
                    "--headless".into(),
                    "--path".into(),
                    state.project.root().display().to_string(),
                ],
                user_args: vec![],
                tool_family: "runtime",
                operation: "start_editor",
                parent: None,
                writes_disk: false,
            },
        )
        .await
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EditorStarted {
    #[serde(flatten)]
    pub launched: Launched,
    pub receipt_durable: bool,
}

async fn start_editor(
    state: Arc<AppState>,
    _a: NoArgs,
    _f: CallFlags,
) -> Result<EditorStarted, ToolError> {
    let s = launch_editor(&state).await?;
    Ok(EditorStarted {
        launched: launched(&s),
        receipt_durable: true,
    })
}

async fn stop_editor(
    state: Arc<AppState>,
    _a: NoArgs,
    _f: CallFlags,
) -> Result<StoppedSession, ToolError> {
    let Some(s) = state
        .process
        .sessions()
        .into_iter()
        .find(|s| s.purpose == "editor" && s.ended().is_none())
    else {
        return Err(
            ToolError::new(ErrorCode::ResourceNotFound, "No managed editor is running.")
                .hint("Start one with start_editor."),
        );
    };
    let ended = s.stop(STOP_GRACE).await;
    Ok(StoppedSession {
        session_id: s.txn.to_string(),
        end: ended.as_ref().map(end_report),
    })
}

/// The canonical-write helper the add-on ships (`extends SceneTree`).
pub const HELPER_SCRIPT: &str = "res://addons/godot_mcp/probe/canonical.gd";

pub fn helper_tools() -> Vec<ToolDef> {
    vec![ToolDef::planned(
        ToolMeta {
            name: "canonicalize_resource",
            title: "Re-save a text resource canonically",
            description: "Re-save a .tres or .tscn exactly as Godot writes it, through a \
                supervised Godot helper (ResourceSaver); journaled.",
            class: SafetyClass::Destructive,
            toolset: Toolset::ResourceEdit,
            effect: EffectKind::File,
        },
        plan_canonicalize,
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CanonicalizeArgs {
    /// The resource (.tres) or scene (.tscn) to re-save.
    path: ResPath,
    /// Refuse if the file is no longer these bytes (sha256 hex, from read_resource).
    #[serde(default)]
    expected_sha256: Option<String>,
}

/// What canonicalize_resource will do (dry run and real run).
#[derive(Debug, Serialize, JsonSchema)]
pub struct CanonicalizeEffect {
    pub action: &'static str,
    pub path: String,
    pub sha256_before: String,
    pub helper: &'static str,
    pub composite: &'static str,
}

/// What the re-save added: its file transaction, linked to the helper's launch.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Canonicalized {
    pub transaction_id: String,
    pub linked_launch: String,
    pub sha256_after: String,
    pub persisted: bool,
}

fn plan_canonicalize(
    state: Arc<AppState>,
    args: CanonicalizeArgs,
) -> Result<Plan<CanonicalizeEffect, Canonicalized>, ToolError> {
    use godot_mcp_journal::{FileState, FileWrite, TxnOutcome};
    // The helper's output keeps the extension: Godot's text saver refuses to write a
    // PackedScene to a .tres.
    let out_name = match args.path.extension().as_deref() {
        Some("tres") => "out.tres",
        Some("tscn") => "out.tscn",
        _ => {
            return Err(ToolError::invalid_params(
                "path",
                format!(
                    "{} is not a text resource (.tres) or scene (.tscn)",
                    args.path
                ),
            ));
        }
    };
    let program = godot()?;
    let target = state.project.resolve("path", &args.path)?;
    let before = std::fs::read(&target)
        .map_err(|e| ToolError::new(ErrorCode::ResourceNotFound, format!("{}: {e}", args.path)))?;
    let pre = FileState::of(&before);
    let sha_before = match pre {
        FileState::Present { sha256 } => sha256.to_string(),
        FileState::Absent => String::new(),
    };
    if let Some(expected) = &args.expected_sha256
        && !sha_before.ends_with(expected.trim_start_matches("sha256:"))
    {
        return Err(ToolError::new(
            ErrorCode::Stale,
            format!(
                "{} changed since it was read; nothing was written",
                args.path
            ),
        ));
    }
    let effect = CanonicalizeEffect {
        action: "canonicalize",
        path: args.path.to_string(),
        sha256_before: sha_before,
        helper: HELPER_SCRIPT,
        composite: "file + process_launch",
    };
    let path = args.path.clone();
    Plan::new(effect, move || {
        let handle = tokio::runtime::Handle::current();
        let st = state.clone();
        let root = st.project.root().display().to_string();
        let session = handle.block_on(async {
            st.process
                .launch(
                    &st,
                    LaunchSpec {
                        purpose: "helper",
                        program,
                        args: vec![
                            "--headless".into(),
                            "--path".into(),
                            root,
                            "--script".into(),
                            HELPER_SCRIPT.into(),
                        ],
                        user_args: vec![
                            format!("--godot-mcp-in={path}"),
                            format!(
                                "--godot-mcp-out={}/{out_name}",
                                process::SESSION_DIR_PLACEHOLDER
                            ),
                        ],
                        tool_family: "resources",
                        operation: "canonicalize_helper",
                        parent: None,
                        writes_disk: true,
                    },
                )
                .await
        })?;
        let ended = handle.block_on(session.wait_or_kill(Duration::from_secs(120)));
        let Some(ended) = ended else {
            return Err(ToolError::internal("the helper did not end"));
        };
        let out = session.output_dir().join(out_name);
        let bytes = match (ended.code, std::fs::read(&out)) {
            (Some(0), Ok(b)) => b,
            _ => {
                let (stderr, _) = read_capped(&session.output_dir().join("stderr.log"));
                return Err(ToolError::new(
                    ErrorCode::PreconditionFailed,
                    format!(
                        "The Godot helper did not produce the canonical bytes ({}); nothing was \
                         written. {}",
                        serde_json::to_string(&process_end(&ended)).unwrap_or_default(),
                        stderr.lines().take(5).collect::<Vec<_>>().join(" | ")
                    ),
                ));
            }
        };
        // A uid the file had and the candidate lacks would silently cut every link to
        // this file (or from it) made by uid: refuse, whatever the helper did.
        let lost = lost_uids(&before, &bytes);
        if !lost.is_empty() {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "The Godot helper's output of {path} drops or changes its uid links ({}); \
                     nothing was written.",
                    lost.join(", ")
                ),
            ));
        }
        let sha_after = match FileState::of(&bytes) {
            FileState::Present { sha256 } => sha256.to_string(),
            FileState::Absent => String::new(),
        };
        let (tool_family, operation, idempotency) =
            crate::planes::project::journal_identity("resources", "canonicalize_resource");
        let req = FileWrite {
            rel_path: PathBuf::from(path.rel()),
            bytes,
            expected: Some(pre),
            idempotency,
            tool_family,
            operation,
        };
        let outcome = st
            .journal
            .lock()
            .write_file_linked(req, session.txn)
            .map_err(|e| crate::planes::project::write_error(&path, "path", e))?;
        let txn = match outcome {
            TxnOutcome::Committed { transaction_id, .. } => transaction_id,
            TxnOutcome::Replayed(r) => r.transaction_id,
        };
        Ok(Canonicalized {
            transaction_id: txn.to_string(),
            linked_launch: session.txn.to_string(),
            sha256_after: sha_after,
            persisted: true,
        })
    })
}

/// The uids of a text resource's tags (`uid="…"` in the `[gd_resource]` / `[gd_scene]`
/// header and in each `[ext_resource]`) that `before` has and `after` does not: the
/// header's own uid must stay the same, every dependency's uid must still be there.
fn lost_uids(before: &[u8], after: &[u8]) -> Vec<String> {
    let (own_before, deps_before) = tag_uids(before);
    let (own_after, deps_after) = tag_uids(after);
    let mut lost = Vec::new();
    if let Some(own) = own_before
        && own_after.as_deref() != Some(own.as_str())
    {
        lost.push(format!("header {own}"));
    }
    for dep in deps_before {
        if !deps_after.contains(&dep) {
            lost.push(format!("ext_resource {dep}"));
        }
    }
    lost
}

/// (header uid, ext_resource uids) of a text resource.
fn tag_uids(text: &[u8]) -> (Option<String>, std::collections::BTreeSet<String>) {
    fn uid_of(line: &str) -> Option<String> {
        let rest = &line[line.find(" uid=\"")? + 6..];
        Some(rest[..rest.find('"')?].to_string())
    }
    let text = String::from_utf8_lossy(text);
    let mut own = None;
    let mut deps = std::collections::BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("[gd_resource ") || line.starts_with("[gd_scene ") {
            own = own.or_else(|| uid_of(line));
        } else if line.starts_with("[ext_resource ") {
            deps.extend(uid_of(line));
        }
    }
    (own, deps)
}

#[cfg(test)]
mod tests {
    use super::lost_uids;
    use super::{Ended, end_report};
    use godot_mcp_journal::TxnStatus;
    use serde_json::json;

    fn ended(code: Option<i32>, signal: Option<i32>, by_server: bool, timed_out: bool) -> Ended {
        Ended {
            code,
            signal,
            sent_by_server: by_server,
            timed_out,
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

    const FILE: &str = "[gd_resource type=\"Resource\" load_steps=2 format=3 uid=\"uid://own\"]\n\n\
        [ext_resource type=\"Script\" uid=\"uid://dep\" path=\"res://s.gd\" id=\"1_a\"]\n\n\
        [resource]\nscript = ExtResource(\"1_a\")\n";

    #[test]
    fn a_candidate_that_keeps_every_uid_loses_none() {
        assert!(lost_uids(FILE.as_bytes(), FILE.as_bytes()).is_empty());
        // A file without uids has none to lose.
        let bare = b"[gd_resource type=\"Resource\" format=3]\n";
        assert!(lost_uids(bare, FILE.as_bytes()).is_empty());
    }

    #[test]
    fn a_dropped_or_changed_uid_is_named() {
        let dropped = FILE
            .replace(" uid=\"uid://own\"", "")
            .replace(" uid=\"uid://dep\"", "");
        assert_eq!(
            lost_uids(FILE.as_bytes(), dropped.as_bytes()),
            ["header uid://own", "ext_resource uid://dep"]
        );
        let changed = FILE.replace("uid://own", "uid://other");
        assert_eq!(
            lost_uids(FILE.as_bytes(), changed.as_bytes()),
            ["header uid://own"]
        );
    }
}
