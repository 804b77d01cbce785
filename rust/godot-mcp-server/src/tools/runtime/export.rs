//! export_project and export_status: a supervised Godot export, its artifact journaled.

use super::common::NoArgs;
use super::sessions::{Captured, capture};
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{self, LaunchSpec};
use crate::project_root::decide_export_target;
use crate::respath::{ExportDest, ExportTarget};
use crate::rules::Precondition;
use crate::state::AppState;
use crate::tools::kit::godot_process::godot;
use crate::tools::{Call, Out};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportArgs {
    /// The export preset's name (export_presets.cfg).
    preset: String,
    /// A res:// path (not in .godot/) or an absolute path.
    output_path: ExportTarget,
    /// Required to export outside the project, or over an existing file.
    #[serde(default)]
    confirm: bool,
    /// Kill it after this many ms (default 600000).
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// The state of `path` now (absent, or its bytes' hash).
pub(super) fn file_state(
    path: &std::path::Path,
) -> Result<godot_mcp_journal::FileState, ToolError> {
    godot_mcp_journal::durable::read_state(path)
        .map_err(|e| ToolError::new(ErrorCode::Io, format!("{}: {e}", path.display())))
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ExportOut {
    #[serde(flatten)]
    pub run: Captured,
    pub registered: bool,
    /// Null when the export did not finish cleanly (nothing registered).
    pub artifact: Option<Artifact>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

/// A clean export's file, recorded in the journal.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Artifact {
    pub path: String,
    pub inside_project: bool,
    pub bytes: usize,
    pub sha256: String,
    pub transaction_id: String,
    pub linked_launch: String,
}

pub(super) async fn export_project(Call { state, args, .. }: Call<ExportArgs>) -> Out<ExportOut> {
    use godot_mcp_journal::FileState;
    // Decided before anything runs (the pipeline's path walk already refused a
    // hostile one); decided again here against the file system as it is now.
    let dest = decide_export_target(&state.project, "output_path", args.output_path.as_str())?;
    let real = match &dest {
        ExportDest::Inside { real, .. } | ExportDest::Outside { real } => real.clone(),
    };
    let pre = file_state(&real)?;
    // The spec's confirm rule for an export, as a precondition: a target outside the
    // project, or an existing file inside it, needs confirm=true.
    let unconfirmed = match (&dest, &pre) {
        (ExportDest::Outside { real }, _) => Some(Precondition::ExportConfirmed {
            target: real.display().to_string(),
            outside: true,
        }),
        (ExportDest::Inside { res, .. }, FileState::Present { .. }) => {
            Some(Precondition::ExportConfirmed {
                target: res.to_string(),
                outside: false,
            })
        }
        (ExportDest::Inside { .. }, FileState::Absent) => None,
    };
    if let Some(p) = unconfirmed.filter(|_| !args.confirm) {
        return Err(p.error());
    }
    let program = godot(&state)?;
    let timeout_ms = args.timeout_ms.unwrap_or(600_000).clamp(1, 3_600_000);
    let session = state
        .process
        .launch(
            &state,
            LaunchSpec {
                purpose: "export_project",
                program,
                args: vec![
                    "--headless".into(),
                    "--path".into(),
                    state.project.root().display().to_string(),
                    "--export-release".into(),
                    args.preset.clone(),
                    // Into the session dir: an artifact only once Godot exits 0.
                    format!(
                        "{}/{}",
                        process::SESSION_DIR_PLACEHOLDER,
                        godot_mcp_journal::launch::EXPORT_PARTIAL
                    ),
                ],
                user_args: vec![],
                tool_family: "runtime",
                operation: "export_project",
                parent: None,
                writes_disk: true,
            },
        )
        .await?;
    let ended = session
        .wait_or_kill(Duration::from_millis(timeout_ms))
        .await
        .ok_or_else(|| ToolError::internal("the killed export did not end"))?;
    let partial = session
        .output_dir()
        .join(godot_mcp_journal::launch::EXPORT_PARTIAL);
    let run = capture(&session, &ended);
    if !(ended.code == Some(0) && ended.boundary_empty && partial.is_file()) {
        return Ok(ExportOut {
            run,
            registered: false,
            artifact: None,
            hint: Some(
                "The export did not finish cleanly: no artifact was registered; what it wrote is \
                 kept in the server's private state as evidence (export_status counts it).",
            ),
        });
    }
    let link = session.txn;
    let st = state.clone();
    let artifact =
        tokio::task::spawn_blocking(move || register_artifact(&st, dest, pre, &partial, link))
            .await
            .map_err(|e| ToolError::internal(format!("artifact task failed: {e}")))??;
    Ok(ExportOut {
        run,
        registered: true,
        artifact: Some(artifact),
        hint: None,
    })
}

/// Move a finished export to its target and record it. Inside the project the bytes
/// go through the one write seam as a composite `file` transaction linked to the
/// export's launch (committed only if the launch's proof is clean and the target is
/// still in the state seen before the export: compare-and-swap). Outside, the server
/// writes it atomically and durably and records its post-state hash.
pub(super) fn register_artifact(
    state: &AppState,
    dest: ExportDest,
    pre: godot_mcp_journal::FileState,
    partial: &std::path::Path,
    link: godot_mcp_journal::TxnId,
) -> Result<Artifact, ToolError> {
    use godot_mcp_journal::{FileState, FileWrite, TxnOutcome};
    let bytes = std::fs::read(partial)
        .map_err(|e| ToolError::new(ErrorCode::Io, format!("the export's output: {e}")))?;
    let size = bytes.len();
    let sha = match FileState::of(&bytes) {
        FileState::Present { sha256 } => sha256.to_string(),
        FileState::Absent => String::new(),
    };
    // A direct handler: the export's own identity, with no idempotency key (export
    // does not take one).
    let (tool_family, operation, idempotency) =
        crate::planes::project::JournalCall::new("runtime", "export_project").next_write();
    let out = match dest {
        ExportDest::Inside { res, .. } => {
            let req = FileWrite {
                rel_path: PathBuf::from(res.rel()),
                bytes,
                expected: Some(pre),
                idempotency,
                tool_family,
                operation,
            };
            let outcome = state
                .journal
                .lock()
                .write_file_linked(req, link)
                .map_err(|e| crate::planes::project::write_error(&res, "output_path", e))?;
            let txn = match outcome {
                TxnOutcome::Committed { transaction_id, .. } => transaction_id,
                TxnOutcome::Replayed(r) => r.transaction_id,
            };
            Artifact {
                path: res.to_string(),
                inside_project: true,
                bytes: size,
                sha256: sha,
                transaction_id: txn.to_string(),
                linked_launch: link.to_string(),
            }
        }
        ExportDest::Outside { real } => {
            let io = |e: std::io::Error| {
                ToolError::new(ErrorCode::Io, format!("{}: {e}", real.display()))
            };
            if let Some(parent) = real.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            godot_mcp_journal::durable::write_atomic(&real, &bytes).map_err(io)?;
            let observed = file_state(&real)?;
            let txn = state
                .journal
                .lock()
                .record_external_artifact(link, &real, pre, observed, &tool_family, &operation)
                .map_err(|e| {
                    ToolError::new(ErrorCode::Io, format!("recording the artifact: {e}"))
                })?;
            let observed = match observed {
                FileState::Present { sha256 } => sha256.to_string(),
                FileState::Absent => String::new(),
            };
            Artifact {
                path: real.display().to_string(),
                inside_project: false,
                bytes: size,
                sha256: observed,
                transaction_id: txn.to_string(),
                linked_launch: link.to_string(),
            }
        }
    };
    // Moved: the evidence of a clean export is its artifact, not a second copy.
    let _ = std::fs::remove_file(partial);
    Ok(out)
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ExportStatusOut {
    pub running: Vec<String>,
    pub interrupted_exports_retained: usize,
    pub retained_bytes: u64,
    pub retained_bytes_served: bool,
}

pub(super) async fn export_status(Call { state, .. }: Call<NoArgs>) -> Out<ExportStatusOut> {
    let state_dir = state.journal.lock().state_dir().to_path_buf();
    let (count, bytes) = godot_mcp_journal::launch::retained_export_bytes(&state_dir);
    let running: Vec<String> = state
        .process
        .sessions()
        .iter()
        .filter(|s| s.purpose == "export_project" && s.ended().is_none())
        .map(|s| s.txn.to_string())
        .collect();
    Ok(ExportStatusOut {
        running,
        interrupted_exports_retained: count,
        retained_bytes: bytes,
        retained_bytes_served: false,
    })
}
