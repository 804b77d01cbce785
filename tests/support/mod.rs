//! Shared helpers for the end-to-end tests: spawn the real `godot-mcp` binary and
//! drive it over stdio with rmcp's own client.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

/// The `godot-mcp` binary cargo built for these tests.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_godot-mcp"))
}

/// The environment variable that turns the server's editor auto-start off. Every server
/// a test starts has it off (a test's own editor, or none, is what it means); the tests of
/// the auto-start turn it on.
pub const AUTO_EDITOR: &str = "GODOT_MCP_AUTO_EDITOR";

/// The server binary as a command, its editor auto-start off.
pub fn server_std() -> std::process::Command {
    let mut cmd = std::process::Command::new(bin());
    cmd.env(AUTO_EDITOR, "off");
    cmd
}

/// [`server_std`] for tokio.
pub fn server_tokio() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin());
    cmd.env(AUTO_EDITOR, "off");
    cmd
}

/// The checked-in demo project.
pub fn demo_project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../godot_project")
}

/// A copy of the demo project in a fresh temp dir, for tests that write.
pub fn demo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&demo_project(), dir.path());
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".godot" {
            continue;
        }
        let ty = entry.file_type().unwrap();
        if ty.is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else if ty.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// A connected MCP client, plus the server's private state dir (journal, lease),
/// which lives as long as the client.
pub struct Client {
    pub service: RunningService<RoleClient, ()>,
    pub state_dir: tempfile::TempDir,
}

impl std::ops::Deref for Client {
    type Target = RunningService<RoleClient, ()>;
    fn deref(&self) -> &Self::Target {
        &self.service
    }
}

impl Client {
    /// Close the session; the server exits when its stdin closes.
    pub async fn cancel(self) -> Result<(), tokio::task::JoinError> {
        self.service.cancel().await.map(|_| ())
    }
}

/// Spawn `godot-mcp serve --project <project>` with a fresh state dir and complete
/// the MCP handshake.
pub async fn connect(project: &Path) -> Client {
    connect_with(project, &[]).await
}

pub async fn connect_with(project: &Path, env: &[(&str, &str)]) -> Client {
    let state_dir = tempfile::tempdir().unwrap();
    connect_in(project, state_dir, env).await
}

/// Like [`connect`], with a given state dir (to restart a server on the same journal).
pub async fn connect_in(
    project: &Path,
    state_dir: tempfile::TempDir,
    env: &[(&str, &str)],
) -> Client {
    connect_bin(&bin(), project, state_dir, env).await
}

/// Like [`connect_in`], with another `godot-mcp` binary (the one a release zip bundles).
pub async fn connect_bin(
    server: &Path,
    project: &Path,
    state_dir: tempfile::TempDir,
    env: &[(&str, &str)],
) -> Client {
    let cmd = serve_command(server, project, state_dir.path(), env);
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(server_stderr())
        .spawn()
        .expect("spawn godot-mcp");
    let service = ().serve(transport).await.expect("MCP handshake");
    Client { service, state_dir }
}

/// `server serve --project <project>` with `state` as its state dir, every toolset, and
/// `env` on top. Every toolset unless the test says otherwise: most tests drive tools
/// outside the default core; a test of the real default passes `(GODOT_MCP_TOOLSETS, "")`.
pub fn serve_command(
    server: &Path,
    project: &Path,
    state: &Path,
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(server);
    cmd.env(AUTO_EDITOR, "off");
    cmd.arg("serve").arg("--project").arg(project);
    cmd.env("GODOT_MCP_STATE_DIR", state);
    cmd.env("GODOT_MCP_TOOLSETS", "all");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The server's stderr: discarded, or shown with `GODOT_MCP_TEST_SERVER_STDERR=1`
/// when debugging a test.
pub fn server_stderr() -> Stdio {
    if std::env::var_os("GODOT_MCP_TEST_SERVER_STDERR").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

/// Connect to a server on a state dir the caller owns (to restart on one journal).
pub async fn connect_path(project: &Path, state_dir: &Path) -> RunningService<RoleClient, ()> {
    let cmd = serve_command(&bin(), project, state_dir, &[]);
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn godot-mcp");
    ().serve(transport).await.expect("MCP handshake")
}

/// Call a tool with JSON arguments; returns the raw result.
pub async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let args: Map<String, Value> = match args {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => panic!("arguments must be an object, got {other}"),
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name} failed at the protocol level: {e}"))
}

/// Call a tool that must succeed; returns the whole result (content blocks too).
pub async fn call_ok_result(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let r = call(client, name, args.clone()).await;
    assert_ne!(
        r.is_error,
        Some(true),
        "{name}({args}) failed: {:?}",
        r.structured_content
    );
    r
}

/// Call a tool that must succeed; returns its structured content.
pub async fn call_ok(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> Value {
    call_ok_result(client, name, args)
        .await
        .structured_content
        .expect("structured content")
}

/// A project holding only a `project.godot` named `name`.
pub fn tiny_project(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("project.godot"),
        format!("config_version=5\n\n[application]\n\nconfig/name=\"{name}\"\n"),
    )
    .unwrap();
    dir
}

/// The debugger's sample game (the script the protocol's captured samples come from):
/// `_process` calls `tick` once a frame, line 14 calls it.
pub const DEBUG_GAME: &str =
    include_str!("../../rust/godot-mcp-protocol/tests/samples/debug_game.gd");

/// A tiny project holding [`DEBUG_GAME`] as `res://scripts/debug_game.gd`, served with
/// the stand-in as Godot and `env`: (project, state dir, client).
pub async fn standin_debug_game(
    name: &str,
    state_prefix: &str,
    env: &[(&str, &str)],
) -> (
    tempfile::TempDir,
    tempfile::TempDir,
    RunningService<RoleClient, ()>,
) {
    let project = tiny_project(name);
    std::fs::create_dir_all(project.path().join("scripts")).unwrap();
    std::fs::write(project.path().join("scripts/debug_game.gd"), DEBUG_GAME).unwrap();
    let state = short_state_dir(state_prefix);
    let (client, _) = serve_standin(project.path(), state.path(), env, Stdio::null()).await;
    (project, state, client)
}

/// Writes `res://scenes/<name>.tscn`: one `node`-named Node running
/// `res://scripts/<name>.gd`, as the editor writes such a scene.
pub fn write_script_scene(project: &Path, name: &str, node: &str) {
    std::fs::write(
        project.join(format!("scenes/{name}.tscn")),
        format!(
            "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://scripts/{name}.gd\" id=\"1\"]\n\n[node name=\"{node}\" type=\"Node\"]\nscript = ExtResource(\"1\")\n"
        ),
    )
    .unwrap();
}

/// A short state dir under /tmp (Unix socket paths are limited to 107 bytes).
pub fn short_state_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .unwrap()
}

/// `serve` on `project` with every toolset, the stand-in godot and `env`; the client
/// and the server's pid.
pub async fn serve_standin(
    project: &Path,
    state: &Path,
    env: &[(&str, &str)],
    stderr: Stdio,
) -> (RunningService<RoleClient, ()>, i32) {
    serve_godot(&standin(), project, state, env, stderr).await
}

/// `serve` on `project` with every toolset, `godot` as its Godot (`GODOT_BIN`) and
/// `env`; the client and the server's pid.
pub async fn serve_godot(
    godot: &Path,
    project: &Path,
    state: &Path,
    env: &[(&str, &str)],
    stderr: Stdio,
) -> (RunningService<RoleClient, ()>, i32) {
    let godot = godot.to_str().expect("a UTF-8 path of godot");
    let env: Vec<_> = std::iter::once(("GODOT_BIN", godot))
        .chain(env.iter().copied())
        .collect();
    let cmd = serve_command(&bin(), project, state, &env);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let pid = transport.id().expect("server pid") as i32;
    (().serve(transport).await.expect("handshake"), pid)
}

/// Call a tool that must fail with a tool error; returns `structuredContent.error`.
pub async fn call_err(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> Value {
    let r = call(client, name, args.clone()).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "{name}({args}) unexpectedly succeeded: {:?}",
        r.structured_content
    );
    r.structured_content.expect("structured content")["error"].clone()
}

/// Start `serve` on `project` with `state` as its state dir, and read its stderr up to
/// the write-gate line (the last line before it serves). Returns the child (stdin
/// piped, so it serves until dropped or killed) and those stderr lines.
pub fn start_and_read_gate(project: &Path, state: &Path) -> (std::process::Child, Vec<String>) {
    use std::io::{BufRead, BufReader};
    let mut child = server_std()
        .args(["serve", "--project"])
        .arg(project)
        .env("GODOT_MCP_STATE_DIR", state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let line = line.trim_end().to_string();
        let done = line.starts_with("godot-mcp serve: write gate");
        lines.push(line);
        if done {
            break;
        }
    }
    // Keep draining: a server whose stderr pipe fills up (or closes) must not be what a
    // test observes.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    (child, lines)
}

/// SIGKILL `pid` and wait until every one of its threads has exited. Only then are its
/// files closed and its project lease released: a zombie thread-group leader can
/// outlive its other threads by the length of an fsync they are blocked in. Unix only
/// (the tests that kill -9 a server are).
#[cfg(unix)]
pub fn kill9_and_wait(pid: u32) {
    if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    }
    let exited = |stat: &str| {
        matches!(
            stat.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        )
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return; // reaped
        };
        let all_exited = tasks
            .flatten()
            .all(|t| std::fs::read_to_string(t.path().join("stat")).map_or(true, |s| exited(&s)));
        if all_exited {
            return;
        }
        std::thread::yield_now();
    }
    panic!("process {pid} did not exit within 30 s of SIGKILL");
}

/// Starts a server over stdio that dies at the failpoint `point` (`GODOT_MCP_CRASH_AT`,
/// `point@n` for its n-th crossing), sends `calls` (tool, arguments) in order on its
/// one session, waits for the server to print `FAILPOINT_REACHED <point>` (nothing
/// else counts as reaching it), and SIGKILLs it. Unix only.
#[cfg(unix)]
pub async fn call_until_failpoint(
    project: &Path,
    state: &Path,
    point: &str,
    calls: Vec<(&'static str, Value)>,
) {
    call_until_failpoint_after(project, state, point, calls, || {}).await
}

/// [`call_until_failpoint`], the calls sent once `ready` returns (it runs on a thread
/// of its own once the server is started: waiting for an editor peer to connect, say).
#[cfg(unix)]
pub async fn call_until_failpoint_after(
    project: &Path,
    state: &Path,
    point: &str,
    calls: Vec<(&'static str, Value)>,
    ready: impl FnOnce() + Send + 'static,
) {
    use tokio::io::AsyncBufReadExt;
    let cmd = serve_command(&bin(), project, state, &[("GODOT_MCP_CRASH_AT", point)]);
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let client = ().serve(transport).await.unwrap();
    let sent = tokio::spawn(async move {
        tokio::task::spawn_blocking(ready).await.unwrap();
        for (tool, args) in calls {
            let request = CallToolRequestParams::new(tool)
                .with_arguments(args.as_object().cloned().unwrap_or_default());
            if client.call_tool(request).await.is_err() {
                break;
            }
        }
        client
    });
    let needle = format!("FAILPOINT_REACHED {point}");
    let mut lines = tokio::io::BufReader::new(stderr.expect("stderr piped")).lines();
    let mut seen = Vec::new();
    loop {
        match lines.next_line().await.unwrap() {
            Some(line) if line == needle => break,
            Some(line) => seen.push(line),
            None => panic!("the server ended without reaching {point}: {seen:?}"),
        }
    }
    kill9_and_wait(pid);
    drop(sent.await);
}

/// The stand-in `godot` executable (crate `godot-mcp-standin`), built once per
/// test binary into the same target dir as `godot-mcp`.
pub fn standin() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let bin = bin();
            let profile_dir = bin.parent().expect("target/<profile>");
            let target_dir = profile_dir.parent().expect("target dir");
            cargo_build("godot-mcp-standin", target_dir);
            let path = profile_dir.join("godot-standin");
            assert!(path.is_file(), "{} missing", path.display());
            path
        })
        .clone()
}

/// Every live process whose command line contains `needle` (zombies excluded).
pub fn processes_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&raw).contains(needle) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next().map(str::to_owned));
        if state.as_deref() != Some("Z") && !stat.is_empty() {
            out.push(pid);
        }
    }
    out
}

/// Live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some(i) = stat.rfind(')') else { continue };
        let f: Vec<&str> = stat[i + 1..].split_whitespace().collect();
        if f.len() > 2 && f[2] == pgid.to_string() && f[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

/// The real Godot editor binary for the real-Godot tier (`GODOT_BIN`), or `None` after
/// printing a SKIPPED line. With `GODOT_MCP_REQUIRE_GODOT=1` (CI) a missing binary is a
/// failure, so a job that has Godot can never go green without running this tier.
///
/// Real-Godot tests are named `real_godot_*`: scripts/test.sh runs them in a step of their
/// own, one at a time and with their output shown, after the rest of the suite.
pub fn godot_bin(what: &str) -> Option<PathBuf> {
    real_binary("GODOT_BIN", what)
}

/// Like [`godot_bin`], for the renderer tier (`GODOT_RENDER_BIN`, a Godot editor with a
/// renderer, run under Xvfb with `DISPLAY` set).
pub fn godot_render_bin(what: &str) -> Option<PathBuf> {
    let bin = real_binary("GODOT_RENDER_BIN", what)?;
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        skip_or_fail(&format!(
            "GODOT_RENDER_BIN is set but DISPLAY is not (start Xvfb: scripts/with-xvfb.sh); {what}"
        ));
        return None;
    }
    Some(bin)
}

fn real_binary(var: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(
                p.is_file(),
                "{var}={} is not a file (the real-Godot tier needs a Godot 4.4+ binary)",
                p.display()
            );
            announce_engine(&p);
            Some(p)
        }
        None => {
            skip_or_fail(&format!("{var} is not set ({what})"));
            None
        }
    }
}

fn skip_or_fail(why: &str) {
    if std::env::var("GODOT_MCP_REQUIRE_GODOT").is_ok_and(|v| v == "1") {
        panic!("GODOT_MCP_REQUIRE_GODOT=1 and a real-Godot test cannot run: {why}");
    }
    eprintln!("SKIPPED: {why}");
}

/// The version `godot --headless --version` prints (its last line), e.g.
/// `4.6.stable.custom_build`; empty if the binary prints none.
pub fn engine_version(godot: &Path) -> String {
    let out = std::process::Command::new(godot)
        .args(["--headless", "--version"])
        .stdin(Stdio::null())
        .output()
        .expect("run godot --version");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Prints which engine a real-Godot test runs against: one `engine: <version> (<path>)`
/// line per test, so a log of the tier run on several engines says which ran where.
pub fn announce_engine(godot: &Path) {
    eprintln!("engine: {} ({})", engine_version(godot), godot.display());
}

/// Installs the add-on (addons/godot_mcp with the GDExtension library this test run
/// built) into `project`. See [`cargo_build`] for when it is built.
pub fn install_addon(project: &Path) {
    let lib = editor_library();
    let addon = project.join("addons/godot_mcp");
    let _ = std::fs::remove_dir_all(&addon);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../addons/godot_mcp"),
        &addon,
    );
    // The folder godot_mcp.gdextension names for this Linux machine.
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        other => other,
    };
    let bin_dir = addon.join("bin").join(format!("linux-{arch}"));
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::copy(lib, bin_dir.join("libgodot_mcp_editor.so")).unwrap();
}

/// The add-on's GDExtension library of this test run's profile, beside `godot-mcp` in the
/// target dir. See [`cargo_build`] for when it is built.
pub fn editor_library() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile_dir = bin().parent().expect("target/<profile>").to_path_buf();
            cargo_build(
                "godot-mcp-editor",
                profile_dir.parent().expect("target dir"),
            );
            let lib = profile_dir.join("libgodot_mcp_editor.so");
            assert!(lib.is_file(), "{} missing", lib.display());
            lib
        })
        .clone()
}

/// A headless Godot editor on `project`, its stdout and stderr written to `log`.
pub fn start_godot_editor(godot: &Path, project: &Path, log: &Path) -> std::process::Child {
    let log = std::fs::File::create(log).unwrap();
    std::process::Command::new(godot)
        .args(["--headless", "--editor", "--path"])
        .arg(project)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("start the Godot editor")
}

/// Runs Godot to completion on `project` with `args` (e.g. `--import`); fails with its
/// output unless it exits 0. Returns stdout and stderr together.
pub fn run_godot(godot: &Path, project: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new(godot)
        .args(["--headless", "--path"])
        .arg(project)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run Godot");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "godot {args:?} failed:\n{log}");
    log
}

/// SIGKILLs an editor started by [`start_godot_editor`] and reaps it.
pub fn kill_godot_editor(editor: &mut std::process::Child) {
    let _ = editor.kill();
    let _ = editor.wait();
}

/// Calls `tool` until the editor's add-on has connected: while the server answers
/// `required: bridge_connected` it waits and calls again (the call changed nothing);
/// any other answer is returned. Fails with the editor's log if the editor exits first;
/// the deadline only bounds a hung editor.
pub async fn call_once_connected(
    client: &RunningService<RoleClient, ()>,
    editor: &mut std::process::Child,
    log: &Path,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let start = std::time::Instant::now();
    loop {
        let r = call(client, tool, args.clone()).await;
        let waiting = r.is_error == Some(true)
            && r.structured_content
                .as_ref()
                .is_some_and(|c| c["error"]["required"] == "bridge_connected");
        if !waiting {
            return r;
        }
        let log_text = || std::fs::read_to_string(log).unwrap_or_default();
        if let Ok(Some(status)) = editor.try_wait() {
            panic!(
                "the editor exited ({status}) before connecting:\n{}",
                log_text()
            );
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(300),
            "the editor never connected:\n{}",
            log_text()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Every file under `dir` (path relative to it, with `/` → bytes), but those in a
/// top-level folder `.godot` (Godot's cache, never tracked) or named in `skip`.
pub fn files_under(dir: &Path, skip: &[&str]) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, rel: &str, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let rel = format!("{rel}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{rel}/"), out);
            } else {
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    let mut all = std::collections::BTreeMap::new();
    walk(dir, "", &mut all);
    all.retain(|rel, _| match rel.split_once('/') {
        Some((top, _)) => top != ".godot" && !skip.contains(&top),
        None => true,
    });
    all
}

/// Builds `package` (a binary or library the tests run but do not link) into the tests'
/// target dir. scripts/test.sh has already built the whole workspace with the same flags
/// as its tests and says so with `GODOT_MCP_TEST_PREBUILT=1`; building again here with
/// other flags would unify other features and rebuild crates, so then nothing is built.
/// A plain `cargo test` builds it here (a no-op build when it is current).
fn cargo_build(package: &str, target_dir: &Path) {
    if std::env::var("GODOT_MCP_TEST_PREBUILT").is_ok_and(|v| v == "1") {
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--quiet", "-p", package, "--target-dir"])
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|e| panic!("run cargo build -p {package}: {e}"));
    assert!(status.success(), "cargo build -p {package} failed");
}

/// The live session's control socket, found under the state dir (an ended launch's
/// session folder, socket file and all, is moved under `archive/`: not searched).
pub fn control_socket(state: &Path) -> std::path::PathBuf {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == "c.sock") {
                out.push(p);
            } else if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != "archive" {
                walk(&p, out);
            }
        }
    }
    let mut found = Vec::new();
    walk(state, &mut found);
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// The row of `txn` in a list_transactions result.
pub fn transaction_row(t: &Value, txn: &str) -> Value {
    t["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["transaction_id"] == txn)
        .unwrap_or_else(|| panic!("no transaction {txn} in {t}"))
        .clone()
}

/// The editor bridge's discovery file of `project`, once the server has written it.
pub fn wait_discovery(project: &Path) -> godot_mcp_protocol::Discovery {
    let path = project.join(".godot/godot_mcp/bridge.json");
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(d) = serde_json::from_str(&text)
        {
            return d;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("no discovery file at {}", path.display());
}

/// Connects to the bridge as the add-on would and sends a hello carrying `token`:
/// the writing half, the reading half, and the server's first answer line.
pub fn bridge_hello(
    d: &godot_mcp_protocol::Discovery,
    token: &str,
) -> (
    std::net::TcpStream,
    std::io::BufReader<std::net::TcpStream>,
    String,
) {
    use std::io::{BufRead, Write};
    let stream = std::net::TcpStream::connect(&d.endpoint).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let hello = godot_mcp_protocol::AddonMessage::Hello(godot_mcp_protocol::Hello {
        protocol_version: godot_mcp_protocol::BRIDGE_PROTOCOL_VERSION,
        addon_version: "peer".into(),
        godot_version: "4.4.1.stable.custom_build".parse().unwrap(),
        token: token.into(),
    });
    writer
        .write_all(format!("{}\n", serde_json::to_string(&hello).unwrap()).as_bytes())
        .unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    (writer, reader, line)
}

/// The sha256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// `text` with its sub-resource ids replaced by their order (`S0`, `S1`, …): Godot draws
/// them at random, so two files of one layout or graph differ only there.
pub fn normalize_sub_ids(text: &str) -> String {
    let mut out = text.to_string();
    let mut n = 0;
    for line in text.lines() {
        if line.starts_with("[sub_resource ")
            && let Some(start) = line.find(" id=\"")
        {
            let id = &line[start + 5..line.len() - 2];
            out = out.replace(&format!("\"{id}\""), &format!("\"S{n}\""));
            n += 1;
        }
    }
    out
}

/// A PNG image a tool answered with, decoded.
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
    /// How many distinct colours its pixels hold.
    pub colours: usize,
}

/// The first content of `r`, which must be a PNG image, decoded.
pub fn png_picture(r: &CallToolResult) -> Picture {
    let wire = serde_json::to_value(&r.content[0]).unwrap();
    assert_eq!(wire["type"], "image", "{wire}");
    assert_eq!(wire["mimeType"], "image/png", "{wire}");
    let bytes = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        wire["data"].as_str().unwrap(),
    )
    .expect("base64 image data");
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).expect("a PNG frame");
    pixels.truncate(info.buffer_size());
    let colours = pixels
        .chunks(info.color_type.samples())
        .collect::<std::collections::HashSet<_>>()
        .len();
    Picture {
        width: info.width,
        height: info.height,
        pixels,
        colours,
    }
}

/// Fails when the editor's log at `log` records a panic.
pub fn assert_no_panic_logged(log: &Path) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    assert!(
        !text.to_lowercase().contains("panic"),
        "a panic was logged:\n{text}"
    );
}

/// Connects as the add-on and answers every request with `answer`; returns the requests
/// seen once the server closes the connection.
pub fn addon_peer(
    d: &godot_mcp_protocol::Discovery,
    answer: impl Fn(&godot_mcp_protocol::Request) -> Value + Send + 'static,
) -> std::thread::JoinHandle<Vec<godot_mcp_protocol::Request>> {
    addon_peer_with(d, move |r| Act::Answer(answer(r)))
}

/// What a stand-in add-on does with one request.
pub enum Act {
    Answer(Value),
    /// Answer with this error (`{code, message, effect?}`).
    Fail(Value),
    /// Answer after this long (a slow editor; the delay is the fault under test).
    Late(std::time::Duration, Value),
    /// Close the connection without answering.
    Drop,
}

/// Connects as the add-on and serves requests with `act` until told to drop or the
/// server closes the connection; returns the requests seen.
pub fn addon_peer_with(
    d: &godot_mcp_protocol::Discovery,
    act: impl Fn(&godot_mcp_protocol::Request) -> Act + Send + 'static,
) -> std::thread::JoinHandle<Vec<godot_mcp_protocol::Request>> {
    let (writer, reader, line) = bridge_hello(d, &d.token);
    assert!(line.contains("accepted"), "{line}");
    std::thread::spawn(move || serve_peer(writer, reader, &act, &mut |_| {}))
}

/// The request loop of a stand-in add-on: each request answered as `act` says, each
/// status frame handed to `status`. Returns the requests seen when the connection ends.
fn serve_peer(
    mut writer: std::net::TcpStream,
    mut reader: std::io::BufReader<std::net::TcpStream>,
    act: &dyn Fn(&godot_mcp_protocol::Request) -> Act,
    status: &mut dyn FnMut(godot_mcp_protocol::ServerStatus),
) -> Vec<godot_mcp_protocol::Request> {
    use godot_mcp_protocol::{AddonMessage, Outcome, Reply, ServerMessage};
    use std::io::{BufRead, Write};
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return seen;
        }
        let r = match serde_json::from_str(&line) {
            Ok(ServerMessage::Request(r)) => r,
            Ok(ServerMessage::Status(s)) => {
                status(s);
                continue;
            }
            _ => continue,
        };
        seen.push(r.clone());
        let (delay, outcome) = match act(&r) {
            Act::Answer(v) => (std::time::Duration::ZERO, Outcome::Ok(v)),
            Act::Late(d, v) => (d, Outcome::Ok(v)),
            Act::Fail(e) => (
                std::time::Duration::ZERO,
                Outcome::Error(serde_json::from_value(e).unwrap()),
            ),
            Act::Drop => return seen,
        };
        std::thread::sleep(delay);
        let reply = AddonMessage::Reply(Reply { id: r.id, outcome });
        if writer
            .write_all(format!("{}\n", serde_json::to_string(&reply).unwrap()).as_bytes())
            .is_err()
        {
            return seen;
        }
    }
}

/// A stand-in editor's scene and named undo history, answering `editor.state`,
/// `scene.steps` (set steps; `check_only` checks only), `editor.history` and
/// `editor.undo` (with `action`: only when it is the current one) with the add-on's
/// message forms (rust/godot-mcp-editor/src/exec.rs, steps.rs).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SimEditor {
    /// `node:property` → value.
    pub props: std::collections::BTreeMap<String, Value>,
    /// Actions: name and each set's (key, old, new).
    pub actions: Vec<(String, Vec<SimSet>)>,
    /// How many actions are applied (the current one is `done - 1`).
    pub done: usize,
    pub version: u64,
    /// The scene's root instance id (the add-on's `root_id`).
    pub root_id: i64,
}

/// One set of a [`SimEditor`] action: `node:property`, old value, new value.
pub type SimSet = (String, Value, Value);

/// The scene a [`SimEditor`] has open.
pub const SIM_SCENE: &str = "res://main.tscn";

impl SimEditor {
    fn verdict() -> Value {
        serde_json::json!({"persisted": false, "reason": "unsaved", "undoable": true,
                           "undo_hint": "editor_undo", "scene": SIM_SCENE})
    }

    /// The answer to one request.
    pub fn answer(&mut self, r: &godot_mcp_protocol::Request) -> Act {
        use serde_json::json;
        let fail =
            |m: String| Act::Fail(json!({"code": "failed", "message": m, "effect": "unchanged"}));
        // A request naming its scene (and root) runs only there, as the add-on's
        // `OnScene::check`.
        let named = r.params.get("scene").and_then(Value::as_str);
        let root = r.params.get("root_id").and_then(Value::as_i64);
        if named.is_some_and(|s| s != SIM_SCENE) || root.is_some_and(|id| id != self.root_id) {
            return Act::Fail(json!({"code": "scene_mismatch", "effect": "unchanged",
                "message": format!("this request is for {named:?}; nothing was done")}));
        }
        match r.cmd.as_str() {
            "editor.state" => Act::Answer(json!({"active_scene": SIM_SCENE,
                "root_id": self.root_id, "open_scenes": [SIM_SCENE]})),
            "scene.steps" => {
                let p = &r.params;
                let steps = p["steps"].as_array().cloned().unwrap_or_default();
                let mut sets = Vec::new();
                for (i, step) in steps.iter().enumerate() {
                    if step["op"] != "set" {
                        return fail(format!("steps[{i}]: the stand-in editor sets only"));
                    }
                    let key = format!(
                        "{}:{}",
                        step["node"].as_str().unwrap(),
                        step["property"].as_str().unwrap()
                    );
                    let old = self.props.get(&key).cloned().unwrap_or(Value::Null);
                    sets.push((key, old, step["value"].clone()));
                }
                let mut out = Self::verdict();
                out["steps"] = json!(steps.len());
                if p["check_only"] == true {
                    return Act::Answer(out);
                }
                for (k, _, new) in &sets {
                    self.props.insert(k.clone(), new.clone());
                }
                self.actions.truncate(self.done);
                let action = p["action"].as_str().unwrap().to_owned();
                self.actions.push((action.clone(), sets));
                self.done = self.actions.len();
                self.version += 1;
                out["action"] = json!(action);
                out["nodes"] = json!([]);
                Act::Answer(out)
            }
            "editor.history" => Act::Answer(json!({
                "scene": SIM_SCENE,
                "root_id": self.root_id,
                "version": self.version,
                "has_undo": self.done > 0,
                "has_redo": self.done < self.actions.len(),
                "current_action": self.done as i64 - 1,
                "actions": self.actions.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            })),
            "editor.undo" => {
                if self.done == 0 {
                    return fail("nothing to undo".into());
                }
                let name = self.actions[self.done - 1].0.clone();
                if let Some(only) = r.params.get("action").and_then(Value::as_str)
                    && only != name
                {
                    return fail(format!(
                        "the current action is {name:?}, not {only:?}; nothing was undone"
                    ));
                }
                self.done -= 1;
                for (k, old, _) in self.actions[self.done].1.clone().into_iter().rev() {
                    if old.is_null() {
                        self.props.remove(&k);
                    } else {
                        self.props.insert(k, old);
                    }
                }
                self.version += 1;
                let mut out = Self::verdict();
                out["action"] = json!(name);
                out["version"] = json!(self.version);
                Act::Answer(out)
            }
            other => fail(format!("the stand-in editor does not run {other}")),
        }
    }
}

/// A stand-in editor that finds its server the way the add-on does (the project's
/// bridge.json) and, when the connection ends, reads it again and reconnects to the
/// next server (a new token) until `stop` is set. Each connection and each status
/// frame are reported on `events`.
pub fn sim_editor_peer(
    project: &Path,
    editor: std::sync::Arc<std::sync::Mutex<SimEditor>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    events: std::sync::mpsc::Sender<PeerEvent>,
) -> std::thread::JoinHandle<()> {
    use std::sync::atomic::Ordering;
    let path = project.join(godot_mcp_protocol::DISCOVERY_RELATIVE_PATH);
    std::thread::spawn(move || {
        let mut last_token = String::new();
        while !stop.load(Ordering::SeqCst) {
            let found = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<godot_mcp_protocol::Discovery>(&t).ok())
                .filter(|d| d.token != last_token);
            let Some(d) = found else {
                // The add-on polls for its server the same way.
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            };
            if std::net::TcpStream::connect(&d.endpoint).is_err() {
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            }
            last_token = d.token.clone();
            let (writer, reader, line) = bridge_hello(&d, &d.token);
            if !line.contains("accepted") {
                continue;
            }
            let _ = events.send(PeerEvent::Connected);
            let ed = editor.clone();
            let tx = events.clone();
            serve_peer(
                writer,
                reader,
                &move |r| ed.lock().unwrap().answer(r),
                &mut |s| {
                    let _ = tx.send(PeerEvent::Status(s));
                },
            );
        }
    })
}

/// What [`sim_editor_peer`] saw.
#[derive(Debug)]
pub enum PeerEvent {
    Connected,
    Status(godot_mcp_protocol::ServerStatus),
}

/// A dry run's verdict against its real run's: equal, except that where the real run is
/// on disk the preview says `persisted: false`, its reason the real one's after "a dry
/// run writes nothing; applied: " (a dry run writes nothing, and never reads as done).
pub fn assert_preview_verdict(preview: &Value, real: &Value, what: &str) {
    let (persisted, reason) = if real["persisted"] == true {
        (
            Value::Bool(false),
            Value::String(format!(
                "a dry run writes nothing; applied: {}",
                real["reason"].as_str().unwrap_or_default()
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
        "{what}: preview {preview} real {real}"
    );
}

/// A `.tscn`/`.tres` text with what differs between the engines we test left out of its
/// `[…]` header lines: Godot 4.6 gives every node a `unique_id=N` and writes no
/// `load_steps=N` (4.4 writes the one and not the other). Both engines load both forms.
#[allow(dead_code)]
pub fn engine_neutral(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if !line.starts_with('[') {
            out.push_str(line);
            continue;
        }
        let mut rest = line;
        while let Some(at) = [" unique_id=", " load_steps="]
            .iter()
            .filter_map(|k| rest.find(k).map(|i| (i, k.len())))
            .min()
        {
            let (start, key) = at;
            let digits = rest[start + key..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len() - start - key);
            out.push_str(&rest[..start]);
            rest = &rest[start + key + digits..];
        }
        out.push_str(rest);
    }
    out
}
