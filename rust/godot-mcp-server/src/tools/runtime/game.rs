//! The developer's loop beyond `runtime.rs`: input sequences and recording, whether a
//! game plays, performance monitors (game and editor), the running game's scene tree, UI
//! search and per-frame samples (through the game's probe), and the editor's file system
//! (rescan, import status from disk, importing an external asset through the journal).
//!
//! Per-function profiler data is not here: Godot collects it only inside its debugger
//! (the `servers` `EngineDebugger` profiler, turned on and read over the remote-debug
//! protocol), so `profile_game_functions` (toolset `profiling`) lives with the debugger
//! tools in `tools/debugger/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::commands::{self as cmd, BridgeCommand};
use godot_mcp_protocol::probe::{
    FindUiReply, HeldReply, MonitorsReply, ProbeEvent, RecordedEvent, RecordedReply,
    RecordingReply, ReleasedReply, SampleReply, StatusReply, TreeReply,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{ErrorCode, ToolError};
use crate::honesty::Persistence;
use crate::planes::editor::RequestFailure;
use crate::planes::process::Session;
use crate::planes::process::control::ControlError;
use crate::planes::project::Expect;
use crate::respath::ResPath;
use crate::rules::{EffectKind, Precondition, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::common::{Walk, project_too_large, walk_project};
use crate::tools::runtime::{
    InputEvent, await_probe, ensure_not_breaked, meta, probe_error, probe_refusal, probe_request,
    sampling_ticker, session_of,
};
use crate::tools::{CallFlags, Plan, ToolDef, ToolMeta};

/// The running call's cancellation (see [`crate::call_scope`]); a long tool that holds
/// something (play_input_sequence) watches it: rmcp drops a cancelled call's answer but
/// keeps polling the call.
fn call_cancellation() -> CancellationToken {
    crate::call_scope::cancellation()
}

fn in_set(mut m: ToolMeta, toolset: Toolset) -> ToolMeta {
    m.toolset = toolset;
    m
}

pub fn tools() -> Vec<ToolDef> {
    let rt = |name, title, description| meta(name, title, description, None);
    vec![
        ToolDef::new(
            rt(
                "play_input_sequence",
                "Play an input sequence in the running game",
                "Play timed input steps (event, hold_ms, wait_ms) in a running game; \
                 cancelling the request releases every held input at once.",
            ),
            play_input_sequence,
        ),
        ToolDef::new(
            rt(
                "record_input",
                "Start recording the game's input",
                "Start recording the key, mouse-button and action events a running game \
                 receives; stop_recording returns them.",
            ),
            record_input,
        ),
        ToolDef::new(
            rt(
                "stop_recording",
                "Stop recording the game's input",
                "Stop record_input; returns the events as play_input_sequence steps.",
            ),
            stop_recording,
        ),
        ToolDef::new(
            rt(
                "is_playing",
                "Whether a game is playing",
                "Whether a managed game session runs and its probe answers; held inputs.",
            ),
            is_playing,
        ),
        ToolDef::new(
            in_set(
                rt(
                    "get_performance_monitors",
                    "Performance monitors of the game or editor",
                    "Sample Godot's performance monitors (FPS, process/physics ms, draw calls, \
                     memory, objects, nodes, physics) of a running game or the editor; \
                     min/avg/max per monitor.",
                ),
                Toolset::Profiling,
            ),
            get_performance_monitors,
        ),
        ToolDef::new(
            in_set(
                rt(
                    "get_game_scene_tree",
                    "The running game's scene tree",
                    "The running game's live scene tree (path, class, depth, children), \
                     paginated.",
                ),
                Toolset::GameInspect,
            ),
            get_game_scene_tree,
        ),
        ToolDef::new(
            in_set(
                rt(
                    "find_ui_elements",
                    "Find UI elements in the running game",
                    "Find Controls in the running game by text and/or class; their screen \
                     rects and visibility.",
                ),
                Toolset::GameInspect,
            ),
            find_ui_elements,
        ),
        ToolDef::new(
            in_set(
                rt(
                    "sample_game_property",
                    "Sample a property over frames",
                    "Read a node property of the running game on each of the next N frames.",
                ),
                Toolset::GameInspect,
            ),
            sample_game_property,
        ),
        ToolDef::new(
            in_set(
                rt(
                    "rescan_filesystem",
                    "Rescan the editor's file system",
                    "Make the connected editor rescan the project and import what changed; \
                     waits until it finished (TIMEOUT if not within timeout_ms).",
                ),
                Toolset::Filesystem,
            ),
            rescan_filesystem,
        ),
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Filesystem,
                "get_import_status",
                "Import status of assets",
                "Importable files whose import is missing, failed or stale (from the \
                 .import files and .godot/imported on disk).",
            ),
            get_import_status,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "import_asset",
                title: "Import an external asset",
                description: "Copy an image, model or sound into the project (journaled) and \
                    wait for the editor's import. Sources outside the project: only from \
                    operator-allowed folders (--import-dir).",
                class: SafetyClass::Destructive,
                toolset: Toolset::Filesystem,
                effect: Some(EffectKind::File),
            },
            plan_import_asset,
        ),
    ]
}

// ---- input: sequences, recording, is_playing ------------------------------------

/// One step of an input sequence.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Press this (omit for a pause).
    #[serde(default)]
    event: Option<InputEvent>,
    /// Ms until it is released, 0-60000; the sequence goes on meanwhile (default 0: a tap).
    #[serde(default)]
    #[schemars(range(max = 60000))]
    hold_ms: Option<u64>,
    /// Ms before the next step, 0-60000 (default 0).
    #[serde(default)]
    #[schemars(range(max = 60000))]
    wait_ms: Option<u64>,
    /// Press on this frame after the sequence starts (1: the next), in place of ms:
    /// the clock is held and advanced through the sequence.
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    at_frame: Option<u64>,
    /// Frames it stays pressed (default 1).
    #[serde(default)]
    #[schemars(range(max = 10000))]
    hold_frames: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SequenceArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// 1-1000 steps; their waits add up to at most 300000 ms.
    steps: Vec<Step>,
}

const MAX_STEPS: usize = 1000;
const MAX_STEP_MS: u64 = 60_000;
const MAX_SEQUENCE_MS: u64 = 300_000;
/// How long a release may take when the sequence ends early.
const RELEASE_TIMEOUT: Duration = Duration::from_millis(1000);

/// Releases everything the game holds if the sequence ends before its last step (an
/// error, or the call's future dropped): the backstop behind the explicit release.
struct ReleaseOnDrop {
    session: Option<Arc<Session>>,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        if let Some(session) = self.session.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move {
                let _ = release_all(&session).await;
            });
        }
    }
}

async fn release_all(session: &Session) -> Option<u64> {
    session
        .control
        .request::<ReleasedReply>(ProbeRequest::ReleaseAll {}, RELEASE_TIMEOUT)
        .await
        .ok()
        .and_then(Result::ok)
        .map(|r| r.released)
}

fn check_steps(steps: &[Step]) -> Result<(), ToolError> {
    if steps.is_empty() || steps.len() > MAX_STEPS {
        return Err(ToolError::invalid_params(
            "steps",
            format!("steps must hold 1 to {MAX_STEPS} steps"),
        ));
    }
    if steps
        .iter()
        .any(|s| s.at_frame.is_some() || s.hold_frames.is_some())
    {
        return check_framed(steps);
    }
    let mut total = 0u64;
    for (i, s) in steps.iter().enumerate() {
        for (name, v) in [("hold_ms", s.hold_ms), ("wait_ms", s.wait_ms)] {
            if v.unwrap_or(0) > MAX_STEP_MS {
                return Err(ToolError::invalid_params(
                    format!("steps[{i}].{name}"),
                    format!("{name} must be 0–{MAX_STEP_MS}"),
                ));
            }
        }
        if s.event.is_none() && s.hold_ms.is_some() {
            return Err(ToolError::invalid_params(
                format!("steps[{i}].hold_ms"),
                "hold_ms needs an event to hold",
            ));
        }
        total += s.wait_ms.unwrap_or(0);
    }
    if total > MAX_SEQUENCE_MS {
        return Err(ToolError::invalid_params(
            "steps",
            format!("the waits add up to {total} ms; at most {MAX_SEQUENCE_MS} ms"),
        ));
    }
    Ok(())
}

/// A sequence on frames: every step an event with `at_frame`, no milliseconds.
fn check_framed(steps: &[Step]) -> Result<(), ToolError> {
    for (i, s) in steps.iter().enumerate() {
        let bad = |field: &str, why: &str| {
            Err(ToolError::invalid_params(
                format!("steps[{i}].{field}"),
                why.to_string(),
            ))
        };
        if s.hold_ms.is_some() {
            return bad(
                "hold_ms",
                "a sequence on frames holds by hold_frames, not hold_ms",
            );
        }
        if s.wait_ms.is_some() {
            return bad(
                "wait_ms",
                "a sequence on frames is timed by at_frame, not wait_ms",
            );
        }
        if s.event.is_none() {
            return bad("event", "a step on a frame needs an event");
        }
        match s.at_frame {
            Some(f) if (1..=crate::tools::runtime::MAX_FRAMES).contains(&f) => {}
            _ => {
                return bad(
                    "at_frame",
                    "at_frame must be 1–10000 in every step of a sequence on frames",
                );
            }
        }
        if s.hold_frames
            .is_some_and(|h| h > crate::tools::runtime::MAX_FRAMES)
        {
            return bad("hold_frames", "hold_frames must be 0–10000");
        }
    }
    Ok(())
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SequenceOut {
    pub session_id: String,
    pub steps_played: usize,
    pub events_sent: usize,
    /// Inputs the game held after the last step (null if no event was sent).
    pub held_at_end: Option<u64>,
    pub duration_ms: u64,
    /// A sequence on frames: the frame the held clock stands at after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
}

async fn play_input_sequence(
    state: Arc<AppState>,
    args: SequenceArgs,
    _f: CallFlags,
) -> Result<SequenceOut, ToolError> {
    check_steps(&args.steps)?;
    let session = session_of(&state, args.session_id.as_deref())?;
    ensure_not_breaked(&session).await?;
    let cancel = call_cancellation();
    let mut guard = ReleaseOnDrop {
        session: Some(session.clone()),
    };
    let start = Instant::now();
    if args.steps[0].at_frame.is_some() {
        let plan: Vec<(ProbeEvent, u64, u64)> = args
            .steps
            .iter()
            .filter_map(|s| {
                Some((
                    s.event.as_ref()?.wire(),
                    s.at_frame?,
                    s.hold_frames.unwrap_or(1),
                ))
            })
            .collect();
        let played = tokio::select! {
            v = crate::tools::runtime::play_on_frames(&session, &plan) => v?,
            () = cancel.cancelled() => {
                guard.session = None;
                let released = release_all(&session).await;
                return Err(ToolError::new(
                    ErrorCode::PreconditionFailed,
                    "The input sequence was cancelled; every held input was released.",
                )
                .required("not_cancelled")
                .details(json!({"released": released})));
            }
        };
        guard.session = None;
        return Ok(SequenceOut {
            session_id: session.txn.to_string(),
            steps_played: plan.len(),
            events_sent: plan.len(),
            held_at_end: Some(played.1),
            duration_ms: start.elapsed().as_millis() as u64,
            frame: Some(played.0),
        });
    }
    let mut sent = 0usize;
    let mut held = None;
    crate::call_scope::expect_steps(args.steps.len() as u64);
    for (i, step) in args.steps.iter().enumerate() {
        let cancelled = |at: usize| {
            let session = session.clone();
            let total = args.steps.len();
            async move {
                // Recovery: a cancelled sequence releases at once, not when holds end.
                let released = release_all(&session).await;
                tracing::info!(steps_played = at, released = ?released, "input sequence cancelled");
                ToolError::new(
                    ErrorCode::PreconditionFailed,
                    format!(
                        "The input sequence was cancelled after {at} of {total} steps; every \
                         held input was released."
                    ),
                )
                .required("not_cancelled")
                .details(json!({"steps_played": at, "released": released}))
            }
        };
        if let Some(event) = &step.event {
            let request = ProbeRequest::Input {
                event: event.wire(),
                hold_ms: step.hold_ms.unwrap_or(0),
                at_frame: None,
                hold_frames: None,
            };
            let v = tokio::select! {
                v = probe_request::<HeldReply>(&session, request) => v,
                () = cancel.cancelled() => {
                    guard.session = None;
                    return Err(cancelled(i).await);
                }
            };
            let v = v.map_err(|e| {
                let mut e = e;
                e.message = format!("step {i}: {}", e.message);
                e
            })?;
            sent += 1;
            held = Some(v.held);
        }
        if let Some(ms) = step.wait_ms.filter(|ms| *ms > 0) {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = cancel.cancelled() => {
                    guard.session = None;
                    return Err(cancelled(i + 1).await);
                }
            }
        }
        crate::call_scope::step(format!(
            "input step {} of {} played",
            i + 1,
            args.steps.len()
        ));
    }
    guard.session = None;
    Ok(SequenceOut {
        session_id: session.txn.to_string(),
        steps_played: args.steps.len(),
        events_sent: sent,
        held_at_end: held,
        duration_ms: start.elapsed().as_millis() as u64,
        frame: None,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RecordingOut {
    pub session_id: String,
    pub recording: bool,
}

async fn record_input(
    state: Arc<AppState>,
    args: SessionArgs,
    _f: CallFlags,
) -> Result<RecordingOut, ToolError> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let _: RecordingReply = probe_request(&session, ProbeRequest::RecordStart {}).await?;
    Ok(RecordingOut {
        session_id: session.txn.to_string(),
        recording: true,
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RecordedOut {
    pub session_id: String,
    pub duration_ms: u64,
    pub events_recorded: usize,
    pub steps: Vec<RecordedStep>,
    pub releases_without_press: usize,
    /// Events the recorder does not replay, counted by class.
    pub skipped: Option<BTreeMap<String, u64>>,
    /// The same presses on the frames they reached the game (frame 1: the first
    /// press's), for a frame-exact replay on a held game; absent when the probe does
    /// not count frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_steps: Option<Vec<FrameStep>>,
}

/// A play_input_sequence step on a frame, made from a recording.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FrameStep {
    pub event: Value,
    pub at_frame: u64,
    pub hold_frames: u64,
}

/// Recorded events as steps on frames, when every event has its frame: each press
/// held until its release (a press still down at the stop: until the last event).
fn to_frame_steps(events: &[RecordedEvent]) -> Option<Vec<FrameStep>> {
    let mut sorted: Vec<(u64, &RecordedEvent)> = events
        .iter()
        .map(|e| e.frame.map(|f| (f, e)))
        .collect::<Option<_>>()?;
    sorted.sort_by_key(|(f, _)| *f);
    let first = sorted.iter().find(|(_, e)| e.pressed)?.0;
    let last = sorted.last()?.0;
    let mut presses: Vec<(u64, &ProbeEvent, Option<u64>)> = Vec::new();
    for (f, e) in &sorted {
        let id = event_identity(&e.event);
        if e.pressed {
            presses.push((*f, &e.event, None));
        } else if let Some(p) = presses
            .iter_mut()
            .find(|(_, ev, hold)| hold.is_none() && event_identity(ev) == id)
        {
            p.2 = Some(f - p.0);
        }
    }
    Some(
        presses
            .into_iter()
            .map(|(f, ev, hold)| FrameStep {
                event: serde_json::to_value(ev).unwrap_or_default(),
                at_frame: f - first + 1,
                hold_frames: hold.unwrap_or(last + 1 - f),
            })
            .collect(),
    )
}

/// A play_input_sequence step made from a recording (a pause has only `wait_ms`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RecordedStep {
    /// The recorded event, in the probe's wire form (what `event` of a step takes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_ms: Option<u64>,
    pub wait_ms: u64,
}

async fn stop_recording(
    state: Arc<AppState>,
    args: SessionArgs,
    _f: CallFlags,
) -> Result<RecordedOut, ToolError> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let v: RecordedReply = probe_request(&session, ProbeRequest::RecordStop {}).await?;
    let (steps, unpaired) = to_steps(&v.events, v.duration_ms);
    Ok(RecordedOut {
        session_id: session.txn.to_string(),
        duration_ms: v.duration_ms,
        events_recorded: v.events.len(),
        steps,
        releases_without_press: unpaired,
        skipped: Some(v.skipped),
        frame_steps: to_frame_steps(&v.events),
    })
}

/// What makes two events the same key, button or action (a release pairs with its press).
fn event_identity(ev: &ProbeEvent) -> (&'static str, String) {
    match ev {
        ProbeEvent::Key { key } => ("key", key.clone()),
        ProbeEvent::MouseButton { button, .. } => ("mouse_button", button.to_string()),
        ProbeEvent::Action { action } => ("action", action.clone()),
    }
}

/// Recorded `{t_ms, event, pressed}` events as play_input_sequence steps: each press is
/// a step holding it until its release (a press still down at the stop is held until
/// `duration_ms`), waiting until the next press; the last step waits until every hold
/// has ended, so the replay returns with nothing held. Waits over 60 s are split into
/// pauses. Returns the steps and how many releases had no press (it came before the
/// recording started).
fn to_steps(events: &[RecordedEvent], duration_ms: u64) -> (Vec<RecordedStep>, usize) {
    let mut sorted: Vec<&RecordedEvent> = events.iter().collect();
    sorted.sort_by_key(|e| e.t_ms);
    // (t, event, hold) per press, in time order.
    let mut presses: Vec<(u64, &ProbeEvent, Option<u64>)> = Vec::new();
    let mut unpaired = 0;
    for e in sorted {
        let t = e.t_ms;
        let id = event_identity(&e.event);
        if e.pressed {
            presses.push((t, &e.event, None));
        } else if let Some(p) = presses
            .iter_mut()
            .find(|(_, ev, hold)| hold.is_none() && event_identity(ev) == id)
        {
            p.2 = Some(t - p.0);
        } else {
            unpaired += 1;
        }
    }
    let mut steps = Vec::new();
    let end = presses
        .iter()
        .map(|(t, _, hold)| t + hold.unwrap_or(duration_ms.saturating_sub(*t)))
        .max()
        .unwrap_or(0);
    for (i, (t, ev, hold)) in presses.iter().enumerate() {
        let hold = hold
            .unwrap_or(duration_ms.saturating_sub(*t))
            .min(MAX_STEP_MS);
        let next = presses.get(i + 1).map_or(end.max(*t + hold), |n| n.0);
        let mut wait = next.saturating_sub(*t);
        steps.push(RecordedStep {
            event: serde_json::to_value(ev).ok(),
            hold_ms: Some(hold),
            wait_ms: wait.min(MAX_STEP_MS),
        });
        wait = wait.saturating_sub(MAX_STEP_MS);
        while wait > 0 {
            steps.push(RecordedStep {
                event: None,
                hold_ms: None,
                wait_ms: wait.min(MAX_STEP_MS),
            });
            wait = wait.saturating_sub(MAX_STEP_MS);
        }
    }
    (steps, unpaired)
}

/// Whether a game plays; for a running one, whether its probe answers (`probe`:
/// `answering`, `not_answering` with a `reason`, or `not_connected`).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct PlayingOut {
    pub playing: bool,
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaked: Option<Option<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_inputs: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

async fn is_playing(
    state: Arc<AppState>,
    args: SessionArgs,
    _f: CallFlags,
) -> Result<PlayingOut, ToolError> {
    let session = match (
        &args.session_id,
        session_of(&state, args.session_id.as_deref()),
    ) {
        (_, Ok(s)) => s,
        (None, Err(_)) => return Ok(PlayingOut::default()),
        (Some(_), Err(e)) => return Err(e),
    };
    let id = Some(session.txn.to_string());
    if session.ended().is_some() {
        return Ok(PlayingOut {
            session_id: id,
            ..PlayingOut::default()
        });
    }
    // A game that just started: its probe connects within moments.
    await_probe(&session).await;
    let status = session
        .control
        .request::<StatusReply>(ProbeRequest::Status {}, Duration::from_millis(1000))
        .await;
    let playing = PlayingOut {
        playing: true,
        session_id: id,
        ..PlayingOut::default()
    };
    Ok(match status {
        Ok(Ok(v)) => PlayingOut {
            probe: Some("answering"),
            breaked: Some(Some(v.breaked)),
            held_inputs: Some(Some(v.held)),
            ..playing
        },
        // It answered, though not with a status: it runs, its state unknown.
        Ok(Err(_)) => PlayingOut {
            probe: Some("answering"),
            breaked: Some(None),
            held_inputs: Some(None),
            ..playing
        },
        Err(ControlError::Timeout) => PlayingOut {
            probe: Some("not_answering"),
            reason: Some(
                "the probe did not answer within 1000 ms: stopped at a breakpoint, or hung",
            ),
            ..playing
        },
        Err(_) => PlayingOut {
            probe: Some("not_connected"),
            ..playing
        },
    })
}

// ---- profiling ----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorTarget {
    /// A running game (through its probe).
    #[default]
    Game,
    /// The connected editor (through the bridge).
    Editor,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorsArgs {
    /// game (default) or editor.
    #[serde(default)]
    target: MonitorTarget,
    /// The game session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// Snapshots, 1-100 (default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    samples: Option<u32>,
    /// Ms between snapshots, 10-5000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 10, max = 5000))]
    interval_ms: Option<u64>,
}

/// One monitor over a sampling window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct Stats {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub last: f64,
}

/// Min, average, max and last value of each monitor over `snapshots`.
fn reduce(snapshots: &[Value]) -> BTreeMap<String, Stats> {
    let mut by_name: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in snapshots {
        for (name, v) in s.as_object().into_iter().flatten() {
            if let Some(x) = v.as_f64() {
                by_name.entry(name.as_str()).or_default().push(x);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (name, xs) in by_name {
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let avg = xs.iter().sum::<f64>() / xs.len() as f64;
        out.insert(
            name.into(),
            Stats {
                min,
                avg,
                max,
                last: xs[xs.len() - 1],
            },
        );
    }
    out
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MonitorsOut {
    pub target: &'static str,
    pub samples: usize,
    pub window_ms: u64,
    /// Per monitor (fps, process_time_ms, nodes, ...).
    pub monitors: BTreeMap<String, Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

async fn get_performance_monitors(
    state: Arc<AppState>,
    args: MonitorsArgs,
    _f: CallFlags,
) -> Result<MonitorsOut, ToolError> {
    let samples = args.samples.unwrap_or(5);
    let interval_ms = args.interval_ms.unwrap_or(200);
    let mut ticker = sampling_ticker(samples, 100, interval_ms)?;
    let session = match args.target {
        MonitorTarget::Game => Some(session_of(&state, args.session_id.as_deref())?),
        MonitorTarget::Editor if args.session_id.is_some() => {
            return Err(ToolError::invalid_params(
                "session_id",
                "session_id names a game; the editor target takes none",
            ));
        }
        MonitorTarget::Editor => None,
    };
    let start = Instant::now();
    let mut snapshots = Vec::new();
    for _ in 0..samples {
        ticker.tick().await;
        let v = match &session {
            Some(s) => {
                let m: MonitorsReply = probe_request(s, ProbeRequest::Monitors {}).await?;
                json!({"monitors": m.monitors})
            }
            None => {
                let st = state.clone();
                tokio::task::spawn_blocking(move || {
                    crate::tools::editor::ask(&st, &cmd::EditorMonitors {}, None)
                })
                .await
                .map_err(|e| ToolError::internal(format!("editor request task failed: {e}")))??
            }
        };
        snapshots.push(v["monitors"].clone());
    }
    Ok(MonitorsOut {
        target: match args.target {
            MonitorTarget::Game => "game",
            MonitorTarget::Editor => "editor",
        },
        samples: snapshots.len(),
        window_ms: start.elapsed().as_millis() as u64,
        monitors: reduce(&snapshots),
        session_id: session.map(|s| s.txn.to_string()),
    })
}

// ---- the running game: tree, UI, samples ----------------------------------------

/// A node path in the running game (`/root/Main/Player`).
fn check_node_path(param: &str, path: &str) -> Result<(), ToolError> {
    if !path.starts_with("/root") || path.len() > 1024 {
        return Err(ToolError::invalid_params(
            param,
            format!("{path:?} is not an absolute node path like /root/Main/Player"),
        ));
    }
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GameTreeArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Start here (default /root).
    #[serde(default)]
    root: Option<String>,
    /// Levels below root, 0-64 (default: all).
    #[serde(default)]
    #[schemars(range(max = 64))]
    max_depth: Option<u32>,
    #[serde(default)]
    offset: Option<u32>,
    /// 1-500 (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    limit: Option<u32>,
}

/// One node of the running game's tree: the probe's answer row, as it is.
pub use godot_mcp_protocol::probe::TreeNode as GameNode;

#[derive(Debug, Serialize, JsonSchema)]
pub struct GameTreeOut {
    pub session_id: String,
    pub root: String,
    pub nodes: Vec<GameNode>,
    pub total: u64,
    pub offset: u32,
    pub next_offset: Option<u64>,
    pub capped: bool,
}

async fn get_game_scene_tree(
    state: Arc<AppState>,
    args: GameTreeArgs,
    _f: CallFlags,
) -> Result<GameTreeOut, ToolError> {
    let root = args.root.unwrap_or_else(|| "/root".into());
    check_node_path("root", &root)?;
    let limit = args.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ToolError::invalid_params("limit", "limit must be 1–500"));
    }
    if args.max_depth.is_some_and(|d| d > 64) {
        return Err(ToolError::invalid_params(
            "max_depth",
            "max_depth must be 0–64",
        ));
    }
    let offset = args.offset.unwrap_or(0);
    let session = session_of(&state, args.session_id.as_deref())?;
    let request = ProbeRequest::Tree {
        root: root.clone(),
        max_depth: args.max_depth.map(u64::from),
        offset: u64::from(offset),
        limit: u64::from(limit),
    };
    let v: TreeReply = probe_request(&session, request).await?;
    let total = v.total;
    let nodes: Vec<GameNode> = v.nodes;
    let next = u64::from(offset) + nodes.len() as u64;
    Ok(GameTreeOut {
        session_id: session.txn.to_string(),
        root,
        nodes,
        total,
        offset,
        next_offset: (next < total).then_some(next),
        capped: v.capped,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindUiArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Case-insensitive substring of the Control's text.
    #[serde(default)]
    text: Option<String>,
    /// The Control class or a base of it, e.g. Button (default Control).
    #[serde(rename = "type", default)]
    class: Option<String>,
    /// 1-200 (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
}

/// A Control of the running game (its text, screen rect and visibility): the probe's
/// answer rows, as they are.
pub use godot_mcp_protocol::probe::{UiElement, UiRect};

#[derive(Debug, Serialize, JsonSchema)]
pub struct UiOut {
    pub session_id: String,
    pub elements: Vec<UiElement>,
    pub matched: u64,
    pub capped: bool,
}

async fn find_ui_elements(
    state: Arc<AppState>,
    args: FindUiArgs,
    _f: CallFlags,
) -> Result<UiOut, ToolError> {
    let class = args.class.unwrap_or_else(|| "Control".into());
    if class.is_empty() || !class.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(ToolError::invalid_params(
            "type",
            "type must be a class name like Button",
        ));
    }
    let limit = args.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ToolError::invalid_params("limit", "limit must be 1–200"));
    }
    let session = session_of(&state, args.session_id.as_deref())?;
    let request = ProbeRequest::FindUi {
        text: args.text,
        class,
        limit: u64::from(limit),
    };
    let v: FindUiReply = probe_request(&session, request).await?;
    Ok(UiOut {
        session_id: session.txn.to_string(),
        elements: v.elements,
        matched: v.matched,
        capped: v.capped,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Node path, e.g. /root/Main/Player.
    node: String,
    /// Property name.
    property: String,
    /// Frames, 1-600 (default 30).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600))]
    frames: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SampledOut {
    pub session_id: String,
    pub node: String,
    pub property: String,
    pub frames: u32,
    pub returned: usize,
    pub stopped_early: bool,
    pub distinct_values: usize,
    /// The property's value on each frame, as the probe converts it.
    pub values: Vec<Value>,
}

async fn sample_game_property(
    state: Arc<AppState>,
    args: SampleArgs,
    _f: CallFlags,
) -> Result<SampledOut, ToolError> {
    check_node_path("node", &args.node)?;
    let frames = args.frames.unwrap_or(30);
    if !(1..=600).contains(&frames) {
        return Err(ToolError::invalid_params("frames", "frames must be 1–600"));
    }
    let session = session_of(&state, args.session_id.as_deref())?;
    await_probe(&session).await;
    // A frame of a slow game (10 fps) per frame asked, and the usual margin.
    let limit = Duration::from_millis(u64::from(frames) * 100) + Duration::from_secs(5);
    let request = ProbeRequest::Sample {
        node: args.node.clone(),
        property: args.property.clone(),
        frames: u64::from(frames),
    };
    let v: SampleReply = session
        .control
        .request(request, limit)
        .await
        .map_err(probe_error)?
        .map_err(probe_refusal)?;
    let values: Vec<Value> = v.values.into_iter().map(Value::String).collect();
    let mut distinct: Vec<&Value> = Vec::new();
    for x in &values {
        if !distinct.contains(&x) {
            distinct.push(x);
        }
    }
    let distinct_values = distinct.len();
    Ok(SampledOut {
        session_id: session.txn.to_string(),
        node: args.node,
        property: args.property,
        frames,
        returned: values.len(),
        stopped_early: values.len() < frames as usize,
        distinct_values,
        values,
    })
}

// ---- the editor's file system ------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RescanArgs {
    /// Wait at most this long, 1000-600000 ms (default 60000).
    #[serde(default)]
    #[schemars(range(min = 1000, max = 600000))]
    timeout_ms: Option<u64>,
}

/// Sends a bridge command that acts (a scan): like `editor::ask`, but a lost answer
/// may have started it.
fn editor_act<P: BridgeCommand>(state: &AppState, p: &P) -> Result<Value, ToolError> {
    let (command, bridge) = (P::METHOD, crate::tools::editor::connected(state)?);
    match bridge.request(
        command,
        p.params(),
        crate::tools::editor::editor_timeout(state),
    ) {
        Ok(v) => Ok(v),
        Err(RequestFailure::Editor(e)) => Err(ToolError::new(ErrorCode::EditorError, e.message)),
        Err(RequestFailure::NotSent(_)) => Err(Precondition::BridgeConnected.error()),
        Err(RequestFailure::NoAnswer { timed_out, reason }) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!("the editor did not answer {command}: {reason}"),
        )
        .details(json!({"may_have_applied": true, "timed_out": timed_out}))),
    }
}

/// How often the editor is asked whether its scan is done.
const SCAN_POLL: Duration = Duration::from_millis(50);

/// A finished file-system scan.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Scanned {
    pub finished: bool,
    /// Whether this request started the scan (false: one was already running).
    pub started: Option<bool>,
    pub waited_ms: u64,
}

/// Starts a scan in the connected editor and waits until it is applied (see
/// `filesystem.status`) or `limit` passed. Blocking: call from a blocking task.
fn scan_and_wait(state: &AppState, limit: Duration) -> Result<Scanned, ToolError> {
    let start = Instant::now();
    let v = editor_act(state, &cmd::FilesystemScan {})?;
    let before = v["scans_finished"].as_u64().unwrap_or(0);
    loop {
        let s = crate::tools::editor::ask(state, &cmd::FilesystemStatus {}, None)?;
        let waited = start.elapsed().as_millis() as u64;
        if s["scanning"] == json!(false) && s["scans_finished"].as_u64().unwrap_or(0) > before {
            return Ok(Scanned {
                finished: true,
                started: v["started"].as_bool(),
                waited_ms: waited,
            });
        }
        if start.elapsed() >= limit {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "the editor's file-system scan did not finish within {} ms; it goes on in \
                     the editor",
                    limit.as_millis()
                ),
            )
            .hint("Call rescan_filesystem again later, or read get_import_status.")
            .details(json!({"finished": false, "waited_ms": waited,
                "scanning": s["scanning"], "progress": s["progress"]})));
        }
        std::thread::sleep(SCAN_POLL);
    }
}

async fn rescan_filesystem(
    state: Arc<AppState>,
    args: RescanArgs,
    _f: CallFlags,
) -> Result<Scanned, ToolError> {
    let timeout = args.timeout_ms.unwrap_or(60_000);
    if !(1000..=600_000).contains(&timeout) {
        return Err(ToolError::invalid_params(
            "timeout_ms",
            "timeout_ms must be 1000–600000",
        ));
    }
    tokio::task::spawn_blocking(move || scan_and_wait(&state, Duration::from_millis(timeout)))
        .await
        .map_err(|e| ToolError::internal(format!("scan task failed: {e}")))?
}

/// File extensions Godot imports that import_asset accepts: images, models, sounds.
const ASSET_EXTENSIONS: [&str; 18] = [
    "png", "jpg", "jpeg", "webp", "svg", "tga", "bmp", "hdr", "exr", "ktx", "dds", "wav", "ogg",
    "mp3", "glb", "gltf", "obj", "fbx",
];
/// Also importable, and so reported by get_import_status (not copied by import_asset).
const OTHER_IMPORTED: [&str; 6] = ["ttf", "otf", "woff", "woff2", "fnt", "csv"];

fn is_importable(ext: &str) -> bool {
    ASSET_EXTENSIONS.contains(&ext) || OTHER_IMPORTED.contains(&ext) || ext == "dae"
}

/// One file's import state, read from disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImportState {
    /// Imported, and the source is what was imported.
    Current,
    /// The importer keeps or skips it on purpose.
    NotImported(&'static str),
    /// No `.import` file: never imported.
    Missing,
    /// `valid=false`: the import failed.
    Failed,
    /// An imported file (`dest_files`) is gone.
    OutputMissing(String),
    /// The source changed since its import (its MD5 differs from the recorded one).
    Stale,
}

impl ImportState {
    fn as_str(&self) -> &'static str {
        match self {
            Self::Current => "imported",
            Self::NotImported(why) => why,
            Self::Missing => "missing",
            Self::Failed => "failed",
            Self::OutputMissing(_) => "output_missing",
            Self::Stale => "stale",
        }
    }

    fn is_problem(&self) -> bool {
        !matches!(self, Self::Current | Self::NotImported(_))
    }
}

/// The value of `key="…"` (or `key=…`) on one line of a Godot config file.
fn config_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix('=')?;
        Some(rest.trim().trim_matches('"'))
    })
}

/// The `.godot/imported/<file>-<md5 of its path>` prefix of an imported file's path.
fn import_base(dest: &str) -> Option<&str> {
    let bytes = dest.as_bytes();
    (0..bytes.len()).rev().find_map(|i| {
        let hex = dest.get(i + 1..i + 33)?;
        (bytes[i] == b'-'
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && matches!(bytes.get(i + 33), None | Some(b'.')))
        .then(|| &dest[..i + 33])
    })
}

/// The import state of `real` (a file of the project at `root`).
pub(crate) fn import_state(root: &Path, real: &Path) -> ImportState {
    let mut import = real.as_os_str().to_owned();
    import.push(".import");
    let Ok(text) = std::fs::read_to_string(PathBuf::from(import)) else {
        return ImportState::Missing;
    };
    match config_value(&text, "importer") {
        Some("keep") => return ImportState::NotImported("kept"),
        Some("skip") => return ImportState::NotImported("skipped"),
        _ => {}
    }
    if config_value(&text, "valid") == Some("false") {
        return ImportState::Failed;
    }
    let res_to_real = |p: &str| p.strip_prefix("res://").map(|r| root.join(r));
    let dests: Vec<&str> = config_value(&text, "dest_files")
        .map(|l| {
            l.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|s| s.trim().trim_matches('"'))
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    for d in &dests {
        if res_to_real(d).is_none_or(|p| !p.is_file()) {
            return ImportState::OutputMissing((*d).to_string());
        }
    }
    // Godot records the source's MD5 beside the imported files.
    let recorded = dests
        .first()
        .and_then(|d| import_base(d))
        .and_then(|base| res_to_real(&format!("{base}.md5")))
        .and_then(|p| std::fs::read_to_string(p).ok());
    if let (Some(recorded), Ok(bytes)) = (recorded, std::fs::read(real))
        && let Some(md5) = config_value(&recorded, "source_md5")
    {
        use md5::Digest;
        if hex::encode(md5::Md5::digest(&bytes)) != md5 {
            return ImportState::Stale;
        }
    }
    ImportState::Current
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportStatusArgs {
    /// A folder or file (default res://).
    #[serde(default)]
    path: Option<ResPath>,
    /// List every importable file, not only those whose import is missing, failed or stale.
    #[serde(default)]
    all: bool,
    #[serde(default)]
    offset: Option<u32>,
    /// 1-1000 (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
}

/// Most files one get_import_status walks.
const IMPORT_WALK_CAP: usize = 100_000;

/// One importable file and its import state.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ImportRow {
    pub path: String,
    pub status: &'static str,
    /// For `output_missing`: the imported file that is gone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ImportStatusOut {
    pub files: Vec<ImportRow>,
    pub total: usize,
    pub next_offset: Option<usize>,
    /// Files per status.
    pub counts: BTreeMap<&'static str, u64>,
    pub importable_files: usize,
    pub capped: bool,
}

async fn get_import_status(
    state: Arc<AppState>,
    args: ImportStatusArgs,
    _f: CallFlags,
) -> Result<ImportStatusOut, ToolError> {
    let limit = args.limit.unwrap_or(200);
    if !(1..=1000).contains(&limit) {
        return Err(ToolError::invalid_params("limit", "limit must be 1–1000"));
    }
    let start = args.path.unwrap_or_else(ResPath::root);
    let real = state.project.resolve("path", &start)?;
    if !real.exists() {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            format!("{start} does not exist"),
        )
        .param("path"));
    }
    let root = state.project.root().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut files = walk_importable(&state, &start, &real)?;
        let capped = files.len() > IMPORT_WALK_CAP;
        files.truncate(IMPORT_WALK_CAP);
        files.sort();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut listed = Vec::new();
        for f in &files {
            let st = import_state(&root, f);
            *counts.entry(st.as_str()).or_default() += 1;
            if args.all || st.is_problem() {
                let rel = f.strip_prefix(&root).unwrap_or(f).to_string_lossy();
                let missing = match &st {
                    ImportState::OutputMissing(d) => Some(d.clone()),
                    _ => None,
                };
                listed.push(ImportRow {
                    path: format!("res://{rel}"),
                    status: st.as_str(),
                    missing,
                });
            }
        }
        let total = listed.len();
        let offset = args.offset.unwrap_or(0) as usize;
        let page: Vec<ImportRow> = listed
            .into_iter()
            .skip(offset)
            .take(limit as usize)
            .collect();
        let next = offset + page.len();
        Ok(ImportStatusOut {
            files: page,
            total,
            next_offset: (next < total).then_some(next),
            counts,
            importable_files: files.len(),
            capped,
        })
    })
    .await
    .map_err(|e| ToolError::internal(format!("import status task failed: {e}")))?
}

/// The importable files under `start` (or `start` itself), as the project walker
/// ([`walk_project`]) finds them — the files `list_files` lists: no hidden entries
/// (`.godot` among them), no folder with a `.gdignore`, a symlink only to a file
/// inside the project. Each as its path in the project (a link's own path: its
/// `.import` sits beside it).
fn walk_importable(
    state: &AppState,
    start: &ResPath,
    real: &Path,
) -> Result<Vec<PathBuf>, ToolError> {
    let root = state.project.root();
    let importable = |res: &ResPath| {
        res.extension()
            .is_some_and(|e| is_importable(&e.to_ascii_lowercase()))
    };
    if real.is_file() {
        return Ok(if importable(start) {
            vec![root.join(start.rel())]
        } else {
            Vec::new()
        });
    }
    let how = Walk {
        recursive: true,
        skip: |_| false,
        too_many: project_too_large,
    };
    let mut out = Vec::new();
    walk_project(state, real, start, &how, &mut 0, &mut |res, _, _| {
        if importable(&res) {
            out.push(root.join(res.rel()));
        }
    })?;
    Ok(out)
}

/// The operator's `--import-dir` folders, set once by `serve`.
static IMPORT_DIRS: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// The environment variable naming the folders import_asset may read from (`:`-separated).
pub const IMPORT_DIRS_ENV: &str = "GODOT_MCP_IMPORT_DIRS";

/// Sets the folders outside the project that import_asset may read (serve's
/// `--import-dir`, which also reads [`IMPORT_DIRS_ENV`]).
pub fn set_import_dirs(dirs: Vec<PathBuf>) {
    let _ = IMPORT_DIRS.set(dirs);
}

/// The allowed folders, symlinks resolved (a folder that does not exist allows nothing).
fn import_dirs() -> Vec<PathBuf> {
    let dirs = IMPORT_DIRS.get().cloned().unwrap_or_else(|| {
        std::env::var_os(IMPORT_DIRS_ENV)
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default()
    });
    dirs.into_iter()
        .filter(|d| d.is_absolute())
        .filter_map(|d| d.canonicalize().ok())
        .collect()
}

/// Where import_asset may read `source` from: symlinks resolved first, then it must lie
/// in the project or in an operator-allowed folder. Returns the resolved path.
pub(crate) fn decide_source(project_root: &Path, source: &str) -> Result<PathBuf, ToolError> {
    let path = Path::new(source);
    if !path.is_absolute() {
        return Err(ToolError::invalid_params(
            "source",
            "source must be an absolute path of a file on this machine",
        ));
    }
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    let dirs = import_dirs();
    let allowed = |p: &Path| p.starts_with(&root) || dirs.iter().any(|d| p.starts_with(d));
    let refused = || {
        ToolError::new(
            ErrorCode::PathRefused,
            format!(
                "{source} is outside the project and outside every folder the operator allows \
                 import_asset to read; nothing was read"
            ),
        )
        .param("source")
        .hint(format!(
            "The operator allows a folder with serve --import-dir DIR or {IMPORT_DIRS_ENV}."
        ))
    };
    if path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(refused());
    }
    let real = match path.canonicalize() {
        Ok(real) => real,
        // Whether a file exists outside the allowed folders is not told either.
        Err(_) if !allowed(path) => return Err(refused()),
        Err(e) => {
            return Err(
                ToolError::new(ErrorCode::ResourceNotFound, format!("{source}: {e}"))
                    .param("source"),
            );
        }
    };
    if !allowed(&real) {
        return Err(refused());
    }
    if !real.is_file() {
        return Err(ToolError::invalid_params(
            "source",
            format!("{source} is not a regular file"),
        ));
    }
    Ok(real)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportAssetArgs {
    /// Absolute path (or res:// path) of the image, model or sound to copy.
    source: String,
    /// Where in the project, with the same extension.
    dest: ResPath,
    /// Wait at most this long for the editor's import, 1000-600000 ms (default 60000).
    #[serde(default)]
    #[schemars(range(min = 1000, max = 600000))]
    timeout_ms: Option<u64>,
}

/// Reads `real` and checks that what was read is the file that was decided on: a path
/// swapped for a symlink in between is refused, not followed.
fn read_decided(real: &Path) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    let io = |e: std::io::Error| {
        ToolError::new(ErrorCode::Io, format!("{}: {e}", real.display())).param("source")
    };
    let mut f = godot_mcp_os::fs::open_nofollow(real).map_err(io)?;
    let opened = f.metadata().map_err(io)?;
    let opened_id = godot_mcp_os::fs::file_id(&f, &opened).map_err(io)?;
    let decided_id = godot_mcp_os::fs::path_id(real).map_err(io)?;
    if opened_id != decided_id || !opened.is_file() {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            format!(
                "{} changed while it was read; nothing was read",
                real.display()
            ),
        )
        .param("source"));
    }
    let max = crate::planes::project::MAX_WRITE_BYTES as u64;
    if opened.len() > max {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{} is {} bytes; at most {max}",
                real.display(),
                opened.len()
            ),
        )
        .param("source"));
    }
    let mut bytes = Vec::with_capacity(opened.len() as usize);
    f.read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Where import_asset copied from (added to the write's effect).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ImportSource {
    pub source: String,
}

/// What the copy added: the editor's import of it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Imported {
    pub import: ImportOutcome,
}

/// The import after the copy: its status, or `pending` and why.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ImportOutcome {
    pub status: &'static str,
    pub editor_connected: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

type ImportPlan = Plan<
    crate::tools::Also<crate::tools::files::write::FileEffect, ImportSource>,
    crate::tools::Also<crate::tools::Committed, Imported>,
>;

fn plan_import_asset(state: Arc<AppState>, args: ImportAssetArgs) -> Result<ImportPlan, ToolError> {
    let timeout = args.timeout_ms.unwrap_or(60_000);
    if !(1000..=600_000).contains(&timeout) {
        return Err(ToolError::invalid_params(
            "timeout_ms",
            "timeout_ms must be 1000–600000",
        ));
    }
    let ext = args.dest.extension().unwrap_or_default();
    if !ASSET_EXTENSIONS.contains(&ext.as_str()) {
        return Err(ToolError::invalid_params(
            "dest",
            format!(
                "{} is not an image, model or sound Godot imports ({})",
                args.dest,
                ASSET_EXTENSIONS.join(", ")
            ),
        ));
    }
    if args.dest.rel().split('/').next() == Some(".godot") {
        return Err(ToolError::invalid_params(
            "dest",
            ".godot/ is Godot's cache, not a place for assets",
        ));
    }
    let real = if args.source.starts_with("res://") {
        // A copy inside the project: checked like every res:// path.
        let res = ResPath::parse(&args.source)
            .map_err(|e| ToolError::new(ErrorCode::PathRefused, e.0).param("source"))?;
        let real = state.project.resolve("source", &res)?;
        if !real.is_file() {
            return Err(ToolError::new(
                ErrorCode::ResourceNotFound,
                format!("{res} is not a file"),
            )
            .param("source"));
        }
        real
    } else {
        decide_source(state.project.root(), &args.source)?
    };
    let src_ext = real
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if src_ext != ext {
        return Err(ToolError::invalid_params(
            "dest",
            format!("the source is .{src_ext}; dest must keep that extension (it is .{ext})"),
        ));
    }
    let bytes = read_decided(&real)?;
    let dest = args.dest.clone();
    let source = ImportSource {
        source: real.display().to_string(),
    };
    let st = state.clone();
    Ok(crate::tools::files::write::plan_write(
        &state,
        "dest",
        args.dest,
        bytes,
        Expect::Anything,
        Persistence::written_to_disk(),
    )?
    .map_effect(|write| crate::tools::Also {
        base: write,
        more: source,
    })
    .map_applied(move |committed| crate::tools::Also {
        base: committed,
        more: Imported {
            import: wait_for_import(&st, &dest, Duration::from_millis(timeout)),
        },
    }))
}

/// After the copy: the connected editor rescans (which imports the new file), then the
/// import state is read from disk. Without an editor the import is pending, and says so.
fn wait_for_import(state: &AppState, dest: &ResPath, limit: Duration) -> ImportOutcome {
    let real = state.project.root().join(dest.rel());
    let pending = |editor_connected, reason: String| ImportOutcome {
        status: "pending",
        editor_connected,
        reason: Some(reason),
        waited_ms: None,
        timed_out: None,
    };
    if crate::tools::editor::connected(state).is_err() {
        return pending(
            false,
            "no editor is connected: Godot imports the file when an editor opens the project \
             or rescans (rescan_filesystem)"
                .into(),
        );
    }
    match scan_and_wait(state, limit) {
        Ok(scan) => ImportOutcome {
            status: import_state(state.project.root(), &real).as_str(),
            editor_connected: true,
            reason: None,
            waited_ms: Some(scan.waited_ms),
            timed_out: None,
        },
        Err(e) => ImportOutcome {
            timed_out: Some(e.code == ErrorCode::Timeout),
            ..pending(true, e.message)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_with_frames_replays_on_its_frames() {
        let at = |f: u64, key: &str, pressed: bool| RecordedEvent {
            frame: Some(f),
            ..ev(f * 16, key, pressed)
        };
        let events = [
            at(12, "A", true),
            at(15, "B", true),
            at(20, "A", false),
            at(30, "B", false),
            at(31, "C", true),
        ];
        let steps = to_frame_steps(&events).unwrap();
        let got: Vec<(u64, u64)> = steps.iter().map(|s| (s.at_frame, s.hold_frames)).collect();
        assert_eq!(got, [(1, 8), (4, 15), (20, 1)]);
        assert_eq!(steps[1].event, json!({"type": "key", "key": "B"}));
    }

    fn ev(t: u64, key: &str, pressed: bool) -> RecordedEvent {
        RecordedEvent {
            t_ms: t,
            frame: None,
            event: ProbeEvent::Key { key: key.into() },
            pressed,
        }
    }

    #[test]
    fn recorded_presses_become_holds_and_waits() {
        // A held 100..400, B tapped at 200 (released 250), C pressed at 900 and still
        // down when the recording stopped at 1000.
        let events = [
            ev(100, "A", true),
            ev(200, "B", true),
            ev(250, "B", false),
            ev(400, "A", false),
            ev(900, "C", true),
        ];
        let (steps, unpaired) = to_steps(&events, 1000);
        // Without frames there is no frame-exact replay.
        assert_eq!(to_frame_steps(&events), None);
        assert_eq!(unpaired, 0);
        let steps = serde_json::to_value(&steps).unwrap();
        assert_eq!(
            steps,
            json!([
                json!({"event": {"type": "key", "key": "A"}, "hold_ms": 300, "wait_ms": 100}),
                json!({"event": {"type": "key", "key": "B"}, "hold_ms": 50, "wait_ms": 700}),
                json!({"event": {"type": "key", "key": "C"}, "hold_ms": 100, "wait_ms": 100}),
            ])
        );
    }

    #[test]
    fn a_release_without_press_is_counted_and_long_waits_split() {
        let events = [
            ev(0, "A", false),
            ev(10, "B", true),
            ev(20, "B", false),
            ev(130_020, "C", true),
            ev(130_021, "C", false),
        ];
        let (steps, unpaired) = to_steps(&events, 140_000);
        let steps = serde_json::to_value(&steps).unwrap();
        assert_eq!(unpaired, 1);
        assert_eq!(steps[0]["wait_ms"], 60_000);
        assert_eq!(steps[1], json!({"wait_ms": 60_000}));
        assert_eq!(steps[2], json!({"wait_ms": 10_010}));
        assert_eq!(steps[3]["event"]["key"], "C");
        assert_eq!(steps[3]["hold_ms"], 1);
    }

    #[test]
    fn monitors_reduce_to_min_avg_max_last() {
        let r = reduce(&[
            json!({"fps": 60.0, "nodes": 3.0}),
            json!({"fps": 30.0, "nodes": 3.0}),
        ]);
        assert_eq!(
            r["fps"],
            Stats {
                min: 30.0,
                avg: 45.0,
                max: 60.0,
                last: 30.0
            }
        );
        assert_eq!(r["nodes"].avg, 3.0);
    }

    #[test]
    fn import_base_finds_the_path_hash() {
        let h = "218a8f2b3041327d8a5756f3a245f83b";
        assert_eq!(
            import_base(&format!("res://.godot/imported/my-icon.svg-{h}.ctex")),
            Some(format!("res://.godot/imported/my-icon.svg-{h}").as_str())
        );
        assert_eq!(
            import_base(&format!("res://.godot/imported/a.png-{h}.s3tc.ctex")),
            Some(format!("res://.godot/imported/a.png-{h}").as_str())
        );
        assert_eq!(import_base("res://.godot/imported/a.png.ctex"), None);
    }

    #[test]
    fn a_source_outside_the_project_and_allowed_folders_is_refused_after_resolving_links() {
        let project = tempfile::tempdir().unwrap();
        let secret = tempfile::tempdir().unwrap();
        std::fs::write(secret.path().join("id_ed25519.png"), b"key").unwrap();
        // A symlink inside the project that points out is decided by its target.
        godot_mcp_os::fs::symlink(
            secret.path().join("id_ed25519.png"),
            project.path().join("innocent.png"),
        )
        .unwrap();
        for source in [
            secret.path().join("id_ed25519.png"),
            project.path().join("innocent.png"),
        ] {
            let e = decide_source(project.path(), source.to_str().unwrap()).unwrap_err();
            assert_eq!(e.code, ErrorCode::PathRefused, "{source:?}");
        }
        std::fs::write(project.path().join("in.png"), b"png").unwrap();
        let inside = project.path().join("in.png");
        assert!(decide_source(project.path(), inside.to_str().unwrap()).is_ok());
        assert_eq!(
            decide_source(project.path(), "in.png").unwrap_err().code,
            ErrorCode::InvalidParams
        );
        // A missing file outside is refused like a present one: no existence oracle.
        let missing = secret.path().join("nope.png");
        let e = decide_source(project.path(), missing.to_str().unwrap()).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused);
    }
}
