//! The call pipeline: [`run_call`] drives one tool call through every gate in the
//! order the module docs of `safety` give; `run_batch` does it for run_commands.

use super::approval::{Approval, ApprovalRequest, BatchEntryView, CallContext, approve};
use crate::rules::{EffectKind, SafetyClass, confirm_gate, is_gated};
use crate::tools::batch::{BatchArgs, BatchEntry, BatchEntryResult, BatchResult, MAX_BATCH};
use crate::tools::change::{self, ChangeTool};

use std::sync::Arc;

use rmcp::model::{InputRequiredResult, JsonObject};
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::BatchReport;
use crate::state::AppState;
use crate::tools::{CallFlags, Handler, Registry, ToolDef, ToolResult, decode_args, split_flags};

// ---------------------------------------------------------------------------------
// The call pipeline
// ---------------------------------------------------------------------------------

/// What a call produces: a result (or tool error), or a request for client input.
#[derive(Debug)]
pub(crate) enum CallOutcome {
    Done(ToolResult),
    InputRequired(InputRequiredResult),
}

/// What the transport hands down to the server and the pipeline: the server's state
/// and the tools it serves (the registry lives here, above the tools, never in the
/// state the tools see). Every session of a server shares one.
pub(crate) struct Served {
    pub state: Arc<AppState>,
    pub registry: Arc<Registry>,
    /// `serve --trace FILE`: one line per call ([`crate::trace`]).
    pub trace: Option<crate::trace::Trace>,
}

impl Served {
    pub(crate) fn new(state: Arc<AppState>, registry: Arc<Registry>) -> Self {
        Self {
            state,
            registry,
            trace: None,
        }
    }

    /// Every call of this server appends its line to `trace`.
    pub(crate) fn with_trace(mut self, trace: Option<crate::trace::Trace>) -> Self {
        self.trace = trace;
        self
    }
}

impl std::ops::Deref for Served {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.state
    }
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("state", &self.state)
            .finish()
    }
}

/// Run one tool call through every gate, in the order the module docs give; with a
/// call trace, its line is written when the answer is ready.
pub(crate) async fn run_call(
    served: &Served,
    def: &ToolDef,
    args: Option<JsonObject>,
    ctx: &CallContext,
) -> CallOutcome {
    let Some(trace) = &served.trace else {
        return run_call_untraced(served, def, args, ctx).await;
    };
    let started = std::time::Instant::now();
    let bytes_in = args
        .as_ref()
        .map_or(2, |a| serde_json::to_vec(a).map_or(0, |v| v.len()));
    let outcome = run_call_untraced(served, def, args, ctx).await;
    let (outcome_kind, error_code, bytes_out) = match &outcome {
        CallOutcome::Done(Ok(v)) => (crate::trace::Outcome::Ok, None, json_len(v)),
        CallOutcome::Done(Err(e)) => (
            crate::trace::Outcome::of_code(e.code),
            Some(e.code.as_str()),
            serde_json::to_value(e).map_or(0, |v| json_len(&v)),
        ),
        CallOutcome::InputRequired(r) => (
            crate::trace::Outcome::Refused,
            Some("INPUT_REQUIRED"),
            serde_json::to_value(r).map_or(0, |v| json_len(&v)),
        ),
    };
    trace.record(&crate::trace::Line {
        tool: def.meta.name,
        duration: started.elapsed(),
        outcome: outcome_kind,
        error_code,
        bytes_in,
        bytes_out,
    });
    outcome
}

fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(0, |v| v.len())
}

async fn run_call_untraced(
    served: &Served,
    def: &ToolDef,
    args: Option<JsonObject>,
    ctx: &CallContext,
) -> CallOutcome {
    let change = served
        .changes
        .of(ctx.session)
        .map(|h| h.lock().id.to_string());
    let outcome = match run_call_inner(served, def, args.unwrap_or_default(), ctx).await {
        Ok(CallOutcome::Done(Ok(Value::Object(out)))) => CallOutcome::Done(Ok(Value::Object(
            crate::honesty::nothing_persisted_by_a_dry_run(out),
        ))),
        Ok(outcome) => outcome,
        Err(e) => CallOutcome::Done(Err(e)),
    };
    // Test builds prove every result against the tool's published outputSchema.
    #[cfg(feature = "output-check")]
    if let CallOutcome::Done(Ok(v)) = &outcome
        && let Err(e) = crate::output_check::check(def, v)
    {
        return CallOutcome::Done(Err(e));
    }
    // Every answer inside an agent's change names it (docs/recovery.md).
    match (outcome, change) {
        (CallOutcome::Done(Ok(Value::Object(mut out))), Some(id)) => {
            out.insert("change_id".into(), json!(id));
            CallOutcome::Done(Ok(Value::Object(out)))
        }
        (CallOutcome::Done(Err(e)), Some(id)) => {
            CallOutcome::Done(Err(crate::tools::change::with_change_id(e, &id)))
        }
        (outcome, _) => outcome,
    }
}

/// [`run_call`] with no client to ask (tests): a call that would ask one panics.
#[cfg(test)]
pub(crate) async fn call_detached(served: &Served, tool: &str, args: Value) -> ToolResult {
    let def = served.registry.get(tool).unwrap();
    let Value::Object(args) = args else {
        panic!("args must be an object")
    };
    match run_call(served, def, Some(args), &CallContext::detached()).await {
        CallOutcome::Done(r) => r,
        CallOutcome::InputRequired(_) => panic!("unexpected input-required"),
    }
}

async fn run_call_inner(
    served: &Served,
    def: &ToolDef,
    original: JsonObject,
    ctx: &CallContext,
) -> Result<CallOutcome, ToolError> {
    let state = &served.state;
    state
        .safety
        .check_enabled(def.meta.name, def.meta.toolset)?;
    let mut args = original.clone();
    let flags = split_flags(def.meta.class, &mut args)?;
    if matches!(def.handler, Handler::Batch) {
        if let Some(tool) = ChangeTool::of(def.meta.name) {
            let out = change::run(state, tool, ctx.session, Value::Object(args), flags).await;
            return Ok(CallOutcome::Done(out));
        }
        return run_batch(served, def, original, args, flags, ctx).await;
    }
    // Inside an agent's change: only what can be staged (or changes nothing) runs.
    let stage = state.changes.of(ctx.session);
    if let Some(stage) = &stage {
        change::admit(def, flags.dry_run, &stage.lock().id.to_string())?;
    }
    let idempotency_key = crate::tools::take_idempotency_key(def, &mut args)?;
    if stage.is_some() && idempotency_key.is_some() {
        return Err(ToolError::invalid_params(
            crate::tools::IDEMPOTENCY_KEY,
            "idempotency_key is not taken inside a change (its writes are staged); nothing was run",
        ));
    }
    // Paths first, on the JSON as sent: a hostile res:// path is PATH_REFUSED even
    // where it sits in a value the typed decode would refuse for another reason. Then
    // the arguments, then confirm: a call with a wrong or missing field learns that
    // first, not only that it lacks confirm (issue 40: an agent met the confirm refusal
    // for a call whose `content` it had misnamed).
    crate::project_root::check_arg_paths(&state.project, def.input_schema(), &args)?;
    (def.check_args)(&Value::Object(args.clone()))?;
    confirm_gate(def.meta.name, def.meta.class, def.meta.effect, flags)?;
    // An exact replay answers from the journal before anything is planned: its
    // preconditions (a compare-and-swap hash, say) held for the first run, not now.
    let idempotency = match idempotency_key {
        Some(id) if !flags.dry_run => {
            let key = godot_mcp_journal::IdempotencyKey {
                id,
                principal: ctx.principal.principal.id.clone(),
                session: ctx
                    .principal
                    .principal
                    .session_id
                    .clone()
                    .unwrap_or_default(),
                request_hash: godot_mcp_journal::canonical_request_hash(
                    &json!({ "tool": def.meta.name, "arguments": args }),
                ),
            };
            let found =
                state
                    .journal
                    .lock()
                    .lookup_replay(&key, def.meta.toolset.as_str(), def.meta.name);
            match found {
                Ok(Some(replay)) => {
                    return Ok(CallOutcome::Done(Ok(
                        serde_json::to_value(replay).unwrap_or_default()
                    )));
                }
                Ok(None) => Some(key),
                Err(godot_mcp_journal::ReplayLookupError::Conflict { id }) => {
                    return Err(ToolError::new(
                        ErrorCode::Conflict,
                        format!(
                            "idempotency_key {id:?} was already used in a different context \
                             (another tool, session, project generation or request); nothing was run"
                        ),
                    )
                    .param(crate::tools::IDEMPOTENCY_KEY)
                    .hint("Use a fresh idempotency_key for a different request."));
                }
                Err(e) => {
                    tracing::error!(error = %e, "idempotency lookup failed");
                    return Err(ToolError::internal("the journal could not be read"));
                }
            }
        }
        _ => None,
    };
    let journal_call = crate::planes::project::JournalCall {
        toolset: def.meta.toolset.as_str(),
        tool: def.meta.name,
        idempotency,
        stage,
    };
    let gated = is_gated(def.meta.class, def.runtime) && !flags.dry_run;
    let request = || ApprovalRequest {
        tool: def.meta.name.to_string(),
        class: def.meta.class,
        arguments: original.clone(),
        batch: None,
        principal: ctx.principal.clone(),
    };
    // An editing tool with no editor connected starts the managed one (when it may:
    // tools::runtime::auto_start_editor); the call then waits for it to say hello. With
    // the bridge connected there is nothing to start, and the managed editor's code is off
    // the call's path.
    if def.meta.effect == Some(crate::rules::EffectKind::EditorRuntime)
        && !matches!(
            state.editor.bridge_status(),
            crate::rules::BridgeStatus::Connected { .. }
        )
    {
        crate::tools::runtime::auto_start_editor(state).await;
    }
    // Inside a change, a node edit is checked and staged, not sent (tools::editor).
    if let Some(stage) = journal_call.stage.clone()
        && let Some(form) = change::staged_editor(def, flags.dry_run)
    {
        let staged =
            crate::tools::kit::editor::stage_edit(state.clone(), def.meta.name, form, args, stage);
        return Ok(CallOutcome::Done(staged.await));
    }
    match &def.handler {
        Handler::Direct(handler) => {
            if gated && let Approval::InputRequired(r) = approve(state, ctx, &request()).await? {
                return Ok(CallOutcome::InputRequired(r));
            }
            Ok(CallOutcome::Done(
                handler(state.clone(), Value::Object(args), flags).await,
            ))
        }
        Handler::Planned(planner) if !flags.dry_run && !gated => Ok(CallOutcome::Done(
            plan_and_apply_blocking(planner, state, args, journal_call).await,
        )),
        Handler::Planned(planner) => {
            let plan = plan_blocking(planner, state, args).await?;
            if flags.dry_run {
                let effect = preview_effect(plan).await?;
                return Ok(CallOutcome::Done(Ok(preview(def, flags, effect))));
            }
            if gated && let Approval::InputRequired(r) = approve(state, ctx, &request()).await? {
                return Ok(CallOutcome::InputRequired(r));
            }
            Ok(CallOutcome::Done(apply_blocking(plan, journal_call).await))
        }
        Handler::Batch => Err(ToolError::internal(
            "batch handler reached the single-call path",
        )),
    }
}

/// A dry run's answer: the plan's effect, marked as not applied.
fn preview(def: &ToolDef, flags: CallFlags, effect: Map<String, Value>) -> Value {
    let mut out = effect;
    out.insert("dry_run".into(), json!(true));
    out.insert("applied".into(), json!(false));
    out.insert(
        "confirm_required".into(),
        json!(def.meta.class.requires_confirm() && !flags.confirm),
    );
    Value::Object(crate::honesty::nothing_persisted_by_a_dry_run(out))
}

/// A dry run's effect: the plan's, completed by its preview step where it has one.
async fn preview_effect(plan: crate::tools::ErasedPlan) -> Result<Map<String, Value>, ToolError> {
    let mut effect = plan.effect;
    if let Some(step) = plan.preview {
        let more = tokio::task::spawn_blocking(step)
            .await
            .map_err(|e| ToolError::internal(format!("preview task failed: {e}")))??;
        effect.extend(more);
    }
    Ok(effect)
}

/// Plans read files; run them off the async threads (the stdio server runs on one).
async fn plan_blocking(
    planner: &crate::tools::PlanFn,
    state: &Arc<AppState>,
    args: JsonObject,
) -> Result<crate::tools::ErasedPlan, ToolError> {
    let (planner, state) = (planner.clone(), state.clone());
    tokio::task::spawn_blocking(move || planner(state, Value::Object(args)))
        .await
        .map_err(|e| ToolError::internal(format!("planning task failed: {e}")))?
}

/// A real run that asks nobody between its plan and its apply: both in one blocking
/// task, one hand-off to the blocking pool and back instead of two (the edit round
/// trip, docs/performance.md). The plan still completes, every precondition checked,
/// before anything is applied.
async fn plan_and_apply_blocking(
    planner: &crate::tools::PlanFn,
    state: &Arc<AppState>,
    args: JsonObject,
    mut call: crate::planes::project::JournalCall,
) -> ToolResult {
    let (planner, state) = (planner.clone(), state.clone());
    tokio::task::spawn_blocking(move || apply(planner(state, Value::Object(args))?, &mut call))
        .await
        .map_err(|e| ToolError::internal(format!("apply task failed: {e}")))?
}

/// Applying fsyncs; run it off the async threads too. `call` names the call to the
/// journal (toolset, tool, idempotency key) for the writes the plan makes.
async fn apply_blocking(
    plan: crate::tools::ErasedPlan,
    mut call: crate::planes::project::JournalCall,
) -> ToolResult {
    tokio::task::spawn_blocking(move || apply(plan, &mut call))
        .await
        .map_err(|e| ToolError::internal(format!("apply task failed: {e}")))?
}

fn apply(
    plan: crate::tools::ErasedPlan,
    call: &mut crate::planes::project::JournalCall,
) -> ToolResult {
    let mut out = plan.effect;
    let applied = (plan.apply)(call)?;
    out.extend(applied);
    out.insert("dry_run".into(), json!(false));
    out.insert("applied".into(), json!(true));
    Ok(Value::Object(out))
}

/// An entry that passed its tool's policy, ready to plan and run.
struct CheckedEntry<'a> {
    def: &'a ToolDef,
    args: JsonObject,
    flags: CallFlags,
}

fn entry_error(index: usize, tool: &str, e: ToolError) -> ToolError {
    let param = match &e.param {
        Some(p) if p == "." => format!("commands[{index}].arguments"),
        Some(p) => format!("commands[{index}].arguments.{p}"),
        None => format!("commands[{index}]"),
    };
    let mut e = e;
    e.param = Some(param);
    let mut details = e.details.take().map(|d| *d).unwrap_or_else(|| json!({}));
    if let Value::Object(d) = &mut details {
        d.insert("index".into(), json!(index));
        d.insert("tool".into(), json!(tool));
        d.insert("applied_count".into(), json!(0));
    }
    e.details = Some(Box::new(details));
    e
}

/// Every entry's own policy, checked before any entry runs: the tool exists, its
/// toolset is enabled, its flags are valid, a destructive entry carries confirm,
/// its arguments decode (path preflight included).
fn check_entries<'a>(
    served: &'a Served,
    entries: &[BatchEntry],
    batch_dry_run: bool,
    change: Option<&str>,
) -> Result<Vec<CheckedEntry<'a>>, ToolError> {
    let mut checked = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let tool = entry.tool.strip_prefix("cmd_").unwrap_or(&entry.tool);
        let state = &served.state;
        let Some(def) = served.registry.get(tool) else {
            let (_, hint) = crate::tools::toolsets::unknown_tool_hint(
                served.registry.iter().map(|d| &d.meta),
                &state.safety.enabled(),
                tool,
            );
            return Err(ToolError::invalid_params(
                format!("commands[{i}].tool"),
                format!(
                    "commands[{i}]: unknown command {:?}; nothing was run",
                    entry.tool
                ),
            )
            .hint(format!("Each command names a tool. {hint}")));
        };
        let fail = |e: ToolError| entry_error(i, def.meta.name, e);
        if matches!(def.handler, Handler::Batch) {
            return Err(ToolError::invalid_params(
                format!("commands[{i}].tool"),
                format!(
                    "commands[{i}]: {} cannot be an entry of run_commands; nothing was run",
                    def.meta.name
                ),
            ));
        }
        state
            .safety
            .check_enabled(def.meta.name, def.meta.toolset)
            .map_err(|mut e| {
                e.param = Some(format!("commands[{i}].tool"));
                e.details = Some(Box::new(
                    json!({"index": i, "tool": def.meta.name, "applied_count": 0}),
                ));
                e
            })?;
        let mut args = entry.arguments.clone();
        if args.contains_key("dry_run") {
            return Err(fail(ToolError::invalid_params(
                "dry_run",
                "dry_run is set on run_commands itself, not on its entries",
            )));
        }
        let flags = split_flags(def.meta.class, &mut args).map_err(fail)?;
        if let Some(id) = change {
            change::admit(def, batch_dry_run, id).map_err(fail)?;
        }
        if change.is_some() && args.contains_key(crate::tools::IDEMPOTENCY_KEY) {
            return Err(fail(ToolError::invalid_params(
                crate::tools::IDEMPOTENCY_KEY,
                "idempotency_key is not taken inside a change (its writes are staged); nothing was run",
            )));
        }
        // As for a single call, a preview needs no confirm (it reports confirm_required).
        let as_run = CallFlags {
            dry_run: batch_dry_run,
            ..flags
        };
        crate::project_root::check_arg_paths(&state.project, def.input_schema(), &args)
            .map_err(fail)?;
        (def.check_args)(&Value::Object(args.clone())).map_err(fail)?;
        confirm_gate(def.meta.name, def.meta.class, def.meta.effect, as_run).map_err(fail)?;
        checked.push(CheckedEntry { def, args, flags });
    }
    Ok(checked)
}

/// run_commands: per-entry policy for all entries first, one approval as the most
/// dangerous entry's class, then entries in order; a failure stops the batch and the
/// result says where, what ran, and what was skipped. `original` is the call's arguments as sent, `args` the same without the
/// flags split off into `flags`.
async fn run_batch(
    served: &Served,
    def: &ToolDef,
    original: JsonObject,
    args: JsonObject,
    flags: CallFlags,
    ctx: &CallContext,
) -> Result<CallOutcome, ToolError> {
    let batch: BatchArgs = decode_args(Value::Object(args))?;
    if batch.commands.is_empty() || batch.commands.len() > MAX_BATCH {
        return Err(ToolError::invalid_params(
            "commands",
            format!("commands must hold 1 to {MAX_BATCH} entries"),
        ));
    }
    let state = &served.state;
    let session_stage = state.changes.of(ctx.session);
    if batch.atomic && session_stage.is_some() {
        return Err(ToolError::invalid_params(
            "atomic",
            "a change is open in this session: its writes are staged already; drop atomic \
             (or commit_change first); nothing was run",
        ));
    }
    // atomic: the entries' writes are staged and applied at the end as one change.
    let own_stage = if batch.atomic && !flags.dry_run {
        Some(change::atomic_stage()?)
    } else {
        None
    };
    let stage = own_stage.clone().or(session_stage);
    let change_id = stage.as_ref().map(|s| s.lock().id.to_string());
    let atomic_id = change_id.clone().filter(|_| batch.atomic);
    let admit_as = if batch.atomic {
        Some(atomic_id.as_deref().unwrap_or("run_commands atomic"))
    } else {
        change_id.as_deref()
    };
    let entries = check_entries(served, &batch.commands, flags.dry_run, admit_as)?;
    let n = entries.len();
    let class = entries
        .iter()
        .map(|e| e.def.meta.class)
        .chain([def.meta.class])
        .max_by_key(|c| c.danger_rank())
        .unwrap_or(def.meta.class);
    let gated = entries
        .iter()
        .any(|e| is_gated(e.def.meta.class, e.def.runtime));
    if !flags.dry_run && gated {
        let request = ApprovalRequest {
            tool: def.meta.name.to_string(),
            class,
            arguments: original.clone(),
            batch: Some(
                entries
                    .iter()
                    .map(|e| BatchEntryView {
                        tool: e.def.meta.name.to_string(),
                        class: e.def.meta.class,
                        arguments: e.args.clone(),
                    })
                    .collect(),
            ),
            principal: ctx.principal.clone(),
        };
        if let Approval::InputRequired(r) = approve(state, ctx, &request).await? {
            return Ok(CallOutcome::InputRequired(r));
        }
    }
    let (results, failure, touched_editor) =
        run_entries(state, entries, flags.dry_run, stage.clone()).await;
    let completed = failure.as_ref().map_or(n, |(i, _)| *i);
    // atomic and every entry ran: the staged writes become one change now.
    let mut transaction_id = None;
    if let Some(own) = own_stage {
        if failure.is_none() {
            let (id, files) =
                change::commit(state, own, "run_commands")
                    .await
                    .map_err(|mut e| {
                        e.message =
                            format!("run_commands (atomic) ran every entry, but {}", e.message);
                        e
                    })?;
            transaction_id = (!files.is_empty()).then_some(id);
        } else {
            own.lock().close();
        }
    }
    let (hints, may_have_applied) = batch_hints(
        failure.as_ref(),
        &results,
        n,
        batch.atomic && !flags.dry_run,
        completed > 0 && !flags.dry_run && stage.is_none(),
        touched_editor,
    );
    let report = BatchReport {
        completed,
        aborted_at: failure.as_ref().map(|(i, _)| *i),
        skipped_count: failure.as_ref().map_or(0, |(i, _)| n - i - 1),
        hint: (!hints.is_empty()).then(|| hints.join(" ")),
    };
    let hint = report.hint.clone();
    let out = BatchResult {
        report,
        class,
        dry_run: flags.dry_run,
        may_have_applied,
        transaction_id,
        results,
    };
    let out = serde_json::to_value(&out).map_err(|e| ToolError::internal(e.to_string()))?;
    match failure {
        None => Ok(CallOutcome::Done(Ok(out))),
        // Half-done is never success: the batch is an error carrying the full report.
        Some((i, e)) => Ok(CallOutcome::Done(Err(crate::tools::batch::stopped_at(
            i,
            e,
            out,
            flags.dry_run,
            hint,
        )))),
    }
}

/// The batch's entries, run (or previewed) in order until the first failure: each
/// entry's result, the failure (its index and error), and whether an entry changed the
/// live editor.
async fn run_entries(
    state: &Arc<AppState>,
    entries: Vec<CheckedEntry<'_>>,
    dry_run: bool,
    stage: Option<crate::planes::project::StageHandle>,
) -> (Vec<BatchEntryResult>, Option<(usize, ToolError)>, bool) {
    let mut results = Vec::with_capacity(entries.len());
    let mut failure: Option<(usize, ToolError)> = None;
    let mut touched_editor = false;
    for (i, entry) in entries.into_iter().enumerate() {
        let outcome = run_entry(
            state,
            entry.def,
            entry.args,
            entry.flags,
            dry_run,
            stage.clone(),
        )
        .await;
        match outcome {
            Ok(v) => {
                touched_editor |=
                    entry.def.meta.effect == Some(EffectKind::EditorRuntime) && !dry_run;
                results.push(BatchEntryResult {
                    index: i,
                    tool: entry.def.meta.name.into(),
                    ok: true,
                    result: Some(v),
                    error: None,
                });
            }
            Err(e) => {
                results.push(BatchEntryResult {
                    index: i,
                    tool: entry.def.meta.name.into(),
                    ok: false,
                    result: None,
                    error: Some(serde_json::to_value(&e).unwrap_or_default()),
                });
                failure = Some((i, e));
                break;
            }
        }
    }
    (results, failure, touched_editor)
}

/// The batch report's hints: an entry that timed out and may have applied, what an
/// atomic batch dropped (`atomic_dropped`: atomic, not a dry run) or what stays applied
/// (`applied_kept`: entries ran, not a dry run, no stage), what was skipped, and unsaved
/// editor changes; and whether the failing entry may have applied.
fn batch_hints(
    failure: Option<&(usize, ToolError)>,
    results: &[BatchEntryResult],
    n: usize,
    atomic_dropped: bool,
    applied_kept: bool,
    touched_editor: bool,
) -> (Vec<String>, bool) {
    let mut hints = Vec::new();
    // An entry that timed out was sent and may still apply (the editor drains its
    // commands serially; a game resumes): the batch must not read as "stopped
    // before commands[i]" only.
    let may_have_applied = failure.is_some_and(|(_, e)| {
        e.details
            .as_ref()
            .is_some_and(|d| d["may_have_applied"] == json!(true))
    });
    if let Some((i, e)) = failure
        && may_have_applied
    {
        hints.push(format!(
            "commands[{i}] ({}) timed out and may have been applied ({}: it was sent, and \
             no answer came); re-read what it touches before retrying it.",
            out_tool(results, *i),
            e.code.as_str()
        ));
    }
    if let Some((i, _)) = failure {
        if atomic_dropped {
            hints.push(format!(
                "atomic: nothing was written; what commands[0..{i}] staged was dropped."
            ));
        } else if applied_kept {
            hints.push(format!(
                "commands[0..{i}] were applied and are not rolled back; re-read what they touched before retrying."
            ));
        }
        if i + 1 < n {
            hints.push(format!(
                "commands[{}..{n}] were skipped ({} entries); none of them ran.",
                i + 1,
                n - i - 1
            ));
        }
    }
    if touched_editor {
        hints.push("The open scene has unsaved changes from this batch; save it (save_scene) to persist them.".into());
    }
    (hints, may_have_applied)
}

/// The tool name recorded for `results[i]`.
fn out_tool(results: &[BatchEntryResult], i: usize) -> String {
    results
        .get(i)
        .map_or_else(|| "?".into(), |r| r.tool.clone())
}

/// Run (or, in a dry run, preview) one checked entry.
async fn run_entry(
    state: &Arc<AppState>,
    def: &ToolDef,
    args: JsonObject,
    flags: CallFlags,
    dry_run: bool,
    stage: Option<crate::planes::project::StageHandle>,
) -> ToolResult {
    let flags = CallFlags { dry_run, ..flags };
    if let Some(stage) = stage.clone()
        && let Some(form) = change::staged_editor(def, dry_run)
    {
        return crate::tools::kit::editor::stage_edit(
            state.clone(),
            def.meta.name,
            form,
            args,
            stage,
        )
        .await;
    }
    match &def.handler {
        Handler::Planned(planner) if dry_run => {
            let plan = plan_blocking(planner, state, args).await?;
            Ok(preview(def, flags, preview_effect(plan).await?))
        }
        Handler::Planned(planner) => {
            let call = crate::planes::project::JournalCall {
                toolset: def.meta.toolset.as_str(),
                tool: def.meta.name,
                idempotency: None,
                stage,
            };
            plan_and_apply_blocking(planner, state, args, call).await
        }
        Handler::Direct(handler) => {
            if dry_run && def.meta.class != SafetyClass::ReadOnly {
                if def.meta.class.takes_dry_run() {
                    return handler(state.clone(), Value::Object(args), flags).await;
                }
                return Ok(
                    json!({"dry_run": true, "applied": false, "note": "would run; this tool has no preview"}),
                );
            }
            handler(state.clone(), Value::Object(args), flags).await
        }
        Handler::Batch => Err(ToolError::internal("nested batch")),
    }
}
