//! Managed sessions: run_and_capture, play_scene, stop_scene, list_sessions, and the
//! managed editor (start_editor, stop_editor). The session lookup (`session_of`) and how
//! a process ended, as reported (`end_report`), are the kit's
//! (`tools/kit/game/session.rs`).

use super::common::{MAX_OUTPUT, NoArgs};
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{self, Ended, LaunchSpec, STOP_GRACE, Session, errors};
use crate::respath::ResPath;
use crate::tools::kit::game::display::{
    self, DisplayAsk, DisplayMode, RenderingDriver, RenderingMethod,
};
use crate::tools::kit::game::launch::{GameLaunch, launch_game};
use crate::tools::kit::game::session::{EndReport, GAME, end_report, session_of};
use crate::tools::kit::godot_process::godot;
use crate::tools::{Call, Out};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::ReleasedReply;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub(super) fn read_capped(path: &std::path::Path) -> (String, bool) {
    let bytes = std::fs::read(path).unwrap_or_default();
    let truncated = bytes.len() > MAX_OUTPUT;
    let slice = &bytes[bytes.len().saturating_sub(MAX_OUTPUT)..];
    (String::from_utf8_lossy(slice).into_owned(), truncated)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunArgs {
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

pub(super) async fn run_and_capture(Call { state, args, .. }: Call<RunArgs>) -> Out<Captured> {
    let program = godot(&state)?;
    let timeout_ms = ToolError::arg_in(
        "timeout_ms",
        args.timeout_ms,
        10_000,
        1..=600_000,
        "timeout_ms must be 1–600000",
    )?;
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
pub(crate) struct Captured {
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

pub(super) fn capture(session: &Session, ended: &Ended) -> Captured {
    let dir = session.output_dir();
    let (stdout, out_trunc) = read_capped(&dir.join("stdout.log"));
    let (stderr, err_trunc) = read_capped(&dir.join("stderr.log"));
    let mut errs = errors::parse(&stderr);
    errs.extend(errors::parse(&stdout));
    crate::call_scope::step(format!("output read: {} script error(s)", errs.len()));
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
pub(crate) struct PlayArgs {
    /// The scene (default: main scene).
    #[serde(default)]
    scene: Option<ResPath>,
    /// Run headless (default: only without a display or a Godot build that renders).
    #[serde(default)]
    headless: Option<bool>,
    /// Godot's --rendering-driver (implies a renderer).
    #[serde(default)]
    rendering_driver: Option<RenderingDriver>,
    /// Godot's --rendering-method (implies a renderer).
    #[serde(default)]
    rendering_method: Option<RenderingMethod>,
    /// Start with the clock held at frame 0 and fixed frame timing; advance it with
    /// game_step (default false).
    #[serde(default)]
    paused: Option<bool>,
}

/// A supervised process just launched (play_scene, start_editor).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Launched {
    pub session_id: String,
    pub transaction_id: String,
    pub pid: i32,
    pub pgid: i32,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PlayOut {
    #[serde(flatten)]
    pub launched: Launched,
    /// Headless or with a renderer, and why.
    pub display: DisplayMode,
    pub start_time: u64,
    pub receipt_durable: bool,
    pub probe: &'static str,
    pub autoload_installed: bool,
}

pub(super) fn launched(s: &Session) -> Launched {
    Launched {
        session_id: s.txn.to_string(),
        transaction_id: s.txn.to_string(),
        pid: s.receipt.pid,
        pgid: s.receipt.pgid,
    }
}

/// How long play_scene waits for the game's probe to say hello (or the game to end).
const READY_WAIT: Duration = Duration::from_secs(30);

pub(super) async fn play_scene(Call { state, args, .. }: Call<PlayArgs>) -> Out<PlayOut> {
    let ask = DisplayAsk {
        headless: args.headless,
        driver: args.rendering_driver,
        method: args.rendering_method,
    };
    let mode = display::mode_for(&state, &godot(&state)?, ask).await?;
    let (session, probe_installed) = launch_game(
        &state,
        GameLaunch {
            purpose: "play_scene",
            scene: args.scene.as_ref(),
            display: display::engine_args(&mode, ask),
            held: args.paused.unwrap_or(false),
            seed: None,
            blank: false,
        },
    )
    .await?;
    // Ready when its probe says hello; a game that ends first (a renderer that cannot
    // start, a script that quits) answers with how it ended and what it printed.
    let probe = if probe_installed {
        let hello = tokio::select! {
            h = session.control.wait_connected(READY_WAIT) => h,
            _ = session.wait(READY_WAIT) => None,
        };
        if hello.is_none()
            && let Some(ended) = session.ended()
        {
            return Err(display::exited_early(
                "The game",
                &session,
                &ended,
                Some(&mode),
            ));
        }
        if hello.is_some() {
            "connected (passed on the command line with --script)"
        } else {
            "passed on the command line (--script); not connected after 30 s"
        }
    } else {
        "not installed: addons/godot_mcp/probe/probe.gd is missing; input, screenshot and \
         properties are unavailable"
    };
    Ok(PlayOut {
        launched: launched(&session),
        display: mode,
        start_time: session.receipt.start_time,
        receipt_durable: true,
        probe,
        autoload_installed: false,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StopArgs {
    /// The game's session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
}

/// One session a stop request ended (`end` is null if it did not end).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StoppedSession {
    pub session_id: String,
    pub end: Option<EndReport>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StopOut {
    pub stopped: Vec<StoppedSession>,
}

/// Stops one game (never the editor: stop_editor does): the one `session_id` names,
/// or the newest running one.
pub(super) async fn stop_scene(Call { state, args, .. }: Call<StopArgs>) -> Out<StopOut> {
    let s = session_of(&state, args.session_id.as_deref())?;
    if s.purpose != GAME {
        let tool = if s.purpose == "editor" {
            "stop_editor stops it"
        } else {
            "it ends with its call"
        };
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "Session {} is not a game but {}: stop_scene stops games only; {tool}.",
                s.txn,
                if s.purpose == "editor" {
                    "the managed editor"
                } else {
                    s.purpose
                }
            ),
        )
        .param("session_id")
        .hint("list_sessions shows each session's purpose."));
    }
    let _ = s
        .control
        .request::<ReleasedReply>(ProbeRequest::ReleaseAll {}, Duration::from_millis(500))
        .await;
    let ended = s.stop(STOP_GRACE).await;
    Ok(StopOut {
        stopped: vec![StoppedSession {
            session_id: s.txn.to_string(),
            end: ended.as_ref().map(end_report),
        }],
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SessionsOut {
    pub boundary: process::BoundaryReport,
    pub sessions: Vec<SessionRow>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SessionRow {
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
pub(crate) struct DebuggerRow {
    pub connected: bool,
    pub stopped: bool,
    pub reason: Option<String>,
}

pub(super) async fn list_sessions(Call { state, .. }: Call<NoArgs>) -> Out<SessionsOut> {
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
