//! A change checked by the engine in the same call (create_nodes' `check`): the saved
//! scene run headless with the probe, its clock held at frame 0 (every `_ready` done, no
//! frame processed), each expression evaluated in order (base: the scene's root; engine
//! singletons by name), an entry with a `frame` after the held clock has run that many
//! physics frames (agent run 12: tweens, falls, timers and pressed keys were checked
//! with scripts of the agents' own), and the error lines the game printed. What an agent
//! otherwise learns with a throwaway script of its own and a second call (agent runs 10
//! and 11: 16 of 38 tasks).

use std::sync::Arc;
use std::time::Duration;

use godot_mcp_protocol::ProbeRequest;
use godot_mcp_protocol::probe::ClockUnit;
use godot_mcp_protocol::probe::{ReleasedReply, ValueReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clock::{self, MAX_FRAMES, Sampling};
use super::display::exited_early;
use super::launch::{GameLaunch, launch_game};
use super::probe::probe_reply;
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::Session;
use crate::respath::ResPath;
use crate::state::AppState;

/// How long the game has to load the scene and connect its probe.
const READY_WAIT: Duration = Duration::from_secs(30);
/// How long the checked game may take to quit before it is killed.
const QUIT_GRACE: Duration = Duration::from_millis(100);
/// Most printed lines kept.
const MAX_PRINTED: usize = 20;

// One `check` entry: an expression evaluated where the entries before it left the
// clock (frame 0 first), or once the held clock has run `frame` physics frames. (No doc comments on these two: the schema, in the default
// tool list, then carries no description of them; the argument's says it all.)
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum CheckItem {
    Now(String),
    At(FrameCheck),
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrameCheck {
    pub frame: u64,
    pub expression: String,
}

impl CheckItem {
    /// The frame it waits for; a plain expression waits for none (it is evaluated on
    /// the frame the entries before it reached).
    fn frame(&self) -> Option<u64> {
        match self {
            CheckItem::Now(_) => None,
            CheckItem::At(f) => Some(f.frame),
        }
    }

    fn expression(&self) -> &str {
        match self {
            CheckItem::Now(e) => e,
            CheckItem::At(f) => &f.expression,
        }
    }
}

/// The entries' frames never go back, and stay within what a step may run.
pub(crate) fn check_order(items: &[CheckItem]) -> Result<(), ToolError> {
    let mut last = 0;
    for (i, item) in items.iter().enumerate() {
        let Some(f) = item.frame() else {
            continue;
        };
        if f > MAX_FRAMES {
            return Err(ToolError::invalid_params(
                format!("check[{i}].frame"),
                format!("at most {MAX_FRAMES} frames"),
            ));
        }
        if f < last {
            return Err(ToolError::invalid_params(
                format!("check[{i}].frame"),
                format!("frame {f} comes after frame {last}: list the checks in frame order"),
            ));
        }
        last = f;
    }
    Ok(())
}

/// One expression and what the engine made of it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CheckValue {
    pub expression: String,
    /// The physics frame it was evaluated on (absent: frame 0, after `_ready`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    pub frame: Option<u64>,
    /// Its value, in the value model's JSON form (absent when it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    pub value: Option<Value>,
    /// Why it has no value: Godot's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    pub error: Option<String>,
    /// What the held clock does to it (audio: paused while held).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    pub note: Option<String>,
}

/// The check's findings: read-only, after the change (which stands whatever they say).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SceneCheck {
    /// The expressions, in order.
    pub values: Vec<CheckValue>,
    /// The error and warning lines the game printed while loading and evaluating.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub printed: Vec<String>,
    /// Why nothing (or not every entry) was evaluated: the game did not start, or its
    /// clock could not run to an entry's frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::honesty::absent_when_none)]
    pub error: Option<String>,
}

/// `check`'s entries evaluated in the file just saved (`target`), from a plan's apply
/// (a blocking thread of the runtime); `None` when there is nothing to check.
pub(crate) fn check_saved(
    state: &Arc<AppState>,
    target: Option<&str>,
    items: &[CheckItem],
) -> Option<SceneCheck> {
    match target.map(ResPath::parse) {
        Some(Ok(path)) if !items.is_empty() => Some(check_in(state, Some(&path), items)),
        _ => None,
    }
}

/// A `check` is refused before anything changes when there is no save to run it on, or
/// when its frames go back.
pub(crate) fn check_args(items: &[CheckItem], save: bool) -> Result<(), ToolError> {
    if !items.is_empty() && !save {
        return Err(ToolError::invalid_params(
            "check",
            "check runs the scene after the save: pass save: true (create_nodes without \
             steps checks the saved scene as is)",
        ));
    }
    check_order(items)
}

/// `check`'s entries evaluated in `scene` as saved, or with none in a blank scene (a
/// plan's apply: a blocking thread of the runtime).
pub(crate) fn check_in(
    state: &Arc<AppState>,
    scene: Option<&ResPath>,
    items: &[CheckItem],
) -> SceneCheck {
    tokio::runtime::Handle::current().block_on(check_scene(state, scene, items))
}

/// Runs `scene` (none: a blank one) headless and evaluates `expressions` in it; a game that cannot start
/// is said in `error`, never raised (the change it checks is done).
pub(crate) async fn check_scene(
    state: &Arc<AppState>,
    scene: Option<&ResPath>,
    expressions: &[CheckItem],
) -> SceneCheck {
    match run(state, scene, expressions).await {
        Ok(done) => done,
        Err(e) => SceneCheck {
            values: Vec::new(),
            printed: Vec::new(),
            error: Some(e.message),
        },
    }
}

async fn run(
    state: &Arc<AppState>,
    scene: Option<&ResPath>,
    expressions: &[CheckItem],
) -> Result<SceneCheck, ToolError> {
    let (session, _) = launch_game(
        state,
        GameLaunch {
            purpose: "create_nodes",
            scene,
            display: vec!["--headless".into()],
            held: true,
            seed: None,
            blank: scene.is_none(),
        },
    )
    .await?;
    let result = evaluate(&session, expressions).await;
    // Every way out: release, then stop the game: killed after a short grace, as it
    // holds nothing to save and a quitting Godot spends about 2 s joining its threads
    // (measured on 4.4.1: the joypad monitor sleeps in 1 s steps).
    let _ = session
        .control
        .request::<ReleasedReply>(ProbeRequest::ReleaseAll {}, Duration::from_millis(500))
        .await;
    let _ = session.stop(QUIT_GRACE).await;
    result
}

async fn evaluate(session: &Session, items: &[CheckItem]) -> Result<SceneCheck, ToolError> {
    let hello = tokio::select! {
        h = session.control.wait_connected(READY_WAIT) => h,
        _ = session.wait(READY_WAIT) => None,
    };
    if hello.is_none() {
        return Err(match session.ended() {
            Some(ended) => exited_early("The game", session, &ended, None),
            None => ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "the game's probe did not connect in {} s",
                    READY_WAIT.as_secs()
                ),
            ),
        });
    }
    let mut values = Vec::with_capacity(items.len());
    let mut frame = 0;
    let mut error = None;
    for item in items {
        if let Some(to) = item.frame()
            && to > frame
        {
            let run = to - frame;
            match clock::step(
                session,
                run,
                ClockUnit::Physics,
                None,
                &Sampling::default(),
                0,
            )
            .await
            {
                Ok((reply, _)) => frame = reply.frame,
                Err(e) => {
                    error = Some(format!(
                        "the clock did not run to frame {to}: {}",
                        e.message
                    ));
                    break;
                }
            }
        }
        let request = ProbeRequest::Evaluate {
            expression: item.expression().to_string(),
        };
        let (value, error) = match probe_reply::<ValueReply>(session, request).await? {
            Ok(v) => (Some(v.value.to_json()), None),
            Err(r) => (None, Some(r.message)),
        };
        values.push(CheckValue {
            expression: item.expression().to_string(),
            frame: (frame > 0 || item.frame().is_some()).then_some(frame),
            note: held_note(item.expression(), value.as_ref()),
            value,
            error,
        });
    }
    let stderr = std::fs::read(session.output_dir().join("stderr.log")).unwrap_or_default();
    Ok(SceneCheck {
        values,
        printed: printed(&String::from_utf8_lossy(&stderr)),
        error,
    })
}

/// Why an audio player reads as stopped in a check: the held clock is
/// `SceneTree.paused`, which pauses every stream (agent run 12 and the run 13 pilot:
/// `playing` read false for an autoplaying player, and the agent ran the game itself).
fn held_note(expression: &str, value: Option<&Value>) -> Option<String> {
    let e = expression.trim();
    (value == Some(&Value::Bool(false)) && (e.ends_with("playing") || e.ends_with("is_playing()")))
        .then(|| {
            "the check holds the game's clock (SceneTree.paused), which pauses audio: a \
             stream that plays reads false here; read autoplay and stream instead"
                .to_string()
        })
}

/// What every headless start prints: not the scene's.
const HEADLESS_NOISE: &[&str] = &["ERROR: No renderers available."];

/// Godot's error and warning lines (with the `at:` line under one when it names a
/// script's place), the first [`MAX_PRINTED`].
fn printed(stderr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut keep_next = false;
    for line in stderr.lines() {
        let t = line.trim();
        let head = [
            "ERROR",
            "SCRIPT ERROR",
            "USER ERROR",
            "WARNING",
            "USER WARNING",
        ]
        .iter()
        .any(|h| t.starts_with(&format!("{h}:")))
            && !HEADLESS_NOISE.contains(&t);
        if head || (keep_next && t.starts_with("at:") && t.contains("res://")) {
            out.push(t.to_string());
        }
        keep_next = head;
        if out.len() == MAX_PRINTED {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// A stopped-looking audio player is explained; other values are not.
    #[test]
    fn a_paused_stream_is_explained() {
        let f = Some(&serde_json::Value::Bool(false));
        assert!(super::held_note("get_node(\"Music\").playing", f).is_some());
        assert!(super::held_note("$Music.is_playing() ", f).is_some());
        assert!(super::held_note("$Music.playing", Some(&serde_json::Value::Bool(true))).is_none());
        assert!(super::held_note("visible", f).is_none());
    }

    use super::printed;

    #[test]
    fn printed_keeps_godots_error_and_warning_lines_with_their_place() {
        let stderr = "Godot Engine v4.4.1\nERROR: No renderers available.\n   at: setup (main/main.cpp:2327)\nSCRIPT ERROR: Invalid call. Nonexistent function 'x'.\n   \
                      at: _ready (res://a.gd:3)\nsome output\n   at: not kept\n\
                      WARNING: a warning\nERROR: Condition \"p\" is true.\n   at: f (core/x.cpp:1)\n";
        assert_eq!(
            printed(stderr),
            [
                "SCRIPT ERROR: Invalid call. Nonexistent function 'x'.",
                "at: _ready (res://a.gd:3)",
                "WARNING: a warning",
                "ERROR: Condition \"p\" is true.",
            ]
        );
    }
}
