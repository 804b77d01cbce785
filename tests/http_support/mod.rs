//! Helpers for the HTTP end-to-end tests: start the real `godot-mcp serve --http` on
//! loopback, learn its port from the line it prints on stderr (no sleeps), and speak
//! raw HTTP/1.1 or rmcp's own streamable HTTP client to it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// Every wait in these tests is bounded by this; none is a sleep.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server prints once it is accepting connections.
pub const LISTENING: &str = "godot-mcp serve: listening on http://";

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_godot-mcp"))
}

/// A small Godot project in a temp dir: `project.godot` and one script.
pub fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
    std::fs::write(
        dir.path().join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"HttpFixture\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("scripts/player.gd"),
        "extends Node\n\nfunc _ready():\n\tpass\n",
    )
    .unwrap();
    dir
}

pub const PLAYER_GD: &str = "extends Node\n\nfunc _ready():\n\tpass\n";

/// A running `godot-mcp serve --http`. Killed on drop.
pub struct HttpServer {
    child: Child,
    /// The address it printed (may be 0.0.0.0 when bound to all interfaces).
    pub printed: SocketAddr,
    /// Where tests connect: always 127.0.0.1 at the bound port.
    pub addr: SocketAddr,
    pub token: Option<String>,
    stderr: Arc<Mutex<String>>,
}

impl HttpServer {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("server still running")
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().clone()
    }

    /// A clean stop (SIGTERM), waited for: the server stops its sessions first.
    #[cfg(unix)]
    #[allow(dead_code)]
    pub async fn terminate(&mut self) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).expect("a pid");
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
        let status = self.child.wait().await.expect("the server ends");
        assert_eq!(
            status.code(),
            Some(0),
            "{status:?}
{}",
            self.stderr()
        );
    }

    /// The debug counters (needs `GODOT_MCP_TEST_COUNTERS=1`, which [`start`] sets).
    pub async fn counters(&self) -> Value {
        let mut extra = vec![];
        let auth;
        if let Some(t) = &self.token {
            auth = format!("Authorization: Bearer {t}");
            extra.push(auth.as_str());
        }
        let host = format!("Host: 127.0.0.1:{}", self.port());
        let mut headers = vec![host.as_str()];
        headers.extend(extra);
        let (status, body) =
            raw_request(self.addr, "GET", "/debug/counters", &headers, "", true).await;
        assert_eq!(status, 200, "counters route: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("counters are JSON: {e}: {body}"))
    }
}

/// Start the server on `addr` (e.g. `127.0.0.1:0`) and wait for its listening line.
pub async fn start(project: &Path, addr: &str, token: Option<&str>) -> HttpServer {
    start_with(project, addr, token, &[]).await
}

pub async fn start_with(
    project: &Path,
    addr: &str,
    token: Option<&str>,
    extra_args: &[&str],
) -> HttpServer {
    start_with_env(project, addr, token, extra_args, &[]).await
}

/// [`start_with`], the server's environment also holding `env`.
pub async fn start_with_env(
    project: &Path,
    addr: &str,
    token: Option<&str>,
    extra_args: &[&str],
    env: &[(&str, &str)],
) -> HttpServer {
    let mut cmd = Command::new(bin());
    cmd.envs(env.iter().copied());
    cmd.env("GODOT_MCP_AUTO_EDITOR", "off");
    cmd.arg("serve")
        .arg("--project")
        .arg(project)
        .arg("--http")
        .arg(addr)
        .args(extra_args)
        .env("GODOT_MCP_STATE_DIR", Path::new(project).join(".state"))
        // Every toolset: the tests drive tools outside the default core.
        .env("GODOT_MCP_TOOLSETS", "all")
        .env("GODOT_MCP_TEST_COUNTERS", "1")
        .env_remove("GODOT_MCP_AUTH_TOKEN")
        .env_remove("GODOT_MCP_HTTP")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(t) = token {
        cmd.env("GODOT_MCP_AUTH_TOKEN", t);
    }
    let mut child = cmd.spawn().expect("spawn godot-mcp");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let stderr = Arc::new(Mutex::new(String::new()));
    let printed = tokio::time::timeout(STARTUP_TIMEOUT, async {
        while let Some(line) = lines.next_line().await.expect("read stderr") {
            stderr.lock().push_str(&format!("{line}\n"));
            if let Some(rest) = line.strip_prefix(LISTENING) {
                let addr = rest.strip_suffix("/mcp").expect("line ends in /mcp");
                return addr.parse::<SocketAddr>().expect("printed address parses");
            }
        }
        panic!("server exited before listening; stderr:\n{}", stderr.lock());
    })
    .await
    .expect("server printed its listening line in time");
    // Keep draining stderr so the server never blocks on a full pipe.
    let sink = stderr.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let mut s = sink.lock();
            if s.len() < 1 << 20 {
                s.push_str(&line);
                s.push('\n');
            }
        }
    });
    HttpServer {
        child,
        printed,
        addr: SocketAddr::from(([127, 0, 0, 1], printed.port())),
        token: token.map(str::to_owned),
        stderr,
    }
}

/// Run the server expecting it to refuse to start: its exit code and stderr.
pub async fn start_refused(
    project: &Path,
    addr: &str,
    token: Option<&str>,
) -> (Option<i32>, String) {
    let mut cmd = Command::new(bin());
    cmd.env("GODOT_MCP_AUTO_EDITOR", "off");
    cmd.arg("serve")
        .arg("--project")
        .arg(project)
        .arg("--http")
        .arg(addr)
        .env("GODOT_MCP_STATE_DIR", Path::new(project).join(".state"))
        .env_remove("GODOT_MCP_AUTH_TOKEN")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(t) = token {
        cmd.env("GODOT_MCP_AUTH_TOKEN", t);
    }
    let out = tokio::time::timeout(STARTUP_TIMEOUT, cmd.output())
        .await
        .expect("a refused server exits promptly")
        .expect("run godot-mcp");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Send one raw HTTP/1.1 request (each header line given verbatim, so a test can
/// omit or repeat `Host`) and return the status code and — when `read_body` — the
/// body. Without `read_body` only the head is read: a streaming (SSE) answer is never
/// waited on.
pub async fn raw_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    header_lines: &[&str],
    body: &str,
    read_body: bool,
) -> (u16, String) {
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for h in header_lines {
        request.push_str(h);
        request.push_str("\r\n");
    }
    if !body.is_empty() {
        request.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    request.push_str("Connection: close\r\n\r\n");
    request.push_str(body);
    tokio::time::timeout(IO_TIMEOUT, async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request.as_bytes()).await.expect("send");
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0 || !buf.is_empty(), "connection closed with no answer");
            buf.extend_from_slice(&chunk[..n]);
            if let Some(pos) = find(&buf, b"\r\n\r\n") {
                break pos + 4;
            }
            assert!(
                n > 0,
                "connection closed mid-head: {}",
                String::from_utf8_lossy(&buf)
            );
            assert!(buf.len() < 64 * 1024, "head too large");
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let status: u16 = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {head:?}"));
        let mut body = buf[head_end..].to_vec();
        if read_body {
            stream.read_to_end(&mut body).await.expect("read body");
        }
        (status, String::from_utf8_lossy(&body).into_owned())
    })
    .await
    .expect("answer in time")
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

pub type Client = RunningService<RoleClient, ()>;

fn transport(url: &str, token: Option<&str>) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(t) = token {
        config = config.auth_header(t.to_owned());
    }
    StreamableHttpClientTransport::from_config(config)
}

/// A 2025-11-25 client: `initialize`, then requests in its `Mcp-Session-Id` session.
pub async fn connect_session(server: &HttpServer) -> Client {
    tokio::time::timeout(
        IO_TIMEOUT,
        ().serve(transport(&server.url(), server.token.as_deref())),
    )
    .await
    .expect("handshake in time")
    .expect("MCP initialize over HTTP")
}

/// Like [`connect_session`], with a client handler (to observe notifications).
pub async fn connect_session_with<H: rmcp::ClientHandler>(
    server: &HttpServer,
    handler: H,
) -> RunningService<RoleClient, H> {
    tokio::time::timeout(
        IO_TIMEOUT,
        handler.serve(transport(&server.url(), server.token.as_deref())),
    )
    .await
    .expect("handshake in time")
    .expect("MCP initialize over HTTP")
}

/// A 2026-07-28 client: `server/discover`, then stateless self-contained requests.
pub async fn connect_stateless(server: &HttpServer) -> Client {
    tokio::time::timeout(
        IO_TIMEOUT,
        ().serve_with_lifecycle(
            transport(&server.url(), server.token.as_deref()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await
    .expect("discover in time")
    .expect("MCP server/discover over HTTP")
}

/// Call a tool that must succeed; its structured content.
pub async fn call_ok(client: &Client, name: &str, args: Value) -> Value {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let args: Map<String, Value> = args;
    let r = tokio::time::timeout(
        IO_TIMEOUT,
        client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args)),
    )
    .await
    .expect("tools/call answered in time")
    .unwrap_or_else(|e| panic!("tools/call {name} failed at the protocol level: {e}"));
    assert_ne!(
        r.is_error,
        Some(true),
        "{name} failed: {:?}",
        r.structured_content
    );
    r.structured_content.expect("structured content")
}
