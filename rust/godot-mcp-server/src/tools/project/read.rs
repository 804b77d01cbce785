//! Project-plane reads: they need neither an editor nor a Godot binary, only the
//! project's files in Godot's own text formats.

use crate::rules::class;
use crate::tools::kit::common::read_text;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::tools::kit::common::{MAX_WALK_ENTRIES, Walk, page_limit, paged_args, walk_project};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "list_files",
                title: "List project files",
                description: "Project files under a res:// folder, by kind, paged; skips \
                    .godot/, .gdignore folders, .import/.uid files.",
                class: class::ReadOnly,
                toolset: Toolset::Project,
                effect: None,
            },
            list_files,
        ),
        ToolDef::new(
            ToolMeta {
                name: "scripts_read",
                title: "Read a script",
                description: "A script or shader (.gd, .cs, .gdshader): text, line count, \
                    sha256 (a later write's expected_sha256).",
                class: class::ReadOnly,
                toolset: Toolset::ScriptRead,
                effect: None,
            },
            scripts_read,
        ),
    ]
}

pub(crate) use crate::tools::kit::common::FileKind;

/// Sidecar files Godot writes next to assets; metadata, not project content.
fn is_sidecar(name: &str) -> bool {
    name.ends_with(".import") || name.ends_with(".uid")
}

paged_args! {
    cursor;
    pub struct ListFilesArgs {
        /// Folder (default res://).
        #[serde(default)]
        dir: Option<ResPath>,
        /// Only this kind.
        #[serde(default)]
        kind: Option<FileKind>,
        /// Include sub-folders (default true).
        #[serde(default)]
        recursive: Option<bool>,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileEntry {
    path: String,
    kind: FileKind,
    size: u64,
}

/// A page of project files.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileList {
    dir: String,
    total: usize,
    returned: usize,
    files: Vec<FileEntry>,
    /// The path to pass as `cursor` for the next page; null on the last page.
    next_cursor: Option<String>,
}

async fn list_files(Call { state, args, .. }: Call<ListFilesArgs>) -> Out<FileList> {
    let dir = args.dir.unwrap_or_else(ResPath::root);
    let limit = page_limit(&state, args.limit, 200)?;
    let real = state.project.resolve("dir", &dir)?;
    let meta = std::fs::metadata(&real).map_err(|e| ToolError::io(&dir.to_string(), &e))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid_params(
            "dir",
            format!("{dir} is a file, not a folder"),
        ));
    }
    let mut files = Vec::new();
    let how = Walk {
        recursive: args.recursive.unwrap_or(true),
        skip: is_sidecar,
        too_many: |res| {
            ToolError::new(
                ErrorCode::TooLarge,
                format!("{res} holds more than {MAX_WALK_ENTRIES} entries"),
            )
            .hint("List a smaller folder (dir) or set recursive=false.")
        },
    };
    walk_project(&state, &real, &dir, &how, &mut 0, &mut |child, _, size| {
        let kind = FileKind::of(child.extension().as_deref());
        if args.kind.is_none_or(|k| k == kind) {
            files.push(FileEntry {
                path: child.to_string(),
                kind,
                size,
            });
        }
    })?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let total = files.len();
    let start = match &args.cursor {
        Some(c) => files.partition_point(|f| f.path.as_str() <= c.as_str()),
        None => 0,
    };
    let page: Vec<FileEntry> = files.drain(start..).take(limit).collect();
    let next_cursor = if start + page.len() < total {
        page.last().map(|f| f.path.clone())
    } else {
        None
    };
    Ok(FileList {
        dir: dir.to_string(),
        total,
        returned: page.len(),
        files: page,
        next_cursor,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScriptsReadArgs {
    /// The script or shader.
    path: ResPath,
}

/// A script's text and what identifies this version of it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScriptText {
    path: String,
    language: &'static str,
    size: usize,
    line_count: usize,
    sha256: String,
    content: String,
}

async fn scripts_read(Call { state, args, .. }: Call<ScriptsReadArgs>) -> Out<ScriptText> {
    // Containment first, so an escaping path is always reported as such.
    let real = state.project.resolve("path", &args.path)?;
    let language = match args.path.extension().as_deref() {
        Some("gd") => "gdscript",
        Some("cs") => "csharp",
        Some("gdshader" | "gdshaderinc") => "gdshader",
        _ => {
            return Err(ToolError::invalid_params(
                "path",
                format!(
                    "{} is not a script (.gd, .cs, .gdshader, .gdshaderinc)",
                    args.path
                ),
            ));
        }
    };
    let text = read_text(&state, "path", &args.path, &real)?;
    Ok(ScriptText {
        path: args.path.to_string(),
        language,
        size: text.len(),
        line_count: text.lines().count(),
        sha256: godot_mcp_journal::ContentHash::of(text.as_bytes()).to_string(),
        content: text,
    })
}
