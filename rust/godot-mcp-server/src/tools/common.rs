//! Small checks that many file-plane tools share, so that each is written once and
//! every tool words the same refusal the same way.

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::state::AppState;

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

/// Calls `file(res path, real path, size)` for every file under `real` (`res`):
/// skips hidden entries, folders holding `.gdignore`, and symlinks that leave the
/// project. A symlink is followed only to a file inside the project, never to a
/// folder (no loops, no escapes).
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
    for entry in entries.flatten() {
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

/// The refusal of a walk that met too many entries, for a whole-project scan.
pub(crate) fn project_too_large(_: &ResPath) -> ToolError {
    ToolError::new(
        ErrorCode::TooLarge,
        format!("the project holds more than {MAX_WALK_ENTRIES} entries"),
    )
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
}
