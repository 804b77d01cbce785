//! Argument decoding: class flags, the idempotency key and the typed arguments, each
//! refused with a structured error naming the parameter.

use std::sync::Arc;

use serde::de::value::StringDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::{CallFlags, CheckFn, Handler, ToolDef};
use crate::error::{ErrorCode, ToolError};
use crate::respath::take_refusal;
use crate::rules::{EffectKind, SafetyClass};

pub(super) fn check_fn<A: DeserializeOwned + 'static>() -> CheckFn {
    Arc::new(|args: &Value| decode_args::<A>(args.clone()).map(|_| ()))
}

/// The argument that makes a journaled (file-effect) call idempotent.
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency_key";
/// Longest idempotency key accepted, in bytes.
pub(crate) const MAX_IDEMPOTENCY_KEY: usize = 200;

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
    let decoded = match args {
        Value::Object(map) => serde_path_to_error::deserialize::<_, A>(ArgsObject(map)),
        other => serde_path_to_error::deserialize::<_, A>(other).map_err(|e| {
            let path = e.path().clone();
            serde_path_to_error::Error::new(path, DecodeError::Serde(e.into_inner()))
        }),
    };
    let refused = take_refusal();
    decoded.map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        // Decoded from a `Value`, an error carries no position (line 0), so its text
        // is the message alone: nothing to cut off.
        debug_assert_eq!(inner.serde().line(), 0);
        let (field, inner) = match inner {
            DecodeError::Serde(e) => (None, e.to_string()),
            DecodeError::Field { field, error } => (Some(field), error.to_string()),
        };
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
        // serde reports a missing or undeclared field at the root ("."); the decoder
        // of the arguments object kept its name.
        let param = match field {
            Some(field) if path == "." => field,
            _ => path,
        };
        ToolError::invalid_params(
            param.clone(),
            format!("invalid argument `{param}`: {inner}"),
        )
        .hint("Check the tool's input schema (tools/list) for the expected fields and types.")
    })
}

/// Why the arguments did not decode: serde_json's error, or a field of the object that
/// is missing or not declared, by name. The text is serde_json's own either way.
#[derive(Debug)]
enum DecodeError {
    Serde(serde_json::Error),
    Field {
        field: String,
        error: serde_json::Error,
    },
}

impl DecodeError {
    fn serde(&self) -> &serde_json::Error {
        match self {
            Self::Serde(error) | Self::Field { error, .. } => error,
        }
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.serde().fmt(f)
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Self::Serde(<serde_json::Error as de::Error>::custom(msg))
    }

    fn missing_field(field: &'static str) -> Self {
        Self::Field {
            field: field.to_string(),
            error: <serde_json::Error as de::Error>::missing_field(field),
        }
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Self::Field {
            field: field.to_string(),
            error: <serde_json::Error as de::Error>::unknown_field(field, expected),
        }
    }
}

/// The arguments object as a deserializer that behaves as serde_json's `Value` does
/// for an object, except that its errors are [`DecodeError`]s: the struct decoding it
/// reports a missing or unknown field through `de::Error` with the field's name, so
/// the name is kept as a value instead of being read back from the message. Each
/// field's value is decoded by serde_json itself.
struct ArgsObject(Map<String, Value>);

impl<'de> Deserializer<'de> for ArgsObject {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        let len = self.0.len();
        let mut entries = Entries {
            iter: self.0.into_iter(),
            value: None,
        };
        let out = visitor.visit_map(&mut entries)?;
        if entries.iter.len() == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(len, &"fewer elements in map"))
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        self.0
            .deserialize_enum(name, variants, visitor)
            .map_err(DecodeError::Serde)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// The entries of [`ArgsObject`]: keys decoded with [`DecodeError`] (an unknown one is
/// named there), values by serde_json.
struct Entries {
    iter: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = DecodeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DecodeError> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(StringDeserializer::<DecodeError>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DecodeError> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("value is missing"))?;
        seed.deserialize(value).map_err(DecodeError::Serde)
    }

    fn size_hint(&self) -> Option<usize> {
        match self.iter.size_hint() {
            (lower, Some(upper)) if lower == upper => Some(upper),
            _ => None,
        }
    }
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

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Root {
        path: String,
        #[serde(default)]
        limit: Option<u32>,
    }

    /// Arguments whose own check fails at the root with a message that quotes a word.
    #[derive(Debug)]
    struct Quoting;

    impl<'de> serde::Deserialize<'de> for Quoting {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let _ = Map::<String, Value>::deserialize(d)?;
            Err(de::Error::custom("`from` must come before `to`"))
        }
    }

    /// A missing or unknown field of the arguments object is named by the decoder's
    /// own report, with serde's text unchanged; a root error that merely quotes a word
    /// names no field.
    #[test]
    fn root_fields_are_named_by_type_not_by_their_message() {
        let e = decode_args::<Root>(json!({})).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("path"), "{e:?}");
        assert_eq!(e.message, "invalid argument `path`: missing field `path`");
        let e = decode_args::<Root>(json!({"path": "x", "extra": 1})).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("extra"), "{e:?}");
        assert_eq!(
            e.message,
            "invalid argument `extra`: unknown field `extra`, expected `path` or `limit`"
        );
        let e = decode_args::<Root>(json!({"path": "x", "limit": "ten"})).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("limit"), "{e:?}");
        let e = decode_args::<Quoting>(json!({"to": 1})).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("."), "{e:?}");
        assert_eq!(
            e.message,
            "invalid argument `.`: `from` must come before `to`"
        );
    }
}
