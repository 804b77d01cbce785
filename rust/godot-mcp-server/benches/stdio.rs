//! Start-up, memory and tools/list latency of the real `godot-mcp` binary over stdio,
//! measured the way a client sees them. A bench binary, not a timed test:
//!
//! ```sh
//! cargo bench -p godot-mcp-server --bench stdio
//! ```
//!
//! Prints: cold start → initialize answered (p50/min over runs), tools/list p50/p99,
//! a read tool's p50/p99, and the server's peak RSS (VmHWM).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn(project: &Path, state: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_godot-mcp"))
            .args(["serve", "--log-level", "error", "--project"])
            .arg(project)
            .env("GODOT_MCP_STATE_DIR", state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn godot-mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn request(&mut self, line: &str) -> String {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        let mut out = String::new();
        self.stdout.read_line(&mut out).unwrap();
        out
    }

    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let project: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../godot_project");
    let project = project.canonicalize().expect("godot_project/ exists");

    let state = tempfile::tempdir().unwrap();
    // Cold start: spawn → initialize answered (the journal's lease, open and
    // reconciliation included).
    let mut starts = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let mut s = Server::spawn(&project, state.path());
        let reply = s.request(INIT);
        starts.push(t.elapsed());
        assert!(reply.contains("\"result\""), "{reply}");
        s.stop();
    }
    let min = *starts.iter().min().unwrap();
    println!(
        "cold start -> initialize answered: p50 {}  min {}",
        ms(percentile(&mut starts, 0.5)),
        ms(min)
    );

    let mut s = Server::spawn(&project, state.path());
    s.request(INIT);
    s.stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .unwrap();
    let mut lists = Vec::new();
    for i in 0..2000 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list"}}"#,
            i + 1
        );
        let t = Instant::now();
        let reply = s.request(&line);
        lists.push(t.elapsed());
        assert!(reply.contains("\"tools\""));
    }
    println!(
        "tools/list: p50 {}  p99 {}",
        ms(percentile(&mut lists, 0.5)),
        ms(percentile(&mut lists, 0.99))
    );
    let mut reads = Vec::new();
    for i in 0..2000 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"list_files","arguments":{{"kind":"scene"}}}}}}"#,
            10_000 + i
        );
        let t = Instant::now();
        let reply = s.request(&line);
        reads.push(t.elapsed());
        assert!(reply.contains("\"files\""), "{reply}");
    }
    println!(
        "list_files(kind=scene): p50 {}  p99 {}",
        ms(percentile(&mut reads, 0.5)),
        ms(percentile(&mut reads, 0.99))
    );
    println!(
        "peak RSS (VmHWM) after {} requests: {:.1} MiB",
        4001,
        s.peak_rss_kib() as f64 / 1024.0
    );
    s.stop();
}
