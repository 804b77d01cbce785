//! The pure half of the godot-mcp editor add-on: everything the add-on decides that does
//! not need Godot, so it is unit-tested without an engine.
//!
//! # Layout
//!
//! - [`value`]: the JSON form of Godot values (Vector2/3, Color, NodePath, Transform2D/3D,
//!   resources by path) and its decoding rules; the add-on maps [`value::Value`] to
//!   `Variant` and back.
//! - [`decode`]: a bridge request decoded once into the protocol's
//!   `godot_mcp_protocol::commands::Request`, then each command's checks in one match, into
//!   a [`command::Command`] (the one enum the add-on's executors take), or the structured
//!   error the add-on answers with.
//! - [`command`]: [`command::Command`], and the checks of the scene, node, file and editor
//!   commands; [`authoring`]: the checks of the authoring commands (instance, groups,
//!   animation, theme, UI); `check`: what both share (the `invalid_params` error, the
//!   `res://` check).
//! - [`batch`]: executing `scene.batch.apply` under the undo policy the server decided
//!   and sent (one undo action, or bypassing the history above
//!   [`godot_mcp_protocol::commands::UNDO_BATCH_LIMIT`] nodes).
//! - [`persistence`]: the persistence verdict the persistence check (`node.persistence`)
//!   and the handlers share.
//! - [`tree`]: the compact form of a scene tree read (pre-order, depth-encoded, paged).
//! - [`reconnect`]: finding the discovery file and deciding when to (re)connect.
//! - [`dock`]: the editor dock's view model (connection, write gate, recent actions,
//!   client set-up) and the feed the socket thread fills for it; finding the bundled server.
//! - [`client`]: the add-on's socket thread and reply path (std only; the editor crate's
//!   plugin drives it from the main thread).
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]

pub mod authoring;
pub mod batch;
mod check;
pub mod client;
pub mod command;
pub mod decode;
pub mod dock;
pub mod expr;
pub mod pace;
pub mod persistence;
pub mod reconnect;
pub mod tree;
/// How a value is read by the type its property declares (godot-mcp-formats).
pub use godot_mcp_formats::coerce;
/// The bridge's value model is the project's one Godot value model (godot-mcp-formats).
pub use godot_mcp_formats::variant as value;
