//! Profiling: performance monitors of a running game or the editor ([`monitors`]).
//! Per-function profiles come from Godot's debugger (`tools/debugger/`).

pub mod monitors;
