//! File-system calls that differ per OS: durability, file identity, permission
//! bits, no-replace and exchange renames, and the hard self-kill the crash
//! tests use. Unix is the tested implementation; the Windows one is
//! compile-checked here and says `Unsupported` where it has no equivalent,
//! so a caller fails instead of assuming (docs/platforms.md).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Makes every rename, unlink and write already done on the file system
/// holding `dir` durable, in one call rather than one per file.
///
/// Linux: `syncfs`. macOS has no `syncfs`: `sync` writes out every dirty
/// buffer, then `F_FULLFSYNC` on `dir` asks the drive to flush its own cache
/// (a plain `fsync` there stops at the drive's cache). Windows: flushing a
/// volume needs an administrator's volume handle, so it is `Unsupported`.
pub fn sync_filesystem(dir: &File) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::syncfs(dir).map_err(io::Error::from)
    }
    #[cfg(target_os = "macos")]
    {
        rustix::fs::sync();
        rustix::fs::fcntl_fullfsync(dir).map_err(io::Error::from)
    }
    #[cfg(all(unix, not(any(target_os = "linux", target_os = "macos"))))]
    {
        let _ = dir;
        rustix::fs::sync();
        Ok(())
    }
    #[cfg(windows)]
    {
        let _ = dir;
        Err(unsupported("syncing a whole file system"))
    }
}

/// Opens directory `dir` for [`sync_filesystem`] and [`sync_dir`] (Windows
/// opens a directory only with backup semantics).
pub fn open_dir(dir: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        File::open(dir)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS;
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(dir)
    }
}

/// Makes the entries of directory `dir` (creates, renames, unlinks) durable:
/// `fsync` of the directory (Windows: `FlushFileBuffers` on its handle).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    open_dir(dir)?.sync_all()
}

/// A file's identity on its volume: (device or volume serial, inode or file
/// index). A path that names a different file has a different identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    /// Device (Unix) or volume serial number (Windows).
    pub dev: u64,
    /// Inode (Unix) or file index (Windows).
    pub ino: u64,
}

/// The identity of the open `file`, whose metadata is `meta` (Unix reads it
/// from `meta` with no further call; Windows asks the handle).
pub fn file_id(file: &File, meta: &Metadata) -> io::Result<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = file;
        Ok(FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
    #[cfg(windows)]
    {
        let _ = meta;
        windows::handle_id(file)
    }
}

/// The identity of what `path` names, not following a final symlink.
pub fn path_id(path: &Path) -> io::Result<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path)?;
        Ok(FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
        };
        let file = OpenOptions::new()
            .access_mode(0)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
            .open(path)?;
        windows::handle_id(&file)
    }
}

/// Creates the symlink `link` pointing at `target` (Windows: a directory link
/// when `target` is a directory, else a file link; creating either may need
/// developer mode there). For tests that build link layouts on any OS.
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        if target.as_ref().is_dir() {
            std::os::windows::fs::symlink_dir(target, link)
        } else {
            std::os::windows::fs::symlink_file(target, link)
        }
    }
}

/// Opens `path` for reading without following a final symlink: Unix fails
/// with `O_NOFOLLOW`'s error; Windows opens the link itself (which is then no
/// regular file).
pub fn open_nofollow(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;
        OpenOptions::new()
            .read(true)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(path)
    }
}

/// The permission bits of `meta` (`0o7777` of the mode). Windows has only a
/// read-only flag: `0o444` when set, `0o666` otherwise.
pub fn mode(meta: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(windows)]
    {
        if meta.permissions().readonly() {
            0o444
        } else {
            0o666
        }
    }
}

/// Whether a regular file with metadata `meta` may be executed: an execute bit
/// on Unix; Windows decides by extension when it runs it, so any file is.
pub fn is_executable(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        mode(meta) & 0o111 != 0
    }
    #[cfg(windows)]
    {
        let _ = meta;
        true
    }
}

/// Sets the permission bits of `path` to `mode` (Windows: read-only exactly
/// when `mode` grants no write).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(windows)]
    {
        let mut perms = std::fs::metadata(path)?.permissions();
        perms.set_readonly(mode & 0o222 == 0);
        std::fs::set_permissions(path, perms)
    }
}

/// Sets the permission bits of `path` to `mode` unless they already are: a `chmod`
/// changes the inode even when the bits stay the same, a change the file system then
/// records in its journal (on ext4, waiting behind a commit under way), and a server
/// start made one for its state folder every time.
pub fn ensure_mode(path: &Path, want: u32) -> io::Result<()> {
    if mode(&std::fs::metadata(path)?) == want {
        return Ok(());
    }
    set_mode(path, want)
}

/// Makes `opts` create its file with permission bits `mode` (Unix; Windows
/// files inherit their directory's ACL, and `mode` is ignored there).
pub fn create_mode(opts: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(mode)
    }
    #[cfg(windows)]
    {
        let _ = mode;
        opts
    }
}

/// Renames `from` to `to` only if `to` does not exist, atomically
/// (`AlreadyExists` if it does). Linux: `renameat2(RENAME_NOREPLACE)`; macOS:
/// `renamex_np(RENAME_EXCL)`; Windows: `MoveFileExW` without
/// `MOVEFILE_REPLACE_EXISTING`.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            from,
            rustix::fs::CWD,
            to,
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(io::Error::from)
    }
    #[cfg(windows)]
    {
        windows::move_file(from, to, 0)
    }
}

/// Exchanges the entries `a` and `b` (both must exist): afterwards `b` is the
/// file that was `a` and `a` the file that was `b` (each keeps its identity).
///
/// Linux: `renameat2(RENAME_EXCHANGE)`; macOS: `renamex_np(RENAME_SWAP)`: one
/// atomic step. Windows has no atomic exchange: `ReplaceFileW(b, a, backup,
/// REPLACEFILE_WRITE_THROUGH)` puts `a` at `b` and moves the displaced `b` to
/// [`exchange_backup`]`(a)`, then `MoveFileExW(backup, a,
/// MOVEFILE_WRITE_THROUGH)` brings it to `a`. What Windows cannot give is the
/// single step: inside `ReplaceFileW` the name `b` is briefly absent (a reader
/// may miss it, and a crash there leaves `b` absent and the displaced file at
/// the backup name), and a crash between the two calls leaves the displaced
/// file at the backup name instead of `a`. A failure of either call is an
/// error, with the displaced file put back at `b` where `ReplaceFileW` left
/// it at the backup name.
pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            a,
            rustix::fs::CWD,
            b,
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .map_err(io::Error::from)
    }
    #[cfg(windows)]
    {
        windows::exchange(a, b, &exchange_backup(a))
    }
}

/// Where a Windows [`exchange`]`(a, b)` parks the displaced `b` between its two
/// steps: `a`'s name with `.displaced` appended, in `a`'s directory (the same
/// volume). Unused on Unix, whose exchange is one step.
pub fn exchange_backup(a: &Path) -> PathBuf {
    let mut name = a.file_name().unwrap_or_default().to_os_string();
    name.push(".displaced");
    a.with_file_name(name)
}

/// Ends this process at once, as `kill -9` would: no destructor, no flush,
/// no exit handler. The crash tests cut a write at a failpoint with it.
pub fn kill_self() -> ! {
    #[cfg(unix)]
    {
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};
        // SAFETY: the pseudo-handle of this process needs no closing.
        unsafe { TerminateProcess(GetCurrentProcess(), 137) };
    }
    // Unreachable once the kill lands; abort if it did not.
    std::process::abort()
}

#[cfg(windows)]
fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is not supported on Windows yet (docs/platforms.md)"),
    )
}

#[cfg(windows)]
mod windows {
    use std::fs::File;
    use std::io;
    use std::os::windows::ffi::OsStrExt;
    use std::os::windows::io::AsRawHandle;
    use std::path::Path;

    use windows_sys::Win32::Foundation::{
        ERROR_FILE_NOT_FOUND, ERROR_UNABLE_TO_MOVE_REPLACEMENT_2,
    };
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle, MOVE_FILE_FLAGS,
        MOVEFILE_WRITE_THROUGH, MoveFileExW, REPLACEFILE_WRITE_THROUGH, ReplaceFileW,
    };

    use super::FileId;

    pub(super) fn handle_id(file: &File) -> io::Result<FileId> {
        // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: a valid open handle and a valid out-pointer.
        let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(FileId {
            dev: u64::from(info.dwVolumeSerialNumber),
            ino: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        })
    }

    fn wide(p: &Path) -> Vec<u16> {
        p.as_os_str().encode_wide().chain(Some(0)).collect()
    }

    /// See [`super::exchange`].
    pub(super) fn exchange(a: &Path, b: &Path, backup: &Path) -> io::Result<()> {
        // A backup left by an exchange cut short earlier is not ours to keep
        // under this name: ReplaceFileW would fail on it.
        match std::fs::remove_file(backup) {
            Err(e) if e.raw_os_error() != Some(ERROR_FILE_NOT_FOUND as i32) => return Err(e),
            _ => {}
        }
        let (wa, wb, wbackup) = (wide(a), wide(b), wide(backup));
        // SAFETY: three NUL-terminated wide strings that outlive the call; the
        // two reserved pointers are null.
        let ok = unsafe {
            ReplaceFileW(
                wb.as_ptr(),
                wa.as_ptr(),
                wbackup.as_ptr(),
                REPLACEFILE_WRITE_THROUGH,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if ok == 0 {
            let e = io::Error::last_os_error();
            // `b` was moved to the backup name but `a` could not take its
            // place: put `b` back. (Every other failure leaves both names.)
            if e.raw_os_error() == Some(ERROR_UNABLE_TO_MOVE_REPLACEMENT_2 as i32) {
                move_file(backup, b, MOVEFILE_WRITE_THROUGH)?;
            }
            return Err(e);
        }
        // `a` is `b` now, so its name is free for the displaced file.
        move_file(backup, a, MOVEFILE_WRITE_THROUGH)
    }

    pub(super) fn move_file(from: &Path, to: &Path, flags: MOVE_FILE_FLAGS) -> io::Result<()> {
        let (from, to) = (wide(from), wide(to));
        // SAFETY: two NUL-terminated wide strings that outlive the call.
        if unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), flags) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

    use super::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("godot-mcp-os-fs-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        /// Files `a` and `b` in the scratch dir, holding `a` and `b`.
        fn a_and_b(&self) -> (PathBuf, PathBuf) {
            let (a, b) = (self.0.join("a"), self.0.join("b"));
            fs::write(&a, b"a").unwrap();
            fs::write(&b, b"b").unwrap();
            (a, b)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn file_and_path_identity_agree_and_change_with_the_file() {
        let s = Scratch::new("id");
        let (a, b) = s.a_and_b();
        let f = File::open(&a).unwrap();
        let by_handle = file_id(&f, &f.metadata().unwrap()).unwrap();
        drop(f);
        assert_eq!(by_handle, path_id(&a).unwrap());
        assert_ne!(path_id(&a).unwrap(), path_id(&b).unwrap());
        fs::rename(&b, &a).unwrap();
        assert_ne!(
            path_id(&a).unwrap(),
            by_handle,
            "a replaced file is another file"
        );
    }

    #[test]
    fn rename_noreplace_refuses_an_existing_target_and_changes_nothing() {
        let s = Scratch::new("noreplace");
        let (a, b) = s.a_and_b();
        let c = s.0.join("c");
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&a).unwrap(), b"a");
        assert_eq!(fs::read(&b).unwrap(), b"b");
        rename_noreplace(&a, &c).unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read(&c).unwrap(), b"a");
    }

    /// What the journal's compare-and-swap relies on: each name ends up with
    /// the other's file, identity included, nothing is left at the backup
    /// name, and a second exchange puts everything back.
    #[test]
    fn exchange_swaps_two_entries_with_their_identities() {
        let s = Scratch::new("exchange");
        let (a, b) = s.a_and_b();
        let (id_a, id_b) = (path_id(&a).unwrap(), path_id(&b).unwrap());
        exchange(&a, &b).unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"b");
        assert_eq!(fs::read(&b).unwrap(), b"a");
        assert_eq!(path_id(&a).unwrap(), id_b);
        assert_eq!(path_id(&b).unwrap(), id_a);
        assert!(!exchange_backup(&a).exists());
        exchange(&a, &b).unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"a");
        assert_eq!(fs::read(&b).unwrap(), b"b");
        assert_eq!(path_id(&b).unwrap(), id_b);
    }

    #[test]
    fn exchange_with_a_missing_entry_fails_and_changes_nothing() {
        let s = Scratch::new("exchange-missing");
        let (a, _) = s.a_and_b();
        let missing = s.0.join("missing");
        assert!(exchange(&a, &missing).is_err());
        assert!(exchange(&missing, &a).is_err());
        assert_eq!(fs::read(&a).unwrap(), b"a");
        assert!(!missing.exists());
        assert!(!exchange_backup(&a).exists() && !exchange_backup(&missing).exists());
    }

    #[test]
    fn the_exchange_backup_is_a_sibling_of_its_entry() {
        let a = Path::new("dir").join(".gmcp-1.tmp");
        assert_eq!(
            exchange_backup(&a),
            Path::new("dir").join(".gmcp-1.tmp.displaced")
        );
    }

    /// Guards `ensure_mode`: no inode change (no `IN_ATTRIB`) when the bits are right,
    /// one when they are not.
    #[cfg(target_os = "linux")]
    #[test]
    fn ensure_mode_changes_the_inode_only_when_the_bits_differ() {
        use rustix::fs::inotify;
        let s = Scratch::new("ensure-mode");
        let d = s.0.join("state");
        fs::create_dir(&d).unwrap();
        set_mode(&d, 0o700).unwrap();
        let fd = inotify::init(inotify::CreateFlags::NONBLOCK).unwrap();
        inotify::add_watch(&fd, &d, inotify::WatchFlags::ATTRIB).unwrap();
        let events = |fd: &rustix::fd::OwnedFd| {
            let mut buf = [std::mem::MaybeUninit::uninit(); 1024];
            let mut reader = inotify::Reader::new(fd, &mut buf);
            let mut n = 0;
            while reader.next().is_ok() {
                n += 1;
            }
            n
        };
        ensure_mode(&d, 0o700).unwrap();
        assert_eq!(events(&fd), 0, "the mode was right: nothing to change");
        set_mode(&d, 0o755).unwrap();
        assert_eq!(events(&fd), 1);
        ensure_mode(&d, 0o700).unwrap();
        assert_eq!(events(&fd), 1, "the mode differed: changed");
        assert_eq!(mode(&fs::metadata(&d).unwrap()), 0o700);
    }

    #[test]
    fn set_mode_then_mode_round_trips_the_write_bit() {
        let s = Scratch::new("mode");
        let a = s.0.join("a");
        fs::write(&a, b"a").unwrap();
        set_mode(&a, 0o444).unwrap();
        assert_eq!(mode(&fs::metadata(&a).unwrap()) & 0o222, 0);
        set_mode(&a, 0o640).unwrap();
        let m = mode(&fs::metadata(&a).unwrap());
        assert_ne!(m & 0o200, 0);
        if cfg!(unix) {
            assert_eq!(m, 0o640);
        }
    }

    #[test]
    fn open_nofollow_does_not_read_through_a_symlink() {
        let s = Scratch::new("nofollow");
        let (a, link) = (s.0.join("a"), s.0.join("link"));
        fs::write(&a, b"secret").unwrap();
        if symlink(&a, &link).is_err() {
            return; // Windows without developer mode may not create links.
        }
        let refused_or_link = match open_nofollow(&link) {
            Err(_) => true,
            Ok(f) => !f.metadata().unwrap().is_file(),
        };
        assert!(refused_or_link);
        assert!(open_nofollow(&a).unwrap().metadata().unwrap().is_file());
    }
}
