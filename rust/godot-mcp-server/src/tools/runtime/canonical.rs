//! canonicalize_resource: a text resource re-saved by a supervised Godot helper.

use super::sessions::read_capped;
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{self, LaunchSpec};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::game::session::process_end;
use crate::tools::kit::godot_process::godot;
use crate::tools::{Plan, ToolDef, ToolMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The canonical-write helper the add-on ships (`extends SceneTree`).
pub(crate) const HELPER_SCRIPT: &str = "res://addons/godot_mcp/probe/canonical.gd";

pub(crate) fn helper_tools() -> Vec<ToolDef> {
    vec![ToolDef::planned(
        ToolMeta {
            name: "canonicalize_resource",
            title: "Re-save a text resource canonically",
            description: "Re-save a .tres or .tscn exactly as Godot writes it, through a \
                supervised Godot helper (ResourceSaver); journaled.",
            class: class::Destructive,
            toolset: Toolset::ResourceEdit,
            effect: Some(EffectKind::File),
        },
        plan_canonicalize,
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CanonicalizeArgs {
    /// The resource (.tres) or scene (.tscn) to re-save.
    path: ResPath,
    /// Refuse if the file is no longer these bytes (sha256 hex, from read_resource).
    #[serde(default)]
    expected_sha256: Option<String>,
}

/// What canonicalize_resource will do (dry run and real run).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CanonicalizeEffect {
    pub action: &'static str,
    pub path: String,
    pub sha256_before: String,
    pub helper: &'static str,
    pub composite: &'static str,
}

/// What the re-save added: its file transaction, linked to the helper's launch.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Canonicalized {
    pub transaction_id: String,
    pub linked_launch: String,
    pub sha256_after: String,
    pub persisted: bool,
}

pub(super) fn plan_canonicalize(
    state: Arc<AppState>,
    args: CanonicalizeArgs,
) -> Result<Plan<CanonicalizeEffect, Canonicalized>, ToolError> {
    use godot_mcp_journal::{FileState, FileWrite, TxnOutcome};
    // The helper's output keeps the extension: Godot's text saver refuses to write a
    // PackedScene to a .tres.
    let out_name = match args.path.extension().as_deref() {
        Some("tres") => "out.tres",
        Some("tscn") => "out.tscn",
        _ => {
            return Err(ToolError::invalid_params(
                "path",
                format!(
                    "{} is not a text resource (.tres) or scene (.tscn)",
                    args.path
                ),
            ));
        }
    };
    let program = godot(&state)?;
    let target = state.project.resolve("path", &args.path)?;
    let before = std::fs::read(&target)
        .map_err(|e| ToolError::new(ErrorCode::ResourceNotFound, format!("{}: {e}", args.path)))?;
    let pre = FileState::of(&before);
    let sha_before = match pre {
        FileState::Present { sha256 } => sha256.to_string(),
        FileState::Absent => String::new(),
    };
    if let Some(expected) = &args.expected_sha256
        && !sha_before.ends_with(expected.trim_start_matches("sha256:"))
    {
        return Err(ToolError::new(
            ErrorCode::Stale,
            format!(
                "{} changed since it was read; nothing was written",
                args.path
            ),
        ));
    }
    let effect = CanonicalizeEffect {
        action: "canonicalize",
        path: args.path.to_string(),
        sha256_before: sha_before,
        helper: HELPER_SCRIPT,
        composite: "file + process_launch",
    };
    let path = args.path.clone();
    Plan::new(effect, move |call| {
        let handle = tokio::runtime::Handle::current();
        let st = state.clone();
        let root = st.project.root().display().to_string();
        let session = handle.block_on(async {
            st.process
                .launch(
                    &st,
                    LaunchSpec {
                        purpose: "helper",
                        program,
                        args: vec![
                            "--headless".into(),
                            "--path".into(),
                            root,
                            "--script".into(),
                            HELPER_SCRIPT.into(),
                        ],
                        user_args: vec![
                            format!("--godot-mcp-in={path}"),
                            format!(
                                "--godot-mcp-out={}/{out_name}",
                                process::SESSION_DIR_PLACEHOLDER
                            ),
                        ],
                        tool_family: "resources",
                        operation: "canonicalize_helper",
                        parent: None,
                        writes_disk: true,
                    },
                )
                .await
        })?;
        let ended = handle.block_on(session.wait_or_kill(Duration::from_secs(120)));
        let Some(ended) = ended else {
            return Err(ToolError::internal("the helper did not end"));
        };
        let out = session.output_dir().join(out_name);
        let bytes = match (ended.code, std::fs::read(&out)) {
            (Some(0), Ok(b)) => b,
            _ => {
                let (stderr, _) = read_capped(&session.output_dir().join("stderr.log"));
                return Err(ToolError::new(
                    ErrorCode::PreconditionFailed,
                    format!(
                        "The Godot helper did not produce the canonical bytes ({}); nothing was \
                         written. {}",
                        serde_json::to_string(&process_end(&ended)).unwrap_or_default(),
                        stderr.lines().take(5).collect::<Vec<_>>().join(" | ")
                    ),
                ));
            }
        };
        // A uid the file had and the candidate lacks would silently cut every link to
        // this file (or from it) made by uid: refuse, whatever the helper did.
        let lost = lost_uids(&before, &bytes);
        if !lost.is_empty() {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "The Godot helper's output of {path} drops or changes its uid links ({}); \
                     nothing was written.",
                    lost.join(", ")
                ),
            ));
        }
        let sha_after = match FileState::of(&bytes) {
            FileState::Present { sha256 } => sha256.to_string(),
            FileState::Absent => String::new(),
        };
        let (tool_family, operation, idempotency) = call.next_write();
        let req = FileWrite {
            rel_path: PathBuf::from(path.rel()),
            bytes,
            expected: Some(pre),
            idempotency,
            tool_family,
            operation,
        };
        let outcome = st
            .journal
            .lock()
            .write_file_linked(req, session.txn)
            .map_err(|e| crate::planes::project::write_error(&path, "path", e))?;
        let txn = match outcome {
            TxnOutcome::Committed { transaction_id, .. } => transaction_id,
            TxnOutcome::Replayed(r) => r.transaction_id,
        };
        Ok(Canonicalized {
            transaction_id: txn.to_string(),
            linked_launch: session.txn.to_string(),
            sha256_after: sha_after,
            persisted: true,
        })
    })
}

/// The uids of a text resource's tags (`uid="…"` in the `[gd_resource]` / `[gd_scene]`
/// header and in each `[ext_resource]`) that `before` has and `after` does not: the
/// header's own uid must stay the same, every dependency's uid must still be there.
pub(super) fn lost_uids(before: &[u8], after: &[u8]) -> Vec<String> {
    let (own_before, deps_before) = tag_uids(before);
    let (own_after, deps_after) = tag_uids(after);
    let mut lost = Vec::new();
    if let Some(own) = own_before
        && own_after.as_deref() != Some(own.as_str())
    {
        lost.push(format!("header {own}"));
    }
    for dep in deps_before {
        if !deps_after.contains(&dep) {
            lost.push(format!("ext_resource {dep}"));
        }
    }
    lost
}

/// (header uid, ext_resource uids) of a text resource.
pub(super) fn tag_uids(text: &[u8]) -> (Option<String>, std::collections::BTreeSet<String>) {
    fn uid_of(line: &str) -> Option<String> {
        let rest = &line[line.find(" uid=\"")? + 6..];
        Some(rest[..rest.find('"')?].to_string())
    }
    let text = String::from_utf8_lossy(text);
    let mut own = None;
    let mut deps = std::collections::BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("[gd_resource ") || line.starts_with("[gd_scene ") {
            own = own.or_else(|| uid_of(line));
        } else if line.starts_with("[ext_resource ") {
            deps.extend(uid_of(line));
        }
    }
    (own, deps)
}

#[cfg(test)]
mod tests {
    use super::lost_uids;

    const FILE: &str = "[gd_resource type=\"Resource\" load_steps=2 format=3 uid=\"uid://own\"]\n\n\
        [ext_resource type=\"Script\" uid=\"uid://dep\" path=\"res://s.gd\" id=\"1_a\"]\n\n\
        [resource]\nscript = ExtResource(\"1_a\")\n";

    #[test]
    fn a_candidate_that_keeps_every_uid_loses_none() {
        assert!(lost_uids(FILE.as_bytes(), FILE.as_bytes()).is_empty());
        // A file without uids has none to lose.
        let bare = b"[gd_resource type=\"Resource\" format=3]\n";
        assert!(lost_uids(bare, FILE.as_bytes()).is_empty());
    }

    #[test]
    fn a_dropped_or_changed_uid_is_named() {
        let dropped = FILE
            .replace(" uid=\"uid://own\"", "")
            .replace(" uid=\"uid://dep\"", "");
        assert_eq!(
            lost_uids(FILE.as_bytes(), dropped.as_bytes()),
            ["header uid://own", "ext_resource uid://dep"]
        );
        let changed = FILE.replace("uid://own", "uid://other");
        assert_eq!(
            lost_uids(FILE.as_bytes(), changed.as_bytes()),
            ["header uid://own"]
        );
    }
}
