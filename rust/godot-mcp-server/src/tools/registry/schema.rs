//! Every published schema is built here: schemars' output, inlined, with the class
//! flags added and post-processed (no nullables, no numeric formats, objects only,
//! an error alternative in every output schema).

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::ToolMeta;
use super::args::{IDEMPOTENCY_KEY, MAX_IDEMPOTENCY_KEY};
use crate::planes::project::KEEP_NULL;
use crate::rules::{EffectKind, SafetyClass};

/// A tool's schemas as schemars generates them: the input schema (class flags
/// included) and the `outputSchema` (`None` for an untyped result).
pub(crate) type SchemaFn = fn(&ToolMeta) -> (JsonObject, Option<JsonObject>);

pub(super) fn direct_schemas<A: JsonSchema, R: JsonSchema>(
    meta: &ToolMeta,
) -> (JsonObject, Option<JsonObject>) {
    (
        input_schema_for::<A>(meta.class),
        output_schema_for::<R>().map(or_error),
    )
}

pub(super) fn planned_schemas<A: JsonSchema, E: JsonSchema, X: JsonSchema>(
    meta: &ToolMeta,
) -> (JsonObject, Option<JsonObject>) {
    let mut schema = input_schema_for::<A>(meta.class);
    let journaled = meta.effect == Some(EffectKind::File);
    if journaled && let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert(
            IDEMPOTENCY_KEY.into(),
            json!({
                "type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY,
                "description": "Retry key: the same key and arguments replay the first result."
            }),
        );
    }
    (
        schema,
        planned_output_schema::<E, X>(meta.class, journaled).map(or_error),
    )
}

/// The JSON schema of `A`, inlined, with the class flags added.
///
/// Why inlined, not `$defs`: each tool's `inputSchema` in tools/list is its own JSON
/// Schema document, and `$ref` cannot point into another tool's, so a definition shared
/// by many tools is sent once per tool either way. Sharing happens here, at the source:
/// one concept is one Rust type (`ResPath`, `InputEventSpec`) or one function (the class
/// flags below) and so one schema fragment, kept short. `$defs` would only save bytes
/// where a type repeats inside one schema, and no tool's does (every subschema over 60
/// bytes is unique within its tool); inline schemas also keep the path walk
/// (`respath::check_arg_paths`) free of reference resolution.
pub(super) fn input_schema_for<A: JsonSchema>(class: SafetyClass) -> JsonObject {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<A>();
    let mut obj = match schema.to_value() {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    obj.remove("title");
    strip_nullables(&mut obj);
    strip_formats(&mut obj);
    objects_only(&mut obj);
    obj.entry("type").or_insert(json!("object"));
    let props = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(props) = props {
        // The class flags are the same on every tool of a class; their descriptions
        // are short because tools/list repeats them once per tool (the server's
        // instructions say the rest).
        if class.takes_dry_run() {
            props.insert(
                "dry_run".into(),
                json!({"type": "boolean", "default": false,
                       "description": "Check only; change nothing."}),
            );
        }
        if class.requires_confirm() {
            props.insert(
                "confirm".into(),
                json!({"type": "boolean", "default": false,
                       "description": "Must be true to apply (it writes, overwrites or removes what undo cannot restore)."}),
            );
        }
    }
    obj
}

/// Optional arguments are simply omitted; the schema says so by leaving them out of
/// `required`. schemars also marks them nullable with `default: null`, which only adds
/// noise for a model reading the schema, so that is removed (an explicit null is still
/// accepted by the decoder).
pub(super) fn strip_nullables(obj: &mut Map<String, Value>) {
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    // Where `null` means something (`expected_sha256: null`, must not exist), it is
    // published (`plane::ShaOrNull`).
    let keep_null = obj.remove(KEEP_NULL).is_some();
    if let Some(Value::Array(types)) = obj.get_mut("type")
        && !keep_null
    {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            obj.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for (_, v) in obj.iter_mut() {
        match v {
            Value::Object(child) => strip_nullables(child),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(child) = item {
                        strip_nullables(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// schemars adds OpenAPI's numeric `format` (`uint32`, `double`) to every number;
/// JSON Schema validators ignore it and the range is already in `minimum`/`maximum`,
/// so it is only bytes in every tools/list. A string `format` is kept (it has meaning).
pub(super) fn strip_formats(obj: &mut Map<String, Value>) {
    let numeric = match obj.get("type") {
        Some(Value::String(t)) => matches!(t.as_str(), "integer" | "number"),
        // A nullable number: `["integer", "null"]`.
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer" || t == "number"),
        _ => false,
    };
    if numeric {
        obj.remove("format");
    }
    // A `properties` map is walked like a schema: its `type` entry, if an argument
    // is called that, is an object, never the string "integer".
    for v in obj.values_mut() {
        match v {
            Value::Object(child) => strip_formats(child),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(child) = item {
                        strip_formats(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The JSON schema of a result type `R`, or `None` when `R` is untyped JSON (a
/// `serde_json::Value` or an open map: no declared fields).
///
/// Unlike an input schema, descriptions are left out (a result's field names say what
/// they hold, and tools/list repeats every schema on every turn), and `null` stays in
/// the types: an absent optional field is skipped, a present one may be null.
pub(crate) fn output_schema_for<R: JsonSchema>() -> Option<JsonObject> {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let mut obj = match settings
        .into_generator()
        .into_root_schema_for::<R>()
        .to_value()
    {
        Value::Object(o) => o,
        _ => return None,
    };
    let typed = obj.get("type") == Some(&json!("object"))
        && !matches!(
            obj.get("additionalProperties"),
            Some(Value::Bool(true) | Value::Object(_))
        );
    if !typed {
        return None;
    }
    strip_annotations(&mut obj);
    strip_formats(&mut obj);
    objects_only(&mut obj);
    Some(obj)
}

/// The schema of "any value" (any JSON, so any Godot value in the one JSON form of
/// docs/values.md): where schemars writes the boolean schema `true` (a
/// `serde_json::Value`, an open map's values), the published schema says `{}`.
pub(crate) fn any_value() -> Value {
    json!({})
}

/// Keywords whose value is one subschema, and those whose value is an array or a map
/// of subschemas (JSON Schema 2020-12, and the older `additionalItems`/`definitions`).
pub(super) const SCHEMA_KEYWORDS: [&str; 11] = [
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
pub(super) const SCHEMA_ARRAY_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
pub(super) const SCHEMA_MAP_KEYWORDS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Every subschema an object, never a boolean schema: the official TypeScript SDK
/// (and every client built on it: the MCP Inspector, Claude Code, Cursor, VS Code)
/// refuses a whole tools/list when one `properties` entry is not an object. `true`
/// becomes [`any_value`]; `false` as `additionalProperties` (schemars' mark of
/// `deny_unknown_fields`) is left out, as the decoder refuses an unknown argument with
/// a structured `INVALID_PARAMS` anyway and `{"not": {}}` would cost bytes in every
/// tools/list and break strict-mode converters; `false` elsewhere is `{"not": {}}`.
/// Every schema is built through here, so no tool can publish a boolean subschema.
pub(super) fn objects_only(obj: &mut Map<String, Value>) {
    fn fix(v: &mut Value) {
        match v {
            Value::Bool(true) => *v = any_value(),
            Value::Bool(false) => *v = json!({"not": {}}),
            Value::Object(o) => objects_only(o),
            _ => {}
        }
    }
    for key in ["additionalProperties", "unevaluatedProperties"] {
        if obj.get(key) == Some(&Value::Bool(false)) {
            obj.remove(key);
        }
    }
    for (key, v) in obj.iter_mut() {
        let key = key.as_str();
        if SCHEMA_KEYWORDS.contains(&key) {
            match v {
                Value::Array(items) => items.iter_mut().for_each(fix),
                _ => fix(v),
            }
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&key) {
            if let Value::Array(items) = v {
                items.iter_mut().for_each(fix);
            }
        } else if SCHEMA_MAP_KEYWORDS.contains(&key)
            && let Value::Object(map) = v
        {
            map.values_mut().for_each(fix);
        }
    }
}

/// A tool's published `outputSchema`, which also accepts a refused call's result.
///
/// A refusal is `isError: true` with `structuredContent: {"error": {code, message, …}}`
/// (error.rs). The TypeScript SDK's client (1.x, under the Inspector, Claude Code,
/// Cursor, VS Code) validates `structuredContent` against the outputSchema even when
/// `isError` is set (modelcontextprotocol/typescript-sdk#1943), so a schema that
/// requires the success fields turns every refusal into a protocol error that hides
/// the code and the hint. The required fields become one alternative and
/// `{"required": ["error"]}` the other; an existing `anyOf` (a journaled tool's replay,
/// a flattened enum) takes the required fields into each member and the error as one
/// more member, so each member keeps its own properties.
pub(super) fn or_error(mut schema: JsonObject) -> JsonObject {
    let error = json!({"required": ["error"]});
    let required = match schema.remove("required") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    if let Some(Value::Array(members)) = schema.get_mut("anyOf") {
        for member in members.iter_mut() {
            if let Value::Object(m) = member {
                let own = m
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(own) = own {
                    for r in &required {
                        if !own.contains(r) {
                            own.push(r.clone());
                        }
                    }
                }
            }
        }
        members.push(error);
    } else if !required.is_empty() {
        schema.insert("anyOf".into(), json!([{ "required": required }, error]));
    }
    schema
}

/// Drop `title` and `description` from every (sub)schema; a `properties` map keeps
/// its entries whatever they are called.
pub(super) fn strip_annotations(obj: &mut Map<String, Value>) {
    obj.remove("title");
    obj.remove("description");
    for (key, v) in obj.iter_mut() {
        match v {
            Value::Object(child) if key == "properties" || key == "$defs" => {
                for s in child.values_mut() {
                    if let Value::Object(s) = s {
                        strip_annotations(s);
                    }
                }
            }
            Value::Object(child) => strip_annotations(child),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(child) = item {
                        strip_annotations(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The output schema of a planned tool: the effect's fields (required as the effect
/// declares them), what applying adds (optional: a dry run has them only where a
/// preview supplies them), and the policy's `dry_run`, `applied` and, on a dry run,
/// `confirm_required`. A journaled tool (`replays`) may instead answer an
/// idempotent retry with the recorded transaction (`status`, `transaction_id`,
/// `reason`), so its schema accepts either shape.
pub(crate) fn planned_output_schema<E: JsonSchema, X: JsonSchema>(
    class: SafetyClass,
    replays: bool,
) -> Option<JsonObject> {
    let effect = output_schema_for::<E>()?;
    let applied = output_schema_for::<X>()?;
    let mut props = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for (schema, keep_required) in [(&effect, true), (&applied, false)] {
        if let Some(Value::Object(p)) = schema.get("properties") {
            for (k, v) in p {
                props.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if keep_required && let Some(Value::Array(r)) = schema.get("required") {
            required.extend(r.iter().cloned());
        }
    }
    props.insert("dry_run".into(), json!({"type": "boolean"}));
    props.insert("applied".into(), json!({"type": "boolean"}));
    if class.takes_dry_run() {
        props.insert("confirm_required".into(), json!({"type": "boolean"}));
    }
    required.extend([json!("dry_run"), json!("applied")]);
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    if replays {
        props
            .entry("transaction_id")
            .or_insert_with(|| json!({"type": "string"}));
        props
            .entry("reason")
            .or_insert_with(|| json!({"type": "string"}));
        props.insert("status".into(), json!({"type": "string"}));
        out.insert("properties".into(), Value::Object(props));
        out.insert(
            "anyOf".into(),
            json!([{"required": required}, {"required": ["status", "transaction_id"]}]),
        );
    } else {
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), Value::Array(required));
    }
    for defs in [effect.get("$defs"), applied.get("$defs")]
        .into_iter()
        .flatten()
    {
        if let Value::Object(d) = defs {
            let all = out
                .entry("$defs")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(all) = all {
                for (k, v) in d {
                    all.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    Some(out)
}
