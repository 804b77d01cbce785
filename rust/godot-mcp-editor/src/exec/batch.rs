//! `scene.batch.apply`: many property sets, validated first, run under the undo policy the
//! server sent, every set read back.

use godot::classes::Node;
use godot::prelude::*;
use godot_mcp_editor_core::batch;
use godot_mcp_editor_core::command::Command;
use godot_mcp_editor_core::persistence::{self};
use godot_mcp_protocol::ErrorEffect;
use godot_mcp_protocol::commands as wire;
use serde_json::json;

use super::ctx::{
    Res, begin, check_set, editor, err, misrouted, not_held, obj, roll_back, scene_path,
    scene_root, undo_redo, verdict_json,
};
use crate::variant::reads_back;

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::BatchApply(wire::BatchApply { sets, undo }) => {
            let root = scene_root()?;
            // Validate everything first: an error means nothing was applied.
            let mut checked = Vec::with_capacity(sets.len());
            for (i, s) in sets.iter().enumerate() {
                let (n, v) = check_set(&root, s)
                    .map_err(|e| err(e.code, format!("sets[{i}]: {}", e.message)))?;
                checked.push((n, s.property.clone(), v));
            }
            // The server decided the undo policy; executed as sent.
            let run = batch::execution(&sets, undo);
            // The values before the batch (a property set twice: its first old value).
            let mut before: Vec<(Gd<Node>, String, Variant)> = Vec::new();
            for (n, p, _) in &checked {
                if !before.iter().any(|(m, q, _)| m == n && q == p) {
                    before.push((n.clone(), p.clone(), n.get(p.as_str())));
                }
            }
            let mut ur = undo_redo()?;
            match &run.action {
                Some(action) => {
                    begin(&mut ur, &root, action);
                    for (n, p, v) in &checked {
                        let old = n.get(p.as_str());
                        ur.add_do_property(&obj(n), p.as_str(), v);
                        ur.add_undo_property(&obj(n), p.as_str(), &old);
                    }
                    ur.commit_action();
                }
                None => {
                    for (n, p, v) in &mut checked {
                        n.set(p.as_str(), &*v);
                    }
                    editor().mark_scene_as_unsaved();
                }
            }
            // Every set is read back (the last set of each property is what it holds).
            let mut seen: Vec<(&Gd<Node>, &str)> = Vec::new();
            for (i, (n, p, v)) in checked.iter().enumerate().rev() {
                if seen.contains(&(n, p.as_str())) {
                    continue;
                }
                seen.push((n, p.as_str()));
                if let Err(why) = reads_back(&obj(n), p, v) {
                    let restored = || before.iter().all(|(m, q, old)| m.get(q.as_str()) == *old);
                    let effect = match &run.action {
                        Some(action) => roll_back(&ur, &obj(&root), action, restored),
                        None => {
                            for (m, q, old) in &before {
                                m.clone().set(q.as_str(), old);
                            }
                            if restored() {
                                ErrorEffect::RolledBack
                            } else {
                                ErrorEffect::Changed
                            }
                        }
                    };
                    return Err(not_held(
                        &format!("sets[{i}]: {}", sets[i].node),
                        &why,
                        effect,
                    ));
                }
            }
            let mut out = verdict_json(&persistence::verdict(true, &scene_path(&root)));
            out["applied"] = json!(sets.len());
            out["nodes"] = json!(batch::distinct_nodes(&sets));
            out["undoable"] = json!(run.undoable);
            out["scene"] = json!(scene_path(&root));
            if let Some(hint) = run.undo_hint {
                out["undo_hint"] = json!(hint);
            }
            Ok(out)
        }
        _ => Err(misrouted("batch")),
    }
}
