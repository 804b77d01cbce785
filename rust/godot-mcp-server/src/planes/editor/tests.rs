//! Bridge faults, against a protocol peer: a test program speaking the add-on's side of
//! the bridge (a real editor cannot be made to lose an answer on demand).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::sync::mpsc;
use std::time::Duration;

use godot_mcp_protocol::{
    AddonMessage, BRIDGE_PROTOCOL_VERSION, Discovery, ErrorCode, Hello, HelloReply, Reply, Request,
    ServerMessage,
};
use serde_json::json;

use super::*;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "").unwrap();
    dir
}

fn discovery(bridge: &Bridge) -> Discovery {
    serde_json::from_str(&std::fs::read_to_string(bridge.discovery_path()).unwrap()).unwrap()
}

/// The add-on's side of the bridge.
pub(crate) struct PeerConn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl PeerConn {
    pub(crate) fn connect(d: &Discovery, token: &str, protocol: u32) -> (PeerConn, HelloReply) {
        let stream = TcpStream::connect(&d.endpoint).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut peer = PeerConn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        peer.send(&AddonMessage::Hello(Hello {
            protocol_version: protocol,
            addon_version: "0.1.0".into(),
            godot_version: "4.4.1.stable.custom_build".parse().unwrap(),
            token: token.into(),
        }));
        let reply = match peer.recv() {
            Some(ServerMessage::HelloReply(r)) => r,
            other => panic!("expected a hello reply, got {other:?}"),
        };
        (peer, reply)
    }

    pub(crate) fn send(&mut self, msg: &AddonMessage) {
        let mut line = serde_json::to_vec(msg).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).unwrap();
    }

    pub(crate) fn recv(&mut self) -> Option<ServerMessage> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(serde_json::from_str(&line).unwrap()),
        }
    }

    pub(crate) fn recv_request(&mut self) -> Request {
        match self.recv() {
            Some(ServerMessage::Request(r)) => r,
            other => panic!("expected a request, got {other:?}"),
        }
    }
}

/// Wait until the bridge reports a connection (the accept thread installs it).
fn wait_connected(b: &Bridge) {
    for _ in 0..200 {
        if matches!(b.status(), Status::Connected(_)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("never connected: {:?}", b.status());
}

#[test]
fn discovery_file_is_owner_only_fresh_and_removed_on_stop() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let path = dir.path().join(".godot/godot_mcp/bridge.json");
    assert_eq!(b.discovery_path(), path);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let d = discovery(&b);
    assert!(d.endpoint_is_loopback());
    assert_eq!(d.server_pid, std::process::id());
    assert_eq!(d.token.len(), 64);
    b.stop();
    assert!(!path.exists());
    let b2 = Bridge::start(dir.path()).unwrap();
    assert_ne!(discovery(&b2).token, d.token, "a fresh token per start");
}

#[test]
fn missing_or_wrong_token_is_refused() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let d = discovery(&b);
    for token in ["", "0000", &d.token[..63]] {
        let (mut peer, reply) = PeerConn::connect(&d, token, BRIDGE_PROTOCOL_VERSION);
        match reply {
            HelloReply::Rejected { error } => assert_eq!(error.code, ErrorCode::Unauthorized),
            other => panic!("{other:?}"),
        }
        assert!(peer.recv().is_none(), "the server closes after a rejection");
    }
    assert_eq!(
        b.status(),
        Status::Disconnected {
            last_rejection: Some(Rejection::Unauthorized)
        }
    );
    // A frame that is not a hello at all.
    let mut s = TcpStream::connect(&d.endpoint).unwrap();
    s.write_all(b"{\"type\":\"reply\",\"id\":1,\"ok\":null}\n")
        .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.contains("\"rejected\""), "{out}");
}

#[test]
fn a_browser_request_with_an_origin_is_refused() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let d = discovery(&b);
    for request in [
        format!(
            "GET / HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            d.endpoint
        ),
        format!(
            "POST / HTTP/1.1\r\nHost: {}\r\nOrigin: null\r\nContent-Length: 2\r\n\r\n{{}}",
            d.endpoint
        ),
    ] {
        let mut s = TcpStream::connect(&d.endpoint).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    }
    assert_eq!(
        b.status(),
        Status::Disconnected {
            last_rejection: Some(Rejection::Http)
        }
    );
}

#[test]
fn protocol_mismatch_is_refused_and_remembered() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let d = discovery(&b);
    let (_peer, reply) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION + 1);
    assert!(
        matches!(reply, HelloReply::Rejected { error } if error.code == ErrorCode::ProtocolMismatch)
    );
    assert!(matches!(
        b.status(),
        Status::Disconnected {
            last_rejection: Some(Rejection::ProtocolMismatch { .. })
        }
    ));
}

#[test]
fn round_trip_with_ids_and_timeouts() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let d = discovery(&b);
    let (mut peer, reply) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION);
    assert!(matches!(reply, HelloReply::Accepted { .. }));
    wait_connected(&b);
    let editor = std::thread::spawn(move || {
        for _ in 0..2 {
            let r = peer.recv_request();
            let answer = if r.cmd == "ping" {
                Reply::ok(r.id, json!({"pong": r.timeout_ms}))
            } else {
                Reply::error(r.id, ErrorCode::NotFound, "no such node")
            };
            peer.send(&AddonMessage::Reply(answer));
        }
    });
    let v = b
        .request("ping", json!({}), Duration::from_millis(1500))
        .unwrap();
    assert_eq!(v, json!({"pong": 1500}));
    let e = b
        .request("node.delete", json!({"node": "X"}), Duration::from_secs(2))
        .unwrap_err();
    assert!(
        matches!(e, RequestFailure::Editor(ref be) if be.code == ErrorCode::NotFound),
        "{e:?}"
    );
    editor.join().unwrap();
}

#[test]
fn not_connected_means_not_sent() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let e = b
        .request("ping", json!({}), Duration::from_millis(50))
        .unwrap_err();
    assert!(matches!(e, RequestFailure::NotSent(_)), "{e:?}");
}

#[test]
fn a_lost_answer_is_reported_and_never_resent() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let d = discovery(&b);
    let (mut peer, _) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION);
    wait_connected(&b);
    let (seen_tx, seen_rx) = mpsc::channel();
    let editor = std::thread::spawn(move || {
        let r = peer.recv_request();
        seen_tx.send(r.id).unwrap();
        // The editor dies before answering.
        drop(peer);
    });
    let e = b
        .request("scene.save", json!({}), Duration::from_secs(5))
        .unwrap_err();
    assert!(
        matches!(
            e,
            RequestFailure::NoAnswer {
                timed_out: false,
                ..
            }
        ),
        "{e:?}"
    );
    editor.join().unwrap();
    let lost_id = seen_rx.recv().unwrap();
    // The add-on reconnects: the lost request is not sent again; the next frame it sees is
    // the next request, with a new id.
    let (mut peer, _) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION);
    wait_connected(&b);
    let editor = std::thread::spawn(move || {
        let r = peer.recv_request();
        peer.send(&AddonMessage::Reply(Reply::ok(r.id, json!(null))));
        r
    });
    b.request("ping", json!({}), Duration::from_secs(2))
        .unwrap();
    let next = editor.join().unwrap();
    assert_eq!(next.cmd, "ping");
    assert!(next.id > lost_id);
}

#[test]
fn an_answer_slower_than_the_timeout_is_a_timeout_and_arrives_late() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let d = discovery(&b);
    let (mut peer, _) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION);
    wait_connected(&b);
    let editor = std::thread::spawn(move || {
        let r = peer.recv_request();
        std::thread::sleep(Duration::from_millis(300));
        peer.send(&AddonMessage::Reply(Reply::ok(
            r.id,
            json!({"applied": true}),
        )));
        (r.id, peer)
    });
    let e = b
        .request("node.set_property", json!({}), Duration::from_millis(100))
        .unwrap_err();
    assert!(
        matches!(
            e,
            RequestFailure::NoAnswer {
                timed_out: true,
                ..
            }
        ),
        "{e:?}"
    );
    let (id, _peer) = editor.join().unwrap();
    for _ in 0..100 {
        if !b.late_replies().is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(b.late_replies()[0].0, id);
}

#[test]
fn a_restarted_server_is_found_again_through_the_discovery_file() {
    use godot_mcp_editor_core::reconnect::{
        Attempt, Reconnect, Step, discovery_path, read_discovery,
    };
    let dir = project();
    let path = discovery_path(dir.path());
    let mut r = Reconnect::default();
    let b = Bridge::start(dir.path()).unwrap();
    let Step::Connect(d1) = r.next(read_discovery(&path)) else {
        panic!()
    };
    let (_p, reply) = PeerConn::connect(&d1, &d1.token, BRIDGE_PROTOCOL_VERSION);
    assert!(matches!(reply, HelloReply::Accepted { .. }));
    b.stop();
    drop(b);
    r.after(Attempt::Disconnected);
    assert!(
        matches!(r.next(read_discovery(&path)), Step::Wait(_)),
        "no file while no server"
    );
    let b2 = Bridge::start(dir.path()).unwrap();
    let Step::Connect(d2) = r.next(read_discovery(&path)) else {
        panic!()
    };
    assert_ne!(d2.token, d1.token);
    let (_p2, reply) = PeerConn::connect(&d2, &d2.token, BRIDGE_PROTOCOL_VERSION);
    assert!(matches!(reply, HelloReply::Accepted { .. }));
    wait_connected(&b2);
}

/// The add-on's real socket thread (`godot_mcp_editor_core::client`) against the real
/// server bridge: it finds the server through the discovery file, requests cross to the
/// "main thread" (this test) and replies go back; after a server restart (new port, new
/// token) it reconnects by itself; once dropped (plugin disabled) no socket remains.
#[test]
fn the_addon_client_connects_serves_and_reconnects_after_a_server_restart() {
    use godot_mcp_editor_core::client::BridgeClient;
    let dir = project();
    let godot: godot_mcp_protocol::GodotVersion = "4.4.1.stable.custom_build".parse().unwrap();
    let client = BridgeClient::start(dir.path().to_path_buf(), "0.1.0".into(), godot).unwrap();
    // The "main thread": answer whatever arrives, as the plugin's process() does.
    let serve_one = |client: &BridgeClient| {
        for _ in 0..400 {
            if let Some(inc) = client.try_recv() {
                let reply = Reply::ok(inc.request.id, json!({"cmd": inc.request.cmd}));
                client.reply(inc.generation, &reply);
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no request reached the main thread");
    };
    // The server starts after the add-on: the add-on waits for the discovery file.
    std::thread::sleep(Duration::from_millis(300));
    let b = Bridge::start(dir.path()).unwrap();
    wait_connected(&b);
    std::thread::scope(|s| {
        let asked = s.spawn(|| b.request("ping", json!({}), Duration::from_secs(5)));
        serve_one(&client);
        assert_eq!(asked.join().unwrap().unwrap(), json!({"cmd": "ping"}));
    });
    // Restart the server: new port, new token.
    b.stop();
    drop(b);
    let b2 = Bridge::start(dir.path()).unwrap();
    wait_connected(&b2);
    std::thread::scope(|s| {
        let asked = s.spawn(|| b2.request("editor.state", json!({}), Duration::from_secs(5)));
        serve_one(&client);
        assert_eq!(
            asked.join().unwrap().unwrap(),
            json!({"cmd": "editor.state"})
        );
    });
    // Disabled: the client is dropped, the socket closes.
    drop(client);
    for _ in 0..200 {
        if !matches!(b2.status(), Status::Connected(_)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the add-on's socket stayed open after it was stopped");
}
