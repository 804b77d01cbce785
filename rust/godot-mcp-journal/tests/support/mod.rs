//! Shared by tests and benches: a project and state dir to launch in, and
//! journal rows forged the way a process that died right after its intent
//! commit would have left them.
#![allow(dead_code)]

use std::path::Path;

use godot_mcp_journal::journal::JOURNAL_FILE;
use godot_mcp_journal::{FileState, Journal, ProjectIdentity, TxnId};

/// Opens (and reconciles) the journal once to learn the identity and state dir.
pub fn identity_and_state_dir(
    state_root: &Path,
    project: &Path,
) -> (ProjectIdentity, std::path::PathBuf) {
    let mut j = Journal::open(state_root, project).unwrap();
    j.reconcile().unwrap();
    (j.identity().clone(), j.state_dir().to_path_buf())
}

/// Inserts `open` file intents directly into the journal (no lease held by
/// the caller's journal: drop it first). All rows in one transaction.
pub fn insert_open_intents(
    state_dir: &Path,
    identity: &ProjectIdentity,
    intents: &[(&str, FileState, FileState)],
) -> Vec<TxnId> {
    let mut conn = rusqlite::Connection::open(state_dir.join(JOURNAL_FILE)).unwrap();
    let tx = conn.transaction().unwrap();
    let mut ids = Vec::new();
    {
        let mut st = tx
            .prepare(
                "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                     operation, tool_family, state, intent_json, created_at_ms)
                 VALUES (?1, ?2, ?3, 'file', 'write', 'test', 'open', ?4, 0)",
            )
            .unwrap();
        for (rel, pre, post) in intents {
            let id = TxnId::random().unwrap();
            let intent = serde_json::json!({
                "kind": "file", "path": rel, "pre": pre, "post": post,
                "temp": format!("{}.gmcp-{id}.tmp", match Path::new(rel).parent() {
                    Some(p) if !p.as_os_str().is_empty() => format!("{}/", p.display()),
                    _ => String::new(),
                }),
            });
            st.execute(rusqlite::params![
                id.to_string(),
                identity.object_id,
                identity.generation as i64,
                intent.to_string()
            ])
            .unwrap();
            ids.push(id);
        }
    }
    tx.commit().unwrap();
    ids
}

/// A project (with its `project.godot`) and a journal state root.
pub struct Env {
    pub state: tempfile::TempDir,
    pub project: tempfile::TempDir,
}

pub fn env() -> Env {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("project.godot"), "config_version=5\n").unwrap();
    // A Unix socket path is short (about 100 bytes): keep the state root, where
    // launches put their control sockets, near the file system root.
    #[cfg(unix)]
    let state = tempfile::Builder::new()
        .prefix("jl")
        .tempdir_in("/tmp")
        .unwrap();
    #[cfg(not(unix))]
    let state = tempfile::tempdir().unwrap();
    Env { state, project }
}

/// A launch intent whose session dir is `session`, its control socket
/// `session/c.sock` (of inode `socket_inode`).
pub fn launch_intent(
    purpose: &str,
    program: &str,
    nonce: &str,
    session: &Path,
    socket_inode: u64,
) -> godot_mcp_journal::launch::LaunchIntent {
    godot_mcp_journal::launch::LaunchIntent {
        purpose: purpose.into(),
        program: program.into(),
        args: vec![],
        nonce: nonce.into(),
        endpoint: session.join("c.sock").display().to_string(),
        socket_inode,
        session_dir: session.display().to_string(),
        receipt: None,
    }
}

/// A repair proof for the row `txn` of effect `kind` in the project `identity` names,
/// with the file it claims (if any).
pub fn repair_proof(
    identity: &ProjectIdentity,
    txn: TxnId,
    op: godot_mcp_journal::repair::RepairOperation,
    kind: godot_mcp_journal::EffectKind,
    file: Option<godot_mcp_journal::repair::FileClaim>,
) -> godot_mcp_journal::repair::RepairProof {
    godot_mcp_journal::repair::RepairProof {
        schema: godot_mcp_journal::repair::PROOF_SCHEMA.into(),
        transaction_id: txn,
        project_object_id: identity.object_id.clone(),
        generation: identity.generation,
        operation: op,
        effect_kind: kind,
        file,
    }
}

/// One test of a file at a time, for the files whose tests spawn child processes: a
/// child holds copies of the other tests' descriptors, a lease's among them, until
/// its exec closes them, which can keep a lease another test has just dropped
/// ("another godot-mcp server holds the project lease", seen in CI).
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
