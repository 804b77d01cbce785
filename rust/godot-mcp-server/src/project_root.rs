//! The project this server serves: where it is, and how a `ResPath` becomes a real
//! path that is proven to stay inside it (symlinks included).

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;

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
