//! How a game is launched with the probe (play_scene, run_playtest, create_nodes'
//! `check`): the probe script, the held clock's tick rate, the command line.

use std::sync::Arc;

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{LaunchSpec, Session};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::godot_process::godot;

/// The probe script the add-on ships (`extends GodotMcpProbe`).
pub(crate) const PROBE_SCRIPT: &str = "res://addons/godot_mcp/probe/probe.gd";
/// The project's physics tick rate (`physics/common/physics_ticks_per_second`, 60 by
/// default): the `--fixed-fps` of a held launch, so one iteration is one tick.
pub(crate) fn physics_ticks(state: &AppState) -> u32 {
    physics_ticks_in(state.project.root())
}

fn physics_ticks_in(root: &std::path::Path) -> u32 {
    let text = std::fs::read_to_string(root.join("project.godot")).unwrap_or_default();
    let mut section = "";
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
        } else if section == "[physics]"
            && let Some(v) = line.strip_prefix("common/physics_ticks_per_second=")
            && let Ok(n) = v.trim().parse::<u32>()
            && (1..=10_000).contains(&n)
        {
            return n;
        }
    }
    60
}

/// How to start a game with the probe (play_scene, run_playtest).
pub(crate) struct GameLaunch<'a> {
    pub purpose: &'static str,
    pub scene: Option<&'a ResPath>,
    /// `--headless` and the renderer overrides.
    pub display: Vec<String>,
    /// The clock held from frame 0, with `--fixed-fps` at the physics tick rate.
    pub held: bool,
    /// The global RNG's seed, set before the scene loads.
    pub seed: Option<i64>,
    /// No scene: a bare `Node` the probe makes the current scene (a check of scripts,
    /// resources and autoloads), not the project's main scene.
    pub blank: bool,
}

/// Starts a supervised game; whether the probe was passed to it (it needs the add-on).
pub(crate) async fn launch_game(
    state: &Arc<AppState>,
    how: GameLaunch<'_>,
) -> Result<(Arc<Session>, bool), ToolError> {
    let program = godot(state)?;
    let mut engine = how.display;
    engine.push("--path".into());
    engine.push(state.project.root().display().to_string());
    let probe_installed = state
        .project
        .root()
        .join("addons/godot_mcp/probe/probe.gd")
        .is_file();
    if (how.held || how.seed.is_some()) && !probe_installed {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            "A held clock and a seed need the runtime probe, which is not installed.",
        )
        .required("probe_installed")
        .hint("Install the godot_mcp add-on (it ships addons/godot_mcp/probe/probe.gd)."));
    }
    let mut user = Vec::new();
    if how.held {
        engine.push("--fixed-fps".into());
        engine.push(physics_ticks(state).to_string());
        user.push("--godot-mcp-paused".to_string());
    }
    if let Some(seed) = how.seed {
        user.push(format!("--godot-mcp-seed={seed}"));
    }
    if probe_installed {
        engine.push("--script".into());
        engine.push(PROBE_SCRIPT.into());
        if let Some(scene) = how.scene {
            user.push(format!("--godot-mcp-scene={scene}"));
        } else if how.blank {
            user.push("--godot-mcp-blank".into());
        }
    } else if let Some(scene) = how.scene {
        engine.push(scene.to_string());
    }
    let session = state
        .process
        .launch(
            state,
            LaunchSpec {
                purpose: how.purpose,
                program,
                args: engine,
                user_args: user,
                tool_family: "runtime",
                operation: how.purpose,
                parent: None,
                writes_disk: false,
            },
        )
        .await?;
    Ok((session, probe_installed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tick_rate_is_read_from_the_physics_section() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("project.godot"),
            "[application]\ncommon/physics_ticks_per_second=5\n[physics]\n\
             common/physics_ticks_per_second=120\n",
        )
        .unwrap();
        assert_eq!(physics_ticks_in(dir.path()), 120);
        assert_eq!(physics_ticks_in(&dir.path().join("none")), 60);
    }
}
