//! The game's clock, held by the agent (docs/playtesting.md): game_pause,
//! game_resume, game_step, game_run_until. The probe does the frame work
//! (`clock_pause`, `clock_resume`, `clock_step` of `godot_mcp_protocol::probe`); this
//! file checks the arguments; the step itself, its watches and their digests are the
//! kit's (`tools/kit/game/clock.rs`), shared with run_playtest and play_input_sequence.

use crate::error::ToolError;
use crate::rules::RuntimeFlags;
use crate::state::AppState;
use crate::tools::kit::game::clock::{MAX_FRAMES, Row, Sampling, step};
use crate::tools::kit::game::probe::{ensure_not_breaked, probe_request};
use crate::tools::kit::game::session::session_of;
use crate::tools::kit::game::tool::meta;
use crate::tools::{Call, Out, ToolDef};
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{ClockReply, ClockUnit, Watch};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
