//! The project plane's single write seam: every byte any tool writes to or deletes
//! from the project goes through [`write_file`] or [`delete_file`].
//!
//! Both are atomic and durable: a write goes to a temporary file beside the target,
//! is fsynced, renamed over the target, and the directory is fsynced, so after a
//! crash the file holds either the old or the new bytes, never a mix. Both accept an
//! `expected_sha256` (compare-and-swap): when the current bytes no longer hash to it,
//! nothing is written and the call fails with `STALE`.
//!
//! Both are journaled transactions (`godot-mcp-journal`): the intent with the
//! pre-state is durable before the effect, and the call reports success only with a
//! proof re-derived from disk; the result carries the `transaction_id`. The journal's
//! mutex is the one writer inside this server (other processes are kept out by the
//! project lease). [`check_write`] and [`check_delete`] run the server-side checks
//! without touching anything, so a dry run reports exactly what the real call would do.

use std::path::{Path, PathBuf};

use godot_mcp_journal::{
    ContentHash, DeleteError, FileDelete, FileState, FileWrite, IdempotencyKey, Journal,
    TxnOutcome, WriteError,
};
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::json;

use crate::error::{ErrorCode, ToolError};
use crate::project_root::Project;
use crate::respath::ResPath;

/// What the write seam needs of the server: the project and its journal (the server's
/// `AppState` gives both; the plane never sees the rest of it).
pub trait Store {
    fn project(&self) -> &Project;
    fn journal(&self) -> &Mutex<Journal>;
}

impl<T: Store + ?Sized> Store for std::sync::Arc<T> {
    fn project(&self) -> &Project {
        (**self).project()
    }
    fn journal(&self) -> &Mutex<Journal> {
        (**self).journal()
    }
}

/// Largest file the write seam writes, in bytes.
pub const MAX_WRITE_BYTES: usize = 16 * 1024 * 1024;

/// Which call the journal records a write under: the tool family (toolset), the
/// operation (tool name), and the client's idempotency key if it sent one.
#[derive(Debug)]
pub struct JournalCall {
    pub toolset: &'static str,
    pub tool: &'static str,
    /// Taken by the call's first journaled write (further writes of the same call,
    /// like a deleted resource's sidecars, are recorded without one).
    pub idempotency: Option<IdempotencyKey>,
    /// Inside an agent's change: the writes are staged there, not made (see [`Stage`]).
    pub stage: Option<StageHandle>,
}

/// The lowercase hex SHA-256 of `bytes`, as results and the journal spell hashes.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    godot_mcp_journal::ContentHash::of(bytes).to_string()
}

impl JournalCall {
    /// A call with no idempotency key.
    pub fn new(toolset: &'static str, tool: &'static str) -> Self {
        Self {
            toolset,
            tool,
            idempotency: None,
            stage: None,
        }
    }

    /// (tool family, operation, idempotency key) for this call's next journaled
    /// write: the key goes to the first write only.
    pub(crate) fn next_write(&mut self) -> (String, String, Option<IdempotencyKey>) {
        (
            self.toolset.to_string(),
            self.tool.to_string(),
            self.idempotency.take(),
        )
    }
}

/// What the caller expects to find at the target before the write (compare-and-swap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect<'a> {
    /// Whatever is there (or nothing).
    Anything,
    /// Nothing: the file must not exist.
    Absent,
    /// Exactly these bytes, by sha256 (hex).
    Sha256(&'a str),
}

impl<'a> From<Option<&'a str>> for Expect<'a> {
    fn from(expected_sha256: Option<&'a str>) -> Self {
        expected_sha256.map_or(Expect::Anything, Expect::Sha256)
    }
}

/// Deserializes `expected_sha256` so that `null` is kept apart from a left-out
/// field: `None` (left out: no check), `Some(None)` (`null`: the file must not
/// exist), `Some(Some(hash))`. Read it with [`expect_of`].
pub fn expected_or_null<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<String>>, D::Error> {
    <Option<String> as serde::Deserialize>::deserialize(d).map(Some)
}

/// The schema keyword that keeps `null` in a published type (the registry strips
/// every other `null`, and this keyword with it).
pub const KEEP_NULL: &str = "x-keep-null";

/// The published schema of an `expected_sha256` read by [`expected_or_null`]: a
/// sha256, or `null` (must not exist), which the registry keeps ([`KEEP_NULL`]).
/// Use it as `#[schemars(with = "plane::ShaOrNull")]`.
pub struct ShaOrNull;

impl schemars::JsonSchema for ShaOrNull {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ShaOrNull".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), json!(["string", "null"]));
        schema.insert(KEEP_NULL.into(), json!(true));
        schema.into()
    }
}

/// The compare-and-swap expectation of an `expected_sha256` read by
/// [`expected_or_null`].
pub fn expect_of(expected: &Option<Option<String>>) -> Expect<'_> {
    match expected {
        None => Expect::Anything,
        Some(None) => Expect::Absent,
        Some(Some(sha)) => Expect::Sha256(sha),
    }
}

/// [`expect_of`] for a writer that creates the file when it is not there: no
/// expectation is "must not exist" when nothing is there (`exists` false).
pub fn expect_or_create(expected: &Option<Option<String>>, exists: bool) -> Expect<'_> {
    match expect_of(expected) {
        Expect::Anything if !exists => Expect::Absent,
        e => e,
    }
}

/// What a write did (or, from [`check_write`], would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WriteOutcome {
    pub path: String,
    /// The file did not exist before.
    pub created: bool,
    /// Hash of the bytes replaced; `None` when the file is new.
    pub sha256_before: Option<String>,
    /// Hash of the bytes written.
    pub sha256_after: String,
    pub bytes: usize,
    /// The journal transaction that made the write (absent in a preview).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
}

/// What a delete did (or would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DeleteOutcome {
    pub path: String,
    pub sha256_before: String,
    pub bytes: u64,
    /// The journal transaction that made the delete (absent in a preview).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
}

/// The current hash and size of a project file, or `None` when it does not exist.
pub fn current(
    project: &Project,
    param: &str,
    path: &ResPath,
) -> Result<Option<(String, u64)>, ToolError> {
    let real = resolve_writable(project, param, path)?;
    read_current(&real, path, param)
}

fn read_current(
    real: &Path,
    path: &ResPath,
    param: &str,
) -> Result<Option<(String, u64)>, ToolError> {
    match std::fs::metadata(real) {
        Ok(m) if m.is_dir() => Err(ToolError::invalid_params(
            param,
            format!("{path} is a folder"),
        )),
        Ok(m) if m.len() > MAX_WRITE_BYTES as u64 * 4 => Err(ToolError::new(
            ErrorCode::TooLarge,
            format!("{path} is {} bytes; too large to replace safely", m.len()),
        )
        .param(param)),
        Ok(_) => {
            let bytes = std::fs::read(real).map_err(|e| ToolError::io(&path.to_string(), &e))?;
            Ok(Some((sha256_hex(&bytes), bytes.len() as u64)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::io(&path.to_string(), &e)),
    }
}

/// The hidden files a project skeleton has at its root (create_project_scaffold): version
/// control's, never Godot's private `.godot/`.
const ROOT_VCS_FILES: [&str; 2] = [".gitignore", ".gitattributes"];

/// Contained, not hidden (`.godot/` is Godot's private cache; only [`ROOT_VCS_FILES`]
/// are written), not the project root.
fn resolve_writable(project: &Project, param: &str, path: &ResPath) -> Result<PathBuf, ToolError> {
    if path.is_root() {
        return Err(ToolError::invalid_params(
            param,
            "res:// is the project folder, not a file",
        ));
    }
    if path.is_hidden() && !ROOT_VCS_FILES.contains(&path.rel()) {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            format!("{path} is refused: hidden files and folders (like .godot/) are not written"),
        )
        .param(param)
        .hint("Write to a visible res:// path; .godot/ is Godot's private cache."));
    }
    project.resolve(param, path)
}

fn check_expected(
    param_path: &ResPath,
    expected: Expect<'_>,
    actual: Option<&str>,
) -> Result<(), ToolError> {
    let expected = match expected {
        Expect::Anything => return Ok(()),
        Expect::Absent if actual.is_none() => return Ok(()),
        Expect::Absent => {
            return Err(ToolError::new(
                ErrorCode::Stale,
                format!("{param_path} exists now but did not when the call was planned; nothing was written"),
            )
            .param("path")
            .hint("Read the file and decide again; another writer created it."));
        }
        Expect::Sha256(s) => s,
    };
    if expected.len() != 64 || !expected.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ToolError::invalid_params(
            "expected_sha256",
            "expected_sha256 must be 64 hexadecimal characters (the sha256 a read returned)",
        ));
    }
    if actual.is_some_and(|a| a.eq_ignore_ascii_case(expected)) {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::Stale,
        format!(
            "{param_path} changed since it was read: its sha256 is no longer expected_sha256; nothing was written"
        ),
    )
    .param("expected_sha256")
    .hint("Read the file again, re-apply your change to the current content, and retry with its new sha256.")
    .details(serde_json::json!({ "expected_sha256": expected, "actual_sha256": actual })))
}

/// Every check of [`write_file`], without writing.
pub fn check_write(
    project: &Project,
    param: &str,
    path: &ResPath,
    bytes: &[u8],
    expected: Expect<'_>,
) -> Result<WriteOutcome, ToolError> {
    if bytes.len() > MAX_WRITE_BYTES {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{} bytes is more than this server writes ({MAX_WRITE_BYTES})",
                bytes.len()
            ),
        )
        .param(param));
    }
    let real = resolve_writable(project, param, path)?;
    let before = read_current(&real, path, param)?;
    check_expected(path, expected, before.as_ref().map(|(h, _)| h.as_str()))?;
    Ok(WriteOutcome {
        path: path.to_string(),
        created: before.is_none(),
        sha256_before: before.map(|(h, _)| h),
        sha256_after: sha256_hex(bytes),
        bytes: bytes.len(),
        transaction_id: None,
    })
}

/// The journal's form of a compare-and-swap expectation.
fn expected_state(expected: Expect<'_>) -> Result<Option<FileState>, ToolError> {
    Ok(match expected {
        Expect::Anything => None,
        Expect::Absent => Some(FileState::Absent),
        Expect::Sha256(hex) => Some(FileState::Present {
            sha256: hex.parse::<ContentHash>().map_err(|_| {
                ToolError::invalid_params(
                    "expected_sha256",
                    "expected_sha256 must be 64 hexadecimal characters (the sha256 a read returned)",
                )
            })?,
        }),
    })
}

/// Write `bytes` to `path` as a journaled transaction: atomic and durable, creating
/// parent folders, committed only with a proof re-derived from disk.
pub fn write_file(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    path: &ResPath,
    bytes: &[u8],
    expected: Expect<'_>,
) -> Result<WriteOutcome, ToolError> {
    if let Some(stage) = &call.stage {
        return stage
            .lock()
            .stage(state.project(), param, &[(path, Some(bytes), expected)])
            .map(|mut v| v.remove(0).0);
    }
    let mut journal = state.journal().lock();
    let mut outcome = check_write(state.project(), param, path, bytes, expected)?;
    let (tool_family, operation, idempotency) = call.next_write();
    let request = FileWrite {
        rel_path: PathBuf::from(path.rel()),
        bytes: bytes.to_vec(),
        expected: expected_state(expected)?,
        idempotency,
        tool_family,
        operation,
    };
    let done = journal
        .write_file(request)
        .map_err(|e| write_error(path, param, e))?;
    outcome.transaction_id = Some(txn_id(&done));
    Ok(outcome)
}

fn txn_id(outcome: &TxnOutcome) -> String {
    outcome.transaction_id().to_string()
}

/// A journal refusal or failure as the agent sees it.
pub(crate) fn write_error(path: &ResPath, param: &str, e: WriteError) -> ToolError {
    match e {
        WriteError::Stale {
            current,
            transaction_id,
            ..
        } => ToolError::new(
            ErrorCode::Stale,
            format!("{path} changed since it was read; nothing was written"),
        )
        .param("expected_sha256")
        .hint("Read the file again, re-apply your change to the current content, and retry with its new sha256.")
        .details(json!({
            "current": current.to_string(),
            "transaction_id": transaction_id.map(|t| t.to_string()),
        })),
        WriteError::GateClosed { quarantined } => gate_closed(&quarantined),
        WriteError::NotReconciled => ToolError::new(
            ErrorCode::WriteGateClosed,
            "writes are refused: the journal must be reconciled; restart the server",
        ),
        WriteError::Conflict { id } => ToolError::new(
            ErrorCode::Conflict,
            format!("idempotency id {id:?} was already used in a different context; nothing was written"),
        ),
        WriteError::Path(e) => {
            ToolError::new(ErrorCode::PathRefused, format!("{path} is refused: {e}")).param(param)
        }
        WriteError::Io { source, .. } => ToolError::io(&path.to_string(), &source),
        WriteError::EffectFailed {
            transaction_id,
            status,
            source,
        } => ToolError::new(
            ErrorCode::Io,
            format!(
                "writing {path} failed ({}); transaction {transaction_id} was settled as {}",
                source.kind(),
                status.as_str()
            ),
        )
        .hint("list_transactions shows the transaction and its proof.")
        .details(json!({ "transaction_id": transaction_id.to_string(), "status": status.as_str() })),
        other => {
            tracing::error!(error = %other, "journal write failed");
            ToolError::internal(format!("the journal failed while writing {path}"))
        }
    }
}

fn gate_closed(quarantined: &[godot_mcp_journal::TxnId]) -> ToolError {
    let ids: Vec<String> = quarantined.iter().map(ToString::to_string).collect();
    tracing::warn!(quarantined = %ids.join(", "), "write gate closed: a write was refused");
    ToolError::new(
        ErrorCode::WriteGateClosed,
        format!(
            "writes are refused: quarantined transaction(s) {} must be resolved first",
            ids.join(", ")
        ),
    )
    .required("write_gate_open")
    .hint("An operator resolves them on this machine with `godot-mcp transaction repair` (see docs/recovery.md); list_transactions shows why.")
    .details(json!({ "quarantined": ids }))
}

/// Every check of [`delete_file`], without deleting.
pub fn check_delete(
    project: &Project,
    param: &str,
    path: &ResPath,
    expected: Expect<'_>,
) -> Result<DeleteOutcome, ToolError> {
    let real = resolve_writable(project, param, path)?;
    let Some((sha, len)) = read_current(&real, path, param)? else {
        return Err(ToolError::not_found(format!("{path} does not exist"))
            .param(param)
            .hint("List what exists with list_files; paths are case-sensitive res:// paths."));
    };
    check_expected(path, expected, Some(&sha))?;
    Ok(DeleteOutcome {
        path: path.to_string(),
        sha256_before: sha,
        bytes: len,
        transaction_id: None,
    })
}

/// Delete the file at `path` as a journaled transaction (tombstone, unlink, fsync).
pub fn delete_file(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    path: &ResPath,
    expected: Expect<'_>,
) -> Result<DeleteOutcome, ToolError> {
    if let Some(stage) = &call.stage {
        let (w, len) = stage
            .lock()
            .stage(state.project(), param, &[(path, None, expected)])?
            .remove(0);
        return Ok(DeleteOutcome {
            path: w.path,
            sha256_before: w.sha256_before.unwrap_or_default(),
            bytes: len,
            transaction_id: w.transaction_id,
        });
    }
    let mut journal = state.journal().lock();
    let mut outcome = check_delete(state.project(), param, path, expected)?;
    let (tool_family, operation, idempotency) = call.next_write();
    let request = FileDelete {
        rel_path: PathBuf::from(path.rel()),
        expected: expected_state(expected)?,
        idempotency,
        tool_family,
        operation,
    };
    let done = journal.delete_file(request).map_err(|e| match e {
        DeleteError::Absent { .. } => {
            ToolError::not_found(format!("{path} does not exist")).param(param)
        }
        DeleteError::Stale {
            current,
            transaction_id,
            ..
        } => write_error(
            path,
            param,
            WriteError::Stale {
                path: PathBuf::from(path.rel()),
                expected: FileState::Absent,
                current,
                transaction_id,
            },
        ),
        DeleteError::GateClosed { quarantined } => gate_closed(&quarantined),
        DeleteError::NotReconciled => write_error(path, param, WriteError::NotReconciled),
        DeleteError::Conflict { id } => write_error(path, param, WriteError::Conflict { id }),
        DeleteError::Io { source, .. } => ToolError::io(&path.to_string(), &source),
        other => {
            tracing::error!(error = %other, "journal delete failed");
            ToolError::internal(format!("the journal failed while deleting {path}"))
        }
    })?;
    outcome.transaction_id = Some(txn_id(&done));
    Ok(outcome)
}

/// One file of a change: write `bytes` (`Some`) or delete (`None`), with the
/// compare-and-swap expectation of the file there now.
#[derive(Debug, Clone, Copy)]
pub struct ChangeStep<'a> {
    pub path: &'a ResPath,
    pub bytes: Option<&'a [u8]>,
    pub expected: Expect<'a>,
}

/// Applies `steps` as one journaled change (`godot_mcp_journal::change`): every
/// file at its new state, or — when one fails midway — every file put back before
/// this returns, and the error says so. The call's idempotency key covers the whole
/// change. Returns the change's transaction id.
pub fn apply_change(
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
    let done = journal
        .apply_change_with(
            godot_mcp_journal::FileChange {
                effects,
                idempotency,
                tool_family,
                operation,
            },
            id,
            editor,
        )
        .map_err(|e| change_error(e, param, &files, &res))?;
    Ok(done.transaction_id().to_string())
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
        E::NotReconciled => ToolError::new(
            ErrorCode::WriteGateClosed,
            "writes are refused: the journal must be reconciled; restart the server",
        ),
        E::Conflict { id } => ToolError::new(
            ErrorCode::Conflict,
            format!(
                "idempotency id {id:?} was already used in a different context; nothing was written"
            ),
        ),
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
pub type StageHandle = std::sync::Arc<Mutex<Stage>>;

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
pub type StageStep<'a, 'b> = (&'a ResPath, Option<&'b [u8]>, Expect<'b>);

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
pub fn commit_stage(
    state: &impl Store,
    call: &mut JournalCall,
    param: &str,
    stage: &Stage,
    editor: Option<(
        godot_mcp_journal::ChangeEditorPart,
        &mut dyn godot_mcp_journal::EditorHook,
    )>,
) -> Result<Option<String>, ToolError> {
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
    apply_change_as(state, call, param, &steps, Some(stage.id), editor).map(Some)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::AppState;

    fn project() -> (tempfile::TempDir, AppState) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        let p = Project::discover(Some(dir.path()), Path::new("/")).unwrap();
        let state_dir = dir.path().join(".state");
        let mut journal = godot_mcp_journal::Journal::open(&state_dir, p.root()).unwrap();
        journal.reconcile().unwrap();
        let safety = crate::rules::SafetyState::new(
            crate::rules::ApprovalConfig::default(),
            crate::rules::Toolset::DEFAULT.into_iter().collect(),
        );
        (dir, AppState::new(p, journal, safety))
    }

    fn res(s: &str) -> ResPath {
        ResPath::parse(s).unwrap()
    }

    fn call() -> JournalCall {
        JournalCall::new("test", "write")
    }

    #[test]
    fn a_call_names_its_writes_and_its_key_goes_to_the_first_only() {
        let (_dir, p) = project();
        let key = IdempotencyKey {
            id: "k-1".into(),
            principal: "local".into(),
            session: "s".into(),
            request_hash: ContentHash::of(b"request"),
        };
        let mut call = JournalCall {
            toolset: "scripts",
            tool: "write_script",
            idempotency: Some(key.clone()),
            stage: None,
        };
        let a = res("res://a.gd");
        let first = write_file(&p, &mut call, "path", &a, b"a", Expect::Absent).unwrap();
        let b = res("res://b.gd");
        let second = write_file(&p, &mut call, "path", &b, b"b", Expect::Absent).unwrap();
        let journal = p.journal.lock();
        let rows = journal
            .list_transactions(&godot_mcp_journal::TxnFilter::default())
            .unwrap();
        assert_eq!(rows.len(), 2);
        for row in &rows {
            assert_eq!(
                (row.tool_family.as_str(), row.operation.as_str()),
                ("scripts", "write_script"),
                "every write is recorded under the call's identity"
            );
        }
        let replay = journal
            .lookup_replay(&key, "scripts", "write_script")
            .unwrap()
            .expect("the key was recorded");
        assert_eq!(
            Some(replay.transaction_id.to_string()),
            first.transaction_id,
            "the key goes to the call's first write"
        );
        assert_ne!(first.transaction_id, second.transaction_id);
    }

    #[test]
    fn write_creates_parents_and_reports_hashes() {
        let (dir, p) = project();
        let out = write_file(
            &p,
            &mut call(),
            "path",
            &res("res://a/b/c.gd"),
            b"extends Node\n",
            Expect::Anything,
        )
        .unwrap();
        assert!(out.created);
        assert_eq!(out.sha256_before, None);
        assert_eq!(out.sha256_after, sha256_hex(b"extends Node\n"));
        assert_eq!(
            std::fs::read(dir.path().join("a/b/c.gd")).unwrap(),
            b"extends Node\n"
        );
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a/b")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn compare_and_swap_refuses_stale_bytes() {
        let (dir, p) = project();
        let path = res("res://x.gd");
        let first = write_file(&p, &mut call(), "path", &path, b"one", Expect::Absent).unwrap();
        let e = write_file(
            &p,
            &mut call(),
            "path",
            &path,
            b"two",
            Expect::Sha256(&"0".repeat(64)),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Stale);
        assert_eq!(std::fs::read(dir.path().join("x.gd")).unwrap(), b"one");
        let second = write_file(
            &p,
            &mut call(),
            "path",
            &path,
            b"two",
            Expect::Sha256(&first.sha256_after),
        )
        .unwrap();
        assert_eq!(
            second.sha256_before.as_deref(),
            Some(first.sha256_after.as_str())
        );
        let e = write_file(
            &p,
            &mut call(),
            "path",
            &path,
            b"x",
            Expect::Sha256("nothex"),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams);
    }

    #[test]
    fn delete_checks_then_removes() {
        let (dir, p) = project();
        let path = res("res://r.tres");
        let e = delete_file(&p, &mut call(), "path", &path, Expect::Anything).unwrap_err();
        assert_eq!(e.code, ErrorCode::ResourceNotFound);
        write_file(&p, &mut call(), "path", &path, b"data", Expect::Absent).unwrap();
        let e = delete_file(
            &p,
            &mut call(),
            "path",
            &path,
            Expect::Sha256(&"a".repeat(64)),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Stale);
        assert!(dir.path().join("r.tres").exists());
        let out = delete_file(
            &p,
            &mut call(),
            "path",
            &path,
            Expect::Sha256(&sha256_hex(b"data")),
        )
        .unwrap();
        assert_eq!(out.bytes, 4);
        assert!(!dir.path().join("r.tres").exists());
    }

    fn path_absent() -> ResPath {
        res("res://exists.gd")
    }

    #[test]
    fn hidden_and_escaping_targets_are_refused() {
        let (dir, p) = project();
        write_file(
            &p,
            &mut call(),
            "path",
            &path_absent(),
            b"x",
            Expect::Absent,
        )
        .unwrap();
        let e = write_file(
            &p,
            &mut call(),
            "path",
            &path_absent(),
            b"again",
            Expect::Absent,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Stale);
        let e = write_file(
            &p,
            &mut call(),
            "path",
            &res("res://.godot/x.cfg"),
            b"x",
            Expect::Anything,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused);
        godot_mcp_os::fs::symlink("/tmp", dir.path().join("out")).unwrap();
        let e = write_file(
            &p,
            &mut call(),
            "path",
            &res("res://out/evil.gd"),
            b"x",
            Expect::Anything,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused);
    }
}
