//! What the process plane does differently per OS, in one place: the control
//! endpoint's transport, the gated child, the boundary's signals and how an exit
//! status names a signal. The plane's logic above it has no `cfg`.
//!
//! Unix (tested): a Unix socket in the session directory, a `/bin/sh` gate in
//! its own process group. Windows (compile-checked only): loopback TCP, whose
//! connection is authenticated by the same session nonce in the hello as on Unix;
//! a launch is refused before anything is spawned, because the Job Object
//! boundary is not wired into the plane yet (docs/platforms.md).

use std::io;
use std::path::Path;

use crate::error::ToolError;

pub use imp::{ReadHalf, WriteHalf, gated_command};

/// A session's listening control endpoint: a Unix socket in the session
/// directory; on Windows a loopback socket, which only loopback peers can reach
/// and whose accept loop drops any peer whose hello lacks the session nonce.
pub struct Listener(imp::Socket);

impl Listener {
    /// The next connection, split.
    pub async fn accept(&self) -> io::Result<(ReadHalf, WriteHalf)> {
        let (stream, _) = self.0.accept().await?;
        Ok(stream.into_split())
    }
}

/// A bound control endpoint.
pub struct Bound {
    /// Accepts the probe's connection.
    pub listener: Listener,
    /// What the probe is given (`--godot-mcp-endpoint=`) and the receipt records.
    pub endpoint: String,
    /// The endpoint's identity the receipt records (the socket's inode; 0 where
    /// the endpoint is not a file).
    pub id: u64,
}

/// Binds the control endpoint of the session whose directory is `session_dir`.
pub fn bind(session_dir: &Path) -> Result<Bound, ToolError> {
    imp::bind(session_dir)
}

/// Sends `kill` (else a polite stop) to every member of process group `pgid`;
/// `false` when the group does not exist or may not be signalled.
pub fn signal_group(pgid: i32, kill: bool) -> bool {
    imp::signal_group(pgid, kill)
}

/// The signal that ended a process, if one did.
pub fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    imp::exit_signal(status)
}

/// Whether this process may write into `dir` (the cgroup delegation check).
pub fn dir_writable(dir: &Path) -> bool {
    imp::dir_writable(dir)
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::path::Path;

    use godot_mcp_journal::launch;
    use godot_mcp_os::group::{self, GroupSignal};

    use super::Bound;
    use crate::error::ToolError;

    pub type Socket = tokio::net::UnixListener;
    pub type ReadHalf = tokio::net::unix::OwnedReadHalf;
    pub type WriteHalf = tokio::net::unix::OwnedWriteHalf;

    /// The longest Unix socket path (sun_path is 108 bytes with its NUL).
    const MAX_SOCKET_PATH: usize = 107;

    pub fn bind(session_dir: &Path) -> Result<Bound, ToolError> {
        use std::os::unix::fs::MetadataExt;
        let endpoint = session_dir.join("c.sock");
        if endpoint.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(ToolError::internal(format!(
                "the control socket path {} is longer than a Unix socket path may be; set \
                 GODOT_MCP_STATE_DIR to a shorter folder",
                endpoint.display()
            )));
        }
        let internal = super::super::internal;
        let listener = tokio::net::UnixListener::bind(&endpoint).map_err(internal)?;
        let id = std::fs::symlink_metadata(&endpoint)
            .map_err(internal)?
            .ino();
        Ok(Bound {
            listener: super::Listener(listener),
            endpoint: endpoint.display().to_string(),
            id,
        })
    }

    /// The gated child: it starts `program args` only after a line on its stdin
    /// (the release), in a process group of its own, with the session nonce in its
    /// environment.
    pub fn gated_command(
        nonce: &str,
        program: &Path,
        args: &[String],
        cwd: &Path,
    ) -> io::Result<tokio::process::Command> {
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("read -r _ || exit 125; exec \"$@\"")
            // The nonce in the gate's name keeps it on the command line of a gated
            // shell whose Godot gets no control arguments (NO_CONTROL_ARGS_PURPOSE).
            .arg(format!("godot-mcp-gate-{nonce}"))
            .arg(program)
            .args(args)
            .current_dir(cwd)
            // Every member of the group inherits this: after the leader is
            // gone, it is how a member is identified as the launch's.
            .env(launch::NONCE_ENV, nonce)
            .process_group(0);
        Ok(cmd)
    }

    pub fn signal_group(pgid: i32, kill: bool) -> bool {
        group::signal(
            pgid,
            if kill {
                GroupSignal::Kill
            } else {
                GroupSignal::Term
            },
        )
    }

    pub fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    }

    pub fn dir_writable(dir: &Path) -> bool {
        rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use std::path::Path;

    use super::Bound;
    use crate::error::ToolError;

    pub type Socket = tokio::net::TcpListener;
    pub type ReadHalf = tokio::net::tcp::OwnedReadHalf;
    pub type WriteHalf = tokio::net::tcp::OwnedWriteHalf;

    pub fn bind(_session_dir: &Path) -> Result<Bound, ToolError> {
        let internal = super::super::internal;
        // std's listener binds synchronously, as the Unix one does.
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(internal)?;
        std_listener.set_nonblocking(true).map_err(internal)?;
        let addr = std_listener.local_addr().map_err(internal)?;
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(internal)?;
        Ok(Bound {
            listener: super::Listener(listener),
            endpoint: format!("tcp:{addr}"),
            id: 0,
        })
    }

    /// `Unsupported`: the Job Object boundary is not wired into the plane yet.
    pub fn gated_command(
        _nonce: &str,
        _program: &Path,
        _args: &[String],
        _cwd: &Path,
    ) -> io::Result<tokio::process::Command> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "launching is not supported on Windows yet: the process plane does not assign the \
             child to a Job Object (docs/platforms.md)",
        ))
    }

    pub fn signal_group(_pgid: i32, _kill: bool) -> bool {
        false
    }

    pub fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
        None
    }

    pub fn dir_writable(_dir: &Path) -> bool {
        false
    }
}
