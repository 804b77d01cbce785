//! The add-on's side of the bridge: a background thread that owns the socket (it is pure
//! `std`, so it lives here, free of Godot, and is tested against the real server bridge),
//! and the main-thread half the plugin drains once a frame.
//!
//! The thread finds the discovery file in the project's `.godot/godot_mcp/`, connects to
//! the loopback endpoint it names, says hello with the token, and forwards each request to
//! the main thread through a channel. The main thread writes each reply itself (a plain
//! socket write with a timeout, no Godot object involved), so a reply leaves in the frame
//! that produced it. When the connection ends — server restart, crash — the thread goes
//! back to the discovery file (`godot_mcp_editor_core::reconnect` decides when), and
//! replies to requests of the old connection are dropped: the server already reported
//! them as lost and never resends them.
//!
//! The thread also keeps the dock's [`Feed`] current: the connection state (waiting,
//! connected with the server's version, refused) and the newest status frame.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::dock::{Feed, Link};
use crate::reconnect::{Attempt, Reconnect, Step, discovery_path, read_discovery};
use godot_mcp_protocol::discovery::MAX_FRAME_BYTES;
use godot_mcp_protocol::{
    AddonMessage, BRIDGE_PROTOCOL_VERSION, ErrorCode, GodotVersion, Hello, HelloReply, Reply,
    Request, ServerMessage,
};

/// How often the thread wakes to check its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// A request as the main thread sees it.
pub struct Incoming {
    pub request: Request,
    pub received: Instant,
    /// The connection it came on; a reply for an older one is dropped.
    pub generation: u64,
}

struct Shared {
    stop: AtomicBool,
    /// What the dock shows of the connection.
    feed: Arc<Feed>,
    /// The current connection's writer and generation.
    writer: Mutex<Option<(u64, TcpStream)>>,
    generation: AtomicU64,
}

/// The running client. Dropping it stops and joins the thread and closes the socket.
pub struct BridgeClient {
    shared: Arc<Shared>,
    inbox: Receiver<Incoming>,
    thread: Option<JoinHandle<()>>,
}

impl BridgeClient {
    /// Start the thread; it reports the connection into `feed` (for the dock).
    pub fn start(
        project_root: PathBuf,
        addon_version: String,
        godot_version: GodotVersion,
        feed: Arc<Feed>,
    ) -> std::io::Result<Self> {
        feed.update(|d| {
            d.link = Link::Waiting;
            d.status = None;
        });
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            feed,
            writer: Mutex::new(None),
            generation: AtomicU64::new(0),
        });
        let (tx, inbox) = mpsc::channel();
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("godot-mcp-bridge".into())
            .spawn(move || {
                run(
                    &thread_shared,
                    &tx,
                    &project_root,
                    &addon_version,
                    &godot_version,
                );
            })?;
        Ok(Self {
            shared,
            inbox,
            thread: Some(thread),
        })
    }

    /// Requests waiting for the main thread, oldest first.
    pub fn try_recv(&self) -> Option<Incoming> {
        self.inbox.try_recv().ok()
    }

    /// The next request, waiting up to `wait` for one; the bridge thread's send wakes
    /// the waiter at once (`None` when none came, or the thread is gone).
    pub fn recv_timeout(&self, wait: Duration) -> Option<Incoming> {
        self.inbox.recv_timeout(wait).ok()
    }

    /// Send a reply on the connection the request came from; dropped if that connection
    /// is gone (the server has already reported the answer lost).
    pub fn reply(&self, generation: u64, reply: &Reply) {
        let Ok(mut line) = serde_json::to_vec(&AddonMessage::Reply(reply.clone())) else {
            return;
        };
        line.push(b'\n');
        let mut guard = match self.shared.writer.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((g, stream)) = guard.as_mut()
            && *g == generation
            && stream.write_all(&line).is_err()
        {
            let _ = stream.shutdown(std::net::Shutdown::Both);
            *guard = None;
        }
    }
}

impl Drop for BridgeClient {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Ok(mut g) = self.shared.writer.lock()
            && let Some((_, s)) = g.take()
        {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn sleep_unless_stopped(shared: &Shared, d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until && !shared.stop.load(Ordering::SeqCst) {
        std::thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
    }
}

fn run(
    shared: &Shared,
    tx: &Sender<Incoming>,
    root: &std::path::Path,
    addon_version: &str,
    godot_version: &GodotVersion,
) {
    let path = discovery_path(root);
    let mut reconnect = Reconnect::default();
    while !shared.stop.load(Ordering::SeqCst) {
        let d = match reconnect.next(read_discovery(&path)) {
            Step::Wait(d) => {
                if !reconnect.rejected() {
                    shared.feed.update(|f| {
                        f.link = Link::Waiting;
                        f.status = None;
                    });
                }
                sleep_unless_stopped(shared, d);
                continue;
            }
            Step::Connect(d) => d,
        };
        let attempt = connect_and_serve(
            shared,
            tx,
            &d.endpoint,
            &d.token,
            addon_version,
            godot_version,
        );
        if attempt != Attempt::Rejected {
            shared.feed.update(|f| {
                f.link = Link::Waiting;
                f.status = None;
            });
        }
        let wait = reconnect.after(attempt);
        sleep_unless_stopped(shared, wait);
    }
}

fn connect_and_serve(
    shared: &Shared,
    tx: &Sender<Incoming>,
    endpoint: &str,
    token: &str,
    addon_version: &str,
    godot_version: &GodotVersion,
) -> Attempt {
    let Ok(addr) = endpoint.parse::<SocketAddr>() else {
        return Attempt::ConnectFailed;
    };
    if !addr.ip().is_loopback() {
        return Attempt::ConnectFailed;
    }
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return Attempt::ConnectFailed;
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let hello = AddonMessage::Hello(Hello {
        protocol_version: BRIDGE_PROTOCOL_VERSION,
        addon_version: addon_version.into(),
        godot_version: godot_version.clone(),
        token: token.into(),
    });
    let Ok(mut line) = serde_json::to_vec(&hello) else {
        return Attempt::ConnectFailed;
    };
    line.push(b'\n');
    if stream.write_all(&line).is_err() {
        return Attempt::ConnectFailed;
    }
    let _ = stream.set_read_timeout(Some(POLL));
    let mut frames = FrameReader::default();
    // The hello reply.
    let deadline = Instant::now() + Duration::from_secs(5);
    let accepted = loop {
        if shared.stop.load(Ordering::SeqCst) || Instant::now() > deadline {
            return Attempt::ConnectFailed;
        }
        match frames.next(&mut stream) {
            Ok(Some(frame)) => break serde_json::from_slice::<ServerMessage>(&frame).ok(),
            Ok(None) => continue,
            Err(()) => return Attempt::ConnectFailed,
        }
    };
    match accepted {
        Some(ServerMessage::HelloReply(HelloReply::Accepted { server_version, .. })) => {
            shared.feed.update(|f| {
                f.link = Link::Connected { server_version };
                f.status = None;
            });
        }
        Some(ServerMessage::HelloReply(HelloReply::Rejected { error })) => {
            shared.feed.update(|f| {
                f.link = Link::Refused {
                    code: error.code,
                    message: error.message,
                };
                f.status = None;
            });
            return Attempt::Rejected;
        }
        _ => {
            shared.feed.update(|f| {
                f.link = Link::Refused {
                    code: ErrorCode::Unrecognized,
                    message: "the server's answer to the hello was not understood".into(),
                };
                f.status = None;
            });
            return Attempt::Rejected;
        }
    }
    let generation = shared.generation.fetch_add(1, Ordering::SeqCst) + 1;
    let Ok(writer) = stream.try_clone() else {
        return Attempt::Disconnected;
    };
    if let Ok(mut g) = shared.writer.lock() {
        *g = Some((generation, writer));
    }
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        match frames.next(&mut stream) {
            Ok(Some(frame)) => match serde_json::from_slice::<ServerMessage>(&frame) {
                Ok(ServerMessage::Request(request)) => {
                    if tx
                        .send(Incoming {
                            request,
                            received: Instant::now(),
                            generation,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
                Ok(ServerMessage::Status(status)) => {
                    shared.feed.update(|f| f.status = Some(status));
                }
                Ok(ServerMessage::HelloReply(_)) | Err(_) => {}
            },
            Ok(None) => {}
            Err(()) => break,
        }
    }
    if let Ok(mut g) = shared.writer.lock()
        && g.as_ref().is_some_and(|(g2, _)| *g2 == generation)
    {
        *g = None;
    }
    Attempt::Disconnected
}

/// Splits a byte stream into newline-terminated frames across read timeouts.
#[derive(Default)]
struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// `Ok(Some(frame))`, `Ok(None)` when nothing complete arrived within the poll
    /// interval, `Err` when the connection ended or sent an oversized frame.
    fn next(&mut self, stream: &mut TcpStream) -> Result<Option<Vec<u8>>, ()> {
        if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let mut frame: Vec<u8> = self.buf.drain(..=pos).collect();
            frame.pop();
            return Ok(Some(frame));
        }
        let mut chunk = [0u8; 64 * 1024];
        match stream.read(&mut chunk) {
            Ok(0) => Err(()),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                if self.buf.len() > MAX_FRAME_BYTES {
                    return Err(());
                }
                Ok(None)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(_) => Err(()),
        }
    }
}
