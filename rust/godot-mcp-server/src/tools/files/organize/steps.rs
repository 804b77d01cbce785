//! The steps of a multi-file change (a move, a duplicate, a folder's delete):
//! each file's planned bytes or deletion, applied as one journaled change, and the
//! shared pieces of their plans and answers.

use godot_mcp_formats::relink;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::planes::project::{self as plane, Expect, JournalCall};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::common::{not_undoable, on_disk};

pub(super) const SIDECARS: [&str; 2] = [".import", ".uid"];

/// Extensions of the text files that can name another file by a res:// literal.
pub(super) const REFERRING_EXTS: [&str; 8] = [
    "tscn",
    "tres",
    "gd",
    "cs",
    "gdshader",
    "gdshaderinc",
    "godot",
    "cfg",
];

pub(super) fn res(s: &str) -> Result<ResPath, ToolError> {
    ResPath::parse(s).map_err(|e| ToolError::internal(e.to_string()))
}

pub(super) fn sidecar(path: &ResPath, suffix: &str) -> Result<ResPath, ToolError> {
    res(&format!("{path}{suffix}"))
}

pub(super) fn refuse_project_godot(param: &str, path: &ResPath) -> Result<(), ToolError> {
    if path.rel() == "project.godot" {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            "res://project.godot stays where it is",
        )
        .param(param));
    }
    Ok(())
}

pub(super) fn require_literal_safe(param: &str, path: &ResPath) -> Result<(), ToolError> {
    if relink::literal_safe(&path.to_string()) {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            param,
            format!(
                "{path} holds a quote or backslash; references to it cannot be rewritten exactly"
            ),
        ))
    }
}

/// One file the call writes: its planned bytes and what is there now.
#[derive(Debug, Clone)]
pub(super) struct Step {
    pub(super) path: ResPath,
    pub(super) op: Op,
}

#[derive(Debug, Clone)]
pub(super) enum Op {
    /// Write these bytes; `before` is the sha256 there now (`None`: absent).
    Write {
        bytes: Vec<u8>,
        before: Option<String>,
    },
    /// Delete the file whose sha256 is this.
    Delete { before: String },
}

impl Step {
    pub(super) fn expect(&self) -> Expect<'_> {
        match &self.op {
            Op::Write { before: None, .. } => Expect::Absent,
            Op::Write {
                before: Some(s), ..
            }
            | Op::Delete { before: s } => Expect::Sha256(s),
        }
    }

    /// The seam's own checks, without touching anything.
    pub(super) fn check(&self, state: &AppState, param: &str) -> Result<(), ToolError> {
        match &self.op {
            Op::Write { bytes, .. } => {
                plane::check_write(&state.project, param, &self.path, bytes, self.expect())
                    .map(|_| ())
            }
            Op::Delete { .. } => {
                plane::check_delete(&state.project, param, &self.path, self.expect()).map(|_| ())
            }
        }
    }

    pub(super) fn action(&self) -> &'static str {
        match &self.op {
            Op::Write { before: None, .. } => "create",
            Op::Write { .. } => "overwrite",
            Op::Delete { .. } => "delete",
        }
    }
}

/// One step applied: its file, what was done, and the change's transaction (the
/// same for every file of the call).
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct DoneStep {
    pub(super) path: String,
    pub(super) action: &'static str,
    pub(super) transaction_id: Option<String>,
}

/// What applying the steps adds: each step done, in order.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Done {
    pub(super) done: Vec<DoneStep>,
}

/// Apply `steps` as one journaled change: every file written or deleted, or none.
/// Every step is checked again first, so a file that changed since the plan stops
/// the call before anything is written; a failure midway puts every file back
/// before the answer, which says so (see `planes::project::apply_change`).
pub(super) fn apply_steps(
    state: &AppState,
    call: &mut JournalCall,
    param: &str,
    steps: &[Step],
) -> Result<Done, ToolError> {
    let change: Vec<plane::ChangeStep<'_>> = steps
        .iter()
        .map(|s| plane::ChangeStep {
            path: &s.path,
            bytes: match &s.op {
                Op::Write { bytes, .. } => Some(bytes.as_slice()),
                Op::Delete { .. } => None,
            },
            expected: s.expect(),
        })
        .collect();
    if change.is_empty() {
        return Ok(Done { done: Vec::new() });
    }
    let txn = plane::apply_change(state, call, param, &change)?;
    Ok(Done {
        done: steps
            .iter()
            .map(|s| DoneStep {
                path: s.path.to_string(),
                action: s.action(),
                transaction_id: Some(txn.clone()),
            })
            .collect(),
    })
}

pub(super) fn current_bytes(
    state: &AppState,
    param: &str,
    path: &ResPath,
) -> Result<Vec<u8>, ToolError> {
    let real = state.project.resolve(param, path)?;
    std::fs::read(&real).map_err(|e| ToolError::io(&path.to_string(), &e))
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct StepView {
    pub(super) path: String,
    pub(super) action: &'static str,
    /// Lines whose references were rewritten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) lines: Vec<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct MultiEffect {
    pub(super) action: &'static str,
    /// Every file the call writes or deletes, in order.
    pub(super) files: Vec<StepView>,
    #[serde(flatten)]
    pub(super) persistence: Persistence,
    #[serde(flatten)]
    pub(super) undo: Undo,
}

pub(super) fn journaled_writes() -> Undo {
    not_undoable(
        "Not on the editor's undo stack: file writes, applied as one journal change that \
         records every file's before-sha256.",
    )
}

pub(super) fn rescan_hint() -> Persistence {
    on_disk(
        "every file written or deleted atomically through the journal",
        Some(
            "A running editor picks this up on its next filesystem scan; Godot's uid cache maps \
             uids to the new paths then.",
        ),
    )
}
