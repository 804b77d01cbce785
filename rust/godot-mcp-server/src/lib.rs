//! godot-mcp: an MCP server that reads and edits a Godot 4 project safely and provably.
//!
//! # Layout
//!
//! - [`cli`]: the `godot-mcp` command line (clap): `serve`, and its flags and env vars.
//! - [`project`]: finding the project and resolving `res://` paths inside it.
//! - [`respath`]: `ResPath`, the contained path type every file parameter uses.
//! - [`safety`]: the whole permission model — safety classes, toolsets, effect kinds.
//! - [`tools`]: the tool registry and one module per tool family.
//! - [`server`]: the rmcp `ServerHandler` over the registry.
//! - [`error`]: `ToolError`, the one structured shape of every user-facing failure.
//! - [`state`]: what request handlers share.
//! - [`transport`]: stdio and streamable HTTP, the Host/Origin/token guard, and the
//!   [`transport::Principal`] of every call.
#![forbid(unsafe_code)]

pub mod cli;
pub mod error;
pub mod project;
pub mod respath;
pub mod safety;
pub mod server;
pub mod state;
pub mod tools;
pub mod transport;
