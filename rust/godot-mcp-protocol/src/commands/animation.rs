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

/// An enum of Godot's `Animation` that an agent names as it types it (`"discrete"`,
/// `"ping_pong"`, `"LOOP_LINEAR"`: case, `_` and the constant's prefix do not matter)
/// or by Godot's integer; it travels by its name (snake case).
macro_rules! godot_enum {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $godot:literal, [$($variant:ident = $text:literal),+ $(,)?]) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub enum $name {
            #[default]
            $($variant),+
        }

        impl $name {
            /// The names, in Godot's order (the index is Godot's integer).
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Godot's integer.
            pub fn ord(self) -> i32 {
                self as i32
            }

            /// The name for Godot's integer (a value read back); `unknown` out of range.
            pub fn name_of(ord: i32) -> &'static str {
                usize::try_from(ord)
                    .ok()
                    .and_then(|i| Self::NAMES.get(i).copied())
                    .unwrap_or("unknown")
            }

            pub fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            /// From a name as typed, or Godot's integer.
            pub fn parse(v: &serde_json::Value) -> Result<Self, String> {
                let fold = |s: &str| s.to_ascii_lowercase().replace(['_', '-', ' '], "");
                let found = match v {
                    serde_json::Value::String(s) => {
                        let s = fold(s);
                        let s = s.strip_prefix(&fold($prefix)).unwrap_or(&s).to_string();
                        Self::NAMES.iter().position(|n| fold(n) == s)
                    }
                    serde_json::Value::Number(n) => n
                        .as_u64()
                        .and_then(|i| usize::try_from(i).ok())
                        .filter(|&i| i < Self::NAMES.len()),
                    _ => None,
                };
                found.map(|i| Self::ALL[i]).ok_or_else(|| {
                    format!(
                        "{v} is not one of {} (or Godot's integer 0-{})",
                        Self::NAMES.join(", "),
                        Self::NAMES.len() - 1
                    )
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = serde_json::Value::deserialize(d)?;
                Self::parse(&v).map_err(serde::de::Error::custom)
            }
        }

        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let mut all: Vec<serde_json::Value> =
                    Self::NAMES.iter().map(|n| serde_json::json!(n)).collect();
                all.extend((0..Self::NAMES.len()).map(|i| serde_json::json!(i)));
                schemars::json_schema!({
                    "description": concat!("Godot's ", $godot, ": a name or its integer."),
                    "enum": all
                })
            }
        }
    };
}

godot_enum!(
    /// `Animation.LoopMode`.
    LoopMode, "loop_", "Animation.LoopMode", [None = "none", Linear = "linear", Pingpong = "pingpong"]
);

godot_enum!(
    /// `Animation.UpdateMode` (value tracks).
    UpdateMode, "update_", "Animation.UpdateMode", [Continuous = "continuous", Discrete = "discrete", Capture = "capture"]
);

godot_enum!(
    /// `Animation.InterpolationType`.
    Interpolation, "interpolation_", "Animation.InterpolationType", [
        Nearest = "nearest",
        Linear = "linear",
        Cubic = "cubic",
        LinearAngle = "linear_angle",
        CubicAngle = "cubic_angle",
    ]
);

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
    /// The editor's snap step in seconds; `None`: Godot's default (1/30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    /// Also make it the player's `autoplay` animation (an AnimationPlayer's), in the same
    /// undo action.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub autoplay: bool,
    /// Tracks (with their keys) the new animation is made with, in the same undo action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracks: Vec<NewTrack>,
}

/// A track and its keys.
//
// Made with its animation (`AnimationAdd::tracks`): `animation.track_add`'s fields but
// the player and the animation. Also the agent's argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewTrack {
    pub track_type: TrackType,
    /// Node path from the player's root_node, by default the player's parent: "." is
    /// that parent, "Sprite2D:modulate" a sibling's property (value/bezier tracks take
    /// :property; a method track's path names the node whose method it calls).
    pub path: String,
    /// Value tracks (default continuous).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_mode: Option<UpdateMode>,
    /// Default linear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<Interpolation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = 10000)))]
    pub keys: Vec<AnimationKey>,
}

/// `animation.remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationRemove {
    pub player: String,
    pub animation: String,
}

/// `animation.track_add`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationTrackAdd {
    pub player: String,
    pub animation: String,
    pub track_type: TrackType,
    pub path: String,
    /// Value tracks only; `None`: continuous.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_mode: Option<UpdateMode>,
    /// `None`: linear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<Interpolation>,
    /// Keys inserted into the new track in the same undo action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<AnimationKey>,
}

// One key of a track: `AnimationTrackAdd::keys`, `AnimationKeyInsert::more`; also the
// agent's argument (one type, hence the schema; no doc comment: the schema then has no
// description). `value` is the agent's typed value JSON as given: the add-on reads it by
// the track's property type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AnimationKey {
    /// Seconds.
    pub time: f64,
    pub value: serde_json::Value,
    /// Easing (1 linear).
    #[serde(default = "one")]
    #[cfg_attr(feature = "schema", schemars(default = "one"))]
    pub transition: f64,
}

/// One track's settings in [`AnimationSet`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TrackSettings {
    /// Track index.
    pub track: i32,
    /// Value tracks only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_mode: Option<UpdateMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<Interpolation>,
}

/// `animation.set`: an animation's length, step, loop mode and its tracks' update mode
/// and interpolation, what is named (at least one), in one undo action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimationSet {
    pub player: String,
    pub animation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_mode: Option<LoopMode>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tracks: Vec<TrackSettings>,
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
    /// Keys inserted after this one in the same undo action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<AnimationKey>,
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
