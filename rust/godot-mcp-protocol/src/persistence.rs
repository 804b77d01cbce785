//! The persistence verdict of an editor command: is its effect on disk, why, and what to
//! do. This is the one rule, here because both sides of the bridge need it: the add-on
//! stamps it on every reply (node handlers, the read-only probe `node.persistence`, scene
//! and resource commands; `godot_mcp_editor_core::persistence` re-exports it), and the
//! server's dry run reports it for scene-level commands from the same function with the
//! same inputs, so a preview's `persisted`, `reason` and `hint` equal the real run's,
//! field by field.

use serde::Serialize;

/// What a result says about persistence and undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub persisted: bool,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    pub undoable: bool,
}

/// What a command does, as far as persistence goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// An undo-tracked edit of the edited scene's nodes (`node.*`, `script.*`,
    /// `signal.*`, `scene.batch.apply`, `scene.steps`, `editor.undo`, `editor.redo`). `owned_by_scene`:
    /// the node is the edited scene's root or owned by it. A node inside an instanced
    /// sub-scene is not: an edit to it lives only in this editor session unless it is an
    /// override Godot saves, so the result says so instead of promising.
    SceneEdit {
        owned_by_scene: bool,
    },
    /// `resource.set_property`, `theme.set_item`: set under the undo history, then the
    /// resource file saved.
    ResourceSave,
    SceneOpen,
    SceneCreate,
    SceneSave,
    SceneClose,
    SceneReload,
}

/// The verdict for `effect`. `scene_path` is the edited scene's file, empty for a scene
/// never saved (it matters only to a scene edit).
pub fn verdict_of(effect: Effect, scene_path: &str) -> Verdict {
    let on_disk = |reason: &str, undoable: bool| Verdict {
        persisted: true,
        reason: reason.into(),
        hint: None,
        undoable,
    };
    match effect {
        Effect::SceneEdit {
            owned_by_scene: false,
        } => Verdict {
            persisted: false,
            reason: "the node belongs to an instanced sub-scene, not to the edited scene".into(),
            hint: Some(
                "Open the sub-scene itself (open_scene) to change it for every instance, or make \
                 its children editable in the editor."
                    .into(),
            ),
            undoable: true,
        },
        Effect::SceneEdit { .. } if scene_path.is_empty() => Verdict {
            persisted: false,
            reason: "the edited scene has never been saved to a file".into(),
            hint: Some("Save it under a res:// path in the editor first.".into()),
            undoable: true,
        },
        Effect::SceneEdit { .. } => Verdict {
            persisted: false,
            reason: "the edit is in the scene open in the editor, not on disk".into(),
            hint: Some("Save the scene (save_scene) to persist it.".into()),
            undoable: true,
        },
        Effect::ResourceSave => on_disk("the editor saves the resource file", true),
        Effect::SceneOpen => on_disk("opening changes no file", false),
        Effect::SceneCreate => on_disk("the editor saves the new scene file", false),
        Effect::SceneSave => on_disk("the editor writes the scene file", false),
        Effect::SceneClose | Effect::SceneReload => {
            on_disk("nothing is written; unsaved edits are discarded", false)
        }
    }
}

/// The verdict for editing a node (see [`Effect::SceneEdit`]).
pub fn verdict(owned_by_scene: bool, scene_path: &str) -> Verdict {
    verdict_of(Effect::SceneEdit { owned_by_scene }, scene_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owned_node_in_a_saved_scene_needs_a_save() {
        let v = verdict(true, "res://main.tscn");
        assert!(!v.persisted && v.undoable);
        assert!(v.hint.unwrap().contains("save_scene"));
        assert!(
            verdict(false, "res://main.tscn")
                .reason
                .contains("sub-scene")
        );
        assert!(verdict(true, "").reason.contains("never been saved"));
    }

    #[test]
    fn every_mutating_command_has_one_verdict() {
        use crate::commands::{self as c, BridgeCommand, Kind, TABLE};
        // Node commands are judged on their node; every other command that changes the
        // project has a scene-level verdict, and a file-writing one says it is on disk.
        for (cmd, kind) in TABLE {
            if let Kind::Scene(e) = kind {
                let v = verdict_of(*e, "res://main.tscn");
                assert_eq!(
                    v.persisted,
                    kind.may_save_file() || !matches!(e, Effect::SceneEdit { .. }),
                    "{cmd}"
                );
            }
        }
        assert_eq!(c::NodeGetProperty::KIND.scene_effect(), None);
        // Undo and redo edit the scene like any node edit: same text, same hint.
        assert_eq!(
            verdict_of(c::Undo::KIND.scene_effect().unwrap(), "res://a.tscn"),
            verdict(true, "res://a.tscn")
        );
        assert_eq!(
            verdict_of(c::BatchApply::KIND.scene_effect().unwrap(), ""),
            verdict(true, "")
        );
    }
}
