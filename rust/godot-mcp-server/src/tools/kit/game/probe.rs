//! The running game through its probe (the control socket, typed by
//! `godot_mcp_protocol::probe`): the request helpers the game tools share (a request and
//! its refusal, a property, the check that the game is not stopped at a breakpoint), the
//! synthetic input event, and the ticker that paces a sampling tool.

use std::time::Duration;

use godot_mcp_protocol::probe::{ProbeEvent, StatusReply, ValueReply};
use godot_mcp_protocol::{ProbeRefusal, ProbeRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{Session, control::ControlError};
use crate::rules::Precondition;

/// How long a probe request may take.
pub(super) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

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

/// How long a running game may take to answer `status` before it counts as stopped.
pub(super) const BREAK_TIMEOUT: Duration = Duration::from_millis(1000);

pub(crate) use crate::planes::process::control::probe_error;

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
