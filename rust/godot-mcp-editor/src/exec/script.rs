//! Script commands: attach a script to a node, detach it; each one undo action.

use godot::classes::{ResourceLoader, Script};
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_protocol::ErrorCode;
use godot_mcp_protocol::commands as wire;
use serde_json::json;

use super::ctx::{
    Res, begin, err, failed, find, misrouted, obj, scene_root, undo_redo, with_verdict,
};

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::ScriptAttach(wire::ScriptAttach { node, script }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            let s = ResourceLoader::singleton()
                .load(script.as_str())
                .and_then(|r| r.try_cast::<Script>().ok())
                .ok_or_else(|| {
                    err(
                        ErrorCode::NotFound,
                        format!("{script} is not a script that loads"),
                    )
                })?;
            let old = n.get("script");
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: attach {script} to {node}"));
            ur.add_do_property(&obj(&n), "script", &s.to_variant());
            ur.add_undo_property(&obj(&n), "script", &old);
            ur.commit_action();
            Ok(with_verdict(
                &root,
                &n,
                json!({"node": node, "script": script}),
            ))
        }
        Command::ScriptDetach(wire::ScriptDetach { node }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            let old = n.get("script");
            if old.is_nil() {
                return Err(failed(format!("{node} has no script")));
            }
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: detach script from {node}"));
            ur.add_do_property(&obj(&n), "script", &Variant::nil());
            ur.add_undo_property(&obj(&n), "script", &old);
            ur.commit_action();
            Ok(with_verdict(&root, &n, json!({"node": node})))
        }
        _ => Err(misrouted("script")),
    }
}
