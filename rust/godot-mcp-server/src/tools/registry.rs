//! The tool registry: every tool's name, description, input schema, safety class,
//! toolset, effect kind and handler, in one table.
//!
//! Tools are defined in one folder per Godot domain under `tools/`;
//! [`Registry::builtin`] collects them. Argument decoding lives here so that every tool refuses bad input
//! the same way: unknown fields, wrong types and path escapes become a structured
//! `INVALID_PARAMS` / `PATH_REFUSED` error naming the parameter, before the handler runs.

mod args;
mod plan;
#[cfg(test)]
mod reference;
mod schema;
pub(crate) mod tool_list;

pub(crate) use args::*;
pub(crate) use plan::*;
pub(crate) use schema::*;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::rules::class::{self, Class, OneStep, Plans};
use crate::rules::{EffectKind, RuntimeFlags, SafetyClass, Toolset};
use crate::state::AppState;

/// What a handler returns: a JSON object for `structuredContent`.
pub(crate) type ToolResult = Result<Value, ToolError>;
type HandlerFuture = Pin<Box<dyn Future<Output = ToolResult> + Send>>;
pub(crate) type DirectFn =
    Arc<dyn Fn(Arc<AppState>, Value, CallFlags) -> HandlerFuture + Send + Sync>;
pub(crate) type PlanFn =
    Arc<dyn Fn(Arc<AppState>, Value) -> Result<ErasedPlan, ToolError> + Send + Sync>;
type CheckFn = Arc<dyn Fn(&Value) -> Result<(), ToolError> + Send + Sync>;
/// A node edit's form inside an agent's change (docs/recovery.md, "An agent's own
/// change"): the protocol steps the call stands for, and the fields of its answer.
pub(crate) type Staged = (
    Vec<godot_mcp_protocol::commands::Step>,
    serde_json::Map<String, Value>,
);
pub(crate) type StageFn = Arc<dyn Fn(Value) -> Result<Staged, ToolError> + Send + Sync>;

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

pub(crate) use crate::rules::CallFlags;

/// One call of a direct handler: the server state and the decoded arguments (a direct
/// handler is read-only: no dry_run or confirm to read). A handler takes it apart in its signature,
/// `async fn x(Call { state, args, .. }: Call<XArgs>) -> Out<XOut>`.
pub(crate) struct Call<A> {
    pub state: Arc<AppState>,
    pub args: A,
}

/// What a direct handler returns: its typed result or a structured error.
pub(crate) type Out<R> = Result<R, ToolError>;

/// The static description of a tool. `C` is its safety class as a type
/// ([`class`](crate::rules::class)) where the tool is defined, so the compiler checks
/// its handler kind; a registered tool keeps the class as a value (`ToolMeta`, the
/// default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolMeta<C = SafetyClass> {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub class: C,
    pub toolset: Toolset,
    pub effect: Option<EffectKind>,
}

impl<C: Class> ToolMeta<C> {
    /// The description as the registry keeps it: the class as a value.
    pub(crate) const fn erase(self) -> ToolMeta {
        self.of_class(C::CLASS)
    }

    /// The same tool of another safety class (a class type, or the value `erase` keeps).
    pub(crate) const fn of_class<D: Copy>(self, class: D) -> ToolMeta<D> {
        ToolMeta {
            name: self.name,
            title: self.title,
            description: self.description,
            class,
            toolset: self.toolset,
            effect: self.effect,
        }
    }
}

impl ToolMeta<class::ReadOnly> {
    /// A read-only tool of `toolset` (no effect): the shape of every disk-reading family.
    pub(crate) const fn read_only(
        toolset: Toolset,
        name: &'static str,
        title: &'static str,
        description: &'static str,
    ) -> Self {
        ToolMeta::runtime(toolset, name, title, description, None).of_class(class::ReadOnly)
    }
}

impl ToolMeta<class::Destructive> {
    /// A destructive tool of `toolset` whose effect is a file write (project.godot, file
    /// moves and copies): written outside the undo history, so the agent opts in.
    pub(crate) const fn file_write(
        toolset: Toolset,
        name: &'static str,
        title: &'static str,
        description: &'static str,
    ) -> Self {
        ToolMeta::runtime(toolset, name, title, description, Some(EffectKind::File))
            .of_class(class::Destructive)
    }
}

impl ToolMeta<class::Runtime> {
    /// A runtime tool of `toolset` (it runs or talks to a process): the shape of the
    /// process-plane families, and of a runtime tool in another domain's toolset.
    pub(crate) const fn runtime(
        toolset: Toolset,
        name: &'static str,
        title: &'static str,
        description: &'static str,
        effect: Option<EffectKind>,
    ) -> Self {
        Self {
            name,
            title,
            description,
            class: class::Runtime,
            toolset,
            effect,
        }
    }
}

/// The typed reference a tool result carries for its image (see [`ImageResult`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImageRef {
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
pub(crate) trait ImageResult {
    /// The image a serialized result of this type names, if it has one.
    fn image_of(result: &Value) -> Option<ImageRef>;
}

/// A registered tool.
pub(crate) struct ToolDef {
    pub meta: ToolMeta,
    /// Generates this tool's input schema (class flags included) and output schema
    /// with schemars. Run only by the published list's freshness test
    /// (`crate::tool_list`) and for a tool outside the registry (tests): the server
    /// reads every built-in tool's schemas from the published list.
    pub(crate) schemas: SchemaFn,
    /// This tool's entry in the published list (`tool_list.json`), set by the registry.
    pub(crate) published: Option<&'static str>,
    /// The MCP description, parsed from `published` the first time it is needed.
    pub(crate) mcp: std::sync::OnceLock<Box<Tool>>,
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
    /// Set only by [`ToolDef::staged`]: a node edit an agent's change stages (checked,
    /// kept, sent at the commit) instead of sending it. No other tool is staged.
    pub(crate) staged: Option<StageFn>,
}

/// The answer fields of a staged call ([`ToolDef::staged`]), written as a JSON object.
pub(crate) fn reply_map(fields: Value) -> serde_json::Map<String, Value> {
    match fields {
        Value::Object(m) => m,
        other => serde_json::Map::from_iter([("value".to_owned(), other)]),
    }
}

/// The members of a tools/list `tools` array for `defs`, comma-separated, written
/// from the published entries without building a JSON value.
pub(crate) fn raw_members<'a>(defs: impl Iterator<Item = &'a ToolDef>) -> String {
    let mut out = String::new();
    for def in defs {
        if !out.is_empty() {
            out.push(',');
        }
        match def.published {
            Some(entry) => out.push_str(entry),
            None => out.push_str(&serde_json::to_string(def.mcp()).unwrap_or_default()),
        }
    }
    out
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("meta", &self.meta).finish()
    }
}

impl ToolDef {
    /// Define a tool whose arguments decode into `A`, run in one step: a read-only or
    /// runtime tool (a class with no dry run; a mutating or destructive tool does not
    /// compile here, it is [`ToolDef::planned`]). Its result type `R` is the tool's
    /// `outputSchema`.
    pub(crate) fn new<A, R, F, Fut, C>(meta: ToolMeta<C>, handler: F) -> Self
    where
        C: OneStep,
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: serde::Serialize + JsonSchema + 'static,
        F: Fn(Call<A>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out<R>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let handler: DirectFn = Arc::new(move |state, args, _flags| {
            let handler = handler.clone();
            Box::pin(async move {
                let args: A = decode_args(args)?;
                let out = handler(Call { state, args }).await?;
                serde_json::to_value(out).map_err(|e| ToolError::internal(e.to_string()))
            })
        });
        Self {
            meta: meta.erase(),
            schemas: direct_schemas::<A, R>,
            published: None,
            mcp: Default::default(),
            handler: Handler::Direct(handler),
            check_args: check_fn::<A>(),
            runtime: RuntimeFlags::default(),
            image_of: None,
            staged: None,
        }
    }

    /// Define a tool like [`ToolDef::new`] whose result type carries an image: the
    /// capture it names reaches the client as MCP image content.
    pub(crate) fn imaging<A, R, F, Fut, C>(meta: ToolMeta<C>, handler: F) -> Self
    where
        C: OneStep,
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: serde::Serialize + JsonSchema + ImageResult + 'static,
        F: Fn(Call<A>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Out<R>> + Send + 'static,
    {
        Self {
            image_of: Some(R::image_of),
            ..Self::new(meta, handler)
        }
    }

    /// Define a planned tool (mutating or destructive) whose arguments decode into `A`.
    /// Its output schema joins the plan's effect `E` and what applying adds `X`.
    pub(crate) fn planned<A, E, X, F, C>(meta: ToolMeta<C>, planner: F) -> Self
    where
        C: Plans,
        A: DeserializeOwned + JsonSchema + Send + 'static,
        E: serde::Serialize + JsonSchema + 'static,
        X: serde::Serialize + JsonSchema + 'static,
        F: Fn(Arc<AppState>, A) -> Result<Plan<E, X>, ToolError> + Send + Sync + 'static,
    {
        let planner: PlanFn =
            Arc::new(move |state, args| planner(state, decode_args::<A>(args)?)?.erase());
        Self {
            meta: meta.erase(),
            schemas: planned_schemas::<A, E, X>,
            published: None,
            mcp: Default::default(),
            handler: Handler::Planned(planner),
            check_args: check_fn::<A>(),
            runtime: RuntimeFlags::default(),
            image_of: None,
            staged: None,
        }
    }

    /// Define the batch tool; the policy expands its entries.
    pub(crate) fn batch<A: DeserializeOwned + JsonSchema + Send + 'static, R: JsonSchema>(
        meta: ToolMeta<impl Class>,
    ) -> Self {
        Self {
            meta: meta.erase(),
            schemas: direct_schemas::<A, R>,
            published: None,
            mcp: Default::default(),
            handler: Handler::Batch,
            check_args: check_fn::<A>(),
            runtime: RuntimeFlags::default(),
            image_of: None,
            staged: None,
        }
    }

    /// A node edit that an agent's change stages: `stage` turns the call's own arguments
    /// (`A`, the tool's argument type) into the protocol steps it stands for and the
    /// fields of its answer.
    pub(crate) fn staged<A: DeserializeOwned + 'static>(
        mut self,
        stage: fn(A) -> Result<Staged, ToolError>,
    ) -> Self {
        self.staged = Some(Arc::new(move |args| stage(decode_args(args)?)));
        self
    }

    /// Mark a runtime tool as writing disk or executing code (routes it to the gate).
    pub(crate) fn with_runtime_flags(mut self, flags: RuntimeFlags) -> Self {
        self.runtime = flags;
        self
    }

    /// The MCP description of this tool, with `_meta.safety_class` and annotations,
    /// as tools/list publishes it: a built-in tool's is read from the published list
    /// (no schema is generated at run time), any other's generated.
    pub(crate) fn to_mcp(&self) -> Tool {
        self.mcp().clone()
    }

    /// [`ToolDef::to_mcp`], parsed (or generated) once.
    pub(crate) fn mcp(&self) -> &Tool {
        self.mcp.get_or_init(|| {
            Box::new(match self.published {
                Some(entry) => crate::tools::registry::tool_list::parse(entry),
                None => self.generated_mcp(),
            })
        })
    }

    /// JSON schema of the arguments, class flags included.
    pub(crate) fn input_schema(&self) -> &Arc<JsonObject> {
        &self.mcp().input_schema
    }

    /// JSON schema of a successful result (`structuredContent`), published as the
    /// tool's `outputSchema`; `None` for a tool whose result type is untyped JSON.
    pub(crate) fn output_schema(&self) -> Option<&Arc<JsonObject>> {
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

/// All tools this server offers, in tools/list order and by name.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    /// Every tool in `tools/list` order, sorted once when the registry is built.
    tools: Vec<ToolDef>,
    /// Each tool's name and index in `tools`, sorted by name.
    by_name: Vec<(&'static str, usize)>,
}

impl Registry {
    /// Puts the tools in `tools/list` order, indexes them by name and gives each its
    /// entry of the published list (`crate::tool_list`). Run once the tools are added.
    pub(crate) fn finish(&mut self) {
        // Sorted as small keys, then each definition moved once: sorting the
        // definitions themselves moved 152 bytes at every step.
        let mut order: Vec<(Toolset, &'static str, usize)> = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, d)| (d.meta.toolset, d.meta.name, i))
            .collect();
        order.sort_unstable();
        let mut slots: Vec<Option<ToolDef>> = std::mem::take(&mut self.tools)
            .into_iter()
            .map(Some)
            .collect();
        self.tools = order
            .iter()
            .map(|&(_, _, i)| slots[i].take().expect("each index once"))
            .collect();
        self.by_name = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, d)| (d.meta.name, i))
            .collect();
        self.by_name.sort_unstable();
        if let Some(pair) = self.by_name.windows(2).find(|w| w[0].0 == w[1].0) {
            panic!("tool {} registered twice", pair[0].0);
        }
        // The published list is in tools/list order too: each entry is usually the
        // next tool's, found by one comparison.
        let mut next = 0;
        for (name, entry) in crate::tools::registry::tool_list::published() {
            let at = if self.tools.get(next).is_some_and(|d| d.meta.name == name) {
                Some(next)
            } else {
                self.index_of(name)
            };
            if let Some(i) = at {
                self.tools[i].published = Some(entry);
                next = i + 1;
            }
        }
    }

    /// Adds a family's tools; [`Registry::finish`] orders and indexes them.
    pub(crate) fn extend(&mut self, defs: Vec<ToolDef>) {
        self.tools.extend(defs);
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name
            .binary_search_by(|&(n, _)| n.cmp(name))
            .ok()
            .map(|k| self.by_name[k].1)
    }

    /// Add a tool outside the built-ins (policy tests use synthetic tools).
    #[cfg(test)]
    pub(crate) fn insert_for_tests(&mut self, def: ToolDef) {
        self.tools.push(def);
        self.finish();
    }

    pub(crate) fn get(&self, name: &str) -> Option<&ToolDef> {
        self.index_of(name).map(|i| &self.tools[i])
    }

    /// Every tool in `tools/list` order: by toolset (the core first, as
    /// [`Toolset`] declares them), then by name. Stable across runs and versions that
    /// add tools, so a client's cache and a model's prompt prefix stay valid.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, ToolDef> {
        self.tools.iter()
    }

    // There is deliberately no `call` here: every call goes through
    // `safety::run_call`, so no path runs a tool around the gates.
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::Map;

    use super::reference::{DOCS_TABLE_BEGIN, DOCS_TABLE_END, reference_markdown};
    use super::*;
    use crate::error::ErrorCode;

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

    /// Guards against (issue 28): `expected_sha256: null` ("must not exist") published
    /// as a plain string — the registry strips `null` from every other optional field —
    /// so a client checking its arguments against tools/list cannot send it; and a create
    /// with it replacing a file someone else created. Every writer that creates a file
    /// publishes `["string", "null"]` (and not the marker that keeps it); with `null`
    /// each refuses an existing file (STALE) and leaves it as it was, and creates a
    /// missing one.
    #[tokio::test]
    async fn expected_sha256_null_is_published_and_refuses_an_existing_file() {
        let registry = Registry::builtin();
        let creates = [
            (
                "write_script",
                json!({"path": "res://a.gd", "content": "extends Node\n"}),
            ),
            (
                "create_resource",
                json!({"path": "res://a.tres", "type": "Curve", "overwrite": true}),
            ),
            (
                "create_material",
                json!({"path": "res://a_mat.tres", "overwrite": true}),
            ),
        ];
        for (name, _) in &creates {
            let def = registry.get(name).unwrap();
            // What tools/list sends (the published list) and what schemars makes now.
            for schema in [def.input_schema(), &def.generated_mcp().input_schema] {
                let schema = Value::Object((**schema).clone());
                let field = &schema["properties"]["expected_sha256"];
                assert_eq!(field["type"], json!(["string", "null"]), "{name}: {field}");
                assert!(
                    !schema
                        .to_string()
                        .contains(crate::planes::project::KEEP_NULL),
                    "{name}"
                );
            }
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        let state = crate::safety::Served::new(
            std::sync::Arc::new(crate::state::AppState::for_tests(dir.path())),
            crate::tools::builtin_for_tests(),
        );
        let call = crate::safety::pipeline::call_detached;
        for (name, args) in creates {
            let mut args = args;
            let obj = args.as_object_mut().unwrap();
            obj.insert("expected_sha256".into(), Value::Null);
            obj.insert("confirm".into(), json!(true));
            let rel = obj["path"].as_str().unwrap().trim_start_matches("res://");
            let file = dir.path().join(rel);
            call(&state, name, args.clone()).await.unwrap();
            let first = std::fs::read(&file).unwrap();
            std::fs::write(&file, b"someone else's\n").unwrap();
            let e = call(&state, name, args).await.unwrap_err();
            assert_eq!(e.code, ErrorCode::Stale, "{name}: {}", e.message);
            assert_eq!(std::fs::read(&file).unwrap(), b"someone else's\n", "{name}");
            assert!(!first.is_empty());
        }
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

    /// A mutating or destructive tool written as a direct handler would skip its dry
    /// run, and a read-only or runtime tool has no plan to show: `ToolDef::new` takes a
    /// [`OneStep`] class and `ToolDef::planned` a [`Plans`] one, so neither compiles.
    /// These fail to compile (an ambiguous impl) should a class ever be both, or a
    /// mutating or destructive class become one-step.
    #[test]
    fn handler_kinds_follow_the_class_type() {
        // `T: NotOneStep<_>` resolves only while `T` is not `OneStep` (else two impls).
        trait NotOneStep<A> {
            fn item() {}
        }
        impl<T: ?Sized> NotOneStep<()> for T {}
        struct IsOneStep;
        impl<T: OneStep> NotOneStep<IsOneStep> for T {}
        trait NotPlans<A> {
            fn item() {}
        }
        impl<T: ?Sized> NotPlans<()> for T {}
        struct IsPlans;
        impl<T: Plans> NotPlans<IsPlans> for T {}
        <class::Mutating as NotOneStep<_>>::item();
        <class::Destructive as NotOneStep<_>>::item();
        <class::ReadOnly as NotPlans<_>>::item();
        <class::Runtime as NotPlans<_>>::item();
        // And each marker's value is its class.
        assert_eq!(<class::Mutating as Class>::CLASS, SafetyClass::Mutating);
        assert_eq!(
            <class::Destructive as Class>::CLASS,
            SafetyClass::Destructive
        );
        assert_eq!(<class::ReadOnly as Class>::CLASS, SafetyClass::ReadOnly);
        assert_eq!(<class::Runtime as Class>::CLASS, SafetyClass::Runtime);
    }

    /// The node edits an agent's change stages are the tools defined with a staged
    /// form, and each is an editor edit (the only effect a change stages).
    #[test]
    fn the_staged_tools_are_the_node_edits() {
        let registry = crate::tools::builtin_for_tests();
        let mut staged: Vec<&str> = registry
            .iter()
            .filter(|d| d.staged.is_some())
            .map(|d| d.meta.name)
            .collect();
        staged.sort_unstable();
        let want = [
            "add_to_group",
            "create_node",
            "create_nodes",
            "set_node_property",
        ];
        assert_eq!(staged, want);
        for d in registry.iter().filter(|d| d.staged.is_some()) {
            assert_eq!(
                d.meta.effect,
                Some(EffectKind::EditorRuntime),
                "{}",
                d.meta.name
            );
        }
        // set_node_property's form: one set step, its answer naming the node.
        let form = registry
            .get("set_node_property")
            .unwrap()
            .staged
            .clone()
            .unwrap();
        let (steps, out) =
            form(json!({"node": "A", "property": "visible", "value": false})).unwrap();
        assert_eq!(steps.len(), 1);
        assert!(
            matches!(&steps[0], godot_mcp_protocol::commands::Step::Set { node, property, .. } if node == "A" && property == "visible")
        );
        assert_eq!(out["command"], "node.set_property");
        // Its own argument type decodes: an unknown field is refused by name.
        let e = form(json!({"node": "A", "property": "p", "value": 1, "x": 2})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams);
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
