//! The OS-specific parts, so the rest has no `cfg`: the stand-in is run by the
//! Unix process-plane tests; on Windows it only has to compile (the server
//! refuses launches there, docs/platforms.md).

#[cfg(unix)]
pub(crate) type Stream = tokio::net::UnixStream;
#[cfg(windows)]
pub(crate) type Stream = tokio::net::TcpStream;

/// Connects to the control endpoint (a socket path; Windows: `tcp:<addr>`).
pub(crate) async fn connect(endpoint: &str) -> std::io::Result<Stream> {
    #[cfg(windows)]
    let endpoint = endpoint.strip_prefix("tcp:").unwrap_or(endpoint);
    Stream::connect(endpoint).await
}

/// SIGTERM (Windows: Ctrl-Break, its nearest polite stop).
#[cfg(unix)]
pub(crate) struct Term(tokio::signal::unix::Signal);
#[cfg(windows)]
pub(crate) struct Term(tokio::signal::windows::CtrlBreak);

impl Term {
    pub(crate) fn install() -> Self {
        #[cfg(unix)]
        let s = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
        #[cfg(windows)]
        let s = tokio::signal::windows::ctrl_break();
        Self(s.expect("SIGTERM handler"))
    }

    pub(crate) async fn recv(&mut self) -> Option<()> {
        self.0.recv().await
    }
}
