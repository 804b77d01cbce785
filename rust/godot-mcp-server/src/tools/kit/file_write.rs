//! File writes every domain makes through the one write seam (`planes::project`): a
//! planned write of exact bytes with the plan's view of the target as the expectation
//! (`STALE` when the file changed in between), its effect as the dry run and the real run
//! report it, a script write followed by Godot's parse check, telling a connected editor
//! of the files written, and planned writes applied as one journaled change
//! (`write_each`: the scaffold, cross-scene edits). Used by files, script, shader,
//! visual_shader, settings, resource, audio, scene, project and runtime (screenshots); a
//! C# script write may carry the build check (`check: "build"`, `BuildCheck`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::honesty::{Persistence, Undo};
use crate::planes::project::{self as plane, Expect, JournalCall};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::Plan;
use crate::tools::kit::class_cache::{self, Registration};
use crate::tools::kit::dotnet_build::{BuildCheck, Check};
use crate::tools::kit::godot_process::{CHECK_TIMEOUT, ParseErrorItem, check_gd, godot};

/// What a file write will do and what it means; the dry run and the real run report it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileEffect {
    pub action: &'static str,
    #[serde(flatten)]
    pub write: plane::WriteOutcome,
    #[serde(flatten)]
    pub persistence: Persistence,
    #[serde(flatten)]
    pub undo: Undo,
}

const SCRIPT_EXTS: [&str; 4] = ["gd", "cs", "gdshader", "gdshaderinc"];

pub(crate) fn require_script_path(path: &ResPath) -> Result<(), ToolError> {
    match path.extension() {
        Some(ext) if SCRIPT_EXTS.contains(&ext.as_str()) => Ok(()),
        _ => Err(ToolError::invalid_params(
            "path",
            format!("{path} is not a script path (.gd, .cs, .gdshader, .gdshaderinc)"),
        )),
    }
}

/// A single journaled file write: its effect, then its transaction.
pub(crate) type WritePlan = Plan<FileEffect, crate::tools::Committed>;

/// A script write's plan: the write, then (a `.gd` on disk) Godot's parse check.
pub(crate) type ScriptPlan = Plan<ScriptEffect, ScriptWritten>;

/// A script write's effect: the file's, and what it registers with Godot.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScriptEffect {
    #[serde(flatten)]
    pub file: FileEffect,
    #[serde(flatten)]
    pub class: Registration,
}

/// What a script write adds when applied: its transaction and, for a `.gd` written to
/// disk, what Godot's parser says of it (the agent's own check, answered in the same
/// call; issue 40). The file is kept either way: it holds the agent's text, and a
/// patch mends it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScriptWritten {
    transaction_id: String,
    /// .gd: Godot's parse errors in the written file ([]: it parses). The file is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    parse_errors: Option<Vec<ParseErrorItem>>,
    /// Why the file was not parse-checked (no Godot found, the check did not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    parse_unchecked: Option<String>,
}

/// `plan` (a script write) followed, once the file is on disk, by Godot's parse check
/// of a `.gd` (`--check-only`, as get_parse_errors runs it). Staged in a change, nothing
/// is on disk yet: no check. Blocking: a plan's apply runs off the async threads.
pub(crate) fn parse_checked(state: &Arc<AppState>, path: &ResPath, plan: WritePlan) -> ScriptPlan {
    let gd = path.extension().as_deref() == Some("gd");
    let (state, path, apply) = (state.clone(), path.to_string(), plan.apply);
    Plan {
        effect: ScriptEffect {
            file: plan.effect,
            class: Registration::default(),
        },
        apply: Box::new(move |call| {
            let staged = call.stage.is_some();
            let done = apply(call)?;
            let mut out = ScriptWritten {
                transaction_id: done.transaction_id,
                parse_errors: None,
                parse_unchecked: None,
            };
            if gd && !staged {
                match parse_check(&state, &path) {
                    Ok(errors) => out.parse_errors = Some(errors),
                    Err(why) => out.parse_unchecked = Some(why),
                }
            }
            Ok(out)
        }),
        preview: None,
    }
}

/// A script write ([`plan_write_checked`], then [`parse_checked`]) that leaves the
/// project as Godot's scan would: a `.gd`'s `.uid` sidecar and class-cache entry
/// (`class_cache::plan`) are written in the same journaled change as the script, all
/// or nothing. With an editor connected the editor owns the cache: it is told of the
/// file instead. Inside an agent's change the files are staged with the script, the
/// cache rebased on what the change already staged (`class_cache::rebase_staged`).
pub(crate) fn plan_script(
    state: &Arc<AppState>,
    path: ResPath,
    bytes: Vec<u8>,
    expected: Expect<'_>,
    persistence: Persistence,
    check: Option<BuildCheck>,
) -> Result<ScriptPlan, ToolError> {
    let (class, extra, edit) = if path.extension().as_deref() == Some("gd") && check.is_none() {
        class_cache::plan(state, &path, &bytes, editor_connected(state))?
    } else {
        Default::default()
    };
    if extra.is_empty() {
        let plan = plan_write_checked(
            state,
            "path",
            path.clone(),
            bytes,
            expected,
            persistence,
            check,
        )?;
        let mut plan = parse_checked(state, &path, plan);
        plan.effect.class = class;
        return Ok(plan);
    }
    let outcome = plane::check_write(&state.project, "path", &path, &bytes, expected)?;
    let before = outcome.sha256_before.clone();
    let effect = file_effect(outcome, persistence);
    let st = state.clone();
    let target = path.clone();
    let plan = Plan::new(effect, move |call| {
        let staged = call.stage.is_some();
        let extra = match &call.stage {
            Some(stage) => class_cache::rebase_staged(extra, edit.as_ref(), &stage.lock()),
            None => extra,
        };
        let mut writes = vec![(target.clone(), bytes, before)];
        writes.extend(extra);
        let done = write_each_as(&st, call, "path", &writes)?;
        if !staged {
            tell_editor(&st, &[target.to_string()]);
        }
        Ok(crate::tools::Committed {
            transaction_id: done
                .transaction_ids
                .first()
                .cloned()
                .flatten()
                .unwrap_or_default(),
        })
    })?;
    let mut plan = parse_checked(state, &path, plan);
    plan.effect.class = class;
    Ok(plan)
}

/// A planned write's effect: created or overwritten, never in an undo history.
fn file_effect(outcome: plane::WriteOutcome, persistence: Persistence) -> FileEffect {
    FileEffect {
        action: if outcome.created {
            "create"
        } else {
            "overwrite"
        },
        write: outcome,
        persistence,
        undo: Undo::not_undo_tracked(),
    }
}

/// Whether an editor is connected through the bridge (it then owns the class cache).
fn editor_connected(state: &AppState) -> bool {
    matches!(
        state.editor.bridge_status(),
        crate::rules::BridgeStatus::Connected { .. }
    )
}

/// Godot's parse errors of the `.gd` at `path`, or why they could not be had.
fn parse_check(state: &Arc<AppState>, path: &str) -> Result<Vec<ParseErrorItem>, String> {
    let program = godot(state).map_err(|e| format!("no Godot to check it with: {}", e.message))?;
    let checked = tokio::runtime::Handle::current()
        .block_on(check_gd(state, &program, path, CHECK_TIMEOUT))
        .map_err(|e| format!("the parse check did not run: {}", e.message))?;
    if checked.unexplained() {
        return Err(format!(
            "Godot exited {:?} without a parse error; its output ends: {}",
            checked.ended.code,
            checked.output_tail()
        ));
    }
    Ok(checked.errors)
}

/// Plan a write of `bytes` to `path`, applied with the plan's view of the target.
pub(crate) fn plan_write(
    state: &Arc<AppState>,
    param: &'static str,
    path: ResPath,
    bytes: Vec<u8>,
    expected: Expect<'_>,
    persistence: Persistence,
) -> Result<WritePlan, ToolError> {
    plan_write_checked(state, param, path, bytes, expected, persistence, None)
}

/// A script write's `check`: a `.cs` path and what the build needs, found before
/// anything is written (no SDK: refused, PRECONDITION_FAILED required: dotnet_sdk).
pub(crate) fn build_check(
    state: &AppState,
    path: &ResPath,
    check: Option<Check>,
) -> Result<Option<BuildCheck>, ToolError> {
    let Some(Check::Build) = check else {
        return Ok(None);
    };
    if path.extension().as_deref() != Some("cs") {
        return Err(ToolError::invalid_params(
            "check",
            format!(
                "{path} is not a C# file: check \"build\" builds .cs writes; nothing was written"
            ),
        ));
    }
    BuildCheck::prepare(state).map(Some)
}

/// [`plan_write`] with a build check: the write is applied as a one-file change the
/// journal holds open while `dotnet build` runs, kept if the build passes, put back
/// (`compensated`) if it fails, the error carrying the diagnostics.
pub(crate) fn plan_write_checked(
    state: &Arc<AppState>,
    param: &'static str,
    path: ResPath,
    bytes: Vec<u8>,
    expected: Expect<'_>,
    persistence: Persistence,
    check: Option<BuildCheck>,
) -> Result<WritePlan, ToolError> {
    let outcome = plane::check_write(&state.project, param, &path, &bytes, expected)?;
    let expect_at_apply = outcome.sha256_before.clone();
    let effect = file_effect(outcome, persistence);
    let state = state.clone();
    Plan::new(effect, move |call| {
        let expect = expect_at_apply
            .as_deref()
            .map_or(Expect::Absent, Expect::Sha256);
        if let Some(check) = &check {
            let transaction_id = check.write(&state, call, param, &path, &bytes, expect)?;
            tell_editor(&state, &[path.to_string()]);
            return Ok(crate::tools::Committed { transaction_id });
        }
        let done = plane::write_file(&state, call, param, &path, &bytes, expect)?;
        // Staged inside a change: nothing is on disk yet for the editor to learn.
        if call.stage.is_none() {
            tell_editor(&state, &[path.to_string()]);
        }
        Ok(crate::tools::Committed {
            transaction_id: done.transaction_id.unwrap_or_default(),
        })
    })
}

/// How long a write waits for a scan it started (a file in a folder the editor has
/// not seen) before answering anyway.
const SCAN_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Tells a connected editor's file system of files the server wrote, before the call
/// answers (issue 40): their types, uids and `class_name`s are registered at once, so
/// the next editor call can use them without a rescan. A file in a folder the editor
/// has not seen starts a scan, which is waited for. Best effort: with no editor (or an
/// add-on that does not know the command) nothing is told; the write stands either way
/// and the editor's next scan finds it.
pub(crate) fn tell_editor(state: &AppState, paths: &[String]) {
    use godot_mcp_protocol::commands::{self as cmd, BridgeCommand};
    // The editor plane itself, not the editor tools' helpers (the layers: files sit
    // beside the editor tools, not above them).
    let connected = editor_connected(state);
    let Some(bridge) = state.editor.bridge().cloned().filter(|_| connected) else {
        return;
    };
    let timeout = std::time::Duration::from_millis(state.config.editor_timeout_ms);
    let ask = |c: &dyn Fn() -> (&'static str, serde_json::Value)| {
        let (method, params) = c();
        bridge.request(method, params, timeout).ok()
    };
    let update = cmd::FilesystemUpdate {
        paths: paths.to_vec(),
    };
    let Some(reply) = ask(&|| (cmd::FilesystemUpdate::METHOD, update.params())) else {
        tracing::debug!("could not tell the editor of written files");
        return;
    };
    if reply["scan_started"] != serde_json::json!(true) {
        return;
    }
    let before = reply["scans_finished"].as_u64().unwrap_or(0);
    let start = std::time::Instant::now();
    while start.elapsed() < SCAN_WAIT {
        let status = cmd::FilesystemStatus {};
        match ask(&|| (cmd::FilesystemStatus::METHOD, status.params())) {
            Some(s)
                if s["scanning"] == serde_json::json!(false)
                    && s["scans_finished"].as_u64().unwrap_or(0) > before =>
            {
                return;
            }
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
            None => return,
        }
    }
}

/// What applying planned writes adds: each file's transaction, in order.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Written {
    transaction_ids: Vec<Option<String>>,
}

/// Apply planned writes as one journaled change, each with the pre-state its bytes
/// were computed from (`None`: the file must still be absent): every file is written,
/// or — should one fail midway — every file is put back before the answer, which says
/// so (`planes::project::apply_change`). Every file reports the change's transaction.
pub(crate) fn write_each(
    state: &AppState,
    call: &mut JournalCall,
    param: &'static str,
    writes: &[(ResPath, Vec<u8>, Option<String>)],
) -> Result<Map<String, Value>, ToolError> {
    crate::tools::untyped(write_each_as(state, call, param, writes)?)
}

/// [`write_each`], typed.
pub(crate) fn write_each_as(
    state: &AppState,
    call: &mut JournalCall,
    param: &'static str,
    writes: &[(ResPath, Vec<u8>, Option<String>)],
) -> Result<Written, ToolError> {
    if writes.is_empty() {
        return Ok(Written {
            transaction_ids: Vec::new(),
        });
    }
    let steps: Vec<plane::ChangeStep<'_>> = writes
        .iter()
        .map(|(path, bytes, before)| plane::ChangeStep {
            path,
            bytes: Some(bytes.as_slice()),
            expected: before.as_deref().map_or(Expect::Absent, Expect::Sha256),
        })
        .collect();
    let txn = plane::apply_change(state, call, param, &steps)?;
    let ids = vec![Some(txn); writes.len()];
    Ok(Written {
        transaction_ids: ids,
    })
}
