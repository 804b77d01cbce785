//! Profiling: performance monitors of a running game or the editor ([`monitors`]) and
//! per-function script profiles through Godot's debugger ([`functions`]).

pub(crate) mod functions;
pub(crate) mod monitors;
