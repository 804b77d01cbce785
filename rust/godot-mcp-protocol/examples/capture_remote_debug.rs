//! Records what a real Godot game says on the remote-debug protocol, as raw packets,
//! for the decoder's tests (`tests/remote_debug_samples.rs`).
//!
//! ```text
//! GODOT_BIN=/path/to/godot-4.4.1 cargo run -p godot-mcp-protocol --example capture_remote_debug -- OUT_DIR
//! ```
//!
//! It writes a one-scene project (the script below) into a temp dir, listens on a
//! loopback port, starts the game with `--remote-debug` and `--breakpoints` on the line
//! that calls `tick`, and drives it as a debugger would: at the breakpoint it asks for
//! the stack, the frame's variables and an evaluation, steps into `tick`, tries a
//! step-out (which 4.4 does not have), continues,
//! forces a break and continues again. Every packet the game sends is written to
//! `OUT_DIR/NNN_<message>.bin` exactly as it arrived (length prefix included).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use godot_mcp_protocol::remote_debug::{Message, PacketReader, command};

/// The game's script; line 14 calls `tick`.
pub const SCRIPT: &str = include_str!("../tests/samples/debug_game.gd");
const BREAK_LINE: u32 = 14;

fn main() {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: capture_remote_debug OUT_DIR"),
    );
    let godot = std::env::var_os("GODOT_BIN").expect("set GODOT_BIN to a Godot 4.4 binary");
    std::fs::create_dir_all(&out).unwrap();
    let project = std::env::temp_dir().join(format!("godot-mcp-capture-{}", std::process::id()));
    write_project(&project);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut game = Command::new(&godot)
        .args(["--headless", "--path"])
        .arg(&project)
        .args(["--remote-debug", &format!("tcp://127.0.0.1:{port}")])
        .args([
            "--breakpoints",
            &format!("res://debug_game.gd:{BREAK_LINE}"),
        ])
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

    let enter = expect("debug_enter");
    let thread = enter.thread;
    send(command::plain("get_stack_dump", thread));
    expect("stack_dump");
    send(command::get_stack_frame_vars(0, thread));
    let n = expect("stack_frame_vars");
    let count = n.data[0].as_int().unwrap();
    for _ in 0..count {
        expect("stack_frame_var");
    }
    send(command::evaluate("counter * 2 + pos.x", 0, thread));
    expect("evaluation_return");
    send(command::plain("step", thread));
    expect("debug_exit");
    expect("debug_enter");
    send(command::plain("get_stack_dump", thread));
    expect("stack_dump");
    // 4.4 has no step-out: the game warns and stays stopped.
    send(command::plain("out", thread));
    expect("error");
    // Clear the breakpoint so `continue` lets the game run on.
    send(command::breakpoint(
        "res://debug_game.gd",
        i64::from(BREAK_LINE),
        false,
    ));
    send(command::plain("continue", thread));
    expect("debug_exit");
    expect("output");
    send(command::force_break());
    expect("debug_enter");
    send(command::plain("continue", thread));
    expect("debug_exit");
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
    std::fs::write(dir.join("debug_game.gd"), SCRIPT).unwrap();
    std::fs::write(
        dir.join("main.tscn"),
        "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://debug_game.gd\" id=\"1\"]\n\n[node name=\"Main\" type=\"Node\"]\nscript = ExtResource(\"1\")\n",
    )
    .unwrap();
}

fn read_packets(mut stream: TcpStream, out: &Path, tx: &mpsc::Sender<Message>) {
    let mut reader = PacketReader::default();
    let mut buf = [0u8; 65536];
    let mut seq = 0;
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        reader.push(&buf[..n]);
        while let Some(body) = reader.next_body().unwrap() {
            let m = Message::from_body(&body).unwrap();
            // Performance frames arrive every second and say nothing the tests need
            // beyond the first.
            let keep = m.name != "performance:profile_frame" || seq < 2;
            if keep {
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
