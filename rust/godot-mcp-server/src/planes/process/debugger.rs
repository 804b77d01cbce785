//! The debugger server of one supervised game: a loopback TCP listener the server
//! binds before the launch, which the game (started with `--remote-debug`) connects to
//! and speaks the engine's remote-debug protocol on (`godot_mcp_protocol::remote_debug`).
//!
//! What the game says is the state: a `debug_enter` means it is stopped (and why), a
//! `debug_exit` that it runs again. Nothing is assumed: a step or a break the game does
//! not confirm within its limit is a [`DebugError::Timeout`], and a request made while
//! it runs is refused ([`DebugError::NotStopped`]) instead of being queued for later.

use std::sync::Arc;
use std::time::Duration;

use godot_mcp_protocol::remote_debug::{
    DebugEnter, ErrorReport, FunctionSignature, Message, PacketReader, ProfileFrame, StackFrame,
    StackVar, command, parse_frame_var_count, parse_stack_dump,
};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{broadcast, watch};

/// Why the game stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The thread that stopped (the main thread is 1).
    pub thread: i64,
    /// `Breakpoint`, a script error's text, or empty for a forced break.
    pub reason: String,
    /// False when the error is fatal.
    pub can_continue: bool,
    /// A script stack exists.
    pub has_stack: bool,
}

/// What the server knows of the game's debugger connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DebugState {
    /// The game connected.
    pub connected: bool,
    /// Its connection ended (the game quit, crashed or was stopped).
    pub closed: bool,
    /// Where it is stopped, if it is.
    pub stopped: Option<Stop>,
    /// How many `debug_enter`s and `debug_exit`s arrived: a step is confirmed by a new
    /// enter, a continue by a new exit.
    pub enters: u64,
    pub exits: u64,
}

/// Why a debugger request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebugError {
    /// The game has not connected (yet).
    NotConnected,
    /// The connection ended.
    Closed,
    /// The request needs the game stopped, and it runs.
    NotStopped,
    /// The game did not confirm within the limit; `left_stop` when it left the stop
    /// (it runs, or stopped again later than the limit).
    Timeout { left_stop: bool },
    /// The game left the stop instead of answering (the engine does that for an
    /// evaluation in a frame without a script instance).
    Resumed,
    /// Step out from the outermost script frame: there is no caller to return to.
    NoCaller,
    /// The request needs the game running, and it is stopped in the debugger.
    Breaked,
    /// The server fell behind the game's messages and lost some (a profile would miss
    /// frames or function names).
    Lagged,
}

/// What became of a breakpoint sent to a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Written to its connection.
    Sent,
    /// Held until it connects.
    Queued,
}

/// The debugger server of one game session.
pub struct Debugger {
    listener: Mutex<Option<TcpListener>>,
    /// The loopback port the game is told to connect to.
    pub port: u16,
    writer: tokio::sync::Mutex<Option<OwnedWriteHalf>>,
    /// Messages for a game that has not connected yet, sent when it does.
    pending: Mutex<Vec<Message>>,
    state: watch::Sender<DebugState>,
    messages: broadcast::Sender<Arc<Message>>,
    /// One conversation with the stop loop at a time: replies carry no request id.
    conversation: tokio::sync::Mutex<()>,
    /// One profiling window at a time: turning the profiler on restarts the engine's
    /// signature ids, which would mix two windows' functions.
    profiling: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Debugger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Debugger")
            .field("port", &self.port)
            .field("state", &*self.state.borrow())
            .finish_non_exhaustive()
    }
}

impl Debugger {
    /// Binds the listener (loopback, a free port) before the game is launched.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener: Mutex::new(Some(listener)),
            port,
            writer: tokio::sync::Mutex::new(None),
            pending: Mutex::new(Vec::new()),
            state: watch::channel(DebugState::default()).0,
            messages: broadcast::channel(4096).0,
            conversation: tokio::sync::Mutex::new(()),
            profiling: tokio::sync::Mutex::new(()),
        })
    }

    /// The URI for `--remote-debug`.
    pub fn uri(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    pub fn state(&self) -> DebugState {
        self.state.borrow().clone()
    }

    /// Waits until the game connected (or its connection ended), at most `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> bool {
        let mut rx = self.state.subscribe();
        matches!(
            tokio::time::timeout(limit, rx.wait_for(|s| s.connected || s.closed)).await,
            Ok(Ok(s)) if s.connected && !s.closed
        )
    }

    /// Ends the connection (the session ended).
    pub async fn close(&self) {
        self.listener.lock().take();
        self.writer.lock().await.take();
        self.state.send_modify(|s| {
            s.closed = true;
            s.stopped = None;
        });
    }

    async fn send(&self, m: &Message) -> Result<(), DebugError> {
        let mut w = self.writer.lock().await;
        let Some(writer) = w.as_mut() else {
            return Err(if self.state().closed {
                DebugError::Closed
            } else {
                DebugError::NotConnected
            });
        };
        if writer.write_all(&m.to_packet()).await.is_err() {
            w.take();
            return Err(DebugError::Closed);
        }
        Ok(())
    }

    /// Sets or clears a breakpoint in the running game. The protocol has no answer to
    /// it: delivered is all that can be known. A game that has not connected yet gets
    /// it the moment it connects (it was launched with the breakpoints of its launch
    /// time only).
    pub async fn breakpoint(
        &self,
        source: &str,
        line: u32,
        set: bool,
    ) -> Result<Delivery, DebugError> {
        let m = command::breakpoint(source, i64::from(line), set);
        {
            // Under the writer's lock, so `serve` cannot connect between the check and
            // the queueing.
            let w = self.writer.lock().await;
            if w.is_none() && !self.state().connected && !self.state().closed {
                self.pending.lock().push(m);
                return Ok(Delivery::Queued);
            }
        }
        self.send(&m).await.map(|()| Delivery::Sent)
    }

    fn stopped(&self) -> Result<Stop, DebugError> {
        let s = self.state();
        if s.closed {
            return Err(DebugError::Closed);
        }
        if !s.connected {
            return Err(DebugError::NotConnected);
        }
        s.stopped.ok_or(DebugError::NotStopped)
    }

    /// Waits for `done` on the state, at most `limit`.
    async fn wait_state(
        &self,
        limit: Duration,
        done: impl Fn(&DebugState) -> bool,
    ) -> Option<DebugState> {
        let mut rx = self.state.subscribe();
        match tokio::time::timeout(limit, rx.wait_for(|s| s.closed || done(s))).await {
            Ok(Ok(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// Forces a break; answers once the game confirmed it stopped (at once when it
    /// already is).
    pub async fn force_break(&self, limit: Duration) -> Result<Stop, DebugError> {
        let _c = self.conversation.lock().await;
        match self.stopped() {
            Ok(stop) => return Ok(stop),
            Err(DebugError::NotStopped) => {}
            Err(e) => return Err(e),
        }
        let before = self.state().enters;
        self.send(&command::force_break()).await?;
        match self.wait_state(limit, |s| s.enters > before).await {
            Some(s) if s.closed => Err(DebugError::Closed),
            Some(s) => s.stopped.ok_or(DebugError::Timeout { left_stop: true }),
            None => Err(DebugError::Timeout { left_stop: false }),
        }
    }

    /// `step` (into) or `next` (over): answers where the game stopped next.
    pub async fn step(&self, how: &str, limit: Duration) -> Result<Stop, DebugError> {
        let _c = self.conversation.lock().await;
        self.step_unlocked(how, limit).await
    }

    /// Steps out of the innermost frame: answers where the game stopped in the caller
    /// and how many steps that took. Godot 4.4's stop loop has no `out` (it answers
    /// "Unknown message received from debugger: out." and stays stopped), so this is
    /// the engine's own `next`, repeated until the stack is shorter than it was.
    pub async fn step_out(&self, limit: Duration) -> Result<(Stop, u32), DebugError> {
        let _c = self.conversation.lock().await;
        let deadline = tokio::time::Instant::now() + limit;
        let depth = self.stack_unlocked(limit).await?.len();
        if depth <= 1 {
            return Err(DebugError::NoCaller);
        }
        let mut steps = 0;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let stop = self.step_unlocked("next", left).await?;
            steps += 1;
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if !stop.has_stack || self.stack_unlocked(left).await?.len() < depth {
                return Ok((stop, steps));
            }
        }
    }

    async fn step_unlocked(&self, how: &str, limit: Duration) -> Result<Stop, DebugError> {
        let stop = self.stopped()?;
        let (enters, exits) = {
            let s = self.state();
            (s.enters, s.exits)
        };
        self.send(&command::plain(how, stop.thread)).await?;
        match self.wait_state(limit, |s| s.enters > enters).await {
            Some(s) if s.closed => Err(DebugError::Closed),
            Some(s) => s.stopped.ok_or(DebugError::Timeout { left_stop: true }),
            None => Err(DebugError::Timeout {
                left_stop: self.state().exits > exits,
            }),
        }
    }

    /// `continue`: answers once the game confirmed it left the stop.
    pub async fn resume(&self, limit: Duration) -> Result<(), DebugError> {
        let _c = self.conversation.lock().await;
        let stop = self.stopped()?;
        let exits = self.state().exits;
        self.send(&command::plain("continue", stop.thread)).await?;
        match self.wait_state(limit, |s| s.exits > exits).await {
            Some(s) if s.closed => Err(DebugError::Closed),
            Some(_) => Ok(()),
            None => Err(DebugError::Timeout { left_stop: false }),
        }
    }

    /// Sends `requests` to the stopped game and feeds what it says to `take` until that
    /// returns a value. A `debug_exit` instead is [`DebugError::Resumed`].
    async fn ask<T>(
        &self,
        requests: &[Message],
        limit: Duration,
        mut take: impl FnMut(&Message) -> Option<T>,
    ) -> Result<T, DebugError> {
        let mut rx = self.messages.subscribe();
        for request in requests {
            self.send(request).await?;
        }
        let answer = tokio::time::timeout(limit, async {
            loop {
                match rx.recv().await {
                    Ok(m) if m.name == "debug_exit" => return Err(DebugError::Resumed),
                    Ok(m) => {
                        if let Some(v) = take(&m) {
                            return Ok(v);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Err(DebugError::Closed),
                }
            }
        })
        .await;
        answer.unwrap_or(Err(DebugError::Timeout { left_stop: false }))
    }

    /// The stopped game's call stack, innermost frame first.
    pub async fn stack(&self, limit: Duration) -> Result<Vec<StackFrame>, DebugError> {
        let _c = self.conversation.lock().await;
        self.stack_unlocked(limit).await
    }

    async fn stack_unlocked(&self, limit: Duration) -> Result<Vec<StackFrame>, DebugError> {
        let stop = self.stopped()?;
        self.ask(
            &[command::plain("get_stack_dump", stop.thread)],
            limit,
            parse_stack_dump,
        )
        .await
    }

    /// The variables of one frame: locals, members (`self` first) and globals.
    pub async fn frame_vars(
        &self,
        frame: u32,
        limit: Duration,
    ) -> Result<Vec<StackVar>, DebugError> {
        let _c = self.conversation.lock().await;
        let stop = self.stopped()?;
        let mut expected: Option<usize> = None;
        let mut vars = Vec::new();
        self.ask(
            &[command::get_stack_frame_vars(i64::from(frame), stop.thread)],
            limit,
            |m| {
                if let Some(n) = parse_frame_var_count(m) {
                    expected = Some(n);
                } else if expected.is_some()
                    && m.name == "stack_frame_var"
                    && let Some(v) = StackVar::parse(m)
                {
                    vars.push(v);
                }
                (expected == Some(vars.len())).then(|| std::mem::take(&mut vars))
            },
        )
        .await
    }

    /// Evaluates a Godot Expression in a frame of the stopped game.
    pub async fn evaluate(
        &self,
        expression: &str,
        frame: u32,
        limit: Duration,
    ) -> Result<(StackVar, Vec<ErrorReport>), DebugError> {
        let _c = self.conversation.lock().await;
        let stop = self.stopped()?;
        // The engine answers a failed parse or call with a nil value; the reason is an
        // `error` it queues meanwhile and flushes at the top of its next loop turn. A
        // stack dump asked right behind the evaluation is answered in that next turn,
        // after the flush: every error of the evaluation arrives before it.
        let mut errors = Vec::new();
        let mut value = None;
        self.ask(
            &[
                command::evaluate(expression, i64::from(frame), stop.thread),
                command::plain("get_stack_dump", stop.thread),
            ],
            limit,
            |m| {
                if let Some(e) = ErrorReport::parse(m) {
                    errors.push(e);
                } else if m.name == "evaluation_return" {
                    value = StackVar::parse(m);
                } else if m.name == "stack_dump" && value.is_some() {
                    return value.take().map(|v| (v, std::mem::take(&mut errors)));
                }
                None
            },
        )
        .await
    }
}

/// The per-frame function limit the profiler is turned on with: the most the editor
/// asks for (`ScriptEditorDebugger::_profiler_activate` clamps it to 16..=512).
const PROFILE_FRAME_FUNCTIONS: i64 = 512;

/// One script function's numbers summed over a profiling window.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionTotal {
    pub file: String,
    pub line: i64,
    pub function: String,
    pub calls: i64,
    pub self_s: f64,
    pub total_s: f64,
}

/// What the scripts profiler counted over a window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptProfile {
    /// The profile frames summed.
    pub frames: u64,
    /// Their first and last engine frame numbers.
    pub first_frame: Option<i64>,
    pub last_frame: Option<i64>,
    /// Each function seen, in no order.
    pub functions: Vec<FunctionTotal>,
    /// The game stopped in the debugger during the window (no frames meanwhile).
    pub stopped_in_window: bool,
}

impl Debugger {
    /// Runs the engine's scripts profiler (`profiler:servers`) for `window`, turns it
    /// off, and sums the per-frame function numbers the game sent meanwhile. The frame
    /// the profiler started in is not counted: the toggle can land mid-frame (the
    /// engine polls the debugger between script lines too), and a call already running
    /// then reports a time measured from before profiling began. Off is confirmed by
    /// the game's `servers:profile_total`, at most `limit` after the window; the
    /// profiler is turned off on every way out, an error included.
    pub async fn profile_scripts(
        &self,
        window: Duration,
        limit: Duration,
    ) -> Result<ScriptProfile, DebugError> {
        let _p = self.profiling.lock().await;
        match self.stopped() {
            Err(DebugError::NotStopped) => {}
            Ok(_) => return Err(DebugError::Breaked),
            Err(e) => return Err(e),
        }
        let mut rx = self.messages.subscribe();
        self.send(&command::profiler(
            "servers",
            true,
            Some((PROFILE_FRAME_FUNCTIONS, false)),
        ))
        .await?;
        let collected = collect_profile(&mut rx, self.state.subscribe(), window).await;
        let off = self.send(&command::profiler("servers", false, None)).await;
        let profile = collected?;
        off?;
        let mut state = self.state.subscribe();
        let confirmed = tokio::time::timeout(limit, async {
            loop {
                tokio::select! {
                    r = rx.recv() => match r {
                        Ok(m) if m.name == "servers:profile_total" => return Ok(()),
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => return Err(DebugError::Closed),
                    },
                    _ = state.wait_for(|s| s.closed) => return Err(DebugError::Closed),
                }
            }
        })
        .await;
        match confirmed {
            Ok(Ok(())) => Ok(profile),
            Ok(Err(e)) => Err(e),
            Err(_) if self.state().closed => Err(DebugError::Closed),
            Err(_) => Err(DebugError::Timeout { left_stop: false }),
        }
    }
}

/// Sums the profile frames `rx` brings for `window` (see [`Debugger::profile_scripts`]);
/// the connection ending (`state`) ends it at once.
async fn collect_profile(
    rx: &mut broadcast::Receiver<Arc<Message>>,
    mut state: watch::Receiver<DebugState>,
    window: Duration,
) -> Result<ScriptProfile, DebugError> {
    let mut names: std::collections::HashMap<i64, FunctionSignature> = Default::default();
    let mut sums: std::collections::HashMap<i64, (i64, f64, f64)> = Default::default();
    let mut profile = ScriptProfile::default();
    let mut started = false;
    let deadline = tokio::time::Instant::now() + window;
    loop {
        let m = tokio::select! {
            r = tokio::time::timeout_at(deadline, rx.recv()) => match r {
                Err(_) => break,
                Ok(Ok(m)) => m,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => return Err(DebugError::Lagged),
                Ok(Err(broadcast::error::RecvError::Closed)) => return Err(DebugError::Closed),
            },
            _ = state.wait_for(|s| s.closed) => return Err(DebugError::Closed),
        };
        if let Some(sig) = FunctionSignature::parse(&m) {
            names.insert(sig.id, sig);
        } else if let Some(frame) = ProfileFrame::parse(&m).filter(|f| !f.total) {
            if !std::mem::replace(&mut started, true) {
                continue;
            }
            profile.frames += 1;
            profile.first_frame.get_or_insert(frame.frame);
            profile.last_frame = Some(frame.frame);
            for f in frame.functions {
                let e = sums.entry(f.signature).or_default();
                e.0 += f.calls;
                e.1 += f.self_s;
                e.2 += f.total_s;
            }
        } else if m.name == "debug_enter" {
            profile.stopped_in_window = true;
        }
    }
    profile.functions = sums
        .into_iter()
        .map(|(id, (calls, self_s, total_s))| {
            // The engine names a function before the first frame that counts it.
            let sig = names.get(&id);
            FunctionTotal {
                file: sig.map(|s| s.file.clone()).unwrap_or_default(),
                line: sig.map_or(0, |s| s.line),
                function: sig.map_or_else(|| format!("<signature {id}>"), |s| s.function.clone()),
                calls,
                self_s,
                total_s,
            }
        })
        .collect();
    Ok(profile)
}

/// Accepts the game's connection (one, from loopback) and reads it until it ends.
pub(crate) async fn serve(debugger: Arc<Debugger>) {
    let Some(listener) = debugger.listener.lock().take() else {
        return;
    };
    // A session that ends before its game connected ends the wait too.
    let mut state = debugger.state.subscribe();
    let stream = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) if peer.ip().is_loopback() => break stream,
                Ok(_) => continue,
                Err(_) => return,
            },
            _ = state.wait_for(|s| s.closed) => return,
        }
    };
    // One game per session: later connections are not accepted.
    drop(listener);
    let _ = stream.set_nodelay(true);
    let (mut rd, mut wr) = stream.into_split();
    {
        let mut w = debugger.writer.lock().await;
        let pending = std::mem::take(&mut *debugger.pending.lock());
        for m in pending {
            if wr.write_all(&m.to_packet()).await.is_err() {
                break;
            }
        }
        *w = Some(wr);
        debugger.state.send_modify(|s| s.connected = true);
    }
    let mut reader = PacketReader::default();
    let mut buf = vec![0u8; 64 * 1024];
    'read: loop {
        let n = match rd.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        reader.push(&buf[..n]);
        loop {
            let body = match reader.next_body() {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!("the game's debugger stream is corrupt ({e}); closing it");
                    break 'read;
                }
            };
            let m = match Message::from_body(&body) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!("an undecodable debugger packet from the game: {e}");
                    continue;
                }
            };
            if let Some(enter) = DebugEnter::parse(&m) {
                debugger.state.send_modify(|s| {
                    s.enters += 1;
                    s.stopped = Some(Stop {
                        thread: enter.thread,
                        reason: enter.error,
                        can_continue: enter.can_continue,
                        has_stack: enter.has_stack,
                    });
                });
            } else if m.name == "debug_exit" {
                debugger.state.send_modify(|s| {
                    s.exits += 1;
                    s.stopped = None;
                });
            }
            let _ = debugger.messages.send(Arc::new(m));
        }
    }
    debugger.writer.lock().await.take();
    debugger.state.send_modify(|s| {
        s.closed = true;
        s.stopped = None;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packets a real Godot 4.4.1 game sent while its profiler ran
    /// (`tests/fixtures/godot-4.4.1/remote_debug_profiler/`, see its README): the first
    /// frame (117) is the one the toggle landed in, where `crunch` reports a second
    /// of self time measured from before profiling began; frames 118–124 follow, each
    /// with 20 `crunch` calls and one `_process`.
    fn captured() -> Vec<Message> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/godot-4.4.1/remote_debug_profiler");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "bin"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|p| {
                let mut r = PacketReader::default();
                r.push(&std::fs::read(p).unwrap());
                Message::from_body(&r.next_body().unwrap().unwrap()).unwrap()
            })
            .collect()
    }

    #[tokio::test]
    async fn a_window_sums_the_real_frames_after_the_one_the_profiler_started_in() {
        let (tx, mut rx) = broadcast::channel(64);
        for m in captured() {
            tx.send(Arc::new(m)).unwrap();
        }
        // Kept: a dropped sender reads as the connection gone.
        let (_state_tx, state) = watch::channel(DebugState::default());
        let p = collect_profile(&mut rx, state, Duration::from_millis(50))
            .await
            .unwrap();
        assert_eq!(p.frames, 7, "{p:?}");
        assert_eq!((p.first_frame, p.last_frame), (Some(118), Some(124)));
        assert!(!p.stopped_in_window);
        let by_name = |name: &str| {
            p.functions
                .iter()
                .find(|f| f.function == name)
                .unwrap_or_else(|| panic!("no {name}: {p:?}"))
                .clone()
        };
        let crunch = by_name("crunch");
        assert_eq!(
            (crunch.file.as_str(), crunch.line, crunch.calls),
            ("res://profile_game.gd", 12, 140)
        );
        // Without the first frame's time from before the profiler: well under a ms a
        // frame.
        assert!(crunch.self_s < 0.007, "{crunch:?}");
        let process = by_name("_process");
        assert_eq!((process.line, process.calls), (7, 7));
        assert!(process.total_s >= crunch.total_s);
        // `@implicit_new` is named only for the total, which is not a frame.
        assert_eq!(p.functions.len(), 2, "{p:?}");
    }

    #[tokio::test]
    async fn the_connection_ending_ends_the_window_with_an_error() {
        let (_tx, mut rx) = broadcast::channel::<Arc<Message>>(4);
        let (state_tx, state) = watch::channel(DebugState::default());
        state_tx.send_modify(|s| s.closed = true);
        let r = collect_profile(&mut rx, state, Duration::from_secs(600)).await;
        assert_eq!(r, Err(DebugError::Closed));
    }

    #[tokio::test]
    async fn lost_messages_are_an_error_not_a_profile_with_holes() {
        let (tx, mut rx) = broadcast::channel(2);
        for m in captured().into_iter().take(5) {
            tx.send(Arc::new(m)).unwrap();
        }
        // Kept: a dropped sender reads as the connection gone.
        let (_state_tx, state) = watch::channel(DebugState::default());
        let r = collect_profile(&mut rx, state, Duration::from_millis(50)).await;
        assert_eq!(r, Err(DebugError::Lagged));
    }
}
