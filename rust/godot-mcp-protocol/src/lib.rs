//! Wire types of the editor bridge between `godot-mcp serve` and the GDExtension add-on.
//!
//! Serde only, so both sides (and tests) share one definition of the protocol.
//!
//! # Layout
//!
//! - [`version`]: protocol constants and [`GodotVersion`], the engine version both sides
//!   report and compare against [`MIN_GODOT_VERSION`].
//! - [`message`]: the JSON messages on the socket: the add-on's [`Hello`] and the server's
//!   [`HelloReply`], then [`Request`]s from the server and [`Reply`]s from the add-on,
//!   wrapped in [`AddonMessage`] / [`ServerMessage`] so a receiver can decode any frame.
//!
//! - [`discovery`]: the discovery file the server writes into the project's `.godot/`, and
//!   the check that refuses a browser's HTTP request on the bridge socket.
//! - [`clients`]: the MCP clients godot-mcp configures and each one's entry, shared by
//!   `godot-mcp setup-client` and the add-on's dock.
//! - [`commands`]: the command names, which of them may write a file, and each
//!   command's params as a struct ([`commands::BridgeCommand`]) both ends share.
//! - [`status`]: the server's status frame (write gate, recent journal rows) for the
//!   add-on's dock.
//! - [`variant_wire`]: Godot's binary Variant encoding (`marshalls.cpp`), and
//!   [`remote_debug`]: the engine's remote-debug protocol built on it (length-prefixed
//!   `[message, thread_id, data]` packets), which the server's debugger speaks to games.
//! - [`probe`]: the game probe's control socket: its hello, the server's
//!   [`ProbeRequest`]s (tagged by `cmd`) and the probe's [`ProbeReply`]s, values in the
//!   one value model's JSON form.
//! - [`persistence`]: the persistence verdict (`persisted`, `reason`, `hint`) of every
//!   editor command, the one rule the add-on's replies and the server's dry runs share.
//!
//! Every frame is one JSON object on one line (newline-delimited JSON over loopback TCP).
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

pub mod clients;
pub mod commands;
pub mod discovery;
pub mod message;
/// The persistence verdict of an editor command: is its effect on disk, why, and what to
/// do. This is the one rule, here because both sides of the bridge need it: the add-on
/// stamps it on every reply (node handlers, the read-only probe `node.persistence`, scene
/// and resource commands; `godot_mcp_editor_core::persistence` re-exports it), and the
/// server's dry run reports it for scene-level commands from the same function with the
/// same inputs, so a preview's `persisted`, `reason` and `hint` equal the real run's,
/// field by field. The items live with the scene commands (`commands/scene.rs`).
pub mod persistence {
    pub use crate::commands::{Effect, Verdict, verdict, verdict_of};
}
pub mod probe;
pub mod remote_debug;
pub mod status;
pub mod variant_wire;
pub mod version;

pub use discovery::{DISCOVERY_RELATIVE_PATH, Discovery, looks_like_http};
pub use message::{
    AddonMessage, BridgeError, ErrorCode, ErrorEffect, Hello, HelloReply, Outcome, Reply, Request,
    RequestId, ServerMessage,
};
pub use probe::{ProbeFrame, ProbeHello, ProbeHelloFrame, ProbeRefusal, ProbeReply, ProbeRequest};
pub use status::{GateState, QuarantinedRow, RecentAction, STATUS_RECENT_LIMIT, ServerStatus};
pub use version::{
    BRIDGE_PROTOCOL_VERSION, DEFAULT_REQUEST_TIMEOUT_MS, GodotVersion, MIN_GODOT_VERSION,
    ParseGodotVersionError,
};
