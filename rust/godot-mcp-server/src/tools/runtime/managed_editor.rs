//! The managed editor: `start_editor`/`stop_editor`, `serve --editor`, and the editing
//! tools' start of it when none is connected (`auto_start_editor`), with the `/proc` scan
//! for another editor on the project.

use super::common::NoArgs;
use super::sessions::{Launched, StoppedSession, launched};
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{LaunchSpec, STOP_GRACE, Session};
use crate::state::AppState;
use crate::tools::kit::editor::{
    EDITOR_LOAD_WAIT, addon_installed, bridge_connected, managed_editor,
};
use crate::tools::kit::game::display::{self, DisplayAsk, DisplayMode, RenderingDriver};
use crate::tools::kit::game::session::end_report;
use crate::tools::kit::godot_process::godot;
use crate::tools::{Call, Out};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// Launches the managed editor headless (`serve --editor`).
pub(crate) async fn launch_editor(state: &Arc<AppState>) -> Result<Arc<Session>, ToolError> {
    launch_editor_with(state, true, None).await
}

/// Launches the managed editor, headless or in a window on this machine's display.
async fn launch_editor_with(
    state: &Arc<AppState>,
    headless: bool,
    driver: Option<RenderingDriver>,
) -> Result<Arc<Session>, ToolError> {
    if let Some(s) = managed_editor(state) {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            format!("A managed editor is already running (session {}).", s.txn),
        )
        .hint("Stop it with stop_editor first."));
    }
    let program = godot(state)?;
    let mut args = vec!["-e".to_string()];
    let mode = DisplayMode {
        headless,
        why: String::new(),
    };
    let ask = DisplayAsk {
        driver,
        ..DisplayAsk::default()
    };
    args.extend(display::engine_args(&mode, ask));
    args.extend(["--path".into(), state.project.root().display().to_string()]);
    state
        .process
        .launch(
            state,
            LaunchSpec {
                purpose: "editor",
                program,
                args,
                user_args: vec![],
                tool_family: "runtime",
                operation: "start_editor",
                parent: None,
                writes_disk: false,
            },
        )
        .await
}

/// `serve --editor`: the managed editor, started now and said on stderr (a failure is
/// said, not fatal: the first editing call then starts one or refuses as it would).
pub(crate) async fn start_managed_editor(state: &Arc<AppState>) {
    match launch_editor(state).await {
        Ok(s) => crate::say!(
            "godot-mcp serve: managed editor started (session {}, pid {})",
            s.txn,
            s.receipt.pid
        ),
        Err(e) => crate::say!("godot-mcp serve: managed editor not started: {}", e.message),
    }
}

/// An editing tool found no editor connected: start this server's managed headless
/// editor, as start_editor would, and let the call wait for it (`connected` waits for a
/// managed editor still loading). Only when the operator left it on
/// (`GODOT_MCP_AUTO_EDITOR`), the bridge is up, the project has the add-on enabled,
/// Godot is found, and no other Godot editor runs on the project (two editors on one
/// project overwrite each other's files). Anything else leaves the call to refuse as it
/// did, naming start_editor. Answers the session it started.
pub(crate) async fn auto_start_editor(state: &Arc<AppState>) -> Option<Arc<Session>> {
    if !state.config.auto_editor
        || state.editor.bridge().is_none()
        || bridge_connected(state)
        || managed_editor(state).is_some()
        || !addon_enabled(state)
        || godot(state).is_err()
    {
        return None;
    }
    if let Some(pid) = other_editor_on(state.project.root()) {
        tracing::info!(
            pid,
            "not starting an editor: another Godot editor runs on this project"
        );
        return None;
    }
    match launch_editor(state).await {
        Ok(s) => {
            tracing::info!(session = %s.txn, pid = s.receipt.pid, "editor tool: managed editor started");
            Some(s)
        }
        Err(e) => {
            tracing::warn!(error = %e.message, "editor tool: managed editor not started");
            None
        }
    }
}

/// The add-on is installed and enabled in project.godot (else an editor would start and
/// never say hello).
fn addon_enabled(state: &AppState) -> bool {
    addon_installed(state)
        && std::fs::read_to_string(state.project.root().join("project.godot")).is_ok_and(|t| {
            t.lines().any(|l| {
                l.trim_start().starts_with("enabled=")
                    && l.contains("res://addons/godot_mcp/plugin.cfg")
            })
        })
}

/// A Godot editor process (`-e`/`--editor`) on `root` (its `--path`, else its working
/// folder), found in /proc; `None` where there is no /proc.
#[cfg(unix)]
pub(crate) fn other_editor_on(root: &std::path::Path) -> Option<u32> {
    let root = std::fs::canonicalize(root).ok()?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = raw.split(|b| *b == 0).collect();
        if editor_on(&args, &root, || {
            std::fs::read_link(entry.path().join("cwd")).ok()
        }) {
            return Some(pid);
        }
    }
    None
}

/// No /proc to look in (Windows): none found.
#[cfg(not(unix))]
pub(crate) fn other_editor_on(_root: &std::path::Path) -> Option<u32> {
    None
}

/// Whether a command line is a Godot editor on `root`: its program's name holds
/// "godot", it has `-e`/`--editor`, and its `--path` (else `cwd()`) is `root`.
#[cfg(unix)]
fn editor_on(
    args: &[&[u8]],
    root: &std::path::Path,
    cwd: impl FnOnce() -> Option<std::path::PathBuf>,
) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let os = |b: &[u8]| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b));
    let Some(program) = args.first() else {
        return false;
    };
    let name = os(program)
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if !name.contains("godot") || !args.iter().any(|a| *a == b"-e" || *a == b"--editor") {
        return false;
    }
    let path = args
        .windows(2)
        .find(|w| w[0] == b"--path")
        .map(|w| os(w[1]))
        .or_else(cwd);
    path.and_then(|p| std::fs::canonicalize(p).ok())
        .is_some_and(|p| p == root)
}

/// The running managed editor.
/// How long start_editor waits for the add-on's hello.
const EDITOR_START_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditorArgs {
    /// false: a window on this machine's display (editor screenshots need one); default
    /// true.
    #[serde(default)]
    headless: Option<bool>,
    /// Godot's --rendering-driver (with headless: false).
    #[serde(default)]
    rendering_driver: Option<RenderingDriver>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EditorStarted {
    #[serde(flatten)]
    pub launched: Launched,
    pub receipt_durable: bool,
    pub display: DisplayMode,
    /// The add-on said hello: editor tools work now.
    pub ready: bool,
    /// Why it is not ready yet, and what the next editor call does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loading: Option<String>,
}

pub(super) async fn start_editor(Call { state, args, .. }: Call<EditorArgs>) -> Out<EditorStarted> {
    let headless = args.headless.unwrap_or(true);
    if headless && args.rendering_driver.is_some() {
        return Err(ToolError::invalid_params(
            "rendering_driver",
            "rendering_driver needs a window: pass headless: false with it",
        ));
    }
    let display = match (headless, display::machine_display()) {
        (true, _) => DisplayMode {
            headless: true,
            why: if args.headless.is_some() {
                "asked (headless: true)".into()
            } else {
                "the managed editor's default (headless: false opens a window)".into()
            },
        },
        (false, Some(d)) => DisplayMode {
            headless: false,
            why: format!("asked (headless: false); {d}"),
        },
        (false, None) => DisplayMode {
            headless: false,
            why: "asked (headless: false), though DISPLAY and WAYLAND_DISPLAY are unset".into(),
        },
    };
    let s = launch_editor_with(&state, headless, args.rendering_driver).await?;
    let (ready, loading) = if !addon_installed(&state) {
        (
            false,
            Some(
                "the godot_mcp add-on is not installed in this project \
                 (addons/godot_mcp/plugin.cfg): editor tools stay unavailable"
                    .to_string(),
            ),
        )
    } else {
        // Ready once the add-on's hello reached this server's bridge; an editor that
        // ends first answers with how it ended and what it printed.
        let deadline = tokio::time::Instant::now() + EDITOR_START_WAIT;
        let mut ended = None;
        while tokio::time::Instant::now() < deadline && !bridge_connected(&state) {
            if let Some(e) = s.wait(Duration::from_millis(50)).await {
                ended = Some(e);
                break;
            }
        }
        if let Some(e) = ended.filter(|_| !bridge_connected(&state)) {
            return Err(display::exited_early("The editor", &s, &e, Some(&display)));
        }
        if bridge_connected(&state) {
            (true, None)
        } else {
            (
                false,
                Some(format!(
                    "still loading after {} s: the next editor call waits for it (up to {} s \
                     after its start)",
                    EDITOR_START_WAIT.as_secs(),
                    EDITOR_LOAD_WAIT.as_secs()
                )),
            )
        }
    };
    Ok(EditorStarted {
        launched: launched(&s),
        receipt_durable: true,
        display,
        ready,
        loading,
    })
}

pub(super) async fn stop_editor(Call { state, .. }: Call<NoArgs>) -> Out<StoppedSession> {
    let Some(s) = managed_editor(&state) else {
        return Err(
            ToolError::new(ErrorCode::ResourceNotFound, "No managed editor is running.")
                .hint("Start one with start_editor."),
        );
    };
    let ended = s.stop(STOP_GRACE).await;
    Ok(StoppedSession {
        session_id: s.txn.to_string(),
        end: ended.as_ref().map(end_report),
    })
}

#[cfg(test)]
mod tests {
    /// A Godot editor on the project is found by its `--path` or, without one, its
    /// working folder; a game, another project or another program is not.
    #[cfg(unix)]
    #[test]
    fn an_editor_on_the_project_is_recognised() {
        use super::editor_on;
        let root = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let r = root.path().to_str().unwrap().as_bytes();
        let o = other.path().to_str().unwrap().as_bytes();
        let none = || None;
        let at_root = || Some(root.path().to_path_buf());
        let godot: &[u8] = b"/opt/Godot_v4.4.1-stable_linux.x86_64";
        assert!(editor_on(
            &[godot, b"--headless", b"-e", b"--path", r],
            root.path(),
            none
        ));
        assert!(editor_on(
            &[godot, b"--editor", b"--path", r],
            root.path(),
            none
        ));
        assert!(editor_on(&[godot, b"-e"], root.path(), at_root));
        assert!(
            !editor_on(&[godot, b"--path", r], root.path(), none),
            "a game"
        );
        assert!(!editor_on(
            &[godot, b"-e", b"--path", o],
            root.path(),
            at_root
        ));
        assert!(!editor_on(
            &[b"/usr/bin/vim", b"-e", b"--path", r],
            root.path(),
            none
        ));
        assert!(!editor_on(&[], root.path(), at_root));
    }
}
