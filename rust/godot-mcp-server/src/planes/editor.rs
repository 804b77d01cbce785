//! The editor plane: the server side of the bridge to the godot_mcp add-on.
//!
//! The server listens on `127.0.0.1:<ephemeral>` and publishes the endpoint with a fresh
//! random token in the project's discovery file (`.godot/godot_mcp/bridge.json`, mode
//! 0600), removed on a clean shutdown. The add-on connects and sends a hello carrying the
//! token; the server refuses a missing or wrong token, a different protocol version, an
//! unsupported Godot, and any connection whose first bytes look like HTTP (a browser page
//! cannot speak anything else, so no browser `Origin` ever gets in). See
//! docs/editor-bridge.md.
//!
//! Frames are newline-delimited JSON. The server sends [`Request`]s with fresh ids and a
//! timeout; the add-on answers each once. A request whose answer does not come — timeout,
//! connection lost — is never resent: [`RequestFailure::NoAnswer`] says it may have run.
//!
//! Besides requests, the server sends a [`ServerStatus`](godot_mcp_protocol::ServerStatus)
//! frame (write gate, recent journal rows) for the add-on's dock: once right after the
//! hello and again whenever the journal changed ([`Bridge::publish_status`]); nothing is
//! sent while nothing changes.
//!
//! Plain threads and `std::net`, not tokio: planned tools call the bridge from blocking
//! tasks, and the bridge must work the same under the stdio server's current-thread
//! runtime and the HTTP server's multi-thread one.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use godot_mcp_protocol::discovery::{MAX_FRAME_BYTES, MAX_HELLO_BYTES};
use godot_mcp_protocol::{
    AddonMessage, BRIDGE_PROTOCOL_VERSION, BridgeError, DISCOVERY_RELATIVE_PATH, Discovery,
    ErrorCode, HelloReply, Outcome, Request, RequestId, ServerMessage, looks_like_http,
};
use parking_lot::Mutex;
use serde_json::Value;

use crate::rules::BridgeStatus;

mod hello;
mod status;

pub(crate) use hello::{Peer, Rejection};
use hello::{check_hello, random_token, write_discovery};
pub(crate) use status::{ClassOf, StatusFeed, StatusStamp, status_feed};

/// How long a connecting peer has to send its hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the status publisher compares the journal's change stamp with the last one
/// it sent (a mutex and an integer; the journal is read only when the stamp moved).
const STATUS_POLL: Duration = Duration::from_millis(250);

/// The connection state as tools see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// No bridge is running (tests, or a server started without one).
    NotListening,
    Disconnected {
        last_rejection: Option<Rejection>,
    },
    Connected(Peer),
}

/// How a request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestFailure {
    /// Nothing was sent: nobody is connected (or the write failed before any byte left).
    NotSent(String),
    /// Sent, and no answer came: it may have run.
    NoAnswer { timed_out: bool, reason: String },
    /// The editor answered with an error.
    Editor(BridgeError),
}

struct Connection {
    generation: u64,
    writer: TcpStream,
    peer: Peer,
}

struct Pending {
    generation: u64,
    reply: mpsc::Sender<Outcome>,
}

struct Inner {
    token: String,
    conn: Mutex<Option<Connection>>,
    generations: AtomicU64,
    next_id: AtomicU64,
    pending: Mutex<HashMap<RequestId, Pending>>,
    last_rejection: Mutex<Option<Rejection>>,
    shutdown: AtomicBool,
    /// Replies that came after their request gave up, by id (bounded; for diagnostics).
    late: Mutex<Vec<(RequestId, Outcome)>>,
    /// Where each late reply goes to be settled (the server settles the unresolved
    /// transaction): a thread of its own, never the reader, whose handler takes the
    /// journal lock — which a change's commit holds while it waits for its own reply.
    /// Its thread starts with the first late reply (a server that gets none runs none).
    on_late: Mutex<LateSink>,
    /// Called (on a thread of its own) after each accepted hello: the server settles
    /// what it owes the editor (an agent's change whose editor part awaits its undo).
    on_connect: Mutex<Option<ConnectHandler>>,
    /// The status publisher: its feed until the first accepted hello starts its thread
    /// (a server no add-on connects to runs none), then the nudge that wakes it, so the
    /// dock gets its first status right after each hello.
    status: Mutex<Publisher>,
}

/// Where late replies go.
enum LateSink {
    /// Nobody asked for them.
    Off,
    /// Asked for; the settling thread starts with the first one.
    Waiting(LateHandler),
    /// Running: a send hands it a reply.
    Running(mpsc::Sender<(RequestId, Outcome)>),
}

impl LateSink {
    /// Hands `reply` to the settling thread (started now if it is not running).
    fn send(&mut self, id: RequestId, outcome: Outcome) {
        if let Self::Waiting(handler) = self {
            let handler = handler.clone();
            let (tx, rx) = mpsc::channel::<(RequestId, Outcome)>();
            let spawned = std::thread::Builder::new()
                .name("bridge-late-replies".into())
                .spawn(move || {
                    for (id, outcome) in rx {
                        handler(id, &outcome);
                    }
                });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "editor bridge: no thread to settle a late reply");
                return;
            }
            *self = Self::Running(tx);
        }
        if let Self::Running(tx) = self {
            let _ = tx.send((id, outcome));
        }
    }
}

/// Where the status publisher is.
enum Publisher {
    /// Nobody asked for one.
    Off,
    /// Asked for; its thread starts with the first connection.
    Waiting(StatusFeed),
    /// Running: a send wakes it.
    Running(mpsc::Sender<()>),
}

/// What to do with a reply that arrived after its request gave up.
pub(crate) type LateHandler = Arc<dyn Fn(RequestId, &Outcome) + Send + Sync>;

/// What to do once an add-on's hello is accepted.
pub(crate) type ConnectHandler = Arc<dyn Fn() + Send + Sync>;

/// The running bridge.
pub struct Bridge {
    inner: Arc<Inner>,
    addr: SocketAddr,
    discovery_path: PathBuf,
    /// The bound listener until an accept loop takes it.
    listener: Mutex<Option<TcpListener>>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Bridge {
    /// Listen on loopback, publish the discovery file of `project_root` and accept on a
    /// thread of its own.
    pub fn start(project_root: &Path) -> io::Result<Arc<Bridge>> {
        let bridge = Self::begin(project_root)?;
        bridge.accept_on_thread()?;
        Ok(bridge)
    }

    /// Binds the loopback listener and publishes the discovery file of `project_root`,
    /// accepting nothing yet: an add-on that connects waits in the listen queue until
    /// [`Bridge::accept`] runs on the server's runtime (or [`Bridge::accept_on_thread`]).
    /// A stdio start so spawns no thread for the bridge: a thread's creation was the
    /// largest step of a warm start (docs/performance.md).
    pub fn begin(project_root: &Path) -> io::Result<Arc<Bridge>> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(Inner {
            token: random_token()?,
            conn: Mutex::new(None),
            generations: AtomicU64::new(0),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            last_rejection: Mutex::new(None),
            shutdown: AtomicBool::new(false),
            late: Mutex::new(Vec::new()),
            on_late: Mutex::new(LateSink::Off),
            on_connect: Mutex::new(None),
            status: Mutex::new(Publisher::Off),
        });
        let discovery_path = project_root.join(DISCOVERY_RELATIVE_PATH);
        write_discovery(
            &discovery_path,
            &Discovery {
                protocol_version: BRIDGE_PROTOCOL_VERSION,
                endpoint: addr.to_string(),
                token: inner.token.clone(),
                server_pid: std::process::id(),
                server_version: env!("CARGO_PKG_VERSION").into(),
            },
        )?;
        Ok(Arc::new(Bridge {
            inner,
            addr,
            discovery_path,
            listener: Mutex::new(Some(listener)),
        }))
    }

    /// Accepts on a thread of its own (tests, benches and the HTTP transport).
    pub fn accept_on_thread(&self) -> io::Result<()> {
        let Some(listener) = self.listener.lock().take() else {
            return Ok(());
        };
        let inner = self.inner.clone();
        std::thread::Builder::new()
            .name("bridge-accept".into())
            .spawn(move || accept_loop(listener, inner))?;
        Ok(())
    }

    /// Accepts on the calling tokio runtime until the bridge stops (spawn it there); each
    /// accepted connection is served on a thread of its own, as on the accept thread.
    /// Nothing to do if the listener was already taken.
    pub fn accept(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let listener = self.listener.lock().take();
        let inner = self.inner.clone();
        async move {
            let Some(listener) = listener else { return };
            let listener = match listener
                .set_nonblocking(true)
                .and_then(|()| tokio::net::TcpListener::from_std(listener))
            {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!("editor bridge: cannot accept on the runtime: {e}");
                    return;
                }
            };
            loop {
                let accepted = listener.accept().await;
                if inner.shutdown.load(Ordering::SeqCst) {
                    return;
                }
                match accepted.and_then(|(s, _)| s.into_std()) {
                    Ok(stream) => {
                        if stream.set_nonblocking(false).is_ok() {
                            serve_on_thread(stream, &inner);
                        }
                    }
                    // Out of descriptors, say: try again a little later, never spin.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn discovery_path(&self) -> &Path {
        &self.discovery_path
    }

    pub fn status(&self) -> Status {
        match &*self.inner.conn.lock() {
            Some(c) => Status::Connected(c.peer.clone()),
            None => Status::Disconnected {
                last_rejection: self.inner.last_rejection.lock().clone(),
            },
        }
    }

    /// A fresh request id: allocated before the journal intent, so the intent names it.
    pub fn allocate_id(&self) -> RequestId {
        self.inner.next_id.fetch_add(1, Ordering::SeqCst)
    }

    /// Numbers this bridge's requests above `last`, the largest request id the
    /// journal recorded: a request id then names one journal row across
    /// servers, and a late reply settles only the row that sent it.
    pub fn number_above(&self, last: u64) {
        self.inner
            .next_id
            .fetch_max(last.saturating_add(1), Ordering::SeqCst);
    }

    /// Send `cmd` and wait for its answer. Blocking; call it off the async threads.
    pub fn request(
        &self,
        cmd: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RequestFailure> {
        self.request_with_id(self.allocate_id(), cmd, params, timeout)
    }

    /// Like [`Bridge::request`] with an id from [`Bridge::allocate_id`]. The request is
    /// sent at most once.
    pub fn request_with_id(
        &self,
        id: RequestId,
        cmd: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RequestFailure> {
        let frame = ServerMessage::Request(Request {
            id,
            cmd: cmd.into(),
            params,
            timeout_ms: timeout.as_millis() as u64,
        });
        let mut line =
            serde_json::to_vec(&frame).map_err(|e| RequestFailure::NotSent(e.to_string()))?;
        line.push(b'\n');
        let (tx, rx) = mpsc::channel();
        {
            let conn = self.inner.conn.lock();
            let Some(conn) = conn.as_ref() else {
                return Err(RequestFailure::NotSent(
                    "the editor is not connected".into(),
                ));
            };
            self.inner.pending.lock().insert(
                id,
                Pending {
                    generation: conn.generation,
                    reply: tx,
                },
            );
            let mut writer = &conn.writer;
            if let Err(e) = writer.write_all(&line) {
                // Some bytes may have left: from here on it counts as sent.
                self.inner.pending.lock().remove(&id);
                return Err(RequestFailure::NoAnswer {
                    timed_out: false,
                    reason: format!("the connection failed while sending: {e}"),
                });
            }
        }
        match rx.recv_timeout(timeout) {
            Ok(Outcome::Ok(v)) => Ok(v),
            Ok(Outcome::Error(e)) => Err(RequestFailure::Editor(e)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.inner.pending.lock().remove(&id);
                Err(RequestFailure::NoAnswer {
                    timed_out: true,
                    reason: format!("no answer within {} ms", timeout.as_millis()),
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(RequestFailure::NoAnswer {
                timed_out: false,
                reason: "the editor connection was lost before the answer came".into(),
            }),
        }
    }

    /// Call `handler` for every reply that arrives after its request gave up, in
    /// arrival order, on a thread of its own (the reader goes on reading meanwhile).
    pub fn on_late_reply(&self, handler: LateHandler) {
        *self.inner.on_late.lock() = LateSink::Waiting(handler);
    }

    /// Call `handler` after each accepted hello, on a thread of its own (it may send
    /// requests: the connection's reader keeps reading their replies).
    pub fn on_connect(&self, handler: ConnectHandler) {
        *self.inner.on_connect.lock() = Some(handler);
    }

    /// Replies that arrived after their request had given up (newest last).
    pub fn late_replies(&self) -> Vec<(RequestId, Outcome)> {
        self.inner.late.lock().clone()
    }

    /// Send the add-on a [`ServerStatus`](godot_mcp_protocol::ServerStatus) after each
    /// hello and whenever `feed`'s stamp moves, from a thread of its own, until the bridge
    /// stops. Nothing is read or sent while the stamp stays the same. The thread starts with the first accepted hello:
    /// until an add-on connects there is nobody to send to, and a start spawns no thread
    /// for it.
    pub fn publish_status(&self, feed: StatusFeed) {
        let mut status = self.inner.status.lock();
        if matches!(*status, Publisher::Off) {
            *status = Publisher::Waiting(feed);
        }
    }

    /// Whether the status publisher's thread runs (tests: none before the first hello).
    #[cfg(test)]
    pub fn status_publisher_running(&self) -> bool {
        matches!(*self.inner.status.lock(), Publisher::Running(_))
    }

    /// Close the current connection (tests; a server restart does the same).
    pub fn drop_connection(&self) {
        if let Some(c) = self.inner.conn.lock().take() {
            let _ = c.writer.shutdown(Shutdown::Both);
        }
    }

    /// Stop accepting, close the connection and remove the discovery file.
    pub fn stop(&self) {
        if self.inner.shutdown.swap(true, Ordering::SeqCst) {
            return;
        }
        self.drop_connection();
        // Wake the status publisher so it sees the flag and exits.
        if let Publisher::Running(tx) =
            std::mem::replace(&mut *self.inner.status.lock(), Publisher::Off)
        {
            let _ = tx.send(());
        }
        // Remove the file only while it is still ours (a newer server may have replaced it).
        if let Ok(text) = std::fs::read_to_string(&self.discovery_path)
            && let Ok(d) = serde_json::from_str::<Discovery>(&text)
            && d.token == self.inner.token
        {
            let _ = std::fs::remove_file(&self.discovery_path);
        }
        // Wake the accept loop so it sees the flag and exits.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, inner: Arc<Inner>) {
    for stream in listener.incoming() {
        if inner.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        serve_on_thread(stream, &inner);
    }
}

/// Serves an accepted connection on a thread of its own.
fn serve_on_thread(stream: TcpStream, inner: &Arc<Inner>) {
    let inner = inner.clone();
    let _ = std::thread::Builder::new()
        .name("bridge-conn".into())
        .spawn(move || serve_connection(stream, inner));
}

fn send_frame(mut stream: &TcpStream, msg: &ServerMessage) {
    if let Ok(mut line) = serde_json::to_vec(msg) {
        line.push(b'\n');
        let _ = stream.write_all(&line);
    }
}

fn reject(stream: &TcpStream, inner: &Inner, why: Rejection, code: ErrorCode, message: String) {
    tracing::warn!(?why, "editor bridge: refused a connection: {message}");
    *inner.last_rejection.lock() = Some(why);
    send_frame(
        stream,
        &ServerMessage::HelloReply(HelloReply::Rejected {
            error: BridgeError::new(code, message),
        }),
    );
    let _ = stream.shutdown(Shutdown::Both);
}

/// Read one line of at most `max` bytes. `Ok(None)` at end of stream.
fn read_line(reader: &mut BufReader<TcpStream>, max: usize) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let n = reader
        .by_ref()
        .take(max as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        if line.len() > max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "frame too large",
            ));
        }
        return Ok(None); // truncated by EOF
    }
    line.pop();
    Ok(Some(line))
}

fn serve_connection(stream: TcpStream, inner: Arc<Inner>) {
    if inner.shutdown.load(Ordering::SeqCst) {
        return;
    }
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(HELLO_TIMEOUT));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    // The first bytes decide: HTTP (a browser) is refused before anything else.
    let first = match reader.fill_buf() {
        Ok(b) if !b.is_empty() => b.to_vec(),
        _ => return,
    };
    if looks_like_http(&first) {
        tracing::warn!("editor bridge: refused an HTTP request (a browser page?)");
        *inner.last_rejection.lock() = Some(Rejection::Http);
        let mut s = &stream;
        let _ = s
            .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        let _ = stream.shutdown(Shutdown::Both);
        return;
    }
    let hello = match read_line(&mut reader, MAX_HELLO_BYTES) {
        Ok(Some(line)) => serde_json::from_slice::<AddonMessage>(&line).ok(),
        _ => None,
    };
    let hello = match check_hello(hello, &inner.token) {
        Ok(hello) => hello,
        Err((why, code, message)) => return reject(&stream, &inner, why, code, message),
    };
    let Ok(writer) = stream.try_clone() else {
        return;
    };
    let generation = inner.generations.fetch_add(1, Ordering::SeqCst) + 1;
    let peer = Peer {
        godot_version: hello.godot_version,
        addon_version: hello.addon_version,
    };
    tracing::info!(godot = %peer.godot_version, addon = %peer.addon_version, "editor bridge: add-on connected");
    {
        // "Accepted" is sent under the connection's lock and the connection is in place
        // before the lock is let go: a peer that has read "accepted" is reachable by the
        // very next request, and no request can overtake the reply on the wire.
        let mut conn = inner.conn.lock();
        send_frame(
            &stream,
            &ServerMessage::HelloReply(HelloReply::Accepted {
                protocol_version: BRIDGE_PROTOCOL_VERSION,
                server_version: env!("CARGO_PKG_VERSION").into(),
            }),
        );
        if let Some(old) = conn.take() {
            // One editor per project: the newer connection wins; the old one's pending
            // requests are answered "lost" when its reader ends.
            let _ = old.writer.shutdown(Shutdown::Both);
        }
        *conn = Some(Connection {
            generation,
            writer,
            peer,
        });
        *inner.last_rejection.lock() = None;
    }
    nudge_status(&inner);
    if let Some(handler) = inner.on_connect.lock().clone() {
        let _ = std::thread::Builder::new()
            .name("bridge-connected".into())
            .spawn(move || handler());
    }
    let _ = stream.set_read_timeout(None);
    while let Ok(Some(line)) = read_line(&mut reader, MAX_FRAME_BYTES) {
        match serde_json::from_slice::<AddonMessage>(&line) {
            Ok(AddonMessage::Reply(reply)) => {
                let waiting = inner.pending.lock().remove(&reply.id);
                match waiting {
                    Some(p) => {
                        let _ = p.reply.send(reply.outcome);
                    }
                    None => {
                        tracing::warn!(
                            id = reply.id,
                            "editor bridge: a reply came after its request gave up"
                        );
                        inner.on_late.lock().send(reply.id, reply.outcome.clone());
                        let mut late = inner.late.lock();
                        if late.len() >= 64 {
                            late.remove(0);
                        }
                        late.push((reply.id, reply.outcome));
                    }
                }
            }
            Ok(AddonMessage::Hello(_)) | Err(_) => {
                tracing::warn!("editor bridge: ignored a malformed frame from the add-on");
            }
        }
    }
    // The connection ended: it is no longer current, and every request sent on it loses
    // its answer (dropping the senders wakes the waiters).
    {
        let mut conn = inner.conn.lock();
        if conn.as_ref().is_some_and(|c| c.generation == generation) {
            *conn = None;
        }
    }
    inner
        .pending
        .lock()
        .retain(|_, p| p.generation != generation);
    tracing::info!("editor bridge: add-on disconnected");
}

/// Wakes the status publisher after a hello, starting its thread at the first one.
fn nudge_status(inner: &Arc<Inner>) {
    let mut status = inner.status.lock();
    *status = match std::mem::replace(&mut *status, Publisher::Off) {
        Publisher::Waiting(feed) => {
            let (tx, rx) = mpsc::channel();
            let publisher = inner.clone();
            match std::thread::Builder::new()
                .name("bridge-status".into())
                .spawn(move || status_loop(&publisher, &feed, &rx))
            {
                Ok(_) => Publisher::Running(tx),
                Err(e) => {
                    tracing::warn!("editor bridge: the dock's status feed did not start: {e}");
                    Publisher::Off
                }
            }
        }
        other => other,
    };
    if let Publisher::Running(tx) = &*status {
        let _ = tx.send(());
    }
}

fn status_loop(inner: &Inner, feed: &StatusFeed, nudge: &mpsc::Receiver<()>) {
    // (connection generation, stamp) of the last status sent.
    let mut sent: Option<(u64, StatusStamp)> = None;
    loop {
        match nudge.recv_timeout(STATUS_POLL) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        if inner.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let Some(generation) = inner.conn.lock().as_ref().map(|c| c.generation) else {
            continue;
        };
        let Some(stamp) = (feed.stamp)() else {
            continue;
        };
        if sent == Some((generation, stamp)) {
            continue;
        }
        let Some(status) = (feed.read)() else {
            continue;
        };
        let Ok(mut line) = serde_json::to_vec(&ServerMessage::Status(status)) else {
            continue;
        };
        line.push(b'\n');
        // Under the connection lock, like a request: frames never interleave.
        let conn = inner.conn.lock();
        if let Some(c) = conn.as_ref()
            && c.generation == generation
        {
            let mut w = &c.writer;
            if w.write_all(&line).is_ok() {
                sent = Some((generation, stamp));
            }
        }
    }
}

/// The editor plane of a server: the bridge, once started.
#[derive(Debug, Default)]
pub struct EditorPlane {
    bridge: OnceLock<Arc<Bridge>>,
}

impl EditorPlane {
    /// Start the bridge for `project_root` (once).
    pub fn start(&self, project_root: &Path) -> io::Result<Arc<Bridge>> {
        if let Some(b) = self.bridge.get() {
            return Ok(b.clone());
        }
        let b = Bridge::start(project_root)?;
        let _ = self.bridge.set(b.clone());
        Ok(b)
    }

    /// Use a bridge started earlier (serve starts it before the state exists).
    pub fn install(&self, bridge: Arc<Bridge>) {
        let _ = self.bridge.set(bridge);
    }

    pub fn bridge(&self) -> Option<&Arc<Bridge>> {
        self.bridge.get()
    }

    pub fn status(&self) -> Status {
        self.bridge
            .get()
            .map_or(Status::NotListening, |b| b.status())
    }

    /// Remove the discovery file and close the socket (clean shutdown).
    pub fn stop(&self) {
        if let Some(b) = self.bridge.get() {
            b.stop();
        }
    }
}

#[cfg(test)]
mod tests;

impl EditorPlane {
    /// The bridge's status as the safety rules read it.
    pub fn bridge_status(&self) -> BridgeStatus {
        use self::{Rejection, Status};
        match self.status() {
            Status::Connected(peer) => BridgeStatus::Connected {
                godot_version: peer.godot_version.to_string(),
            },
            Status::Disconnected {
                last_rejection:
                    Some(Rejection::ProtocolMismatch {
                        addon,
                        addon_version,
                    }),
            } => BridgeStatus::AddonMismatch {
                found: format!("add-on {addon_version} (bridge protocol {addon})"),
            },
            Status::Disconnected {
                last_rejection: Some(Rejection::UnsupportedGodot(v)),
            } => BridgeStatus::GodotUnsupported {
                found: v.to_string(),
            },
            Status::Disconnected { .. } | Status::NotListening => BridgeStatus::Disconnected,
        }
    }
}
