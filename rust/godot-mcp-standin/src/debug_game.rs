//! The stand-in's script runtime under `--remote-debug tcp://host:port`: it connects to
//! the debugger like a Godot game and runs, frame after frame, the sample game script
//! (`rust/godot-mcp-protocol/tests/samples/debug_game.gd`, at the path
//! `GODOT_STANDIN_DEBUG_SCRIPT`, default `res://scripts/debug_game.gd`) line by line,
//! with the engine's debugger rules (Godot 4.4 `gdscript_vm.cpp` OPCODE_LINE,
//! `enter_function` / `exit_function`, `RemoteDebugger::debug`):
//!
//! - a line stops when it has a breakpoint, or when `lines_left` runs out while
//!   `depth <= 0` (step: depth -1; next: 0; a call adds one, a return takes one,
//!   both only while stepping);
//! - stopped, it sends `debug_enter [can_continue, "Breakpoint", true, "Main Thread"]`
//!   and serves `get_stack_dump`, `get_stack_frame_vars`, `evaluate` and `breakpoint`
//!   until `step`/`next`/`continue`, then sends `debug_exit` (4.4 has no `out`: it
//!   warns "Unknown message received from debugger: out." and stays stopped);
//! - running, it serves `breakpoint` and `break` between frames (a forced break stops
//!   outside any script: no stack);
//! - values are the engine's: locals and members by name with their Variant types,
//!   `self` as an object id, a stack dump as the element count then file/line/function.
//!
//! The scripts profiler (`profiler:servers [true, [max, native]]` / `[false]`, served
//! running or stopped, as the engine's `profiler` capture is): while on, each frame
//! ends with a `servers:function_signature [\"file::line::name\", id]` for each function
//! not named yet in this run (ids from 0, the line being the body's first, as
//! GDScript's) and a `servers:profile_frame` in 4.4's layout (`ServersProfilerFrame`:
//! frame number, four times, script time, one server entry, then `5 × m` and per
//! function id, calls, self, total and internal seconds, most total time first, at most
//! `max`), with the times the stand-in measured; off sends `servers:profile_total`, the
//! sums since on. `GODOT_STANDIN_QUIT_WHEN_PROFILED=1` makes the script quit at the
//! first frame the profiler is on (a game that ends mid-window).
//!
//! Its evaluator knows a bare name (a local or a member); anything else gets what the
//! engine gives an expression it cannot run: a nil `evaluation_return`, then an
//! `error`. `GODOT_STANDIN_LINE_MS=N` makes every line take N ms (a slow line), so a
//! step can outlast its caller's patience; `GODOT_STANDIN_DEBUG_CONNECT_MS=N` delays
//! the connection N ms (a game slow to start).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use godot_mcp_protocol::remote_debug::{Message, PacketReader};
use godot_mcp_protocol::variant_wire::Variant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{mpsc, watch};

const MAIN_THREAD: i64 = 1;
/// The instance id `self` has.
const SELF_ID: u64 = 24_117_248_513;

struct Frame {
    function: &'static str,
    line: i64,
    locals: Vec<(&'static str, Variant)>,
}

struct Game {
    script: String,
    wr: OwnedWriteHalf,
    rx: mpsc::UnboundedReceiver<Message>,
    breakpoints: BTreeSet<(String, i64)>,
    lines_left: i64,
    depth: i64,
    counter: i64,
    stack: Vec<Frame>,
    line_delay: Duration,
    /// Whether the game is stopped (the probe does not answer meanwhile, as the real
    /// probe, on the stopped main loop, cannot).
    stopped: watch::Sender<bool>,
    /// Frames run so far (`Engine::get_process_frames`).
    frames: i64,
    /// The scripts profiler, while on.
    profiler: Option<Profiler>,
    /// The function calls of the running frame: name → (calls, self, total).
    frame_calls: BTreeMap<&'static str, (i64, Duration, Duration)>,
    /// Entered and not returned: name, when, time spent in callees.
    call_stack: Vec<(&'static str, Instant, Duration)>,
}

/// The scripts profiler of one run (`ServersDebugger::ScriptsProfiler`).
struct Profiler {
    /// Functions named this run, by id.
    signatures: Vec<&'static str>,
    /// The per-frame function limit.
    max: usize,
    /// Sums since on: name → (calls, self, total).
    sums: BTreeMap<&'static str, (i64, Duration, Duration)>,
}

/// The first line of each function's body (GDScript's profile signature line).
fn body_line(function: &str) -> i64 {
    match function {
        "_process" => 8,
        _ => 20,
    }
}

/// Connects to `uri` and runs the game until the connection ends.
pub(crate) async fn run(uri: String, breakpoints: Option<String>, stopped: watch::Sender<bool>) {
    let Some(addr) = uri.strip_prefix("tcp://") else {
        eprintln!("standin: --remote-debug takes tcp://host:port");
        return;
    };
    if let Some(ms) = std::env::var("GODOT_STANDIN_DEBUG_CONNECT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let Ok(stream) = TcpStream::connect(addr).await else {
        eprintln!("ERROR: Remote Debugger: Unable to connect.");
        return;
    };
    let (mut rd, wr) = stream.into_split();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut reader = PacketReader::default();
        let mut buf = vec![0u8; 65536];
        loop {
            let n = match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            reader.push(&buf[..n]);
            while let Ok(Some(body)) = reader.next_body() {
                if let Ok(m) = Message::from_body(&body)
                    && tx.send(m).is_err()
                {
                    return;
                }
            }
        }
    });
    let script =
        std::env::var("GODOT_STANDIN_DEBUG_SCRIPT").unwrap_or("res://scripts/debug_game.gd".into());
    let mut game = Game {
        breakpoints: breakpoints
            .iter()
            .flat_map(|b| b.split(','))
            .filter_map(|b| {
                let (path, line) = b.rsplit_once(':')?;
                Some((path.to_string(), line.parse().ok()?))
            })
            .collect(),
        script,
        wr,
        rx,
        lines_left: -1,
        depth: -1,
        counter: 0,
        stack: Vec::new(),
        line_delay: Duration::from_millis(
            std::env::var("GODOT_STANDIN_LINE_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
        ),
        stopped,
        frames: 0,
        profiler: None,
        frame_calls: BTreeMap::new(),
        call_stack: Vec::new(),
    };
    while game.frame().await.is_some() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn s(v: &str) -> Variant {
    Variant::String(v.to_string())
}

impl Game {
    async fn send(&mut self, name: &str, data: Vec<Variant>) -> Option<()> {
        let m = Message {
            name: name.into(),
            thread: MAIN_THREAD,
            data,
        };
        self.wr.write_all(&m.to_packet()).await.ok()
    }

    /// One frame: the messages that arrived, then `_process`. `None` when the
    /// debugger is gone.
    async fn frame(&mut self) -> Option<()> {
        while let Ok(m) = self.rx.try_recv() {
            match m.name.as_str() {
                "breakpoint" => self.breakpoint(&m),
                "break" => {
                    // Stopped outside any script: no stack.
                    self.stop("", false).await?;
                }
                "profiler:servers" => self.toggle_profiler(&m).await?,
                _ => {}
            }
        }
        if self.profiler.is_some() && std::env::var_os("GODOT_STANDIN_QUIT_WHEN_PROFILED").is_some()
        {
            std::process::exit(0);
        }
        self.frame_calls.clear();
        let start = Instant::now();
        self.process().await?;
        self.frames += 1;
        self.send_profile_frame(start.elapsed()).await
    }

    /// `profiler:servers [enable, options?]`; off sends the run's sums.
    async fn toggle_profiler(&mut self, m: &Message) -> Option<()> {
        let Some(enable) = m.data.first().and_then(Variant::as_bool) else {
            return Some(());
        };
        if enable {
            let max = m
                .data
                .get(1)
                .and_then(Variant::as_array)
                .and_then(|o| o.first())
                .and_then(Variant::as_int)
                .map_or(16, |n| usize::try_from(n).unwrap_or(0));
            self.profiler = Some(Profiler {
                signatures: Vec::new(),
                max,
                sums: BTreeMap::new(),
            });
            return Some(());
        }
        let Some(p) = self.profiler.take() else {
            return Some(());
        };
        let data = self.profile_data(&p.sums, &p.signatures, Duration::ZERO, false);
        self.send("servers:profile_total", data).await
    }

    /// The frame's `servers:function_signature`s and `servers:profile_frame`.
    async fn send_profile_frame(&mut self, frame_time: Duration) -> Option<()> {
        let Some(mut p) = self.profiler.take() else {
            return Some(());
        };
        let mut order: Vec<_> = self.frame_calls.iter().map(|(n, c)| (*n, *c)).collect();
        order.sort_by_key(|c| std::cmp::Reverse(c.1.2));
        order.truncate(p.max);
        let mut new = Vec::new();
        for (name, (calls, own, total)) in &order {
            let e = p.sums.entry(name).or_default();
            e.0 += calls;
            e.1 += *own;
            e.2 += *total;
            if !p.signatures.contains(name) {
                p.signatures.push(name);
                new.push(*name);
            }
        }
        for name in new {
            let id = p.signatures.iter().position(|n| *n == name).unwrap_or(0);
            let sig = format!("{}::{}::{name}", self.script, body_line(name));
            self.send(
                "servers:function_signature",
                vec![Variant::StringName(sig), Variant::Int(id as i64)],
            )
            .await?;
        }
        let frame: BTreeMap<_, _> = order.into_iter().collect();
        let data = self.profile_data(&frame, &p.signatures, frame_time, true);
        self.profiler = Some(p);
        self.send("servers:profile_frame", data).await
    }

    /// `ServersProfilerFrame::serialize` of `calls` (most total time first).
    fn profile_data(
        &self,
        calls: &BTreeMap<&'static str, (i64, Duration, Duration)>,
        signatures: &[&'static str],
        frame_time: Duration,
        with_servers: bool,
    ) -> Vec<Variant> {
        let mut rows: Vec<_> = calls.iter().collect();
        rows.sort_by_key(|c| std::cmp::Reverse(c.1.2));
        let script_time: Duration = rows.iter().map(|(_, c)| c.1).sum();
        let mut data = vec![
            Variant::Int(self.frames),
            Variant::Float(frame_time.as_secs_f64()),
            Variant::Float(frame_time.as_secs_f64()),
            Variant::Float(0.0),
            Variant::Float(1.0 / 60.0),
            Variant::Float(script_time.as_secs_f64()),
        ];
        if with_servers {
            data.extend([
                Variant::Int(1),
                Variant::StringName("audio_thread".into()),
                Variant::Int(4),
                Variant::StringName("audio_server".into()),
                Variant::Float(0.0),
                Variant::StringName("audio_driver".into()),
                Variant::Float(0.0),
            ]);
        } else {
            data.push(Variant::Int(0));
        }
        data.push(Variant::Int(rows.len() as i64 * 5));
        for (name, (n, own, total)) in rows {
            let id = signatures.iter().position(|x| x == name).unwrap_or(0);
            data.extend([
                Variant::Int(id as i64),
                Variant::Int(*n),
                Variant::Float(own.as_secs_f64()),
                Variant::Float(total.as_secs_f64()),
                Variant::Float(0.0),
            ]);
        }
        data
    }

    fn breakpoint(&mut self, m: &Message) {
        let (Some(path), Some(line), Some(set)) = (
            m.data.first().and_then(Variant::as_str),
            m.data.get(1).and_then(Variant::as_int),
            m.data.get(2).and_then(Variant::as_bool),
        ) else {
            return;
        };
        let key = (path.to_string(), line);
        if set {
            self.breakpoints.insert(key);
        } else {
            self.breakpoints.remove(&key);
        }
    }

    /// `_process` of the sample script, line by line.
    async fn process(&mut self) -> Option<()> {
        self.enter("_process");
        self.line(8).await?;
        self.counter += 1;
        self.line(9).await?;
        self.set_local("pos", Variant::Vector2([1.5, -2.0]));
        self.line(10).await?;
        self.set_local(
            "tags",
            Variant::PackedStringArray(vec!["a".into(), "bc".into()]),
        );
        self.line(11).await?;
        self.set_local(
            "info",
            Variant::Dictionary {
                key_type: Default::default(),
                value_type: Default::default(),
                entries: vec![(s("name"), s("dbg")), (s("n"), Variant::Int(self.counter))],
            },
        );
        self.line(12).await?;
        self.set_local("color", Variant::Color([0.5, 0.25, 1.0, 1.0]));
        self.line(13).await?;
        self.set_local(
            "path",
            Variant::NodePath {
                names: vec!["root".into(), "Main".into()],
                subnames: vec!["position".into()],
                absolute: true,
            },
        );
        self.line(14).await?;
        // tick(pos)
        self.enter("tick");
        self.set_local("p", Variant::Vector2([1.5, -2.0]));
        self.line(20).await?;
        let doubled = [3.0_f64, -4.0];
        self.set_local("doubled", Variant::Vector2(doubled));
        self.line(21).await?;
        self.counter += doubled[0] as i64 - 3;
        self.exit();
        self.line(15).await?;
        if self.counter % 30 == 0 {
            self.line(16).await?;
        }
        self.exit();
        Some(())
    }

    fn enter(&mut self, function: &'static str) {
        if self.lines_left > 0 && self.depth >= 0 {
            self.depth += 1;
        }
        self.call_stack
            .push((function, Instant::now(), Duration::ZERO));
        self.stack.push(Frame {
            function,
            line: 0,
            locals: Vec::new(),
        });
    }

    fn exit(&mut self) {
        if self.lines_left > 0 && self.depth >= 0 {
            self.depth -= 1;
        }
        if let Some((function, start, in_callees)) = self.call_stack.pop() {
            let total = start.elapsed();
            if let Some(caller) = self.call_stack.last_mut() {
                caller.2 += total;
            }
            let e = self.frame_calls.entry(function).or_default();
            e.0 += 1;
            e.1 += total.saturating_sub(in_callees);
            e.2 += total;
        }
        self.stack.pop();
    }

    fn set_local(&mut self, name: &'static str, value: Variant) {
        if let Some(f) = self.stack.last_mut() {
            f.locals.retain(|(n, _)| *n != name);
            f.locals.push((name, value));
        }
    }

    /// OPCODE_LINE: maybe stop, then run the line.
    async fn line(&mut self, line: i64) -> Option<()> {
        if let Some(f) = self.stack.last_mut() {
            f.line = line;
        }
        let mut stop = false;
        if self.lines_left > 0 {
            if self.depth <= 0 {
                self.lines_left -= 1;
            }
            if self.lines_left <= 0 {
                stop = true;
            }
        }
        if self.breakpoints.contains(&(self.script.clone(), line)) {
            stop = true;
        }
        if stop {
            self.stop("Breakpoint", true).await?;
        }
        if !self.line_delay.is_zero() {
            tokio::time::sleep(self.line_delay).await;
        }
        Some(())
    }

    /// `RemoteDebugger::debug`: serve the debugger until told to go on.
    async fn stop(&mut self, reason: &str, has_stack: bool) -> Option<()> {
        let _ = self.stopped.send(true);
        self.send(
            "debug_enter",
            vec![
                Variant::Bool(true),
                s(reason),
                Variant::Bool(has_stack),
                s("Main Thread"),
            ],
        )
        .await?;
        loop {
            let m = self.rx.recv().await?;
            match m.name.as_str() {
                "step" | "next" | "continue" => {
                    (self.depth, self.lines_left) = match m.name.as_str() {
                        "step" => (-1, 1),
                        "next" => (0, 1),
                        _ => (-1, -1),
                    };
                    break;
                }
                "breakpoint" => self.breakpoint(&m),
                "profiler:servers" => self.toggle_profiler(&m).await?,
                "get_stack_dump" => {
                    let frames: Vec<Variant> = if has_stack {
                        self.stack
                            .iter()
                            .rev()
                            .flat_map(|f| [s(&self.script), Variant::Int(f.line), s(f.function)])
                            .collect()
                    } else {
                        Vec::new()
                    };
                    let mut data = vec![Variant::Int(frames.len() as i64)];
                    data.extend(frames);
                    self.send("stack_dump", data).await?;
                }
                "get_stack_frame_vars" => {
                    let vars = self.frame_vars(&m);
                    self.send("stack_frame_vars", vec![Variant::Int(vars.len() as i64)])
                        .await?;
                    for (name, scope, value) in vars {
                        self.send("stack_frame_var", var(name, scope, value))
                            .await?;
                    }
                }
                "evaluate" => {
                    let expr = m.data.first().and_then(Variant::as_str).unwrap_or("");
                    let frame = m.data.get(1).and_then(Variant::as_int).unwrap_or(0);
                    let found = self
                        .frame_vars(&Message {
                            name: String::new(),
                            thread: MAIN_THREAD,
                            data: vec![Variant::Int(frame)],
                        })
                        .into_iter()
                        .find(|(n, _, _)| n == expr.trim());
                    let value = found.as_ref().map_or(Variant::Nil, |(_, _, v)| v.clone());
                    self.send("evaluation_return", var(expr.to_string(), 3, value))
                        .await?;
                    if found.is_none() {
                        // Queued by the error handler, flushed at the next loop turn.
                        let text = format!(
                            "There was previously a parse error: Invalid expression \"{expr}\"."
                        );
                        self.send("error", error_report(&text, "execute", false))
                            .await?;
                    }
                }
                // 4.4 has no `out`: the engine warns and stays stopped.
                other => {
                    let text = format!("Unknown message received from debugger: {other}.");
                    self.send("error", error_report(&text, "debug", true))
                        .await?;
                }
            }
        }
        self.send("debug_exit", vec![]).await?;
        let _ = self.stopped.send(false);
        Some(())
    }

    /// Locals (scope 0), then members (1): `self`, `counter`, `label`.
    fn frame_vars(&self, m: &Message) -> Vec<(String, i64, Variant)> {
        let level = m.data.first().and_then(Variant::as_int).unwrap_or(0);
        let Some(f) = usize::try_from(level)
            .ok()
            .and_then(|l| self.stack.len().checked_sub(l + 1))
            .and_then(|i| self.stack.get(i))
        else {
            return Vec::new();
        };
        let mut out: Vec<(String, i64, Variant)> = f
            .locals
            .iter()
            .map(|(n, v)| (n.to_string(), 0, v.clone()))
            .collect();
        out.push(("self".into(), 1, Variant::Object(SELF_ID)));
        out.push(("counter".into(), 1, Variant::Int(self.counter)));
        out.push(("label".into(), 1, s("dbg")));
        out
    }
}

/// `ScriptStackVariable::serialize`: `[name, scope, value type, value]`.
fn var(name: String, scope: i64, value: Variant) -> Vec<Variant> {
    let ty = i64::from(value.type_id());
    vec![
        Variant::String(name),
        Variant::Int(scope),
        Variant::Int(ty),
        value,
    ]
}

/// `ErrorMessage::serialize` of an engine error (or warning).
fn error_report(text: &str, function: &str, warning: bool) -> Vec<Variant> {
    vec![
        Variant::Int(0),
        Variant::Int(0),
        Variant::Int(0),
        Variant::Int(0),
        s("./core/debugger/remote_debugger.cpp"),
        s(function),
        Variant::Int(0),
        s(text),
        s(""),
        Variant::Bool(warning),
        Variant::Int(0),
    ]
}
