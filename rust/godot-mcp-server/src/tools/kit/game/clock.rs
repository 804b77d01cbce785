//! The game's clock, held through its probe (`clock_step` of `godot_mcp_protocol::probe`):
//! one step of frames and what it samples (watches, their rows and digests), and inputs
//! played on frames (play_input_sequence's frame mode). The clock tools are
//! `tools/runtime/clock.rs`.

use std::time::Duration;

use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{ClockReply, ClockStep, ClockUnit, StepReply, Watch, WatchRow};
use godot_mcp_protocol::probe::{HeldReply, ProbeEvent, StatusReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::probe::{await_probe, probe_error, probe_refusal, probe_request};
use crate::error::ToolError;
use crate::planes::process::Session;

/// Most frames one step may run.
pub(crate) const MAX_FRAMES: u64 = 10_000;
/// Most watched values.
const MAX_WATCH: usize = 32;
/// Default decimals floats are rounded to before digesting.
pub(crate) const DEFAULT_PRECISION: u32 = 4;

/// What to sample while frames run (game_step, game_run_until, playtests).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Sampling {
    #[serde(default)]
    pub watch: Vec<Watch>,
    #[serde(default)]
    pub every: Option<u64>,
    #[serde(default)]
    pub at: Vec<u64>,
    #[serde(default)]
    pub precision: Option<u32>,
}

impl Sampling {
    pub(crate) fn check(&self) -> Result<u32, ToolError> {
        if self.watch.len() > MAX_WATCH {
            return Err(ToolError::invalid_params(
                "watch",
                format!("at most {MAX_WATCH} watched values"),
            ));
        }
        if self.every == Some(0) {
            return Err(ToolError::invalid_params(
                "every",
                "every must be at least 1",
            ));
        }
        if self.at.len() > MAX_FRAMES as usize {
            return Err(ToolError::invalid_params(
                "at",
                format!("at most {MAX_FRAMES} frames in at"),
            ));
        }
        let precision = self.precision.unwrap_or(DEFAULT_PRECISION);
        if precision > 12 {
            return Err(ToolError::invalid_params(
                "precision",
                "precision must be 0–12",
            ));
        }
        for (i, w) in self.watch.iter().enumerate() {
            let empty = match w {
                Watch::Property { node, property } => node.is_empty() || property.is_empty(),
                Watch::Expression { expression } => expression.trim().is_empty(),
            };
            if empty {
                return Err(ToolError::invalid_params(
                    format!("watch[{i}]"),
                    "a watch names a node and a property, or an expression",
                ));
            }
        }
        Ok(precision)
    }
}

/// One sampled frame: the watched values, and their digest.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Row {
    pub frame: u64,
    pub values: Vec<Value>,
    /// sha256 (first 16 hex digits) of the values, floats rounded to `precision`.
    pub digest: String,
}

/// How long a step of `frames` frames may take: a free-running game does ~60 a second.
pub(crate) fn step_timeout(frames: u64) -> Duration {
    Duration::from_secs(5) + Duration::from_millis(20 * frames)
}

/// Runs one `clock_step` on `session`.
pub(crate) async fn step(
    session: &Session,
    frames: u64,
    unit: ClockUnit,
    until: Option<String>,
    sampling: &Sampling,
    precision: u32,
) -> Result<(StepReply, Vec<Row>), ToolError> {
    await_probe(session).await;
    let request = ProbeRequest::ClockStep(ClockStep {
        frames,
        unit,
        until,
        watch: sampling.watch.clone(),
        every: sampling.every,
        at: sampling.at.clone(),
    });
    let reply: StepReply = session
        .control
        .request(request, step_timeout(frames))
        .await
        .map_err(probe_error)?
        .map_err(probe_refusal)?;
    let rows = reply.rows.iter().map(|r| row(r, precision)).collect();
    Ok((reply, rows))
}

/// Plays `(event, at_frame, hold_frames)` inputs on frames counted from now: holds the
/// clock, schedules every press and release, and steps until the last release.
/// Returns the frame it ends on and the inputs still held (0 when all went well).
pub(crate) async fn play_on_frames(
    session: &Session,
    plan: &[(ProbeEvent, u64, u64)],
) -> Result<(u64, u64), ToolError> {
    let held: ClockReply = probe_request(session, ProbeRequest::ClockPause {}).await?;
    let base = held.frame;
    for (event, at, hold) in plan {
        let request = ProbeRequest::Input {
            event: event.clone(),
            hold_ms: 0,
            at_frame: Some(base + at),
            hold_frames: Some(*hold),
        };
        let _: HeldReply = probe_request(session, request).await?;
    }
    let end = plan
        .iter()
        .map(|(_, at, hold)| at + hold)
        .max()
        .unwrap_or(0);
    let (reply, _) = step(
        session,
        end,
        ClockUnit::Physics,
        None,
        &Sampling::default(),
        DEFAULT_PRECISION,
    )
    .await?;
    let status: StatusReply = probe_request(session, ProbeRequest::Status {}).await?;
    Ok((reply.frame, status.held))
}

/// A probe row with its digest.
pub(crate) fn row(r: &WatchRow, precision: u32) -> Row {
    Row {
        frame: r.frame,
        values: r.values.clone(),
        digest: digest(&r.values, precision),
    }
}

/// The digest of one frame's values: sha256 of their JSON with every float written
/// with `precision` decimals (−0 as 0), its first 16 hex digits.
pub(crate) fn digest(values: &[Value], precision: u32) -> String {
    let canonical: Vec<Value> = values.iter().map(|v| rounded(v, precision)).collect();
    let text = serde_json::to_string(&canonical).unwrap_or_default();
    let hash = Sha256::digest(text.as_bytes());
    hex::encode(&hash[..8])
}

/// `v` with each float as a string of `precision` decimals.
pub(crate) fn rounded(v: &Value, precision: u32) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            let s = format!("{:.*}", precision as usize, f);
            let zero = s
                .trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.');
            Value::String(if zero {
                s.trim_start_matches('-').to_string()
            } else {
                s
            })
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| rounded(x, precision)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), rounded(x, precision)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_digest_rounds_floats_to_its_precision() {
        let a = [
            json!(1.000_04),
            json!({"$type": "Vector2", "x": 0.5, "y": -0.000_01}),
        ];
        let b = [
            json!(1.000_01),
            json!({"$type": "Vector2", "x": 0.5, "y": 0.000_02}),
        ];
        assert_eq!(digest(&a, 4), digest(&b, 4));
        assert_ne!(digest(&a, 5), digest(&b, 5));
        // Integers are kept as they are; a different value is a different digest.
        assert_ne!(digest(&[json!(1)], 4), digest(&[json!(2)], 4));
        assert_eq!(digest(&[json!(1)], 4).len(), 16);
    }
}
