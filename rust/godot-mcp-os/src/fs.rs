//! Unix: file-system durability that differs per OS.

use std::io;

/// Makes every rename, unlink and write already done on the file system
/// holding `dir` durable, in one call rather than one per file.
///
/// Linux: `syncfs`. macOS has no `syncfs`: `sync` writes out every dirty
/// buffer, then `F_FULLFSYNC` on `dir` asks the drive to flush its own cache
/// (a plain `fsync` there stops at the drive's cache).
pub fn sync_filesystem(dir: &std::fs::File) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::syncfs(dir).map_err(io::Error::from)
    }
    #[cfg(target_os = "macos")]
    {
        rustix::fs::sync();
        rustix::fs::fcntl_fullfsync(dir).map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = dir;
        rustix::fs::sync();
        Ok(())
    }
}
