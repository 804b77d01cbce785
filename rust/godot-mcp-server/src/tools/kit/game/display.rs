//! Whether a game (or the managed editor) runs with a renderer or headless, and why;
//! the renderer overrides Godot's command line takes; what an early exit printed.
//!
//! The rule (docs/playtesting.md "Display"): headless when asked (`headless: true`), when
//! the machine has no display (`DISPLAY` and `WAYLAND_DISPLAY` unset or empty), or when
//! the Godot build has no display driver but `headless` (its `--help` lists the drivers
//! it was built with); otherwise rendered. `headless: false` or a renderer override
//! asks for a renderer whatever the machine has.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{Ended, Session};
use crate::state::AppState;
use crate::tools::kit::godot_process::{run_supervised, tail, tail_lines};

/// Godot's `--rendering-driver` (which graphics API).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RenderingDriver {
    Vulkan,
    Opengl3,
    Opengl3Es,
    D3d12,
    Metal,
}

impl RenderingDriver {
    fn arg(self) -> &'static str {
        match self {
            Self::Vulkan => "vulkan",
            Self::Opengl3 => "opengl3",
            Self::Opengl3Es => "opengl3_es",
            Self::D3d12 => "d3d12",
            Self::Metal => "metal",
        }
    }
}

/// Godot's `--rendering-method` (which renderer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RenderingMethod {
    ForwardPlus,
    Mobile,
    GlCompatibility,
}

impl RenderingMethod {
    fn arg(self) -> &'static str {
        match self {
            Self::ForwardPlus => "forward_plus",
            Self::Mobile => "mobile",
            Self::GlCompatibility => "gl_compatibility",
        }
    }
}

/// What was asked of the display.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DisplayAsk {
    pub headless: Option<bool>,
    pub driver: Option<RenderingDriver>,
    pub method: Option<RenderingMethod>,
}

/// How a process runs: headless or with a renderer, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct DisplayMode {
    pub headless: bool,
    pub why: String,
}

/// The display this server's environment names (`DISPLAY`, else `WAYLAND_DISPLAY`), as
/// `NAME=value`; an empty value is none.
pub(crate) fn machine_display() -> Option<String> {
    ["DISPLAY", "WAYLAND_DISPLAY"].iter().find_map(|name| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| format!("{name}={v}"))
    })
}

/// The rule, given the machine's display and whether the build renders (`None`: not
/// asked, because no display or an explicit choice made it moot).
pub(crate) fn decide(
    ask: DisplayAsk,
    display: Option<&str>,
    build_renders: Option<bool>,
) -> Result<DisplayMode, ToolError> {
    let overridden = ask.driver.is_some() || ask.method.is_some();
    let mode = |headless, why: String| Ok(DisplayMode { headless, why });
    match (ask.headless, display) {
        (Some(true), _) if overridden => Err(ToolError::invalid_params(
            "headless",
            "rendering_driver and rendering_method need a renderer; drop them or headless: true",
        )),
        (Some(true), _) => mode(true, "asked (headless: true)".into()),
        (Some(false), Some(d)) => mode(false, format!("asked (headless: false); {d}")),
        (Some(false), None) => mode(
            false,
            "asked (headless: false), though DISPLAY and WAYLAND_DISPLAY are unset".into(),
        ),
        (None, None) if overridden => mode(
            false,
            "a renderer override was given, though DISPLAY and WAYLAND_DISPLAY are unset".into(),
        ),
        (None, None) => mode(
            true,
            "no display: DISPLAY and WAYLAND_DISPLAY are unset (pass headless: false to try \
             anyway)"
                .into(),
        ),
        (None, Some(d)) if overridden => mode(false, format!("a renderer override was given; {d}")),
        (None, Some(d)) if build_renders == Some(false) => mode(
            true,
            format!(
                "{d} is set, but this Godot build has no display driver but headless (its \
                 --help lists only headless)"
            ),
        ),
        (None, Some(d)) => mode(false, format!("{d} is set")),
    }
}

/// Godot's engine arguments for `mode` and the overrides.
pub(crate) fn engine_args(mode: &DisplayMode, ask: DisplayAsk) -> Vec<String> {
    let mut args = Vec::new();
    if mode.headless {
        args.push("--headless".to_string());
    }
    if let Some(d) = ask.driver {
        args.extend(["--rendering-driver".to_string(), d.arg().to_string()]);
    }
    if let Some(m) = ask.method {
        args.extend(["--rendering-method".to_string(), m.arg().to_string()]);
    }
    args
}

/// The display drivers a Godot `--help` lists: the quoted names of its
/// `--display-driver` line outside parentheses (those are rendering drivers), e.g.
/// `["x11", "headless"]` from `["x11" ("opengl3", "opengl3_es"), "headless" ("dummy")]`.
pub(crate) fn display_drivers(help: &str) -> Option<Vec<String>> {
    let line = help.lines().find(|l| l.contains("--display-driver"))?;
    let list = &line[line.find('[')?..];
    let mut names = Vec::new();
    let mut depth = 0u32;
    let mut quoted: Option<String> = None;
    for c in list.chars() {
        match (c, quoted.as_mut()) {
            ('"', Some(_)) => {
                let name = quoted.take().unwrap_or_default();
                if depth == 0 {
                    names.push(name);
                }
            }
            (c, Some(q)) => q.push(c),
            ('"', None) => quoted = Some(String::new()),
            ('(', None) => depth += 1,
            (')', None) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Some(names)
}

/// Whether the Godot build at `program` has a display driver other than `headless`,
/// from its `--help` (asked once per build: path, size and modification time). `None`
/// when its help names no drivers (an unknown build: taken as rendering).
async fn build_renders(state: &Arc<AppState>, program: &Path) -> Option<bool> {
    type Key = (PathBuf, u64, Option<SystemTime>);
    static KNOWN: Mutex<Option<HashMap<Key, Option<bool>>>> = Mutex::new(None);
    let meta = std::fs::metadata(program).ok()?;
    let key = (program.to_path_buf(), meta.len(), meta.modified().ok());
    if let Some(known) = KNOWN.lock().as_ref().and_then(|m| m.get(&key)) {
        return *known;
    }
    let (_, stdout, stderr) = run_supervised(
        state,
        program.to_path_buf(),
        vec!["--headless".into(), "--help".into()],
        "engine_help",
        Duration::from_secs(30),
    )
    .await
    .ok()?;
    let renders = display_drivers(&format!("{stdout}\n{stderr}"))
        .filter(|d| !d.is_empty())
        .map(|d| d.iter().any(|n| n != "headless"));
    KNOWN
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(key, renders);
    renders
}

/// The display mode of a launch of `program` on this machine.
pub(crate) async fn mode_for(
    state: &Arc<AppState>,
    program: &Path,
    ask: DisplayAsk,
) -> Result<DisplayMode, ToolError> {
    let display = machine_display();
    // The build is asked only where its answer decides.
    let auto = ask.headless.is_none() && ask.driver.is_none() && ask.method.is_none();
    let renders = if auto && display.is_some() {
        build_renders(state, program).await
    } else {
        None
    };
    decide(ask, display.as_deref(), renders)
}

/// Most lines, and bytes, of each stream an early exit reports.
const EXIT_TAIL_LINES: usize = 20;
const EXIT_TAIL_BYTES: usize = 2048;

/// The last lines of a stream of `session`'s output (at most [`EXIT_TAIL_LINES`] and
/// [`EXIT_TAIL_BYTES`]).
fn output_tail(session: &Session, stream: &str) -> String {
    let text = std::fs::read(session.output_dir().join(stream))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines = tail_lines(text.trim_end(), EXIT_TAIL_LINES);
    tail(&lines, EXIT_TAIL_BYTES).0.to_string()
}

/// How `e` ended, in words.
pub(crate) fn ended_words(e: &Ended) -> String {
    match (e.code, e.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "no exit status".into(),
    }
}

/// The error of a `what` (the game, the editor) that ended before it was ready: its
/// exit code and the last lines of its output, in the message and in `details`.
pub(crate) fn exited_early(
    what: &str,
    session: &Session,
    ended: &Ended,
    mode: Option<&DisplayMode>,
) -> ToolError {
    let stderr = output_tail(session, "stderr.log");
    let stdout = output_tail(session, "stdout.log");
    let shown = if stderr.trim().is_empty() {
        &stdout
    } else {
        &stderr
    };
    let last: Vec<&str> = shown.lines().rev().take(8).collect();
    let last: Vec<&str> = last.into_iter().rev().collect();
    let mut message = format!(
        "{what} exited ({}) after {} ms, before it was ready (session {}).",
        ended_words(ended),
        ended.ran_ms,
        session.txn
    );
    if let Some(m) = mode {
        message.push_str(&format!(
            " It ran {} ({}).",
            if m.headless {
                "headless"
            } else {
                "with a renderer"
            },
            m.why
        ));
    }
    if last.is_empty() {
        message.push_str(" It printed nothing.");
    } else {
        message.push_str(" Its last lines:\n");
        message.push_str(&last.join("\n"));
    }
    ToolError::new(ErrorCode::PreconditionFailed, message)
        .required("process_running")
        .hint(
            "Fix what its output names (a renderer the machine lacks: pass rendering_driver, \
             e.g. opengl3, or headless: true), then start it again.",
        )
        .details(serde_json::json!({
            "session_id": session.txn.to_string(),
            "exit_code": ended.code,
            "signal": ended.signal,
            "ran_ms": ended.ran_ms,
            "stderr_tail": stderr,
            "stdout_tail": stdout,
            "display": mode,
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_display_drivers_are_read_from_godot_s_help() {
        let render = "  --display-driver <driver>  R  Display driver (and rendering driver) \
                      [\"x11\" (\"opengl3\", \"opengl3_es\"), \"headless\" (\"dummy\")].";
        assert_eq!(display_drivers(render).unwrap(), ["x11", "headless"]);
        let headless = "--display-driver <driver> Display driver (and rendering driver) \
                        [\"headless\" (\"dummy\")].";
        assert_eq!(display_drivers(headless).unwrap(), ["headless"]);
        assert_eq!(display_drivers("no such line"), None);
    }

    /// Headless only when asked, without a display, or with a build that cannot render;
    /// an override asks for a renderer; a contradiction is refused.
    #[test]
    fn a_game_renders_whenever_the_machine_has_a_display() {
        let auto = DisplayAsk::default();
        let d = Some("DISPLAY=:1");
        assert!(!decide(auto, d, Some(true)).unwrap().headless);
        assert!(!decide(auto, d, None).unwrap().headless);
        let no_renderer = decide(auto, d, Some(false)).unwrap();
        assert!(no_renderer.headless && no_renderer.why.contains("only headless"));
        let none = decide(auto, None, None).unwrap();
        assert!(none.headless && none.why.contains("no display"), "{none:?}");
        let asked = DisplayAsk {
            headless: Some(true),
            ..auto
        };
        assert!(decide(asked, d, Some(true)).unwrap().headless);
        let driver = DisplayAsk {
            driver: Some(RenderingDriver::Opengl3),
            ..auto
        };
        let m = decide(driver, None, None).unwrap();
        assert!(!m.headless);
        assert_eq!(engine_args(&m, driver), ["--rendering-driver", "opengl3"]);
        let both = DisplayAsk {
            headless: Some(true),
            ..driver
        };
        assert_eq!(
            decide(both, d, None).unwrap_err().code,
            ErrorCode::InvalidParams
        );
        let method = DisplayAsk {
            method: Some(RenderingMethod::GlCompatibility),
            ..auto
        };
        let m = decide(method, d, Some(false)).unwrap();
        assert_eq!(
            engine_args(&m, method),
            ["--rendering-method", "gl_compatibility"]
        );
    }
}
