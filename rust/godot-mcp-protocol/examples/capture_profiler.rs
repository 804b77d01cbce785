//! Records what a real Godot game says on the remote-debug protocol while its script
//! profiler runs, as raw packets, for the decoder's tests
//! (`tests/remote_debug_profiler_samples.rs`).
//!
//! ```text
//! GODOT_BIN=/path/to/godot-4.4.1 cargo run -p godot-mcp-protocol --example capture_profiler -- OUT_DIR
//! ```
//!
//! It writes a one-scene project (`tests/samples/profile_game.gd`: `_process` calls
//! `crunch` 20 times a frame) into a temp dir, listens on a loopback port, starts the
//! game with `--remote-debug`, and drives it as the editor's profiler does
//! (`ScriptEditorDebugger::_profiler_activate`): `profiler:servers [true, [512, false]]`,
//! then, after `FRAMES` profile frames, `profiler:servers [false]`. Every packet the
//! game sends from the first `servers:` message on is written to
//! `OUT_DIR/NNN_<message>.bin` exactly as it arrived (length prefix included).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use godot_mcp_protocol::remote_debug::{Message, PacketReader, command};

pub const SCRIPT: &str = include_str!("../tests/samples/profile_game.gd");
/// Profile frames kept: enough to show the signature table is sent once.
const FRAMES: usize = 3;

fn main() {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: capture_profiler OUT_DIR"),
    );
    let godot = std::env::var_os("GODOT_BIN").expect("set GODOT_BIN to a Godot 4.4 binary");
    std::fs::create_dir_all(&out).unwrap();
    let project =
        std::env::temp_dir().join(format!("godot-mcp-capture-prof-{}", std::process::id()));
    write_project(&project);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut game = Command::new(&godot)
        .args(["--headless", "--path"])
        .arg(&project)
        .args(["--remote-debug", &format!("tcp://127.0.0.1:{port}")])
        .arg("res://main.tscn")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut writer = stream.try_clone().unwrap();
    let (tx, rx) = mpsc::channel();
    let out_dir = out.clone();
    std::thread::spawn(move || read_packets(stream, &out_dir, &tx));

    let expect = |name: &str| -> Message {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m: Message = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {name} in 20 s"));
            if m.name == name {
                return m;
            }
        }
    };
    let mut send = |m: Message| writer.write_all(&m.to_packet()).unwrap();

    // The game runs: its first performance frame says its loop turns.
    expect("performance:profile_frame");
    send(command::profiler("servers", true, Some((512, false))));
    for _ in 0..FRAMES {
        expect("servers:profile_frame");
    }
    send(command::profiler("servers", false, None));
    expect("servers:profile_total");
    // One more loop turn: nothing of the profiler follows the disable.
    expect("performance:profile_frame");
    let _ = game.kill();
    let _ = game.wait();
    let _ = std::fs::remove_dir_all(&project);
    eprintln!("captured into {}", out.display());
}

fn write_project(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"capture\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("profile_game.gd"), SCRIPT).unwrap();
    std::fs::write(
        dir.join("main.tscn"),
        "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://profile_game.gd\" id=\"1\"]\n\n[node name=\"Main\" type=\"Node\"]\nscript = ExtResource(\"1\")\n",
    )
    .unwrap();
}

fn read_packets(mut stream: TcpStream, out: &Path, tx: &mpsc::Sender<Message>) {
    let mut reader = PacketReader::default();
    let mut buf = [0u8; 65536];
    let mut seq = 0;
    let mut profiling = false;
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        reader.push(&buf[..n]);
        while let Some(body) = reader.next_body().unwrap() {
            let m = Message::from_body(&body).unwrap();
            profiling |= m.name.starts_with("servers:");
            // Before the profiler: only the game's greeting is of no use here.
            if profiling && seq < 40 {
                let mut packet = (body.len() as u32).to_le_bytes().to_vec();
                packet.extend_from_slice(&body);
                let name = m.name.replace(':', "_");
                std::fs::write(out.join(format!("{seq:03}_{name}.bin")), packet).unwrap();
                seq += 1;
            }
            if tx.send(m).is_err() {
                return;
            }
        }
    }
}
