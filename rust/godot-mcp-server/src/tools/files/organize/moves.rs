//! move_file (every reference rewritten, one journaled change) and duplicate_file
//! (a fresh uid for the copy); and the steps of a multi-file change (a move, a
//! duplicate, a folder's delete): each file's planned bytes or deletion, applied as one
//! journaled change, and the shared pieces of their plans and answers.

use std::path::PathBuf;
use std::sync::Arc;

use godot_mcp_formats::{ids, relink};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::planes::project::sha256_hex;
use crate::planes::project::{self as plane, Expect, JournalCall};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::kit::common::{not_undoable, on_disk, read_small, walk_files};
use crate::tools::kit::ext_ref::derived_u64;
use crate::tools::{Also, Plan, ToolDef, ToolMeta};

/// The metadata of a file tool that may overwrite or delete (every tool of `organize` but
/// list_resources_by_type).
pub(super) fn destructive(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::Destructive> {
    ToolMeta::file_write(Toolset::Files, name, title, description)
}

/// move_file and duplicate_file, as published.
pub(super) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::planned(
            destructive(
                "move_file",
                "Move or rename a file",
                "Move/rename a scene, resource, script or asset with its .import/.uid sidecars, \
                 rewriting every res:// reference in .tscn/.tres/.gd/project.godot.",
            ),
            plan_move,
        ),
        ToolDef::planned(
            destructive(
                "duplicate_file",
                "Duplicate a file",
                "Copy a scene, resource, script or asset to a new path; a copied .tscn/.tres or \
                 script gets a fresh uid.",
            ),
            plan_duplicate,
        ),
    ]
}

// move_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MoveArgs {
    /// The file now.
    from: ResPath,
    /// Its new path (same extension; must not exist).
    to: ResPath,
    /// `from`'s sha256 now; else STALE.
    #[serde(default)]
    expected_sha256: Option<String>,
}

/// Every project file that may name another by a res:// literal, but `skip`.
pub(super) fn referring_files(
    state: &AppState,
    skip: &[String],
) -> Result<Vec<(ResPath, PathBuf, u64)>, ToolError> {
    let root = ResPath::root();
    let real = state.project.resolve("path", &root)?;
    let mut found = Vec::new();
    let mut visited = 0;
    walk_files(state, &real, &root, &mut found, &mut visited)?;
    // In path order, so a plan lists its files the same way on every run.
    found.sort();
    let mut out = Vec::new();
    for (path, real, size) in found {
        if skip.contains(&path) {
            continue;
        }
        let Ok(p) = ResPath::parse(&path) else {
            continue;
        };
        let referring = p
            .extension()
            .is_some_and(|e| REFERRING_EXTS.contains(&e.as_str()));
        if referring {
            out.push((p, real, size));
        }
    }
    Ok(out)
}

pub(super) fn text_ext(path: &ResPath) -> bool {
    path.extension()
        .is_some_and(|e| REFERRING_EXTS.contains(&e.as_str()))
}

/// The checks move and duplicate share: neither side is project.godot, the paths
/// differ and the extension stays. `why` ends the extension refusal.
pub(super) fn check_from_to(from: &ResPath, to: &ResPath, why: &str) -> Result<(), ToolError> {
    refuse_project_godot("from", from)?;
    refuse_project_godot("to", to)?;
    if from == to {
        return Err(ToolError::invalid_params(
            "to",
            "`to` is the same path as `from`",
        ));
    }
    if from.extension() != to.extension() {
        return Err(ToolError::invalid_params(
            "to",
            format!("{to} changes the extension of {from}{why}"),
        ));
    }
    Ok(())
}

/// `bytes` of `src` still hash to `sha`, the hash the plan was made from.
pub(super) fn unchanged(
    src: &ResPath,
    bytes: &[u8],
    sha: &str,
    what: &str,
) -> Result<(), ToolError> {
    if sha256_hex(bytes) != sha {
        return Err(ToolError::new(
            ErrorCode::Stale,
            format!("{src} changed while the {what} was planned; nothing was written"),
        ));
    }
    Ok(())
}

pub(super) fn plan_move(
    state: Arc<AppState>,
    args: MoveArgs,
) -> Result<Plan<MultiEffect, Done>, ToolError> {
    let (from, to) = (args.from, args.to);
    // Before check_from_to's checks: a literal-unsafe path is never project.godot,
    // so the order changes no answer.
    require_literal_safe("from", &from)?;
    require_literal_safe("to", &to)?;
    check_from_to(&from, &to, "; Godot picks the loader by extension")?;
    for suffix in SIDECARS {
        if from.rel().ends_with(suffix) {
            return Err(ToolError::invalid_params(
                "from",
                format!("{from} is a sidecar; move the file it describes"),
            ));
        }
    }
    let main = plane::check_delete(
        &state.project,
        "from",
        &from,
        args.expected_sha256.as_deref().into(),
    )?;
    if plane::current(&state.project, "to", &to)?.is_some() {
        return Err(
            ToolError::invalid_params("to", format!("{to} already exists"))
                .hint("Pick a free path, or delete the file there first (delete_resource_file)."),
        );
    }
    let (old, new) = (from.to_string(), to.to_string());

    // The new copies first (the file and its sidecars), with references to itself
    // and the .import's source_file rewritten; then every referrer; then the deletes.
    let mut steps: Vec<Step> = Vec::new();
    let mut views: Vec<StepView> = Vec::new();
    let mut deletes: Vec<Step> = Vec::new();
    let mut moved = vec![(from.clone(), to.clone(), main.sha256_before.clone())];
    for suffix in SIDECARS {
        let side = sidecar(&from, suffix)?;
        if let Some((sha, _)) = plane::current(&state.project, "from", &side)? {
            let target = sidecar(&to, suffix)?;
            if plane::current(&state.project, "to", &target)?.is_some() {
                return Err(ToolError::invalid_params(
                    "to",
                    format!("{target} already exists"),
                ));
            }
            moved.push((side, target, sha));
        }
    }
    for (src, dst, sha) in &moved {
        let bytes = current_bytes(&state, "from", src)?;
        unchanged(src, &bytes, sha, "move")?;
        let rewritten = if text_ext(src) || src.rel().ends_with(".import") {
            std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| relink::rewrite_path_literals(t, &old, &new))
        } else {
            None
        };
        let (bytes, lines) = match rewritten {
            Some((t, lines)) => (t.into_bytes(), lines),
            None => (bytes, Vec::new()),
        };
        views.push(StepView {
            path: dst.to_string(),
            action: "create",
            lines,
        });
        steps.push(Step {
            path: dst.clone(),
            op: Op::Write {
                bytes,
                before: None,
            },
        });
        deletes.push(Step {
            path: src.clone(),
            op: Op::Delete {
                before: sha.clone(),
            },
        });
    }
    let skip: Vec<String> = moved.iter().map(|(s, _, _)| s.to_string()).collect();
    for (path, real, size) in referring_files(&state, &skip)? {
        let Ok(text) = read_small(&state, &real, size) else {
            continue;
        };
        if let Some((new_text, lines)) = relink::rewrite_path_literals(&text, &old, &new) {
            views.push(StepView {
                path: path.to_string(),
                action: "overwrite",
                lines,
            });
            steps.push(Step {
                path,
                op: Op::Write {
                    bytes: new_text.into_bytes(),
                    before: Some(sha256_hex(text.as_bytes())),
                },
            });
        }
    }
    for d in &deletes {
        views.push(StepView {
            path: d.path.to_string(),
            action: "delete",
            lines: Vec::new(),
        });
    }
    steps.extend(deletes);
    let effect = MultiEffect {
        action: "move",
        files: views,
        persistence: rescan_hint(),
        undo: journaled_writes(),
    };
    let state = state.clone();
    Plan::new(effect, move |call| {
        apply_steps(&state, call, "from", &steps)
    })
}

// ---------------------------------------------------------------------------
// duplicate_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DuplicateArgs {
    /// The file to copy.
    from: ResPath,
    /// The copy's path (same extension; must not exist).
    to: ResPath,
}

/// The uid a duplicate gets, and how.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct CopyUid {
    uid: Option<String>,
    how: &'static str,
}

/// What a duplicate reports beyond its files: the copy's uid.
#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct Duplicated {
    uid: CopyUid,
}

pub(super) fn plan_duplicate(
    state: Arc<AppState>,
    args: DuplicateArgs,
) -> Result<Plan<Also<MultiEffect, Duplicated>, Done>, ToolError> {
    let (from, to) = (args.from, args.to);
    check_from_to(&from, &to, "")?;
    let Some((sha, _)) = plane::current(&state.project, "from", &from)? else {
        return Err(ToolError::not_found(format!("{from} does not exist")).param("from"));
    };
    if plane::current(&state.project, "to", &to)?.is_some() {
        return Err(ToolError::invalid_params(
            "to",
            format!("{to} already exists"),
        ));
    }
    let bytes = current_bytes(&state, "from", &from)?;
    unchanged(&from, &bytes, &sha, "copy")?;
    let fresh = ids::uid_text(derived_u64(&["duplicate_file", &to.to_string(), &sha]));
    let ext = from.extension().unwrap_or_default();
    let mut steps = Vec::new();
    // How the copy gets a uid of its own: two files with one uid make Godot resolve
    // references to either one to the same file.
    let uid = if ext == "tscn" || ext == "tres" {
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolError::new(ErrorCode::ParseError, format!("{from} is not UTF-8 text"))
        })?;
        let copy = relink::set_header_uid(&text, &fresh).ok_or_else(|| {
            ToolError::new(
                ErrorCode::ParseError,
                format!("{from} does not start with a [gd_scene] or [gd_resource] header"),
            )
        })?;
        steps.push(Step {
            path: to.clone(),
            op: Op::Write {
                bytes: copy.into_bytes(),
                before: None,
            },
        });
        CopyUid {
            uid: Some(fresh),
            how: "a fresh uid in the copy's header",
        }
    } else {
        steps.push(Step {
            path: to.clone(),
            op: Op::Write {
                bytes,
                before: None,
            },
        });
        let had_uid_file =
            plane::current(&state.project, "from", &sidecar(&from, ".uid")?)?.is_some();
        let imported =
            plane::current(&state.project, "from", &sidecar(&from, ".import")?)?.is_some();
        if had_uid_file {
            steps.push(Step {
                path: sidecar(&to, ".uid")?,
                op: Op::Write {
                    bytes: format!("{fresh}\n").into_bytes(),
                    before: None,
                },
            });
            CopyUid {
                uid: Some(fresh),
                how: "a fresh .uid file",
            }
        } else if imported {
            CopyUid {
                uid: None,
                how: "the .import is not copied: Godot imports the copy and assigns it a uid on its next scan",
            }
        } else {
            CopyUid {
                uid: None,
                how: "the original has no uid",
            }
        }
    };
    for s in &steps {
        s.check(&state, "to")?;
    }
    let views = steps
        .iter()
        .map(|s| StepView {
            path: s.path.to_string(),
            action: s.action(),
            lines: Vec::new(),
        })
        .collect();
    let effect = Also {
        base: MultiEffect {
            action: "duplicate",
            files: views,
            persistence: rescan_hint(),
            undo: journaled_writes(),
        },
        more: Duplicated { uid },
    };
    let state = state.clone();
    Plan::new(effect, move |call| apply_steps(&state, call, "to", &steps))
}

// The steps of a multi-file change: each file's planned bytes or deletion, applied as
// one journaled change, and the shared pieces of their plans and answers.

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
