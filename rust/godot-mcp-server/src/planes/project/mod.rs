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

mod change;
pub(crate) use change::*;

/// What the write seam needs of the server: the project and its journal (the server's
/// `AppState` gives both; the plane never sees the rest of it).
pub(crate) trait Store {
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
pub(crate) const MAX_WRITE_BYTES: usize = 16 * 1024 * 1024;

/// Which call the journal records a write under: the tool family (toolset), the
/// operation (tool name), and the client's idempotency key if it sent one.
#[derive(Debug)]
pub(crate) struct JournalCall {
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
    pub(crate) fn new(toolset: &'static str, tool: &'static str) -> Self {
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
pub(crate) fn expected_or_null<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<String>>, D::Error> {
    <Option<String> as serde::Deserialize>::deserialize(d).map(Some)
}

/// The schema keyword that keeps `null` in a published type (the registry strips
/// every other `null`, and this keyword with it).
pub(crate) const KEEP_NULL: &str = "x-keep-null";

/// The published schema of an `expected_sha256` read by [`expected_or_null`]: a
/// sha256, or `null` (must not exist), which the registry keeps ([`KEEP_NULL`]).
/// Use it as `#[schemars(with = "plane::ShaOrNull")]`.
pub(crate) struct ShaOrNull;

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
pub(crate) fn expect_of(expected: &Option<Option<String>>) -> Expect<'_> {
    match expected {
        None => Expect::Anything,
        Some(None) => Expect::Absent,
        Some(Some(sha)) => Expect::Sha256(sha),
    }
}

/// [`expect_of`] for a writer that creates the file when it is not there: no
/// expectation is "must not exist" when nothing is there (`exists` false).
pub(crate) fn expect_or_create(expected: &Option<Option<String>>, exists: bool) -> Expect<'_> {
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
pub(crate) struct DeleteOutcome {
    pub path: String,
    pub sha256_before: String,
    pub bytes: u64,
    /// The journal transaction that made the delete (absent in a preview).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
}

/// The current hash and size of a project file, or `None` when it does not exist.
pub(crate) fn current(
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

/// Godot's global class cache: the one file of `.godot/` written, and only as the
/// engine's own scan would leave it when a script write registers its class_name
/// (`tools::kit::class_cache`), in the script's change.
pub(crate) const CLASS_CACHE: &str = ".godot/global_script_class_cache.cfg";

/// Contained, not hidden (`.godot/` is Godot's private cache; only [`ROOT_VCS_FILES`]
/// are written, and [`CLASS_CACHE`] when the server itself names it with
/// `ResPath::godot_owned`, never from an argument), not the project root.
fn resolve_writable(project: &Project, param: &str, path: &ResPath) -> Result<PathBuf, ToolError> {
    if path.is_root() {
        return Err(ToolError::invalid_params(
            param,
            "res:// is the project folder, not a file",
        ));
    }
    if path.is_hidden() && !ROOT_VCS_FILES.contains(&path.rel()) && !path.is_godot_owned() {
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
pub(crate) fn check_write(
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
pub(crate) fn write_file(
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
        WriteError::NotReconciled => not_reconciled(),
        WriteError::Conflict { id } => idempotency_conflict(&id),
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

/// The journal's refusal before startup reconciliation has run (every journaled change).
fn not_reconciled() -> ToolError {
    ToolError::new(
        ErrorCode::WriteGateClosed,
        "writes are refused: the journal must be reconciled; restart the server",
    )
}

/// An idempotency id used before in a different context (every journaled change).
fn idempotency_conflict(id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "idempotency id {id:?} was already used in a different context; nothing was written"
        ),
    )
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
pub(crate) fn check_delete(
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
pub(crate) fn delete_file(
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
        // The class cache: written only under the server's own name for it, never
        // from a path an argument spells.
        let named = res(&format!("res://{CLASS_CACHE}"));
        let e =
            check_write(p.project(), "path", &named, b"list=[]\n", Expect::Anything).unwrap_err();
        assert_eq!(e.code, ErrorCode::PathRefused);
        let owned = ResPath::godot_owned(CLASS_CACHE);
        check_write(p.project(), "path", &owned, b"list=[]\n", Expect::Anything).unwrap();
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
