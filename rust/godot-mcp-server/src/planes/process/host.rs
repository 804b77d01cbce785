//! What the process plane does differently per OS, in one place: the control
//! endpoint's transport, the gated child and its boundary, the boundary's
//! signals and how an exit status names a signal. The plane's logic above it
//! has no `cfg`.
//!
//! Unix (tested here): a Unix socket in the session directory, a `/bin/sh` gate
//! in its own process group, released by a line on its stdin. Windows
//! (compile-checked here, run in the workflow's Windows job): loopback TCP, whose
//! connection is authenticated by the same session nonce in the hello as on
//! Unix; the child is created suspended (`CREATE_SUSPENDED`: it runs no code),
//! put in a new named Job Object (`godot_mcp_journal::launch::job_name`), and
//! resumed only after its receipt is durable. The server holds the job's only
//! handle, and the job kills its processes when that handle closes, so a dead
//! server leaves nothing of the launch running.

use std::io;

use godot_mcp_journal::launch::Boundary;
use godot_mcp_journal::process_table::ProcStat;

use crate::error::ToolError;

pub(crate) use imp::{Held, ReadHalf, WriteHalf};

/// A spawned child held at its gate, already inside its boundary: it runs
/// nothing of the program until [`Gated::release`].
pub(crate) struct Gated {
    /// The gated child.
    pub child: tokio::process::Child,
    gate: imp::Gate,
}

impl Gated {
    /// The boundary the receipt records, given the child's identity.
    pub(crate) fn boundary(&self, stat: &ProcStat) -> Boundary {
        self.gate.boundary(stat)
    }

    /// Releases the child: it runs the program.
    pub(crate) async fn release(&mut self) -> io::Result<()> {
        self.gate.release(&mut self.child).await
    }

    /// The child, and what must live as long as its session (the job's
    /// handle on Windows: closing it kills the job's processes).
    pub(crate) fn into_parts(self) -> (tokio::process::Child, Held) {
        (self.child, self.gate.into_held())
    }
}

/// Spawns `program args` in `cwd`, gated and inside a boundary of its own,
/// with the session nonce in its environment (every process it starts
/// inherits it) and its output going to `stdout` and `stderr`.
pub(crate) use imp::spawn_gated;

/// Whether `procs` can reconcile the boundary this OS's launches use (a
/// launch whose boundary could not be reconciled is refused: no receipt, no
/// release).
pub(crate) use imp::boundary_observable;

/// The boundary this OS's launches use, and why, when it is not the process
/// group (see `boundary_report`).
pub(crate) fn native_boundary() -> Option<(&'static str, &'static str)> {
    imp::NATIVE_BOUNDARY
}

/// A launch step's failure, said as one.
pub(super) fn internal(e: impl std::fmt::Display) -> ToolError {
    ToolError::internal(format!("launch failed: {e}"))
}

/// A session's listening control endpoint: a Unix socket in the session
/// directory; on Windows a loopback socket, which only loopback peers can reach
/// and whose accept loop drops any peer whose hello lacks the session nonce.
pub(crate) struct Listener(imp::Socket);

impl Listener {
    /// The next connection, split.
    pub(crate) async fn accept(&self) -> io::Result<(ReadHalf, WriteHalf)> {
        let (stream, _) = self.0.accept().await?;
        Ok(stream.into_split())
    }
}

/// A bound control endpoint.
pub(crate) struct Bound {
    /// Accepts the probe's connection.
    pub listener: Listener,
    /// What the probe is given (`--godot-mcp-endpoint=`) and the receipt records.
    pub endpoint: String,
    /// The endpoint's identity the receipt records (the socket's inode; 0 where
    /// the endpoint is not a file).
    pub id: u64,
}

/// Binds the control endpoint of the session whose directory is `session_dir`.
pub(crate) use imp::bind;

/// The signal that ended a process, if one did.
pub(crate) use imp::exit_signal;

/// Whether this process may write into `dir` (the cgroup delegation check).
pub(crate) use imp::dir_writable;

#[cfg(unix)]
mod imp {
    use std::io;
    use std::path::Path;

    use std::process::Stdio;

    use godot_mcp_journal::launch::{self, Boundary};
    use godot_mcp_journal::process_table::{ProcStat, ProcessTable};
    use tokio::io::AsyncWriteExt;

    use crate::error::ToolError;
    use crate::planes::process::host::{Bound, Gated, Listener, internal};

    /// Nothing outlives the spawn on Unix: the group is the leader's.
    pub(crate) type Held = ();

    pub(super) const NATIVE_BOUNDARY: Option<(&str, &str)> = None;

    /// The gate is the child's stdin.
    pub(super) struct Gate;

    impl Gate {
        pub(super) fn boundary(&self, stat: &ProcStat) -> Boundary {
            Boundary::ProcessGroup { pgid: stat.pgrp }
        }

        pub(super) async fn release(
            &mut self,
            child: &mut tokio::process::Child,
        ) -> io::Result<()> {
            let mut stdin = child
                .stdin
                .take()
                .ok_or_else(|| io::Error::other("the gate's stdin is gone"))?;
            stdin.write_all(b"go\n").await?;
            stdin.flush().await
        }

        pub(super) fn into_held(self) -> Held {}
    }

    pub(crate) fn boundary_observable(procs: &dyn ProcessTable) -> bool {
        procs.observable()
    }

    pub(crate) fn spawn_gated(
        nonce: &str,
        program: &Path,
        args: &[String],
        cwd: &Path,
        stdout: Stdio,
        stderr: Stdio,
    ) -> io::Result<Gated> {
        let mut cmd = gated_command(nonce, program, args, cwd);
        cmd.stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(stderr)
            .kill_on_drop(false);
        Ok(Gated {
            child: cmd.spawn()?,
            gate: Gate,
        })
    }

    pub(super) type Socket = tokio::net::UnixListener;
    pub(crate) type ReadHalf = tokio::net::unix::OwnedReadHalf;
    pub(crate) type WriteHalf = tokio::net::unix::OwnedWriteHalf;

    /// The longest Unix socket path (sun_path is 108 bytes with its NUL).
    const MAX_SOCKET_PATH: usize = 107;

    pub(crate) fn bind(session_dir: &Path) -> Result<Bound, ToolError> {
        use std::os::unix::fs::MetadataExt;
        let endpoint = session_dir.join("c.sock");
        if endpoint.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(ToolError::internal(format!(
                "the control socket path {} is longer than a Unix socket path may be; set \
                 GODOT_MCP_STATE_DIR to a shorter folder",
                endpoint.display()
            )));
        }
        let listener = tokio::net::UnixListener::bind(&endpoint).map_err(internal)?;
        let id = std::fs::symlink_metadata(&endpoint)
            .map_err(internal)?
            .ino();
        Ok(Bound {
            listener: Listener(listener),
            endpoint: endpoint.display().to_string(),
            id,
        })
    }

    /// The gated child: it starts `program args` only after a line on its stdin
    /// (the release), in a process group of its own, with the session nonce in its
    /// environment.
    fn gated_command(
        nonce: &str,
        program: &Path,
        args: &[String],
        cwd: &Path,
    ) -> tokio::process::Command {
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
        cmd
    }

    pub(crate) fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    }

    pub(crate) fn dir_writable(dir: &Path) -> bool {
        rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use std::path::Path;
    use std::process::Stdio;

    use godot_mcp_journal::launch::{self, Boundary};
    use godot_mcp_journal::process_table::{ProcStat, ProcessTable};
    use godot_mcp_os::job::{self, JobObject};

    use crate::error::ToolError;
    use crate::planes::process::host::{Bound, Gated, Listener, internal};

    /// The job's handle: held for the session's life (the server's, since
    /// sessions are never dropped before it exits), so the job lives while
    /// the server does and kills what is left of the launch when it dies.
    pub(crate) type Held = JobObject;

    pub(crate) const NATIVE_BOUNDARY: Option<(&str, &str)> = Some((
        "job_object",
        "every launch runs in a Job Object of its own, named from its nonce: the child joins \
         it while suspended, its processes cannot leave it, and it is terminated whole",
    ));

    /// The job the suspended child is in.
    pub(crate) struct Gate {
        job: JobObject,
        name: String,
    }

    impl Gate {
        pub(crate) fn boundary(&self, _stat: &ProcStat) -> Boundary {
            Boundary::JobObject {
                name: self.name.clone(),
            }
        }

        pub(crate) async fn release(
            &mut self,
            child: &mut tokio::process::Child,
        ) -> io::Result<()> {
            let pid = child
                .id()
                .ok_or_else(|| io::Error::other("the gated child has exited"))?;
            job::resume(pid)
        }

        pub(crate) fn into_held(self) -> Held {
            self.job
        }
    }

    pub(crate) fn boundary_observable(procs: &dyn ProcessTable) -> bool {
        procs.observes_jobs()
    }

    pub(crate) fn spawn_gated(
        nonce: &str,
        program: &Path,
        args: &[String],
        cwd: &Path,
        stdout: Stdio,
        stderr: Stdio,
    ) -> io::Result<Gated> {
        // The job first: a name taken already is refused (never someone
        // else's job as ours).
        let name = launch::job_name(nonce);
        let job = JobObject::create(Some(&name))?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .env(launch::NONCE_ENV, nonce)
            .creation_flags(job::CREATE_SUSPENDED)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .kill_on_drop(false);
        let mut child = cmd.spawn()?;
        // `child` holds its process open (not waited for): the pid is its.
        let assigned = match child.id() {
            Some(pid) => job.assign_pid(pid),
            None => Err(io::Error::other("the suspended child has exited")),
        };
        if let Err(e) = assigned {
            // Suspended, it ran nothing; it must not run outside a job.
            let _ = child.start_kill();
            return Err(e);
        }
        Ok(Gated {
            child,
            gate: Gate { job, name },
        })
    }

    pub(crate) type Socket = tokio::net::TcpListener;
    pub(crate) type ReadHalf = tokio::net::tcp::OwnedReadHalf;
    pub(crate) type WriteHalf = tokio::net::tcp::OwnedWriteHalf;

    pub(crate) fn bind(_session_dir: &Path) -> Result<Bound, ToolError> {
        // std's listener binds synchronously, as the Unix one does.
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(internal)?;
        std_listener.set_nonblocking(true).map_err(internal)?;
        let addr = std_listener.local_addr().map_err(internal)?;
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(internal)?;
        Ok(Bound {
            listener: Listener(listener),
            endpoint: format!("tcp:{addr}"),
            id: 0,
        })
    }

    pub(crate) fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
        None
    }

    pub(crate) fn dir_writable(_dir: &Path) -> bool {
        false
    }
}
