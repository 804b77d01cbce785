//! The probe's connection to its session's control endpoint, per OS (the
//! server's side is `planes/process/host.rs`): a Unix socket path on Unix;
//! `tcp:<loopback address>:<port>` on Windows. Either way the first line sent
//! is the hello with the session nonce, which the server checks.

use std::io;

/// A connected control stream.
#[cfg(unix)]
pub(crate) type Stream = std::os::unix::net::UnixStream;
/// A connected control stream.
#[cfg(windows)]
pub(crate) type Stream = std::net::TcpStream;

/// Connects to `endpoint` as the server passed it (`--godot-mcp-endpoint=`).
pub(crate) fn connect(endpoint: &str) -> io::Result<Stream> {
    #[cfg(unix)]
    {
        Stream::connect(endpoint)
    }
    #[cfg(windows)]
    {
        let addr: std::net::SocketAddr = endpoint
            .strip_prefix("tcp:")
            .and_then(|a| a.parse().ok())
            .filter(|a: &std::net::SocketAddr| a.ip().is_loopback())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("not a loopback control endpoint: {endpoint}"),
                )
            })?;
        Stream::connect(addr)
    }
}
