//! The MCP face of the server: an rmcp `ServerHandler` over the tool registry.
// logging/setLevel is deprecated in rmcp (SEP-2577); clients' protocol versions carry it.
#![allow(deprecated)]

pub(crate) mod prompts;
pub(crate) mod raw_tools;
pub(crate) mod tasks;

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestParams, CompleteResult, ContentBlock, GetMeta, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingMessageNotification,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig, ServerNotification, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::json;

use crate::caller::{Principal, TransportKind};
use crate::counters::Counters;
use crate::safety::{CallContext, CallOutcome, Served, run_call};
use crate::tools::ToolDef;

/// One MCP session's handler. Cheap to clone; all state is shared.
#[derive(Debug, Clone)]
pub(crate) struct McpServer {
    /// The server's state and its tools (shared by every session).
    state: Arc<Served>,
    /// Set on stdio: tools/list is written from the published list's entries as they
    /// are (`transport::stdio`), never built as JSON values.
    raw_tools: Option<Arc<raw_tools::RawToolLists>>,
    /// Where calls come from; decides how each call's [`Principal`] is found.
    transport: TransportKind,
    /// HTTP only: what the transport's tests read to prove what reached a handler.
    counters: Option<Arc<Counters>>,
    /// This session, among the sessions told of a toolset change.
    session: u64,
    /// Dropped with the session's last handler: its open change is abandoned.
    _ends: Arc<crate::tools::change::SessionEnd>,
    /// Dropped with the session's last handler: its resource subscriptions go.
    _subscribed: Arc<SubscriptionsEnd>,
    /// The server's tasks (every session's: a client that reconnects polls the same).
    tasks: Arc<tasks::Tasks>,
}

/// Drops a session's `resources/subscribe` entries when the session ends.
#[derive(Debug)]
struct SubscriptionsEnd {
    state: Arc<Served>,
    session: u64,
}

impl Drop for SubscriptionsEnd {
    fn drop(&mut self) {
        self.state.subscriptions.forget(self.session);
    }
}

/// Keys for [`McpServer::session`].
static NEXT_SESSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl McpServer {
    /// The handler for the stdio client (principal `local`).
    pub(crate) fn new(state: Arc<Served>) -> Self {
        let session = NEXT_SESSION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self {
            _ends: Arc::new(crate::tools::change::SessionEnd::new(
                state.state.clone(),
                session,
            )),
            _subscribed: Arc::new(SubscriptionsEnd {
                state: state.clone(),
                session,
            }),
            state,
            raw_tools: None,
            transport: TransportKind::Stdio,
            counters: None,
            session,
            tasks: Arc::default(),
        }
    }

    /// The stdio handler whose tools/list the transport's writer completes from the
    /// published list (`transport::stdio::serve_stdio`).
    pub(crate) fn with_raw_tools(self, lists: Arc<raw_tools::RawToolLists>) -> Self {
        Self {
            raw_tools: Some(lists),
            ..self
        }
    }

    /// A handler for one HTTP session (or one stateless request); `tasks` are the
    /// server's, shared by every session.
    pub(crate) fn for_http(
        state: Arc<Served>,
        counters: Arc<Counters>,
        tasks: Arc<tasks::Tasks>,
    ) -> Self {
        Self {
            transport: TransportKind::Http,
            counters: Some(counters),
            tasks,
            ..Self::new(state)
        }
    }

    /// The state dir, where finished tasks' answers are kept.
    fn state_dir(&self) -> std::path::PathBuf {
        self.state.journal.lock().state_dir().to_path_buf()
    }

    /// A call of a [`tasks::TASK_TOOLS`] tool from a client that declared the tasks
    /// extension: the call runs on its own, and once its first launch is journaled the
    /// answer is a task named by that transaction. A call that ends first is answered
    /// as it ends (a refusal changes nothing and needs no task).
    async fn call_as_task(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        ctx: CallContext,
    ) -> Result<CallToolResponse, McpError> {
        let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
        let cancel = tokio_util::sync::CancellationToken::new();
        let served = self.state.clone();
        let name = request.name.clone();
        let work_cancel = cancel.clone();
        let mut work = tokio::spawn(async move {
            let Some(def) = served.registry.get(&name) else {
                unreachable!("call_tool found {name}")
            };
            let outcome = crate::call_scope::run_task(
                work_cancel,
                heard_tx,
                run_call(&served, def, request.arguments, &ctx),
            )
            .await;
            served.subscriptions.journal_changed(&served.journal);
            match outcome {
                CallOutcome::InputRequired(input) => CallToolResponse::from(input),
                CallOutcome::Done(Ok(value)) => tool_result(&served.captures, def, value).into(),
                CallOutcome::Done(Err(err)) => err.into_call_result().into(),
            }
        });
        // The first launch names the task; a call that ends before launching is answered.
        let mut withdrawn = false;
        let txn = loop {
            tokio::select! {
                heard_now = heard.recv() => match heard_now {
                    Some(crate::call_scope::Heard::Launched(txn)) => break txn,
                    Some(crate::call_scope::Heard::Step(_)) => {}
                    None => return join_answer(work.await),
                },
                done = &mut work => return join_answer(done),
                // The request withdrawn before a task exists: the call is cancelled.
                () = context.ct.cancelled(), if !withdrawn => {
                    withdrawn = true;
                    cancel.cancel();
                }
            }
        };
        let task = self.tasks.start(&txn, &request.name, cancel);
        let tasks = self.tasks.clone();
        let state_dir = self.state_dir();
        tokio::spawn(async move {
            let finished = loop {
                tokio::select! {
                    heard_now = heard.recv() => {
                        if let Some(crate::call_scope::Heard::Step(step)) = heard_now {
                            tasks.step(&txn, &step);
                        } else if heard_now.is_none() {
                            break work.await;
                        }
                    }
                    done = &mut work => break done,
                }
            };
            match finished {
                Ok(response) => {
                    match serde_json::to_value(rmcp::model::ServerResult::from(response)) {
                        Ok(serde_json::Value::Object(result)) => {
                            tasks.finish(&txn, result, &state_dir)
                        }
                        _ => tasks.fail(
                            &txn,
                            internal_error("the result could not be encoded"),
                            &state_dir,
                        ),
                    }
                }
                Err(e) => tasks.fail(&txn, internal_error(&e.to_string()), &state_dir),
            }
        });
        Ok(rmcp::model::CreateTaskResult::new(task).into())
    }

    /// After a call changed the toolsets: a 2025-11-25 caller's session learns it in
    /// the call's own stream, every other initialized session through its peer, and
    /// every `subscriptions/listen` stream that asked for `toolsListChanged` on that
    /// stream (a 2026-07-28 caller hears it there only: that revision sends list
    /// changes on listen streams alone).
    async fn announce_tool_list_changed(&self, caller: &RequestContext<RoleServer>) {
        if !modern(caller)
            && let Err(e) = caller.peer.notify_tool_list_changed().await
        {
            tracing::debug!(error = %e, "could not send tools/list_changed");
        }
        for peer in self.state.safety.other_listeners(self.session) {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!(error = %e, "could not send tools/list_changed to a session");
            }
        }
        self.state.subscriptions.tools_changed().await;
    }
}

/// Whether the request speaks 2026-07-28 or later (caching hints, listen streams).
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// A result that carries 2026-07-28's caching hints (rmcp gives each its own
/// `with_ttl_ms` / `with_cache_scope`, not a shared trait).
trait CachingHints: Sized {
    fn with_hints(self, ttl_ms: u64, scope: CacheScope) -> Self;
}

macro_rules! caching_hints {
    ($($t:ty),*) => {$(
        impl CachingHints for $t {
            fn with_hints(self, ttl_ms: u64, scope: CacheScope) -> Self {
                self.with_ttl_ms(ttl_ms).with_cache_scope(scope)
            }
        }
    )*};
}
caching_hints!(
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult
);

/// `result` with caching hints for a 2026-07-28 client; as it is for an older one (it
/// would only carry the unknown fields).
fn hinted<R: CachingHints>(
    result: R,
    context: &RequestContext<RoleServer>,
    ttl_ms: u64,
    scope: CacheScope,
) -> R {
    if modern(context) {
        result.with_hints(ttl_ms, scope)
    } else {
        result
    }
}

/// How long a client may reuse what never changes while this server runs: the
/// prompts, the resource list and the resource templates.
pub(crate) const STATIC_LIST_TTL_MS: u64 = 60 * 60 * 1000;

/// A task id this server never gave (or whose answer is past its TTL).
fn unknown_task(id: &str) -> McpError {
    McpError::invalid_params(
        format!("no task {id}"),
        Some(json!({
            "code": "UNKNOWN_TASK",
            "task_id": id,
            "hint": "a task's id is the journal transaction of its launch: list_transactions names them"
        })),
    )
}

/// A JSON-RPC internal error, as a failed task carries it.
fn internal_error(message: &str) -> rmcp::model::JsonObject {
    let mut error = rmcp::model::JsonObject::new();
    error.insert("code".into(), json!(-32603));
    error.insert("message".into(), json!(message));
    error
}

/// The answer of a task-capable call that ended before it launched anything.
fn join_answer(
    done: Result<CallToolResponse, tokio::task::JoinError>,
) -> Result<CallToolResponse, McpError> {
    done.map_err(|e| McpError::internal_error(e.to_string(), None))
}

fn refused(r: crate::subscriptions::Refused) -> McpError {
    let (code, hint) = r.code_and_hint();
    McpError::invalid_request(r.to_string(), Some(json!({ "code": code, "hint": hint })))
}

/// A successful tool result. A tool whose result type carries an image (registered
/// with [`ToolDef::imaging`]) also sends that capture's bytes as MCP image content, so
/// clients show it as a picture; the structured content keeps the reference, never the
/// bytes. Any other tool's result is sent as it is, whatever keys it holds.
fn tool_result(
    captures: &crate::captures::Captures,
    def: &ToolDef,
    value: serde_json::Value,
) -> CallToolResult {
    let image = def.image_of.and_then(|image_of| image_of(&value));
    let Some((data, mime)) = image
        .as_ref()
        .and_then(|i| crate::tools::runtime::screenshots::image_content(captures, i))
    else {
        return CallToolResult::structured(value);
    };
    let mut result = CallToolResult::success(vec![
        ContentBlock::image(data, mime),
        ContentBlock::text(value.to_string()),
    ]);
    result.structured_content = Some(value);
    result
}

pub(crate) use crate::subscriptions::{TRANSACTION_TEMPLATE, TRANSACTIONS_URI};

const INSTRUCTIONS: &str = "godot-mcp reads and edits one Godot 4 project. File paths are \
res:// paths inside the project. To build or change a scene, one call: create_nodes \
{\"scene\": \"res://main.tscn\", \"save\": true, \"steps\": [...]} opens (or creates) it, \
creates and sets nodes, and saves it; an editor starts by itself when none is connected. \
Add \"check\": [\"get_node(\\\"Player\\\").speed\", \"take_damage(10)\"] and the same call runs the saved \
scene headless and answers each Godot Expression's value (base: the scene's root, after _ready; \
{\"frame\": 30, \"expression\": \"position\"} after 30 physics frames, in order); \
without steps it only checks the saved scene (no scene: a blank one, for scripts, \
resources and autoloads). \
The tile map, animation and ui tools take scene, save and check the same way. write_script writes a script and answers Godot's parse errors; set_setting sets project.godot. \
Every tool carries _meta.safety_class: read_only tools change nothing; mutating tools take \
dry_run (preview, change nothing); destructive tools take dry_run and need confirm=true. A \
tool you need is not listed? manage_toolsets {\"find\": \"what you need, e.g. tile map\"} \
searches every tool's name and description and enables the best match's toolset in the same \
call, so you can call it next; list_toolsets shows every toolset.";

/// How long a client may reuse a tools/list result (protocol 2026-07-28 caching hints).
/// The list changes only when toolsets change, and then notifications/tools/list_changed
/// invalidates a cache at once: in the caller's own stream, and to every other session
/// that completed initialize. The TTL bounds how long a session that cannot be told
/// (a stateless 2026-07-28 client) may see an old list.
pub const TOOLS_LIST_TTL_MS: u64 = 5 * 60 * 1000;

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_completions()
                .enable_prompts()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_tool_list_changed()
                .enable_tasks()
                .build(),
        )
        .with_server_info(
            Implementation::new("godot-mcp", env!("CARGO_PKG_VERSION")).with_title("godot-mcp"),
        )
        .with_instructions(match crate::overview::overview(&self.state) {
            Some(o) => format!("{INSTRUCTIONS}\n\n{o}"),
            None => INSTRUCTIONS.to_string(),
        })
    }

    /// A session that completed initialize (protocols before 2026-07-28) hears of
    /// toolset changes other sessions make.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.state.safety.listen(self.session, context.peer);
    }

    /// From now on this session gets the server's log lines at `level` and above.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state
            .log
            .set_level(self.session, request.level, context.peer);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(counters) = &self.counters {
            Counters::bump(&counters.handler_calls);
        }
        // Tools of disabled toolsets are not offered.
        let enabled = self.state.safety.enabled();
        let defs = self
            .state
            .registry
            .iter()
            .filter(|d| enabled.contains(&d.meta.toolset));
        let tools = match &self.raw_tools {
            // One stand-in the writer replaces with the published entries.
            Some(lists) => {
                vec![lists.stand_in(crate::tools::registry::raw_members(defs))]
            }
            // Each tool parsed once per process, shared by every session.
            None => defs.map(ToolDef::to_mcp).collect(),
        };
        let result = ListToolsResult::with_all_items(tools);
        // Private: the list follows this server's toolset state.
        Ok(hinted(
            result,
            &context,
            TOOLS_LIST_TTL_MS,
            CacheScope::Private,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let result = ListPromptsResult::with_all_items(
            prompts::WORKFLOWS
                .iter()
                .map(prompts::Workflow::to_prompt)
                .collect(),
        );
        // The same for every client of this build: public.
        Ok(hinted(
            result,
            &context,
            STATIC_LIST_TTL_MS,
            CacheScope::Public,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let Some(workflow) = prompts::find(&request.name) else {
            let names: Vec<&str> = prompts::WORKFLOWS.iter().map(|w| w.name).collect();
            return Err(McpError::invalid_params(
                format!("no prompt {}", request.name),
                Some(json!({
                    "code": "UNKNOWN_PROMPT",
                    "prompt": request.name,
                    "prompts": names,
                    "hint": "prompts/list names every prompt and its arguments"
                })),
            ));
        };
        workflow
            .get(request.arguments.as_ref())
            .map(Into::into)
            .map_err(|message| {
                McpError::invalid_params(
                    message,
                    Some(json!({
                        "code": "BAD_PROMPT_ARGUMENTS",
                        "prompt": workflow.name,
                        "hint": "prompts/list gives each argument, whether it is required and its default"
                    })),
                )
            })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let result = ListResourcesResult::with_all_items(vec![
            Resource::new(TRANSACTIONS_URI, "transactions")
                .with_title("Journal transactions")
                .with_description(
                    "The project's journaled transactions (newest first) and the write gate.",
                )
                .with_mime_type("application/json"),
        ]);
        Ok(hinted(
            result,
            &context,
            STATIC_LIST_TTL_MS,
            CacheScope::Public,
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let result = ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(TRANSACTION_TEMPLATE, "transaction")
                .with_title("One journal transaction")
                .with_description("One transaction's row: state, operation, path, proof, reason.")
                .with_mime_type("application/json"),
        ]);
        Ok(hinted(
            result,
            &context,
            STATIC_LIST_TTL_MS,
            CacheScope::Public,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let not_found = || {
            McpError::resource_not_found(
                format!("no resource {}", request.uri),
                Some(
                    json!({ "uri": request.uri, "hint": "resources/list and resources/templates/list name every resource" }),
                ),
            )
        };
        let value = if request.uri == TRANSACTIONS_URI {
            crate::tools::transactions::transactions_json(&self.state.state, None, 100)
                .map_err(|e| McpError::internal_error(e.text(), None))?
        } else if let Some(id) = request.uri.strip_prefix(&format!("{TRANSACTIONS_URI}/")) {
            let row =
                crate::subscriptions::transaction(&self.state.journal, id).ok_or_else(not_found)?;
            serde_json::to_value(row).map_err(|e| McpError::internal_error(e.to_string(), None))?
        } else {
            return Err(not_found());
        };
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri.clone(),
            mime_type: Some("application/json".into()),
            text: value.to_string(),
            meta: None,
        };
        let result = ReadResourceResult::new(vec![contents]);
        // The journal changes with every write: fresh each time, this project's only.
        Ok(hinted(result, &context, 0, CacheScope::Private).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state
            .subscriptions
            .subscribe(&self.state.journal, self.session, request.uri, context.peer)
            .map_err(refused)
    }

    /// `subscriptions/listen` (2026-07-28): what this server can tell a listen stream.
    /// Tool-list changes, and updates of the resources it serves (at most
    /// [`MAX_PER_SESSION`](crate::subscriptions::MAX_PER_SESSION) of them, the
    /// first named); the acknowledgement names exactly what was accepted. Prompts and
    /// the resource list never change while the server runs.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut uris: Vec<String> = Vec::new();
        for uri in requested.resource_subscriptions.iter().flatten() {
            if crate::subscriptions::served(uri)
                && !uris.contains(uri)
                && uris.len() < crate::subscriptions::MAX_PER_SESSION
            {
                uris.push(uri.clone());
            }
        }
        let mut accepted = SubscriptionFilter::builder().tools_list_changed();
        if !uris.is_empty() {
            accepted = accepted.resource_subscriptions(uris);
        }
        Some(accepted.build())
    }

    /// One listen stream, acknowledged (by rmcp, first) and then open until its
    /// request ends: tool-list changes and resource updates reach it through
    /// [`Subscriptions`](crate::subscriptions::Subscriptions); log lines at the
    /// request's `_meta` `logLevel` and above go out here, each tagged with the
    /// subscription id like every other notification on the stream.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let subscriptions = &self.state.subscriptions;
        let _open = subscriptions
            .open_listen(context.sink().clone())
            .map_err(refused)?;
        if context.accepted().resource_subscriptions.is_some() {
            subscriptions.prime(&self.state.journal);
        }
        let request = context.request_context();
        let Some(level) = request.meta.log_level() else {
            context.cancelled().await;
            return Ok(());
        };
        let mut lines = self.state.log.tap(self.session, level);
        let id = context.sink().id().clone();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                line = lines.recv() => {
                    let Some(line) = line else { break };
                    let mut note = ServerNotification::LoggingMessageNotification(
                        LoggingMessageNotification::new(line),
                    );
                    note.get_meta_mut().set_subscription_id(id.clone());
                    if request.peer.send_notification(note).await.is_err() {
                        break;
                    }
                }
            }
        }
        context.cancelled().await;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.state
            .subscriptions
            .unsubscribe(self.session, &request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let context = request
            .context
            .and_then(|c| c.arguments)
            .unwrap_or_default();
        let state = self.state.state.clone();
        let (name, value) = (request.argument.name, request.argument.value);
        // A walk of the project is file-system work: off the async threads.
        let completion = tokio::task::spawn_blocking(move || {
            crate::completion::complete(&state, &name, &value, &context)
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(CompleteResult::new(completion))
    }

    /// `tasks/get`: a task this server runs or ran (memory, then the state dir), else
    /// one whose launch the journal holds (the server that ran it restarted).
    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let id = &request.task_id;
        let task = self.tasks.get(id, &self.state_dir()).or_else(|| {
            crate::subscriptions::transaction(&self.state.journal, id)
                .filter(|row| row.effect_kind == godot_mcp_journal::EffectKind::ProcessLaunch)
                .map(|row| tasks::from_journal(&row))
        });
        task.map(GetTaskResult::new).ok_or_else(|| unknown_task(id))
    }

    /// `tasks/cancel`: the task's call is cancelled, which kills its launch; the task
    /// reads `cancelled` once the launch has ended. A task that already ended is
    /// acknowledged unchanged (cancelling is idempotent).
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let id = &request.task_id;
        // A task of a server that restarted is known by its launch's row, and ended.
        if self.tasks.cancel(id, &self.state_dir())
            || crate::subscriptions::transaction(&self.state.journal, id)
                .is_some_and(|row| row.effect_kind == godot_mcp_journal::EffectKind::ProcessLaunch)
        {
            Ok(())
        } else {
            Err(unknown_task(id))
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state.registry.get(name).map(ToolDef::to_mcp)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let principal = Principal::of(self.transport, &context);
        if let Some(counters) = &self.counters {
            counters.record_tool_call(&principal.id);
        }
        let Some(def) = self.state.registry.get(&request.name) else {
            // The closest tool, and how to list it (tools/toolsets.rs).
            let (closest, hint) = crate::tools::toolsets::unknown_tool_hint(
                self.state.registry.iter().map(|d| &d.meta),
                &self.state.safety.enabled(),
                &request.name,
            );
            let message = match closest {
                Some(c) => format!("unknown tool: {}; did you mean {c}?", request.name),
                None => format!("unknown tool: {}", request.name),
            };
            return Err(McpError::invalid_params(
                message,
                Some(json!({
                    "code": "UNKNOWN_TOOL",
                    "tool": request.name,
                    "closest": closest,
                    "hint": hint
                })),
            ));
        };
        // Every call passes the safety policy; see safety.rs for the order of gates.
        let ctx =
            CallContext::from_request(&request, &context, &principal).in_session(self.session);
        if tasks::TASK_TOOLS.contains(&def.meta.name)
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks())
        {
            return self.call_as_task(request, context, ctx).await;
        }
        let generation = self.state.safety.generation();
        let call = run_call(&self.state, def, request.arguments, &ctx);
        // The call's scope: its cancellation (a launch is killed, held input released)
        // and, when the request asked for it, its progress steps.
        let outcome = crate::call_scope::run(
            context.ct.clone(),
            context.meta.get_progress_token(),
            context.peer.clone(),
            call,
        )
        .await;
        if self.state.safety.generation() != generation {
            self.announce_tool_list_changed(&context).await;
        }
        self.state
            .subscriptions
            .journal_changed(&self.state.journal);
        let result = match outcome {
            CallOutcome::InputRequired(input) => return Ok(input.into()),
            CallOutcome::Done(Ok(value)) => tool_result(&self.state.captures, def, value),
            CallOutcome::Done(Err(err)) => {
                tracing::debug!(tool = def.meta.name, error = %err, "tool error");
                err.into_call_result()
            }
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::tool_result;
    use crate::captures::{Capture, Captures};
    use crate::rules::Toolset;
    use crate::tools::runtime::screenshots::{ImageRef, Shot};
    use crate::tools::{Call, ToolDef, ToolMeta};

    fn meta(name: &'static str) -> ToolMeta<crate::rules::class::ReadOnly> {
        ToolMeta {
            name,
            title: name,
            description: name,
            class: crate::rules::class::ReadOnly,
            toolset: Toolset::Runtime,
            effect: None,
        }
    }

    /// A stored capture and the reference a result would carry for it.
    fn stored(captures: &Captures) -> ImageRef {
        let png = vec![0x89, b'P', b'N', b'G'];
        let bytes = png.len();
        let capture_id = captures.store(Capture {
            png: Arc::new(png),
            width: 1,
            height: 1,
        });
        ImageRef {
            capture_id,
            mime_type: "image/png".into(),
            width: 1,
            height: 1,
            bytes,
        }
    }

    fn image_blocks(r: &rmcp::model::CallToolResult) -> usize {
        r.content
            .iter()
            .filter(|c| serde_json::to_value(c).unwrap()["type"] == "image")
            .count()
    }

    /// A tool whose result type declares an image sends it as MCP image content.
    #[test]
    fn an_imaging_tool_result_carries_its_capture_as_image_content() {
        let def = ToolDef::imaging(meta("shoots"), |_: Call<Value>| async move {
            Err::<Shot<()>, _>(crate::error::ToolError::internal(
                "never called".to_string(),
            ))
        });
        let captures = Captures::default();
        let image = stored(&captures);
        let value =
            json!({"image": image, "capture_id": image.capture_id, "width": 1, "height": 1});
        let r = tool_result(&captures, &def, value.clone());
        assert_eq!(image_blocks(&r), 1, "{r:?}");
        assert_eq!(r.structured_content, Some(value));
    }

    /// A tool whose result type declares no image is never searched for one, even when
    /// its JSON holds an `image` key naming a real capture.
    #[test]
    fn a_result_with_an_image_key_is_not_an_image_unless_its_type_says_so() {
        let def = ToolDef::new(
            meta("echoes"),
            |Call { args: v, .. }: Call<Value>| async move { Ok::<Value, crate::error::ToolError>(v) },
        );
        let captures = Captures::default();
        let value =
            json!({"image": stored(&captures), "note": "a field that happens to be called image"});
        let r = tool_result(&captures, &def, value.clone());
        assert_eq!(image_blocks(&r), 0, "{r:?}");
        assert_eq!(r.structured_content, Some(value));
    }

    /// A tool's MCP description is parsed once per process: every session (an HTTP
    /// session each) shares its schemas.
    #[test]
    fn sessions_share_one_tool_list() {
        let registry = crate::tools::Registry::builtin();
        let def = registry.get("add_animation").unwrap();
        let (first, second) = (def.to_mcp(), def.to_mcp());
        assert!(Arc::ptr_eq(&first.input_schema, &second.input_schema));
    }
}
