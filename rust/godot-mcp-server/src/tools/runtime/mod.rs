//! Runtime tools: supervised Godot processes (the process plane). Every launch
//! is a `process_launch` transaction whose receipt is durable before the tool
//! answers; see `planes::process`.
//!
//! - `sessions`: run_and_capture, play/stop/list sessions, the managed editor.
//! - `probe`: the running game through its probe (input, screenshots, properties,
//!   expressions).
//! - `export`: export_project and export_status.
//! - `canonical`: canonicalize_resource, through the add-on's helper script.
//! - `clock`: the game's clock held by the agent (game_pause, game_resume,
//!   game_step, game_run_until).
//! - `playtest`: run_playtest, a playtest file run from a cold start.
//!
//! This file holds the tool list; what they share (limits, the probe script, the physics
//! tick rate) is in `common`. What they share with the input, profiler, debugger and
//! tests tools (the session lookup, how a process ended, the probe requests, the held
//! clock's step, the display, a game tool's `meta`) is the kit's, `tools/kit/game/`.

mod canonical;
mod clock;
mod common;
mod export;
pub(crate) mod game;
mod managed_editor;
mod playtest;
mod probe;
pub(crate) mod screenshots;
mod sessions;

pub(crate) use canonical::*;
pub(crate) use export::*;
pub(crate) use managed_editor::*;
pub(crate) use probe::*;
pub(crate) use sessions::*;

use crate::rules::class::{self, Class};
use crate::rules::{EffectKind, RuntimeFlags, Toolset};
use crate::tools::kit::game::tool::meta;
use crate::tools::{ToolDef, ToolMeta};

trait Process<C> {
    fn read_only(self) -> ToolMeta<class::ReadOnly>;
    fn in_toolset(self, toolset: Toolset) -> ToolMeta<C>;
}

impl<C: Class> Process<C> for ToolMeta<C> {
    /// A pure read of the server's own state (no process is touched).
    fn read_only(self) -> ToolMeta<class::ReadOnly> {
        self.of_class(class::ReadOnly)
    }

    /// A process-plane tool outside the game `runtime` toolset (editor, export).
    fn in_toolset(mut self, toolset: Toolset) -> ToolMeta<C> {
        self.toolset = toolset;
        self
    }
}

pub(crate) fn tools() -> Vec<ToolDef> {
    let mut all = session_tools();
    all.extend(game_tools());
    all.extend(export_tools());
    all.extend(clock::tools());
    all.extend(playtest::tools());
    all
}

/// Games and the editor as supervised processes.
fn session_tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "run_and_capture",
                "Run a scene and capture its output",
                "Run a scene headless for a bounded time or frame count; return stdout, \
                 stderr, parsed script errors (file, line, message) and how it ended (exit, \
                 timeout, crash).",
                Some(EffectKind::ProcessLaunch),
            ),
            run_and_capture,
        ),
        ToolDef::new(
            meta(
                "play_scene",
                "Play a scene (managed game session)",
                "Play the game (or a scene) as a supervised session with the runtime probe \
                 (nothing written to the project); answers once the probe is up, or with the \
                 exit code and last output lines of a game that ended first. Renders when \
                 there is a display, else headless; `display` says which and why. Stop with \
                 stop_scene.",
                Some(EffectKind::ProcessLaunch),
            ),
            play_scene,
        ),
        ToolDef::new(
            meta(
                "stop_scene",
                "Stop a managed game session",
                "Stop a game (default: the newest running one; never the editor: \
                 stop_editor): SIGTERM, SIGKILL after 2 s; reports how it ended.",
                Some(EffectKind::ProcessLaunch),
            ),
            stop_scene,
        ),
        ToolDef::new(
            meta(
                "start_editor",
                "Start a managed Godot editor",
                "Start a supervised Godot editor on the project (headless, or a window with \
                 headless: false); answers once its godot_mcp add-on connected the editor \
                 tools, or says it is still loading (the next editor call waits). One at a \
                 time.",
                Some(EffectKind::ProcessLaunch),
            )
            .in_toolset(Toolset::EditorProcess),
            start_editor,
        ),
        ToolDef::new(
            meta(
                "stop_editor",
                "Stop the managed Godot editor",
                "Stop the editor started by start_editor or serve --editor.",
                Some(EffectKind::ProcessLaunch),
            )
            .in_toolset(Toolset::EditorProcess),
            stop_editor,
        ),
        ToolDef::new(
            meta(
                "list_sessions",
                "List managed sessions",
                "List supervised processes (games, editor, exports): purpose, pid, probe \
                 connected, how each ended.",
                None,
            )
            .read_only(),
            list_sessions,
        ),
    ]
}

/// The running game, through its probe.
fn game_tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "simulate_input",
                "Inject input into the running game",
                "Send a key, mouse button or input action to a running game, optionally \
                 held for hold_ms. Refused while it is stopped at a breakpoint.",
                None,
            ),
            simulate_input,
        ),
        ToolDef::imaging(
            meta(
                "game_screenshot",
                "Screenshot the running game",
                "Capture the running game's viewport through its probe, after `frames` frames. \
                 A Godot build without a renderer (a headless build) cannot take one: that is a \
                 structured error, never an empty image.",
                None,
            ),
            game_screenshot,
        ),
        ToolDef::new(
            meta(
                "get_game_property",
                "Read a property of the running game",
                "Read a node property in a running game.",
                None,
            ),
            get_game_property,
        ),
        ToolDef::new(
            meta(
                "monitor_property",
                "Sample a property of the running game",
                "Sample a node property in a running game `samples` times every \
                 `interval_ms` (at most 60 s); returns the timed series.",
                None,
            ),
            monitor_property,
        ),
        ToolDef::new(
            meta(
                "evaluate_expression",
                "Evaluate an expression in the running game",
                "Evaluate a Godot Expression in a running game (executes code; \
                 approval-gated).",
                None,
            ),
            evaluate_expression,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: false,
            executes_code: true,
        }),
    ]
}

/// Exports.
fn export_tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "export_project",
                "Export the project",
                "Export a build with a preset (godot --export-release), supervised; the \
                 file lands at output_path only if Godot exits 0. Outside the project or over \
                 a file needs confirm=true. Approval-gated.",
                Some(EffectKind::ProcessLaunch),
            )
            .in_toolset(Toolset::Export),
            export_project,
        )
        .with_runtime_flags(RuntimeFlags {
            writes_disk: true,
            executes_code: false,
        }),
        ToolDef::new(
            meta(
                "export_status",
                "Export status (project.export.status)",
                "Running exports, and bytes interrupted exports left as evidence.",
                None,
            )
            .read_only()
            .in_toolset(Toolset::Export),
            export_status,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Tools that run expressions from a file they name rather than from their arguments.
    const EXPRESSIONS_FROM_FILES: [&str; 1] = ["run_playtest"];

    /// Whether an input schema takes an agent's expression anywhere: a property named
    /// `…expression…` or `until`, at any depth (definitions, array items, variants).
    fn takes_expression(schema: &Value) -> bool {
        match schema {
            Value::Object(m) => m.iter().any(|(k, v)| {
                (k == "properties"
                    && v.as_object().is_some_and(|props| {
                        props
                            .keys()
                            .any(|name| name.contains("expression") || name == "until")
                    }))
                    || takes_expression(v)
            }),
            Value::Array(a) => a.iter().any(takes_expression),
            _ => false,
        }
    }

    /// Every tool that evaluates an agent's expression (in any argument, a watch row, an
    /// `until`, or a playtest file) goes to the approval gate like evaluate_expression:
    /// walks the whole registry, so a new tool that takes one and is not gated fails here.
    #[test]
    fn every_tool_that_takes_an_expression_is_approval_gated() {
        let registry = crate::tools::builtin_for_tests();
        let mut found = Vec::new();
        for def in registry.iter() {
            let schema = Value::Object((**def.input_schema()).clone());
            if takes_expression(&schema) || EXPRESSIONS_FROM_FILES.contains(&def.meta.name) {
                found.push(def.meta.name);
                assert!(
                    crate::rules::is_gated(def.meta.class, def.runtime),
                    "{} takes an expression but is not approval-gated (flag it executes_code)",
                    def.meta.name
                );
            }
        }
        // The walk sees the schemas: the tools known to take one are among those found.
        for known in [
            "evaluate_expression",
            "game_step",
            "game_run_until",
            "evaluate_in_frame",
            "run_playtest",
        ] {
            assert!(found.contains(&known), "{known} not found: {found:?}");
        }
    }
}
