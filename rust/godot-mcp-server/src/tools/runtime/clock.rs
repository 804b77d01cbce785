//! The game's clock, held by the agent (docs/playtesting.md): game_pause,
//! game_resume, game_step, game_run_until; watches and their digests. The probe does
//! the frame work (`clock_pause`, `clock_resume`, `clock_step` of
//! `godot_mcp_protocol::probe`); this file checks the arguments and digests the rows.

use super::common::meta;
use super::probe::{await_probe, ensure_not_breaked, probe_error, probe_refusal, probe_request};
use super::sessions::session_of;
use crate::error::ToolError;
use crate::planes::process::Session;
use crate::rules::RuntimeFlags;
use crate::state::AppState;
use crate::tools::{Call, Out, ToolDef};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{ClockReply, ClockStep, ClockUnit, StepReply, Watch, WatchRow};
use godot_mcp_protocol::probe::{HeldReply, ProbeEvent, StatusReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Most frames one step may run.
pub(crate) const MAX_FRAMES: u64 = 10_000;
/// Most watched values.
const MAX_WATCH: usize = 32;
/// Default decimals floats are rounded to before digesting.
pub(crate) const DEFAULT_PRECISION: u32 = 4;

pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "game_pause",
                "Hold the game's clock",
                "Stop the running game's clock (its tree paused by the probe); reads, \
                 expressions and screenshots then answer for this frame. Returns the frame.",
                None,
            ),
            game_pause,
        ),
        ToolDef::new(
            meta(
                "game_resume",
                "Let the game's clock run",
                "Let a held game run free again.",
                None,
            ),
            game_resume,
        ),
        ToolDef::new(
            meta(
                "game_step",
                "Advance the game by frames",
                "Advance a game by `frames` physics (or process) frames, then hold it; \
                 optional watch rows with digests (an expression watch executes code; \
                 approval-gated).",
                None,
            ),
            game_step,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
        ToolDef::new(
            meta(
                "game_run_until",
                "Run the game until an expression holds",
                "Advance a game frame by frame until a Godot Expression is true after a \
                 physics frame (at most max_frames), then hold it; returns that frame \
                 (executes code; approval-gated).",
                None,
            ),
            game_run_until,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
    ]
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct ClockOut {
    pub session_id: String,
    /// Physics frames the game has run since the probe started.
    pub frame: u64,
    /// Whether the agent holds the clock now.
    pub paused: bool,
}

async fn clock_call(
    state: &AppState,
    session_id: Option<&str>,
    request: ProbeRequest,
) -> Result<ClockOut, ToolError> {
    let session = session_of(state, session_id)?;
    let r: ClockReply = probe_request(&session, request).await?;
    Ok(ClockOut {
        session_id: session.txn.to_string(),
        frame: r.frame,
        paused: r.paused,
    })
}

pub(super) async fn game_pause(Call { state, args, .. }: Call<SessionArg>) -> Out<ClockOut> {
    clock_call(
        &state,
        args.session_id.as_deref(),
        ProbeRequest::ClockPause {},
    )
    .await
}

pub(super) async fn game_resume(Call { state, args, .. }: Call<SessionArg>) -> Out<ClockOut> {
    clock_call(
        &state,
        args.session_id.as_deref(),
        ProbeRequest::ClockResume {},
    )
    .await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SessionArg {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
}

/// Declares a frame-running tool's arguments: its own fields, then the sampling ones
/// (what to read while frames run), documented here once, and [`Sampling`] of them.
macro_rules! sampled_args {
    ($(pub struct $name:ident { $($own:tt)* })*) => {$(
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(super) struct $name {
            $($own)*
            /// Values read after sampled frames: {node, property} or {expression}.
            #[serde(default)]
            watch: Vec<Watch>,
            /// Sample every k-th frame (frame numbers divisible by k).
            #[serde(default)]
            #[schemars(range(min = 1))]
            every: Option<u64>,
            /// Sample these frames.
            #[serde(default)]
            at: Vec<u64>,
            /// Decimals floats are rounded to in digests, 0-12 (default 4).
            #[serde(default)]
            #[schemars(range(max = 12))]
            precision: Option<u32>,
        }

        impl $name {
            /// What to sample, as the frame runner takes it.
            fn sampling(&self) -> Sampling {
                Sampling {
                    watch: self.watch.clone(),
                    every: self.every,
                    at: self.at.clone(),
                    precision: self.precision,
                }
            }
        }
    )*};
}

sampled_args! {
    pub struct StepArgs {
        #[serde(default)]
        session_id: Option<String>,
        /// Frames to advance, 1-10000 (default 1).
        #[serde(default)]
        #[schemars(range(min = 1, max = 10000))]
        frames: Option<u64>,
        /// physics (default) or process frames.
        #[serde(default)]
        unit: Option<ClockUnit>,
    }

    pub struct UntilArgs {
        #[serde(default)]
        session_id: Option<String>,
        /// Godot Expression on the current scene, checked after each physics frame.
        expression: String,
        /// Most frames to run, 1-10000 (default 600).
        #[serde(default)]
        #[schemars(range(min = 1, max = 10000))]
        max_frames: Option<u64>,
    }
}

/// What to sample while frames run (game_step, game_run_until, playtests).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Sampling {
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
pub(super) struct Row {
    pub frame: u64,
    pub values: Vec<Value>,
    /// sha256 (first 16 hex digits) of the values, floats rounded to `precision`.
    pub digest: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct StepOut {
    pub session_id: String,
    /// The frame the clock holds now.
    pub frame: u64,
    /// Frames run by this call.
    pub advanced: u64,
    /// game_run_until: whether the expression became true (on `frame`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// Decimals of the digests.
    pub precision: u32,
    pub rows: Vec<Row>,
    /// What stepping does not advance.
    pub not_stepped: &'static str,
}

/// What a held game's steps do not advance, said in every step's answer.
pub(crate) const NOT_STEPPED: &str = "audio: playback runs on the wall clock and pauses with \
     the held tree, so a step plays only the milliseconds it took; a player's `finished` \
     does not come from stepping (game_resume lets audio play)";

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

fn check_frames(param: &str, frames: u64) -> Result<(), ToolError> {
    if !(1..=MAX_FRAMES).contains(&frames) {
        return Err(ToolError::invalid_params(
            param,
            format!("{param} is {frames}; it must be 1–{MAX_FRAMES}"),
        ));
    }
    Ok(())
}

pub(super) async fn game_step(Call { state, args, .. }: Call<StepArgs>) -> Out<StepOut> {
    let frames = args.frames.unwrap_or(1);
    check_frames("frames", frames)?;
    let sampling = args.sampling();
    let precision = sampling.check()?;
    let session = session_of(&state, args.session_id.as_deref())?;
    ensure_not_breaked(&session).await?;
    let unit = args.unit.unwrap_or_default();
    let (reply, rows) = step(&session, frames, unit, None, &sampling, precision).await?;
    Ok(StepOut {
        session_id: session.txn.to_string(),
        frame: reply.frame,
        advanced: reply.advanced,
        met: None,
        precision,
        rows,
        not_stepped: NOT_STEPPED,
    })
}

pub(super) async fn game_run_until(Call { state, args, .. }: Call<UntilArgs>) -> Out<StepOut> {
    let frames = args.max_frames.unwrap_or(600);
    check_frames("max_frames", frames)?;
    if args.expression.trim().is_empty() {
        return Err(ToolError::invalid_params(
            "expression",
            "expression must not be empty",
        ));
    }
    let sampling = args.sampling();
    let precision = sampling.check()?;
    let session = session_of(&state, args.session_id.as_deref())?;
    ensure_not_breaked(&session).await?;
    let (reply, rows) = step(
        &session,
        frames,
        ClockUnit::Physics,
        Some(args.expression),
        &sampling,
        precision,
    )
    .await?;
    Ok(StepOut {
        session_id: session.txn.to_string(),
        frame: reply.frame,
        advanced: reply.advanced,
        met: Some(reply.met.unwrap_or(false)),
        precision,
        rows,
        not_stepped: NOT_STEPPED,
    })
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
