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
    DebugEnter, ErrorReport, Message, PacketReader, StackFrame, StackVar, command,
    parse_frame_var_count, parse_stack_dump,
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
