//! Organizing project files: move (with every reference rewritten), duplicate,
//! create and delete folders, and find resources by type.
//!
//! Every byte written or deleted goes through the one write seam
//! (`planes::project`). A move is several files (the file, its sidecars, every
//! file that names it), so it plans all of them first and applies them as one
//! journaled change: all of them land or none does — should one fail midway,
//! every file is put back before the answer, which says so; after a crash,
//! reconciliation does the same.
//! Folders are not files: creating or removing an empty one is a plain `mkdir` /
//! `rmdir` inside the project (containment-checked), which the result says is not
//! journaled.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use godot_mcp_formats::{ids, relink};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::planes::project::sha256_hex;
use crate::planes::project::{self as plane, Expect, JournalCall};
use crate::respath::ResPath;
use crate::rules::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::analysis::{read_small, walk_files};
use crate::tools::common::{DELETED_UNDO_HINT, not_undoable, on_disk, page_limit};
use crate::tools::{Also, CallFlags, NoFields, Plan, ToolDef, ToolMeta};

fn destructive(name: &'static str, title: &'static str, description: &'static str) -> ToolMeta {
    ToolMeta {
        name,
        title,
        description,
        class: SafetyClass::Destructive,
        toolset: Toolset::Files,
        effect: Some(EffectKind::File),
    }
}

pub fn tools() -> Vec<ToolDef> {
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
        ToolDef::planned(
            destructive(
                "create_folder",
                "Create a folder",
                "Create a folder (and missing parents) in the project.",
            ),
            plan_create_folder,
        ),
        ToolDef::planned(
            destructive(
                "delete_folder",
                "Delete a folder",
                "Delete a folder; refuses a non-empty one unless recursive (its files \
                 deleted as one journaled change).",
            ),
            plan_delete_folder,
        ),
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Files,
                "list_resources_by_type",
                "List resources by type",
                "Find .tres/.tscn/.res files whose type, script class or scene root type \
                 matches; paginated.",
            ),
            list_resources_by_type,
        ),
    ]
}

const SIDECARS: [&str; 2] = [".import", ".uid"];

/// Extensions of the text files that can name another file by a res:// literal.
const REFERRING_EXTS: [&str; 8] = [
    "tscn",
    "tres",
    "gd",
    "cs",
    "gdshader",
    "gdshaderinc",
    "godot",
    "cfg",
];

fn res(s: &str) -> Result<ResPath, ToolError> {
    ResPath::parse(s).map_err(|e| ToolError::internal(e.to_string()))
}

fn sidecar(path: &ResPath, suffix: &str) -> Result<ResPath, ToolError> {
    res(&format!("{path}{suffix}"))
}

fn refuse_project_godot(param: &str, path: &ResPath) -> Result<(), ToolError> {
    if path.rel() == "project.godot" {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            "res://project.godot stays where it is",
        )
        .param(param));
    }
    Ok(())
}

fn require_literal_safe(param: &str, path: &ResPath) -> Result<(), ToolError> {
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
struct Step {
    path: ResPath,
    op: Op,
}

#[derive(Debug, Clone)]
enum Op {
    /// Write these bytes; `before` is the sha256 there now (`None`: absent).
    Write {
        bytes: Vec<u8>,
        before: Option<String>,
    },
    /// Delete the file whose sha256 is this.
    Delete { before: String },
}

impl Step {
    fn expect(&self) -> Expect<'_> {
        match &self.op {
            Op::Write { before: None, .. } => Expect::Absent,
            Op::Write {
                before: Some(s), ..
            }
            | Op::Delete { before: s } => Expect::Sha256(s),
        }
    }

    /// The seam's own checks, without touching anything.
    fn check(&self, state: &AppState, param: &str) -> Result<(), ToolError> {
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

    fn action(&self) -> &'static str {
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
struct DoneStep {
    path: String,
    action: &'static str,
    transaction_id: Option<String>,
}

/// What applying the steps adds: each step done, in order.
#[derive(Debug, Serialize, JsonSchema)]
struct Done {
    done: Vec<DoneStep>,
}

/// Apply `steps` as one journaled change: every file written or deleted, or none.
/// Every step is checked again first, so a file that changed since the plan stops
/// the call before anything is written; a failure midway puts every file back
/// before the answer, which says so (see `planes::project::apply_change`).
fn apply_steps(
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

fn current_bytes(state: &AppState, param: &str, path: &ResPath) -> Result<Vec<u8>, ToolError> {
    let real = state.project.resolve(param, path)?;
    std::fs::read(&real).map_err(|e| ToolError::io(&path.to_string(), &e))
}

#[derive(Debug, Serialize, JsonSchema)]
struct StepView {
    path: String,
    action: &'static str,
    /// Lines whose references were rewritten.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    lines: Vec<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct MultiEffect {
    action: &'static str,
    /// Every file the call writes or deletes, in order.
    files: Vec<StepView>,
    #[serde(flatten)]
    persistence: Persistence,
    #[serde(flatten)]
    undo: Undo,
}

fn journaled_writes() -> Undo {
    not_undoable(
        "Not on the editor's undo stack: file writes, applied as one journal change that \
         records every file's before-sha256.",
    )
}

fn rescan_hint() -> Persistence {
    on_disk(
        "every file written or deleted atomically through the journal",
        Some(
            "A running editor picks this up on its next filesystem scan; Godot's uid cache maps \
             uids to the new paths then.",
        ),
    )
}

// ---------------------------------------------------------------------------
// move_file

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// The file now.
    from: ResPath,
    /// Its new path (same extension; must not exist).
    to: ResPath,
    /// `from`'s sha256 now; else STALE.
    #[serde(default)]
    expected_sha256: Option<String>,
}

/// Every project file that may name another by a res:// literal, but `skip`.
fn referring_files(
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

fn text_ext(path: &ResPath) -> bool {
    path.extension()
        .is_some_and(|e| REFERRING_EXTS.contains(&e.as_str()))
}

/// The checks move and duplicate share: neither side is project.godot, the paths
/// differ and the extension stays. `why` ends the extension refusal.
fn check_from_to(from: &ResPath, to: &ResPath, why: &str) -> Result<(), ToolError> {
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
fn unchanged(src: &ResPath, bytes: &[u8], sha: &str, what: &str) -> Result<(), ToolError> {
    if sha256_hex(bytes) != sha {
        return Err(ToolError::new(
            ErrorCode::Stale,
            format!("{src} changed while the {what} was planned; nothing was written"),
        ));
    }
    Ok(())
}

fn plan_move(state: Arc<AppState>, args: MoveArgs) -> Result<Plan<MultiEffect, Done>, ToolError> {
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
pub struct DuplicateArgs {
    /// The file to copy.
    from: ResPath,
    /// The copy's path (same extension; must not exist).
    to: ResPath,
}

/// 64 bits derived from `parts` (sha256), standing in for the engine's random uid
/// and id bits. Derived, not drawn, so a dry run reports the exact bytes the real
/// run writes; the target path is always a part, so distinct files get distinct ids.
pub(crate) fn derived_u64(parts: &[&str]) -> u64 {
    let joined = parts.join("\0");
    let hex = sha256_hex(joined.as_bytes());
    u64::from_str_radix(&hex[..16], 16).unwrap_or(0)
}

/// The uid a duplicate gets, and how.
#[derive(Debug, Serialize, JsonSchema)]
struct CopyUid {
    uid: Option<String>,
    how: &'static str,
}

/// What a duplicate reports beyond its files: the copy's uid.
#[derive(Debug, Serialize, JsonSchema)]
struct Duplicated {
    uid: CopyUid,
}

fn plan_duplicate(
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

// ---------------------------------------------------------------------------
// Folders

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateFolderArgs {
    /// The folder.
    path: ResPath,
}

/// A folder path the call may create or remove: inside the project, not the root,
/// not hidden (`.godot/` is Godot's cache).
fn folder_target(state: &AppState, path: &ResPath) -> Result<PathBuf, ToolError> {
    if path.is_root() {
        return Err(ToolError::invalid_params(
            "path",
            "res:// is the project folder itself",
        ));
    }
    if path.is_hidden() {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            format!("{path} is refused: hidden folders (like .godot/) are not changed"),
        )
        .param("path"));
    }
    state.project.resolve("path", path)
}

#[derive(Debug, Serialize, JsonSchema)]
struct FolderEffect {
    action: &'static str,
    path: String,
    /// Folders created or removed, outermost first.
    folders: Vec<String>,
    /// Files deleted first (delete_folder with recursive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    files: Vec<String>,
    /// Folder creation and removal are not journal transactions: a folder holds no
    /// bytes to prove. File deletes are.
    folders_journaled: bool,
    #[serde(flatten)]
    persistence: Persistence,
    #[serde(flatten)]
    undo: Undo,
}

fn plan_create_folder(
    state: Arc<AppState>,
    args: CreateFolderArgs,
) -> Result<Plan<FolderEffect, NoFields>, ToolError> {
    let real = folder_target(&state, &args.path)?;
    match std::fs::symlink_metadata(&real) {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::invalid_params(
                "path",
                format!("{} already exists", args.path),
            ));
        }
        Ok(_) => {
            return Err(ToolError::invalid_params(
                "path",
                format!("{} is a file", args.path),
            ));
        }
        Err(_) => {}
    }
    // Which folders are new, outermost first.
    let mut missing = Vec::new();
    let mut p = args.path.clone();
    while !p.is_root() {
        let r = state.project.resolve("path", &p)?;
        match std::fs::symlink_metadata(&r) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(ToolError::invalid_params(
                    "path",
                    format!("{p} is a file, not a folder"),
                ));
            }
            Err(_) => missing.push(p.to_string()),
        }
        let parent = p.rel().rsplit_once('/').map_or("", |(d, _)| d).to_string();
        p = res(&format!("res://{parent}"))?;
    }
    missing.reverse();
    let effect = FolderEffect {
        action: "create_folder",
        path: args.path.to_string(),
        folders: missing,
        files: Vec::new(),
        folders_journaled: false,
        persistence: on_disk("created on disk (mkdir)", None),
        undo: not_undoable("Remove it with delete_folder."),
    };
    let state = state.clone();
    let path = args.path;
    Plan::new(effect, move |_| {
        // Resolved again: a symlink planted since the plan is refused here.
        let real = folder_target(&state, &path)?;
        std::fs::create_dir_all(&real).map_err(|e| ToolError::io(&path.to_string(), &e))?;
        Ok(NoFields {})
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFolderArgs {
    /// The folder.
    path: ResPath,
    /// Delete its files and subfolders too (default false: only an empty folder).
    #[serde(default)]
    recursive: bool,
}

/// Everything under a folder: files (res path, sha256) and folders (deepest last).
fn folder_contents(
    state: &AppState,
    real: &Path,
    path: &ResPath,
    files: &mut Vec<(ResPath, String)>,
    folders: &mut Vec<ResPath>,
) -> Result<(), ToolError> {
    folders.push(path.clone());
    let entries = std::fs::read_dir(real).map_err(|e| ToolError::io(&path.to_string(), &e))?;
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let child = path.join(&name);
        let ty = e
            .file_type()
            .map_err(|e| ToolError::io(&child.to_string(), &e))?;
        if ty.is_symlink() || name.starts_with('.') {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "{child} is a symbolic link or hidden file; this server does not delete those"
                ),
            )
            .param("path")
            .hint("Remove it by hand, or delete the visible files one by one."));
        }
        if ty.is_dir() {
            folder_contents(state, &e.path(), &child, files, folders)?;
        } else {
            let Some((sha, _)) = plane::current(&state.project, "path", &child)? else {
                continue;
            };
            files.push((child, sha));
        }
    }
    Ok(())
}

fn plan_delete_folder(
    state: Arc<AppState>,
    args: DeleteFolderArgs,
) -> Result<Plan<FolderEffect, Done>, ToolError> {
    let real = folder_target(&state, &args.path)?;
    match std::fs::symlink_metadata(&real) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(ToolError::invalid_params(
                "path",
                format!(
                    "{} is a file; delete it with delete_resource_file",
                    args.path
                ),
            ));
        }
        Err(_) => {
            return Err(
                ToolError::not_found(format!("{} does not exist", args.path)).param("path"),
            );
        }
    }
    let mut files = Vec::new();
    let mut folders = Vec::new();
    folder_contents(&state, &real, &args.path, &mut files, &mut folders)?;
    if files.iter().any(|(p, _)| p.rel() == "project.godot") {
        return Err(
            ToolError::new(ErrorCode::PathRefused, "the folder holds project.godot").param("path"),
        );
    }
    if !args.recursive && (folders.len() > 1 || !files.is_empty()) {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "{} is not empty ({} file(s), {} subfolder(s)); nothing was deleted",
                args.path,
                files.len(),
                folders.len() - 1
            ),
        )
        .param("recursive")
        .hint("Pass recursive=true (with confirm=true) to delete it with everything in it."));
    }
    let steps: Vec<Step> = files
        .iter()
        .map(|(p, sha)| Step {
            path: p.clone(),
            op: Op::Delete {
                before: sha.clone(),
            },
        })
        .collect();
    let effect = FolderEffect {
        action: "delete_folder",
        path: args.path.to_string(),
        folders: folders.iter().map(ToString::to_string).collect(),
        files: files.iter().map(|(p, _)| p.to_string()).collect(),
        folders_journaled: false,
        persistence: on_disk(
            "files deleted through the journal, then the empty folders removed (rmdir)",
            None,
        ),
        undo: not_undoable(DELETED_UNDO_HINT),
    };
    let state = state.clone();
    Plan::new(effect, move |call| {
        let out = apply_steps(&state, call, "path", &steps)?;
        // Deepest first; a folder that gained a file since the plan is left, and said so.
        let mut kept = Vec::new();
        for f in folders.iter().rev() {
            let real = folder_target(&state, f)?;
            if std::fs::remove_dir(&real).is_err() {
                kept.push(f.to_string());
            }
        }
        if !kept.is_empty() {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "the files were deleted, but folder(s) {} were not empty any more and were kept",
                    kept.join(", ")
                ),
            )
            .details(json!({ "done": out.done, "kept_folders": kept })));
        }
        Ok(out)
    })
}

// ---------------------------------------------------------------------------
// list_resources_by_type

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ByTypeArgs {
    /// Class or script class, e.g. StandardMaterial3D, PackedScene, PlayerStats.
    #[serde(rename = "type")]
    type_name: String,
    /// Only under this folder.
    #[serde(default)]
    under: Option<ResPath>,
    #[serde(default)]
    offset: Option<u32>,
    /// Default 100.
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
struct TypedFile {
    path: String,
    #[serde(rename = "type")]
    type_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    script_class: Option<String>,
    /// A scene's root node type.
    #[serde(skip_serializing_if = "Option::is_none")]
    root_type: Option<String>,
}

/// `name="value"` in a section header line.
fn attr(line: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = line.find(&key)? + key.len();
    let len = line[at..].find('"')?;
    Some(line[at..at + len].to_string())
}

/// The type of a text resource or scene, from its headers.
fn text_type(text: &str) -> Option<TypedFile> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if first.starts_with("[gd_resource") {
        return Some(TypedFile {
            path: String::new(),
            type_name: attr(first, "type")?,
            script_class: attr(first, "script_class"),
            root_type: None,
        });
    }
    if first.starts_with("[gd_scene") {
        let root = text.lines().find(|l| l.starts_with("[node "));
        return Some(TypedFile {
            path: String::new(),
            type_name: "PackedScene".into(),
            script_class: None,
            root_type: root.and_then(|l| attr(l, "type")),
        });
    }
    None
}

/// The type of a binary resource: `RSRC`, four u32 fields (endianness, real size,
/// version major, minor, format), then the class as a length-prefixed string.
fn binary_type(bytes: &[u8]) -> Option<String> {
    if bytes.get(0..4)? != b"RSRC" {
        return None;
    }
    let big = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) != 0;
    let word = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let len = word(24)? as usize;
    if len == 0 || len > 256 {
        return None;
    }
    let raw = bytes.get(28..28 + len)?;
    let s = std::str::from_utf8(raw).ok()?.trim_end_matches('\0');
    (!s.is_empty()).then(|| s.to_string())
}

/// list_resources_by_type's page.
#[derive(Debug, Serialize, JsonSchema)]
struct ByTypePage {
    #[serde(rename = "type")]
    type_name: String,
    total: usize,
    offset: usize,
    returned: usize,
    next_offset: Option<usize>,
    items: Vec<TypedFile>,
}

async fn list_resources_by_type(
    state: Arc<AppState>,
    args: ByTypeArgs,
    _f: CallFlags,
) -> Result<ByTypePage, ToolError> {
    let limit = page_limit(&state, args.limit, 100)?;
    tokio::task::spawn_blocking(move || {
        let base = args.under.clone().unwrap_or_else(ResPath::root);
        if base.is_hidden() {
            return Err(ToolError::new(
                ErrorCode::PathRefused,
                format!("{base} is refused: hidden folders (like .godot/) are Godot's cache"),
            )
            .param("under"));
        }
        let real = state.project.resolve("under", &base)?;
        if !real.is_dir() {
            return Err(ToolError::not_found(format!("{base} is not a folder")).param("under"));
        }
        let mut found = Vec::new();
        let mut visited = 0;
        walk_files(&state, &real, &base, &mut found, &mut visited)?;
        found.sort();
        let mut matches = Vec::new();
        for (path, real, size) in found {
            let typed = match path.rsplit('.').next() {
                Some("tres" | "tscn") => read_small(&state, &real, size)
                    .ok()
                    .and_then(|t| text_type(&t)),
                Some("res") => {
                    let mut head = vec![0u8; 512];
                    std::fs::File::open(&real)
                        .and_then(|mut f| {
                            use std::io::Read;
                            let n = f.read(&mut head)?;
                            head.truncate(n);
                            Ok(())
                        })
                        .ok()
                        .and_then(|()| binary_type(&head))
                        .map(|t| TypedFile {
                            path: String::new(),
                            type_name: t,
                            script_class: None,
                            root_type: None,
                        })
                }
                _ => None,
            };
            let Some(mut t) = typed else { continue };
            let wanted = &args.type_name;
            if t.type_name == *wanted
                || t.script_class.as_ref() == Some(wanted)
                || t.root_type.as_ref() == Some(wanted)
            {
                t.path = path;
                matches.push(t);
            }
        }
        let offset = args.offset.unwrap_or(0) as usize;
        let total = matches.len();
        let page: Vec<TypedFile> = matches.into_iter().skip(offset).take(limit).collect();
        let next = offset + page.len();
        Ok(ByTypePage {
            type_name: args.type_name,
            total,
            offset,
            returned: page.len(),
            next_offset: (next < total).then_some(next),
            items: page,
        })
    })
    .await
    .map_err(|e| ToolError::internal(format!("listing task failed: {e}")))?
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, AppState) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        let p = crate::project_root::Project::discover(Some(dir.path()), Path::new("/")).unwrap();
        let mut journal =
            godot_mcp_journal::Journal::open(&dir.path().join(".state"), p.root()).unwrap();
        journal.reconcile().unwrap();
        let safety = crate::rules::SafetyState::new(
            crate::rules::ApprovalConfig::default(),
            Toolset::ALL.into_iter().collect(),
        );
        (dir, AppState::new(p, journal, safety))
    }

    fn write(path: &str, bytes: &[u8]) -> Step {
        Step {
            path: ResPath::parse(path).unwrap(),
            op: Op::Write {
                bytes: bytes.to_vec(),
                before: None,
            },
        }
    }

    /// A change whose files cannot all exist (one is the folder of another) is
    /// refused before anything is written; a path the seam refuses likewise.
    #[test]
    fn a_change_that_cannot_be_whole_writes_nothing() {
        let (dir, state) = project();
        let steps = [
            write("res://x/a.gd", b"one"),
            write("res://x", b"two"),
            write("res://c.gd", b"three"),
        ];
        let call = &mut JournalCall::new("files", "move_file");
        let e = apply_steps(&state, call, "from", &steps).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams, "{}", e.message);
        assert!(e.message.contains("nothing was written"), "{}", e.message);
        assert!(!dir.path().join("x").exists());
        assert!(!dir.path().join("c.gd").exists());

        let e = apply_steps(
            &state,
            call,
            "from",
            &[write("res://d.gd", b"4"), write("res://c.gd/..x", b"")],
        );
        assert!(e.is_err());
        assert!(!dir.path().join("d.gd").exists());
    }

    /// Guards against (issue 28): two agents creating the same file, the last writer
    /// silently winning. `expected_sha256: null` says "must not exist": the first
    /// create lands, the second answers STALE and leaves the first's bytes.
    #[tokio::test]
    async fn two_creates_of_one_file_cannot_both_succeed() {
        let (dir, state) = project();
        let state = Arc::new(state);
        let args = |text: &str| json!({"path": "res://a.gd", "content": text, "expected_sha256": null, "confirm": true});
        let state = crate::safety::Served::new(state, crate::tools::builtin_for_tests());
        let call = crate::safety::pipeline::call_detached;
        call(&state, "write_script", args("extends Node # first\n"))
            .await
            .unwrap();
        let second = call(&state, "write_script", args("extends Node # second\n"))
            .await
            .unwrap_err();
        assert_eq!(second.code, ErrorCode::Stale, "{}", second.message);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.gd")).unwrap(),
            "extends Node # first\n"
        );
        // Left out, the field still means "whatever is there".
        let mut any = args("extends Node # third\n");
        any.as_object_mut().unwrap().remove("expected_sha256");
        call(&state, "write_script", any).await.unwrap();
    }

    /// Real storage whose first unlink of a project file (not a temp) fails, once.
    pub(crate) struct FirstUnlinkFails(pub(crate) std::sync::atomic::AtomicBool);

    impl godot_mcp_journal::storage::Storage for FirstUnlinkFails {
        fn create_temp(
            &self,
            path: &Path,
            bytes: &[u8],
            mode: u32,
        ) -> std::io::Result<std::fs::File> {
            godot_mcp_journal::storage::RealStorage.create_temp(path, bytes, mode)
        }
        fn sync_file(&self, path: &Path, file: &std::fs::File) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.sync_file(path, file)
        }
        fn sync_data(&self, path: &Path, file: &std::fs::File) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.sync_data(path, file)
        }
        fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.rename(from, to)
        }
        fn rename_noreplace(&self, from: &Path, to: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.rename_noreplace(from, to)
        }
        fn exchange(&self, a: &Path, b: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.exchange(a, b)
        }
        fn remove_file(&self, path: &Path) -> std::io::Result<()> {
            let temp = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".gmcp-"));
            if !temp && self.0.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return Err(std::io::Error::other("injected unlink failure"));
            }
            godot_mcp_journal::storage::RealStorage.remove_file(path)
        }
        fn create_dir(&self, path: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.create_dir(path)
        }
        fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
            godot_mcp_journal::storage::RealStorage.sync_dir(dir)
        }
    }

    /// Guards against (issue 28): the idempotency key riding on a move's first file
    /// only. The move stops midway (the delete of the old file fails after the new
    /// file, its .uid and the rewritten scene landed); a retry with the same key then
    /// replayed `{"status":"committed"}` and did nothing while the old file was still
    /// there. Now the failure puts every file back before the answer, which says so,
    /// and the retry reports that compensated change: never a bare "committed" with
    /// the move half done.
    #[tokio::test]
    async fn a_retry_after_a_move_stopped_midway_is_never_a_bare_committed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("project.godot"), "config_version=5\n").unwrap();
        std::fs::create_dir_all(root.join("enemies")).unwrap();
        std::fs::write(
            root.join("enemies/enemy.tscn"),
            "[gd_scene format=3 uid=\"uid://cold1\"]\n\n[node name=\"E\" type=\"Node2D\"]\n",
        )
        .unwrap();
        std::fs::write(root.join("enemies/enemy.tscn.uid"), "uid://cold1\n").unwrap();
        std::fs::write(
            root.join("main.tscn"),
            "[gd_scene format=3]\n\n[ext_resource type=\"PackedScene\" path=\"res://enemies/enemy.tscn\" id=\"1\"]\n",
        )
        .unwrap();
        let before = std::fs::read(root.join("main.tscn")).unwrap();
        let p = crate::project_root::Project::discover(Some(root), Path::new("/")).unwrap();
        let storage = std::sync::Arc::new(FirstUnlinkFails(true.into()));
        let mut journal =
            godot_mcp_journal::Journal::open_with_storage(&root.join(".state"), p.root(), storage)
                .unwrap();
        journal.reconcile().unwrap();
        let safety = crate::rules::SafetyState::new(
            crate::rules::ApprovalConfig::default(),
            Toolset::ALL.into_iter().collect(),
        );
        let state = Arc::new(AppState::new(p, journal, safety));
        let state = crate::safety::Served::new(state, crate::tools::builtin_for_tests());
        let args = json!({
            "from": "res://enemies/enemy.tscn", "to": "res://actors/enemy.tscn",
            "confirm": true, "idempotency_key": "move-1",
        });
        let call = crate::safety::pipeline::call_detached;
        let failed = call(&state, "move_file", args.clone()).await.unwrap_err();
        assert!(
            failed.message.contains("every file was put back"),
            "{}",
            failed.message
        );
        let retry = call(&state, "move_file", args).await.unwrap();
        let old_there = root.join("enemies/enemy.tscn").exists();
        assert!(
            retry["status"] != "committed" || !old_there,
            "replayed committed with the old file still there: {retry}"
        );
        assert_eq!(retry["status"], "compensated", "{retry}");
        assert!(old_there && root.join("enemies/enemy.tscn.uid").exists());
        assert!(!root.join("actors/enemy.tscn").exists());
        assert!(!root.join("actors/enemy.tscn.uid").exists());
        assert_eq!(std::fs::read(root.join("main.tscn")).unwrap(), before);
    }

    #[test]
    fn headers_give_the_type() {
        let t = text_type("[gd_resource type=\"Resource\" script_class=\"PlayerStats\" load_steps=2 format=3 uid=\"uid://b\"]\n").unwrap();
        assert_eq!(t.type_name, "Resource");
        assert_eq!(t.script_class.as_deref(), Some("PlayerStats"));
        let s = text_type("[gd_scene format=3]\n\n[node name=\"M\" type=\"Node3D\"]\n").unwrap();
        assert_eq!(s.type_name, "PackedScene");
        assert_eq!(s.root_type.as_deref(), Some("Node3D"));
        assert!(text_type("extends Node\n").is_none());
    }

    #[test]
    fn binary_header_gives_the_class() {
        // Saved by Godot 4.4.1: `ResourceSaver.save(Curve.new(), "res://curve.res")`.
        let real = include_bytes!("../../../../../tests/fixtures/files/curve.res");
        assert_eq!(binary_type(real).as_deref(), Some("Curve"));
        assert_eq!(binary_type(&real[..20]), None);
        assert_eq!(binary_type(b"GDSC"), None);
    }
}
