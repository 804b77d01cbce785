//! The game's clock, held by the agent (`clock_pause`, `clock_resume`, `clock_step`,
//! and `input` on a frame; the types are [`godot_mcp_protocol::probe`]'s).
//!
//! The probe is the game's `SceneTree`, so its `physics_process` and `process` run
//! first in every physics tick and every main-loop iteration, before any node's.
//! There it decides whether the tick runs: holding the clock is `SceneTree.paused`
//! (nodes with the default process mode stop, and Godot deactivates the physics
//! servers), and a step un-pauses the tree for exactly the ticks it asks for. The
//! clock frame counts the physics ticks the game has run while the probe watched:
//! frame N is the state after the N-th tick and the `_process` of its iteration.
//!
//! A tick's delta is always `1 / physics_ticks_per_second` (times
//! `Engine.time_scale`); the process delta is fixed too when the game runs with
//! `--fixed-fps` equal to the tick rate (the server's deterministic launch), which
//! also makes every iteration exactly one tick. See docs/playtesting.md.
//!
//! A step is answered once its last frame is complete: at the first hook of the
//! next iteration. Watches are read and `until` is evaluated right after each tick
//! (at the next hook: the iteration's `process`, before any node's `_process`).
//! Input due on frame N is given to `Input` and flushed just before tick N: Godot
//! stamps an action pressed during tick N-1 or between ticks as just pressed on tick
//! N (`Input` sets `pressed_physics_frame` to the physics frame count + 1), so it is
//! delivered after tick N-1 once the clock knows tick N runs (or when a step starts,
//! the tree un-paused for the moment of delivery so `_input` sees it). When two ticks
//! share one iteration (a game not launched with `--fixed-fps`) input due on the
//! second lands one frame late.

use std::sync::atomic::{AtomicU64, Ordering};

use godot::classes::{ClassDb, Engine, Input, SceneTree};
use godot::prelude::*;
use godot_mcp_protocol::probe::{
    ClockReply, ClockStep, ClockUnit, ProbeEvent, StepReply, Watch, WatchRow, until_failed,
    watch_error,
};
use serde_json::Value;

use crate::probe_kit::{answer, make_event, refuse};

/// The clock frame, for the input recorder (`probe_observe`).
pub(crate) static FRAME: AtomicU64 = AtomicU64::new(0);

/// The frame an input received now is first seen on by `_physics_process` (Godot
/// stamps it for the next physics tick).
pub(crate) fn frame_of_input() -> u64 {
    FRAME.load(Ordering::Relaxed) + 1
}

/// Which hook runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hook {
    Physics,
    Process,
}

struct Scheduled {
    frame: u64,
    event: ProbeEvent,
    pressed: bool,
}

struct Pending {
    id: u64,
    /// What was asked (`every` of 0 dropped).
    step: ClockStep,
    start: u64,
    ticks: u64,
    iterations: u64,
    met: Option<bool>,
    stop: bool,
    rows: Vec<WatchRow>,
    /// `until` failed (its kind and Godot's text): the step stops and is refused.
    until_failed: Option<(&'static str, String)>,
}

/// The clock's state between frames.
#[derive(Default)]
pub(crate) struct Clock {
    /// The agent holds the clock.
    held: bool,
    /// Physics ticks run while the probe watched.
    frame: u64,
    /// The tree's own pause state when the agent took the clock (restored on resume).
    game_paused: bool,
    pending: Option<Pending>,
    /// A tick ran and has not been looked at yet.
    tick_open: bool,
    /// This iteration advanced the game and is not complete yet.
    iter_open: bool,
    last_iteration: u64,
    scheduled: Vec<Scheduled>,
}

impl Clock {
    /// Held from the first frame (`--godot-mcp-paused`): frame 0 is the scene loaded.
    pub(crate) fn start_held(&mut self, tree: &mut Gd<SceneTree>) {
        self.held = true;
        tree.set_pause(true);
    }

    /// Inputs scheduled whose release has not been delivered.
    pub(crate) fn held_inputs(&self) -> u64 {
        self.scheduled.iter().filter(|s| !s.pressed).count() as u64
    }

    /// `input` with `at_frame`: the press on that frame, the release `hold` frames later.
    pub(crate) fn schedule(
        &mut self,
        id: u64,
        event: ProbeEvent,
        at: u64,
        hold: u64,
    ) -> Option<Value> {
        if at <= self.frame {
            return Some(refuse(
                id,
                "frame_passed",
                format!(
                    "frame {at} has passed: the clock is at frame {}; the next frame is {}",
                    self.frame,
                    self.frame + 1
                ),
            ));
        }
        if make_event(&event, true).is_none() {
            return Some(refuse(id, "bad_event", "unknown input event"));
        }
        self.scheduled.push(Scheduled {
            frame: at,
            event: event.clone(),
            pressed: true,
        });
        self.scheduled.push(Scheduled {
            frame: at + hold,
            event,
            pressed: false,
        });
        None
    }

    /// Releases what scheduled input pressed, and forgets the rest; how many.
    pub(crate) fn release_all(&mut self) -> usize {
        let all = std::mem::take(&mut self.scheduled);
        let pressed: Vec<_> = all
            .iter()
            .filter(|s| !s.pressed)
            .filter(|r| {
                !all.iter()
                    .any(|p| p.pressed && p.event == r.event && p.frame <= r.frame)
            })
            .collect();
        for r in &pressed {
            if let Some(ev) = make_event(&r.event, false) {
                Input::singleton().parse_input_event(&ev);
            }
        }
        pressed.len()
    }

    pub(crate) fn pause(&mut self, id: u64, tree: &mut Gd<SceneTree>) -> Vec<Value> {
        let mut out = self.finish(tree);
        if !self.held {
            self.game_paused = tree.is_paused();
            self.held = true;
        }
        tree.set_pause(true);
        out.push(answer(
            id,
            ClockReply {
                frame: self.frame,
                paused: true,
            },
        ));
        out
    }

    pub(crate) fn resume(&mut self, id: u64, tree: &mut Gd<SceneTree>) -> Vec<Value> {
        let mut out = self.finish(tree);
        self.let_go(tree);
        out.push(answer(
            id,
            ClockReply {
                frame: self.frame,
                paused: false,
            },
        ));
        out
    }

    /// The agent lets go of the clock (resume, or the server is lost).
    pub(crate) fn let_go(&mut self, tree: &mut Gd<SceneTree>) {
        if self.held {
            self.held = false;
            tree.set_pause(self.game_paused);
        }
        self.pending = None;
    }

    /// Answers a pending step with what it did so far (a pause or resume came).
    fn finish(&mut self, tree: &Gd<SceneTree>) -> Vec<Value> {
        if self.tick_open {
            self.close_tick(tree);
        }
        match self.pending.take() {
            Some(p) => vec![step_answer(&p, self.frame)],
            None => Vec::new(),
        }
    }

    pub(crate) fn step(
        &mut self,
        id: u64,
        tree: &mut Gd<SceneTree>,
        step: ClockStep,
    ) -> Option<Value> {
        if self.pending.is_some() {
            return Some(refuse(
                id,
                "clock_busy",
                "a step is already running; wait for its answer",
            ));
        }
        // An expression Godot cannot parse is refused before any frame runs.
        let exprs = step.until.iter().map(|u| ("until".to_string(), u)).chain(
            step.watch.iter().enumerate().filter_map(|(i, w)| match w {
                Watch::Expression { expression } => Some((format!("watch[{i}]"), expression)),
                Watch::Property { .. } => None,
            }),
        );
        for (what, e) in exprs {
            if let Err(why) = parse(tree, e) {
                return Some(refuse(id, "parse_error", format!("{what}: {why}")));
            }
        }
        if !self.held {
            self.game_paused = tree.is_paused();
            self.held = true;
        }
        tree.set_pause(true);
        let p = Pending {
            id,
            stop: step.frames == 0,
            step: ClockStep {
                every: step.every.filter(|e| *e > 0),
                ..step
            },
            start: self.frame,
            ticks: 0,
            iterations: 0,
            met: None,
            rows: Vec::new(),
            until_failed: None,
        };
        if p.stop {
            return Some(step_answer(&p, self.frame));
        }
        self.pending = Some(p);
        // The first tick of the step runs next: its input goes in now, the tree
        // un-paused for the moment so `_input` sees it.
        self.deliver(self.frame + 1, tree, true);
        None
    }

    /// One hook: closes what the last tick or iteration finished (answers due now),
    /// then decides whether this tick or iteration runs.
    pub(crate) fn hook(&mut self, hook: Hook, tree: &mut Gd<SceneTree>) -> Vec<Value> {
        let mut out = Vec::new();
        let iteration = Engine::singleton().get_process_frames();
        let new_iteration = iteration != self.last_iteration;
        self.last_iteration = iteration;
        if self.tick_open {
            self.close_tick(tree);
        }
        if self.iter_open && new_iteration {
            self.iter_open = false;
            if let Some(p) = self.pending.as_mut() {
                p.iterations += 1;
                if p.step.unit == ClockUnit::Process && p.iterations >= p.step.frames {
                    p.stop = true;
                }
                if p.stop {
                    let p = self.pending.take().expect("pending");
                    out.push(step_answer(&p, self.frame));
                }
            }
        }
        let stepping = self.pending.as_ref().is_some_and(|p| !p.stop);
        match hook {
            Hook::Physics => {
                let runs = if stepping {
                    true
                } else if self.held {
                    false
                } else {
                    !tree.is_paused()
                };
                if stepping {
                    tree.set_pause(false);
                } else if self.held {
                    tree.set_pause(true);
                }
                if runs {
                    self.frame += 1;
                    FRAME.store(self.frame, Ordering::Relaxed);
                    self.tick_open = true;
                    self.iter_open = true;
                    if let Some(p) = self.pending.as_mut() {
                        p.ticks += 1;
                    }
                    // Input for this frame not delivered before its tick (a second
                    // tick in one iteration): now, seen one frame late.
                    self.deliver(self.frame, tree, false);
                }
            }
            Hook::Process => {
                if self.iter_open {
                    // The iteration's ticks ran: its _process runs too.
                } else if stepping {
                    tree.set_pause(false);
                    self.iter_open = true;
                } else if self.held {
                    tree.set_pause(true);
                }
                // The next tick runs: its input goes in now, between the ticks.
                let free = !self.held && self.pending.is_none() && !tree.is_paused();
                if stepping || free {
                    self.deliver(self.frame + 1, tree, false);
                }
            }
        }
        out
    }

    /// The input due on or before `frame`, delivered now (flushed, so it is not left
    /// for the next iteration's event flush); `unpause`: with the tree un-paused for
    /// the moment.
    fn deliver(&mut self, frame: u64, tree: &mut Gd<SceneTree>, unpause: bool) {
        if !self.scheduled.iter().any(|s| s.frame <= frame) {
            return;
        }
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.scheduled)
            .into_iter()
            .partition(|s| s.frame <= frame);
        self.scheduled = later;
        if unpause {
            tree.set_pause(false);
        }
        let mut input = Input::singleton();
        // Presses before releases, so a 0-frame hold is a press then a release.
        for pressed in [true, false] {
            for s in due.iter().filter(|s| s.pressed == pressed) {
                if let Some(ev) = make_event(&s.event, s.pressed) {
                    input.parse_input_event(&ev);
                    input.flush_buffered_events();
                }
            }
        }
        if unpause {
            tree.set_pause(true);
        }
    }

    /// After a tick: watches sampled, `until` evaluated, the frame budget counted.
    fn close_tick(&mut self, tree: &Gd<SceneTree>) {
        self.tick_open = false;
        let frame = self.frame;
        let Some(p) = self.pending.as_mut() else {
            return;
        };
        let due =
            p.step.at.contains(&frame) || p.step.every.is_some_and(|e| frame.is_multiple_of(e));
        if due && !p.step.watch.is_empty() {
            let values = p.step.watch.iter().map(|w| read_watch(tree, w)).collect();
            p.rows.push(WatchRow { frame, values });
        }
        if let Some(expr) = &p.step.until {
            match evaluate(tree, expr) {
                Ok(v) => {
                    let truthy = v.booleanize();
                    p.met = Some(truthy);
                    if truthy {
                        p.stop = true;
                    }
                }
                Err(failure) => {
                    p.until_failed = Some(failure);
                    p.stop = true;
                }
            }
        }
        if p.step.unit == ClockUnit::Physics && p.ticks >= p.step.frames {
            p.stop = true;
        }
    }
}

fn step_answer(p: &Pending, frame: u64) -> Value {
    if let Some((kind, why)) = &p.until_failed {
        return refuse(p.id, kind, until_failed(frame, why));
    }
    answer(
        p.id,
        StepReply {
            frame,
            advanced: frame - p.start,
            met: p.step.until.as_ref().map(|_| p.met.unwrap_or(false)),
            rows: p.rows.clone(),
        },
    )
}

/// One watched value in the value model's JSON form; a watch that cannot be read is
/// its error (`watch_error`), never `null`.
fn read_watch(tree: &Gd<SceneTree>, w: &Watch) -> serde_json::Value {
    let v = match w {
        Watch::Property { node, property } => {
            let Some(n) = tree
                .get_root()
                .and_then(|r| crate::probe_kit::game_node(&r, node.as_str()))
            else {
                return watch_error("node_not_found", &format!("no node {node:?}"));
            };
            n.get(property.as_str())
        }
        Watch::Expression { expression } => match evaluate(tree, expression) {
            Ok(v) => v,
            Err((kind, why)) => return watch_error(kind, &why),
        },
    };
    crate::variant::from_variant(&v).to_json()
}

fn new_expression() -> Result<Gd<Object>, (&'static str, String)> {
    ClassDb::singleton()
        .instantiate("Expression")
        .try_to::<Gd<Object>>()
        .map_err(|_| ("no_expression", "Expression unavailable".into()))
}

/// An Expression's inputs: the engine's singletons (`Engine.get_singleton_list()`:
/// ProjectSettings, Time, Input, OS, RenderingServer…) and the autoloads (the root's
/// children but the current scene), by name: Godot's Expression sees only its inputs
/// and its base instance (agent run 14 reached an autoload only as /root/Name).
fn inputs(tree: &Gd<SceneTree>) -> (PackedStringArray, VarArray) {
    let engine = Engine::singleton();
    let mut names = engine.get_singleton_list();
    let mut values = VarArray::new();
    for n in names.as_slice() {
        let v = engine
            .get_singleton(&StringName::from(n))
            .map(|o| o.to_variant())
            .unwrap_or_default();
        values.push(&v);
    }
    let current = tree.get_current_scene();
    if let Some(root) = tree.get_root() {
        for child in root.get_children().iter_shared() {
            let name = child.get_name().to_string();
            let identifier = name.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if current.as_ref() == Some(&child)
                || !identifier
                || names.as_slice().iter().any(|n| n.to_string() == name)
            {
                continue;
            }
            names.push(&GString::from(name.as_str()));
            values.push(&child.to_variant());
        }
    }
    (names, values)
}

/// Whether Godot parses `expression` (the singletons named): Godot's text when not.
fn parse(tree: &Gd<SceneTree>, expression: &str) -> Result<(), String> {
    let mut expr = new_expression().map_err(|(_, why)| why)?;
    let (names, _) = inputs(tree);
    parsed(&mut expr, expression, &names).map_err(|(_, why)| why)
}

fn parsed(
    expr: &mut Gd<Object>,
    expression: &str,
    names: &PackedStringArray,
) -> Result<(), (&'static str, String)> {
    // `$Node` / `%Unique` as a script writes them (Expression has no such syntax).
    let expression = godot_mcp_editor_core::expr::node_shorthand(expression);
    let err = expr.call(
        "parse",
        &[expression.as_ref().to_variant(), names.to_variant()],
    );
    if err.try_to::<i64>().unwrap_or(1) != 0 {
        let why = expr.call("get_error_text", &[]).to_string();
        return Err(("parse_error", why));
    }
    Ok(())
}

/// The identifier an expression ends with (`Time.get_ticks_msec` → `get_ticks_msec`).
fn trailing_identifier(expression: &str) -> &str {
    let t = expression.trim_end();
    let start = t
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map_or(t.len(), |(i, _)| i);
    &t[start..]
}

/// Godot's message for an expression that failed, and when the game has no current
/// scene (its root was freed) the reason it had no base (agent run 12b read "self can't
/// be used because instance is null" after a `queue_free()`).
fn no_base(why: String, gone: bool) -> String {
    if gone {
        format!("{why} (the scene's root is gone: freed, so nothing is there to evaluate on)")
    } else {
        why
    }
}

/// A Godot Expression with the current scene as its base and the engine's singletons
/// and the autoloads as named inputs: its value, or why not (`parse_error`/`execute_failed`, the
/// Expression's own text; `method_not_called`: the expression ends in a method's name,
/// which Godot reads as a Callable, not the method's result).
pub(crate) fn evaluate(
    tree: &Gd<SceneTree>,
    expression: &str,
) -> Result<Variant, (&'static str, String)> {
    let mut expr = new_expression()?;
    let (names, values) = inputs(tree);
    parsed(&mut expr, expression, &names)?;
    let scene = tree.get_current_scene();
    let gone = scene.is_none();
    let base = scene.map(|n| n.to_variant()).unwrap_or_default();
    let v = expr.call("execute", &[values.to_variant(), base]);
    if expr
        .call("has_execute_failed", &[])
        .try_to::<bool>()
        .unwrap_or(true)
    {
        let why = expr.call("get_error_text", &[]).to_string();
        return Err(("execute_failed", no_base(why, gone)));
    }
    if let Ok(c) = v.try_to::<Callable>() {
        let name = trailing_identifier(expression);
        if !name.is_empty() && c.method_name().is_some_and(|m| m == name) {
            let e = expression.trim();
            return Err((
                "method_not_called",
                format!(
                    "{e} is a method, not a property: call it, {e}() (Godot's Expression \
                     reads a method's name as a Callable)"
                ),
            ));
        }
    }
    Ok(v)
}
