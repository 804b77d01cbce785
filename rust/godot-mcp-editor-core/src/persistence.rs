//! The persistence verdict the persistence check and the handlers share: the one rule lives in
//! [`godot_mcp_protocol::persistence`], where the server's dry run reads it too.

pub use godot_mcp_protocol::persistence::{Effect, Verdict, verdict, verdict_of};
