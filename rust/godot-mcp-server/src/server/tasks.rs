//! Long work as MCP tasks: the official `io.modelcontextprotocol/tasks` extension
//! (SEP-2663, beside protocol 2026-07-28; rmcp's `CreateTaskResult`, `tasks/get`,
//! `tasks/cancel`).
//!
//! A client that declares the extension (its capabilities at `initialize`, or the
//! request's `_meta` client capabilities) and calls one of [`TASK_TOOLS`] gets a task
//! once the call's first launch is journaled: the task's id **is** that launch's
//! journal transaction id. A call that ends before it launches anything (a refusal,
//! an approval to ask) is answered as it always was, and a client that does not
//! declare the extension gets today's answer to every call.
//!
//! While the server runs, a task is answered from memory: `working` with the
//! transaction's state and the call's last step as its message, then `completed`
//! with the tool's result (which names the transaction), or `cancelled` after
//! `tasks/cancel` (the call's cancellation, which kills the launch as a cancelled
//! request does). The final answer is also kept in the state dir
//! (`tasks/<id>.json`). A task is the server's, not a session's: a client that
//! reconnects polls the same id. After a restart (a crash included) a task that was
//! still running is answered from the journal: `working` while its transaction is
//! open, else `failed` with the transaction's row (how its launch was settled).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use godot_mcp_journal::{TxnRecord, TxnStatus};
use parking_lot::Mutex;
use rmcp::model::{DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The tools that run as tasks for a client that asks: each waits on a launch.
pub(crate) const TASK_TOOLS: &[&str] = &[
    "run_tests",
    "export_project",
    "run_playtest",
    "bake_navigation_mesh",
    "import_asset",
    "start_editor",
];

/// How often a client should poll a working task.
const POLL_INTERVAL_MS: u64 = 500;
/// How long a finished task's answer is kept (in memory and in the state dir).
pub(crate) const TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// Finished tasks held in memory (older ones are answered from the state dir).
const KEPT_IN_MEMORY: usize = 256;
/// The state dir's folder of finished tasks' answers.
const TASKS_DIR: &str = "tasks";

/// The server's tasks (every session's).
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_id: HashMap<String, Entry>,
    /// Finished tasks, oldest first (dropped from memory past [`KEPT_IN_MEMORY`]).
    finished: VecDeque<String>,
}

#[derive(Debug, Clone)]
struct Entry {
    tool: String,
    created_ms: i64,
    updated_ms: i64,
    payload: TaskPayload,
    message: Option<String>,
    cancel: CancellationToken,
    /// `tasks/cancel` was asked.
    cancel_asked: bool,
}

impl Tasks {
    /// A task `id` (its launch's transaction) for a call of `tool`, working; `cancel`
    /// is the call's cancellation.
    pub(crate) fn start(&self, id: &str, tool: &str, cancel: CancellationToken) -> Task {
        let now = now_ms();
        let entry = Entry {
            tool: tool.to_owned(),
            created_ms: now,
            updated_ms: now,
            payload: TaskPayload::Working,
            message: Some(format!("{tool}: transaction {id} open")),
            cancel,
            cancel_asked: false,
        };
        let task = entry.detailed(id).task;
        self.inner.lock().by_id.insert(id.to_owned(), entry);
        task
    }

    /// The call of task `id` reported a step.
    pub(crate) fn step(&self, id: &str, step: &str) {
        if let Some(e) = self.inner.lock().by_id.get_mut(id)
            && matches!(e.payload, TaskPayload::Working)
        {
            e.message = Some(format!("{}: transaction {id} open; {step}", e.tool));
            e.updated_ms = now_ms();
        }
    }

    /// The call of task `id` ended with `result` (a `CallToolResult`, as JSON), or
    /// was cancelled by `tasks/cancel`. The answer is also written to `state_dir`.
    pub(crate) fn finish(&self, id: &str, result: JsonObject, state_dir: &Path) {
        let detailed = {
            let mut inner = self.inner.lock();
            let Some(e) = inner.by_id.get_mut(id) else {
                return;
            };
            if e.cancel_asked {
                e.payload = TaskPayload::Cancelled;
                e.message = Some(format!(
                    "{}: cancelled by tasks/cancel; the launch was stopped (transaction {id} \
                     in the journal)",
                    e.tool
                ));
            } else {
                e.payload = TaskPayload::Completed { result };
                e.message = None;
            }
            e.updated_ms = now_ms();
            let detailed = e.detailed(id);
            inner.finished.push_back(id.to_owned());
            while inner.finished.len() > KEPT_IN_MEMORY {
                if let Some(old) = inner.finished.pop_front() {
                    inner.by_id.remove(&old);
                }
            }
            detailed
        };
        if let Err(e) = keep(state_dir, &detailed) {
            tracing::warn!(task = id, error = %e, "could not keep the task's answer");
        }
    }

    /// The call of task `id` failed without a tool result (`error`: a JSON-RPC error).
    pub(crate) fn fail(&self, id: &str, error: JsonObject, state_dir: &Path) {
        let detailed = {
            let mut inner = self.inner.lock();
            let Some(e) = inner.by_id.get_mut(id) else {
                return;
            };
            e.payload = TaskPayload::Failed { error };
            e.updated_ms = now_ms();
            e.detailed(id)
        };
        let _ = keep(state_dir, &detailed);
    }

    /// Task `id` as this server holds it, then as the state dir kept it.
    pub(crate) fn get(&self, id: &str, state_dir: &Path) -> Option<DetailedTask> {
        if let Some(e) = self.inner.lock().by_id.get(id) {
            return Some(e.detailed(id));
        }
        kept(state_dir, id)
    }

    /// Ask the call of working task `id` to stop (its launch is killed). A task that
    /// already ended is left as it is (cancelling is idempotent); `false` for an id
    /// this server does not know.
    pub(crate) fn cancel(&self, id: &str, state_dir: &Path) -> bool {
        let mut inner = self.inner.lock();
        let Some(e) = inner.by_id.get_mut(id) else {
            return kept(state_dir, id).is_some();
        };
        if matches!(e.payload, TaskPayload::Working) && !e.cancel_asked {
            e.cancel_asked = true;
            e.message = Some(format!("{}: cancelling; transaction {id} open", e.tool));
            e.updated_ms = now_ms();
            e.cancel.cancel();
        }
        true
    }
}

impl Entry {
    fn detailed(&self, id: &str) -> DetailedTask {
        let mut task = Task::new(
            id,
            TaskStatus::Working,
            iso8601(self.created_ms),
            iso8601(self.updated_ms),
        )
        .with_ttl_ms(TTL_MS)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
        if let Some(m) = &self.message {
            task = task.with_status_message(m.clone());
        }
        DetailedTask::new(task, self.payload.clone())
    }
}

/// A task this server does not hold, answered from its launch's journal row `row`
/// (the server that ran it has restarted): working while the transaction is open,
/// else failed, with the row as the error's data.
pub(crate) fn from_journal(row: &TxnRecord) -> DetailedTask {
    let id = row.transaction_id.to_string();
    let updated = row.terminal_at_ms.unwrap_or(row.created_at_ms);
    let task = Task::new(
        &id,
        TaskStatus::Working,
        iso8601(row.created_at_ms),
        iso8601(updated),
    )
    .with_ttl_ms(TTL_MS)
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    let summary = row.proof_summary.as_deref().or(row.reason.as_deref());
    if row.status == TxnStatus::Open {
        let message = format!(
            "{}: transaction {id} open; the server that ran this task restarted, and the \
             journal settles the launch when it is reconciled",
            row.operation
        );
        return DetailedTask::new(task.with_status_message(message), TaskPayload::Working);
    }
    let message = format!(
        "the server that ran this task restarted before it ended; its launch ({}, \
         transaction {id}) is {} in the journal{}. The tool's result was not kept: call \
         {} again for it.",
        row.operation,
        row.status.as_str(),
        summary.map(|s| format!(": {s}")).unwrap_or_default(),
        tool_of(&row.operation),
    );
    let error = json!({
        "code": -32603,
        "message": message,
        "data": {"transaction": row, "hint": "list_transactions shows the row; godot-mcp://transactions/{id} serves it"},
    });
    let Value::Object(error) = error else {
        unreachable!("a JSON object")
    };
    DetailedTask::new(
        task.with_status_message(message),
        TaskPayload::Failed { error },
    )
}

/// The tool behind a launch's operation (`run_tests_import` is run_tests' import).
fn tool_of(operation: &str) -> &str {
    TASK_TOOLS
        .iter()
        .copied()
        .find(|t| operation.starts_with(t))
        .unwrap_or(operation)
}

fn path_of(state_dir: &Path, id: &str) -> Option<PathBuf> {
    // Only a transaction id names a file: no separators, no dots.
    id.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        .then(|| state_dir.join(TASKS_DIR).join(format!("{id}.json")))
}

/// Write a finished task's answer (atomically: a temp file renamed over).
fn keep(state_dir: &Path, task: &DetailedTask) -> std::io::Result<()> {
    let Some(path) = path_of(state_dir, &task.task.task_id) else {
        return Ok(());
    };
    let dir = state_dir.join(TASKS_DIR);
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".{}.tmp", task.task.task_id));
    std::fs::write(&tmp, serde_json::to_vec(task)?)?;
    std::fs::rename(tmp, path)
}

/// A finished task's answer from the state dir, while within its TTL.
fn kept(state_dir: &Path, id: &str) -> Option<DetailedTask> {
    let path = path_of(state_dir, id)?;
    let bytes = std::fs::read(&path).ok()?;
    let task: DetailedTask = serde_json::from_slice(&bytes).ok()?;
    let age = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())?;
    if age.as_millis() > u128::from(TTL_MS) {
        let _ = std::fs::remove_file(path);
        return None;
    }
    Some(task)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `ms` since the Unix epoch as ISO 8601 UTC (`2026-12-06T16:10:16.123Z`).
fn iso8601(ms: i64) -> String {
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_796_573_416_123), "2026-12-06T16:10:16.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn a_finished_task_is_answered_from_the_state_dir_by_a_new_server() {
        let dir = tempfile::tempdir().unwrap();
        let first = Tasks::default();
        first.start("abc123", "run_tests", CancellationToken::new());
        let result = json!({"content": [], "structuredContent": {"outcome": "passed"}});
        first.finish("abc123", result.as_object().unwrap().clone(), dir.path());
        let second = Tasks::default();
        let task = second.get("abc123", dir.path()).expect("kept");
        assert_eq!(task.status(), TaskStatus::Completed);
        assert!(second.get("../abc123", dir.path()).is_none());
        // Cancelling an ended task acknowledges and changes nothing.
        assert!(second.cancel("abc123", dir.path()));
        let task = second.get("abc123", dir.path()).expect("kept");
        assert_eq!(task.status(), TaskStatus::Completed);
        assert!(!second.cancel("unknown", dir.path()));
    }
}
