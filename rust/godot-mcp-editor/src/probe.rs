//! `GodotMcpProbe`: the runtime probe of a managed game session.
//!
//! It is passed to the game on the command line — no autoload, no project
//! setting: on Godot 4.4 as `--script res://addons/godot_mcp/probe/probe.gd`, a
//! one-line script `extends GodotMcpProbe`, with the session's endpoint and
//! nonce as user arguments after `--`:
//!
//! ```text
//! godot --headless --path P --script res://addons/godot_mcp/probe/probe.gd -- \
//!     --godot-mcp-endpoint=/…/c.sock --godot-mcp-nonce=… [--godot-mcp-scene=res://…]
//!     [--godot-mcp-blank: a bare Node as the scene, not the main scene]
//! ```
//!
//! The probe is the game's `SceneTree`: `initialize` connects to the control
//! socket (a Unix socket; one JSON line per request and answer), then loads
//! the scene itself (with `--script`, Godot does not load the main scene).
//! `process` polls the socket without blocking, injects input, ends holds when
//! their `hold_ms` passes, and — the moment the server is lost — releases
//! everything it holds and quits 15 s later.
//!
//! The messages are [`godot_mcp_protocol::probe`]'s: requests `status`,
//! `input {event, hold_ms}`, `release_all`, `screenshot {frames, max_edge?, max_bytes?}`,
//! `get_property {node, property}`, `evaluate {expression}`, `quit`; and those of
//! `probe_observe` (monitors, tree, find_ui, sample, record_start, record_stop). A line
//! that is not one of them is answered with a refusal (`bad_request`,
//! `unknown_command`), never dropped in silence when it has an `id`.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use godot::classes::{Engine, ISceneTree, Input, Os, SceneTree};
use godot::prelude::*;
use godot_mcp_protocol::probe::{
    self, Empty, HeldReply, ProbeEvent, ProbeFrame, ProbeHello, ProbeHelloFrame, ProbeRefusal,
    ProbeReply, ProbeRequest, ReleasedReply, ScreenshotReply, StatusReply, ValueReply,
};
use serde_json::Value;

use crate::capture::has_renderer;
use crate::probe_conn::{self, Stream};
use crate::probe_kit::{answer, make_event, refuse};

/// How long the game runs on after losing its server.
const QUIT_AFTER_LOSS: Duration = Duration::from_secs(15);

struct Held {
    /// The event as sent, to send released.
    event: ProbeEvent,
    until: Instant,
}

/// A screenshot request waiting for its frames.
struct PendingShot {
    id: u64,
    frames_left: u64,
    max_edge: Option<u32>,
    max_bytes: Option<usize>,
}

#[derive(GodotClass)]
#[class(init, base = SceneTree)]
pub(crate) struct GodotMcpProbe {
    stream: Option<Stream>,
    inbuf: Vec<u8>,
    held: Vec<Held>,
    lost_at: Option<Instant>,
    /// Screenshots waiting for their frames to pass. A capture right after a scene
    /// loads can still be the blank first frame.
    pending_shots: Vec<PendingShot>,
    /// Monitors, tree, UI search, samples and recording (`probe_observe`).
    observe: crate::probe_observe::State,
    /// The game's clock, when the agent holds it (`probe_clock`).
    clock: crate::probe_clock::Clock,
    base: Base<SceneTree>,
}

fn user_arg(args: &PackedStringArray, name: &str) -> Option<String> {
    let prefix = format!("--{name}=");
    args.as_slice()
        .iter()
        .find_map(|a| a.to_string().strip_prefix(&prefix).map(str::to_owned))
}

#[godot_api]
impl ISceneTree for GodotMcpProbe {
    fn initialize(&mut self) {
        let args = Os::singleton().get_cmdline_user_args();
        let endpoint = user_arg(&args, "godot-mcp-endpoint");
        let nonce = user_arg(&args, "godot-mcp-nonce");
        if let (Some(endpoint), Some(nonce)) = (endpoint, nonce) {
            match probe_conn::connect(&endpoint) {
                Ok(mut s) => {
                    let hello = ProbeHelloFrame {
                        hello: ProbeHello {
                            nonce,
                            pid: std::process::id(),
                            renderer: has_renderer(),
                        },
                    };
                    let hello = serde_json::to_string(&hello).unwrap_or_default();
                    let ok = s.write_all(format!("{hello}\n").as_bytes()).is_ok()
                        && s.set_nonblocking(true).is_ok();
                    if ok {
                        self.stream = Some(s);
                    } else {
                        self.lose();
                    }
                }
                Err(e) => {
                    godot_error!("godot-mcp probe: cannot connect to {endpoint}: {e}");
                    self.lose();
                }
            }
        }
        // A playtest's seed, before any game code runs.
        if let Some(seed) = user_arg(&args, "godot-mcp-seed").and_then(|s| s.parse::<i64>().ok()) {
            godot::global::seed(seed);
        }
        if args.as_slice().iter().any(|a| *a == "--godot-mcp-paused") {
            let mut tree = self.tree();
            self.clock.start_held(&mut tree);
        }
        // With --script Godot loads no main scene: load the requested one, or
        // the project's main scene.
        let scene = user_arg(&args, "godot-mcp-scene").or_else(|| {
            let settings = Engine::singleton().get_singleton("ProjectSettings")?;
            let v = settings
                .clone()
                .call("get_setting", &["application/run/main_scene".to_variant()]);
            v.try_to::<GString>().ok().map(|s| s.to_string())
        });
        if args.as_slice().iter().any(|a| *a == "--godot-mcp-blank") {
            // A check of scripts, resources and autoloads: a bare Node is the scene.
            let mut node = Node::new_alloc();
            node.set_name("Check");
            let mut tree = self.tree();
            if let Some(mut root) = tree.get_root() {
                root.add_child(&node);
                tree.set_current_scene(&node);
            }
        } else if let Some(scene) = scene.filter(|s| !s.is_empty()) {
            let err = self.base_mut().change_scene_to_file(scene.as_str());
            if err != godot::global::Error::OK {
                godot_error!("godot-mcp probe: cannot load {scene}: {err:?}");
            }
        }
    }

    fn physics_process(&mut self, _delta: f64) -> bool {
        let mut tree = self.tree();
        let replies = self
            .clock
            .hook(crate::probe_clock::Hook::Physics, &mut tree);
        self.send_all(replies);
        false
    }

    fn process(&mut self, _delta: f64) -> bool {
        let mut tree = self.tree();
        let replies = self
            .clock
            .hook(crate::probe_clock::Hook::Process, &mut tree);
        self.send_all(replies);
        self.end_expired_holds();
        // The scene change the probe asked for lands at the end of the first
        // iteration's process: requests wait for it, so frame 0 has the scene.
        if Engine::singleton().get_process_frames() > 0 {
            self.poll();
        }
        self.take_due_screenshots();
        let root = self.base().get_root();
        for reply in crate::probe_observe::tick(&mut self.observe, root) {
            if !self.send(&reply) {
                break;
            }
        }
        if let Some(at) = self.lost_at
            && at.elapsed() >= QUIT_AFTER_LOSS
        {
            return true; // quit
        }
        false
    }
}

impl GodotMcpProbe {
    /// The game's tree (this object, as its engine class).
    fn tree(&self) -> Gd<SceneTree> {
        self.base().clone()
    }

    fn send_all(&mut self, replies: Vec<Value>) {
        for reply in replies {
            if !self.send(&reply) {
                break;
            }
        }
    }

    fn lose(&mut self) {
        if self.lost_at.is_some() {
            return;
        }
        self.stream = None;
        let n = self.held.len() + self.clock.held_inputs() as usize;
        self.release_all();
        // Nobody holds the clock any more: the game runs free until it quits.
        let mut tree = self.tree();
        self.clock.let_go(&mut tree);
        self.lost_at = Some(Instant::now());
        godot_print!(
            "godot-mcp probe: server lost; released {n} held input(s); quitting in {} ms",
            QUIT_AFTER_LOSS.as_millis()
        );
    }

    fn release_all(&mut self) -> usize {
        let held = std::mem::take(&mut self.held);
        for h in &held {
            if let Some(ev) = make_event(&h.event, false) {
                Input::singleton().parse_input_event(&ev);
            }
        }
        held.len() + self.clock.release_all()
    }

    /// Inputs held now: by time, and by frame.
    fn held_count(&self) -> u64 {
        self.held.len() as u64 + self.clock.held_inputs()
    }

    fn end_expired_holds(&mut self) {
        let now = Instant::now();
        let (done, keep): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.until <= now);
        self.held = keep;
        for h in done {
            if let Some(ev) = make_event(&h.event, false) {
                Input::singleton().parse_input_event(&ev);
            }
        }
    }

    fn poll(&mut self) {
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let mut buf = [0u8; 4096];
        // Bounded: at most 64 reads per frame.
        for _ in 0..64 {
            match stream.read(&mut buf) {
                Ok(0) => {
                    self.lose();
                    return;
                }
                Ok(n) => self.inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.lose();
                    return;
                }
            }
        }
        while let Some(pos) = self.inbuf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.inbuf.drain(..=pos).collect();
            let reply = match probe::decode_request(&line) {
                // None: the answer comes later (a screenshot waiting for its frames).
                Ok(frame) => self.handle(frame),
                // A line it cannot read is refused under its id (without one, there is
                // no one to answer).
                Err((Some(id), refusal)) => {
                    Some(ProbeReply::<Empty>::refused(id, refusal).to_json())
                }
                Err((None, _)) => None,
            };
            if let Some(reply) = reply
                && !self.send(&reply)
            {
                return;
            }
        }
    }

    /// Writes one reply; a failed write loses the server.
    fn send(&mut self, reply: &Value) -> bool {
        let sent = self.stream.as_mut().map(|s| {
            s.set_nonblocking(false)
                .and_then(|()| s.write_all(format!("{reply}\n").as_bytes()))
                .and_then(|()| s.set_nonblocking(true))
        });
        if matches!(sent, Some(Ok(()))) {
            true
        } else {
            self.lose();
            false
        }
    }

    /// Counts one frame down for every waiting screenshot and answers those now due.
    fn take_due_screenshots(&mut self) {
        if self.pending_shots.is_empty() {
            return;
        }
        let (due, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending_shots)
            .into_iter()
            .map(|mut p| {
                p.frames_left = p.frames_left.saturating_sub(1);
                p
            })
            .partition(|p| p.frames_left == 0);
        self.pending_shots = wait;
        for shot in due {
            let reply = self.capture(&shot);
            if !self.send(&reply) {
                return;
            }
        }
    }

    /// The root viewport's current frame, as PNG. Only reachable with a renderer.
    fn capture(&self, shot: &PendingShot) -> Value {
        let image = self
            .base()
            .get_root()
            .and_then(|root| root.get_texture())
            .and_then(|texture| texture.get_image());
        let Some(image) = image else {
            return refuse(
                shot.id,
                "not_supported",
                "the root viewport has no image to capture yet",
            );
        };
        let outcome = match crate::capture::encode(image, shot.max_edge, shot.max_bytes) {
            Ok(v) => serde_json::from_value::<ScreenshotReply>(v)
                .map_err(|e| ProbeRefusal::new("encode_failed", e.to_string())),
            Err(crate::capture::EncodeError::TooLarge {
                bytes,
                width,
                height,
            }) => Err(ProbeRefusal {
                bytes: Some(bytes as u64),
                width: Some(i64::from(width)),
                height: Some(i64::from(height)),
                ..ProbeRefusal::new(
                    "too_large",
                    format!("the {width}x{height} PNG is {bytes} bytes"),
                )
            }),
        };
        ProbeReply {
            id: shot.id,
            outcome,
        }
        .to_json()
    }

    /// Answers one request; `None` when the answer comes on a later frame.
    fn handle(&mut self, frame: ProbeFrame) -> Option<Value> {
        let id = frame.id;
        Some(match frame.request {
            ProbeRequest::Status {} => answer(
                id,
                StatusReply {
                    breaked: false,
                    held: self.held_count(),
                },
            ),
            ProbeRequest::Input {
                event,
                at_frame: Some(at),
                hold_frames,
                ..
            } => {
                if let Some(refusal) = self.clock.schedule(id, event, at, hold_frames.unwrap_or(1))
                {
                    return Some(refusal);
                }
                answer(
                    id,
                    HeldReply {
                        held: self.held_count(),
                    },
                )
            }
            ProbeRequest::Input { event, hold_ms, .. } => {
                let Some(ev) = make_event(&event, true) else {
                    return Some(refuse(id, "bad_event", "unknown input event"));
                };
                Input::singleton().parse_input_event(&ev);
                if hold_ms == 0 {
                    if let Some(up) = make_event(&event, false) {
                        Input::singleton().parse_input_event(&up);
                    }
                } else {
                    self.held.push(Held {
                        event,
                        until: Instant::now() + Duration::from_millis(hold_ms),
                    });
                }
                answer(
                    id,
                    HeldReply {
                        held: self.held_count(),
                    },
                )
            }
            ProbeRequest::ClockPause {} => {
                let mut tree = self.tree();
                let replies = self.clock.pause(id, &mut tree);
                return self.last_of(replies);
            }
            ProbeRequest::ClockResume {} => {
                let mut tree = self.tree();
                let replies = self.clock.resume(id, &mut tree);
                return self.last_of(replies);
            }
            ProbeRequest::ClockStep(step) => {
                let mut tree = self.tree();
                return self.clock.step(id, &mut tree, step);
            }
            ProbeRequest::ReleaseAll {} => {
                let released = self.release_all() as u64;
                answer(id, ReleasedReply { released })
            }
            ProbeRequest::Screenshot {
                frames,
                max_bytes,
                max_edge,
            } => {
                if !has_renderer() {
                    return Some(refuse(
                        id,
                        "no_renderer",
                        "this Godot build has no renderer (headless): no screenshot is possible",
                    ));
                }
                // After `frames` more frames (0: the frame the viewport holds now).
                let shot = PendingShot {
                    id,
                    frames_left: frames,
                    max_edge: max_edge.map(|m| m.clamp(1, 1 << 16) as u32),
                    max_bytes: max_bytes.map(|m| m as usize),
                };
                if shot.frames_left == 0 {
                    self.capture(&shot)
                } else {
                    self.pending_shots.push(shot);
                    return None;
                }
            }
            ProbeRequest::GetProperty { node, property } => {
                let root = self.base().get_root();
                match root.and_then(|r| crate::probe_kit::game_node(&r, node.as_str())) {
                    Some(n) => {
                        let v = n.get(property.as_str());
                        // The one value model: the same JSON the editor and a file read give.
                        let value = crate::variant::from_variant(&v);
                        answer(id, ValueReply { value })
                    }
                    None => refuse(id, "node_not_found", format!("no node {node:?}")),
                }
            }
            ProbeRequest::Evaluate { expression } => self.evaluate(id, &expression),
            ProbeRequest::Quit {} => {
                self.release_all();
                self.base_mut().quit();
                answer(id, Empty {})
            }
            other => {
                let root = self.base().get_root();
                return crate::probe_observe::handle(&mut self.observe, root, id, other);
            }
        })
    }

    /// `evaluate`: a Godot Expression with the current scene as its base.
    fn evaluate(&self, id: u64, expression: &str) -> Value {
        match crate::probe_clock::evaluate(&self.tree(), expression) {
            Ok(v) => answer(
                id,
                ValueReply {
                    value: crate::variant::from_variant(&v),
                },
            ),
            Err((error, why)) => refuse(id, error, why),
        }
    }

    /// Sends all but the last reply, and returns the last (a step a pause answered
    /// early goes before the pause's own answer).
    fn last_of(&mut self, mut replies: Vec<Value>) -> Option<Value> {
        let last = replies.pop();
        self.send_all(replies);
        last
    }
}
