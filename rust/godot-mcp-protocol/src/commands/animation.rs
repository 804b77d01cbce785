//! Animation parameters: animations, tracks, keys, animation trees. One struct per
//! command, the one definition both ends use, like the other commands'. The add-on
//! (`godot_mcp_editor_core::authoring`) adds the checks serde cannot make (names, ranges,
//! `res://` paths) and keeps their error texts.
//!
//! A field the server sends as `null` when it has no value (`name`, `animation`,
//! `advance_condition`, a container's `separation`…) is a plain `Option`; a field it
//! leaves out (`limit`, `max_keys`) skips `None`, so the bytes on the wire stay the ones
//! the pinned snapshot holds (tests/snapshots/editor_bridge__bridge_wire.snap).

use serde::{Deserialize, Serialize};

/// Godot's `Animation.TrackType`, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TrackType {
    Value,
    #[serde(rename = "position_3d")]
    Position3d,
    #[serde(rename = "rotation_3d")]
    Rotation3d,
    #[serde(rename = "scale_3d")]
    Scale3d,
    BlendShape,
    Method,
    Bezier,
    Audio,
    Animation,
}

impl TrackType {
    /// `Animation.TrackType`'s ordinal (the variants are in Godot's order).
    pub fn ord(self) -> i32 {
        self as i32
    }

    /// The name for an ordinal (a track read back).
    pub fn name_of(ord: i32) -> &'static str {
        match ord {
            0 => "value",
            1 => "position_3d",
            2 => "rotation_3d",
            3 => "scale_3d",
            4 => "blend_shape",
            5 => "method",
            6 => "bezier",
            7 => "audio",
            8 => "animation",
            _ => "unknown",
        }
    }
}

/// `Animation.LoopMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LoopMode {
    #[default]
    None,
    Linear,
    Pingpong,
}

impl LoopMode {
    /// `Animation.LoopMode`'s ordinal.
    pub fn ord(self) -> i32 {
        self as i32
    }

    /// The name for an ordinal (an animation read back).
    pub fn name_of(ord: i32) -> &'static str {
        match ord {
            1 => "linear",
            2 => "pingpong",
            _ => "none",
        }
    }
}

/// Which graph of an AnimationTree a node is added to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Graph {
    StateMachine,
    BlendTree,
}

impl Graph {
    /// The graph's Godot class.
    pub fn class(self) -> &'static str {
        match self {
            Graph::StateMachine => "AnimationNodeStateMachine",
            Graph::BlendTree => "AnimationNodeBlendTree",
        }
    }
}

/// The page of a property read when the request names none.
pub const DEFAULT_PROPERTY_PAGE: usize = 500;

/// `animation.add`: a new animation in `library` ("" the default one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationAdd {
    pub player: String,
    #[serde(default)]
    pub library: String,
    pub name: String,
    pub length: f64,
    #[serde(default)]
    pub loop_mode: LoopMode,
}

/// `animation.remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationRemove {
    pub player: String,
    pub animation: String,
}

/// `animation.track_add`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationTrackAdd {
    pub player: String,
    pub animation: String,
    pub track_type: TrackType,
    pub path: String,
}

/// `animation.track_remove`. Track indices are Godot's `int` (the add-on refuses a
/// negative one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationTrackRemove {
    pub player: String,
    pub animation: String,
    pub track: i32,
}

fn one() -> f64 {
    1.0
}

/// `animation.key_insert`. `value` is the agent's typed value JSON as given: the add-on
/// decodes it (`Value::from_json`) and reports a bad one as `value: …`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationKeyInsert {
    pub player: String,
    pub animation: String,
    pub track: i32,
    pub time: f64,
    pub value: serde_json::Value,
    #[serde(default = "one")]
    pub transition: f64,
}

/// `animation.key_remove`: the key at `time`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationKeyRemove {
    pub player: String,
    pub animation: String,
    pub track: i32,
    pub time: f64,
}

/// The keys per track an animation read returns when the request names none.
pub const DEFAULT_MAX_KEYS: usize = 1000;

/// `animation.get`: the live animation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationGet {
    pub player: String,
    pub animation: String,
    /// `None`: [`DEFAULT_MAX_KEYS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_keys: Option<usize>,
}

/// `animation_tree.add_node`: a node in an AnimationTree's state machine or blend tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationTreeAddNode {
    pub tree: String,
    /// The nested graph's path ("a/b"), "" for the tree's root (created when missing).
    #[serde(default)]
    pub parent: String,
    pub graph: Graph,
    pub name: String,
    pub node_type: String,
    #[serde(default)]
    pub animation: Option<String>,
    #[serde(default)]
    pub position: [f64; 2],
}

/// Switch modes by name, as `AnimationNodeStateMachineTransition.SwitchMode` numbers them.
pub const SWITCH_MODES: [&str; 3] = ["immediate", "sync", "at_end"];
/// Advance modes by name (`AnimationNodeStateMachineTransition.AdvanceMode`).
pub const ADVANCE_MODES: [&str; 3] = ["disabled", "enabled", "auto"];

fn default_switch() -> String {
    SWITCH_MODES[0].into()
}

fn default_advance() -> String {
    ADVANCE_MODES[1].into()
}

/// `animation_tree.connect`: a state machine transition. The modes travel by name (one
/// of [`SWITCH_MODES`], [`ADVANCE_MODES`]); the add-on names the list when one is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationTreeConnect {
    pub tree: String,
    #[serde(default)]
    pub state_machine: String,
    pub from: String,
    pub to: String,
    #[serde(default = "default_switch")]
    pub switch_mode: String,
    #[serde(default = "default_advance")]
    pub advance_mode: String,
    #[serde(default)]
    pub advance_condition: Option<String>,
    #[serde(default)]
    pub xfade_time: f64,
}

/// `animation_tree.blend_connect`: `from`'s output into `to`'s input `port`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationTreeBlendConnect {
    pub tree: String,
    #[serde(default)]
    pub blend_tree: String,
    /// The consuming node (`output` is the blend tree's result).
    pub to: String,
    pub port: i32,
    /// The producing node.
    pub from: String,
}
