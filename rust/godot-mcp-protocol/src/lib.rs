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
//! Every frame is one JSON object in one WebSocket text message.
#![forbid(unsafe_code)]

pub mod message;
pub mod version;

pub use message::{
    AddonMessage, BridgeError, ErrorCode, Hello, HelloReply, Outcome, Reply, Request, RequestId,
    ServerMessage,
};
pub use version::{
    BRIDGE_PROTOCOL_VERSION, DEFAULT_REQUEST_TIMEOUT_MS, GodotVersion, MIN_GODOT_VERSION,
    ParseGodotVersionError,
};
