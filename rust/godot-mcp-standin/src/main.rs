//! `godot-standin`: a real executable that behaves like `godot` for the
//! process-plane tests. It is never a mock that answers canned success: it
//! parses godot's command line, prints like Godot, forks a child into its own
//! process group, ignores SIGTERM on request, writes export bytes, and talks
//! to the session's control socket like the runtime probe does.
//!
//! Behaviour switches (environment, inherited through the server):
//! - `GODOT_STANDIN_FORK=1`: spawn a child into the same process group that
//!   ignores SIGTERM and runs until killed.
//! - `GODOT_STANDIN_STRANGER=1`: spawn a child into the same process group
//!   without the session's nonce (not on its command line, removed from its
//!   environment), with SIGTERM's default action: a process in the boundary
//!   that is not proven the launch's.
//! - `GODOT_STANDIN_SETSID=1`: start a child the way Godot's `OS.create_process`
//!   does on Linux and macOS (fork, `setsid()`, exec): `setsid` (util-linux) runs
//!   `godot-standin --standin-escaped` in a session and process group of its
//!   own, with the session's nonce in the environment it inherits. It sleeps
//!   with SIGTERM's default action until killed; its command line holds the
//!   session's endpoint (so a test's clean-up finds it), not the nonce. With
//!   `GODOT_STANDIN_LOG` it appends `escaped <pid>` to that file.
//! - `GODOT_STANDIN_IGNORE_TERM=1`: ignore SIGTERM.
//! - `GODOT_STANDIN_LOSE_OUTPUT=1` (Linux): replace the file its stdout goes to by a
//!   folder of the same name, so that its output cannot be read back.
//! - `GODOT_STANDIN_HANG=1`: never quit by itself (ignores `--quit-after`).
//! - `GODOT_STANDIN_SCRIPT_ERROR=1`: print a GDScript runtime error (Godot 4.4's
//!   format) and keep running.
//! - `GODOT_STANDIN_CRASH=1`: abort (SIGABRT) after the first frame.
//! - `GODOT_STANDIN_EXPORT_HANG=1`: an export writes part of its output, then hangs.
//! - `GODOT_STANDIN_LOG=FILE`: append `started <pid> <args>` to FILE.
//! - The probe's observation requests (`monitors`, `tree`, `find_ui`, `sample`,
//!   `record_start`/`record_stop`) answer in the real probe's form from a small fixed
//!   game tree (a HUD with a Label and a Button).
//! - `GODOT_STANDIN_RENDERER=1`: answer `screenshot` like a build with a renderer, with
//!   the PNG file `GODOT_STANDIN_SCREENSHOT` names (default: a 1×1 PNG), and list an
//!   `x11` display driver in `--help` (a headless build lists only `headless`).
//! - `GODOT_STANDIN_EXIT=N`: like a game whose renderer cannot start (the Mobile renderer
//!   without Vulkan), print Godot's error lines and exit with code N before the probe
//!   connects.
//! - `-e`/`--editor`: also behave like the editor's godot_mcp add-on: after
//!   `GODOT_STANDIN_EDITOR_LOAD_MS` (default 0; an editor's load), find the server in the
//!   project's `.godot/godot_mcp/bridge.json`, say hello with its token, and answer
//!   requests as the add-on does in an editor with no scene open.
//!
//! With `--remote-debug tcp://host:port` it connects to that debugger and runs the
//! sample game script under it (see `debug_game`).
#![forbid(unsafe_code)]

mod clock;
mod debug_game;

/// The OS-specific parts, so the rest has no `cfg`: the stand-in is run by the
/// Unix process-plane tests; on Windows it only has to compile (the server
/// refuses launches there, docs/platforms.md).
mod host {
    #[cfg(unix)]
    pub type Stream = tokio::net::UnixStream;
    #[cfg(windows)]
    pub type Stream = tokio::net::TcpStream;

    /// Connects to the control endpoint (a socket path; Windows: `tcp:<addr>`).
    pub async fn connect(endpoint: &str) -> std::io::Result<Stream> {
        #[cfg(windows)]
        let endpoint = endpoint.strip_prefix("tcp:").unwrap_or(endpoint);
        Stream::connect(endpoint).await
    }

    /// SIGTERM (Windows: Ctrl-Break, its nearest polite stop).
    #[cfg(unix)]
    pub struct Term(tokio::signal::unix::Signal);
    #[cfg(windows)]
    pub struct Term(tokio::signal::windows::CtrlBreak);

    impl Term {
        pub fn install() -> Self {
            #[cfg(unix)]
            let s = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
            #[cfg(windows)]
            let s = tokio::signal::windows::ctrl_break();
            Self(s.expect("SIGTERM handler"))
        }

        pub async fn recv(&mut self) -> Option<()> {
            self.0.recv().await
        }
    }
}

use std::io::Write;
use std::time::Duration;

use godot_mcp_protocol::probe::{
    self, Empty, FindUiReply, HeldReply, MonitorsReply, ProbeHello, ProbeHelloFrame, ProbeRefusal,
    ProbeReply, ProbeRequest, RecordedEvent, RecordedReply, RecordingReply, ReleasedReply,
    SampleReply, ScreenshotReply, StatusReply, TreeNode, TreeReply, UiElement, UiRect, ValueReply,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The stand-in's frame, as the probe answers `screenshot`.
fn screenshot(max_bytes: Option<u64>) -> Result<ScreenshotReply, ProbeRefusal> {
    use base64::Engine as _;
    const ONE_PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let png = match std::env::var_os("GODOT_STANDIN_SCREENSHOT") {
        Some(file) => std::fs::read(&file).map_err(|e| {
            ProbeRefusal::new("not_supported", format!("GODOT_STANDIN_SCREENSHOT: {e}"))
        })?,
        None => base64::engine::general_purpose::STANDARD
            .decode(ONE_PIXEL)
            .unwrap_or_default(),
    };
    if let Some(max) = max_bytes
        && png.len() as u64 > max
    {
        return Err(ProbeRefusal {
            bytes: Some(png.len() as u64),
            ..ProbeRefusal::new("too_large", format!("the PNG is {} bytes", png.len()))
        });
    }
    Ok(ScreenshotReply {
        png_base64: base64::engine::general_purpose::STANDARD.encode(&png),
        width: None,
        height: None,
        bytes: None,
    })
}

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let code = rt.block_on(run(args));
    std::process::exit(code);
}

async fn run(args: Vec<String>) -> i32 {
    if args
        .first()
        .is_some_and(|a| a == "--standin-stranger" || a == "--standin-escaped")
    {
        if args[0] == "--standin-escaped"
            && let Ok(log) = std::env::var("GODOT_STANDIN_LOG")
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
        {
            let _ = writeln!(f, "escaped {}", std::process::id());
        }
        // No signal handler installed: SIGTERM and SIGKILL end it.
        loop {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
    let child_mode = args.first().is_some_and(|a| a == "--standin-child");
    let ignore_term = child_mode || flag("GODOT_STANDIN_IGNORE_TERM");
    let mut term = host::Term::install();
    if child_mode {
        loop {
            let _ = term.recv().await; // ignored
        }
    }
    if flag("GODOT_STANDIN_LOSE_OUTPUT")
        && let Ok(path) = std::fs::read_link("/proc/self/fd/1")
    {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::create_dir(&path);
    }
    if let Ok(log) = std::env::var("GODOT_STANDIN_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
    {
        let _ = writeln!(f, "started {} {}", std::process::id(), args.join(" "));
    }
    // Like Godot, `--version` prints the version line alone and exits.
    if args.first().is_some_and(|a| a == "--version") {
        println!("4.4.1.stable.standin");
        return 0;
    }
    // Like Godot, `--help` prints the command line's options (the display drivers this
    // build has among them) and exits.
    if args.iter().any(|a| a == "--help" || a == "-h") {
        help();
        return 0;
    }
    println!("Godot Engine v4.4.1.stable.standin - https://godotengine.org");
    println!();
    if let Some(code) = std::env::var("GODOT_STANDIN_EXIT")
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        // Godot 4.4's lines when the Mobile renderer finds no Vulkan.
        eprintln!(
            "ERROR: Your video card drivers seem not to support the required Vulkan version."
        );
        eprintln!("   at: initialize (drivers/vulkan/rendering_context_driver_vulkan.cpp:1052)");
        eprintln!("ERROR: Unable to create DisplayServer, all display drivers failed.");
        eprintln!(
            "Use \"--headless\" command line argument to run the engine in headless mode if this is desired (e.g. for continuous integration)."
        );
        eprintln!("   at: setup2 (main/main.cpp:3004)");
        return code;
    }
    let (engine, user): (Vec<&String>, Vec<&String>) = {
        let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
        (
            args[..split].iter().collect(),
            args.get(split + 1..)
                .map_or(Vec::new(), |u| u.iter().collect()),
        )
    };
    let value_of = |name: &str| {
        engine
            .iter()
            .position(|a| a.as_str() == name)
            .and_then(|i| engine.get(i + 1))
            .map(|s| s.as_str())
    };
    let user_value = |name: &str| {
        user.iter()
            .find_map(|a| a.strip_prefix(&format!("--{name}=")).map(str::to_owned))
    };
    if flag("GODOT_STANDIN_FORK") {
        let me = std::env::current_exe().expect("current exe");
        // No process_group(): the child stays in our group, like a Godot
        // helper process would.
        let _ = std::process::Command::new(me)
            .arg("--standin-child")
            .stdin(std::process::Stdio::null())
            .spawn();
    }
    if flag("GODOT_STANDIN_SETSID") {
        let me = std::env::current_exe().expect("current exe");
        let endpoint = user_value("godot-mcp-endpoint").unwrap_or_default();
        // Not a process-group leader, so `setsid` calls setsid() and execs in
        // the same process: one child, out of our group, like Godot's.
        let _ = std::process::Command::new("setsid")
            .arg(me)
            .arg("--standin-escaped")
            .arg(format!("--standin-endpoint={endpoint}"))
            .stdin(std::process::Stdio::null())
            .spawn();
    }
    if flag("GODOT_STANDIN_STRANGER") {
        let me = std::env::current_exe().expect("current exe");
        let _ = std::process::Command::new(me)
            .arg("--standin-stranger")
            .env_remove("GODOT_MCP_SESSION_NONCE")
            .stdin(std::process::Stdio::null())
            .spawn();
    }

    // An export: write the output (slowly, in chunks), like --export-release.
    if let Some(out) = value_of("--export-release").and_then(|_| {
        engine
            .iter()
            .position(|a| a.as_str() == "--export-release")
            .and_then(|i| engine.get(i + 2))
    }) {
        let preset = value_of("--export-release").unwrap_or_default();
        println!("Exporting preset \"{preset}\" to {out}");
        let Ok(mut f) = std::fs::File::create(out.as_str()) else {
            eprintln!("ERROR: Cannot create file \"{out}\".");
            return 1;
        };
        for chunk in 0..10 {
            let _ = f.write_all(&[b'P'; 4096]);
            let _ = f.sync_data();
            if chunk == 4 && flag("GODOT_STANDIN_EXPORT_HANG") {
                println!("export 50%");
                let _ = std::io::stdout().flush();
                loop {
                    tokio::select! {
                        _ = term.recv() => if !ignore_term { return 143; },
                        () = tokio::time::sleep(Duration::from_secs(3600)) => {}
                    }
                }
            }
        }
        println!("export done");
        return 0;
    }

    // The canonical-write helper script: load, "canonicalize", save.
    if value_of("--script").is_some_and(|s| s.ends_with("canonical.gd")) {
        let (Some(src), Some(dst)) = (user_value("godot-mcp-in"), user_value("godot-mcp-out"))
        else {
            eprintln!("godot-mcp helper: --godot-mcp-in and --godot-mcp-out are required");
            return 2;
        };
        let root = value_of("--path").unwrap_or(".");
        let src = src
            .strip_prefix("res://")
            .map_or(src.clone(), |r| format!("{root}/{r}"));
        let Ok(text) = std::fs::read_to_string(&src) else {
            eprintln!("godot-mcp helper: cannot load {src}");
            return 1;
        };
        if flag("GODOT_STANDIN_HELPER_FAIL") {
            eprintln!("ERROR: Cannot save resource to file '{dst}'.");
            return 1;
        }
        let canonical: String = text
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        if std::fs::write(&dst, canonical.trim_end().to_string() + "\n").is_err() {
            return 1;
        }
        return 0;
    }

    if engine
        .iter()
        .any(|a| a.as_str() == "-e" || a.as_str() == "--editor")
    {
        let root = value_of("--path").unwrap_or(".").to_string();
        tokio::spawn(editor_addon(root));
    }

    let quit_after: Option<u64> = value_of("--quit-after").and_then(|v| v.parse().ok());
    let hang = flag("GODOT_STANDIN_HANG");
    if let Some(script) = value_of("--script") {
        println!("standin: running main loop script {script}");
    }

    // The game's script under the debugger; the probe does not answer while it is
    // stopped there.
    let (stopped_tx, stopped) = tokio::sync::watch::channel(false);
    if let Some(uri) = value_of("--remote-debug") {
        tokio::spawn(debug_game::run(
            uri.to_string(),
            value_of("--breakpoints").map(str::to_string),
            stopped_tx,
        ));
    }
    // The probe side of the control socket.
    let probe = match (
        user_value("godot-mcp-endpoint"),
        user_value("godot-mcp-nonce"),
    ) {
        (Some(endpoint), Some(nonce)) => {
            let held = user.iter().any(|a| a.as_str() == "--godot-mcp-paused");
            Some(tokio::spawn(probe(endpoint, nonce, stopped, held)))
        }
        _ => None,
    };
    let _ = std::io::stdout().flush();

    let mut frame: u64 = 0;
    loop {
        tokio::select! {
            _ = term.recv() => {
                if !ignore_term {
                    return 143;
                }
            }
            () = tokio::time::sleep(Duration::from_millis(1)) => {
                frame += 1;
                if frame == 1 && flag("GODOT_STANDIN_SCRIPT_ERROR") {
                    eprintln!("SCRIPT ERROR: Invalid call. Nonexistent function 'explode' in base 'Node2D'.");
                    eprintln!("          at: _ready (res://scripts/broken.gd:12)");
                    eprintln!("ERROR: Failed to load script \"res://scripts/other.gd\" with error \"Parse error\".");
                    eprintln!("   at: load (modules/gdscript/gdscript.cpp:2936)");
                }
                if frame == 2 && flag("GODOT_STANDIN_CRASH") {
                    eprintln!("================================================================");
                    eprintln!("handle_crash: Program crashed with signal 6");
                    std::process::abort();
                }
                if !hang && quit_after.is_some_and(|n| frame >= n) {
                    println!("standin: quit after {frame} frames");
                    return 0;
                }
                if let Some(p) = &probe && p.is_finished() {
                    return 0;
                }
            }
        }
    }
}

/// Godot's `--help`, its display-driver line as a build with (`GODOT_STANDIN_RENDERER=1`)
/// or without a renderer prints it.
fn help() {
    let drivers = if flag("GODOT_STANDIN_RENDERER") {
        r#"["x11" ("opengl3", "opengl3_es"), "headless" ("dummy")]"#
    } else {
        r#"["headless" ("dummy")]"#
    };
    println!("Godot Engine v4.4.1.stable.standin - https://godotengine.org");
    println!("Usage: godot-standin [options] [path to scene or 'project.godot' file]");
    println!();
    println!("Display options:");
    println!(
        "  --display-driver <driver>         R  Display driver (and rendering driver) {drivers}."
    );
    println!("  --rendering-method <renderer>     R  Renderer name. Requires driver support.");
    println!(
        "  --rendering-driver <driver>       R  Rendering driver (depends on display driver)."
    );
    println!(
        "  --headless                        R  Enable headless mode (--display-driver headless --audio-driver Dummy). Useful for servers and with --script."
    );
}

/// The editor's godot_mcp add-on, in an editor with no scene open: finds the server in
/// the project's discovery file once the editor has "loaded", says hello with the
/// token, and answers each request as the add-on does (no scene: `no_active_scene`).
async fn editor_addon(root: String) {
    use godot_mcp_protocol::{
        AddonMessage, BRIDGE_PROTOCOL_VERSION, BridgeError, DISCOVERY_RELATIVE_PATH, Discovery,
        ErrorCode, Hello, Outcome, Reply, ServerMessage,
    };
    let load_ms: u64 = std::env::var("GODOT_STANDIN_EDITOR_LOAD_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(load_ms)).await;
    let path = std::path::Path::new(&root).join(DISCOVERY_RELATIVE_PATH);
    let Some(d) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Discovery>(&t).ok())
    else {
        eprintln!("godot_mcp: no server found in {}", path.display());
        return;
    };
    let Ok(stream) = tokio::net::TcpStream::connect(&d.endpoint).await else {
        eprintln!("godot_mcp: cannot connect to {}", d.endpoint);
        return;
    };
    let (rd, mut wr) = stream.into_split();
    let hello = AddonMessage::Hello(Hello {
        protocol_version: BRIDGE_PROTOCOL_VERSION,
        addon_version: "standin".into(),
        godot_version: "4.4.1.stable.standin".parse().expect("a Godot version"),
        token: d.token.clone(),
    });
    let line = serde_json::to_string(&hello).unwrap_or_default() + "\n";
    if wr.write_all(line.as_bytes()).await.is_err() {
        return;
    }
    println!("godot_mcp: connected to the server at {}", d.endpoint);
    let _ = std::io::stdout().flush();
    let mut lines = BufReader::new(rd).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(ServerMessage::Request(r)) = serde_json::from_str(&line) else {
            continue;
        };
        let error = match r.cmd.as_str() {
            "editor.history" | "editor.undo" | "editor.redo" | "scene.tree" => {
                BridgeError::new(ErrorCode::NoActiveScene, "no scene is open in the editor")
            }
            other => BridgeError::new(
                ErrorCode::UnknownCommand,
                format!("the stand-in editor does not know {other}"),
            ),
        };
        let reply = AddonMessage::Reply(Reply {
            id: r.id,
            outcome: Outcome::Error(error),
        });
        let line = serde_json::to_string(&reply).unwrap_or_default() + "\n";
        if wr.write_all(line.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Connects to the control socket, says hello with the nonce, answers commands
/// one JSON line at a time. When the server goes away: releases held input at
/// once and quits `GODOT_MCP_PROBE_QUIT_MS` (15 s) later.
async fn probe(
    endpoint: String,
    nonce: String,
    stopped: tokio::sync::watch::Receiver<bool>,
    clock_held: bool,
) {
    let mut held: Vec<String> = Vec::new();
    let mut clock = clock::Clock::new(clock_held);
    match host::connect(&endpoint).await {
        Ok(stream) => serve_probe(stream, nonce, &mut held, &mut clock, stopped).await,
        Err(e) => eprintln!("godot-mcp probe: cannot connect to {endpoint}: {e}"),
    }
    let quit_ms: u64 = std::env::var("GODOT_MCP_PROBE_QUIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15_000);
    println!(
        "godot-mcp probe: server lost; released {} held input(s); quitting in {quit_ms} ms",
        held.len()
    );
    let _ = std::io::stdout().flush();
    tokio::time::sleep(Duration::from_millis(quit_ms)).await;
}

/// The stand-in game's scene tree: (path, class, text) depth-first, like a small game
/// with a HUD; `tree` and `find_ui` answer from it as the probe answers from the real one.
const TREE: [(&str, &str, &str); 6] = [
    ("/root", "Window", ""),
    ("/root/Main", "Node2D", ""),
    ("/root/Main/Player", "CharacterBody2D", ""),
    ("/root/Main/HUD", "CanvasLayer", ""),
    ("/root/Main/HUD/Score", "Label", "Score: 0"),
    ("/root/Main/HUD/StartButton", "Button", "Start"),
];

/// Whether stand-in class `class` is `ty` or inherits it (the few classes of [`TREE`]).
fn is_class(class: &str, ty: &str) -> bool {
    let chain: &[&str] = match class {
        "Label" => &["Label", "Control", "CanvasItem", "Node"],
        "Button" => &["Button", "BaseButton", "Control", "CanvasItem", "Node"],
        "Node2D" | "CharacterBody2D" => &["CharacterBody2D", "Node2D", "CanvasItem", "Node"],
        other => return other == ty || ty == "Node",
    };
    chain.contains(&ty) && (class != "Node2D" || ty != "CharacterBody2D")
}

/// One answer of the stand-in probe: the body of its request's reply type, or a refusal.
type Answer = Result<serde_json::Value, ProbeRefusal>;

/// The body `T` of an answer, in its wire form.
fn body<T: serde::Serialize>(t: T) -> Answer {
    serde_json::to_value(t).map_err(|e| ProbeRefusal::new("encode_failed", e.to_string()))
}

fn no_node(path: &str) -> ProbeRefusal {
    ProbeRefusal::new("node_not_found", format!("no node {path}"))
}

/// The probe's `tree` answer, from [`TREE`].
fn tree(root: &str, max_depth: Option<u64>, offset: u64, limit: u64) -> Answer {
    if !TREE.iter().any(|(p, _, _)| *p == root) {
        return Err(no_node(root));
    }
    let base_depth = root.matches('/').count();
    let max_depth = max_depth.unwrap_or(u64::MAX);
    let all: Vec<_> = TREE
        .iter()
        .filter(|(p, _, _)| *p == root || p.starts_with(&format!("{root}/")))
        .map(|(p, c, _)| (p, c, (p.matches('/').count() - base_depth) as u64))
        .filter(|(_, _, d)| *d <= max_depth)
        .collect();
    let total = all.len() as u64;
    let nodes = all
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(p, c, d)| {
            let children = TREE
                .iter()
                .filter(|(q, _, _)| {
                    q.strip_prefix(*p)
                        .and_then(|r| r.strip_prefix('/'))
                        .is_some_and(|r| !r.contains('/'))
                })
                .count() as u64;
            TreeNode {
                path: p.to_string(),
                name: p.rsplit('/').next().unwrap_or("").to_string(),
                class: c.to_string(),
                depth: d,
                children,
            }
        })
        .collect();
    body(TreeReply {
        nodes,
        total,
        capped: false,
    })
}

/// The probe's `find_ui` answer, from [`TREE`].
fn find_ui(text: Option<&str>, ty: &str, limit: u64) -> Answer {
    let text = text.map(str::to_lowercase);
    let hits: Vec<_> = TREE
        .iter()
        .enumerate()
        .filter(|(_, (_, c, t))| {
            is_class(c, "Control")
                && is_class(c, ty)
                && text.as_ref().is_none_or(|x| t.to_lowercase().contains(x))
        })
        .collect();
    let elements = hits
        .iter()
        .take(limit as usize)
        .map(|(i, (p, c, t))| UiElement {
            path: p.to_string(),
            class: c.to_string(),
            text: t.to_string(),
            rect: UiRect {
                x: 10.0,
                y: 10.0 + 40.0 * *i as f32,
                w: 120.0,
                h: 32.0,
            },
            visible: true,
        })
        .collect();
    body(FindUiReply {
        elements,
        matched: hits.len() as u64,
        capped: false,
    })
}

/// The probe's `monitors` answer: like a running game, fps near 60, the frame counter
/// moving the times.
fn monitors(connected_at: std::time::Instant) -> Answer {
    let t = connected_at.elapsed().as_millis() as f64;
    let monitors = [
        ("fps", 60.0),
        ("process_time_ms", 1.0 + (t % 7.0) / 10.0),
        ("physics_time_ms", 0.5),
        ("navigation_time_ms", 0.0),
        ("memory_static_bytes", 4.0e6),
        ("memory_static_max_bytes", 5.0e6),
        ("objects", 900.0),
        ("resources", 40.0),
        ("nodes", TREE.len() as f64),
        ("orphan_nodes", 0.0),
        ("draw_calls", 0.0),
        ("objects_drawn", 0.0),
        ("primitives_drawn", 0.0),
        ("video_memory_bytes", 0.0),
        ("physics_2d_active_objects", 1.0),
        ("physics_2d_collision_pairs", 0.0),
        ("physics_3d_active_objects", 0.0),
        ("physics_3d_collision_pairs", 0.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Some(v)))
    .collect();
    body(MonitorsReply { monitors })
}

async fn serve_probe(
    stream: host::Stream,
    nonce: String,
    held: &mut Vec<String>,
    clock: &mut clock::Clock,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let (rd, mut wr) = stream.into_split();
    let connected_at = std::time::Instant::now();
    // record_input: the input requests received since record_start, timed like the
    // probe's recorder node sees them (a tap's release in the same frame, a hold's when
    // it ends).
    let mut recording: Option<(std::time::Instant, Vec<RecordedEvent>)> = None;
    let hello = ProbeHelloFrame {
        hello: ProbeHello {
            nonce,
            pid: std::process::id(),
            renderer: false,
        },
    };
    let hello = serde_json::to_string(&hello).unwrap_or_default();
    let _ = wr.write_all(format!("{hello}\n").as_bytes()).await;
    let mut lines = BufReader::new(rd).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        // Stopped in the debugger: the main loop, where the probe answers, waits.
        if stopped.wait_for(|s| !*s).await.is_err() {
            return;
        }
        let decoded = probe::decode_request(line.as_bytes());
        // GODOT_STANDIN_BREAK=1: like a game stopped at a breakpoint — its main loop
        // (where the real probe answers) does not run, so nothing is answered.
        if std::env::var_os("GODOT_STANDIN_BREAK").is_some() {
            let cmd = decoded.as_ref().map_or("?", |f| f.request.cmd());
            println!("standin: at a breakpoint, not answering {cmd:?}");
            continue;
        }
        let (id, answer) = match decoded {
            Ok(frame) => {
                let answer = match frame.request {
                    ProbeRequest::Quit {} => {
                        let bye = ProbeReply::ok(frame.id, Empty {}).to_json();
                        let _ = wr.write_all(format!("{bye}\n").as_bytes()).await;
                        std::process::exit(0);
                    }
                    request => answer(request, held, clock, &mut recording, connected_at).await,
                };
                (Some(frame.id), answer)
            }
            // The real probe answers a request it cannot read with the same refusal.
            Err((id, refusal)) => (id, Err(refusal)),
        };
        let Some(id) = id else { continue };
        let reply = ProbeReply {
            id,
            outcome: answer,
        }
        .to_json();
        if wr.write_all(format!("{reply}\n").as_bytes()).await.is_err() {
            break;
        }
    }
}

/// The stand-in probe's answer to one request (all but `quit`).
async fn answer(
    request: ProbeRequest,
    held: &mut Vec<String>,
    clock: &mut clock::Clock,
    recording: &mut Option<(std::time::Instant, Vec<RecordedEvent>)>,
    connected_at: std::time::Instant,
) -> Answer {
    match request {
        ProbeRequest::Monitors {} => monitors(connected_at),
        ProbeRequest::Tree {
            root,
            max_depth,
            offset,
            limit,
        } => tree(&root, max_depth, offset, limit),
        ProbeRequest::FindUi { text, class, limit } => find_ui(text.as_deref(), &class, limit),
        ProbeRequest::Input {
            event,
            at_frame: Some(at),
            hold_frames,
            ..
        } => {
            let hold = hold_frames.unwrap_or(1);
            clock.schedule(event.clone(), at, hold)?;
            if let Some((start, events)) = recording {
                let t = start.elapsed().as_millis() as u64;
                for (frame, pressed) in [(at, true), (at + hold, false)] {
                    events.push(RecordedEvent {
                        t_ms: t + (frame - at) * 16,
                        frame: Some(frame),
                        event: event.clone(),
                        pressed,
                    });
                }
            }
            body(HeldReply {
                held: held.len() as u64 + clock.held_inputs(),
            })
        }
        ProbeRequest::Input { event, hold_ms, .. } => {
            let what = serde_json::to_string(&event).unwrap_or_default();
            if let Some((start, events)) = recording {
                let t = start.elapsed().as_millis() as u64;
                let frame = clock.frame() + 1;
                events.push(RecordedEvent {
                    t_ms: t,
                    frame: Some(frame),
                    event: event.clone(),
                    pressed: true,
                });
                events.push(RecordedEvent {
                    t_ms: t + hold_ms,
                    frame: Some(frame + hold_ms / 16),
                    event,
                    pressed: false,
                });
            }
            if hold_ms > 0 {
                held.push(what.clone());
            }
            println!("standin: input {what}");
            body(HeldReply {
                held: held.len() as u64 + clock.held_inputs(),
            })
        }
        ProbeRequest::RecordStart {} => {
            *recording = Some((std::time::Instant::now(), Vec::new()));
            body(RecordingReply { recording: true })
        }
        ProbeRequest::RecordStop {} => match recording.take() {
            Some((start, mut events)) => {
                events.sort_by_key(|e| e.t_ms);
                body(RecordedReply {
                    events,
                    skipped: Default::default(),
                    duration_ms: start.elapsed().as_millis() as u64,
                })
            }
            None => Err(ProbeRefusal::new(
                "not_recording",
                "no input recording is running (start one with record_input)",
            )),
        },
        // One value a frame (~16 ms), rendered as the probe renders values (strings).
        ProbeRequest::Sample {
            node,
            property,
            frames,
        } => {
            if !TREE.iter().any(|(p, _, _)| *p == node) {
                return Err(no_node(&node));
            }
            let mut values = Vec::new();
            for _ in 0..frames.clamp(1, 600) {
                tokio::time::sleep(Duration::from_millis(16)).await;
                values.push(if property == "ticks" {
                    connected_at.elapsed().as_millis().to_string()
                } else {
                    format!("standin:{node}:{property}")
                });
            }
            body(SampleReply { values })
        }
        ProbeRequest::ReleaseAll {} => {
            let n = held.len() as u64 + clock.release_all();
            held.clear();
            body(ReleasedReply { released: n })
        }
        // Like a Godot build with a renderer when GODOT_STANDIN_RENDERER=1: a real
        // PNG of "the frame" (the file GODOT_STANDIN_SCREENSHOT names, else a 1×1
        // one), after `frames` frames (a frame is ~16 ms), refused like the probe
        // refuses one above the request's `max_bytes`; otherwise like the headless
        // build. It does not downscale (`max_edge` is the real probe's).
        ProbeRequest::Screenshot {
            frames, max_bytes, ..
        } if std::env::var_os("GODOT_STANDIN_RENDERER").is_some() => {
            std::thread::sleep(std::time::Duration::from_millis(16 * frames.min(120)));
            screenshot(max_bytes).and_then(body)
        }
        ProbeRequest::Screenshot { .. } => Err(ProbeRefusal::new(
            "no_renderer",
            "this Godot build has no renderer (headless)",
        )),
        // `ticks` is wall time (ms since the probe connected), `frame` and `y` follow
        // the clock (`clock.rs`); any other property is a fixed string naming itself.
        ProbeRequest::GetProperty { node, property } => body(ValueReply {
            value: clock.property(&node, &property),
        }),
        ProbeRequest::Evaluate { expression } => clock
            .evaluate(&expression)
            .and_then(|value| body(ValueReply { value })),
        ProbeRequest::Status {} => body(StatusReply {
            breaked: false,
            held: held.len() as u64 + clock.held_inputs(),
        }),
        ProbeRequest::ClockPause {} => body(clock.pause()),
        ProbeRequest::ClockResume {} => body(clock.resume()),
        ProbeRequest::ClockStep(s) => clock
            .step(
                s.frames,
                s.unit,
                s.until.as_deref(),
                &s.watch,
                s.every,
                &s.at,
            )
            .and_then(body),
        ProbeRequest::Quit {} => body(Empty {}),
    }
}
