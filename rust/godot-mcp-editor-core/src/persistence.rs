//! The persistence verdict of a node edit: is it on disk, why, and what to do. The
//! read-only probe (`node.persistence`) and every real handler call [`verdict`], so a
//! dry run reports exactly what the real run stamps.

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

/// The verdict for editing a node.
///
/// - `owned_by_scene`: the node is the edited scene's root or owned by it. A node inside
///   an instanced sub-scene is not: an edit to it lives only in this editor session
///   unless it is an override Godot saves, so the result says so instead of promising.
/// - `scene_path`: the edited scene's file; empty for a scene never saved.
pub fn verdict(owned_by_scene: bool, scene_path: &str) -> Verdict {
    if !owned_by_scene {
        return Verdict {
            persisted: false,
            reason: "the node belongs to an instanced sub-scene, not to the edited scene".into(),
            hint: Some(
                "Open the sub-scene itself (open_scene) to change it for every instance, or make \
                 its children editable in the editor."
                    .into(),
            ),
            undoable: true,
        };
    }
    if scene_path.is_empty() {
        return Verdict {
            persisted: false,
            reason: "the edited scene has never been saved to a file".into(),
            hint: Some("Save it under a res:// path in the editor first.".into()),
            undoable: true,
        };
    }
    Verdict {
        persisted: false,
        reason: "the edit is in the scene open in the editor, not on disk".into(),
        hint: Some("Save the scene (save_scene) to persist it.".into()),
        undoable: true,
    }
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
}
