//! Where a project's private state lives, and the path hygiene the journal
//! applies defensively even though the server validated paths already.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::ids::ContentHash;

/// The state root: `$GODOT_MCP_STATE_DIR`, else `$XDG_STATE_HOME/godot-mcp`, else
/// `~/.local/state/godot-mcp`. `None` only when not even `$HOME` is set.
pub fn state_root() -> Option<PathBuf> {
    state_root_from(|k| std::env::var_os(k))
}

fn state_root_from(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let non_empty = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("GODOT_MCP_STATE_DIR") {
        return Some(dir);
    }
    if let Some(dir) = non_empty("XDG_STATE_HOME") {
        return Some(dir.join("godot-mcp"));
    }
    non_empty("HOME").map(|h| h.join(".local/state/godot-mcp"))
}

/// The per-project state directory under `root`: a folder named after the
/// project directory plus a hash of its canonical path, so two projects never
/// share one and a human can still tell which is which.
pub fn project_state_dir(root: &Path, canonical_project: &Path) -> PathBuf {
    let hash = ContentHash::of(canonical_project.as_os_str().as_encoded_bytes());
    let name: String = canonical_project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let short = &hash.to_string()[..16];
    if name.is_empty() {
        root.join(short)
    } else {
        root.join(format!("{name}-{short}"))
    }
}

/// A project-relative path that is not one the journal will touch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// Empty, absolute, or carrying `..`, `.` or a prefix component.
    #[error("path {path:?} is not a plain relative path inside the project")]
    NotRelative {
        /// The offending path.
        path: PathBuf,
    },
    /// The path names the journal's own temp-file namespace.
    #[error("path {path:?} uses the reserved `.gmcp-` temp-file prefix")]
    Reserved {
        /// The offending path.
        path: PathBuf,
    },
}

/// The prefix of every temp file the journal creates next to a target.
pub const TEMP_PREFIX: &str = ".gmcp-";

/// Checks `rel` is a plain relative path (only normal components).
pub fn validate_relative(rel: &Path) -> Result<(), PathError> {
    let not_relative = || PathError::NotRelative {
        path: rel.to_path_buf(),
    };
    let mut components = 0usize;
    for c in rel.components() {
        match c {
            Component::Normal(_) => components += 1,
            _ => return Err(not_relative()),
        }
    }
    if components == 0 {
        return Err(not_relative());
    }
    if rel
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(TEMP_PREFIX))
    {
        return Err(PathError::Reserved {
            path: rel.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_root_follows_the_documented_precedence() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        const ALL: &[(&str, &str)] = &[
            ("GODOT_MCP_STATE_DIR", "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(state_root_from(env(ALL)), Some("/s".into()));
        assert_eq!(
            state_root_from(env(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")])),
            Some("/x/godot-mcp".into())
        );
        assert_eq!(
            state_root_from(env(&[("GODOT_MCP_STATE_DIR", ""), ("HOME", "/h")])),
            Some("/h/.local/state/godot-mcp".into())
        );
        assert_eq!(state_root_from(env(&[])), None);
    }

    #[test]
    fn project_dirs_differ_per_path() {
        let a = project_state_dir(Path::new("/r"), Path::new("/p/game"));
        let b = project_state_dir(Path::new("/r"), Path::new("/q/game"));
        assert_ne!(a, b);
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("game-")
        );
    }

    #[test]
    fn only_plain_relative_paths_pass() {
        for ok in ["a.txt", "scenes/main.tscn", "a/b/c"] {
            assert_eq!(validate_relative(Path::new(ok)), Ok(()), "{ok}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../b", "./a"] {
            assert!(validate_relative(Path::new(bad)).is_err(), "{bad}");
        }
        assert!(matches!(
            validate_relative(Path::new("a/.gmcp-x.tmp")),
            Err(PathError::Reserved { .. })
        ));
    }
}
