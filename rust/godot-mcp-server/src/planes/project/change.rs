//! A change: many files (and staged editor edits) applied as one journaled
//! transaction, and the per-session stage that collects them until commit.

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::json;

use super::{
    Expect, JournalCall, MAX_WRITE_BYTES, Store, WriteOutcome, check_delete, check_expected,
    check_write, expected_state, gate_closed, idempotency_conflict, not_reconciled, read_current,
    resolve_writable, sha256_hex,
};
use crate::error::{ErrorCode, ToolError};
use crate::project_root::Project;
use crate::respath::ResPath;

/// One file of a change: write `bytes` (`Some`) or delete (`None`), with the
/// compare-and-swap expectation of the file there now.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangeStep<'a> {
    pub path: &'a ResPath,
    pub bytes: Option<&'a [u8]>,
    pub expected: Expect<'a>,
}

/// Applies `steps` as one journaled change (`godot_mcp_journal::change`): every
/// file at its new state, or — when one fails midway — every file put back before
/// this returns, and the error says so. The call's idempotency key covers the whole
/// change. Returns the change's transaction id.
pub(crate) fn apply_change(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    steps: &[ChangeStep<'_>],
) -> Result<String, ToolError> {
    if let Some(stage) = &call.stage {
        let steps: Vec<_> = steps
            .iter()
            .map(|s| (s.path, s.bytes, s.expected))
            .collect();
        let mut stage = stage.lock();
        stage.stage(state.project(), param, &steps)?;
        return Ok(stage.id.to_string());
    }
    apply_change_as(state, call, param, steps, None, None)
}

/// [`apply_change`] recorded under `id` (an agent's change) or a fresh id.
fn apply_change_as(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    steps: &[ChangeStep<'_>],
    id: Option<godot_mcp_journal::TxnId>,
    editor: Option<(
        godot_mcp_journal::ChangeEditorPart,
        &mut dyn godot_mcp_journal::EditorHook,
    )>,
) -> Result<String, ToolError> {
    match apply_change_checked(state, call, param, steps, id, editor, None)? {
        godot_mcp_journal::Applied::Done(done) => Ok(done.transaction_id().to_string()),
        godot_mcp_journal::Applied::Held(_) => Err(ToolError::internal("a change was held")),
    }
}

/// [`apply_change`] held open for `check` (`Journal::apply_change_held`) when given:
/// the files are in place and the change `open` until [`finish_held`] settles it.
pub(crate) fn apply_change_checked(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    steps: &[ChangeStep<'_>],
    id: Option<godot_mcp_journal::TxnId>,
    editor: Option<(
        godot_mcp_journal::ChangeEditorPart,
        &mut dyn godot_mcp_journal::EditorHook,
    )>,
    check: Option<&str>,
) -> Result<godot_mcp_journal::Applied, ToolError> {
    let mut journal = state.journal().lock();
    let mut effects = Vec::with_capacity(steps.len());
    for s in steps {
        let op = match s.bytes {
            Some(bytes) => {
                check_write(state.project(), param, s.path, bytes, s.expected)?;
                godot_mcp_journal::ChangeOp::Write(bytes.to_vec())
            }
            None => {
                check_delete(state.project(), param, s.path, s.expected)?;
                godot_mcp_journal::ChangeOp::Delete
            }
        };
        effects.push(godot_mcp_journal::ChangeEffect {
            rel_path: PathBuf::from(s.path.rel()),
            op,
            expected: expected_state(s.expected)?,
        });
    }
    let (tool_family, operation, idempotency) = call.next_write();
    let files: Vec<String> = steps.iter().map(|s| s.path.to_string()).collect();
    let res = |rel: &Path| format!("res://{}", rel.display());
    let req = godot_mcp_journal::FileChange {
        effects,
        idempotency,
        tool_family,
        operation,
    };
    match check {
        Some(check) => journal.apply_change_held(req, id, editor, check),
        None => journal
            .apply_change_with(req, id, editor)
            .map(godot_mcp_journal::Applied::Done),
    }
    .map_err(|e| change_error(e, param, &files, &res))
}

/// Settles a change held for its check: kept (every file re-derived at its new
/// state, `committed`) or, its check failed (`why`), put back (`compensated` when
/// every file is proven at its old state). The journal derives the outcome.
pub(crate) fn finish_held(
    state: &impl Store,
    held: godot_mcp_journal::HeldChange,
    keep: bool,
    why: &str,
    editor: Option<&mut dyn godot_mcp_journal::EditorHook>,
) -> godot_mcp_journal::HeldEnd {
    state.journal().lock().finish_held(held, keep, why, editor)
}

/// [`commit_stage`], held open for `check` when given (see [`apply_change_checked`]).
pub(crate) fn commit_stage_checked(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    stage: &Stage,
    editor: Option<(
        godot_mcp_journal::ChangeEditorPart,
        &mut dyn godot_mcp_journal::EditorHook,
    )>,
    check: Option<&str>,
) -> Result<Option<godot_mcp_journal::Applied>, ToolError> {
    let files: Vec<&Staged> = stage.effective().collect();
    if files.is_empty() && editor.is_none() {
        return Ok(None);
    }
    let steps: Vec<ChangeStep<'_>> = files
        .iter()
        .map(|f| ChangeStep {
            path: &f.path,
            bytes: f.bytes.as_deref(),
            expected: f.disk.as_deref().map_or(Expect::Absent, Expect::Sha256),
        })
        .collect();
    call.stage = None;
    apply_change_checked(state, call, param, &steps, Some(stage.id), editor, check).map(Some)
}

/// A change's refusal or failure as the agent sees it.
fn change_error(
    e: godot_mcp_journal::ChangeError,
    param: &str,
    files: &[String],
    res: &dyn Fn(&Path) -> String,
) -> ToolError {
    use godot_mcp_journal::ChangeError as E;
    match e {
        E::Stale { path, current, .. } => ToolError::new(
            ErrorCode::Stale,
            format!(
                "{} changed since it was read; nothing was written",
                res(&path)
            ),
        )
        .param(param)
        .hint("Read the files again and re-plan from their current state.")
        .details(json!({ "path": res(&path), "current": current.to_string() })),
        E::Absent { path } => {
            ToolError::not_found(format!("{} does not exist", res(&path))).param(param)
        }
        E::GateClosed { quarantined } => gate_closed(&quarantined),
        E::NotReconciled => not_reconciled(),
        E::Conflict { id } => idempotency_conflict(&id),
        E::Path(e) => ToolError::new(ErrorCode::PathRefused, format!("refused: {e}")).param(param),
        E::Editor {
            transaction_id,
            status,
            reason,
        } => {
            let outcome = match status {
                godot_mcp_journal::TxnStatus::Compensated => {
                    "nothing of the change remains".to_owned()
                }
                godot_mcp_journal::TxnStatus::Quarantined => {
                    "the change is quarantined and writes are refused until an operator \
                     resolves it"
                        .to_owned()
                }
                other => format!("the change is {}", other.as_str()),
            };
            ToolError::new(
                ErrorCode::EditorError,
                format!(
                    "{reason}; {outcome} (transaction {transaction_id} {})",
                    status.as_str()
                ),
            )
            .hint("list_transactions shows the change; re-plan from the editor's current state.")
            .details(json!({
                "transaction_id": transaction_id.to_string(),
                "status": status.as_str(),
                "files": files,
                "may_have_applied": status != godot_mcp_journal::TxnStatus::Compensated,
            }))
        }
        E::Invalid(why) => ToolError::invalid_params(param, format!("{why}; nothing was written")),
        e @ E::TooLarge { total, limit } => {
            ToolError::new(ErrorCode::PreconditionFailed, e.to_string())
                .param(param)
                .hint("Split it into smaller changes (commit_change after fewer files).")
                .details(json!({ "pre_image_bytes": total, "limit": limit, "files": files }))
        }
        E::Io { path, source } => ToolError::io(&res(&path), &source),
        E::Failed {
            transaction_id,
            status,
            path,
            changed_to,
            source,
            reason,
        } => {
            let (code, cause) = match changed_to {
                Some(now) => (
                    ErrorCode::Stale,
                    format!("it changed under the call (now {now})"),
                ),
                None => (ErrorCode::Io, source.to_string()),
            };
            let outcome = match status {
                godot_mcp_journal::TxnStatus::Compensated => {
                    "every file was put back; nothing of the change remains".to_owned()
                }
                godot_mcp_journal::TxnStatus::Quarantined => format!(
                    "the files could not all be put back; the change is quarantined and writes \
                     are refused until an operator resolves it ({})",
                    reason.unwrap_or_default()
                ),
                other => format!("the change is {}", other.as_str()),
            };
            ToolError::new(
                code,
                format!(
                    "the change stopped at res://{path} ({cause}); {outcome} (transaction \
                     {transaction_id} {})",
                    status.as_str()
                ),
            )
            .hint(
                "list_transactions shows the change and its files; re-plan from the current state.",
            )
            .details(json!({
                "transaction_id": transaction_id.to_string(),
                "status": status.as_str(),
                "files": files,
            }))
        }
        other => {
            tracing::error!(error = %other, "journal change failed");
            ToolError::internal("the journal failed while applying the change")
        }
    }
}

/// A staged change shared by the calls inside it.
pub(crate) type StageHandle = std::sync::Arc<Mutex<Stage>>;

/// An agent's open change (`begin_change` … `commit_change`, or one `run_commands`
/// with `atomic: true`): the file writes of the calls inside it are checked and kept
/// here, not made, and [`commit_stage`] applies them as ONE journaled change. Tools
/// read the disk, not the staged bytes, so a change writes each file once: a second
/// write to a staged file answers `STALE` (it was built on the bytes on disk).
#[derive(Debug)]
pub struct Stage {
    /// The transaction the commit records the change under.
    pub id: godot_mcp_journal::TxnId,
    files: Vec<Staged>,
    /// Editor node edits, sent at commit as ONE `scene.steps` request (one undo action).
    pub editor: Option<StagedEditor>,
    /// Committed or abandoned: nothing more is staged.
    closed: bool,
}

/// The editor part of a change: node steps on the scene open in the editor when the
/// first was staged. A `"$N"` names the node step N of this list made.
#[derive(Debug, Clone)]
pub struct StagedEditor {
    /// The edited scene (`res://…`).
    pub scene: String,
    /// Every staged step, in order.
    pub steps: Vec<godot_mcp_protocol::commands::Step>,
    /// The scene-root path of the node each staged `create` makes, by step index.
    pub created: Vec<(String, usize)>,
}

impl StagedEditor {
    /// `node` as a staged step names it: the `"$N"` of a node a staged create makes
    /// (a path to it, or a `"$N"` of the call's own steps shifted by `base`).
    pub fn rebase(&self, node: &str, base: usize, own: &[(String, usize)]) -> String {
        if let Some(n) = node.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
            return format!("${}", n + base);
        }
        let trimmed = node.trim_start_matches("./");
        self.created
            .iter()
            .chain(own)
            .find(|(path, _)| path == trimmed)
            .map_or_else(|| node.to_owned(), |(_, i)| format!("${i}"))
    }

    /// The scene-root path of a node created under `parent` (as rebased) named `name`.
    pub fn path_of(&self, parent: &str, name: &str, own: &[(String, usize)]) -> String {
        let parent = match parent.strip_prefix('$') {
            Some(n) => self
                .created
                .iter()
                .chain(own)
                .find(|(_, i)| n.parse::<usize>().ok() == Some(*i))
                .map(|(p, _)| p.clone())
                .unwrap_or_else(|| parent.to_owned()),
            None => parent.trim_start_matches("./").to_owned(),
        };
        if parent == "." || parent.is_empty() {
            name.to_owned()
        } else {
            format!("{parent}/{name}")
        }
    }
}

#[derive(Debug)]
struct Staged {
    path: ResPath,
    /// The sha256 on disk when the change first touched the file (`None`: absent):
    /// the commit's compare-and-swap.
    disk: Option<String>,
    /// What the commit leaves: these bytes, or (`None`) no file.
    bytes: Option<Vec<u8>>,
}

/// One staged file as answers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StagedFile {
    pub path: String,
    /// `create`, `write` or `delete` (on the disk as it was when first staged).
    pub action: &'static str,
}

/// One file a call stages: path, new bytes (`None`: delete), expectation.
pub(crate) type StageStep<'a, 'b> = (&'a ResPath, Option<&'b [u8]>, Expect<'b>);

impl Stage {
    /// A new, empty change with a fresh id.
    pub fn new() -> Result<Self, ToolError> {
        let id = godot_mcp_journal::TxnId::random()
            .map_err(|e| ToolError::internal(format!("no random id: {e}")))?;
        Ok(Self {
            id,
            files: Vec::new(),
            editor: None,
            closed: false,
        })
    }

    fn find(&self, path: &ResPath) -> Option<usize> {
        self.files.iter().position(|f| &f.path == path)
    }

    /// What the change holds for `path` so far: `None` when it is not staged,
    /// `Some(None)` when it is staged for deletion.
    pub fn staged_bytes(&self, path: &ResPath) -> Option<Option<&[u8]>> {
        self.find(path).map(|i| self.files[i].bytes.as_deref())
    }

    /// Stage one call's files, all checked (against the change as staged so far)
    /// before any is kept. Returns each file's outcome and its size before.
    pub fn stage(
        &mut self,
        project: &Project,
        param: &str,
        steps: &[StageStep<'_, '_>],
    ) -> Result<Vec<(WriteOutcome, u64)>, ToolError> {
        if self.closed {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!("change {} has ended; nothing was staged", self.id),
            )
            .hint("begin_change again, or call the tool outside a change."));
        }
        let mut out = Vec::with_capacity(steps.len());
        let mut disk = Vec::with_capacity(steps.len());
        for &(path, bytes, expected) in steps {
            let real = resolve_writable(project, param, path)?;
            if let Some(bytes) = bytes
                && bytes.len() > MAX_WRITE_BYTES
            {
                return Err(check_write(project, param, path, bytes, expected).unwrap_err());
            }
            let (before, on_disk) = match self.find(path) {
                Some(i) => {
                    let f = &self.files[i];
                    if expected == Expect::Anything {
                        return Err(ToolError::new(
                            ErrorCode::Stale,
                            format!(
                                "{path} is already staged in change {}; tools read the disk, \
                                 not staged bytes, so this edit would build on the old \
                                 content; nothing was staged",
                                self.id
                            ),
                        )
                        .param(param)
                        .hint("commit_change first, then edit the file again."));
                    }
                    let now = f.bytes.as_deref().map(|b| (sha256_hex(b), b.len() as u64));
                    (now, f.disk.clone())
                }
                None => {
                    let now = read_current(&real, path, param)?;
                    let hash = now.as_ref().map(|(h, _)| h.clone());
                    (now, hash)
                }
            };
            check_expected(path, expected, before.as_ref().map(|(h, _)| h.as_str()))?;
            if bytes.is_none() && before.is_none() {
                return Err(ToolError::not_found(format!("{path} does not exist"))
                    .param(param)
                    .hint(
                        "List what exists with list_files; paths are case-sensitive res:// paths.",
                    ));
            }
            let len_before = before.as_ref().map_or(0, |(_, l)| *l);
            out.push((
                WriteOutcome {
                    path: path.to_string(),
                    created: before.is_none(),
                    sha256_before: before.map(|(h, _)| h),
                    sha256_after: bytes.map(sha256_hex).unwrap_or_default(),
                    bytes: bytes.map_or(0, <[u8]>::len),
                    transaction_id: Some(self.id.to_string()),
                },
                len_before,
            ));
            disk.push(on_disk);
        }
        for (&(path, bytes, _), on_disk) in steps.iter().zip(disk) {
            let bytes = bytes.map(<[u8]>::to_vec);
            match self.find(path) {
                Some(i) => self.files[i].bytes = bytes,
                None => self.files.push(Staged {
                    path: path.clone(),
                    disk: on_disk,
                    bytes,
                }),
            }
        }
        Ok(out)
    }

    /// The files the commit changes, in the order first staged (a file put back to
    /// what the disk held is left out).
    pub fn files(&self) -> Vec<StagedFile> {
        self.effective()
            .map(|f| StagedFile {
                path: f.path.to_string(),
                action: match (&f.disk, &f.bytes) {
                    (None, _) => "create",
                    (Some(_), Some(_)) => "write",
                    (Some(_), None) => "delete",
                },
            })
            .collect()
    }

    /// Commit or abandon: from now on nothing more is staged.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Refused once the change has ended.
    pub fn check_open(&self) -> Result<(), ToolError> {
        if self.closed {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!("change {} has ended; nothing was staged", self.id),
            )
            .hint("begin_change again, or call the tool outside a change."));
        }
        Ok(())
    }

    /// The undo action the editor part is applied as.
    pub fn action(&self) -> String {
        format!("godot-mcp change {}", self.id)
    }

    fn effective(&self) -> impl Iterator<Item = &Staged> {
        self.files
            .iter()
            .filter(|f| f.disk.as_deref() != f.bytes.as_deref().map(sha256_hex).as_deref())
    }
}

/// Apply a staged change as ONE journaled change under its id (every file at its
/// staged state, or every file put back before this returns and the error says so).
/// Each file must still be what it was when the change first touched it (else
/// `STALE`, nothing written). `Ok(None)`: nothing to write.
pub(crate) fn commit_stage(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    stage: &Stage,
    editor: Option<(
        godot_mcp_journal::ChangeEditorPart,
        &mut dyn godot_mcp_journal::EditorHook,
    )>,
) -> Result<Option<String>, ToolError> {
    match commit_stage_checked(state, call, param, stage, editor, None)? {
        None => Ok(None),
        Some(godot_mcp_journal::Applied::Done(done)) => Ok(Some(done.transaction_id().to_string())),
        Some(godot_mcp_journal::Applied::Held(_)) => Err(ToolError::internal("a change was held")),
    }
}

/// The open agent changes of this server, by session (an MCP session holds at most
/// one; a session that ends drops its change, which wrote nothing).
#[derive(Debug, Default)]
pub struct Changes {
    open: Mutex<std::collections::HashMap<u64, StageHandle>>,
}

impl Changes {
    /// `session`'s open change.
    pub fn of(&self, session: u64) -> Option<StageHandle> {
        self.open.lock().get(&session).cloned()
    }

    /// Open `stage` for `session`; `Err(id)` when one is open already.
    pub fn begin(&self, session: u64, stage: Stage) -> Result<StageHandle, String> {
        let mut open = self.open.lock();
        if let Some(s) = open.get(&session) {
            return Err(s.lock().id.to_string());
        }
        let handle = std::sync::Arc::new(Mutex::new(stage));
        open.insert(session, handle.clone());
        Ok(handle)
    }

    /// Close `session`'s change (commit, abandon, or the session ended).
    pub fn end(&self, session: u64) -> Option<StageHandle> {
        self.open.lock().remove(&session)
    }

    /// Every open change: id and files.
    pub fn list(&self) -> Vec<(String, Vec<StagedFile>)> {
        let handles: Vec<StageHandle> = self.open.lock().values().cloned().collect();
        handles
            .iter()
            .map(|h| {
                let s = h.lock();
                (s.id.to_string(), s.files())
            })
            .collect()
    }
}
