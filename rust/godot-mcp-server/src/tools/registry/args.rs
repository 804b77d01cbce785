//! Argument decoding: class flags, the idempotency key and the typed arguments, each
//! refused with a structured error naming the parameter.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{CallFlags, CheckFn, Handler, ToolDef};
use crate::error::{ErrorCode, ToolError};
use crate::respath::take_refusal;
use crate::rules::{EffectKind, SafetyClass};

pub(super) fn check_fn<A: DeserializeOwned + 'static>() -> CheckFn {
    Arc::new(|args: &Value| decode_args::<A>(args.clone()).map(|_| ()))
}

/// The argument that makes a journaled (file-effect) call idempotent.
pub const IDEMPOTENCY_KEY: &str = "idempotency_key";
/// Longest idempotency key accepted, in bytes.
pub const MAX_IDEMPOTENCY_KEY: usize = 200;

/// Take `idempotency_key` out of the arguments of a tool that accepts it.
pub(crate) fn take_idempotency_key(
    def: &ToolDef,
    args: &mut Map<String, Value>,
) -> Result<Option<String>, ToolError> {
    let accepts =
        def.meta.effect == Some(EffectKind::File) && matches!(def.handler, Handler::Planned(_));
    match args.remove(IDEMPOTENCY_KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(_) if !accepts => Err(ToolError::invalid_params(
            IDEMPOTENCY_KEY,
            format!(
                "unknown field `{IDEMPOTENCY_KEY}`: {} does not take it",
                def.meta.name
            ),
        )),
        Some(Value::String(k)) if !k.is_empty() && k.len() <= MAX_IDEMPOTENCY_KEY => Ok(Some(k)),
        Some(_) => Err(ToolError::invalid_params(
            IDEMPOTENCY_KEY,
            format!("`{IDEMPOTENCY_KEY}` must be a string of 1 to {MAX_IDEMPOTENCY_KEY} bytes"),
        )),
    }
}

/// Take the class flags out of the arguments, refusing them where the class has none.
pub(crate) fn split_flags(
    class: SafetyClass,
    args: &mut Map<String, Value>,
) -> Result<CallFlags, ToolError> {
    let mut flags = CallFlags::default();
    for (name, allowed, slot) in [
        ("dry_run", class.takes_dry_run(), &mut flags.dry_run),
        ("confirm", class.requires_confirm(), &mut flags.confirm),
    ] {
        // A runtime tool that takes `confirm` (export_project: a path outside the
        // project) declares it in its own schema; its decoder refuses it elsewhere.
        if name == "confirm" && class == SafetyClass::Runtime {
            continue;
        }
        if let Some(v) = args.remove(name) {
            if !allowed {
                return Err(ToolError::invalid_params(
                    name,
                    format!(
                        "unknown field `{name}`: {} tools do not take it",
                        class.as_str()
                    ),
                ));
            }
            *slot = match v {
                Value::Bool(b) => b,
                other => {
                    return Err(ToolError::invalid_params(
                        name,
                        format!(
                            "`{name}` must be a boolean (true or false), got {}",
                            kind_of(&other)
                        ),
                    ));
                }
            };
        }
    }
    Ok(flags)
}

pub(super) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Decode arguments into `A`, naming the offending field on failure.
pub(crate) fn decode_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolError> {
    take_refusal();
    let decoded = serde_path_to_error::deserialize::<_, A>(args);
    let refused = take_refusal();
    decoded.map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        // Decoded from a `Value`, an error carries no position (line 0), so its text
        // is the message alone: nothing to cut off.
        debug_assert_eq!(inner.line(), 0);
        let inner = inner.to_string();
        // A refused path is the error only when it is the very error serde gave back
        // (an untagged enum may refuse one variant and fail on another).
        if let Some(msg) = refused.filter(|m| *m == inner) {
            return ToolError::new(
                ErrorCode::PathRefused,
                format!("`{path}` is refused: {msg}"),
            )
            .param(path)
            .hint("File paths are res:// paths inside the project, like res://scenes/main.tscn.");
        }
        let param = if path == "." {
            // serde reports missing/unknown fields at the root; its `missing field `x``
            // and `unknown field `x`` messages name the field.
            field_in_message(&inner).unwrap_or_else(|| ".".into())
        } else {
            path
        };
        ToolError::invalid_params(
            param.clone(),
            format!("invalid argument `{param}`: {inner}"),
        )
        .hint("Check the tool's input schema (tools/list) for the expected fields and types.")
    })
}

pub(super) fn field_in_message(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let end = msg[start..].find('`')? + start;
    Some(msg[start..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::respath::ResPath;
    use serde_json::json;

    #[derive(Debug, serde::Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum PathOrCount {
        Path(ResPath),
        Count(u32),
    }

    /// A refusal is the tool error only when it is the error serde gave back: an
    /// untagged enum that refuses the path variant and then fails on the other is a
    /// type error, not PATH_REFUSED; a plain refusal is PATH_REFUSED with no tag left
    /// in its text.
    #[test]
    fn a_refusal_is_the_error_only_when_serde_gave_it_back() {
        let e = decode_args::<PathOrCount>(json!("res://../up")).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams, "{e:?}");
        let e = decode_args::<ResPath>(json!("res://../up")).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused, "{e:?}");
        assert!(!e.message.contains('\u{1}'), "{e:?}");
    }
}
