//! Resource commands: set a property of a resource file, saved, rolled back when the save
//! fails.

use godot::classes::{Resource, ResourceLoader, ResourceSaver};
use godot::global::Error as GdError;
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_editor_core::persistence::Effect;
use godot_mcp_protocol::commands as wire;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::json;

use super::ctx::{Res, err, failed, misrouted, not_held, obj, roll_back, stamped, undo_redo};
use crate::variant::{checked_value, from_variant, reads_back};

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::ResourceSetProperty(wire::ResourceSetProperty {
            path,
            property,
            value,
        }) => {
            let mut res: Gd<Resource> = ResourceLoader::singleton()
                .load(path.as_str())
                .ok_or_else(|| err(ErrorCode::NotFound, format!("{path} does not load")))?;
            let v = checked_value(&obj(&res), &path, &property, &value).map_err(failed)?;
            let old = res.get(property.as_str());
            let mut ur = undo_redo()?;
            let action = format!("MCP: set {path}:{property}");
            ur.create_action(&action);
            ur.add_do_property(&obj(&res), property.as_str(), &v);
            ur.add_undo_property(&obj(&res), property.as_str(), &old);
            ur.commit_action();
            let restored = || res.get(property.as_str()) == old;
            if let Err(why) = reads_back(&obj(&res), &property, &v) {
                let effect = roll_back(&ur, &obj(&res), &action, restored);
                return Err(not_held(&path, &why, effect));
            }
            let saved = ResourceSaver::singleton().save(&res);
            if saved != GdError::OK {
                // The value is set in the editor: undo our own action, so the error can
                // say the editor is back where it was, and prove it by reading back.
                let effect = roll_back(&ur, &obj(&res), &action, restored);
                let left = match effect {
                    ErrorEffect::RolledBack => {
                        "the value was set, then undone in the editor (its undo action ran)"
                    }
                    _ => "the value is still set in the editor: undoing it failed",
                };
                return Err(BridgeError::new(
                    ErrorCode::Failed,
                    format!("saving {path} failed: {saved:?}; {left}"),
                )
                .with_effect(effect));
            }
            let _ = &mut res;
            Ok(stamped(
                Effect::ResourceSave,
                &path,
                json!({"path": path, "property": property, "value": from_variant(&res.get(property.as_str())).to_json()}),
            ))
        }
        _ => Err(misrouted("resource")),
    }
}
