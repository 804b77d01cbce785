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
#![warn(unreachable_pub)]

mod clock;
mod debug_game;
mod editor_addon;
mod host;
mod probe;

use std::io::Write;
use std::time::Duration;

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
        return run_stray_child(args[0] == "--standin-escaped").await;
    }
    let child_mode = args.first().is_some_and(|a| a == "--standin-child");
    let ignore_term = child_mode || flag("GODOT_STANDIN_IGNORE_TERM");
    let mut term = host::Term::install();
    if child_mode {
        loop {
            let _ = term.recv().await; // ignored
        }
    }
    note_start(&args);
    if let Some(code) = exit_before_start(&args) {
        return code;
    }
    let line = CommandLine::split(&args);
    spawn_children(&line);
    if let Some(out) = line.export_output() {
        return export(&line, out, &mut term, ignore_term).await;
    }
    if line
        .value_of("--script")
        .is_some_and(|s| s.ends_with("canonical.gd"))
    {
        return canonical_write(&line);
    }
    run_game(&line, &mut term, ignore_term).await
}

/// A child process the stand-in started (`--standin-stranger`, `--standin-escaped`): no
/// signal handler installed, so SIGTERM and SIGKILL end it; `escaped` logs its pid.
async fn run_stray_child(escaped: bool) -> i32 {
    if escaped
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

/// `GODOT_STANDIN_LOSE_OUTPUT`'s folder in place of the stdout file, and
/// `GODOT_STANDIN_LOG`'s `started` line.
fn note_start(args: &[String]) {
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
}

/// `--version`, `--help`, and a renderer that cannot start (`GODOT_STANDIN_EXIT`): the
/// exit code, after printing what Godot prints; `None` for a run that goes on (the
/// banner printed).
fn exit_before_start(args: &[String]) -> Option<i32> {
    // Like Godot, `--version` prints the version line alone and exits.
    if args.first().is_some_and(|a| a == "--version") {
        println!("4.4.1.stable.standin");
        return Some(0);
    }
    // Like Godot, `--help` prints the command line's options (the display drivers this
    // build has among them) and exits.
    if args.iter().any(|a| a == "--help" || a == "-h") {
        help();
        return Some(0);
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
        return Some(code);
    }
    None
}

/// Godot's command line: the engine's arguments, and the user's after `--`.
struct CommandLine<'a> {
    engine: Vec<&'a String>,
    user: Vec<&'a String>,
}

impl<'a> CommandLine<'a> {
    fn split(args: &'a [String]) -> Self {
        let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
        Self {
            engine: args[..split].iter().collect(),
            user: args
                .get(split + 1..)
                .map_or(Vec::new(), |u| u.iter().collect()),
        }
    }

    /// The engine argument after `name`.
    fn value_of(&self, name: &str) -> Option<&'a str> {
        self.engine
            .iter()
            .position(|a| a.as_str() == name)
            .and_then(|i| self.engine.get(i + 1))
            .map(|s| s.as_str())
    }

    /// The user argument `--name=value`'s value.
    fn user_value(&self, name: &str) -> Option<String> {
        self.user
            .iter()
            .find_map(|a| a.strip_prefix(&format!("--{name}=")).map(str::to_owned))
    }

    /// `--export-release PRESET OUT`'s OUT.
    fn export_output(&self) -> Option<&'a String> {
        self.value_of("--export-release").and_then(|_| {
            self.engine
                .iter()
                .position(|a| a.as_str() == "--export-release")
                .and_then(|i| self.engine.get(i + 2).copied())
        })
    }
}

/// The children `GODOT_STANDIN_FORK`, `GODOT_STANDIN_SETSID` and `GODOT_STANDIN_STRANGER`
/// ask for.
fn spawn_children(line: &CommandLine) {
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
        let endpoint = line.user_value("godot-mcp-endpoint").unwrap_or_default();
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
}

/// An export: write the output (slowly, in chunks), like --export-release.
async fn export(
    line: &CommandLine<'_>,
    out: &String,
    term: &mut host::Term,
    ignore_term: bool,
) -> i32 {
    let preset = line.value_of("--export-release").unwrap_or_default();
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
    0
}

/// The canonical-write helper script: load, "canonicalize", save.
fn canonical_write(line: &CommandLine) -> i32 {
    let (Some(src), Some(dst)) = (
        line.user_value("godot-mcp-in"),
        line.user_value("godot-mcp-out"),
    ) else {
        eprintln!("godot-mcp helper: --godot-mcp-in and --godot-mcp-out are required");
        return 2;
    };
    let root = line.value_of("--path").unwrap_or(".");
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
    0
}

/// The game (and with `-e` the editor's add-on): the debugger's script, the probe, and
/// the frame loop until quit, SIGTERM, a crash or the probe's end.
async fn run_game(line: &CommandLine<'_>, term: &mut host::Term, ignore_term: bool) -> i32 {
    if line
        .engine
        .iter()
        .any(|a| a.as_str() == "-e" || a.as_str() == "--editor")
    {
        let root = line.value_of("--path").unwrap_or(".").to_string();
        tokio::spawn(editor_addon::editor_addon(root));
    }

    let quit_after: Option<u64> = line.value_of("--quit-after").and_then(|v| v.parse().ok());
    let hang = flag("GODOT_STANDIN_HANG");
    if let Some(script) = line.value_of("--script") {
        println!("standin: running main loop script {script}");
    }

    // The game's script under the debugger; the probe does not answer while it is
    // stopped there.
    let (stopped_tx, stopped) = tokio::sync::watch::channel(false);
    if let Some(uri) = line.value_of("--remote-debug") {
        tokio::spawn(debug_game::run(
            uri.to_string(),
            line.value_of("--breakpoints").map(str::to_string),
            stopped_tx,
        ));
    }
    // The probe side of the control socket.
    let probe = match (
        line.user_value("godot-mcp-endpoint"),
        line.user_value("godot-mcp-nonce"),
    ) {
        (Some(endpoint), Some(nonce)) => {
            let held = line.user.iter().any(|a| a.as_str() == "--godot-mcp-paused");
            Some(tokio::spawn(probe::probe(endpoint, nonce, stopped, held)))
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
