//! What the runtime tools share: the limit of a capture, the probe script, the empty
//! arguments and the project's physics tick rate. Their metadata (`meta`) and the limit
//! of a probe request are the kit's (`tools/kit/game/`), shared with other domains.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::state::AppState;

/// The probe script the add-on ships (`extends GodotMcpProbe`).
pub(super) const PROBE_SCRIPT: &str = "res://addons/godot_mcp/probe/probe.gd";
/// Most output returned per stream.
pub(super) const MAX_OUTPUT: usize = 256 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NoArgs {}

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
