//! The running game through its probe (the control socket, typed by
//! `godot_mcp_protocol::probe`): input, screenshots, properties, expressions. The
//! request helpers they build on are the kit's (`tools/kit/game/probe.rs`).

use crate::error::ToolError;
use crate::tools::kit::game::probe::{
    InputEvent, ensure_not_breaked, game_property, probe_refusal, probe_reply, probe_request,
    sampling_ticker,
};
use crate::tools::kit::game::session::session_of;
use crate::tools::runtime::screenshots::Shot;
use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{HeldReply, ScreenshotReply, ValueReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

use crate::tools::{Call, Out};

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
    /// ProjectSettings…) and autoloads by name.
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
