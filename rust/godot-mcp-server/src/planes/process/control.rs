//! The control socket of a session: the endpoint of [`super::host`] (a Unix
//! socket in the session directory) that the runtime probe connects to with the
//! session's nonce, then one JSON line per request and per answer, in the typed
//! messages of [`godot_mcp_protocol::probe`].

use std::time::Duration;

use godot_mcp_protocol::probe::{ProbeFrame, ProbeHello, ProbeHelloFrame, ProbeReply, RawReply};
use godot_mcp_protocol::{ProbeRefusal, ProbeRequest};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::host::{Listener, ReadHalf as OwnedReadHalf, WriteHalf as OwnedWriteHalf};
use tokio::sync::watch;

use crate::error::{ErrorCode, ToolError};

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
    hello: watch::Sender<Option<ProbeHello>>,
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
    /// The probe answered, but not in the shape its protocol says (what was wrong).
    Malformed(String),
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
    pub fn hello(&self) -> Option<ProbeHello> {
        self.hello.borrow().clone()
    }

    /// Waits until a probe connected, at most `limit`.
    pub async fn wait_connected(&self, limit: Duration) -> Option<ProbeHello> {
        let mut rx = self.hello.subscribe();
        match tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await {
            Ok(Ok(v)) => v.clone(),
            _ => None,
        }
    }

    /// Sends one request and waits for its answer: the body `T` the request is answered
    /// with, or the probe's refusal. An answer of another shape is
    /// [`ControlError::Malformed`] (the connection stays: the next request may be fine).
    pub async fn request<T: DeserializeOwned>(
        &self,
        request: ProbeRequest,
        limit: Duration,
    ) -> Result<Result<T, ProbeRefusal>, ControlError> {
        let mut guard = self.conn.lock().await;
        let conn = guard.as_mut().ok_or(ControlError::NotConnected)?;
        conn.next_id += 1;
        let id = conn.next_id;
        let frame = ProbeFrame { id, request };
        let line = serde_json::to_string(&frame)
            .map_err(|e| ControlError::Malformed(format!("request {id}: {e}")))?
            + "\n";
        let result = tokio::time::timeout(limit, async {
            conn.wr
                .write_all(line.as_bytes())
                .await
                .map_err(|_| ControlError::Lost)?;
            loop {
                match conn.lines.next_line().await {
                    // Lines for other ids (an answer that came after its request timed
                    // out) are skipped; the one for this id is decoded.
                    Ok(Some(l)) => {
                        let Ok(v) = serde_json::from_str::<Value>(&l) else {
                            continue;
                        };
                        if v.get("id").and_then(Value::as_u64) == Some(id) {
                            return Ok(decode::<T>(v));
                        }
                    }
                    _ => return Err(ControlError::Lost),
                }
            }
        })
        .await;
        match result {
            Ok(Ok(answer)) => answer.map(|r: ProbeReply<T>| r.outcome),
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
        let Ok(ProbeHelloFrame { hello }) = serde_json::from_str::<ProbeHelloFrame>(&line) else {
            tracing::warn!("control socket: a connection that did not say hello was refused");
            continue;
        };
        if hello.nonce != control.nonce {
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
        control.hello.send_replace(Some(hello));
        // Keep the listener so a close() can drop it; one probe per session.
        *control.listener.lock() = Some(listener);
        return;
    }
}

/// One answer line, decoded as the answer `T` of its request.
fn decode<T: DeserializeOwned>(v: Value) -> Result<ProbeReply<T>, ControlError> {
    serde_json::from_value::<RawReply>(v)
        .map_err(|e| e.to_string())
        .and_then(|raw| raw.decode::<T>().map_err(|e| e.0))
        .map_err(|why| ControlError::Malformed(format!("the probe's answer is malformed: {why}")))
}

/// A probe failure as the tool error a caller sees.
pub(crate) fn probe_error(e: ControlError) -> ToolError {
    match e {
        ControlError::NotConnected => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game's runtime probe is not connected.",
        )
        .required("probe_connected")
        .hint(
            "Install the godot_mcp add-on in the project (it ships addons/godot_mcp/probe/probe.gd) \
             and start the game with play_scene.",
        ),
        // Not a server bug: the game did not answer (busy, frozen, or stopped at a
        // breakpoint). The request was delivered, so a command with an effect
        // (evaluate_expression, input) may still run when the game resumes.
        ControlError::Timeout => ToolError::new(
            ErrorCode::Timeout,
            "The game's probe did not answer in time; the request was sent and may still run.",
        )
        .hint(
            "The game may be busy, frozen or stopped at a breakpoint; list_sessions shows whether \
             it runs. Re-read what the request would change before retrying it.",
        )
        .details(json!({"may_have_applied": true})),
        ControlError::Lost => ToolError::new(
            ErrorCode::PreconditionFailed,
            "The game's probe connection was lost (the game ended or crashed).",
        )
        .required("probe_connected"),
        // The probe answered in a shape its protocol does not have (an add-on of
        // another version, or a bug): said as it is, never guessed around.
        ControlError::Malformed(why) => ToolError::internal(why).hint(
            "The game's add-on may be of another godot-mcp version: reinstall the godot_mcp \
             add-on of this server and restart the game.",
        ),
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use godot_mcp_protocol::probe::{HeldReply, ProbeEvent};
    use tokio::io::AsyncBufReadExt;

    /// A probe peer that says hello, then answers each request with the next of
    /// `answers`, returning the request lines it read.
    async fn peer(endpoint: String, answers: Vec<&'static str>) -> Vec<String> {
        let stream = tokio::net::UnixStream::connect(endpoint).await.unwrap();
        let (rd, mut wr) = stream.into_split();
        let hello = r#"{"hello":{"nonce":"n","pid":1,"renderer":false}}"#;
        wr.write_all(format!("{hello}\n").as_bytes()).await.unwrap();
        let mut lines = BufReader::new(rd).lines();
        let mut seen = Vec::new();
        for a in answers {
            seen.push(lines.next_line().await.unwrap().unwrap());
            wr.write_all(format!("{a}\n").as_bytes()).await.unwrap();
        }
        seen
    }

    #[tokio::test]
    async fn a_malformed_answer_is_a_structured_error_and_the_connection_stays() {
        let dir = tempfile::tempdir().unwrap();
        let bound = super::super::host::bind(dir.path()).unwrap();
        let control = std::sync::Arc::new(Control::new(bound.listener, "n".into()));
        tokio::spawn(accept_loop(control.clone()));
        let probe = tokio::spawn(peer(
            bound.endpoint,
            vec![
                // `held` is a string: the wrong type for HeldReply's field.
                r#"{"id":1,"ok":true,"held":"two"}"#,
                r#"{"id":2,"ok":true,"held":2}"#,
            ],
        ));
        let hello = control.wait_connected(Duration::from_secs(10)).await;
        assert_eq!(hello.map(|h| h.pid), Some(1));
        let input = || ProbeRequest::Input {
            event: ProbeEvent::Key { key: "A".into() },
            hold_ms: 0,
            at_frame: None,
            hold_frames: None,
        };
        let limit = Duration::from_secs(10);
        let err = control
            .request::<HeldReply>(input(), limit)
            .await
            .unwrap_err();
        let ControlError::Malformed(why) = &err else {
            panic!("{err:?}");
        };
        assert!(why.contains("invalid type"), "{why}");
        let tool_error = probe_error(err);
        assert_eq!(tool_error.code, crate::error::ErrorCode::Internal);
        // The next request on the same connection is answered and decoded.
        let ok = control.request::<HeldReply>(input(), limit).await.unwrap();
        assert_eq!(ok, Ok(HeldReply { held: 2 }));
        // What the probe read is the typed request in its wire form.
        let seen = probe.await.unwrap();
        let first: Value = serde_json::from_str(&seen[0]).unwrap();
        assert_eq!(
            first,
            serde_json::json!({"id": 1, "cmd": "input", "event": {"type": "key", "key": "A"}, "hold_ms": 0})
        );
    }
}
