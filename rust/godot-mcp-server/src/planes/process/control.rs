//! The control socket of a session: the endpoint of [`super::host`] (a Unix
//! socket in the session directory) that the runtime probe connects to with the
//! session's nonce, then one JSON line per request and per answer.

use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::host::{Listener, ReadHalf as OwnedReadHalf, WriteHalf as OwnedWriteHalf};
use tokio::sync::watch;

struct Conn {
    lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    wr: OwnedWriteHalf,
    next_id: u64,
}

/// The server side of a session's control socket.
pub struct Control {
    listener: Mutex<Option<Listener>>,
    nonce: String,
    conn: tokio::sync::Mutex<Option<Conn>>,
    hello: watch::Sender<Option<Value>>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control").finish_non_exhaustive()
    }
}

/// Why a probe request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlError {
    /// No probe connected (yet, or any more).
    NotConnected,
    /// The probe did not answer in time.
    Timeout,
    /// The connection broke.
    Lost,
}

impl Control {
    pub(crate) fn new(listener: Listener, nonce: String) -> Self {
        Self {
            listener: Mutex::new(Some(listener)),
            nonce,
            conn: tokio::sync::Mutex::new(None),
            hello: watch::channel(None).0,
        }
    }

    /// The probe's hello, once it connected.
    pub fn hello(&self) -> Option<Value> {
        self.hello.borrow().clone()
    }

    /// Waits until a probe connected, at most `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> Option<Value> {
        let mut rx = self.hello.subscribe();
        match tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await {
            Ok(Ok(v)) => v.clone(),
            _ => None,
        }
    }

    /// Sends one request and waits for its answer.
    pub async fn request(&self, mut msg: Value, limit: Duration) -> Result<Value, ControlError> {
        let mut guard = self.conn.lock().await;
        let conn = guard.as_mut().ok_or(ControlError::NotConnected)?;
        conn.next_id += 1;
        let id = conn.next_id;
        msg["id"] = json!(id);
        let line = format!("{msg}\n");
        let result = tokio::time::timeout(limit, async {
            conn.wr
                .write_all(line.as_bytes())
                .await
                .map_err(|_| ControlError::Lost)?;
            loop {
                match conn.lines.next_line().await {
                    Ok(Some(l)) => {
                        if let Ok(v) = serde_json::from_str::<Value>(&l)
                            && v["id"] == json!(id)
                        {
                            return Ok(v);
                        }
                    }
                    _ => return Err(ControlError::Lost),
                }
            }
        })
        .await;
        match result {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                *guard = None;
                Err(e)
            }
            Err(_) => Err(ControlError::Timeout),
        }
    }

    /// Drops the connection and the listener (the probe sees its server gone).
    pub async fn close(&self) {
        self.listener.lock().take();
        self.conn.lock().await.take();
    }
}

/// The accept loop of a session's control socket.
pub(crate) async fn accept_loop(control: std::sync::Arc<Control>) {
    let Some(listener) = control.listener.lock().take() else {
        return;
    };
    for _ in 0..16 {
        let Ok((rd, wr)) = listener.accept().await else {
            return;
        };
        let mut lines = BufReader::new(rd).lines();
        let hello = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
        let Ok(Ok(Some(line))) = hello else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["hello"]["nonce"].as_str() != Some(control.nonce.as_str()) {
            tracing::warn!("control socket: a connection without the session nonce was refused");
            continue;
        }
        *control.conn.lock().await = Some(Conn {
            lines,
            wr,
            next_id: 0,
        });
        // send_replace, not send: send drops the value when no one is waiting right
        // now, and the hello would then never be seen (list_sessions, probe calls).
        control.hello.send_replace(Some(v["hello"].clone()));
        // Keep the listener so a close() can drop it; one probe per session.
        *control.listener.lock() = Some(listener);
        return;
    }
}
