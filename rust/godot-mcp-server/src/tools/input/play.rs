//! Input in the running game: play a timed input sequence (cancelling releases every
//! held input at once), record the key, mouse-button and action events a game receives
//! and replay them as steps.

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::Session;
use crate::tools::kit::game::clock::{MAX_FRAMES, play_on_frames};
use crate::tools::kit::game::probe::{InputEvent, ensure_not_breaked, probe_request};
use crate::tools::kit::game::session::session_of;
use crate::tools::kit::game::tool::{SessionArgs, meta};
use crate::tools::{Call, Out, ToolDef};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{
    HeldReply, ProbeEvent, RecordedEvent, RecordedReply, RecordingReply, ReleasedReply,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The running call's cancellation (see [`crate::call_scope`]); a long tool that holds
/// something (play_input_sequence) watches it: rmcp drops a cancelled call's answer but
/// keeps polling the call.
fn call_cancellation() -> CancellationToken {
    crate::call_scope::cancellation()
}

pub(crate) fn tools() -> Vec<ToolDef> {
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
    ]
}

/// One step of an input sequence.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Step {
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
pub(crate) struct SequenceArgs {
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
            Some(f) if (1..=MAX_FRAMES).contains(&f) => {}
            _ => {
                return bad(
                    "at_frame",
                    "at_frame must be 1–10000 in every step of a sequence on frames",
                );
            }
        }
        if s.hold_frames.is_some_and(|h| h > MAX_FRAMES) {
            return bad("hold_frames", "hold_frames must be 0–10000");
        }
    }
    Ok(())
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SequenceOut {
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

async fn play_input_sequence(Call { state, args, .. }: Call<SequenceArgs>) -> Out<SequenceOut> {
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
            v = play_on_frames(&session, &plan) => v?,
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

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RecordingOut {
    pub session_id: String,
    pub recording: bool,
}

async fn record_input(Call { state, args, .. }: Call<SessionArgs>) -> Out<RecordingOut> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let _: RecordingReply = probe_request(&session, ProbeRequest::RecordStart {}).await?;
    Ok(RecordingOut {
        session_id: session.txn.to_string(),
        recording: true,
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RecordedOut {
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
pub(crate) struct FrameStep {
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
pub(crate) struct RecordedStep {
    /// The recorded event, in the probe's wire form (what `event` of a step takes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_ms: Option<u64>,
    pub wait_ms: u64,
}

async fn stop_recording(Call { state, args, .. }: Call<SessionArgs>) -> Out<RecordedOut> {
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
}
