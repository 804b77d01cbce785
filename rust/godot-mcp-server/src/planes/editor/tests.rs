//! Bridge faults, against a protocol peer: a test program speaking the add-on's side of
//! the bridge (a real editor cannot be made to lose an answer on demand).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
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
        // A server that never answers fails the test instead of hanging it.
        peer.writer
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let reply = match peer.recv() {
            Some(ServerMessage::HelloReply(r)) => r,
            other => panic!("expected a hello reply, got {other:?}"),
        };
        peer.writer.set_read_timeout(None).unwrap();
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

// Owner-only is a Unix mode; Windows files inherit their folder's ACL.
#[cfg(unix)]
#[test]
fn discovery_file_is_owner_only_fresh_and_removed_on_stop() {
    let dir = project();
    let b = Bridge::start(dir.path()).unwrap();
    let path = dir.path().join(".godot/godot_mcp/bridge.json");
    assert_eq!(b.discovery_path(), path);
    let mode = godot_mcp_os::fs::mode(&std::fs::metadata(&path).unwrap()) & 0o777;
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

/// Guards the stdio start's bridge: `begin` publishes the discovery file and accepts
/// nothing (no thread), an add-on that connects then waits in the listen queue, and
/// `accept` on the server's runtime answers its hello.
#[test]
fn a_bridge_begun_accepts_only_once_its_runtime_does() {
    let dir = project();
    let b = Bridge::begin(dir.path()).unwrap();
    let d = discovery(&b);
    assert_eq!(d.server_pid, std::process::id());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Connected and hello sent before anything accepts: answered once the runtime runs.
    let early =
        std::thread::spawn(move || PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION));
    runtime.block_on(async {
        tokio::spawn(b.accept());
        let (peer, reply) = tokio::task::spawn_blocking(move || early.join().unwrap())
            .await
            .unwrap();
        assert!(matches!(reply, HelloReply::Accepted { .. }), "{reply:?}");
        // Checked with the peer still open: the connection is in place before
        // "accepted" is sent, but closing the peer ends it, which raced this check
        // when it came after.
        assert!(
            matches!(b.status(), Status::Connected(_)),
            "{:?}",
            b.status()
        );
        drop(peer);
    });
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
    let client = BridgeClient::start(
        dir.path().to_path_buf(),
        "0.1.0".into(),
        godot,
        Default::default(),
    )
    .unwrap();
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

// ---------------------------------------------------------------------------------
// Editor transactions through the tools, against a protocol peer
// ---------------------------------------------------------------------------------

mod transactions {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use godot_mcp_journal::{EditorLeft, FileState, TxnId, TxnStatus, WriteGate};
    use godot_mcp_protocol::commands as c;
    use godot_mcp_protocol::persistence::{Effect, verdict, verdict_of};
    use godot_mcp_protocol::{BridgeError, ErrorEffect, Outcome};
    use serde_json::{Value, json};

    use super::*;
    use crate::rules::EffectKind;
    use crate::state::AppState;

    const SCENE: &str = "res://main.tscn";
    const RES: &str = "res://stats.tres";
    const RES_BYTES: &[u8] = b"[gd_resource type=\"Resource\" format=3]\n\n[resource]\nhp = 3\n";

    /// A server state with its bridge listening and a project holding `stats.tres` and
    /// `main.tscn`.
    fn server() -> (tempfile::TempDir, Arc<AppState>, Discovery) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("project.godot"), "config_version=5\n").unwrap();
        std::fs::write(dir.path().join("stats.tres"), RES_BYTES).unwrap();
        std::fs::write(dir.path().join("main.tscn"), b"[gd_scene format=3]\n").unwrap();
        // Every toolset: these tests drive scene_files and scene_edit tools.
        let state = Arc::new(AppState::for_tests(dir.path()));
        let bridge = state.editor.start(dir.path()).unwrap();
        let d = discovery(&bridge);
        (dir, state, d)
    }

    /// Guards against (issue 26, item 1): a new server's bridge numbering its
    /// requests from 1 again, so a late reply to an earlier server's request 5
    /// (its row still open) is taken for this server's request 5. The startup
    /// wiring numbers above every id the journal recorded.
    #[test]
    fn a_new_server_numbers_its_requests_above_every_recorded_one() {
        let (_dir, state, _d) = server();
        let earlier = godot_mcp_journal::EditorIntent {
            cmd: "node.set_property".into(),
            request_id: 5,
            may_save_file: false,
            scene: None,
            params_sha256: "00".into(),
            pre_state: None,
            files: Vec::new(),
        };
        state
            .journal
            .lock()
            .begin_editor(&earlier, "editor", "set_node_property")
            .unwrap();
        let bridge = state.editor.bridge().unwrap().clone();
        crate::tools::kit::editor::settle_late_replies(&state, &bridge);
        let id = bridge.allocate_id();
        assert!(id > 5, "request id {id} may name an earlier server's row");
    }

    /// Guards against (issue 41, item 8): a late reply handled on the bridge's reader
    /// thread takes the journal lock; a change commit holds that lock while it waits
    /// for its own reply, which the blocked reader then never reads (the change was
    /// quarantined though the editor applied it). Late replies are settled off the
    /// reader: the commit's reply arrives while the lock is held.
    #[test]
    fn a_late_reply_never_keeps_the_reader_from_a_reply_awaited_under_the_journal_lock() {
        let (_dir, state, d) = server();
        let bridge = state.editor.bridge().unwrap().clone();
        crate::tools::kit::editor::settle_late_replies(&state, &bridge);
        let (mut peer, reply) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION);
        assert!(matches!(reply, HelloReply::Accepted { .. }));
        wait_connected(&bridge);
        // The editor holds the first request back until the second comes, then answers
        // the first (now late) and the second, in that order.
        let editor = std::thread::spawn(move || {
            let mut held = Vec::new();
            while held.len() < 2 {
                match peer.recv() {
                    Some(ServerMessage::Request(r)) => held.push(r),
                    Some(_) => {}
                    None => return,
                }
            }
            for r in held {
                let outcome = Outcome::Ok(json!({"late_or_not": r.id}));
                peer.send(&AddonMessage::Reply(Reply { id: r.id, outcome }));
            }
            while peer.recv().is_some() {}
        });
        let first = bridge.request(c::HISTORY, json!({}), std::time::Duration::from_millis(300));
        assert!(
            matches!(first, Err(RequestFailure::NoAnswer { .. })),
            "{first:?}"
        );
        // As a change's commit does: the journal locked across its editor request.
        let journal = state.journal.lock();
        let second = bridge.request(c::HISTORY, json!({}), std::time::Duration::from_secs(20));
        drop(journal);
        assert!(
            second.is_ok(),
            "the reply awaited under the journal lock was never read: {second:?}"
        );
        state.editor.stop();
        let _ = editor.join();
    }

    /// Guards against (issue 41, item 3a): edits staged on one scene committed onto
    /// another that was opened meanwhile (another session's `open_scene`), with the
    /// journal recording the first one applied. The commit is refused before anything
    /// is recorded; with the scene back, it applies there, and its request names the
    /// scene and its root so the add-on refuses it anywhere else.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_change_staged_on_one_scene_is_never_committed_onto_another() {
        let (_dir, state, d) = server();
        let edited = Arc::new(parking_lot::Mutex::new(SCENE));
        let now = edited.clone();
        let peer = fake_editor(&state, &d, move |r| {
            let scene = *now.lock();
            if r.cmd == c::EDITOR_STATE {
                return Outcome::Ok(json!({"active_scene": scene, "root_id": 41,
                                          "open_scenes": [SCENE, "res://b.tscn"]}));
            }
            if r.params.get("scene").is_some_and(|s| s != scene) {
                return Outcome::Error(
                    BridgeError::new(godot_mcp_protocol::ErrorCode::SceneMismatch, "not edited")
                        .with_effect(ErrorEffect::Unchanged),
                );
            }
            let mut out = serde_json::to_value(verdict(true, scene)).unwrap();
            out["scene"] = json!(scene);
            out["steps"] = json!(1);
            Outcome::Ok(out)
        });
        let rows = || {
            state
                .journal
                .lock()
                .list_transactions(&godot_mcp_journal::TxnFilter::default())
                .unwrap()
                .len()
        };
        let ok = |r: crate::tools::ToolResult| r.unwrap_or_else(|e| panic!("{e:?}"));
        ok(call_in_session(&state, "begin_change", json!({})).await);
        let staged = ok(call_in_session(
            &state,
            "set_node_property",
            json!({"node": "Player", "property": "visible", "value": false}),
        )
        .await);
        assert_eq!(staged["scene"], SCENE, "{staged}");
        let before = rows();
        *edited.lock() = "res://b.tscn";
        let e = call_in_session(&state, "commit_change", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::PreconditionFailed, "{e:?}");
        assert!(
            e.message.contains(SCENE) && e.message.contains("res://b.tscn"),
            "{}",
            e.message
        );
        assert_eq!(rows(), before, "nothing was recorded");
        *edited.lock() = SCENE;
        let done = ok(call_in_session(&state, "commit_change", json!({})).await);
        assert_eq!(done["status"], "committed", "{done}");
        state.editor.stop();
        let seen = peer.join().unwrap();
        let applied: Vec<_> = seen
            .iter()
            .filter(|r| r.cmd == c::STEPS && r.params.get("check_only").is_none())
            .collect();
        assert_eq!(
            applied.len(),
            1,
            "one apply, on the scene it was staged on: {seen:?}"
        );
        assert_eq!(applied[0].params["scene"], SCENE);
        assert_eq!(applied[0].params["root_id"], 41);
    }

    /// The add-on's side: every request is answered by `answer` until the server closes.
    fn fake_editor(
        state: &AppState,
        d: &Discovery,
        answer: impl Fn(&Request) -> Outcome + Send + 'static,
    ) -> std::thread::JoinHandle<Vec<Request>> {
        let (mut peer, reply) = PeerConn::connect(d, &d.token, BRIDGE_PROTOCOL_VERSION);
        assert!(matches!(reply, HelloReply::Accepted { .. }));
        wait_connected(state.editor.bridge().unwrap());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while let Some(ServerMessage::Request(r)) = peer.recv() {
                let outcome = answer(&r);
                seen.push(r.clone());
                peer.send(&AddonMessage::Reply(Reply { id: r.id, outcome }));
            }
            seen
        })
    }

    /// A healthy editor with `main.tscn` open (`active` overrides it), stamping replies
    /// with the persistence rule as the add-on does; `special` answers one command.
    fn editor_answers(
        active: &'static str,
        special: &'static str,
        answer: impl Fn(&Request) -> Outcome + Send + 'static,
    ) -> impl Fn(&Request) -> Outcome + Send + 'static {
        move |r| {
            if r.cmd == special {
                return answer(r);
            }
            let v = |e: Effect| serde_json::to_value(verdict_of(e, active)).unwrap();
            // A node command's reply (and the probe's) names the edited scene, as
            // the add-on's `stamped` does; scene.steps also counts its steps.
            let node_reply = || {
                let mut out = serde_json::to_value(verdict(true, active)).unwrap();
                out["scene"] = json!(active);
                out
            };
            Outcome::Ok(match r.cmd.as_str() {
                c::EDITOR_STATE => json!({"active_scene": active, "open_scenes": [active]}),
                c::NODE_PERSISTENCE => {
                    let mut out = node_reply();
                    out["exists"] = json!(true);
                    out
                }
                c::STEPS => {
                    let mut out = node_reply();
                    out["steps"] = json!(r.params["steps"].as_array().map_or(0, Vec::len));
                    out
                }
                cmd => match c::kind_of(cmd).and_then(c::Kind::scene_effect) {
                    Some(e) => v(e),
                    None => node_reply(),
                },
            })
        }
    }

    /// A call through the whole pipeline, with the built-in tools.
    async fn call(
        state: &Arc<AppState>,
        tool: &str,
        args: serde_json::Value,
    ) -> crate::tools::ToolResult {
        let served = crate::safety::Served::new(state.clone(), crate::tools::builtin_for_tests());
        crate::safety::pipeline::call_detached(&served, tool, args).await
    }

    /// [`call`] in an MCP session (an agent's change is kept per session).
    async fn call_in_session(
        state: &Arc<AppState>,
        tool: &str,
        args: serde_json::Value,
    ) -> crate::tools::ToolResult {
        use crate::safety::{CallContext, CallOutcome, run_call};
        let served = crate::safety::Served::new(state.clone(), crate::tools::builtin_for_tests());
        let def = served.registry.get(tool).unwrap();
        let serde_json::Value::Object(args) = args else {
            panic!("args must be an object")
        };
        let ctx = CallContext::detached().in_session(7);
        match run_call(&served, def, Some(args), &ctx).await {
            CallOutcome::Done(r) => r,
            CallOutcome::InputRequired(_) => panic!("unexpected input-required"),
        }
    }

    /// The editor transaction a failed call's error names.
    fn record_of(
        state: &Arc<AppState>,
        e: &crate::error::ToolError,
    ) -> godot_mcp_journal::EditorRecord {
        state
            .journal
            .lock()
            .editor_record(txn_of(e))
            .unwrap()
            .unwrap()
    }

    fn txn_of(e: &crate::error::ToolError) -> TxnId {
        e.details.as_ref().unwrap()["transaction_id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }

    fn set_hp() -> Value {
        json!({"path": RES, "property": "hp", "value": 4})
    }

    fn failed(effect: Option<ErrorEffect>) -> Outcome {
        let e = BridgeError::new(godot_mcp_protocol::ErrorCode::Failed, "saving failed");
        Outcome::Error(match effect {
            Some(x) => e.with_effect(x),
            None => e,
        })
    }

    /// Guards the compensated path of item 5: the editor reports its rollback and the
    /// file's hash equals the one recorded before the request: `compensated`, with both
    /// states and the report in the proof, and the agent is told nothing changed.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_rolled_back_save_failure_with_the_file_untouched_is_compensated_by_proof() {
        let (dir, state, d) = server();
        let _ed = fake_editor(
            &state,
            &d,
            editor_answers(SCENE, c::RESOURCE_SET_PROPERTY, |_| {
                failed(Some(ErrorEffect::RolledBack))
            }),
        );
        let e = call(&state, "set_resource_property", set_hp())
            .await
            .unwrap_err();
        let details = e.details.as_ref().unwrap();
        assert_eq!(details["status"], "compensated", "{e:?}");
        assert_eq!(details["may_have_applied"], false);
        assert!(
            e.hint
                .as_deref()
                .unwrap()
                .starts_with("Nothing was changed"),
            "{e:?}"
        );
        let rec = record_of(&state, &e);
        assert_eq!(rec.status, TxnStatus::Compensated);
        let before = FileState::of(RES_BYTES);
        assert_eq!(
            rec.intent.pre_state.as_ref(),
            Some(&before),
            "recorded before sending"
        );
        let proof = rec.proof.unwrap();
        assert_eq!(proof.pre_state.as_ref(), Some(&before));
        assert_eq!(proof.post_state.as_ref(), Some(&before));
        assert_eq!(proof.editor_left, Some(EditorLeft::RolledBack));
        assert_eq!(
            std::fs::read(dir.path().join("stats.tres")).unwrap(),
            RES_BYTES
        );
        assert_eq!(state.journal.lock().gate(), &WriteGate::Open);
    }

    /// Guards "an error without a proof is unproven": the file is untouched, but the
    /// reply does not say the editor's change was undone (an old add-on, a panic). It is
    /// quarantined, closes the write gate, and the agent is never told nothing changed.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_save_failure_without_a_rollback_report_is_quarantined() {
        for effect in [None, Some(ErrorEffect::Changed)] {
            let (dir, state, d) = server();
            let _ed = fake_editor(
                &state,
                &d,
                editor_answers(SCENE, c::RESOURCE_SET_PROPERTY, move |_| failed(effect)),
            );
            let e = call(&state, "set_resource_property", set_hp())
                .await
                .unwrap_err();
            let details = e.details.as_ref().unwrap();
            assert_eq!(details["status"], "quarantined", "{effect:?} {e:?}");
            assert_eq!(details["may_have_applied"], true);
            let hint = e.hint.as_deref().unwrap();
            assert!(!hint.contains("Nothing was changed"), "{hint}");
            assert!(hint.contains("not proven"), "{hint}");
            assert!(hint.contains("stats.tres is unchanged"), "{hint}");
            let rec = record_of(&state, &e);
            assert_eq!(rec.status, TxnStatus::Quarantined);
            let proof = rec.proof.unwrap();
            assert_eq!(proof.post_state, Some(FileState::of(RES_BYTES)));
            assert_eq!(
                proof.editor_left,
                Some(effect.map_or(EditorLeft::Unreported, |_| EditorLeft::Changed))
            );
            assert!(matches!(
                state.journal.lock().gate(),
                WriteGate::Closed { .. }
            ));
            assert_eq!(
                std::fs::read(dir.path().join("stats.tres")).unwrap(),
                RES_BYTES
            );
        }
    }

    /// Guards the file half of the proof: the editor says it rolled back, but the file's
    /// bytes changed (a partial save): quarantined, with both hashes recorded.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_save_failure_that_changed_the_file_is_quarantined_with_both_hashes() {
        let (dir, state, d) = server();
        let file = dir.path().join("stats.tres");
        let f2 = file.clone();
        let _ed = fake_editor(
            &state,
            &d,
            editor_answers(SCENE, c::RESOURCE_SET_PROPERTY, move |_| {
                std::fs::write(&f2, b"[gd_resource").unwrap();
                failed(Some(ErrorEffect::RolledBack))
            }),
        );
        let e = call(&state, "set_resource_property", set_hp())
            .await
            .unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["status"], "quarantined");
        assert!(e.hint.as_deref().unwrap().contains("changed from"), "{e:?}");
        let rec = record_of(&state, &e);
        assert_eq!(rec.status, TxnStatus::Quarantined);
        let proof = rec.proof.unwrap();
        assert_eq!(proof.pre_state, Some(FileState::of(RES_BYTES)));
        assert_eq!(proof.post_state, Some(FileState::of(b"[gd_resource")));
        assert_eq!(std::fs::read(&file).unwrap(), b"[gd_resource");
    }

    /// A successful save records the file's pre- and post-state; a refused save_scene of
    /// an unchanged file is compensated; a refused node edit without a report stays
    /// unresolved (never "nothing was changed") and blocks nothing.
    #[tokio::test(flavor = "multi_thread")]
    async fn saves_record_both_states_and_unreported_node_errors_stay_unresolved() {
        let (dir, state, d) = server();
        let f3 = dir.path().join("stats.tres");
        let _ed = fake_editor(&state, &d, move |r| match r.cmd.as_str() {
            c::RESOURCE_SET_PROPERTY => {
                std::fs::write(&f3, b"hp = 4").unwrap();
                Outcome::Ok(serde_json::to_value(verdict_of(Effect::ResourceSave, "")).unwrap())
            }
            c::SCENE_SAVE => Outcome::Error(
                BridgeError::new(godot_mcp_protocol::ErrorCode::Failed, "no")
                    .with_effect(ErrorEffect::Unchanged),
            ),
            c::NODE_SET_PROPERTY => failed(None),
            _ => editor_answers(SCENE, "none", |_| unreachable!())(r),
        });
        let ok = call(&state, "set_resource_property", set_hp())
            .await
            .unwrap();
        let txn: TxnId = ok["transaction_id"].as_str().unwrap().parse().unwrap();
        let rec = state.journal.lock().editor_record(txn).unwrap().unwrap();
        assert_eq!(rec.status, TxnStatus::Committed);
        let proof = rec.proof.unwrap();
        assert_eq!(proof.pre_state, Some(FileState::of(RES_BYTES)));
        assert_eq!(proof.post_state, Some(FileState::of(b"hp = 4")));

        let e = call(&state, "save_scene", json!({"confirm": true}))
            .await
            .unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["status"], "compensated");
        let rec = record_of(&state, &e);
        assert_eq!(
            rec.proof.unwrap().post_state,
            Some(FileState::of(b"[gd_scene format=3]\n"))
        );

        let e = call(
            &state,
            "set_node_property",
            json!({"node": "A", "property": "visible", "value": false}),
        )
        .await
        .unwrap_err();
        assert_eq!(e.details.as_ref().unwrap()["status"], "unresolved", "{e:?}");
        assert!(!e.hint.as_deref().unwrap().contains("Nothing was changed"));
        assert_eq!(state.journal.lock().gate(), &WriteGate::Open);
    }

    /// A save of a scene that has no file is refused before anything is recorded or sent:
    /// there would be no pre-state to prove an error harmless.
    #[tokio::test(flavor = "multi_thread")]
    async fn saving_a_scene_without_a_file_is_refused_before_sending() {
        let (_dir, state, d) = server();
        let ed = fake_editor(&state, &d, editor_answers("", "none", |_| unreachable!()));
        let e = call(&state, "save_scene", json!({"confirm": true}))
            .await
            .unwrap_err();
        assert_eq!(e.required.as_deref(), Some("active_scene"), "{e:?}");
        state.editor.stop();
        let seen = ed.join().unwrap();
        assert!(seen.iter().all(|r| r.cmd != c::SCENE_SAVE));
    }

    /// Guards issue 40's "small lie": close_scene was offered on Godot 4.4 and every
    /// call came back from the add-on refused. Its description says 4.5+, and on a 4.4
    /// editor it is refused before anything is sent (dry run too: the preview is what
    /// the real run would do), naming what 4.4 can do instead.
    #[tokio::test(flavor = "multi_thread")]
    async fn close_scene_on_godot_4_4_is_refused_before_sending() {
        let (_dir, state, d) = server();
        let ed = fake_editor(
            &state,
            &d,
            editor_answers(SCENE, "none", |_| unreachable!()),
        );
        let def = crate::tools::builtin_for_tests();
        let close = def.get("close_scene").unwrap();
        assert!(
            close.meta.description.contains("4.5+"),
            "{}",
            close.meta.description
        );
        for args in [json!({"confirm": true}), json!({"dry_run": true})] {
            let e = call(&state, "close_scene", args).await.unwrap_err();
            assert_eq!(e.required.as_deref(), Some("godot_version"), "{e:?}");
            assert!(
                e.message.contains("4.5") && e.message.contains("4.4.1"),
                "{e:?}"
            );
            let hint = e.hint.as_deref().unwrap();
            assert!(
                hint.contains("reload_scene") && hint.contains("open_scene"),
                "{hint}"
            );
        }
        state.editor.stop();
        let seen = ed.join().unwrap();
        assert!(seen.iter().all(|r| r.cmd != c::SCENE_CLOSE), "{seen:?}");
    }

    /// The arguments of a real run of each editor tool that takes dry_run.
    fn runs() -> Vec<(&'static str, Value)> {
        vec![
            (
                "create_node",
                json!({"parent": ".", "type": "Node2D", "name": "X"}),
            ),
            ("rename_node", json!({"node": "A", "new_name": "B"})),
            ("move_node", json!({"node": "A", "new_parent": "."})),
            ("duplicate_node", json!({"node": "A"})),
            ("delete_node", json!({"node": "A", "confirm": true})),
            (
                "set_node_property",
                json!({"node": "A", "property": "visible", "value": false}),
            ),
            (
                "apply_scene_batch",
                json!({"sets": [{"node": "A", "property": "visible", "value": true}]}),
            ),
            (
                "attach_script",
                json!({"node": "A", "script": "res://a.gd"}),
            ),
            ("detach_script", json!({"node": "A", "confirm": true})),
            (
                "connect_signal",
                json!({"from": "A", "signal": "ready", "to": ".", "method": "m"}),
            ),
            (
                "disconnect_signal",
                json!({"from": "A", "signal": "ready", "to": ".", "method": "m", "confirm": true}),
            ),
            ("set_resource_property", set_hp()),
            ("open_scene", json!({"path": SCENE})),
            (
                "create_scene",
                json!({"path": "res://new.tscn", "root_type": "Node2D", "confirm": true}),
            ),
            ("save_scene", json!({"confirm": true})),
            ("close_scene", json!({"confirm": true})),
            ("reload_scene", json!({"confirm": true})),
            ("editor_undo", json!({})),
            ("editor_redo", json!({})),
            // The scene.steps recipes (tools/recipes/ and the domain tools over it).
            (
                "create_nodes",
                json!({"steps": [{"op": "create", "parent": ".", "type": "Node2D", "name": "X"}]}),
            ),
            (
                "add_physics_body",
                json!({"parent": ".", "name": "B", "body": "static", "dim": "2d", "shape": {"kind": "circle"}}),
            ),
            (
                "add_collision_shape",
                json!({"parent": "A", "dim": "3d", "shape": {"kind": "box", "size": [1, 2, 3]}}),
            ),
            (
                "set_collision_layers",
                json!({"node": "A", "dim": "2d", "layer": [1, 3], "mask": [2]}),
            ),
            (
                "add_raycast",
                json!({"parent": ".", "name": "R", "dim": "2d", "target": [0, 50]}),
            ),
            (
                "add_navigation_region",
                json!({"parent": ".", "name": "N", "dim": "2d", "outline": [[0, 0], [1, 0], [1, 1]]}),
            ),
            (
                "add_navigation_agent",
                json!({"parent": "A", "dim": "3d", "radius": 0.5}),
            ),
            (
                "set_navigation_layers",
                json!({"node": "A", "dim": "2d", "layers": [1]}),
            ),
            ("bake_navigation_mesh", json!({"node": "A"})),
            (
                "add_particles",
                json!({"parent": ".", "name": "P", "dim": "2d", "kind": "gpu", "preset": "fire"}),
            ),
            (
                "set_particles_color_ramp",
                json!({"node": "A", "kind": "cpu", "colors": [[1, 0, 0, 1], [0, 0, 1, 0]]}),
            ),
            (
                "apply_particles_preset",
                json!({"node": "A", "dim": "3d", "kind": "cpu", "preset": "rain"}),
            ),
            (
                "add_mesh_instance",
                json!({"parent": ".", "name": "M", "mesh": "box", "size": [1, 1, 1]}),
            ),
            (
                "add_camera_3d",
                json!({"parent": ".", "name": "C", "fov": 60}),
            ),
            (
                "add_light_3d",
                json!({"parent": ".", "name": "L", "kind": "omni", "range": 5}),
            ),
            ("set_environment", json!({"glow": true})),
            (
                "set_gridmap_cells",
                json!({"node": "A", "cells": [{"coords": [0, 0, 0], "item": 0}]}),
            ),
            (
                "clear_gridmap_cells",
                json!({"node": "A", "coords": [[0, 0, 0]], "confirm": true}),
            ),
            (
                "set_tile_cells",
                json!({"node": "A", "cells": [{"coords": [0, 0], "source": 0}]}),
            ),
            (
                "fill_tile_rect",
                json!({"node": "A", "from": [0, 0], "to": [2, 1], "source": 0}),
            ),
            (
                "clear_tile_cells",
                json!({"node": "A", "coords": [[0, 0]], "confirm": true}),
            ),
            (
                "add_tileset_atlas_source",
                json!({"node": "A", "texture": "res://a.gd", "tile_size": [16, 16]}),
            ),
            (
                "set_tileset_physics_layer",
                json!({"node": "A", "layer": [1], "mask": [2]}),
            ),
            (
                "set_tileset_terrain_set",
                json!({"node": "A", "mode": "sides", "terrains": [{"name": "g", "color": [0, 1, 0, 1]}]}),
            ),
            ("set_tile_collision", json!({"node": "A", "atlas": [0, 0]})),
            (
                "instance_scene",
                json!({"parent": ".", "scene": "res://p.tscn"}),
            ),
            ("add_to_group", json!({"node": "A", "group": "g"})),
            (
                "remove_from_group",
                json!({"node": "A", "group": "g", "confirm": true}),
            ),
            (
                "set_editable_children",
                json!({"node": "A", "editable": true, "confirm": true}),
            ),
            ("save_all_scenes", json!({"confirm": true})),
            (
                "add_animation",
                json!({"player": "A", "name": "w", "length": 1.0}),
            ),
            (
                "remove_animation",
                json!({"player": "A", "animation": "w", "confirm": true}),
            ),
            (
                "set_animation",
                json!({"player": "A", "animation": "w", "length": 2.0}),
            ),
            (
                "add_animation_track",
                json!({"player": "A", "animation": "w", "track_type": "value", "path": "B:visible"}),
            ),
            (
                "remove_animation_track",
                json!({"player": "A", "animation": "w", "track": 0, "confirm": true}),
            ),
            (
                "insert_animation_key",
                json!({"player": "A", "animation": "w", "track": 0, "time": 0.0, "value": true}),
            ),
            (
                "remove_animation_key",
                json!({"player": "A", "animation": "w", "track": 0, "time": 0.0, "confirm": true}),
            ),
            (
                "add_state_machine_state",
                json!({"tree": "A", "name": "Idle", "animation": "idle"}),
            ),
            (
                "connect_state_machine_states",
                json!({"tree": "A", "from": "Start", "to": "Idle"}),
            ),
            (
                "add_blend_tree_node",
                json!({"tree": "A", "name": "Mix", "node_type": "AnimationNodeBlend2"}),
            ),
            (
                "connect_blend_tree_nodes",
                json!({"tree": "A", "to": "output", "port": 0, "from": "Mix"}),
            ),
            (
                "set_theme_item",
                json!({"path": RES, "theme_type": "Button", "kind": "constant", "name": "h_separation", "value": 4}),
            ),
            (
                "set_theme_override",
                json!({"node": "A", "kind": "font_size", "name": "font_size", "value": 20}),
            ),
            (
                "set_anchors_preset",
                json!({"node": "A", "preset": "full_rect"}),
            ),
            (
                "add_container",
                json!({"parent": ".", "type": "VBoxContainer", "name": "V", "separation": 4}),
            ),
            (
                "add_audio_player",
                json!({"parent": ".", "name": "P", "stream": "res://a.wav"}),
            ),
            (
                "assign_shader_material",
                json!({"node": "A", "shader": "res://s.gdshader"}),
            ),
            (
                "set_shader_uniform",
                json!({"node": "A", "name": "tint", "value": 1.0}),
            ),
        ]
    }

    /// Item 14's unit half: for every editor tool that takes dry_run (the list is checked
    /// against the registry), the preview's `persisted`, `reason` and `hint` equal the
    /// real run's (a real run on disk: the preview's persisted is false, its reason the
    /// real one's after "a dry run writes nothing; applied: "), with the editor answering
    /// by the one rule. A verdict computed anywhere but `godot_mcp_protocol::persistence`
    /// (a literal in a tool) makes it fail.
    #[tokio::test(flavor = "multi_thread")]
    async fn every_dry_run_reports_the_real_runs_persistence_verdict() {
        for active in [SCENE, ""] {
            let (_dir, state, d) = server();
            let _ed = fake_editor(
                &state,
                &d,
                editor_answers(active, "none", |_| unreachable!()),
            );
            let registered: BTreeSet<&str> = crate::tools::builtin_for_tests()
                .iter()
                .filter(|t| {
                    t.meta.effect == Some(EffectKind::EditorRuntime) && t.meta.class.takes_dry_run()
                })
                .map(|t| t.meta.name)
                .collect();
            let table = runs();
            let listed: BTreeSet<&str> = table.iter().map(|(n, _)| *n).collect();
            assert_eq!(
                listed, registered,
                "every editor tool with dry_run is compared"
            );
            for (tool, args) in table {
                if active.is_empty() && (tool == "save_scene" || tool == "save_all_scenes") {
                    continue; // refused up front: no file to save to
                }
                if tool == "close_scene" {
                    continue; // the fake editor is Godot 4.4: refused up front (below)
                }
                let mut dry = args.clone();
                dry["dry_run"] = json!(true);
                let preview = call(&state, tool, dry)
                    .await
                    .unwrap_or_else(|e| panic!("{tool} dry run: {e:?}"));
                let real = call(&state, tool, args)
                    .await
                    .unwrap_or_else(|e| panic!("{tool}: {e:?}"));
                assert_eq!(real["applied"], true, "{tool}");
                // A dry run writes nothing: where the real run is on disk, the preview
                // says persisted: false and names the real run's reason.
                let (persisted, reason) = if real["persisted"] == true {
                    (
                        json!(false),
                        json!(format!(
                            "a dry run writes nothing; applied: {}",
                            real["reason"].as_str().unwrap()
                        )),
                    )
                } else {
                    (real["persisted"].clone(), real["reason"].clone())
                };
                assert_eq!(
                    (
                        &preview["persisted"],
                        &preview["reason"],
                        preview.get("hint")
                    ),
                    (&persisted, &reason, real.get("hint")),
                    "{tool} ({active:?}): preview {preview} real {real}"
                );
                assert!(preview["reason"].is_string(), "{tool}: {preview}");
            }
        }
    }

    /// Guards the dock's feed: no publisher before an add-on connects, a status right
    /// after the hello, then one per journal change and none while nothing changed. The
    /// publisher polls its stamp several times with nothing changed before the change is
    /// made: had it sent without comparing stamps, the next frame would be a repeat of the
    /// first, not the new row.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_dock_gets_a_status_after_hello_and_then_only_on_change() {
        use godot_mcp_protocol::{GateState, ServerStatus};
        let (_dir, state, d) = server();
        let (polled_tx, polled) = std::sync::mpsc::channel::<()>();
        let inner = status_feed(&state, builtin_classes());
        let polled_tx = std::sync::Mutex::new(polled_tx);
        let feed = StatusFeed {
            stamp: Box::new(move || {
                let s = (inner.stamp)();
                let _ = polled_tx.lock().unwrap().send(());
                s
            }),
            read: inner.read,
        };
        let bridge = state.editor.bridge().unwrap();
        bridge.publish_status(feed);
        // Nobody to send to yet: no publisher thread (a start spawns none).
        assert!(!bridge.status_publisher_running());
        let (mut peer, reply) = PeerConn::connect(&d, &d.token, BRIDGE_PROTOCOL_VERSION);
        assert!(matches!(reply, HelloReply::Accepted { .. }));
        let status = |peer: &mut PeerConn| -> ServerStatus {
            match peer.recv() {
                Some(ServerMessage::Status(s)) => s,
                other => panic!("expected a status frame, got {other:?}"),
            }
        };
        let first = status(&mut peer);
        assert!(bridge.status_publisher_running());
        assert_eq!(first.write_gate, GateState::Open);
        assert!(first.recent.is_empty(), "{first:?}");
        assert_eq!(first.server_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(
            first.project_root,
            state.project.root().display().to_string()
        );
        // Several polls with nothing changed.
        while polled.try_recv().is_ok() {}
        for _ in 0..3 {
            polled.recv().unwrap();
        }
        let write = {
            let state = state.clone();
            tokio::spawn(async move {
                call(
                    &state,
                    "create_script",
                    json!({"path": "res://a.gdshader", "content": "shader_type canvas_item;\n", "confirm": true}),
                )
                .await
            })
        };
        // The write tells the editor of the new file before answering (issue 40), and
        // its journal row changes the status: both frames come, in either order.
        let (mut next, mut told) = (None, false);
        while next.is_none() || !told {
            match peer.recv() {
                Some(ServerMessage::Status(s)) => next = Some(s),
                Some(ServerMessage::Request(r)) => {
                    assert_eq!(r.cmd, godot_mcp_protocol::commands::FILESYSTEM_UPDATE);
                    assert_eq!(r.params, json!({"paths": ["res://a.gdshader"]}));
                    told = true;
                    let outcome = Outcome::Ok(json!({"updated": ["res://a.gdshader"],
                        "scan_started": false, "scanning": false, "scans_finished": 0}));
                    peer.send(&AddonMessage::Reply(Reply { id: r.id, outcome }));
                }
                other => panic!("expected a status frame or a request, got {other:?}"),
            }
        }
        let created = write.await.unwrap().unwrap();
        let next = next.unwrap();
        assert_eq!(next.recent.len(), 1, "{next:?}");
        let row = &next.recent[0];
        assert_eq!(
            row.transaction_id,
            created["transaction_id"].as_str().unwrap()
        );
        assert_eq!(
            (row.tool.as_str(), row.class.as_str(), row.status.as_str()),
            ("create_script", "destructive", "committed")
        );
        assert_eq!(row.undoable, None);
    }

    /// Guards the add-on's half of the dock's feed: the real socket thread records the
    /// server's version from the hello and hands every status frame to the feed the dock
    /// reads, and the feed's version moves with it.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_addon_client_hands_status_frames_to_the_dock_feed() {
        use godot_mcp_editor_core::client::BridgeClient;
        use godot_mcp_editor_core::dock::{Feed, FeedData, Link};
        use godot_mcp_protocol::GateState;
        let (dir, state, _d) = server();
        let bridge = state.editor.bridge().unwrap();
        bridge.publish_status(status_feed(&state, builtin_classes()));
        let feed = Arc::new(Feed::default());
        let _client = BridgeClient::start(
            dir.path().to_path_buf(),
            "0.1.0".into(),
            "4.4.1.stable.custom_build".parse().unwrap(),
            feed.clone(),
        )
        .unwrap();
        let wait_for = |what: &str, ok: &dyn Fn(&FeedData) -> bool| {
            for _ in 0..1000 {
                let data = feed.get();
                if ok(&data) {
                    return data;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            panic!("the feed never showed {what}: {:?}", feed.get());
        };
        let first = wait_for("a status", &|d| d.status.is_some());
        assert_eq!(
            first.link,
            Link::Connected {
                server_version: env!("CARGO_PKG_VERSION").into()
            }
        );
        assert_eq!(first.status.as_ref().unwrap().write_gate, GateState::Open);
        let seen = feed.version();
        call(
            &state,
            "create_script",
            json!({"path": "res://b.gdshader", "content": "shader_type canvas_item;\n", "confirm": true}),
        )
        .await
        .unwrap();
        let next = wait_for("the new row", &|d| {
            d.status.as_ref().is_some_and(|s| s.recent.len() == 1)
        });
        assert_eq!(next.status.unwrap().recent[0].tool, "create_script");
        assert!(feed.version() > seen);
    }

    /// Guards "a version mismatch says so plainly": an add-on of another version connects
    /// to the real server, and the dock's connection line names both versions.
    #[test]
    fn an_addon_of_another_version_shows_a_version_mismatch() {
        use godot_mcp_editor_core::client::BridgeClient;
        use godot_mcp_editor_core::dock::{DockContext, Feed, Link, ServerBinary, view};
        let (dir, _state, _d) = server();
        let feed = Arc::new(Feed::default());
        let _client = BridgeClient::start(
            dir.path().to_path_buf(),
            "9.9.9".into(),
            "4.4.1.stable.custom_build".parse().unwrap(),
            feed.clone(),
        )
        .unwrap();
        for _ in 0..1000 {
            if matches!(feed.get().link, Link::Connected { .. }) {
                let ctx = DockContext {
                    addon_version: "9.9.9".into(),
                    project_root: dir.path().display().to_string(),
                    server: ServerBinary::find(dir.path()),
                };
                let v = view(&feed.get(), &ctx);
                assert!(v.connection_alarm);
                assert_eq!(
                    v.connection,
                    format!(
                        "Version mismatch: connected to server {}, but this add-on is 9.9.9; \
                         install the add-on and server of one release",
                        env!("CARGO_PKG_VERSION")
                    )
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the add-on never connected: {:?}", feed.get());
    }
}

/// The class of each built-in tool, as `serve` gives the status feed.
fn builtin_classes() -> ClassOf {
    let registry = crate::tools::builtin_for_tests();
    Arc::new(move |tool: &str| registry.get(tool).map(|d| d.meta.class.as_str()))
}
