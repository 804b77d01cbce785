//! Managed sessions: run_and_capture, play_scene, stop_scene, list_sessions, and the
//! managed editor (start_editor, stop_editor); how a process ended, as reported.

use super::{MAX_OUTPUT, NoArgs, PROBE_SCRIPT};
use crate::error::{ErrorCode, ToolError};
use crate::honesty::ProcessEnd;
use crate::planes::process::{self, Ended, LaunchSpec, STOP_GRACE, Session, errors};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::godot_process::godot;
use crate::tools::{Call, Out};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::ReleasedReply;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub(super) fn read_capped(path: &std::path::Path) -> (String, bool) {
    let bytes = std::fs::read(path).unwrap_or_default();
    let truncated = bytes.len() > MAX_OUTPUT;
    let slice = &bytes[bytes.len().saturating_sub(MAX_OUTPUT)..];
    (String::from_utf8_lossy(slice).into_owned(), truncated)
}

pub(super) fn process_end(e: &Ended) -> ProcessEnd {
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
pub struct PlayArgs {
    /// The scene (default: main scene).
    #[serde(default)]
    scene: Option<ResPath>,
    /// Run headless (default true).
    #[serde(default)]
    headless: Option<bool>,
    /// Start with the clock held at frame 0 and fixed frame timing; advance it with
    /// game_step (default false).
    #[serde(default)]
    paused: Option<bool>,
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

pub(super) fn launched(s: &Session) -> Launched {
    Launched {
        session_id: s.txn.to_string(),
        transaction_id: s.txn.to_string(),
        pid: s.receipt.pid,
        pgid: s.receipt.pgid,
    }
}

/// How to start a game with the probe (play_scene, run_playtest).
pub(crate) struct GameLaunch<'a> {
    pub purpose: &'static str,
    pub scene: Option<&'a ResPath>,
    pub headless: bool,
    /// The clock held from frame 0, with `--fixed-fps` at the physics tick rate.
    pub held: bool,
    /// The global RNG's seed, set before the scene loads.
    pub seed: Option<i64>,
}

/// Starts a supervised game; whether the probe was passed to it (it needs the add-on).
pub(crate) async fn launch_game(
    state: &Arc<AppState>,
    how: GameLaunch<'_>,
) -> Result<(Arc<Session>, bool), ToolError> {
    let program = godot(state)?;
    let mut engine = Vec::new();
    if how.headless {
        engine.push("--headless".to_string());
    }
    engine.push("--path".into());
    engine.push(state.project.root().display().to_string());
    let probe_installed = state
        .project
        .root()
        .join("addons/godot_mcp/probe/probe.gd")
        .is_file();
    if (how.held || how.seed.is_some()) && !probe_installed {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            "A held clock and a seed need the runtime probe, which is not installed.",
        )
        .required("probe_installed")
        .hint("Install the godot_mcp add-on (it ships addons/godot_mcp/probe/probe.gd)."));
    }
    let mut user = Vec::new();
    if how.held {
        engine.push("--fixed-fps".into());
        engine.push(super::clock::physics_ticks(state).to_string());
        user.push("--godot-mcp-paused".to_string());
    }
    if let Some(seed) = how.seed {
        user.push(format!("--godot-mcp-seed={seed}"));
    }
    if probe_installed {
        engine.push("--script".into());
        engine.push(PROBE_SCRIPT.into());
        if let Some(scene) = how.scene {
            user.push(format!("--godot-mcp-scene={scene}"));
        }
    } else if let Some(scene) = how.scene {
        engine.push(scene.to_string());
    }
    let session = state
        .process
        .launch(
            state,
            LaunchSpec {
                purpose: how.purpose,
                program,
                args: engine,
                user_args: user,
                tool_family: "runtime",
                operation: how.purpose,
                parent: None,
                writes_disk: false,
            },
        )
        .await?;
    Ok((session, probe_installed))
}

pub(super) async fn play_scene(Call { state, args, .. }: Call<PlayArgs>) -> Out<PlayOut> {
    let (session, probe_installed) = launch_game(
        &state,
        GameLaunch {
            purpose: "play_scene",
            scene: args.scene.as_ref(),
            headless: args.headless.unwrap_or(true),
            held: args.paused.unwrap_or(false),
            seed: None,
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

pub(super) async fn stop_scene(Call { state, args, .. }: Call<StopArgs>) -> Out<StopOut> {
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
            .request::<ReleasedReply>(ProbeRequest::ReleaseAll {}, Duration::from_millis(500))
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
    let program = godot(state)?;
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

pub(super) async fn start_editor(Call { state, .. }: Call<NoArgs>) -> Out<EditorStarted> {
    let s = launch_editor(&state).await?;
    Ok(EditorStarted {
        launched: launched(&s),
        receipt_durable: true,
    })
}

pub(super) async fn stop_editor(Call { state, .. }: Call<NoArgs>) -> Out<StoppedSession> {
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
