//! create_folder and delete_folder: plain mkdir / rmdir inside the project,
//! containment-checked, not journaled. A folder is made or removed at once, so
//! neither runs inside an agent's change (abandon_change could not undo it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::moves::{Done, Op, Step, apply_steps, destructive, res};
use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::planes::project::{self as plane, JournalCall};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::common::{DELETED_UNDO_HINT, not_undoable, on_disk};
use crate::tools::{NoFields, Plan, ToolDef};

/// create_folder and delete_folder, as published.
pub(super) fn tools() -> Vec<ToolDef> {
    vec![
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
    ]
}

// Folders

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateFolderArgs {
    /// The folder.
    path: ResPath,
}

/// A folder path the call may create or remove: inside the project, not the root,
/// not hidden (`.godot/` is Godot's cache).
pub(super) fn folder_target(state: &AppState, path: &ResPath) -> Result<PathBuf, ToolError> {
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

/// Refuses `tool` inside an agent's change: a folder is made or removed at once,
/// not staged, and abandon_change could not undo it.
fn refuse_in_change(call: &JournalCall, tool: &str) -> Result<(), ToolError> {
    let Some(stage) = &call.stage else {
        return Ok(());
    };
    let id = stage.lock().id.to_string();
    Err(ToolError::new(
        ErrorCode::PreconditionFailed,
        format!(
            "{tool} is refused inside change {id}: a folder is made or removed at once, not \
             staged, and abandon_change could not undo it; nothing was run"
        ),
    )
    .hint("commit_change or abandon_change first, then call it.")
    .details(json!({ "change_id": id })))
}

#[derive(Debug, Serialize, JsonSchema)]
pub(super) struct FolderEffect {
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

pub(super) fn plan_create_folder(
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
    Plan::new(effect, move |call| {
        refuse_in_change(call, "create_folder")?;
        // Resolved again: a symlink planted since the plan is refused here.
        let real = folder_target(&state, &path)?;
        std::fs::create_dir_all(&real).map_err(|e| ToolError::io(&path.to_string(), &e))?;
        Ok(NoFields {})
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DeleteFolderArgs {
    /// The folder.
    path: ResPath,
    /// Delete its files and subfolders too (default false: only an empty folder).
    #[serde(default)]
    recursive: bool,
}

/// Everything under a folder: files (res path, sha256) and folders (deepest last).
pub(super) fn folder_contents(
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

pub(super) fn plan_delete_folder(
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
        refuse_in_change(call, "delete_folder")?;
        let out = apply_steps(&state, call, "path", &steps)?;
        // Deepest first; a folder that gained a file since the plan is left, one
        // removed by someone else since is not claimed, and either is said so.
        let mut kept = Vec::new();
        let mut gone = Vec::new();
        for f in folders.iter().rev() {
            let real = folder_target(&state, f)?;
            match std::fs::remove_dir(&real) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => gone.push(f.to_string()),
                Err(_) => kept.push(f.to_string()),
            }
        }
        if !kept.is_empty() || !gone.is_empty() {
            let files = match out.done.len() {
                0 => "no file was deleted".to_owned(),
                n => format!("{n} file(s) were deleted"),
            };
            let mut what = Vec::new();
            if !kept.is_empty() {
                what.push(format!(
                    "folder(s) {} were not empty any more and were kept",
                    kept.join(", ")
                ));
            }
            if !gone.is_empty() {
                what.push(format!(
                    "folder(s) {} were already gone (removed by someone else)",
                    gone.join(", ")
                ));
            }
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!("{files}, but {}", what.join("; ")),
            )
            .details(json!({ "done": out.done, "kept_folders": kept, "gone_folders": gone })));
        }
        Ok(out)
    })
}
