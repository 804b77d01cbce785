//! The honesty fields of the safety model, as typed structs every tool shares, so
//! that a result never reads as success when the effect half-failed
//! (spec: safety-model.md, "Honesty as safety"). Field names are contract-pinned.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Schema transform for an optional field that is left out when it has no value
/// (`skip_serializing_if = "Option::is_none"`): present means set, so its schema does
/// not admit `null` (a result must not be read as "set to null"). It also keeps output
/// schemas short: tools/list repeats them on every turn.
pub(crate) fn absent_when_none(schema: &mut schemars::Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if let Some(serde_json::Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            obj.insert("type".into(), only);
        }
    }
}

/// Schema transform for a reply field that, when present, may be `null` (read with
/// `present`: the editor said "none"): put after [`absent_when_none`], it admits
/// `null` again.
pub(crate) fn nullable(schema: &mut schemars::Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    match obj.get_mut("type") {
        Some(serde_json::Value::String(t)) => {
            let t = std::mem::take(t);
            obj.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(serde_json::Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push("null".into());
        }
        _ => {}
    }
}

/// Whether an effect is on disk, why, and what to do about it. Flattened into a
/// result as `persisted`, `reason`, `hint`. (Deserialize: the editor's replies carry it.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Persistence {
    pub persisted: bool,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub hint: Option<String>,
}

impl Persistence {
    /// A project-plane write: atomic, fsynced, on disk when the call answers.
    pub(crate) fn written_to_disk() -> Self {
        Self {
            persisted: true,
            reason:
                "written to disk atomically (temporary file, fsync, rename, fsync of the folder)"
                    .into(),
            hint: None,
        }
    }

    /// A project.godot edit: on disk, but an open editor holds its own copy.
    pub(crate) fn project_settings_on_disk() -> Self {
        Self {
            persisted: true,
            reason: "written to project.godot on disk atomically".into(),
            hint: Some(
                "A running Godot editor keeps its own copy of the project settings and may overwrite \
                 this change when it next saves them; reload the project in the editor \
                 (Project > Reload Current Project) to pick it up."
                    .into(),
            ),
        }
    }
}

/// A dry run writes nothing, so it never answers `persisted: true`: a plan's effect says
/// what its real run will do ("written to disk atomically ..."), and a preview showing it
/// as is read as done (issue 40: an agent took a dry run's `persisted: true` for a write).
/// The real run's reason is kept, marked as what applying it would do.
pub(crate) fn nothing_persisted_by_a_dry_run(
    mut out: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    if out.get("dry_run") == Some(&serde_json::Value::Bool(true))
        && out.get("persisted") == Some(&serde_json::Value::Bool(true))
    {
        let then = out
            .get("reason")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("on disk");
        let reason = format!("a dry run writes nothing; applied: {then}");
        out.insert("persisted".into(), serde_json::json!(false));
        out.insert("reason".into(), serde_json::json!(reason));
    }
    out
}

/// Whether the human's undo stack covers the effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Undo {
    pub undoable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub undo_hint: Option<String>,
}

impl Undo {
    /// A file-only write: the editor's UndoRedo never saw it.
    pub(crate) fn not_undo_tracked() -> Self {
        Self {
            undoable: false,
            undo_hint: Some(
                "Not on the editor's undo stack: this is a file write. Keep the returned sha256 values \
                 to check or restore the previous content."
                    .into(),
            ),
        }
    }
}

/// The verdict an edit carries: whether it is on disk (`persisted`, `reason`, `hint`)
/// and whether the editor's undo history holds it (`undoable`, `undo_hint`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub(crate) struct EditVerdict {
    #[serde(flatten)]
    pub persistence: Persistence,
    #[serde(flatten)]
    pub undo: Undo,
}

impl From<godot_mcp_protocol::persistence::Verdict> for EditVerdict {
    fn from(v: godot_mcp_protocol::persistence::Verdict) -> Self {
        Self {
            persistence: Persistence {
                persisted: v.persisted,
                reason: v.reason,
                hint: v.hint,
            },
            undo: Undo {
                undoable: v.undoable,
                undo_hint: None,
            },
        }
    }
}

/// The one reply envelope of an edit: the verdict (the protocol's, as the add-on stamps
/// it), where the edit happened (`S`: the scene and the transaction a real run made),
/// and the command's own fields `T` (a dry run's preview decodes into it too, so `T`'s
/// fields are optional where a preview lacks them).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct EditReply<T, S = InScene> {
    #[serde(flatten)]
    pub verdict: EditVerdict,
    #[serde(flatten)]
    pub at: S,
    #[serde(flatten)]
    pub fields: T,
}

/// Where an edit happened: the edited scene and the transaction, each left out when
/// absent (never `null` in the schema).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub(crate) struct InScene {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub scene: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub transaction_id: Option<String>,
}

/// [`InScene`] as the domain node tools (animation, audio, groups, UI) publish it:
/// the same fields, their schema admitting `null` (pinned in the tool contract).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub(crate) struct InSceneOrNull {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
}

/// Where a scene-level edit happened: its transaction only (the scene, where the
/// reply has one, is among the command's own fields).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub(crate) struct InTransaction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<String>,
}

/// How a batch ended: where it stopped and how much it did not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct BatchReport {
    /// Entries that ran to completion.
    pub completed: usize,
    /// Index of the entry that failed; `None` when every entry ran.
    pub aborted_at: Option<usize>,
    /// Entries after `aborted_at` that were not run.
    pub skipped_count: usize,
    /// What the caller should know about state left behind (applied entries are not
    /// rolled back; an open scene may hold unsaved changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub hint: Option<String>,
}

/// A command that timed out: it may still run, because the editor drains commands
/// serially (#644).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct TimedOut {
    pub may_have_applied: bool,
    pub hint: String,
}

/// Whether a command that failed or went unanswered may still have taken effect: only
/// a proven pre-state lets it be `false` for a command that acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct MayHaveApplied {
    pub may_have_applied: bool,
}

/// How a supervised process ended: a timeout kill is not a crash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "ended_by", rename_all = "snake_case")]
pub(crate) enum ProcessEnd {
    /// Exited by itself with this code.
    Exit { code: i32 },
    /// Killed by the server because it ran past its time limit.
    Timeout { after_ms: u64 },
    /// Died from a signal the server did not send.
    Crash { signal: i32 },
}

/// A parse check that raced an importer scan: its answer may be out of date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct RescanPending {
    pub rescan_pending: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply field read with `present` keeps `null` in its schema even though the
    /// reply macro drops it for every absent-when-none field (add_audio_player's
    /// `stream`: the real editor answers null for a player without one).
    #[test]
    fn nullable_after_absent_when_none_admits_null_again() {
        let mut s: schemars::Schema = serde_json::json!({"type": ["string", "null"]})
            .try_into()
            .unwrap();
        absent_when_none(&mut s);
        assert_eq!(s.get("type"), Some(&serde_json::json!("string")));
        nullable(&mut s);
        assert_eq!(s.get("type"), Some(&serde_json::json!(["string", "null"])));
    }

    #[test]
    fn field_names_are_the_contract() {
        let v = serde_json::to_value(BatchReport {
            completed: 1,
            aborted_at: Some(1),
            skipped_count: 2,
            hint: None,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"completed": 1, "aborted_at": 1, "skipped_count": 2})
        );
        let v = serde_json::to_value(Persistence::written_to_disk()).unwrap();
        assert_eq!(v["persisted"], true);
        assert!(v["reason"].is_string());
        let v = serde_json::to_value(Undo::not_undo_tracked()).unwrap();
        assert_eq!(v["undoable"], false);
        let v = serde_json::to_value(TimedOut {
            may_have_applied: true,
            hint: "re-read".into(),
        })
        .unwrap();
        assert_eq!(v["may_have_applied"], true);
        let v = serde_json::to_value(MayHaveApplied {
            may_have_applied: false,
        })
        .unwrap();
        assert_eq!(v, serde_json::json!({"may_have_applied": false}));
        let v = serde_json::to_value(ProcessEnd::Timeout { after_ms: 5 }).unwrap();
        assert_eq!(v, serde_json::json!({"ended_by": "timeout", "after_ms": 5}));
        assert_eq!(
            serde_json::to_value(RescanPending {
                rescan_pending: true
            })
            .unwrap()["rescan_pending"],
            true
        );
    }

    /// The envelope passes a reply through as the add-on sent it: the verdict, where it
    /// happened and the command's own fields, an absent field left absent.
    #[test]
    fn an_edit_reply_round_trips_as_sent() {
        #[derive(Debug, Serialize, Deserialize, JsonSchema)]
        struct Fields {
            node: String,
        }
        let sent = serde_json::json!({
            "persisted": false, "reason": "unsaved", "undoable": true,
            "scene": "res://a.tscn", "node": "A",
        });
        let r: EditReply<Fields> = serde_json::from_value(sent.clone()).unwrap();
        assert_eq!(r.at.scene.as_deref(), Some("res://a.tscn"));
        assert_eq!(r.at.transaction_id, None);
        assert_eq!(serde_json::to_value(&r).unwrap(), sent);
        let r: EditReply<Fields, InTransaction> = serde_json::from_value(sent).unwrap();
        assert!(serde_json::to_value(&r).unwrap().get("scene").is_none());
    }
}
