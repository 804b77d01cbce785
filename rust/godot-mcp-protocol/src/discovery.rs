//! The discovery file: how the add-on finds the server of its project, and the framing
//! rules both sides apply to the first bytes of a connection.
//!
//! The server writes `<project>/.godot/godot_mcp/bridge.json` (mode 0600, atomically) when
//! it starts listening and removes it on a clean shutdown. `.godot/` is Godot's own cache
//! folder, ignored by VCS, so the token never lands in a repository.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The discovery file, relative to the project root.
pub const DISCOVERY_RELATIVE_PATH: &str = ".godot/godot_mcp/bridge.json";

/// Largest frame either side accepts, in bytes (one JSON object plus its newline).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Largest hello frame the server reads before authenticating the peer.
pub const MAX_HELLO_BYTES: usize = 4096;

/// What the server publishes for the add-on.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    /// The bridge protocol the server speaks.
    pub protocol_version: u32,
    /// Always `127.0.0.1:<port>`; the add-on refuses any non-loopback endpoint.
    pub endpoint: String,
    /// A fresh random token per server start (hex, 256 bits); the hello must carry it.
    pub token: String,
    /// The server's process id: a new pid (or token) means a restarted server.
    pub server_pid: u32,
    /// The `godot-mcp` version.
    pub server_version: String,
}

/// Keeps the token out of logs.
impl fmt::Debug for Discovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Discovery")
            .field("protocol_version", &self.protocol_version)
            .field("endpoint", &self.endpoint)
            .field("token", &"<redacted>")
            .field("server_pid", &self.server_pid)
            .field("server_version", &self.server_version)
            .finish()
    }
}

impl Discovery {
    /// Whether the endpoint is a loopback socket address; the add-on connects to nothing else.
    pub fn endpoint_is_loopback(&self) -> bool {
        self.endpoint
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback())
    }
}

/// Whether the first bytes of a connection look like an HTTP request (a browser's
/// `fetch` or WebSocket upgrade, a DNS-rebinding page…). The bridge speaks
/// newline-delimited JSON whose first byte is `{`; anything that starts with an HTTP
/// method, or carries an `Origin:` header, is refused before any token check.
pub fn looks_like_http(first_bytes: &[u8]) -> bool {
    const METHODS: [&[u8]; 9] = [
        b"GET ",
        b"POST ",
        b"PUT ",
        b"HEAD ",
        b"OPTIONS ",
        b"DELETE ",
        b"PATCH ",
        b"CONNECT ",
        b"TRACE ",
    ];
    let trimmed = first_bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &first_bytes[i..]);
    if METHODS
        .iter()
        .any(|m| trimmed.len() >= m.len() && trimmed[..m.len()].eq_ignore_ascii_case(m))
    {
        return true;
    }
    let lower = String::from_utf8_lossy(first_bytes).to_ascii_lowercase();
    lower.contains("http/1.") || lower.contains("\norigin:") || lower.contains("\r\norigin:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_requests_look_like_http() {
        for first in [
            &b"GET /bridge HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n"[..],
            b"POST / HTTP/1.1\r\n",
            b"options * HTTP/1.1\r\n",
            b"  GET / HTTP/1.0\r\n",
            b"{\"x\":1}\r\nOrigin: http://a\r\n",
        ] {
            assert!(looks_like_http(first), "{}", String::from_utf8_lossy(first));
        }
        assert!(!looks_like_http(
            b"{\"type\":\"hello\",\"token\":\"GET \"}\n"
        ));
    }

    #[test]
    fn only_loopback_endpoints_are_accepted() {
        let mut d = Discovery {
            protocol_version: 1,
            endpoint: "127.0.0.1:4000".into(),
            token: "t".into(),
            server_pid: 1,
            server_version: "0".into(),
        };
        assert!(d.endpoint_is_loopback());
        assert!(!format!("{d:?}").contains("\"t\""));
        d.endpoint = "10.0.0.1:4000".into();
        assert!(!d.endpoint_is_loopback());
        d.endpoint = "nonsense".into();
        assert!(!d.endpoint_is_loopback());
    }
}
