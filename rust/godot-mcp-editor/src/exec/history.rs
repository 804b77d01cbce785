//! The edited scene's undo history: undo, redo, and reading it.

use godot_mcp_editor_core::command::Command;
use godot_mcp_editor_core::persistence::{self};
use serde_json::json;

use super::ctx::{
    Res, failed, misrouted, on_scene, scene_history, scene_path, scene_root, verdict_json,
};

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::Undo { .. } | Command::Redo => {
            let undo = matches!(cmd, Command::Undo { .. });
            let root = scene_root()?;
            if let Command::Undo { on, .. } = &cmd {
                on_scene(on, &root)?;
            }
            let mut h = scene_history(&root)?;
            let possible = if undo { h.has_undo() } else { h.has_redo() };
            if !possible {
                return Err(failed(if undo {
                    "nothing to undo"
                } else {
                    "nothing to redo"
                }));
            }
            let name = h.get_current_action_name().to_string();
            // "Undo only if the current action is this one": never someone else's.
            if let Command::Undo {
                action: Some(only), ..
            } = &cmd
                && *only != name
            {
                let mut e = failed(format!(
                    "the current action is {name:?}, not {only:?}; nothing was undone"
                ));
                e.effect = Some(godot_mcp_protocol::ErrorEffect::Unchanged);
                return Err(e);
            }
            let done = if undo { h.undo() } else { h.redo() };
            if !done {
                return Err(failed("the editor refused the undo/redo"));
            }
            let name = if undo {
                name
            } else {
                h.get_current_action_name().to_string()
            };
            let mut out = verdict_json(&persistence::verdict(true, &scene_path(&root)));
            out["action"] = json!(name);
            out["version"] = json!(h.get_version());
            Ok(out)
        }
        Command::History(on) => {
            let root = scene_root()?;
            on_scene(&on, &root)?;
            let h = scene_history(&root)?;
            let count = h.get_history_count();
            Ok(json!({
                "scene": scene_path(&root),
                "root_id": root.instance_id().to_i64(),
                "version": h.get_version(),
                "has_undo": h.has_undo(),
                "has_redo": h.has_redo(),
                "current_action": h.get_current_action(),
                "actions": (0..count).map(|i| h.get_action_name(i).to_string()).collect::<Vec<_>>(),
            }))
        }
        _ => Err(misrouted("history")),
    }
}
