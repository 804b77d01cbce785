//! Server-side cost of a bridge no-op round trip over loopback, against a protocol peer
//! that answers at once (so the editor's frame wait, ~6.9 ms in a headless editor, is
//! excluded by construction). Prints p50/p99.
//!
//! Run: `cargo bench -p godot-mcp-server --bench bridge_roundtrip`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use godot_mcp_protocol::{
    AddonMessage, BRIDGE_PROTOCOL_VERSION, Discovery, Hello, Reply, ServerMessage,
};
use godot_mcp_server::{Bridge, Status};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("project.godot"), "").unwrap();
    let bridge = Bridge::start(dir.path()).unwrap();
    let d: Discovery =
        serde_json::from_str(&std::fs::read_to_string(bridge.discovery_path()).unwrap()).unwrap();
    let stream = TcpStream::connect(&d.endpoint).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let hello = AddonMessage::Hello(Hello {
        protocol_version: BRIDGE_PROTOCOL_VERSION,
        addon_version: "bench".into(),
        godot_version: "4.4.1.stable".parse().unwrap(),
        token: d.token.clone(),
    });
    writer
        .write_all(format!("{}\n", serde_json::to_string(&hello).unwrap()).as_bytes())
        .unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    std::thread::spawn(move || {
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if let Ok(ServerMessage::Request(r)) = serde_json::from_str(&line) {
                let reply = AddonMessage::Reply(Reply::ok(r.id, serde_json::json!({})));
                let mut out = serde_json::to_vec(&reply).unwrap();
                out.push(b'\n');
                writer.write_all(&out).unwrap();
            }
        }
    });
    while !matches!(bridge.status(), Status::Connected(_)) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let n = 5000;
    for _ in 0..500 {
        bridge
            .request("ping", serde_json::json!({}), Duration::from_secs(5))
            .unwrap();
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        bridge
            .request("ping", serde_json::json!({}), Duration::from_secs(5))
            .unwrap();
        samples.push(t.elapsed());
    }
    samples.sort();
    let p = |q: f64| samples[((n as f64 * q) as usize).min(n - 1)];
    println!(
        "bridge no-op round trip over loopback (protocol peer, {n} requests): p50 {:?}, p90 {:?}, p99 {:?}",
        p(0.50),
        p(0.90),
        p(0.99)
    );
}
