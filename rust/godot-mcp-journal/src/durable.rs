//! The bare atomic durable write and the file primitives the journal is built
//! from: a temp file in the target's directory, write, fsync, rename over the
//! target, fsync of the directory. Also where a project's private state lives
//! ([`state_root`], [`project_state_dir`]) and the path hygiene the journal applies
//! defensively even though the server validated paths already ([`validate_relative`]);
//! `godot_mcp_journal::state_dir` re-exports those.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use crate::failpoints::{self as fp, cross};
use crate::ids::{ContentHash, FileState, TxnId};
use crate::storage::Storage;

/// The temp file a transaction writes before renaming it over `target`.
pub fn temp_path_for(target: &Path, txn: TxnId) -> PathBuf {
    let dir = target.parent().unwrap_or_else(|| Path::new("."));
    dir.join(format!("{TEMP_PREFIX}{txn}.tmp"))
}

/// The directory that holds `path` (for the directory fsync).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes the directory entry changes in `dir` durable.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    godot_mcp_os::fs::sync_dir(dir)
}

/// Reads the state of `path`: absent, or present with its bytes' hash. Anything
/// but a readable regular file or a missing one is an error (never "absent").
pub fn read_state(path: &Path) -> io::Result<FileState> {
    match read_bytes(path)? {
        None => Ok(FileState::Absent),
        Some(bytes) => Ok(FileState::of(&bytes)),
    }
}

/// Which file a path named when it was read (device and inode, or volume and
/// file index), so a file replaced by another (a rename over it) is told apart
/// even with equal bytes: the OS layer's one type.
pub use godot_mcp_os::fs::FileId;

/// Which file a path names and when it was last modified: a write changes one of them
/// (a rename over the path its identity, a write in place its modification time), even
/// when the bytes stay the same. An editor command that may write several files records
/// each one's stamp before the request and compares it after the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStamp {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
    /// The modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u64,
}

impl FileStamp {
    /// The stamp of the file `path` names (following symlinks); `None` when absent.
    pub fn read(path: &Path) -> io::Result<Option<Self>> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = regular_file_metadata(&file, path)?;
        let id = godot_mcp_os::fs::file_id(&file, &meta)?;
        let mtime_ns = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Ok(Some(Self {
            dev: id.dev,
            ino: id.ino,
            mtime_ns,
        }))
    }
}

/// What one read of `path` observed: its state, and for a present file its
/// identity and permission bits, all from the one open file (so the bytes are
/// those of that inode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// Absent, or present with its bytes' hash.
    pub state: FileState,
    /// Device and inode, when present.
    pub id: Option<FileId>,
    /// Permission bits, when present.
    pub mode: Option<u32>,
}

/// Reads `path` once: its state, identity and mode (see [`Observed`]).
pub fn observe(path: &Path) -> io::Result<Observed> {
    observe_bytes(path).map(|(observed, _)| observed)
}

/// [`observe`], also returning the bytes that were hashed (`None`: absent), so
/// a caller that keeps them (the pre-image) does not read the file again.
pub fn observe_bytes(path: &Path) -> io::Result<(Observed, Option<Vec<u8>>)> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((
                Observed {
                    state: FileState::Absent,
                    id: None,
                    mode: None,
                },
                None,
            ));
        }
        Err(e) => return Err(e),
    };
    let meta = regular_file_metadata(&file, path)?;
    // Read into a buffer sized from the one fstat above (`read_to_end` on a
    // `File` would stat it again).
    let mut bytes = vec![0u8; usize::try_from(meta.len()).unwrap_or(0)];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            bytes.resize(filled + 4096, 0);
        }
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    let observed = Observed {
        state: FileState::of(&bytes),
        id: Some(godot_mcp_os::fs::file_id(&file, &meta)?),
        mode: Some(godot_mcp_os::fs::mode(&meta)),
    };
    Ok((observed, Some(bytes)))
}

/// The metadata of the open `file`, which must be a regular file (a directory or
/// device at `path` is an error, never read).
fn regular_file_metadata(file: &File, path: &Path) -> io::Result<fs::Metadata> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(meta)
}

/// The bytes of `path`, or `None` when it does not exist.
pub fn read_bytes(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = regular_file_metadata(&file, path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Creates `temp` exclusively (mode `mode`) and writes `bytes` to it, without
/// syncing. The caller syncs with [`File::sync_all`].
pub fn create_temp(temp: &Path, bytes: &[u8], mode: u32) -> io::Result<File> {
    let mut file =
        godot_mcp_os::fs::create_mode(OpenOptions::new().write(true).create_new(true), mode)
            .open(temp)?;
    file.write_all(bytes)?;
    Ok(file)
}

/// The bare durable write the journal's cost is measured against: temp file in
/// the same directory, write, fsync, rename, fsync of the directory. No journal.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let txn = TxnId::random()?;
    let temp = temp_path_for(target, txn);
    let result = (|| {
        let file = create_temp(&temp, bytes, 0o644)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, target)?;
        fsync_dir(parent_dir(target))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The effect half of a file transaction.
#[derive(Clone, Copy)]
pub(crate) enum FileEffect<'a> {
    Write { bytes: &'a [u8] },
    Delete,
}

/// The effect itself, after the intent and the temp file are durable: the
/// compare-and-swap re-checked against the identity and bytes read at step 1,
/// then the conditional rename (or the unlink) and the directory fsync.
/// `Ok(Some(state))`: the target was changed by someone else and nothing of
/// theirs was overwritten; `state` is what it holds.
///
/// A create renames with `RENAME_NOREPLACE`, so a file created meanwhile is
/// never replaced. An overwrite exchanges the temp and the target atomically
/// (`RENAME_EXCHANGE`) and then verifies that the file it displaced is the very
/// file (device, inode, bytes) it checked; if not, it exchanges them back. So a
/// write that lands between the re-check and the rename is detected and kept,
/// not overwritten and committed. (Windows has no atomic exchange: there it
/// is two steps, `godot_mcp_os::fs::exchange`; the checks are the same.) A
/// delete has no conditional form: the re-check runs immediately before the
/// unlink (see docs/recovery.md).
pub(crate) fn apply_effect(
    storage: &dyn Storage,
    target: &Path,
    temp: Option<&Path>,
    effect: FileEffect<'_>,
    seen: &Observed,
) -> io::Result<Option<FileState>> {
    let now = observe(target)?;
    if now.state != seen.state || now.id != seen.id {
        return Ok(Some(now.state));
    }
    cross(fp::AFTER_PRE_HASH);
    match (effect, temp) {
        (FileEffect::Write { .. }, Some(temp)) if seen.id.is_none() => {
            match storage.rename_noreplace(temp, target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return read_state(target).map(Some);
                }
                Err(e) => return Err(e),
            }
            cross(fp::AFTER_RENAME);
        }
        (FileEffect::Write { .. }, Some(temp)) => {
            storage.exchange(temp, target)?;
            cross(fp::AFTER_RENAME);
            let displaced = observe(temp)?;
            if displaced.state != seen.state || displaced.id != seen.id {
                // Someone wrote between the re-check and the exchange: put
                // their file back; ours is left at the temp path.
                storage.exchange(temp, target)?;
                return Ok(Some(displaced.state));
            }
            storage.remove_file(temp)?;
        }
        (FileEffect::Write { .. }, None) => {
            return Err(io::Error::other("a write without its temp"));
        }
        (FileEffect::Delete, _) => {
            storage.remove_file(target)?;
            cross(fp::AFTER_UNLINK);
        }
    }
    storage.sync_dir(parent_dir(target))?;
    cross(fp::AFTER_DIR_FSYNC);
    Ok(None)
}

/// Creates missing parent directories of `rel` under `root`, each made durable
/// in its own parent. Created directories are not journaled: an empty directory
/// left behind by a compensated create is not project content.
pub(crate) fn ensure_parent(storage: &dyn Storage, root: &Path, rel: &Path) -> io::Result<()> {
    let Some(parent) = rel.parent() else {
        return Ok(());
    };
    let mut dir = root.to_path_buf();
    for component in parent.components() {
        let next = dir.join(component);
        match storage.create_dir(&next) {
            Ok(()) => storage.sync_dir(&dir)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        dir = next;
    }
    Ok(())
}

// Where a project's private state lives, and the path hygiene the journal applies
// defensively even though the server validated paths already.

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
    fn write_atomic_replaces_bytes_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f");
        write_atomic(&target, b"one").unwrap();
        write_atomic(&target, b"two").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn read_state_distinguishes_absent_from_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read_state(&dir.path().join("nope")).unwrap(),
            FileState::Absent
        );
        assert!(read_state(dir.path()).is_err(), "a directory is not absent");
    }
}

#[cfg(test)]
mod state_dir_tests {
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
