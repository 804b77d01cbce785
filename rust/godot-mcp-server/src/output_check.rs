//! Test builds (`--features output-check`, on under `--all-features`): every
//! successful result is validated against the tool's published `outputSchema`,
//! made strict, so an end-to-end test fails when a tool returns a field its schema
//! does not declare, omits a required one, or gives one the wrong type.
//!
//! Strict means `additionalProperties: false` on every object schema that lists
//! its `properties` (an open map, which lists none, stays open). A combinator whose
//! members add properties of their own (a flattened enum) is left as schemars wrote it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::tools::ToolDef;

type Cache = Mutex<HashMap<&'static str, Arc<jsonschema::Validator>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Check `result` against `def`'s output schema (a tool without one passes).
pub(crate) fn check(def: &ToolDef, result: &Value) -> Result<(), ToolError> {
    let Some(schema) = def.output_schema() else {
        return Ok(());
    };
    let validator = {
        let mut cache = cache().lock();
        match cache.get(def.meta.name) {
            Some(v) => v.clone(),
            None => {
                let strict = strict(Value::Object((**schema).clone()));
                let v = jsonschema::draft202012::new(&strict).map_err(|e| {
                    ToolError::internal(format!(
                        "{}: its outputSchema does not compile: {e}",
                        def.meta.name
                    ))
                })?;
                let v = Arc::new(v);
                cache.insert(def.meta.name, v.clone());
                v
            }
        }
    };
    let errors: Vec<String> = validator
        .iter_errors(result)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ToolError::internal(format!(
            "{}: the result does not match its outputSchema: {}; result: {}",
            def.meta.name,
            errors.join("; "),
            result
        )))
    }
}

/// The schema with `additionalProperties: false` wherever it lists properties.
pub(crate) fn strict(mut schema: Value) -> Value {
    if let Value::Object(obj) = &mut schema {
        close(obj);
    }
    schema
}

const COMBINATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

fn close(obj: &mut Map<String, Value>) {
    let members_add_properties = COMBINATORS.iter().any(|k| {
        obj.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|members| members.iter().any(|m| m.get("properties").is_some()))
    });
    if obj.contains_key("properties")
        && !obj.contains_key("additionalProperties")
        && !members_add_properties
    {
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
    for (key, v) in obj.iter_mut() {
        match v {
            Value::Object(child) if key == "properties" || key == "$defs" => {
                for s in child.values_mut() {
                    if let Value::Object(s) = s {
                        close(s);
                    }
                }
            }
            Value::Object(child) => close(child),
            Value::Array(items)
                if !(members_add_properties && COMBINATORS.contains(&key.as_str())) =>
            {
                for item in items {
                    if let Value::Object(child) = item {
                        close(child);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_refuses_an_undeclared_field_and_keeps_open_maps_open() {
        let schema = strict(json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "values": {"type": "object", "additionalProperties": true}
            },
            "required": ["a"]
        }));
        let v = jsonschema::draft202012::new(&schema).unwrap();
        assert!(v.is_valid(&json!({"a": 1, "values": {"x": 1}})));
        assert!(!v.is_valid(&json!({"a": 1, "b": 2})));
        assert!(!v.is_valid(&json!({"a": "1"})));
        assert!(!v.is_valid(&json!({})));
    }
}
