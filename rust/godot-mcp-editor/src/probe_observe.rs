//! The probe's observation requests beyond `probe.rs`'s core: performance monitors, the
//! running game's scene tree, UI search, per-frame property samples, and input recording.
//!
//! Requests (one JSON line each, answered with the same `id`; the types are
//! [`godot_mcp_protocol::probe`]'s):
//! - `monitors` → `{monitors: {fps, process_time_ms, …}}` (one snapshot, [`crate::perf`]).
//! - `tree {root, max_depth, offset, limit}` → `{nodes: [{path, name, class, depth,
//!   children}], total, capped}`: depth-first from `root`, a page of it.
//! - `find_ui {text?, type?, limit}` → `{elements: [{path, class, text, rect, visible}],
//!   matched, capped}`: Controls whose class is `type` (or inherits it) and whose `text`
//!   contains `text` (case-insensitive).
//! - `sample {node, property, frames}` → answered after `frames` frames with `{values:
//!   [..]}`, one value a frame (as `get_property` renders it).
//! - `record_start` / `record_stop` → `{events: [{t_ms, event, pressed}], skipped}`: the
//!   InputEvents the game received in between, seen by a node added to the root whose
//!   `_input` runs before the game's own nodes (it is the root's last child).

use std::collections::BTreeMap;
use std::time::Instant;

use godot::classes::{INode, InputEvent, Node, Os, Window};
use godot::prelude::*;
use godot_mcp_protocol::probe::{
    FindUiReply, MonitorsReply, ProbeEvent, ProbeRequest, RecordedEvent, RecordedReply,
    RecordingReply, SampleReply, TreeNode, TreeReply, UiElement, UiRect,
};
use serde_json::Value;

use crate::probe_kit::{answer, game_node, refuse};

/// Most nodes one `tree` or `find_ui` request walks: a bound on one frame's work.
const WALK_CAP: usize = 20_000;

/// A `sample` request collecting its frames.
struct PendingSample {
    id: u64,
    node: String,
    property: String,
    frames_left: u64,
    values: Vec<String>,
}

/// What the probe keeps between frames for these requests.
#[derive(Default)]
pub(crate) struct State {
    recorder: Option<Gd<GodotMcpRecorder>>,
    samples: Vec<PendingSample>,
}

/// Records the InputEvents the game receives (see the module docs).
#[derive(GodotClass)]
#[class(init, base = Node)]
pub(crate) struct GodotMcpRecorder {
    started: Option<Instant>,
    events: Vec<RecordedEvent>,
    /// Events not in the replayable form (motion, joypad, echoes …), by class.
    skipped: BTreeMap<String, u64>,
    base: Base<Node>,
}

#[godot_api]
impl INode for GodotMcpRecorder {
    fn input(&mut self, event: Gd<InputEvent>) {
        let t_ms = self.started.map_or(0, |s| s.elapsed().as_millis() as u64);
        match wire_event(&event) {
            Some((event, pressed)) => self.events.push(RecordedEvent {
                t_ms,
                frame: Some(crate::probe_clock::frame_of_input()),
                event,
                pressed,
            }),
            None => {
                let class = if event.is_echo() {
                    "echo".to_string()
                } else {
                    event.get_class().to_string()
                };
                *self.skipped.entry(class).or_default() += 1;
            }
        }
    }
}

/// An InputEvent in the wire form `input` accepts, with its pressed state; `None` for
/// a kind that form does not carry.
fn wire_event(event: &Gd<InputEvent>) -> Option<(ProbeEvent, bool)> {
    if event.is_echo() {
        return None;
    }
    let pressed = event.is_pressed();
    let class = event.get_class().to_string();
    let ev = match class.as_str() {
        "InputEventKey" => {
            let mut code = event.get("keycode").try_to::<i64>().unwrap_or(0);
            if code == 0 {
                code = event.get("physical_keycode").try_to::<i64>().unwrap_or(0);
            }
            let name = Os::singleton()
                .get_keycode_string(godot::global::Key::from_ord(code as i32))
                .to_string();
            if name.is_empty() {
                return None;
            }
            ProbeEvent::Key { key: name }
        }
        "InputEventMouseButton" => {
            let pos = event
                .get("position")
                .try_to::<Vector2>()
                .unwrap_or_default();
            ProbeEvent::MouseButton {
                button: event.get("button_index").try_to::<i64>().unwrap_or(0),
                x: Some(pos.x),
                y: Some(pos.y),
            }
        }
        "InputEventAction" => ProbeEvent::Action {
            action: event.get("action").to_string(),
        },
        _ => return None,
    };
    Some((ev, pressed))
}

/// Answers `request` (one of this module's); `None`: the answer comes from [`tick`]
/// on a later frame.
pub(crate) fn handle(
    state: &mut State,
    root: Option<Gd<Window>>,
    id: u64,
    request: ProbeRequest,
) -> Option<Value> {
    if let ProbeRequest::Monitors {} = request {
        return Some(answer(
            id,
            MonitorsReply {
                monitors: crate::perf::snapshot()
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), v.as_f64()))
                    .collect(),
            },
        ));
    }
    if let ProbeRequest::RecordStop {} = request {
        return Some(record_stop(state, id));
    }
    // Every other request here works on the game's tree.
    let Some(mut root) = root else {
        return Some(refuse(id, "no_root", "the game has no root window yet"));
    };
    Some(match request {
        ProbeRequest::Tree {
            root: path,
            max_depth,
            offset,
            limit,
        } => {
            let Some(start) = find(&root, &path) else {
                return Some(not_found(id, &path));
            };
            let mut all = Vec::new();
            let capped = walk(&start, 0, max_depth.unwrap_or(u64::MAX), &mut all);
            let total = all.len() as u64;
            let nodes = all
                .into_iter()
                .skip(offset as usize)
                .take(limit as usize)
                .map(|(n, depth)| TreeNode {
                    path: n.get_path().to_string(),
                    name: n.get_name().to_string(),
                    class: n.get_class().to_string(),
                    depth,
                    children: n.get_child_count() as u64,
                })
                .collect();
            answer(
                id,
                TreeReply {
                    nodes,
                    total,
                    capped,
                },
            )
        }
        ProbeRequest::FindUi { text, class, limit } => {
            let text = text.map(|t| t.to_lowercase());
            let ty = class.as_str();
            let mut all = Vec::new();
            let capped = walk(&root.upcast::<Node>(), 0, u64::MAX, &mut all);
            let mut matched = 0u64;
            let mut elements = Vec::new();
            for (n, _) in all {
                if !n.is_class("Control") || !n.is_class(ty) {
                    continue;
                }
                let shown = n.get("text");
                let shown = if shown.is_nil() {
                    String::new()
                } else {
                    shown.to_string()
                };
                if text
                    .as_ref()
                    .is_some_and(|t| !shown.to_lowercase().contains(t))
                {
                    continue;
                }
                matched += 1;
                if elements.len() as u64 >= limit {
                    continue;
                }
                let Ok(c) = n.clone().try_cast::<godot::classes::Control>() else {
                    continue;
                };
                let r = c.get_global_rect();
                elements.push(UiElement {
                    path: n.get_path().to_string(),
                    class: n.get_class().to_string(),
                    text: shown,
                    rect: UiRect {
                        x: r.position.x,
                        y: r.position.y,
                        w: r.size.x,
                        h: r.size.y,
                    },
                    visible: c.is_visible_in_tree(),
                });
            }
            answer(
                id,
                FindUiReply {
                    elements,
                    matched,
                    capped,
                },
            )
        }
        ProbeRequest::Sample {
            node,
            property,
            frames,
        } => {
            if find(&root, &node).is_none() {
                return Some(not_found(id, &node));
            }
            state.samples.push(PendingSample {
                id,
                node,
                property,
                frames_left: frames.max(1),
                values: Vec::new(),
            });
            return None;
        }
        ProbeRequest::RecordStart {} => {
            if let Some(old) = state.recorder.take()
                && old.is_instance_valid()
            {
                old.upcast::<Node>().queue_free();
            }
            let mut rec = GodotMcpRecorder::new_alloc();
            rec.set_name("GodotMcpRecorder");
            rec.bind_mut().started = Some(Instant::now());
            root.add_child(&rec);
            rec.set_process_input(true);
            state.recorder = Some(rec);
            answer(id, RecordingReply { recording: true })
        }
        // probe.rs answers the rest before asking here.
        other => refuse(id, "unknown_command", other.cmd()),
    })
}

/// `record_stop`: the recorder's events, and the recorder gone.
fn record_stop(state: &mut State, id: u64) -> Value {
    let Some(rec) = state.recorder.take().filter(|r| r.is_instance_valid()) else {
        return refuse(
            id,
            "not_recording",
            "no input recording is running (start one with record_input)",
        );
    };
    let (events, skipped, duration_ms) = {
        let mut b = rec.clone();
        let mut b = b.bind_mut();
        (
            std::mem::take(&mut b.events),
            std::mem::take(&mut b.skipped),
            b.started.map_or(0, |s| s.elapsed().as_millis() as u64),
        )
    };
    rec.upcast::<Node>().queue_free();
    answer(
        id,
        RecordedReply {
            events,
            skipped,
            duration_ms,
        },
    )
}

/// One frame passed: samples due now, answered.
pub(crate) fn tick(state: &mut State, root: Option<Gd<Window>>) -> Vec<Value> {
    if state.samples.is_empty() {
        return Vec::new();
    }
    let mut done = Vec::new();
    for s in &mut state.samples {
        let node = root.as_ref().and_then(|r| find(r, &s.node));
        match node {
            Some(n) => s.values.push(n.get(s.property.as_str()).to_string()),
            None => {
                // Freed while sampling: what was sampled stands, and the answer says so.
                s.frames_left = 0;
                continue;
            }
        }
        s.frames_left = s.frames_left.saturating_sub(1);
    }
    let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut state.samples)
        .into_iter()
        .partition(|s| s.frames_left == 0);
    state.samples = wait;
    for s in due {
        done.push(answer(s.id, SampleReply { values: s.values }));
    }
    done
}

fn not_found(id: u64, path: &str) -> Value {
    refuse(id, "node_not_found", format!("no node {path}"))
}

fn find(root: &Gd<Window>, path: &str) -> Option<Gd<Node>> {
    if path == "/root" || path.is_empty() {
        return Some(root.clone().upcast());
    }
    game_node(root, path)
}

/// Depth-first from `node`, at most [`WALK_CAP`] nodes; whether it stopped at the cap.
fn walk(node: &Gd<Node>, depth: u64, max_depth: u64, out: &mut Vec<(Gd<Node>, u64)>) -> bool {
    if out.len() >= WALK_CAP {
        return true;
    }
    out.push((node.clone(), depth));
    if depth >= max_depth {
        return false;
    }
    for child in node.get_children().iter_shared() {
        if walk(&child, depth + 1, max_depth, out) {
            return true;
        }
    }
    false
}
