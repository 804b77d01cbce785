//! Small checks that many file-plane tools share, so that each is written once and
//! every tool words the same refusal the same way.

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::respath::ResPath;
use crate::state::AppState;
use schemars::JsonSchema;
use serde::Serialize;

/// Declares a paged tool's argument struct: its own fields, then the paging fields
/// every tool of that paging takes, in one wording and one range:
/// `offset` (by position: `offset`, `limit` default 100) or `cursor` (by path:
/// `cursor`, `limit` default 200).
macro_rules! paged_args {
    (offset; $($rest:tt)*) => {
        paged_args!(@with [
            /// First item (default 0).
            #[serde(default)]
            offset: Option<u32>,
        ] "Most items (default 100)." $($rest)*);
    };
    (cursor; $($rest:tt)*) => {
        paged_args!(@with [
            /// next_cursor of the previous page.
            #[serde(default)]
            cursor: Option<String>,
        ] "Page size (default 200)." $($rest)*);
    };
    (@with [$($paging:tt)*] $limit:literal pub struct $name:ident { $($fields:tt)* }) => {
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct $name {
            $($fields)*
            $($paging)*
            #[doc = $limit]
            #[serde(default)]
            #[schemars(range(min = 1, max = 1000))]
            limit: Option<u32>,
        }
    };
}
pub(crate) use paged_args;

/// A GDScript-style identifier: a letter or `_`, then letters, digits and `_`
/// (class names, autoload names).
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A key of a `properties` argument: letters, digits, `_` and `/` (a sub-property
/// path such as `shader_parameter/tint`), not starting with `/`.
pub(crate) fn check_property_key(key: &str) -> Result<(), ToolError> {
    let valid = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
        && !key.starts_with('/');
    if !valid {
        return Err(ToolError::invalid_params(
            format!("properties.{key}"),
            format!("{key:?} is not a property name"),
        ));
    }
    Ok(())
}

/// A file-plane effect, on disk when the call answers: `reason` says how, `hint`
/// what else to know.
pub(crate) fn on_disk(reason: &str, hint: Option<&str>) -> Persistence {
    Persistence {
        persisted: true,
        reason: reason.into(),
        hint: hint.map(Into::into),
    }
}

/// An effect the editor's undo stack does not cover; `hint` says how to undo it.
pub(crate) fn not_undoable(hint: &str) -> Undo {
    Undo {
        undoable: false,
        undo_hint: Some(hint.into()),
    }
}

/// How to undo a delete: nothing keeps the bytes.
pub(crate) const DELETED_UNDO_HINT: &str =
    "Not on the editor's undo stack and not in a trash folder: restore from version control.";

/// A count parameter (`limit`, `max_keys`…): `value`, or `default` when absent,
/// when it lies in `1..=max`; otherwise `INVALID_PARAMS` naming the parameter.
pub(crate) fn count_param(
    param: &str,
    value: Option<u32>,
    default: u32,
    max: usize,
) -> Result<usize, ToolError> {
    let n = value.unwrap_or(default) as usize;
    if n == 0 || n > max {
        return Err(ToolError::invalid_params(
            param,
            format!("{param} must be between 1 and {max}"),
        ));
    }
    Ok(n)
}

/// The page size asked for (`limit`, or `default`), checked against the server's
/// page limit.
pub(crate) fn page_limit(
    state: &AppState,
    limit: Option<u32>,
    default: u32,
) -> Result<usize, ToolError> {
    count_param("limit", limit, default, state.limits.max_page)
}

/// Upper bound on directory entries one project walk visits, so a pathological
/// tree (millions of files) costs a bounded amount.
pub(crate) const MAX_WALK_ENTRIES: usize = 200_000;

/// How a project walk differs between the tools that walk.
pub(crate) struct Walk {
    /// Into sub-folders too.
    pub recursive: bool,
    /// Entry names passed over, beside the hidden ones (`.godot/`, dotfiles).
    pub skip: fn(&str) -> bool,
    /// The refusal when more than [`MAX_WALK_ENTRIES`] entries are met; it gets the
    /// folder being read.
    pub too_many: fn(&ResPath) -> ToolError,
}

/// The project walker: every tool that walks the project's folders walks them
/// here, so they all agree on what is inside it (`list_files`, `list_scripts`,
/// `search_files`, the reference index, `get_import_status`).
///
/// Calls `file(res path, real path, size)` for every file under `real` (`res`),
/// in name order: skips hidden entries, folders holding `.gdignore`, and symlinks
/// that leave the project. A symlink is followed only to a file inside the
/// project, never to a folder (no loops, no escapes). More than
/// [`MAX_WALK_ENTRIES`] entries end the walk with `how.too_many`.
pub(crate) fn walk_project(
    state: &AppState,
    real: &Path,
    res: &ResPath,
    how: &Walk,
    visited: &mut usize,
    file: &mut dyn FnMut(ResPath, PathBuf, u64),
) -> Result<(), ToolError> {
    if real.join(".gdignore").exists() {
        return Ok(());
    }
    let entries = std::fs::read_dir(real).map_err(|e| ToolError::io(&res.to_string(), &e))?;
    // In name order, so that a walk cut short (a cap) is the same walk each time.
    let remaining = MAX_WALK_ENTRIES.saturating_sub(*visited);
    let mut entries: Vec<_> = entries.flatten().take(remaining + 1).collect();
    if entries.len() > remaining {
        return Err((how.too_many)(res));
    }
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        *visited += 1;
        if *visited > MAX_WALK_ENTRIES {
            return Err((how.too_many)(res));
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue; // not representable as a res:// path
        };
        if name.starts_with('.') || (how.skip)(&name) {
            continue;
        }
        let child = res.join(&name);
        let Ok(ftype) = entry.file_type() else {
            continue;
        };
        if ftype.is_symlink() {
            if let Ok(target) = state.project.resolve("path", &child)
                && let Ok(m) = std::fs::metadata(&target)
                && m.is_file()
            {
                file(child, target, m.len());
            }
        } else if ftype.is_dir() {
            if how.recursive {
                walk_project(state, &entry.path(), &child, how, visited, file)?;
            }
        } else if ftype.is_file() {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            file(child, entry.path(), size);
        }
    }
    Ok(())
}

/// A project file's text, refused when over the read limit or not UTF-8.
pub(crate) fn read_small(state: &AppState, real: &Path, size: u64) -> Result<String, ToolError> {
    if size > state.limits.max_read_bytes {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "larger than {} bytes; not read",
                state.limits.max_read_bytes
            ),
        ));
    }
    let bytes = std::fs::read(real).map_err(|e| ToolError::io(&real.display().to_string(), &e))?;
    String::from_utf8(bytes).map_err(|_| ToolError::new(ErrorCode::ParseError, "not UTF-8 text"))
}

/// Every file under `real` (res path, real path, size), as [`walk_project`] finds them.
pub(crate) fn walk_files(
    state: &AppState,
    real: &Path,
    res: &ResPath,
    out: &mut Vec<(String, PathBuf, u64)>,
    visited: &mut usize,
) -> Result<(), ToolError> {
    let how = Walk {
        recursive: true,
        skip: |_| false,
        too_many: project_too_large,
    };
    walk_project(state, real, res, &how, visited, &mut |child, real, size| {
        out.push((child.to_string(), real, size))
    })
}

/// The refusal of a walk that met too many entries, for a whole-project scan.
pub(crate) fn project_too_large(_: &ResPath) -> ToolError {
    ToolError::new(
        ErrorCode::TooLarge,
        format!("the project holds more than {MAX_WALK_ENTRIES} entries"),
    )
}

/// Read a project text file at `real` (already resolved from `path`), bounded.
pub(crate) fn read_text(
    state: &AppState,
    param: &str,
    path: &ResPath,
    real: &Path,
) -> Result<String, ToolError> {
    let meta = std::fs::metadata(real).map_err(|e| ToolError::io(&path.to_string(), &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_params(
            param,
            format!("{path} is a folder"),
        ));
    }
    if meta.len() > state.limits.max_read_bytes {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{path} is {} bytes; this server reads at most {} bytes",
                meta.len(),
                state.limits.max_read_bytes
            ),
        )
        .param(param));
    }
    let bytes = std::fs::read(real).map_err(|e| ToolError::io(&path.to_string(), &e))?;
    String::from_utf8(bytes).map_err(|_| {
        ToolError::new(ErrorCode::ParseError, format!("{path} is not UTF-8 text")).param(param)
    })
}

/// What kind of file a path is, by extension.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FileKind {
    Scene,
    Script,
    Resource,
    Shader,
    Image,
    Audio,
    Model,
    Font,
    Other,
}

impl FileKind {
    pub(crate) fn of(ext: Option<&str>) -> Self {
        match ext.unwrap_or("") {
            "tscn" | "scn" => Self::Scene,
            "gd" | "cs" => Self::Script,
            "tres" | "res" => Self::Resource,
            "gdshader" | "gdshaderinc" | "shader" => Self::Shader,
            "png" | "jpg" | "jpeg" | "webp" | "svg" | "bmp" | "tga" | "exr" | "hdr" | "ktx" => {
                Self::Image
            }
            "wav" | "ogg" | "mp3" => Self::Audio,
            "gltf" | "glb" | "fbx" | "obj" | "blend" | "dae" => Self::Model,
            "ttf" | "otf" | "woff" | "woff2" | "fnt" | "font" => Self::Font,
            _ => Self::Other,
        }
    }
}

/// Calls `f(res path, real path)` for every .gd/.cs file of the project, as the
/// project walker ([`walk_project`]) finds them — the same files `list_files` lists.
pub(crate) fn walk_scripts(
    state: &AppState,
    f: &mut dyn FnMut(ResPath, std::path::PathBuf),
) -> Result<(), ToolError> {
    let root = ResPath::root();
    let real = state.project.resolve("path", &root)?;
    let how = Walk {
        recursive: true,
        skip: |_| false,
        too_many: project_too_large,
    };
    walk_project(state, &real, &root, &how, &mut 0, &mut |res, real, _| {
        if matches!(res.extension().as_deref(), Some("gd" | "cs")) {
            f(res, real);
        }
    })
}

/// The GDScript that declares `class_name name` in the project (the first found, by path).
pub(crate) fn script_of_class(state: &AppState, name: &str) -> Result<Option<ResPath>, ToolError> {
    let mut found: Vec<ResPath> = Vec::new();
    walk_scripts(state, &mut |res, real| {
        if res.extension().as_deref() == Some("gd")
            && head(&real).is_some_and(|h| script_header_gd(&h).class_name.as_deref() == Some(name))
        {
            found.push(res);
        }
    })?;
    found.sort_by_key(ToString::to_string);
    Ok(found.into_iter().next())
}

/// Bytes of a script read for its header (class_name and extends come first).
const HEAD_BYTES: usize = 16 * 1024;

pub(crate) fn head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(HEAD_BYTES);
    std::fs::File::open(path)
        .ok()?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// What a script declares about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ScriptHeader {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
    /// A class name, or a quoted `res://` path for `extends "res://base.gd"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool: bool,
}

/// class_name, extends and @tool of a GDScript: top-level (unindented) lines only,
/// comments ignored; `@tool`, `class_name X extends Y` and `@icon(…)` may share a line.
pub(crate) fn script_header_gd(text: &str) -> ScriptHeader {
    let mut h = ScriptHeader::default();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let code = line.split('#').next().unwrap_or("");
        let mut tokens = code.split_whitespace();
        while let Some(t) = tokens.next() {
            match t {
                "@tool" => h.tool = true,
                "class_name" if h.class_name.is_none() => {
                    h.class_name = tokens.next().map(|n| n.trim_end_matches(':').to_string());
                }
                "extends" if h.extends.is_none() => {
                    h.extends = tokens
                        .next()
                        .map(|n| n.trim_end_matches(':').trim_matches('"').to_string());
                }
                _ => {}
            }
        }
        if code.trim_start().starts_with("func ") {
            break; // the header is over
        }
    }
    h
}

/// The `uid="uid://…"` of an `.import` file's `[remap]` section.
pub(crate) fn import_uid(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("uid="))
        .map(|v| v.trim().trim_matches('"').to_string())
        .find(|v| v.starts_with("uid://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_outside_its_range_is_refused_with_the_parameter_named() {
        assert_eq!(count_param("limit", None, 100, 1000).unwrap(), 100);
        assert_eq!(count_param("limit", Some(1000), 100, 1000).unwrap(), 1000);
        for bad in [0, 1001] {
            let e = count_param("max_keys", Some(bad), 100, 1000).unwrap_err();
            assert_eq!(e.message, "max_keys must be between 1 and 1000");
            assert_eq!(e.param.as_deref(), Some("max_keys"));
        }
    }

    /// What a walk lists: hidden entries, `.gdignore`d folders, skipped names and
    /// symlinks out of the project never; sub-folders only when recursive.
    #[test]
    fn a_walk_lists_the_project_files_it_may_and_no_others() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.gd"), "x").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("project.godot"), "config_version=5\n").unwrap();
        for (path, text) in [
            ("a.gd", "a"),
            ("a.gd.uid", "uid://abc"),
            (".hidden/h.gd", "h"),
            ("ignored/.gdignore", ""),
            ("ignored/i.gd", "i"),
            ("sub/z.tscn", "zz"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        godot_mcp_os::fs::symlink(root.join("sub/z.tscn"), root.join("link.tscn")).unwrap();
        godot_mcp_os::fs::symlink(outside.path().join("secret.gd"), root.join("out.gd")).unwrap();
        let state = AppState::for_tests(root);
        let list = |recursive: bool| {
            let how = Walk {
                recursive,
                skip: |name| name.ends_with(".uid"),
                too_many: project_too_large,
            };
            let mut out = Vec::new();
            let root_res = ResPath::root();
            let real = state.project.resolve("path", &root_res).unwrap();
            walk_project(
                &state,
                &real,
                &root_res,
                &how,
                &mut 0,
                &mut |res, _, size| out.push((res.to_string(), size)),
            )
            .unwrap();
            out.sort();
            out
        };
        let files = |l: &[(&str, u64)]| -> Vec<(String, u64)> {
            l.iter().map(|(p, s)| (p.to_string(), *s)).collect()
        };
        assert_eq!(
            list(true),
            files(&[
                ("res://a.gd", 1),
                ("res://link.tscn", 2),
                ("res://project.godot", 17),
                ("res://sub/z.tscn", 2)
            ])
        );
        assert_eq!(
            list(false),
            files(&[
                ("res://a.gd", 1),
                ("res://link.tscn", 2),
                ("res://project.godot", 17)
            ])
        );
    }
}
