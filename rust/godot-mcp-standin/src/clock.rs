//! The stand-in's game clock, answering `clock_pause`, `clock_resume`, `clock_step` and
//! `input` on a frame in the real probe's form (`probe_clock` in the add-on). Its game
//! runs at 60 frames a second of wall time while free; held, it stands still; a step
//! advances it at once. Its values per frame: `frame` (the clock frame), `y` (a
//! falling body: `frame * 0.25`, deterministic), `ticks` (milliseconds since the
//! probe connected) and `wall_ns` (the wall clock in ns): wall time, not deterministic.

use std::time::Instant;

use godot_mcp_protocol::probe::{
    self, ClockReply, ClockUnit, ProbeEvent, ProbeRefusal, StepReply, Watch, WatchRow, watch_error,
};

pub(crate) struct Clock {
    base: u64,
    free_since: Option<Instant>,
    connected_at: Instant,
    /// (frame, event, pressed): input due on a frame.
    scheduled: Vec<(u64, ProbeEvent, bool)>,
}

impl Clock {
    pub(crate) fn new(held: bool) -> Self {
        let now = Instant::now();
        Self {
            base: 0,
            free_since: (!held).then_some(now),
            connected_at: now,
            scheduled: Vec::new(),
        }
    }

    pub(crate) fn frame(&self) -> u64 {
        self.base
            + self
                .free_since
                .map_or(0, |t| t.elapsed().as_millis() as u64 / 16)
    }

    pub(crate) fn pause(&mut self) -> ClockReply {
        self.base = self.frame();
        self.free_since = None;
        ClockReply {
            frame: self.base,
            paused: true,
        }
    }

    pub(crate) fn resume(&mut self) -> ClockReply {
        self.base = self.frame();
        self.free_since = Some(Instant::now());
        ClockReply {
            frame: self.base,
            paused: false,
        }
    }

    /// A property of the stand-in game on the current frame.
    pub(crate) fn property(&self, node: &str, property: &str) -> probe::Value {
        self.property_at(node, property, self.frame())
    }

    fn property_at(&self, node: &str, property: &str, frame: u64) -> probe::Value {
        match property {
            "frame" => probe::Value::Int(frame as i64),
            "y" => probe::Value::Float(frame as f64 * 0.25),
            "ticks" => probe::Value::Int(self.connected_at.elapsed().as_millis() as i64),
            // The wall clock in ns: a value no two runs share.
            "wall_ns" => probe::Value::Int(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i64),
            ),
            _ => probe::Value::String(format!("standin:{node}:{property}")),
        }
    }

    /// The stand-in's Expression: `frame >= N` and `frame == N` are evaluated; text
    /// ending in an operator is Godot's parse error (`1 +`: "Expected expression."); any
    /// other text is its own value (a String, truthy when not empty, as in Godot).
    pub(crate) fn evaluate(&self, expression: &str) -> Result<probe::Value, ProbeRefusal> {
        parse(expression)?;
        let frame = self.frame();
        let parts: Vec<&str> = expression.split_whitespace().collect();
        if let ["frame", op, n] = parts.as_slice()
            && let Ok(n) = n.parse::<u64>()
        {
            match *op {
                ">=" => return Ok(probe::Value::Bool(frame >= n)),
                "==" => return Ok(probe::Value::Bool(frame == n)),
                _ => {}
            }
        }
        Ok(probe::Value::String(expression.to_string()))
    }

    pub(crate) fn schedule(
        &mut self,
        event: ProbeEvent,
        at: u64,
        hold: u64,
    ) -> Result<(), ProbeRefusal> {
        let frame = self.frame();
        if at <= frame {
            return Err(ProbeRefusal::new(
                "frame_passed",
                format!(
                    "frame {at} has passed: the clock is at frame {frame}; the next frame is {}",
                    frame + 1
                ),
            ));
        }
        self.scheduled.push((at, event.clone(), true));
        self.scheduled.push((at + hold, event, false));
        Ok(())
    }

    /// Scheduled releases not yet delivered.
    pub(crate) fn held_inputs(&self) -> u64 {
        self.scheduled.iter().filter(|s| !s.2).count() as u64
    }

    /// Releases what was pressed, forgets the rest; how many were released.
    pub(crate) fn release_all(&mut self) -> u64 {
        let all = std::mem::take(&mut self.scheduled);
        all.iter()
            .filter(|r| !r.2 && !all.iter().any(|p| p.2 && p.1 == r.1 && p.0 <= r.0))
            .count() as u64
    }

    /// A step; like the probe, an `until` or watch expression that does not parse is
    /// refused before any frame runs, and a watch that fails is its error in the row.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn step(
        &mut self,
        frames: u64,
        unit: ClockUnit,
        until: Option<&str>,
        watch: &[Watch],
        every: Option<u64>,
        at: &[u64],
    ) -> Result<StepReply, ProbeRefusal> {
        // One frame is one iteration here, so both units count the same.
        let _ = unit;
        let exprs = until.map(|u| ("until".to_string(), u)).into_iter().chain(
            watch.iter().enumerate().filter_map(|(i, w)| match w {
                Watch::Expression { expression } => {
                    Some((format!("watch[{i}]"), expression.as_str()))
                }
                Watch::Property { .. } => None,
            }),
        );
        for (what, e) in exprs {
            if let Err(r) = parse(e) {
                return Err(ProbeRefusal::new(
                    &r.error,
                    format!("{what}: {}", r.message),
                ));
            }
        }
        self.pause();
        let start = self.base;
        let every = every.filter(|e| *e > 0);
        let mut rows = Vec::new();
        let mut met = until.map(|_| false);
        for _ in 0..frames {
            self.base += 1;
            let frame = self.base;
            for (f, ev, pressed) in self.scheduled.iter().filter(|s| s.0 == frame) {
                let what = serde_json::to_string(ev).unwrap_or_default();
                println!("standin: input {what} pressed={pressed} at frame {f}");
            }
            self.scheduled.retain(|s| s.0 > frame);
            if (at.contains(&frame) || every.is_some_and(|e| frame.is_multiple_of(e)))
                && !watch.is_empty()
            {
                let values = watch
                    .iter()
                    .map(|w| match w {
                        Watch::Property { node, property } => {
                            self.property_at(node, property, frame).to_json()
                        }
                        Watch::Expression { expression } => match self.evaluate(expression) {
                            Ok(v) => v.to_json(),
                            Err(r) => watch_error(&r.error, &r.message),
                        },
                    })
                    .collect();
                rows.push(WatchRow { frame, values });
            }
            if let Some(expr) = until {
                let truthy = match self.evaluate(expr)? {
                    probe::Value::Bool(b) => b,
                    probe::Value::String(s) => !s.is_empty(),
                    _ => false,
                };
                met = Some(truthy);
                if truthy {
                    break;
                }
            }
        }
        let _ = std::io::Write::flush(&mut std::io::stdout());
        Ok(StepReply {
            frame: self.base,
            advanced: self.base - start,
            met,
            rows,
        })
    }
}

/// The stand-in's parse: text ending in a binary operator is Godot's parse error for it.
fn parse(expression: &str) -> Result<(), ProbeRefusal> {
    let t = expression.trim_end();
    if t.ends_with(['+', '-', '*', '/', '<', '>', '=', '&', '|']) {
        return Err(ProbeRefusal::new("parse_error", "Expected expression."));
    }
    Ok(())
}
