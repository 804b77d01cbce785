//! What both capture examples share: a one-scene project around a script, a game
//! started with `--remote-debug` on a loopback port, and every packet it sends that
//! `keep` accepts written to `OUT_DIR/NNN_<message>.bin` exactly as it arrived
//! (length prefix included).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use godot_mcp_protocol::remote_debug::{Message, PacketReader};

/// A game under capture, driven as a debugger would drive it.
pub struct Capture {
    game: Child,
    project: PathBuf,
    out: PathBuf,
    writer: TcpStream,
    rx: mpsc::Receiver<Message>,
}

impl Capture {
    /// Reads OUT_DIR (argument 1) and GODOT_BIN, writes the project (`script` as
    /// `res://<script_name>`, attached to the main scene's root) and starts the game
    /// with `extra_args` before the scene. `keep(message, packets kept so far)` says
    /// which packets to write.
    pub fn start(
        example: &str,
        script_name: &str,
        script: &str,
        extra_args: &[String],
        keep: impl FnMut(&Message, usize) -> bool + Send + 'static,
    ) -> Self {
        let out = PathBuf::from(
            std::env::args()
                .nth(1)
                .unwrap_or_else(|| panic!("usage: {example} OUT_DIR")),
        );
        let godot = std::env::var_os("GODOT_BIN").expect("set GODOT_BIN to a Godot 4.4 binary");
        std::fs::create_dir_all(&out).unwrap();
        let project =
            std::env::temp_dir().join(format!("godot-mcp-{example}-{}", std::process::id()));
        write_project(&project, script_name, script);

        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let game = Command::new(&godot)
            .args(["--headless", "--path"])
            .arg(&project)
            .args(["--remote-debug", &format!("tcp://127.0.0.1:{port}")])
            .args(extra_args)
            .arg("res://main.tscn")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let (stream, _) = listener.accept().unwrap();
        let writer = stream.try_clone().unwrap();
        let (tx, rx) = mpsc::channel();
        let out_dir = out.clone();
        std::thread::spawn(move || read_packets(stream, &out_dir, &tx, keep));
        Self {
            game,
            project,
            out,
            writer,
            rx,
        }
    }

    /// The next message named `name` (others are skipped), within 20 s.
    pub fn expect(&self, name: &str) -> Message {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m: Message = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {name} in 20 s"));
            if m.name == name {
                return m;
            }
        }
    }

    pub fn send(&mut self, m: Message) {
        self.writer.write_all(&m.to_packet()).unwrap();
    }

    /// Stop the game and remove its project.
    pub fn finish(mut self) {
        let _ = self.game.kill();
        let _ = self.game.wait();
        let _ = std::fs::remove_dir_all(&self.project);
        eprintln!("captured into {}", self.out.display());
    }
}

fn write_project(dir: &Path, script_name: &str, script: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"capture\"\n",
    )
    .unwrap();
    std::fs::write(dir.join(script_name), script).unwrap();
    std::fs::write(
        dir.join("main.tscn"),
        format!(
            "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://{script_name}\" id=\"1\"]\n\n[node name=\"Main\" type=\"Node\"]\nscript = ExtResource(\"1\")\n"
        ),
    )
    .unwrap();
}

fn read_packets(
    mut stream: TcpStream,
    out: &Path,
    tx: &mpsc::Sender<Message>,
    mut keep: impl FnMut(&Message, usize) -> bool,
) {
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
            if keep(&m, seq) {
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
