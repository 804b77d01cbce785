//! An agent's own change: `begin_change`, `commit_change`, `abandon_change`. Between
//! begin and commit the session's file writes are staged (`planes::project::Stage`),
//! not written, and the commit applies them as ONE journaled change: every file at
//! its new state, or every file put back before the answer. The policy side (which
//! calls a change admits, the change id on every answer) is `safety::pipeline`'s.

use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::planes::project::{
    JournalCall, Stage, StageHandle, StagedFile, commit_stage, commit_stage_checked,
};
use crate::rules::class;
use crate::rules::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::{CallFlags, Handler, ToolDef, ToolMeta, ToolResult, decode_args};

/// The three tools, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeTool {
    Begin,
    Commit,
    Abandon,
}

impl ChangeTool {
    /// The change tool called `name`, if it is one.
    pub(crate) fn of(name: &str) -> Option<Self> {
        match name {
            "begin_change" => Some(Self::Begin),
            "commit_change" => Some(Self::Commit),
            "abandon_change" => Some(Self::Abandon),
            _ => None,
        }
    }
}

pub(crate) fn tools() -> Vec<ToolDef> {
    let meta = |name, title, description| ToolMeta {
        name,
        title,
        description,
        class: class::Mutating,
        toolset: Toolset::Batch,
        effect: Some(EffectKind::File),
    };
    vec![
        ToolDef::batch::<NoArgs, ChangeReply>(meta(
            "begin_change",
            "Begin a change",
            "Open a change in this session: file writes and node edits (set_node_property, \
             create_node, add_to_group, create_nodes) of later calls are staged until \
             commit_change applies them as one transaction, the edits as one undo action. \
             Other editor edits and launches are refused inside it.",
        )),
        ToolDef::batch::<CommitArgs, ChangeReply>(meta(
            "commit_change",
            "Commit the change",
            "Apply the session's staged writes as one transaction: all files land, or all \
             are put back and the error says so.",
        )),
        ToolDef::batch::<NoArgs, ChangeReply>(meta(
            "abandon_change",
            "Abandon the change",
            "Drop the session's staged writes; nothing was written.",
        )),
    ]
}

/// No arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// commit_change's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitArgs {
    /// build: dotnet build after writing; if it fails every file is put back.
    #[serde(default)]
    #[schemars(schema_with = "crate::tools::kit::dotnet_build::check_schema")]
    check: Option<crate::tools::kit::dotnet_build::Check>,
}

/// What a change tool answers.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct ChangeReply {
    /// The change; its commit is the journal transaction of this id. Null only in
    /// begin_change's preview (no change is open yet).
    pub change_id: Option<String>,
    /// `open`, `committed`, `abandoned`; `none` in begin_change's preview.
    pub status: &'static str,
    /// The files the commit writes (wrote, or dropped), in the order first staged.
    pub files: Vec<StagedFile>,
    pub dry_run: bool,
}

/// Abandons its session's open change when the session's last handler is dropped
/// (the MCP session ended): the staged writes are dropped, nothing was written.
#[derive(Debug)]
pub(crate) struct SessionEnd {
    state: Arc<AppState>,
    session: u64,
}

impl SessionEnd {
    pub(crate) fn new(state: Arc<AppState>, session: u64) -> Self {
        Self { state, session }
    }
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        if let Some(h) = self.state.changes.end(self.session) {
            let mut stage = h.lock();
            stage.close();
            tracing::info!(change = %stage.id, "session ended: its open change was abandoned");
        }
    }
}

fn already_open(open: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!("change {open} is already open in this session; nothing was done"),
    )
    .hint("commit_change or abandon_change it first.")
    .details(json!({ "change_id": open.to_string() }))
}

fn no_change() -> ToolError {
    ToolError::new(
        ErrorCode::PreconditionFailed,
        "no change is open in this session; nothing was done",
    )
    .hint("begin_change opens one.")
}

/// Run a change tool for `session`.
pub(crate) async fn run(
    state: &Arc<AppState>,
    tool: ChangeTool,
    session: u64,
    args: Value,
    flags: CallFlags,
) -> ToolResult {
    // commit_change's check: what it needs is found before anything is written.
    let check = match tool {
        ChangeTool::Commit => {
            let CommitArgs { check } = decode_args(args)?;
            check
                .map(|_| crate::tools::kit::dotnet_build::BuildCheck::prepare(state))
                .transpose()?
        }
        _ => {
            let NoArgs {} = decode_args(args)?;
            None
        }
    };
    let reply = |id: Option<String>, status, files, dry_run| {
        serde_json::to_value(ChangeReply {
            change_id: id,
            status,
            files,
            dry_run,
        })
        .map_err(|e| ToolError::internal(e.to_string()))
    };
    match tool {
        ChangeTool::Begin => {
            // The preview checks what the real call checks (no change open in this
            // session) and opens none.
            if flags.dry_run {
                if let Some(h) = state.changes.of(session) {
                    return Err(already_open(&h.lock().id));
                }
                return reply(None, "none", Vec::new(), true);
            }
            let id = state
                .changes
                .begin(session, Stage::new()?)
                .map_err(already_open)?;
            let id = id.lock().id.to_string();
            reply(Some(id), "open", Vec::new(), false)
        }
        ChangeTool::Abandon => {
            if flags.dry_run {
                let h = state.changes.of(session).ok_or_else(no_change)?;
                let s = h.lock();
                return reply(Some(s.id.to_string()), "open", s.files(), true);
            }
            let h = state.changes.end(session).ok_or_else(no_change)?;
            let mut s = h.lock();
            s.close();
            reply(Some(s.id.to_string()), "abandoned", s.files(), false)
        }
        ChangeTool::Commit => {
            if flags.dry_run {
                let h = state.changes.of(session).ok_or_else(no_change)?;
                let s = h.lock();
                return reply(Some(s.id.to_string()), "open", s.files(), true);
            }
            // A change whose editor edits' scene is no longer the edited one stays
            // open: the agent opens it again and commits.
            let open = state.changes.of(session).ok_or_else(no_change)?;
            let st = state.clone();
            tokio::task::spawn_blocking(move || {
                crate::tools::kit::editor::check_still_edited(&st, &open.lock())
            })
            .await
            .map_err(|e| ToolError::internal(format!("commit task failed: {e}")))??;
            let h = state.changes.end(session).ok_or_else(no_change)?;
            let (id, files) = commit_checked(state, h, "commit_change", check).await?;
            reply(Some(id), "committed", files, false)
        }
    }
}

/// Close `stage` and apply it as one journaled change (off the async threads: it
/// fsyncs). Returns its id and files; an error carries `details.change_id`.
pub(crate) async fn commit(
    state: &Arc<AppState>,
    stage: StageHandle,
    operation: &'static str,
) -> Result<(String, Vec<StagedFile>), ToolError> {
    commit_checked(state, stage, operation, None).await
}

/// [`commit`] with a build check: the change is held open while the project builds,
/// kept if it builds, every file put back (and the editor part undone) if not.
async fn commit_checked(
    state: &Arc<AppState>,
    stage: StageHandle,
    operation: &'static str,
    check: Option<crate::tools::kit::dotnet_build::BuildCheck>,
) -> Result<(String, Vec<StagedFile>), ToolError> {
    let state = state.clone();
    tokio::task::spawn_blocking(move || {
        let mut s = stage.lock();
        s.close();
        let id = s.id.to_string();
        let mut call = JournalCall::new(Toolset::Batch.as_str(), operation);
        let mut editor = crate::tools::kit::editor::editor_part(&state, &s)
            .map_err(|e| with_change_id(e, &id))?;
        let part = editor
            .as_mut()
            .map(|(part, hook)| (part.clone(), hook as &mut dyn godot_mcp_journal::EditorHook));
        let Some(check) = check else {
            return commit_stage(&state, &mut call, operation, &s, part)
                .map(|_| (id.clone(), s.files()))
                .map_err(|e| with_change_id(e, &id));
        };
        let files: Vec<String> = s.files().into_iter().map(|f| f.path).collect();
        let held = commit_stage_checked(&state, &mut call, operation, &s, part, Some("build"))
            .map_err(|e| with_change_id(e, &id))?;
        if let Some(godot_mcp_journal::Applied::Held(held)) = held {
            let hook = editor
                .as_mut()
                .map(|(_, hook)| hook as &mut dyn godot_mcp_journal::EditorHook);
            check
                .settle(&state, held, hook, &files)
                .map_err(|e| with_change_id(e, &id))?;
        }
        Ok((id.clone(), s.files()))
    })
    .await
    .map_err(|e| ToolError::internal(format!("commit task failed: {e}")))?
}

/// A new stage for one `run_commands` with `atomic: true`.
pub(crate) fn atomic_stage() -> Result<StageHandle, ToolError> {
    Ok(Arc::new(Mutex::new(Stage::new()?)))
}

/// `e` with `details.change_id`.
pub(crate) fn with_change_id(mut e: ToolError, id: &str) -> ToolError {
    let mut details = e.details.take().map(|d| *d).unwrap_or_else(|| json!({}));
    if let Value::Object(d) = &mut details {
        d.insert("change_id".into(), json!(id));
    }
    e.details = Some(Box::new(details));
    e
}

/// Whether `def` may run inside a change (`change` is its id): reads and dry runs
/// do, file writes are staged (planned tools only: their writes go through the
/// staging seam), node edits are staged ([`staged_editor`]); other editor edits and
/// launches are refused.
pub(crate) fn admit(def: &ToolDef, dry_run: bool, change: &str) -> Result<(), ToolError> {
    let m = &def.meta;
    if m.class == SafetyClass::ReadOnly || dry_run {
        return Ok(());
    }
    let planned = matches!(def.handler, Handler::Planned(_));
    let why = match m.effect {
        _ if m.class == SafetyClass::Runtime || m.effect == Some(EffectKind::ProcessLaunch) => {
            "a launch or a running game cannot be part of a change (a process cannot be un-run)"
        }
        Some(EffectKind::EditorRuntime) if staged_editor(def, dry_run).is_some() => return Ok(()),
        Some(EffectKind::EditorRuntime) => {
            "only node edits (set_node_property, create_node, add_to_group, create_nodes) \
             are staged inside a change; the editor applies this one at once"
        }
        Some(EffectKind::File) if !planned => "this tool's writes cannot be staged",
        _ => return Ok(()),
    };
    Err(ToolError::new(
        ErrorCode::PreconditionFailed,
        format!(
            "{} is refused inside change {change}: {why}; nothing was run",
            m.name
        ),
    )
    .hint("commit_change or abandon_change first, then call it.")
    .details(json!({ "change_id": change })))
}

/// A call of `def` inside a change that is an editor node edit to stage (not run): its
/// staged form.
pub(crate) fn staged_editor(def: &ToolDef, dry_run: bool) -> Option<crate::tools::StageFn> {
    if dry_run || def.meta.effect != Some(EffectKind::EditorRuntime) {
        return None;
    }
    def.staged.clone()
}

#[cfg(test)]
mod tests;
