//! The tool registry: every tool's name, description, input schema, safety class,
//! toolset, effect kind and handler, in one table.
//!
//! Tools are defined in one folder per Godot domain under `tools/`;
//! [`Registry::builtin`] collects them. Argument decoding lives here so that every tool refuses bad input
//! the same way: unknown fields, wrong types and path escapes become a structured
//! `INVALID_PARAMS` / `PATH_REFUSED` error naming the parameter, before the handler runs.

pub(crate) mod tool_list;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::planes::project::JournalCall;
use crate::respath::PATH_REFUSED_TAG;
use crate::rules::{EffectKind, RuntimeFlags, SafetyClass, Toolset};
use crate::state::AppState;

/// What a handler returns: a JSON object for `structuredContent`.
pub type ToolResult = Result<Value, ToolError>;
type HandlerFuture = Pin<Box<dyn Future<Output = ToolResult> + Send>>;
pub(crate) type DirectFn =
    Arc<dyn Fn(Arc<AppState>, Value, CallFlags) -> HandlerFuture + Send + Sync>;
pub(crate) type PlanFn =
    Arc<dyn Fn(Arc<AppState>, Value) -> Result<ErasedPlan, ToolError> + Send + Sync>;
type CheckFn = Arc<dyn Fn(&Value) -> Result<(), ToolError> + Send + Sync>;

/// How a tool runs. The policy (`safety::run_call`) drives all three.
pub(crate) enum Handler {
    /// Runs in one step; read-only and runtime tools.
    Direct(DirectFn),
    /// Plans first (every precondition, nothing changed), then applies. A dry run
    /// returns the plan's effect; the real run returns the same effect plus what
    /// applying added, so preview and real run agree by construction.
    Planned(PlanFn),
    /// run_commands: expanded entry by entry by the policy.
    Batch,
}

/// What a planned tool will do, decided before anything changes. `E` is the effect
/// (reported by both the dry run and the real run), `X` what applying adds (and what
/// a preview adds to a dry run). Both are typed: their schemas make the tool's
/// `outputSchema` (see [`planned_output_schema`]).
pub struct Plan<E = Map<String, Value>, X = Map<String, Value>> {
    /// The effect, exactly as the real run reports it (persistence verdict included).
    pub effect: E,
    /// Make the effect happen. Runs only after every gate passed, with the journal
    /// identity of the call (its writes are recorded under it).
    pub apply: ApplyFn<X>,
    /// Completes `effect` for a dry run only, when computing it costs a round trip the
    /// real run does not need: an editor command's reply carries the same verdict its
    /// probe would, so a real run sends one request (one editor frame), not two.
    pub preview: Option<Box<dyn FnOnce() -> Result<X, ToolError> + Send>>,
}

impl<E, X> Plan<E, X> {
    /// A plan with no preview step.
    pub fn new(
        effect: E,
        apply: impl FnOnce(&mut JournalCall) -> Result<X, ToolError> + Send + 'static,
    ) -> Result<Self, ToolError> {
        Ok(Self {
            effect,
            apply: Box::new(apply),
            preview: None,
        })
    }
}

/// What a journaled write adds when applied: the transaction that made it.
#[derive(Debug, serde::Serialize, JsonSchema)]
pub struct Committed {
    pub transaction_id: String,
}

/// What a tool's typed result adds to nothing: a plan whose apply reports no fields.
#[derive(Debug, Default, serde::Serialize, JsonSchema)]
pub struct NoFields {}

/// A plan's apply: it runs with the call's journal identity and returns what it adds.
pub type ApplyFn<X> = Box<dyn FnOnce(&mut JournalCall) -> Result<X, ToolError> + Send>;

/// What an erased plan's apply adds to the result, as a JSON object.
pub(crate) type ErasedApply = ApplyFn<Map<String, Value>>;
/// What an erased plan's preview adds to a dry run's result, as a JSON object.
pub(crate) type ErasedStep = Box<dyn FnOnce() -> Result<Map<String, Value>, ToolError> + Send>;

/// A [`Plan`] with its types erased into JSON objects: what the policy runs.
pub(crate) struct ErasedPlan {
    pub effect: Map<String, Value>,
    pub apply: ErasedApply,
    pub preview: Option<ErasedStep>,
}

/// A serializable value as an untyped JSON object (a plan part not yet typed).
pub(crate) fn untyped<T: serde::Serialize>(v: T) -> Result<Map<String, Value>, ToolError> {
    object_of("a plan part", v)
}

/// Serialize a typed result part into a JSON object.
fn object_of<T: serde::Serialize>(what: &str, v: T) -> Result<Map<String, Value>, ToolError> {
    match serde_json::to_value(v) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ToolError::internal(format!("{what} must be a JSON object"))),
        Err(e) => Err(ToolError::internal(e.to_string())),
    }
}

/// Two typed result parts as one object (`base`'s fields, then `more`'s).
#[derive(Debug, serde::Serialize, JsonSchema)]
pub struct Also<A, B> {
    #[serde(flatten)]
    pub base: A,
    #[serde(flatten)]
    pub more: B,
}

impl<E, X: 'static> Plan<E, X> {
    /// The same plan with its effect extended (or replaced) by `f`.
    pub fn map_effect<M>(self, f: impl FnOnce(E) -> M) -> Plan<M, X> {
        Plan {
            effect: f(self.effect),
            apply: self.apply,
            preview: self.preview,
        }
    }

    /// The same plan with what applying (and a preview) adds mapped by `f`.
    pub fn map_applied<Y>(self, f: impl Fn(X) -> Y + Send + Sync + 'static) -> Plan<E, Y> {
        let f = Arc::new(f);
        let g = f.clone();
        let apply = self.apply;
        Plan {
            effect: self.effect,
            apply: Box::new(move |call| apply(call).map(|x| f(x))),
            preview: self
                .preview
                .map(|p| Box::new(move || p().map(|x| g(x))) as Box<_>),
        }
    }
}

impl<E: serde::Serialize, X: serde::Serialize + 'static> Plan<E, X> {
    fn erase(self) -> Result<ErasedPlan, ToolError> {
        let apply = self.apply;
        Ok(ErasedPlan {
            effect: object_of("a plan's effect", self.effect)?,
            apply: Box::new(move |call| object_of("what a plan applies", apply(call)?)),
            preview: self
                .preview
                .map(|p| Box::new(move || object_of("a plan's preview", p()?)) as ErasedStep),
        })
    }
}

pub use crate::rules::CallFlags;

/// The static description of a tool.
#[derive(Debug, Clone, Copy)]
pub struct ToolMeta {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub class: SafetyClass,
    pub toolset: Toolset,
    pub effect: Option<EffectKind>,
}

impl ToolMeta {
    /// A read-only tool of `toolset` (no effect): the shape of every disk-reading family.
    pub const fn read_only(
        toolset: Toolset,
        name: &'static str,
        title: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            name,
            title,
            description,
            class: SafetyClass::ReadOnly,
            toolset,
            effect: None,
        }
    }
}

/// The typed reference a tool result carries for its image (see [`ImageResult`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageRef {
    pub capture_id: String,
    pub mime_type: String,
    pub width: u32,
    pub height: u32,
    pub bytes: usize,
}

/// A tool result type that carries an image (registered with
/// [`ToolDef::imaging`](crate::tools::ToolDef::imaging)). The call pipeline carries
/// results as JSON; the type, not a key found in the JSON, decides that there is an
/// image and where it is, so no other tool's result is searched for one.
pub trait ImageResult {
    /// The image a serialized result of this type names, if it has one.
    fn image_of(result: &Value) -> Option<ImageRef>;
}

/// A registered tool.
pub struct ToolDef {
    pub meta: ToolMeta,
    /// Generates this tool's input schema (class flags included) and output schema
    /// with schemars. Run only by the published list's freshness test
    /// (`crate::tool_list`) and for a tool outside the registry (tests): the server
    /// reads every built-in tool's schemas from the published list.
    pub(crate) schemas: SchemaFn,
    /// This tool's entry in the published list (`tool_list.json`), set by the registry.
    pub(crate) published: Option<&'static str>,
    /// The MCP description, parsed from `published` the first time it is needed.
    pub(crate) mcp: std::sync::OnceLock<Tool>,
    pub(crate) handler: Handler,
    /// Decode the arguments without running anything: the path preflight and type
    /// checks, applied to run_commands entries before any entry runs.
    pub(crate) check_args: CheckFn,
    /// For runtime tools: whether they write disk or execute code (approval-gated).
    pub runtime: RuntimeFlags,
    /// Set only by [`ToolDef::imaging`], from a result type that declares an image
    /// ([`ImageResult`]): the image a result names, which `server.rs` sends as MCP
    /// image content. Any other tool's result is never searched for one.
    pub image_of: Option<fn(&Value) -> Option<ImageRef>>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("meta", &self.meta).finish()
    }
}

/// A tool's schemas as schemars generates them: the input schema (class flags
/// included) and the `outputSchema` (`None` for an untyped result).
pub(crate) type SchemaFn = fn(&ToolMeta) -> (JsonObject, Option<JsonObject>);

fn direct_schemas<A: JsonSchema, R: JsonSchema>(
    meta: &ToolMeta,
) -> (JsonObject, Option<JsonObject>) {
    (
        input_schema_for::<A>(meta.class),
        output_schema_for::<R>().map(or_error),
    )
}

fn planned_schemas<A: JsonSchema, E: JsonSchema, X: JsonSchema>(
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

impl ToolDef {
    /// Define a tool whose arguments decode into `A`.
    /// Its result type `R` is the tool's `outputSchema`.
    pub fn new<A, R, F, Fut>(meta: ToolMeta, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: serde::Serialize + JsonSchema + 'static,
        F: Fn(Arc<AppState>, A, CallFlags) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    {
        // A direct handler runs in one step: it has no plan for a dry run to report
        // and nothing the confirm gate could stop before it. Only a class without
        // dry_run may be one (a mutating or destructive tool is `planned`).
        assert!(
            !meta.class.takes_dry_run(),
            "tool {}: a {} tool must be planned (ToolDef::planned), not a direct handler",
            meta.name,
            meta.class.as_str()
        );
        let handler = Arc::new(handler);
        let handler: DirectFn = Arc::new(move |state, args, flags| {
            let handler = handler.clone();
            Box::pin(async move {
                let args: A = decode_args(args)?;
                let out = handler(state, args, flags).await?;
                serde_json::to_value(out).map_err(|e| ToolError::internal(e.to_string()))
            })
        });
        Self {
            meta,
            schemas: direct_schemas::<A, R>,
            published: None,
            mcp: Default::default(),
            handler: Handler::Direct(handler),
            check_args: check_fn::<A>(),
            runtime: RuntimeFlags::default(),
            image_of: None,
        }
    }

    /// Define a tool like [`ToolDef::new`] whose result type carries an image: the
    /// capture it names reaches the client as MCP image content.
    pub fn imaging<A, R, F, Fut>(meta: ToolMeta, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: serde::Serialize + JsonSchema + ImageResult + 'static,
        F: Fn(Arc<AppState>, A, CallFlags) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    {
        Self {
            image_of: Some(R::image_of),
            ..Self::new(meta, handler)
        }
    }

    /// Define a planned tool (mutating or destructive) whose arguments decode into `A`.
    /// Its output schema joins the plan's effect `E` and what applying adds `X`.
    pub fn planned<A, E, X, F>(meta: ToolMeta, planner: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        E: serde::Serialize + JsonSchema + 'static,
        X: serde::Serialize + JsonSchema + 'static,
        F: Fn(Arc<AppState>, A) -> Result<Plan<E, X>, ToolError> + Send + Sync + 'static,
    {
        let planner: PlanFn =
            Arc::new(move |state, args| planner(state, decode_args::<A>(args)?)?.erase());
        Self {
            meta,
            schemas: planned_schemas::<A, E, X>,
            published: None,
            mcp: Default::default(),
            handler: Handler::Planned(planner),
            check_args: check_fn::<A>(),
            runtime: RuntimeFlags::default(),
            image_of: None,
        }
    }

    /// Define the batch tool; the policy expands its entries.
    pub fn batch<A: DeserializeOwned + JsonSchema + Send + 'static, R: JsonSchema>(
        meta: ToolMeta,
    ) -> Self {
        Self {
            meta,
            schemas: direct_schemas::<A, R>,
            published: None,
            mcp: Default::default(),
            handler: Handler::Batch,
            check_args: check_fn::<A>(),
            runtime: RuntimeFlags::default(),
            image_of: None,
        }
    }

    /// Mark a runtime tool as writing disk or executing code (routes it to the gate).
    pub fn with_runtime_flags(mut self, flags: RuntimeFlags) -> Self {
        self.runtime = flags;
        self
    }

    /// The MCP description of this tool, with `_meta.safety_class` and annotations,
    /// as tools/list publishes it: a built-in tool's is read from the published list
    /// (no schema is generated at run time), any other's generated.
    pub fn to_mcp(&self) -> Tool {
        self.mcp().clone()
    }

    /// [`ToolDef::to_mcp`], parsed (or generated) once.
    pub(crate) fn mcp(&self) -> &Tool {
        self.mcp.get_or_init(|| match self.published {
            Some(entry) => crate::tools::registry::tool_list::parse(entry),
            None => self.generated_mcp(),
        })
    }

    /// JSON schema of the arguments, class flags included.
    pub fn input_schema(&self) -> &Arc<JsonObject> {
        &self.mcp().input_schema
    }

    /// JSON schema of a successful result (`structuredContent`), published as the
    /// tool's `outputSchema`; `None` for a tool whose result type is untyped JSON.
    pub fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.mcp().output_schema.as_ref()
    }

    /// The MCP description with schemas generated by schemars now: what the
    /// published list must hold (`crate::tool_list`'s freshness test).
    pub(crate) fn generated_mcp(&self) -> Tool {
        let (input_schema, output_schema) = (self.schemas)(&self.meta);
        let mut meta = rmcp::model::JsonObject::new();
        meta.insert("safety_class".into(), json!(self.meta.class.as_str()));
        meta.insert("toolset".into(), json!(self.meta.toolset.as_str()));
        meta.insert(
            "effect_kind".into(),
            json!(crate::rules::effect_str(self.meta.effect)),
        );
        let tool = Tool::new(
            self.meta.name,
            self.meta.description,
            Arc::new(input_schema),
        )
        .with_title(self.meta.title)
        .with_annotations(self.meta.class.annotations(self.meta.title))
        .with_meta(rmcp::model::MetaObject(meta));
        match output_schema {
            Some(schema) => tool.with_raw_output_schema(Arc::new(schema)),
            None => tool,
        }
    }
}

fn check_fn<A: DeserializeOwned + 'static>() -> CheckFn {
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
fn input_schema_for<A: JsonSchema>(class: SafetyClass) -> JsonObject {
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
                       "description": "Preview: check preconditions, change nothing."}),
            );
        }
        if class.requires_confirm() {
            props.insert(
                "confirm".into(),
                json!({"type": "boolean", "default": false,
                       "description": "Must be true to apply (removes or overwrites data)."}),
            );
        }
    }
    obj
}

/// Optional arguments are simply omitted; the schema says so by leaving them out of
/// `required`. schemars also marks them nullable with `default: null`, which only adds
/// noise for a model reading the schema, so that is removed (an explicit null is still
/// accepted by the decoder).
fn strip_nullables(obj: &mut Map<String, Value>) {
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    if let Some(Value::Array(types)) = obj.get_mut("type") {
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
fn strip_formats(obj: &mut Map<String, Value>) {
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
const SCHEMA_KEYWORDS: [&str; 11] = [
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
const SCHEMA_ARRAY_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SCHEMA_MAP_KEYWORDS: [&str; 5] = [
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
fn objects_only(obj: &mut Map<String, Value>) {
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
fn or_error(mut schema: JsonObject) -> JsonObject {
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
fn strip_annotations(obj: &mut Map<String, Value>) {
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

fn kind_of(v: &Value) -> &'static str {
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
    serde_path_to_error::deserialize::<_, A>(args).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner().to_string();
        if let Some(pos) = inner.find(PATH_REFUSED_TAG) {
            let msg = &inner[pos + PATH_REFUSED_TAG.len()..];
            let msg = msg.split(" at line ").next().unwrap_or(msg);
            return ToolError::new(
                ErrorCode::PathRefused,
                format!("`{path}` is refused: {msg}"),
            )
            .param(path)
            .hint("File paths are res:// paths inside the project, like res://scenes/main.tscn.");
        }
        let inner = inner
            .split(" at line ")
            .next()
            .unwrap_or(&inner)
            .to_string();
        let param = if path == "." {
            // serde reports missing/unknown fields at the root; recover the field name.
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

fn field_in_message(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let end = msg[start..].find('`')? + start;
    Some(msg[start..end].to_string())
}

/// All tools this server offers, by name.
#[derive(Debug, Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, ToolDef>,
}

impl Registry {
    /// Each tool reads its entry of the published list (`crate::tool_list`).
    pub(crate) fn attach_published(&mut self) {
        crate::tools::registry::tool_list::attach(&mut self.tools);
    }

    pub(crate) fn add(&mut self, def: ToolDef) {
        let name = def.meta.name;
        let previous = self.tools.insert(name, def);
        assert!(previous.is_none(), "tool {name} registered twice");
    }

    /// Add a tool outside the built-ins (policy tests use synthetic tools).
    #[cfg(test)]
    pub(crate) fn insert_for_tests(&mut self, def: ToolDef) {
        self.add(def);
    }

    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.get(name)
    }

    /// Every tool in `tools/list` order: by toolset (the core first, as
    /// [`Toolset`] declares them), then by name. Stable across runs and versions that
    /// add tools, so a client's cache and a model's prompt prefix stay valid.
    pub fn iter(&self) -> impl Iterator<Item = &ToolDef> {
        let mut tools: Vec<&ToolDef> = self.tools.values().collect();
        tools.sort_by_key(|d| (d.meta.toolset, d.meta.name));
        tools.into_iter()
    }

    // There is deliberately no `call` here: every call goes through
    // `safety::run_call`, so no path runs a tool around the gates.
}

/// Markers around the generated table in docs/safety-model.md.
pub const DOCS_TABLE_BEGIN: &str =
    "<!-- BEGIN GENERATED TOOL TABLE (cargo test; INSTA_UPDATE=always to regenerate) -->";
pub const DOCS_TABLE_END: &str = "<!-- END GENERATED TOOL TABLE -->";

impl Registry {
    /// The table of every tool and its class, toolset and gates, as Markdown.
    pub fn safety_table_markdown(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "—" };
        let mut out = String::from(
            "| tool | class | toolset | on by default | effect | dry_run | confirm | approval gate |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for def in self.iter() {
            let m = &def.meta;
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
                m.name,
                m.class.as_str(),
                m.toolset.as_str(),
                yes(Toolset::DEFAULT.contains(&m.toolset)),
                crate::rules::effect_str(m.effect),
                yes(m.class.takes_dry_run()),
                if m.class.requires_confirm() {
                    "required"
                } else {
                    "—"
                },
                if matches!(def.handler, Handler::Batch) {
                    "as its most dangerous entry".to_string()
                } else {
                    yes(crate::rules::is_gated(m.class, def.runtime)).to_string()
                },
            ));
        }
        out
    }
}

/// The tool reference (docs/tools.md), generated from the registry so it cannot drift.
pub fn reference_markdown(registry: &Registry) -> String {
    let tools: Vec<&ToolDef> = registry.iter().collect();
    let mut out = String::from(
        "# Tools\n\n<!-- Generated from the tool registry by \
         `INSTA_UPDATE=always cargo test -p godot-mcp-server --lib docs_`; do not edit by hand. -->\n\n\
         Every tool carries `_meta.safety_class` in `tools/list`. `mutating` tools take \
         `dry_run`; `destructive` tools take `dry_run` and need `confirm=true`.\n\n\
         ## Toolsets\n\n\
         `tools/list` holds the tools of the enabled toolsets, in this order. With no \
         `--toolsets` / `GODOT_MCP_TOOLSETS`, the default ones are enabled and an agent \
         enables the others with `manage_toolsets` (`list_toolsets` describes them); a \
         named list is the ceiling and what is enabled at start (`all`: every tool, for \
         clients that search tools themselves).\n\n\
         | toolset | default | purpose | tools |\n|---|---|---|---|\n",
    );
    for t in Toolset::ALL {
        let names: Vec<String> = tools
            .iter()
            .filter(|d| d.meta.toolset == t)
            .map(|d| format!("`{}`", d.meta.name))
            .collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            t.as_str(),
            if Toolset::DEFAULT.contains(&t) {
                "on"
            } else {
                "off"
            },
            t.purpose(),
            names.join(", ")
        ));
    }
    out.push_str("\n## Every tool\n\n| tool | class | toolset | effect |\n|---|---|---|---|\n");
    for t in &tools {
        out.push_str(&format!(
            "| [`{0}`](#{0}) | {1} | {2} | {3} |\n",
            t.meta.name,
            t.meta.class.as_str(),
            t.meta.toolset.as_str(),
            crate::rules::effect_str(t.meta.effect)
        ));
    }
    for t in &tools {
        out.push_str(&format!(
            "\n### {}\n\n{} — class `{}`, toolset `{}`, effect `{}`.\n\n{}\n",
            t.meta.name,
            t.meta.title,
            t.meta.class.as_str(),
            t.meta.toolset.as_str(),
            crate::rules::effect_str(t.meta.effect),
            t.meta
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ));
        // Generated now, not read from the published list: one regeneration run
        // brings this page and the list up to date together.
        let input_schema = (t.schemas)(&t.meta).0;
        let props = input_schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            Some(props) if !props.is_empty() => {
                out.push_str("\n| argument | type | required | description |\n|---|---|---|---|\n");
                for (name, schema) in props {
                    let ty = match schema.get("type") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => "any".into(),
                    };
                    let ty = match schema.get("enum").and_then(Value::as_array) {
                        Some(values) => values
                            .iter()
                            .map(|v| format!("`{}`", v.as_str().unwrap_or("?")))
                            .collect::<Vec<_>>()
                            .join(" \\| "),
                        None => ty,
                    };
                    let desc = schema
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .replace('\n', " ");
                    out.push_str(&format!(
                        "| `{name}` | {ty} | {} | {desc} |\n",
                        if required.contains(&name.as_str()) {
                            "yes"
                        } else {
                            "no"
                        }
                    ));
                }
            }
            _ => out.push_str("\nNo arguments.\n"),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Whether a stale generated doc is rewritten follows the switch of the contract's
    /// insta snapshot: `INSTA_UPDATE=always` (or `force`) rewrites it in place, any
    /// other value (scripts/test.sh sets `no`) fails the test. The docs are not insta
    /// snapshots themselves: a `.snap` file has insta's name and a YAML header, and
    /// docs/tools.md is a page people read and link to.
    pub(crate) fn regenerate_or_fail(path: &std::path::Path, current: &str, fresh: &str) {
        if current == fresh {
            return;
        }
        if matches!(
            std::env::var("INSTA_UPDATE").as_deref(),
            Ok("always" | "force")
        ) {
            std::fs::write(path, fresh).unwrap();
            return;
        }
        let line = current
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or(current.lines().count().min(fresh.lines().count()), |i| i)
            + 1;
        panic!(
            "{} is out of date (first difference at line {line}); regenerate it with \
             INSTA_UPDATE=always cargo test -p godot-mcp-server --all-features --lib docs_",
            path.display()
        );
    }

    /// docs/tools.md is the registry, rendered; a tool change without a docs change fails.
    #[test]
    fn docs_tools_md_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md");
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        regenerate_or_fail(&path, &committed, &reference_markdown(&Registry::builtin()));
    }

    /// docs/safety-model.md carries the table generated from the registry, between
    /// markers; this fails when they differ.
    #[test]
    fn docs_tool_table_is_current() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/safety-model.md");
        let doc = std::fs::read_to_string(&path).expect("docs/safety-model.md");
        let (Some(b), Some(e)) = (doc.find(DOCS_TABLE_BEGIN), doc.find(DOCS_TABLE_END)) else {
            panic!("docs/safety-model.md lacks the generated-table markers");
        };
        let start = b + DOCS_TABLE_BEGIN.len();
        let fresh = format!("\n{}", Registry::builtin().safety_table_markdown());
        let updated = format!("{}{}{}", &doc[..start], fresh, &doc[e..]);
        regenerate_or_fail(&path, &doc, &updated);
    }

    /// Every tool's result is a typed struct whose schema is its outputSchema: an
    /// object schema with declared properties (`None` means an untyped result).
    #[test]
    fn every_tool_publishes_an_output_schema() {
        let registry = Registry::builtin();
        let untyped: Vec<&str> = registry
            .iter()
            .filter(|d| d.output_schema().is_none())
            .map(|d| d.meta.name)
            .collect();
        assert!(
            untyped.is_empty(),
            "tools without an outputSchema: {untyped:?}"
        );
        for def in registry.iter() {
            if let Some(s) = def.output_schema() {
                assert_eq!(s.get("type"), Some(&json!("object")), "{}", def.meta.name);
                assert!(s.get("properties").is_some(), "{}", def.meta.name);
            }
        }
    }

    /// Every input and output schema of every tool (all toolsets), as tools/list sends
    /// them, with the path of each place (`<tool>.<in|out>/<json pointer>`).
    fn published_schemas() -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for def in Registry::builtin().iter() {
            let tool = def.to_mcp();
            out.push((
                format!("{}.in", tool.name),
                Value::Object((*tool.input_schema).clone()),
            ));
            if let Some(s) = &tool.output_schema {
                out.push((format!("{}.out", tool.name), Value::Object((**s).clone())));
            }
        }
        assert!(out.len() > 200, "the registry lists every tool");
        out
    }

    /// Walk a schema without trusting `objects_only`'s keyword lists: every value is
    /// searched except the data keywords' (`default`, `const`, `enum`, `examples`) and
    /// the boolean-valued annotations; a boolean anywhere else, or a non-object where
    /// a subschema sits (a `properties` entry, an `anyOf` member), is reported.
    fn non_object_subschemas(schema: &Value, at: &str, found: &mut Vec<String>) {
        const DATA: [&str; 4] = ["default", "const", "enum", "examples"];
        const BOOLEAN_VALUED: [&str; 4] = ["uniqueItems", "readOnly", "writeOnly", "deprecated"];
        const MAPS: [&str; 5] = [
            "properties",
            "patternProperties",
            "$defs",
            "definitions",
            "dependentSchemas",
        ];
        let Value::Object(obj) = schema else {
            found.push(format!("{at}: {schema}"));
            return;
        };
        for (k, v) in obj {
            let here = format!("{at}/{k}");
            if DATA.contains(&k.as_str()) || BOOLEAN_VALUED.contains(&k.as_str()) {
                continue;
            }
            match v {
                Value::Object(map) if MAPS.contains(&k.as_str()) => {
                    for (name, sub) in map {
                        non_object_subschemas(sub, &format!("{here}/{name}"), found);
                    }
                }
                Value::Object(_) | Value::Bool(_) => non_object_subschemas(v, &here, found),
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if matches!(item, Value::Object(_) | Value::Bool(_)) {
                            non_object_subschemas(item, &format!("{here}/{i}"), found);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The official TypeScript SDK refuses a whole tools/list when one schema's
    /// `properties` entry is not an object; no published subschema is a boolean.
    #[test]
    fn every_published_subschema_is_an_object() {
        let mut found = Vec::new();
        for (at, schema) in published_schemas() {
            non_object_subschemas(&schema, &at, &mut found);
        }
        assert!(
            found.is_empty(),
            "boolean or non-object subschemas: {found:#?}"
        );
        // The walk finds one where schemars writes it (a `serde_json::Value` field).
        let mut canary = Vec::new();
        non_object_subschemas(
            &json!({"type": "object", "properties": {"v": true},
                    "anyOf": [{"items": false}], "default": true, "uniqueItems": true}),
            "canary",
            &mut canary,
        );
        assert_eq!(
            canary,
            ["canary/anyOf/0/items: false", "canary/properties/v: true"]
        );
    }

    /// Every published schema is a valid JSON Schema 2020-12 document (checked
    /// against the meta-schema, as a validating client would before using it).
    #[test]
    fn every_published_schema_is_valid_json_schema_2020_12() {
        let invalid: Vec<String> = published_schemas()
            .into_iter()
            .filter_map(|(at, schema)| {
                jsonschema::draft202012::meta::validate(&schema)
                    .err()
                    .map(|e| format!("{at}: {e} at {}", e.instance_path()))
            })
            .collect();
        assert!(invalid.is_empty(), "{invalid:#?}");
        assert!(
            jsonschema::draft202012::meta::validate(&json!({"properties": {"a": {"type": "nul"}}}))
                .is_err(),
            "the meta-schema check refuses a bad type"
        );
    }

    /// A refusal's `structuredContent` matches the outputSchema of every tool (clients
    /// on the TypeScript SDK validate it even on `isError`), and the success fields stay
    /// required: an empty result, which is neither, is refused.
    #[test]
    fn every_output_schema_accepts_a_refusal_and_requires_its_fields() {
        let error =
            serde_json::to_value(ToolError::invalid_params("path", "refused").hint("a hint"))
                .unwrap();
        let refusal = json!({ "error": error });
        for def in Registry::builtin().iter() {
            let Some(schema) = def.output_schema() else {
                continue;
            };
            let schema = Value::Object((**schema).clone());
            let v = jsonschema::draft202012::new(&schema).unwrap();
            assert!(
                v.is_valid(&refusal),
                "{}: a refusal does not match",
                def.meta.name
            );
            let requires = schema["anyOf"].as_array().is_some_and(|members| {
                members
                    .iter()
                    .all(|m| m["required"].as_array().is_some_and(|r| !r.is_empty()))
            });
            assert_eq!(
                v.is_valid(&json!({})),
                !requires,
                "{}: an empty result",
                def.meta.name
            );
        }
    }

    /// The transform itself: `true` is `{}`, `additionalProperties: false` is left
    /// out, any other `false` is `{"not": {}}`, and data keywords keep their booleans.
    #[test]
    fn objects_only_rewrites_boolean_subschemas() {
        let mut s = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "v": true,
                "list": {"type": "array", "items": true, "uniqueItems": true},
                "never": false,
                "open": {"type": "object", "additionalProperties": true},
                "flag": {"type": "boolean", "default": false, "enum": [true]},
                "either": {"anyOf": [true, {"type": "string"}]}
            }
        });
        let Value::Object(obj) = &mut s else {
            unreachable!()
        };
        objects_only(obj);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "v": {},
                    "list": {"type": "array", "items": {}, "uniqueItems": true},
                    "never": {"not": {}},
                    "open": {"type": "object", "additionalProperties": {}},
                    "flag": {"type": "boolean", "default": false, "enum": [true]},
                    "either": {"anyOf": [{}, {"type": "string"}]}
                }
            })
        );
    }

    /// A mutating tool written as a direct handler would skip its dry run: refused
    /// when it is defined, so no such tool can be registered.
    #[test]
    #[should_panic(expected = "must be planned")]
    fn a_mutating_direct_handler_is_refused() {
        let meta = ToolMeta {
            name: "t",
            title: "t",
            description: "t",
            class: SafetyClass::Mutating,
            toolset: Toolset::Project,
            effect: Some(EffectKind::File),
        };
        let _ = ToolDef::new(meta, |_s, _a: Args, _f| async { Ok(NoFields {}) });
    }

    #[derive(Debug, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: crate::respath::ResPath,
        limit: Option<u32>,
    }

    #[test]
    fn decode_names_the_field() {
        let e = decode_args::<Args>(json!({"path": "res://a", "limit": "x"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert_eq!(e.param.as_deref(), Some("limit"));
        let e = decode_args::<Args>(json!({"path": "/etc/passwd"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused);
        assert_eq!(e.param.as_deref(), Some("path"));
        let e = decode_args::<Args>(json!({"path": "res://a", "extra": 1})).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("extra"));
        let e = decode_args::<Args>(json!({})).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("path"));
    }

    #[test]
    fn flags_are_refused_where_the_class_has_none() {
        let mut args = Map::new();
        args.insert("confirm".into(), json!(true));
        let e = split_flags(SafetyClass::Mutating, &mut args).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("confirm"));
        let mut args = Map::new();
        args.insert("confirm".into(), json!("true"));
        let e = split_flags(SafetyClass::Destructive, &mut args).unwrap_err();
        assert!(e.message.contains("must be a boolean"), "{}", e.message);
        let mut args = Map::new();
        args.insert("dry_run".into(), json!(true));
        let f = split_flags(SafetyClass::Destructive, &mut args).unwrap();
        assert!(f.dry_run && !f.confirm);
    }
}
