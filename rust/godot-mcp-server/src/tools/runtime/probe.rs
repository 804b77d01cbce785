//! The running game through its probe (the control socket, typed by
//! `godot_mcp_protocol::probe`): input, screenshots, properties, expressions, and the
//! request helpers runtime::game and the tests toolset share.

use super::common::PROBE_TIMEOUT;
use super::sessions::session_of;
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{Session, control::ControlError};
use crate::rules::Precondition;
use crate::tools::runtime::screenshots::Shot;
use godot_mcp_protocol::probe::{HeldReply, ProbeEvent, ScreenshotReply, StatusReply, ValueReply};
use godot_mcp_protocol::{ProbeRefusal, ProbeRequest};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// One synthetic input event.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum InputEvent {
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
pub(crate) struct InputArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    event: InputEvent,
    /// Ms to hold before release, 0-60000 (default 0).
    #[serde(default)]
    hold_ms: Option<u64>,
}

/// How long a running game may take to answer `status` before it counts as stopped.
pub(super) const BREAK_TIMEOUT: Duration = Duration::from_millis(1000);

pub(crate) use crate::planes::process::control::probe_error;
use crate::tools::{Call, Out};

/// Waits (up to 5 s) for a game that just started to connect its probe.
pub(crate) async fn await_probe(session: &Session) {
    if session.control.hello().is_none() {
        session.control.wait_connected(Duration::from_secs(5)).await;
    }
}

/// Sends `request` to the game's probe (waiting up to 5 s for it to connect); its
/// answer `T`, or its refusal.
pub(crate) async fn probe_reply<T: DeserializeOwned>(
    session: &Session,
    request: ProbeRequest,
) -> Result<Result<T, ProbeRefusal>, ToolError> {
    await_probe(session).await;
    session
        .control
        .request(request, PROBE_TIMEOUT)
        .await
        .map_err(probe_error)
}

/// A probe refusal, as the precondition it names.
pub(crate) fn probe_refusal(r: ProbeRefusal) -> ToolError {
    if EXPRESSION_FAILURES.contains(&r.error.as_str()) {
        return expression_error(r);
    }
    ToolError::new(ErrorCode::PreconditionFailed, r.message).required(r.error)
}

/// The probe's refusals of an expression Godot could not run.
const EXPRESSION_FAILURES: [&str; 3] = ["parse_error", "execute_failed", "method_not_called"];

/// An expression Godot could not parse or run: the agent's input, with Godot's own text
/// (`watch[i]: …` names the watch; anything else is the call's `expression`).
fn expression_error(r: ProbeRefusal) -> ToolError {
    let param = match r.message.split_once(": ") {
        Some((w, _)) if w.starts_with("watch[") => w.to_string(),
        _ => "expression".to_string(),
    };
    ToolError::invalid_params(param, format!("Godot's Expression: {}", r.message))
        .details(serde_json::json!({"expression_error": r.error}))
}

/// Sends `request` to the game's probe; its answer `T`, a refusal as an error.
pub(crate) async fn probe_request<T: DeserializeOwned>(
    session: &Session,
    request: ProbeRequest,
) -> Result<T, ToolError> {
    probe_reply(session, request).await?.map_err(probe_refusal)
}

/// A property of the running game, in the one value model's JSON form.
pub(crate) async fn game_property(
    session: &Session,
    node: &str,
    property: &str,
) -> Result<Value, ToolError> {
    let request = ProbeRequest::GetProperty {
        node: node.to_string(),
        property: property.to_string(),
    };
    let reply: ValueReply = probe_request(session, request).await?;
    Ok(reply.value.to_json())
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct InputOut {
    pub session_id: String,
    pub delivered: bool,
    pub hold_ms: u64,
    /// Inputs the game holds now.
    pub held: Option<u64>,
}

pub(super) async fn simulate_input(Call { state, args, .. }: Call<InputArgs>) -> Out<InputOut> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let hold = args.hold_ms.unwrap_or(0);
    if hold > 60_000 {
        return Err(ToolError::invalid_params(
            "hold_ms",
            "hold_ms must be 0–60000",
        ));
    }
    ensure_not_breaked(&session).await?;
    let request = ProbeRequest::Input {
        event: args.event.wire(),
        hold_ms: hold,
        at_frame: None,
        hold_frames: None,
    };
    let v: HeldReply = probe_request(&session, request).await?;
    Ok(InputOut {
        session_id: session.txn.to_string(),
        delivered: true,
        hold_ms: hold,
        held: Some(v.held),
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
    await_probe(session).await;
    match session
        .control
        .request::<StatusReply>(ProbeRequest::Status {}, BREAK_TIMEOUT)
        .await
    {
        Ok(Ok(status)) if status.breaked => Err(Precondition::GameNotBreaked.error()),
        // Answered (even with a refusal): its main loop runs.
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
    pub(crate) fn wire(&self) -> ProbeEvent {
        match self {
            InputEvent::Key { key } => ProbeEvent::Key { key: key.clone() },
            // Godot keeps positions as f32: the probe narrows them anyway.
            InputEvent::MouseButton { button, x, y } => ProbeEvent::MouseButton {
                button: i64::from(*button),
                x: x.map(|v| v as f32),
                y: y.map(|v| v as f32),
            },
            InputEvent::Action { action } => ProbeEvent::Action {
                action: action.clone(),
            },
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScreenshotArgs {
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
pub(crate) struct SessionId {
    pub session_id: String,
}

pub(super) async fn game_screenshot(
    Call { state, args, .. }: Call<ScreenshotArgs>,
) -> Out<Shot<SessionId>> {
    use crate::tools::runtime::screenshots;
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
    let request = ProbeRequest::Screenshot {
        frames: u64::from(frames),
        max_bytes: Some(screenshots::max_image_bytes(&state) as u64),
        max_edge: args.max_edge.map(u64::from),
    };
    let v: ScreenshotReply = match probe_reply(&session, request).await? {
        Ok(v) => v,
        Err(r) if r.error == "no_renderer" => {
            return Err(screenshots::no_renderer("The game's Godot", "headless"));
        }
        Err(r) if r.error == "too_large" => {
            // The refusal's size fields, in the form the editor's refusals share.
            let size = serde_json::to_value(&r).unwrap_or_default();
            return Err(screenshots::producer_too_large(&state, &size));
        }
        Err(r) => return Err(probe_refusal(r)),
    };
    screenshots::shot(
        &state,
        &v.png_base64,
        SessionId {
            session_id: session.txn.to_string(),
        },
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PropertyArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Node path: /root/Main/Player, or from the current scene (Player; . its root).
    node: String,
    /// Property name.
    property: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PropertyOut {
    pub node: String,
    pub property: String,
    /// The property's value as the probe converts it.
    pub value: Value,
}

pub(super) async fn get_game_property(
    Call { state, args, .. }: Call<PropertyArgs>,
) -> Out<PropertyOut> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let value = game_property(&session, &args.node, &args.property).await?;
    Ok(PropertyOut {
        node: args.node,
        property: args.property,
        value,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MonitorArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Node path: /root/Main/Player, or from the current scene (Player; . its root).
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

/// Longest a sampling tool (monitor_property, get_performance_monitors) may run in all.
pub(super) const MONITOR_MAX: std::time::Duration = std::time::Duration::from_secs(60);

/// Checks a sampling plan (`samples` 1 to `max_samples`, `interval_ms` 10-5000, the
/// whole window within [`MONITOR_MAX`]) and returns the ticker that paces it: a slow
/// answer delays the next tick instead of bunching the missed ones.
pub(crate) fn sampling_ticker(
    samples: u32,
    max_samples: u32,
    interval_ms: u64,
) -> Result<tokio::time::Interval, ToolError> {
    if !(1..=max_samples).contains(&samples) {
        return Err(ToolError::invalid_params(
            "samples",
            format!("samples must be 1–{max_samples}"),
        ));
    }
    if !(10..=5000).contains(&interval_ms) {
        return Err(ToolError::invalid_params(
            "interval_ms",
            "interval_ms must be 10–5000",
        ));
    }
    let interval = Duration::from_millis(interval_ms);
    if interval * samples.saturating_sub(1) > MONITOR_MAX {
        return Err(ToolError::invalid_params(
            "samples",
            format!(
                "samples × interval_ms must stay within {} s",
                MONITOR_MAX.as_secs()
            ),
        ));
    }
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    Ok(ticker)
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct MonitorOut {
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
pub(crate) struct TimedValue {
    pub t_ms: u64,
    pub value: Value,
}

pub(super) async fn monitor_property(
    Call { state, args, .. }: Call<MonitorArgs>,
) -> Out<MonitorOut> {
    let samples = args.samples.unwrap_or(10);
    let interval_ms = args.interval_ms.unwrap_or(100);
    let mut ticker = sampling_ticker(samples, 200, interval_ms)?;
    let session = session_of(&state, args.session_id.as_deref())?;
    let start = std::time::Instant::now();
    let mut series = Vec::with_capacity(samples as usize);
    let mut stopped: Option<String> = None;
    for _ in 0..samples {
        ticker.tick().await;
        match game_property(&session, &args.node, &args.property).await {
            Ok(value) => series.push(TimedValue {
                t_ms: start.elapsed().as_millis() as u64,
                value,
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
pub(crate) struct EvalArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Godot Expression; base: the current scene; engine singletons (Time, Input,
    /// ProjectSettings…) by name.
    expression: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EvalOut {
    /// The expression's result as the probe converts it.
    pub value: Value,
}

pub(super) async fn evaluate_expression(Call { state, args, .. }: Call<EvalArgs>) -> Out<EvalOut> {
    let session = session_of(&state, args.session_id.as_deref())?;
    let request = ProbeRequest::Evaluate {
        expression: args.expression,
    };
    let v: ValueReply = probe_request(&session, request).await?;
    Ok(EvalOut {
        value: v.value.to_json(),
    })
}
