//! The running game beyond `runtime/mod.rs`: whether a game plays, its live scene tree,
//! UI search and per-frame samples (through the game's probe). Input sequences and
//! recording are in `tools/input/play.rs`, performance monitors and per-function
//! profiles (read over the debugger connection) in `tools/profiler/`, the editor's file
//! system and imports in `tools/files/import.rs`.

use std::time::Duration;

use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::{FindUiReply, SampleReply, StatusReply, TreeReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::planes::process::control::ControlError;
use crate::rules::Toolset;
use crate::tools::kit::game::probe::{await_probe, probe_error, probe_refusal, probe_request};
use crate::tools::kit::game::session::session_of;
use crate::tools::kit::game::tool::{SessionArgs, in_set, meta};
use crate::tools::{Call, Out, ToolDef};

pub(crate) fn tools() -> Vec<ToolDef> {
    let rt = |name, title, description| meta(name, title, description, None);
    vec![
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
    ]
}

// ---- is_playing ------------------------------------------------------------------------

/// Whether a game plays; for a running one, whether its probe answers (`probe`:
/// `answering`, `not_answering` with a `reason`, or `not_connected`).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct PlayingOut {
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

async fn is_playing(Call { state, args, .. }: Call<SessionArgs>) -> Out<PlayingOut> {
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
pub(crate) struct GameTreeArgs {
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
pub(crate) use godot_mcp_protocol::probe::TreeNode as GameNode;

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GameTreeOut {
    pub session_id: String,
    pub root: String,
    pub nodes: Vec<GameNode>,
    pub total: u64,
    pub offset: u32,
    pub next_offset: Option<u64>,
    pub capped: bool,
}

async fn get_game_scene_tree(Call { state, args, .. }: Call<GameTreeArgs>) -> Out<GameTreeOut> {
    let root = args.root.unwrap_or_else(|| "/root".into());
    check_node_path("root", &root)?;
    let limit = ToolError::arg_in("limit", args.limit, 100, 1..=500, "limit must be 1–500")?;
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
pub(crate) struct FindUiArgs {
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
pub(crate) use godot_mcp_protocol::probe::UiElement;

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UiOut {
    pub session_id: String,
    pub elements: Vec<UiElement>,
    pub matched: u64,
    pub capped: bool,
}

async fn find_ui_elements(Call { state, args, .. }: Call<FindUiArgs>) -> Out<UiOut> {
    let class = args.class.unwrap_or_else(|| "Control".into());
    if class.is_empty() || !class.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(ToolError::invalid_params(
            "type",
            "type must be a class name like Button",
        ));
    }
    let limit = ToolError::arg_in("limit", args.limit, 50, 1..=200, "limit must be 1–200")?;
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
pub(crate) struct SampleArgs {
    #[serde(default)]
    session_id: Option<String>,
    /// Node path: /root/Main/Player, or from the current scene (Player; . its root).
    node: String,
    /// Property name.
    property: String,
    /// Frames, 1-600 (default 30).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600))]
    frames: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SampledOut {
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

async fn sample_game_property(Call { state, args, .. }: Call<SampleArgs>) -> Out<SampledOut> {
    check_node_path("node", &args.node)?;
    let frames = ToolError::arg_in("frames", args.frames, 30, 1..=600, "frames must be 1–600")?;
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
