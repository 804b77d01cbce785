//! The per-project writer lease: an exclusive lock (`flock` on Unix) on `lease.lock` in the
//! project's state directory — never on the SQLite file, whose own locking
//! SQLite owns.
//!
//! The kernel drops an `flock` when its holder dies, SIGKILL included, so a
//! crashed server never leaves a stale lease behind. The holder's pid is written
//! into the file so the refusal can name it, and so a start can tell a live
//! holder from a dead one: the drop is not always done by the time the holder is
//! a zombie or reaped (the close of a dying process's files can be deferred to a
//! kernel worker; measured on Linux 6.18: about 1 ms after every thread had
//! exited, once in 300 SIGKILLs). A start that finds the lease held by a process
//! that has finished dying waits for that drop, bounded by [`DEAD_HOLDER_WAIT`];
//! a live holder is refused at once.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside the project state dir.
pub const FILE_NAME: &str = "lease.lock";

/// The second lock, inside the project itself (in Godot's own cache folder,
/// `.godot/`, which is never project content): every server of one project folder
/// meets there, whatever its state dir (`GODOT_MCP_STATE_DIR`, `XDG_STATE_HOME`,
/// another user) or the path it reached the folder by (a second mount, a
/// symlink). See docs/recovery.md for a shared network folder.
pub const PROJECT_FILE: &str = ".godot/godot-mcp.lease";

/// How long a start waits for the kernel to drop the lock of a holder that has
/// finished dying (see the module docs). A holder still holding it after that
/// is reported as [`LeaseError::Held`].
pub const DEAD_HOLDER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A held lease; dropping it releases the lock.
#[derive(Debug)]
pub struct Lease {
    /// Keeping the descriptor open is what holds the lock.
    _file: File,
    path: PathBuf,
}

/// The lease could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Another live process holds the lease for this project.
    #[error(
        "another godot-mcp server holds the project lease {path} (pid {}); \
         only one server may write a project — stop it first",
        pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
    )]
    Held {
        /// The holder's pid as it recorded it, when readable.
        pid: Option<u32>,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file could not be opened or locked.
    #[error("project lease {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

impl Lease {
    /// Takes the lease in `state_dir` without waiting.
    pub fn acquire(state_dir: &Path) -> Result<Self, LeaseError> {
        Self::acquire_at(state_dir.join(FILE_NAME))
    }

    /// Takes the lease inside the project folder `root` ([`PROJECT_FILE`]; its
    /// folder made if missing, as Godot makes it on a project's first open)
    /// without waiting.
    ///
    /// Refused when the file cannot be made or opened for writing (a read-only
    /// folder or file system, another user's lease file): a server that cannot
    /// hold the lock cannot know it is the only writer. When another process
    /// holds the lock there, the refusal still names it ([`LeaseError::Held`];
    /// the file opened for reading only to see that). The project is not
    /// trusted: a lease file that is a symlink, or no regular file, is refused
    /// before anything is written through it.
    pub fn acquire_in_project(root: &Path) -> Result<Self, LeaseError> {
        let path = root.join(PROJECT_FILE);
        let unwritable = |source: io::Error| {
            io::Error::new(
                source.kind(),
                format!(
                    "{source}; the server locks this file inside the project so that \
                     one server writes it: make the project's .godot/ writable for this user"
                ),
            )
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| LeaseError::Io {
                path: path.clone(),
                source: unwritable(source),
            })?;
        }
        match open_in_project(&path, true) {
            Ok(file) => Self::lock(file, path),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                // Not writable here, yet perhaps held by a server that could write it.
                let holder =
                    open_in_project(&path, false)
                        .ok()
                        .and_then(|mut f| match f.try_lock() {
                            Err(std::fs::TryLockError::WouldBlock) => Some(recorded_pid(&mut f)),
                            _ => None,
                        });
                Err(match holder {
                    Some(pid) => LeaseError::Held { pid, path },
                    None => LeaseError::Io {
                        path,
                        source: unwritable(e),
                    },
                })
            }
            Err(source) => Err(LeaseError::Io { path, source }),
        }
    }

    /// Takes the lock on the file `path` without waiting.
    fn acquire_at(path: PathBuf) -> Result<Self, LeaseError> {
        match open_for_lease(&path) {
            Ok(file) => Self::lock(file, path),
            Err(source) => Err(LeaseError::Io { path, source }),
        }
    }

    /// Takes the lock on `file` (the lease file `path`) without waiting, and
    /// records this process as its holder.
    fn lock(mut file: File, path: PathBuf) -> Result<Self, LeaseError> {
        let io_err = |source| LeaseError::Io {
            path: path.clone(),
            source,
        };
        // std's lock is `flock(LOCK_EX | LOCK_NB)` on Unix, `LockFileEx` on Windows.
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = recorded_pid(&mut file);
                if !pid.is_some_and(finished_dying) {
                    return Err(LeaseError::Held { pid, path });
                }
                file = match lock_within(file, DEAD_HOLDER_WAIT) {
                    Some(Ok(file)) => file,
                    Some(Err(e)) => return Err(io_err(e)),
                    None => return Err(LeaseError::Held { pid, path }),
                };
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io_err(e)),
        }
        // The pid is written over the last holder's in place, at a fixed width (readers
        // trim), so the file keeps its size and a start truncates nothing: on ext4 a
        // truncate of the last holder's still-unwritten pid starts its writeback, which
        // was 0.3-0.5 ms of every start. Longer bytes (not ours) are cut once.
        let record = pid_record(std::process::id());
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        file.write_all(record.as_bytes()).map_err(io_err)?;
        if file.metadata().map_err(io_err)?.len() > record.len() as u64 {
            file.set_len(record.len() as u64).map_err(io_err)?;
        }
        Ok(Self { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens (or makes) a lease file to lock and write.
fn open_for_lease(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Opens the project's lease file `path` (made if missing when `write`), refusing
/// one that is a symlink or no regular file: checked on the path before the open
/// (so a dangling link makes no file where it points) and, by identity, on the
/// open file after it (so a link put there meanwhile is not written through).
fn open_in_project(path: &Path, write: bool) -> io::Result<File> {
    let not_ours = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a symlink?); the lease file is godot-mcp's own: remove it",
        )
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(not_ours()),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound && write => {}
        Err(e) => return Err(e),
    }
    let file = if write {
        open_for_lease(path)?
    } else {
        File::open(path)?
    };
    let meta = file.metadata()?;
    if !meta.is_file()
        || godot_mcp_os::fs::file_id(&file, &meta)? != godot_mcp_os::fs::path_id(path)?
    {
        return Err(not_ours());
    }
    Ok(file)
}

/// The pid a holder recorded in `file`, when readable (on Windows a held lock
/// keeps its bytes from other processes: none).
fn recorded_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text)
        .ok()
        .and_then(|_| text.trim().parse().ok())
}

/// What a holder writes into the lock file: its pid, padded with spaces to the
/// width of the largest one, and a newline (always 11 bytes).
pub fn pid_record(pid: u32) -> String {
    format!("{pid:<10}\n")
}

/// Whether the process that recorded `pid` has finished dying: the OS shows no
/// live process there (gone, or a zombie whose threads have all exited). Never
/// this process, and never on an OS whose processes cannot be observed.
fn finished_dying(pid: u32) -> bool {
    let table = godot_mcp_os::process_table::os();
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    pid != std::process::id() as i32
        && table.observable()
        && table
            .stat(pid)
            .is_none_or(|stat| !table.is_live(pid, &stat))
}

/// Takes the lock, blocking, on a thread of its own: the lock itself says when it
/// is free, and `bound` keeps a holder that never lets go from stalling the
/// start. `None` when the bound passed (the thread then keeps waiting until the
/// process exits, and drops the lock at once if it ever gets it).
fn lock_within(file: File, bound: std::time::Duration) -> Option<io::Result<File>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("lease-wait".into())
        .spawn(move || {
            let taken = file.lock().map(|()| file);
            let _ = tx.send(taken);
        })
        .map_or_else(|e| Some(Err(e)), |_| rx.recv_timeout(bound).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_acquire_names_the_holder_and_succeeds_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = Lease::acquire(dir.path()).unwrap();
        match Lease::acquire(dir.path()) {
            Err(LeaseError::Held { pid, .. }) => {
                assert_eq!(pid, Some(std::process::id()));
            }
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        Lease::acquire(dir.path()).unwrap();
    }

    /// A project never opened in Godot has no `.godot/`: it is made (as Godot
    /// makes it), and the lease taken there.
    #[test]
    fn the_project_lease_makes_the_godot_folder() {
        let dir = tempfile::tempdir().unwrap();
        let lease = Lease::acquire_in_project(dir.path()).unwrap();
        assert_eq!(lease.path(), dir.path().join(PROJECT_FILE));
        drop(lease); // Windows keeps a held file's bytes from every other handle
        assert_eq!(
            std::fs::read_to_string(dir.path().join(PROJECT_FILE)).unwrap(),
            pid_record(std::process::id())
        );
    }

    /// Guards against: writing the holder's pid through a lease file the project
    /// made a symlink (a project is not trusted): over another file's first
    /// bytes, or creating the file a dangling link names. Both are refused and
    /// the link's target is untouched (or never made).
    #[cfg(unix)]
    #[test]
    fn a_symlinked_project_lease_file_is_refused_and_nothing_is_written_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join(".godot")).unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious bytes\n").unwrap();
        let lease_path = project.join(PROJECT_FILE);
        godot_mcp_os::fs::symlink(&victim, &lease_path).unwrap();
        let e = Lease::acquire_in_project(&project).unwrap_err();
        assert!(matches!(e, LeaseError::Io { .. }), "{e:?}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious bytes\n");

        std::fs::remove_file(&lease_path).unwrap();
        let nowhere = dir.path().join("made-by-the-link");
        godot_mcp_os::fs::symlink(&nowhere, &lease_path).unwrap();
        Lease::acquire_in_project(&project).unwrap_err();
        assert!(!nowhere.exists());
    }
}
