//! The engine's remote-debug protocol (Godot 4.4: `core/debugger/remote_debugger.cpp`,
//! `remote_debugger_peer.cpp`): what a game started with
//! `--remote-debug tcp://host:port` says to the debugger server it connects to, and
//! what that server may say back.
//!
//! The game is the TCP *client*; there is no handshake. Each packet is a 32-bit
//! little-endian length and that many bytes of one [`Variant`] (see
//! [`crate::variant_wire`]): an Array `[message, thread_id, data]` where `message` is a
//! String, `thread_id` an int (the main thread is 1) and `data` an Array.
//!
//! While the game is stopped in `RemoteDebugger::debug` (a breakpoint, a step, a forced
//! break, a script error) it answers `get_stack_dump`, `get_stack_frame_vars` and
//! `evaluate`, and leaves the loop on `step`, `next` or `continue` (it then sends
//! `debug_exit`). 4.4 has no `out` (step out): it answers "Unknown message received
//! from debugger: out." and stays stopped. While it runs, only captured messages are served (`breakpoint`,
//! `break`, …), once per frame.

use crate::variant_wire::{self, DecodeError, Variant};

/// The most bytes one packet may hold: the engine's own buffer (8 MiB).
pub const MAX_PACKET: usize = 8 << 20;

/// The main thread's id in every message (`Thread::MAIN_ID`).
pub const MAIN_THREAD: i64 = 1;

/// One message of the protocol, either way.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub name: String,
    pub thread: i64,
    pub data: Vec<Variant>,
}

/// Why a packet is not a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketError {
    /// The body is not a Variant.
    Decode(DecodeError),
    /// The Variant is not `[String, int, Array]`.
    NotAMessage,
    /// The length prefix is beyond [`MAX_PACKET`].
    TooLarge(usize),
    /// Bytes left over after the Variant.
    Trailing(usize),
}

impl std::fmt::Display for PacketError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Decode(e) => write!(f, "not a Variant: {e}"),
            Self::NotAMessage => f.write_str("not a [message, thread_id, data] array"),
            Self::TooLarge(n) => write!(f, "a {n}-byte packet is over the 8 MiB limit"),
            Self::Trailing(n) => write!(f, "{n} bytes after the Variant"),
        }
    }
}

impl std::error::Error for PacketError {}

impl Message {
    /// A message from the server to the main thread.
    pub fn to_main(name: &str, data: Vec<Variant>) -> Self {
        Self {
            name: name.to_string(),
            thread: MAIN_THREAD,
            data,
        }
    }

    /// The packet body: the Variant Array `[name, thread, data]`.
    pub fn to_variant(&self) -> Variant {
        Variant::array(vec![
            Variant::String(self.name.clone()),
            Variant::Int(self.thread),
            Variant::array(self.data.clone()),
        ])
    }

    /// The whole packet: the length prefix and the body.
    pub fn to_packet(&self) -> Vec<u8> {
        let body = variant_wire::encode(&self.to_variant());
        let mut out = Vec::with_capacity(body.len() + 4);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// A packet body (without its length prefix).
    pub fn from_body(body: &[u8]) -> Result<Self, PacketError> {
        let (v, used) = variant_wire::decode(body).map_err(PacketError::Decode)?;
        if used != body.len() {
            return Err(PacketError::Trailing(body.len() - used));
        }
        let Some([name, thread, data]) =
            v.as_array().and_then(|a| <&[Variant; 3]>::try_from(a).ok())
        else {
            return Err(PacketError::NotAMessage);
        };
        match (name.as_str(), thread.as_int(), data.as_array()) {
            (Some(name), Some(thread), Some(data)) => Ok(Self {
                name: name.to_string(),
                thread,
                data: data.to_vec(),
            }),
            _ => Err(PacketError::NotAMessage),
        }
    }
}

/// Splits a byte stream into packet bodies.
#[derive(Debug, Default)]
pub struct PacketReader {
    buf: Vec<u8>,
}

impl PacketReader {
    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole packet body, if one has arrived. An oversized length is an error
    /// (the stream cannot be resynchronised after it).
    pub fn next_body(&mut self) -> Result<Option<Vec<u8>>, PacketError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > MAX_PACKET {
            return Err(PacketError::TooLarge(len));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let body = self.buf[4..4 + len].to_vec();
        self.buf.drain(..4 + len);
        Ok(Some(body))
    }
}

/// `debug_enter`: the game stopped and serves the debugger until told to go on.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugEnter {
    /// False when the error is fatal (the game cannot continue).
    pub can_continue: bool,
    /// The script error that stopped it, or the reason (`"Breakpoint"`, empty for a
    /// forced break outside scripts).
    pub error: String,
    /// A script stack exists (false for a break outside any script).
    pub has_stack: bool,
    /// The thread that stopped: the packet's thread id (the data's fourth element is
    /// the thread's *name* in 4.4, `"Main Thread"`).
    pub thread: i64,
}

impl DebugEnter {
    pub fn parse(m: &Message) -> Option<Self> {
        if m.name != "debug_enter" {
            return None;
        }
        Some(Self {
            can_continue: m.data.first()?.as_bool()?,
            error: m.data.get(1)?.as_str()?.to_string(),
            has_stack: m.data.get(2)?.as_bool()?,
            thread: m.thread,
        })
    }
}

/// One frame of a `stack_dump` (frame 0 is where the game stopped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackFrame {
    pub file: String,
    pub line: i64,
    pub function: String,
}

/// `stack_dump`: in 4.4 `[3 × frames, file, line, function, file, line, …]`
/// (`DebuggerMarshalls::ScriptStackDump::serialize`: the element count, then the
/// frames flattened).
pub fn parse_stack_dump(m: &Message) -> Option<Vec<StackFrame>> {
    if m.name != "stack_dump" {
        return None;
    }
    let (count, frames) = m.data.split_first()?;
    if usize::try_from(count.as_int()?).ok()? != frames.len() || frames.len() % 3 != 0 {
        return None;
    }
    frames
        .chunks(3)
        .map(|c| {
            Some(StackFrame {
                file: c[0].as_str()?.to_string(),
                line: c[1].as_int()?,
                function: c[2].as_str()?.to_string(),
            })
        })
        .collect()
}

/// Where a variable comes from (`ScriptStackVariable::type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarScope {
    Local,
    Member,
    Global,
    /// The result of `evaluate`.
    Evaluation,
}

impl VarScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Member => "member",
            Self::Global => "global",
            Self::Evaluation => "evaluation",
        }
    }
}

/// `stack_frame_var` and `evaluation_return`: `[name, scope, value_type, value]`. A
/// value too large for the engine to send arrives as nil with its real type.
#[derive(Debug, Clone, PartialEq)]
pub struct StackVar {
    pub name: String,
    pub scope: VarScope,
    /// The engine's type name of the real value.
    pub type_name: &'static str,
    pub value: Variant,
}

impl StackVar {
    pub fn parse(m: &Message) -> Option<Self> {
        if m.name != "stack_frame_var" && m.name != "evaluation_return" {
            return None;
        }
        let scope = match m.data.get(1)?.as_int()? {
            0 => VarScope::Local,
            1 => VarScope::Member,
            2 => VarScope::Global,
            _ => VarScope::Evaluation,
        };
        let ty = m.data.get(2)?.as_int()?;
        Some(Self {
            name: m.data.first()?.as_str()?.to_string(),
            scope,
            type_name: variant_wire::type_name(u32::try_from(ty).ok()?),
            value: m.data.get(3)?.clone(),
        })
    }
}

/// `stack_frame_vars`: how many `stack_frame_var` messages follow.
pub fn parse_frame_var_count(m: &Message) -> Option<usize> {
    if m.name != "stack_frame_vars" {
        return None;
    }
    usize::try_from(m.data.first()?.as_int()?).ok()
}

/// `error`: an engine error or warning (`RemoteDebugger::ErrorMessage::serialize`:
/// `[hr, min, sec, msec, file, function, line, error, description, warning,
/// callstack…]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReport {
    pub file: String,
    pub function: String,
    pub line: i64,
    pub error: String,
    pub description: String,
    pub warning: bool,
}

impl ErrorReport {
    pub fn parse(m: &Message) -> Option<Self> {
        if m.name != "error" {
            return None;
        }
        Some(Self {
            file: m.data.get(4)?.as_str()?.to_string(),
            function: m.data.get(5)?.as_str()?.to_string(),
            line: m.data.get(6)?.as_int()?,
            error: m.data.get(7)?.as_str()?.to_string(),
            description: m.data.get(8)?.as_str()?.to_string(),
            warning: m.data.get(9)?.as_bool()?,
        })
    }
}

/// `servers:function_signature`: the scripts profiler names a function once per
/// profiling run, before the first frame that counts it
/// (`ServersDebugger::ScriptFunctionSignature::serialize`: `[signature, id]`). Ids
/// start at 0 again each time the profiler is turned on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSignature {
    pub id: i64,
    /// The script (`res://…`; a built-in script's path has its own `::`).
    pub file: String,
    /// The line GDScript names: the first line of the function's body (0 for implicit
    /// ones such as `@implicit_new`).
    pub line: i64,
    pub function: String,
}

impl FunctionSignature {
    pub fn parse(m: &Message) -> Option<Self> {
        if m.name != "servers:function_signature" || m.data.len() != 2 {
            return None;
        }
        let (file, line, function) = split_signature(m.data[0].as_str()?)?;
        Some(Self {
            id: m.data[1].as_int()?,
            file,
            line,
            function,
        })
    }
}

/// GDScript's profile signature `file::line::name` (`GDScriptCompiler`). The editor
/// takes the last two parts as line and name and the rest as the file, which keeps a
/// built-in script's `scene.tscn::GDScript_x` whole.
fn split_signature(sig: &str) -> Option<(String, i64, String)> {
    let mut parts = sig.rsplitn(3, "::");
    let function = parts.next()?.to_string();
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?.to_string();
    Some((file, line, function))
}

/// One script function's numbers in one profile frame
/// (`ServersDebugger::ScriptFunctionInfo`). Times are in seconds, as the engine sends
/// them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FunctionTime {
    /// The id of a [`FunctionSignature`] of the same profiling run.
    pub signature: i64,
    pub calls: i64,
    /// Time in the function itself, callees excluded.
    pub self_s: f64,
    /// Time in the function and what it called.
    pub total_s: f64,
    /// Time in native calls (counted only when native profiling was asked for).
    pub internal_s: f64,
}

/// `servers:profile_frame` (one frame) and `servers:profile_total` (everything since
/// the profiler was turned on, sent when it is turned off): in 4.4
/// `ServersProfilerFrame::serialize` is `[frame_number, frame_time, process_time,
/// physics_time, physics_frame_time, script_time, server count, (name, 2 × n, (name,
/// time) × n) × count, 5 × m, (signature id, calls, self, total, internal) × m]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileFrame {
    /// `Engine::get_process_frames()` when it was sent.
    pub frame: i64,
    /// True for `servers:profile_total`.
    pub total: bool,
    /// The script functions the engine counted, most total time first, at most the
    /// per-frame limit the profiler was turned on with.
    pub functions: Vec<FunctionTime>,
}

impl ProfileFrame {
    pub fn parse(m: &Message) -> Option<Self> {
        let total = match m.name.as_str() {
            "servers:profile_frame" => false,
            "servers:profile_total" => true,
            _ => return None,
        };
        let d = &m.data;
        let frame = d.first()?.as_int()?;
        let float = |i: usize| match d.get(i)? {
            Variant::Float(x) => Some(*x),
            _ => None,
        };
        let servers = usize::try_from(d.get(6)?.as_int()?).ok()?;
        let mut idx = 7;
        for _ in 0..servers {
            d.get(idx)?.as_str()?;
            let n = usize::try_from(d.get(idx + 1)?.as_int()?).ok()?;
            idx = idx.checked_add(2 + n)?;
        }
        let n = usize::try_from(d.get(idx)?.as_int()?).ok()?;
        idx += 1;
        if n % 5 != 0 || d.len() != idx.checked_add(n)? {
            return None;
        }
        let functions = (idx..d.len())
            .step_by(5)
            .map(|i| {
                Some(FunctionTime {
                    signature: d[i].as_int()?,
                    calls: d[i + 1].as_int()?,
                    self_s: float(i + 2)?,
                    total_s: float(i + 3)?,
                    internal_s: float(i + 4)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            frame,
            total,
            functions,
        })
    }
}

/// The server's commands (`RemoteDebugger::debug` and the `core` capture).
pub mod command {
    use super::{Message, Variant};

    /// Sets or clears a breakpoint: `[source, line, set]`.
    pub fn breakpoint(source: &str, line: i64, set: bool) -> Message {
        Message::to_main(
            "breakpoint",
            vec![
                Variant::String(source.to_string()),
                Variant::Int(line),
                Variant::Bool(set),
            ],
        )
    }

    /// Forces a break at the next script line (or outside scripts).
    pub fn force_break() -> Message {
        Message::to_main("break", vec![])
    }

    /// A stop-loop command to `thread`: `step`, `next`, `continue`, `get_stack_dump`.
    pub fn plain(name: &str, thread: i64) -> Message {
        Message {
            name: name.to_string(),
            thread,
            data: vec![],
        }
    }

    pub fn get_stack_frame_vars(frame: i64, thread: i64) -> Message {
        Message {
            name: "get_stack_frame_vars".into(),
            thread,
            data: vec![Variant::Int(frame)],
        }
    }

    /// Turns one of the game's `EngineDebugger` profilers on or off
    /// (`RemoteDebugger::_profiler_capture`: `profiler:<name> [enable, options?]`). For
    /// `servers` (the scripts and servers profiler) the options are
    /// `[max functions per frame, include native calls]`, as the editor sends them.
    pub fn profiler(name: &str, enable: bool, options: Option<(i64, bool)>) -> Message {
        let mut data = vec![Variant::Bool(enable)];
        if let Some((max_functions, native)) = options {
            data.push(Variant::array(vec![
                Variant::Int(max_functions),
                Variant::Bool(native),
            ]));
        }
        Message::to_main(&format!("profiler:{name}"), data)
    }

    pub fn evaluate(expression: &str, frame: i64, thread: i64) -> Message {
        Message {
            name: "evaluate".into(),
            thread,
            data: vec![Variant::String(expression.to_string()), Variant::Int(frame)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_split_anywhere_reassembles() {
        let m = command::breakpoint("res://a.gd", 12, true);
        let packet = m.to_packet();
        for cut in 0..packet.len() {
            let mut r = PacketReader::default();
            r.push(&packet[..cut]);
            assert_eq!(r.next_body().unwrap(), None);
            r.push(&packet[cut..]);
            let body = r.next_body().unwrap().unwrap();
            assert_eq!(Message::from_body(&body).unwrap(), m);
        }
    }

    #[test]
    fn an_oversized_length_is_refused() {
        let mut r = PacketReader::default();
        r.push(&(u32::MAX).to_le_bytes());
        assert!(matches!(r.next_body(), Err(PacketError::TooLarge(_))));
    }
}
