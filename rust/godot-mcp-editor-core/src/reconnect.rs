//! How the add-on's socket thread finds its server and when it (re)connects.
//!
//! The thread loops: read the discovery file; if it names a loopback endpoint, connect
//! and say hello; on any failure wait and try again. [`Reconnect`] holds the decisions,
//! free of sockets and clocks, so they are tested here:
//!
//! - no discovery file, or an unusable one → wait (polling, backoff up to 2 s);
//! - a connection that was refused or lost → back off (100 ms doubling to 2 s), re-reading
//!   the discovery file every time, because a restarted server has a new port and token;
//! - a discovery file with a different `(server_pid, token)` from the last attempt → a new
//!   server: reset the backoff and connect at once;
//! - a hello the server rejected (bad token, version mismatch) → do not hammer it: wait the
//!   maximum backoff unless the discovery file changes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use godot_mcp_protocol::{DISCOVERY_RELATIVE_PATH, Discovery};

pub const MIN_BACKOFF: Duration = Duration::from_millis(100);
pub const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Where the discovery file of the project at `project_root` is.
pub fn discovery_path(project_root: &Path) -> PathBuf {
    project_root.join(DISCOVERY_RELATIVE_PATH)
}

/// Read and check the discovery file. `None` when it is missing, unreadable, not the
/// expected JSON, or names a non-loopback endpoint.
pub fn read_discovery(path: &Path) -> Option<Discovery> {
    let text = std::fs::read_to_string(path).ok()?;
    let d: Discovery = serde_json::from_str(&text).ok()?;
    d.endpoint_is_loopback().then_some(d)
}

/// What happened on the last attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Connected and accepted, and later the connection ended.
    Disconnected,
    /// The TCP connect failed (no server listening there).
    ConnectFailed,
    /// The server refused the hello.
    Rejected,
}

/// The next step for the socket thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Connect(Discovery),
    Wait(Duration),
}

/// The reconnect state machine.
#[derive(Debug, Default)]
pub struct Reconnect {
    backoff: Option<Duration>,
    /// `(pid, token)` of the server last tried.
    last_server: Option<(u32, String)>,
    rejected: bool,
}

impl Reconnect {
    /// Whether the last server refused the hello (the dock keeps showing why while the
    /// thread waits for the discovery file to change).
    pub fn rejected(&self) -> bool {
        self.rejected
    }

    /// Decide, given what the discovery file says now.
    pub fn next(&mut self, discovery: Option<Discovery>) -> Step {
        let Some(d) = discovery else {
            return Step::Wait(self.grow());
        };
        let id = (d.server_pid, d.token.clone());
        if self.last_server.as_ref() != Some(&id) {
            // A server we have not tried: go now.
            self.last_server = Some(id);
            self.backoff = None;
            self.rejected = false;
            return Step::Connect(d);
        }
        if self.rejected {
            return Step::Wait(MAX_BACKOFF);
        }
        match self.backoff {
            None => {
                self.backoff = Some(MIN_BACKOFF);
                Step::Connect(d)
            }
            Some(_) => Step::Connect(d),
        }
    }

    /// How long to wait before the next attempt after `attempt`.
    pub fn after(&mut self, attempt: Attempt) -> Duration {
        match attempt {
            Attempt::Rejected => {
                self.rejected = true;
                MAX_BACKOFF
            }
            Attempt::Disconnected => {
                self.backoff = None;
                MIN_BACKOFF
            }
            Attempt::ConnectFailed => self.grow(),
        }
    }

    fn grow(&mut self) -> Duration {
        let next = match self.backoff {
            None => MIN_BACKOFF,
            Some(b) => (b * 2).min(MAX_BACKOFF),
        };
        self.backoff = Some(next);
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disc(pid: u32, token: &str, port: u16) -> Discovery {
        Discovery {
            protocol_version: godot_mcp_protocol::BRIDGE_PROTOCOL_VERSION,
            endpoint: format!("127.0.0.1:{port}"),
            token: token.into(),
            server_pid: pid,
            server_version: "0.1.0".into(),
        }
    }

    #[test]
    fn waits_for_a_server_then_connects() {
        let mut r = Reconnect::default();
        assert_eq!(r.next(None), Step::Wait(MIN_BACKOFF));
        assert_eq!(r.next(None), Step::Wait(MIN_BACKOFF * 2));
        assert_eq!(
            r.next(Some(disc(1, "a", 5000))),
            Step::Connect(disc(1, "a", 5000))
        );
    }

    #[test]
    fn reconnects_to_a_restarted_server_at_once() {
        let mut r = Reconnect::default();
        assert!(matches!(r.next(Some(disc(1, "a", 5000))), Step::Connect(_)));
        // The server dies: connects fail and back off.
        assert_eq!(r.after(Attempt::Disconnected), MIN_BACKOFF);
        assert!(matches!(r.next(Some(disc(1, "a", 5000))), Step::Connect(_)));
        assert_eq!(r.after(Attempt::ConnectFailed), MIN_BACKOFF * 2);
        assert_eq!(r.after(Attempt::ConnectFailed), MIN_BACKOFF * 4);
        for _ in 0..10 {
            r.after(Attempt::ConnectFailed);
        }
        assert_eq!(r.after(Attempt::ConnectFailed), MAX_BACKOFF);
        // The server restarts with a new pid, port and token: connect at once, backoff reset.
        assert_eq!(
            r.next(Some(disc(2, "b", 6000))),
            Step::Connect(disc(2, "b", 6000))
        );
        assert_eq!(r.after(Attempt::ConnectFailed), MIN_BACKOFF);
    }

    #[test]
    fn a_rejecting_server_is_not_hammered_until_it_changes() {
        let mut r = Reconnect::default();
        assert!(matches!(r.next(Some(disc(1, "a", 5000))), Step::Connect(_)));
        assert_eq!(r.after(Attempt::Rejected), MAX_BACKOFF);
        assert_eq!(r.next(Some(disc(1, "a", 5000))), Step::Wait(MAX_BACKOFF));
        assert!(matches!(
            r.next(Some(disc(1, "fresh", 5000))),
            Step::Connect(_)
        ));
    }

    #[test]
    fn discovery_file_rules() {
        let dir = tempfile::tempdir().unwrap();
        let path = discovery_path(dir.path());
        assert_eq!(read_discovery(&path), None);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(read_discovery(&path), None);
        std::fs::write(&path, serde_json::to_string(&disc(1, "a", 5000)).unwrap()).unwrap();
        assert_eq!(read_discovery(&path), Some(disc(1, "a", 5000)));
        let mut remote = disc(1, "a", 5000);
        remote.endpoint = "192.168.1.2:5000".into();
        std::fs::write(&path, serde_json::to_string(&remote).unwrap()).unwrap();
        assert_eq!(read_discovery(&path), None, "only loopback endpoints");
    }
}
