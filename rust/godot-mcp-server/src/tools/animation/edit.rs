//! Animation editing in the live editor: an AnimationPlayer's (or AnimationTree's)
//! animations, tracks and keys in the edited scene, and the live read-back. Each edit is
//! ONE undo action on the edited scene's history (the add-on records the animation's whole
//! state before and after), judged for persistence on the player node like any node edit.
//! Animations saved in a file of their own are refused (edit that file). Reading a saved
//! .tscn or .tres from disk is `get_animation` (tools/animation/read.rs).

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;

use super::{int, meta};
use crate::honesty::InSceneOrNull;
use crate::tools::ToolDef;
use crate::tools::kit::editor::{editor_read, node_edit, reply_fields};
use crate::tools::kit::editor::{in_scene, in_scene_args};

// The track type, loop mode, update mode and interpolation an agent names are the
// wire's (`commands::TrackType`, `LoopMode`, `UpdateMode`, `Interpolation`: a name or
// Godot's integer): one type each, its schema the agent's.
use cmd::{Interpolation, LoopMode, TrackSettings, TrackType, UpdateMode};

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddAnimationArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation name.
    name: String,
    /// Library ("" is the default one; created when missing).
    #[serde(default)]
    library: String,
    /// Length in seconds.
    length: f64,
    #[serde(default)]
    loop_mode: LoopMode,
    /// Snap step in seconds (default 1/30).
    #[serde(default)]
    step: Option<f64>,
    /// Also the player's autoplay animation.
    #[serde(default)]
    autoplay: bool,
    /// Tracks with their keys, made in the same undo action (as add_animation_track).
    #[serde(default)]
    #[schemars(length(max = 1000))]
    tracks: Vec<cmd::NewTrack>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetAnimationArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
    /// Length in seconds.
    #[serde(default)]
    length: Option<f64>,
    /// Snap step in seconds (0: none).
    #[serde(default)]
    step: Option<f64>,
    #[serde(default)]
    loop_mode: Option<LoopMode>,
    /// Per track: update_mode (value tracks), interpolation.
    #[serde(default)]
    tracks: Vec<TrackSettings>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnimationArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
}
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetAnimationArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
    /// Most keys returned per track (default 1000).
    #[serde(default)]
    max_keys: Option<usize>,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddTrackArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
    track_type: TrackType,
    /// Node path from the player's root_node, by default the player's parent: "." is
    /// that parent, "Sprite2D:modulate" a sibling's property (value/bezier tracks take
    /// :property; a method track's path names the node whose method it calls).
    path: String,
    /// Value tracks (default continuous).
    #[serde(default)]
    update_mode: Option<UpdateMode>,
    /// Default linear.
    #[serde(default)]
    interpolation: Option<Interpolation>,
    /// Keys to insert, as in insert_animation_key (same undo action).
    #[serde(default)]
    #[schemars(length(max = 10000))]
    keys: Vec<cmd::AnimationKey>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TrackArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
    /// Track index.
    track: u32,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InsertKeyArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
    /// Track index.
    track: u32,
    /// Key time in seconds.
    #[serde(default)]
    time: Option<f64>,
    /// Typed value as in set_node_property. position/scale: Vector3; rotation: Vector3 of
    /// Euler radians; bezier: number; method: {"method", "args"}; audio: res:// stream.
    #[serde(default)]
    value: Option<Value>,
    /// Easing (1 linear; <1 ease out; >1 ease in).
    #[serde(default)]
    transition: Option<f64>,
    /// Several keys in one undo action, instead of time and value.
    #[serde(default)]
    #[schemars(length(max = 10000))]
    keys: Vec<cmd::AnimationKey>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KeyArgs {
    /// AnimationPlayer/AnimationTree node path.
    player: String,
    /// Animation: name, or library/name.
    animation: String,
    /// Track index.
    track: u32,
    /// Time of the key, in seconds.
    time: f64,
}
}

reply_fields!(
    pub(crate) struct AnimationAdded {
        player: String,
        animation: String,
        length: f64,
        loop_mode: String,
        step: f64,
        /// The player's autoplay animation, when the call set it.
        autoplay: String,
        /// Its tracks, when the call made some.
        tracks: i64,
    }
);

reply_fields!(
    pub(crate) struct AnimationSettings {
        player: String,
        animation: String,
        length: f64,
        step: f64,
        loop_mode: String,
        tracks: Vec<TrackSettingsHeld>,
        track_count: i64,
    }
);

/// One track's settings as Godot holds them after `set_animation`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TrackSettingsHeld {
    track: i64,
    interpolation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    update_mode: Option<String>,
}

reply_fields!(
    pub(crate) struct AnimationRemoved {
        player: String,
        animation: String,
    }
);

reply_fields!(
    pub(crate) struct TrackAdded {
        player: String,
        animation: String,
        track: i64,
        track_type: String,
        path: String,
        interpolation: String,
        update_mode: String,
        /// Keys inserted into the track.
        keys: i64,
        track_count: i64,
    }
);

reply_fields!(
    pub(crate) struct TrackRemoved {
        player: String,
        animation: String,
        track: i64,
        track_count: i64,
    }
);

reply_fields!(
    pub(crate) struct KeyInserted {
        player: String,
        animation: String,
        track: i64,
        key: i64,
        time: f64,
        /// Keys inserted, when more than one.
        inserted: i64,
        track_count: i64,
    }
);

reply_fields!(
    pub(crate) struct KeyRemoved {
        player: String,
        animation: String,
        track: i64,
        time: f64,
        track_count: i64,
    }
);

/// A live animation (`animation.get`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LiveAnimation {
    scene: String,
    player: String,
    animation: String,
    length: f64,
    loop_mode: String,
    step: f64,
    tracks: Vec<LiveTrack>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LiveTrack {
    index: i64,
    #[serde(rename = "type")]
    track_type: String,
    path: String,
    interpolation: String,
    /// Value tracks: continuous, discrete or capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    update_mode: Option<String>,
    key_count: i64,
    keys: Vec<LiveKey>,
    truncated: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LiveKey {
    time: f64,
    transition: f64,
    /// The editor's typed value JSON.
    value: Value,
}

pub(crate) fn tools() -> Vec<ToolDef> {
    [
        animation_tools(),
        track_tools(),
        super::tree::tools(),
        live_tools(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Animations: add, set, remove.
fn animation_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    vec![
        ToolDef::planned(
            meta(
                Mutating,
                "add_animation",
                "Add an animation",
                "Add an animation (length, loop mode, step, autoplay, tracks with keys) to an \
                 AnimationPlayer's library in the edited scene (one undo action).",
            ),
            |state, a: AddAnimationArgs| {
                let p = cmd::AnimationAdd {
                    player: a.player.clone(),
                    library: a.library,
                    name: a.name,
                    length: a.length,
                    loop_mode: a.loop_mode,
                    step: a.step,
                    autoplay: a.autoplay,
                    tracks: a.tracks,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, AnimationAdded, InSceneOrNull>(
                        state,
                        "set_property",
                        a.player,
                        p,
                    )
                })
            },
        ),
        ToolDef::planned(
            meta(
                Mutating,
                "set_animation",
                "Set an animation's settings",
                "Set an animation's length, step, loop mode and its tracks' update mode \
                 and interpolation (one undo action); answers what Godot holds.",
            ),
            |state, a: SetAnimationArgs| {
                let p = cmd::AnimationSet {
                    player: a.player.clone(),
                    animation: a.animation,
                    length: a.length,
                    step: a.step,
                    loop_mode: a.loop_mode,
                    tracks: a.tracks,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, AnimationSettings, InSceneOrNull>(
                        state,
                        "set_property",
                        a.player,
                        p,
                    )
                })
            },
        ),
        ToolDef::planned(
            meta(
                Destructive,
                "remove_animation",
                "Remove an animation",
                "Remove an animation from an AnimationPlayer in the edited scene (one undo \
                 action).",
            ),
            |state, a: AnimationArgs| {
                let p = cmd::AnimationRemove {
                    player: a.player.clone(),
                    animation: a.animation,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, AnimationRemoved, InSceneOrNull>(
                        state,
                        "set_property",
                        a.player,
                        p,
                    )
                })
            },
        ),
    ]
}

/// Tracks and their keys.
fn track_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    vec![
        ToolDef::planned(
            meta(
                Mutating,
                "add_animation_track",
                "Add an animation track",
                "Add a track (value, position/rotation/scale 3D, bezier, method, audio…) \
                 to an animation in the edited scene (one undo action).",
            ),
            |state, a: AddTrackArgs| {
                let p = cmd::AnimationTrackAdd {
                    player: a.player.clone(),
                    animation: a.animation,
                    track_type: a.track_type,
                    path: a.path,
                    update_mode: a.update_mode,
                    interpolation: a.interpolation,
                    keys: a.keys,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, TrackAdded, InSceneOrNull>(state, "set_property", a.player, p)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Destructive,
                "remove_animation_track",
                "Remove an animation track",
                "Remove a track and its keys from an animation in the edited scene (one \
                 undo action).",
            ),
            |state, a: TrackArgs| {
                let p = cmd::AnimationTrackRemove {
                    track: int("track", a.track)?,
                    player: a.player.clone(),
                    animation: a.animation,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, TrackRemoved, InSceneOrNull>(state, "set_property", a.player, p)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Mutating,
                "insert_animation_key",
                "Insert an animation key",
                "Insert keyframes (time, typed value, transition; several: keys) into a \
                 track; refused where a key exists (one undo action).",
            ),
            |state, a: InsertKeyArgs| {
                let mut keys = a.keys.into_iter();
                let first = match (a.time, a.value) {
                    (Some(time), Some(value)) => cmd::AnimationKey {
                        time,
                        value,
                        transition: a.transition.unwrap_or(1.0),
                    },
                    (None, None) => keys.next().ok_or_else(|| {
                        ToolError::invalid_params(
                            "time",
                            "give time and value, or keys: [{\"time\": 0.5, \"value\": …}]",
                        )
                    })?,
                    _ => {
                        return Err(ToolError::invalid_params(
                            "value",
                            "time and value go together (or use keys)",
                        ));
                    }
                };
                let p = cmd::AnimationKeyInsert {
                    track: int("track", a.track)?,
                    player: a.player.clone(),
                    animation: a.animation,
                    time: first.time,
                    value: first.value,
                    transition: first.transition,
                    more: keys.collect(),
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, KeyInserted, InSceneOrNull>(state, "set_property", a.player, p)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Destructive,
                "remove_animation_key",
                "Remove an animation key",
                "Remove the keyframe at a time from a track (one undo action).",
            ),
            |state, a: KeyArgs| {
                let p = cmd::AnimationKeyRemove {
                    track: int("track", a.track)?,
                    player: a.player.clone(),
                    animation: a.animation,
                    time: a.time,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, KeyRemoved, InSceneOrNull>(state, "set_property", a.player, p)
                })
            },
        ),
    ]
}

/// The live read of an animation.
fn live_tools() -> Vec<ToolDef> {
    use crate::rules::class::ReadOnly;
    vec![editor_read::<_, _, LiveAnimation>(
        meta(
            ReadOnly,
            "get_editor_animation",
            "Get a live animation",
            "Read an animation as the editor holds it now (unsaved edits included): \
                 length, step, loop mode, tracks (update mode, interpolation) and keys.",
        ),
        |a: &GetAnimationArgs| {
            let p = cmd::AnimationGet {
                player: a.player.clone(),
                animation: a.animation.clone(),
                max_keys: a.max_keys,
            };
            (p, Some(a.player.clone()))
        },
    )]
}
