//! The project this server serves: where it is, and how a `ResPath` becomes a real
//! path that is proven to stay inside it (symlinks included).

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use godot_mcp_os::paths::{self, Host};
use serde_json::{Map, Value};

use crate::respath::{
    EXPORT_TARGET_PATTERN, ExportDest, Placed, RES_PATTERN, ResPath, looks_absolute,
    place_in_project, resolve_absolute,
};

/// Why no project could be served. Shown to a person on stderr, so each says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProjectError {
    #[error(
        "no Godot project found: neither {start} nor any folder above it holds a project.godot\n\
         hint: pass --project PATH (or set GODOT_MCP_PROJECT) to a folder that contains project.godot"
    )]
    NotFoundUpward { start: String },
    #[error(
        "{path} is not a Godot project: it has no project.godot\n\
         hint: --project must name the folder that contains project.godot"
    )]
    NoProjectFile { path: String },
    #[error("cannot open project folder {path}: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A Godot project on disk.
#[derive(Debug, Clone)]
pub struct Project {
    /// Canonical absolute path of the folder holding project.godot; every resolved path
    /// must stay under it.
    root: PathBuf,
}

impl Project {
    /// Open the project at `explicit`, or the nearest folder at or above `cwd` holding
    /// project.godot.
    pub fn discover(explicit: Option<&Path>, cwd: &Path) -> Result<Self, ProjectError> {
        match explicit {
            Some(path) => {
                let root = path
                    .canonicalize()
                    .map_err(|source| ProjectError::Unreadable {
                        path: path.display().to_string(),
                        source,
                    })?;
                if root.join("project.godot").is_file() {
                    Ok(Self { root })
                } else if root.is_file() && root.file_name().is_some_and(|n| n == "project.godot") {
                    let root = root.parent().map(Path::to_path_buf).unwrap_or(root);
                    Ok(Self { root })
                } else {
                    Err(ProjectError::NoProjectFile {
                        path: path.display().to_string(),
                    })
                }
            }
            None => {
                let start = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
                start
                    .ancestors()
                    .find(|dir| dir.join("project.godot").is_file())
                    .map(|dir| Self {
                        root: dir.to_path_buf(),
                    })
                    .ok_or_else(|| ProjectError::NotFoundUpward {
                        start: cwd.display().to_string(),
                    })
            }
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project's display name (`application/config/name`), or its folder name.
    pub fn name(&self) -> String {
        std::fs::read_to_string(self.root.join("project.godot"))
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    let v = l.trim().strip_prefix("config/name=")?;
                    Some(v.trim().trim_matches('"').to_string())
                })
            })
            .or_else(|| {
                self.root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_default()
    }

    /// Resolve a `ResPath` to a filesystem path proven to lie inside the project.
    ///
    /// Every existing prefix of the path is canonicalized, so a symlink anywhere on the
    /// way that points outside the project is refused; a dangling symlink is refused too
    /// (writing through it would create a file wherever it points). Non-existent tail
    /// components cannot be symlinks, so they are appended as they are.
    pub fn resolve(&self, param: &str, path: &ResPath) -> Result<PathBuf, ToolError> {
        let mut existing = self.root.clone();
        let mut rest: Vec<&str> = Vec::new();
        let segments: Vec<&str> = if path.is_root() {
            Vec::new()
        } else {
            path.rel().split('/').collect()
        };
        for (i, seg) in segments.iter().enumerate() {
            let candidate = existing.join(seg);
            match std::fs::symlink_metadata(&candidate) {
                Ok(_) => existing = candidate,
                Err(_) => {
                    rest.extend_from_slice(&segments[i..]);
                    break;
                }
            }
        }
        let real = match existing.canonicalize() {
            Ok(real) => real,
            Err(_) => {
                return Err(refused(param, path, "it is a dangling symbolic link"));
            }
        };
        if !real.starts_with(&self.root) {
            return Err(refused(
                param,
                path,
                "it resolves (through a symbolic link) outside the project",
            ));
        }
        let mut out = real;
        for seg in rest {
            out.push(seg);
        }
        Ok(out)
    }

    /// The `res://` path of a real path under the root, if it is under the root.
    pub fn res_path_of(&self, real: &Path) -> Option<ResPath> {
        let rel = real.strip_prefix(&self.root).ok()?;
        let s = rel.to_str()?;
        ResPath::parse(&format!("res://{s}")).ok()
    }
}

fn refused(param: &str, path: &ResPath, why: &str) -> ToolError {
    ToolError::new(ErrorCode::PathRefused, format!("{path} is refused: {why}"))
        .param(param)
        .hint("Use a res:// path to a file inside the project.")
}

// ---------------------------------------------------------------------------------
// The schema-boundary walk: every res:// path anywhere in a call's arguments
// ---------------------------------------------------------------------------------

/// Check every `res://` path a call's arguments carry, before anything runs: each
/// string the schema declares a `ResPath` (pattern [`RES_PATTERN`]), each res://
/// target of an [`ExportTarget`], and each `res://` string inside a typed value
/// (`{"$type": "Resource", "path": …}`, wherever the value sits), and each res:// path
/// in a string where the schema takes any JSON (a bare `"res://icon.svg"` value loads
/// that resource for an Object property; `load("res://…")` too). Each must parse as
/// a contained `ResPath` and resolve, symlinks included, inside the project;
/// otherwise the call is `PATH_REFUSED`, naming the argument. This runs in the
/// pipeline's decode step for every tool (and every run_commands entry), before any
/// precondition, so a new tool gets it without writing a line.
pub(crate) fn check_arg_paths(
    project: &Project,
    schema: &Map<String, Value>,
    args: &Map<String, Value>,
) -> Result<(), ToolError> {
    let props = schema.get("properties");
    for (k, v) in args {
        let sub = props.and_then(|p| p.get(k)).unwrap_or(&Value::Null);
        walk(project, sub, v, k)?;
    }
    Ok(())
}

fn walk(project: &Project, schema: &Value, value: &Value, path: &str) -> Result<(), ToolError> {
    let branches = branches(schema, value);
    match value {
        Value::String(s) => {
            // A string where the schema takes any JSON (a `value`): the add-on reads it
            // by the property's declared type, and a res:// path there loads a resource.
            let free = branches.iter().all(|b| {
                !["type", "pattern", "enum", "const", "format"]
                    .iter()
                    .any(|k| b.get(*k).is_some())
            });
            if free {
                check_value_string(project, s, path)?;
            }
            for b in &branches {
                match b.get("pattern").and_then(Value::as_str) {
                    Some(RES_PATTERN) => {
                        check_res(project, s, path)?;
                    }
                    Some(EXPORT_TARGET_PATTERN) => {
                        decide_export_target(project, path, s)?;
                    }
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let sub = branches
                    .iter()
                    .find_map(|b| b.get("items"))
                    .unwrap_or(&Value::Null);
                walk(project, sub, item, &format!("{path}[{i}]"))?;
            }
        }
        Value::Object(map) => {
            if let Some(Value::String(ty)) = map.get("$type") {
                return check_typed(project, ty, map, path);
            }
            for (k, v) in map {
                let sub = branches
                    .iter()
                    .find_map(|b| {
                        b.get("properties")
                            .and_then(|p| p.get(k))
                            .or_else(|| b.get("additionalProperties").filter(|a| a.is_object()))
                    })
                    .unwrap_or(&Value::Null);
                walk(project, sub, v, &format!("{path}.{k}"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The schema and its `anyOf`/`oneOf`/`allOf` alternatives that `value` can match:
/// an alternative whose `const` properties (a tagged enum's tag) disagree with the
/// value is left out, so a path field of one variant is never applied to another.
fn branches<'a>(schema: &'a Value, value: &Value) -> Vec<&'a Value> {
    let mut out = Vec::new();
    let mut todo = vec![schema];
    while let Some(s) = todo.pop() {
        let Value::Object(m) = s else { continue };
        if let (Some(Value::Object(props)), Value::Object(v)) = (m.get("properties"), value) {
            let disagrees = props.iter().any(|(k, p)| {
                p.get("const")
                    .is_some_and(|c| v.get(k).is_some_and(|actual| actual != c))
            });
            if disagrees {
                continue;
            }
        }
        out.push(s);
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(alts)) = m.get(key) {
                todo.extend(alts.iter());
            }
        }
    }
    out
}

/// A typed value: `Resource.path` must be a contained res:// path, and so must any
/// other res:// string a typed value carries, however deep (a new sub-resource's
/// `properties` hold values of their own, typed ones included).
fn check_typed(
    project: &Project,
    ty: &str,
    map: &Map<String, Value>,
    path: &str,
) -> Result<(), ToolError> {
    for (k, v) in map {
        let at = format!("{path}.{k}");
        match (ty, k.as_str(), v) {
            (_, "$type", _) => {}
            ("Resource", "path", Value::String(s)) => {
                check_res(project, s, &at)?;
            }
            ("Resource", "path", _) => {
                return Err(path_refused(
                    &at,
                    "Resource.path must be a res:// path inside the project",
                ));
            }
            ("Raw", "text", Value::String(text)) => check_raw(project, text, &at)?,
            (_, _, v) => check_carried(project, v, &at)?,
        }
    }
    Ok(())
}

/// Every res:// path a string in a value names: the string itself (`"res://icon.svg"`,
/// loaded for an Object property; spaces around it ignored, as the add-on reads it)
/// and each `res://…` inside it, up to a quote (`load("res://…")`, Godot text).
fn check_value_string(project: &Project, s: &str, at: &str) -> Result<(), ToolError> {
    let t = s.trim();
    if t.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("res://")) {
        check_res(project, t, at)?;
    }
    let lower = s.to_ascii_lowercase();
    for (i, _) in lower.match_indices("res://") {
        let token: String = s[i..]
            .chars()
            .take_while(|c| !matches!(c, '"' | '\''))
            .collect();
        check_res(project, &token, at)?;
    }
    Ok(())
}

/// Every res:// string and typed value inside a typed value's field, at any depth.
fn check_carried(project: &Project, value: &Value, at: &str) -> Result<(), ToolError> {
    match value {
        Value::String(s) => check_value_string(project, s, at)?,
        Value::Object(map) => {
            if let Some(Value::String(ty)) = map.get("$type") {
                return check_typed(project, ty, map, at);
            }
            for (k, v) in map {
                check_carried(project, v, &format!("{at}.{k}"))?;
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                check_carried(project, v, &format!("{at}[{i}]"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A `Raw` value's Variant text reaches Godot's `str_to_var`, where `Resource("…")`
/// loads the file it names. The text is read with the reader the server reads
/// Godot's files with, and every path in it is checked: a `Resource(…)`'s argument
/// must be a contained res:// path (an absolute or `user://` one included), and a
/// res:// string anywhere is checked as in JSON. Text the reader cannot read cannot
/// be checked, and is refused.
fn check_raw(project: &Project, text: &str, at: &str) -> Result<(), ToolError> {
    let parsed = godot_mcp_formats::parse_value(text).map_err(|e| {
        path_refused(
            at,
            &format!("Raw text that cannot be read cannot be checked for paths ({e})"),
        )
    })?;
    check_text_paths(project, &parsed, at)
}

/// Every path in a value read from Variant text (see [`check_raw`]).
fn check_text_paths(
    project: &Project,
    value: &godot_mcp_formats::Literal,
    at: &str,
) -> Result<(), ToolError> {
    use godot_mcp_formats::Literal as V;
    match value {
        V::String(s) | V::StringName(s)
            if s.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("res://")) =>
        {
            check_res(project, s, at)?;
        }
        V::Constructor { name, args } if name == "Resource" => {
            for arg in args {
                let V::String(s) = arg else {
                    return Err(path_refused(
                        at,
                        "Resource(…) in Raw text must name a res:// path inside the project",
                    ));
                };
                check_res(project, s, at)?;
            }
        }
        V::Constructor { args: items, .. } | V::Array(items) => {
            for v in items {
                check_text_paths(project, v, at)?;
            }
        }
        V::Dictionary(entries) => {
            for e in entries {
                check_text_paths(project, &e.key, at)?;
                check_text_paths(project, &e.value, at)?;
            }
        }
        V::Object { properties, .. } => {
            for p in properties {
                check_text_paths(project, &p.value, at)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn path_refused(param: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PathRefused,
        format!("`{param}` is refused: {why}"),
    )
    .param(param)
    .hint("File paths are res:// paths inside the project, like res://scenes/main.tscn.")
}

/// The one predicate: parses as a contained `ResPath` and resolves inside the project.
fn check_res(project: &Project, s: &str, param: &str) -> Result<PathBuf, ToolError> {
    let p = ResPath::parse(s).map_err(|e| path_refused(param, &e.0))?;
    project.resolve(param, &p)
}

/// Decide an export target. A res:// target must resolve inside the project and not
/// into a hidden path (`.godot/`); an absolute path is resolved the way the kernel
/// would open it (each existing ancestor canonicalised, `..` applied to the resolved
/// parent) before it is judged inside or outside, so `<project>/../x` and a symlink
/// out of the project are outside.
pub(crate) fn decide_export_target(
    project: &Project,
    param: &str,
    raw: &str,
) -> Result<ExportDest, ToolError> {
    let real = if raw.starts_with("res://") {
        let p = ResPath::parse(raw).map_err(|e| path_refused(param, &e.0))?;
        if p.is_root() {
            return Err(path_refused(
                param,
                "res:// is the project folder, not a file",
            ));
        }
        project.resolve(param, &p)?
    } else if looks_absolute(raw) {
        if let Err(e) = paths::parse_absolute(Host::this(), raw) {
            return Err(path_refused(param, &e.to_string()));
        }
        resolve_absolute(Path::new(raw))
            .ok_or_else(|| path_refused(param, "it names a dangling symbolic link"))?
    } else {
        return Err(path_refused(
            param,
            "output_path must be a res:// path inside the project or an absolute filesystem path",
        ));
    };
    if real.is_dir() {
        return Err(path_refused(
            param,
            "it is a folder; name the file to export to",
        ));
    }
    match place_in_project(paths::host_of(project.root()), project.root(), &real) {
        Placed::Inside(res) => {
            if res.is_hidden() {
                return Err(path_refused(
                    param,
                    "it lies in a hidden folder (like .godot/, Godot's private cache)",
                ));
            }
            Ok(ExportDest::Inside { res, real })
        }
        Placed::Refused(why) => Err(path_refused(param, &why)),
        Placed::Outside if raw.starts_with("res://") => Err(path_refused(
            param,
            "it resolves (through a symbolic link) outside the project",
        )),
        Placed::Outside => Ok(ExportDest::Outside { real }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_refuses_symlink_out_and_accepts_inside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        godot_mcp_os::fs::symlink("/etc", dir.path().join("etc_link")).unwrap();
        godot_mcp_os::fs::symlink("a", dir.path().join("a_link")).unwrap();
        let p = Project::discover(Some(dir.path()), Path::new("/")).unwrap();
        let out = ResPath::parse("res://etc_link/passwd").unwrap();
        assert_eq!(
            p.resolve("path", &out).unwrap_err().code,
            ErrorCode::PathRefused
        );
        let inside = ResPath::parse("res://a_link/new.gd").unwrap();
        let real = p.resolve("path", &inside).unwrap();
        assert!(real.starts_with(p.root()));
        assert!(real.ends_with("a/new.gd"));
    }

    #[test]
    fn discover_walks_upward_and_explains_failure() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("x/y")).unwrap();
        let p = Project::discover(None, &dir.path().join("x/y")).unwrap();
        assert_eq!(p.root(), dir.path().canonicalize().unwrap());
        let empty = tempfile::tempdir().unwrap();
        let err = Project::discover(Some(empty.path()), Path::new("/")).unwrap_err();
        assert!(err.to_string().contains("has no project.godot"));
    }
}
