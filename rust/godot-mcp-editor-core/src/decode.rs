//! What decoding a bridge request shares between [`crate::command`] and
//! [`crate::authoring`]: the `invalid_params` error, reading the parameters into their
//! protocol struct, and the `res://` path check. It imports neither.

use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

/// A request that does not decode never ran: the editor is unchanged.
pub(crate) fn invalid(msg: impl Into<String>) -> BridgeError {
    BridgeError::new(ErrorCode::InvalidParams, msg).with_effect(ErrorEffect::Unchanged)
}

/// `p` as the parameters `T` (`null` reads as `{}`).
pub(crate) fn params<T: DeserializeOwned>(cmd: &str, p: &Json) -> Result<T, BridgeError> {
    let r = if p.is_null() {
        T::deserialize(&Json::Object(Default::default()))
    } else {
        T::deserialize(p)
    };
    r.map_err(|e| invalid(format!("{cmd}: {e}")))
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
