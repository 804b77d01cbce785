//! What the checks of [`crate::command`] and [`crate::authoring`] share: the
//! `invalid_params` error and the `res://` path check. It imports neither.

use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};

/// A request that does not decode never ran: the editor is unchanged.
pub(crate) fn invalid(msg: impl Into<String>) -> BridgeError {
    BridgeError::new(ErrorCode::InvalidParams, msg).with_effect(ErrorEffect::Unchanged)
}

/// Refuses a path that is not a `res://` path inside the project.
pub(crate) fn res_path(p: &str) -> Result<(), BridgeError> {
    if p.starts_with("res://") && !p.split('/').any(|s| s == "..") {
        Ok(())
    } else {
        Err(invalid(format!(
            "{p:?} is not a res:// path inside the project"
        )))
    }
}
