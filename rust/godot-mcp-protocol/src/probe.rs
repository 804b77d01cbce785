//! The game probe's control socket: the messages between the server and the runtime
//! probe inside a managed game (the add-on's `GodotMcpProbe`, or the test stand-in).
//!
//! One JSON object per line. The probe speaks first with a [`ProbeHelloFrame`]
//! (`{"hello": {nonce, pid, renderer}}`); then the server sends [`ProbeFrame`]s — a
//! [`ProbeRequest`] tagged by `cmd`, with the request `id` beside it — and the probe
//! answers each with a [`ProbeReply`]: the same `id`, `ok`, and either the request's
//! answer body (see each request) or a [`ProbeRefusal`] (`error`, `message`).
//!
//! Values of the game (`get_property`, `evaluate`) travel in the one value model's JSON
//! form ([`godot_mcp_formats::variant::Value`]), so an agent sees the same JSON whether a
//! value came from a file, the editor or the running game.

use std::collections::BTreeMap;

pub use godot_mcp_formats::variant::Value;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value as Json};

/// The probe's first line: `{"hello": {…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeHelloFrame {
    pub hello: ProbeHello,
}

/// Who connected: the session nonce the server checks, the game's pid, and whether
/// its Godot build has a renderer (screenshots need one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeHello {
    pub nonce: String,
    pub pid: u32,
    pub renderer: bool,
}

/// One request on the wire: its `id` (echoed by the answer) and the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeFrame {
    pub id: u64,
    #[serde(flatten)]
    pub request: ProbeRequest,
}

/// A synthetic input event, as `input` takes it and the recorder reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProbeEvent {
    /// A key by Godot name (`Space`, `A`, `Escape`).
    Key { key: String },
    /// A mouse button (1 left, 2 right, 3 middle) at a viewport position. Godot keeps
    /// positions as `f32`; the position is absent (`null`) for "wherever".
    MouseButton {
        button: i64,
        x: Option<f32>,
        y: Option<f32>,
    },
    /// An input-map action.
    Action { action: String },
}

/// What the server asks the probe, tagged by `cmd`. The answer body of each is named
/// in its doc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum ProbeRequest {
    /// → [`StatusReply`].
    Status {},
    /// Press `event`, release it after `hold_ms` (0: at once). With `at_frame`, on
    /// that clock frame instead (see [`ClockReply::frame`]), held for `hold_frames`
    /// frames (0: released on the same frame); `hold_ms` is then ignored. → [`HeldReply`].
    Input {
        event: ProbeEvent,
        hold_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_frame: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold_frames: Option<u64>,
    },
    /// Release every held input. → [`ReleasedReply`].
    ReleaseAll {},
    /// The root viewport as PNG after `frames` frames. → [`ScreenshotReply`].
    Screenshot {
        frames: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_bytes: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_edge: Option<u64>,
    },
    /// A node's property. → [`ValueReply`].
    GetProperty { node: String, property: String },
    /// A Godot Expression on the current scene. → [`ValueReply`].
    Evaluate { expression: String },
    /// Release everything and quit. → [`Empty`].
    Quit {},
    /// One snapshot of the performance monitors. → [`MonitorsReply`].
    Monitors {},
    /// A page of the scene tree from `root`, depth-first. → [`TreeReply`].
    Tree {
        root: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_depth: Option<u64>,
        offset: u64,
        limit: u64,
    },
    /// Controls of class `type` whose text contains `text`. → [`FindUiReply`].
    FindUi {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(rename = "type")]
        class: String,
        limit: u64,
    },
    /// A property once a frame for `frames` frames. → [`SampleReply`].
    Sample {
        node: String,
        property: String,
        frames: u64,
    },
    /// Start recording the game's input. → [`RecordingReply`].
    RecordStart {},
    /// Stop recording. → [`RecordedReply`].
    RecordStop {},
    /// The agent holds the clock: the game stops advancing. → [`ClockReply`].
    ClockPause {},
    /// The game runs free again. → [`ClockReply`].
    ClockResume {},
    /// Advance `frames` frames of `unit`, then hold the clock; with `until`, stop
    /// early after the first physics frame on which that Expression is truthy.
    /// `watch` is sampled after each frame in `at` and every `every`-th frame (a
    /// frame number divisible by it). Answered once the frames have run. → [`StepReply`].
    ClockStep(ClockStep),
}

/// `clock_step`'s parameters ([`ProbeRequest::ClockStep`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockStep {
    /// How many frames of `unit` to run.
    pub frames: u64,
    /// What a frame counts.
    #[serde(default)]
    pub unit: ClockUnit,
    /// An Expression: stop after the first physics frame on which it is truthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// What is sampled after the frames in `at` and every `every`-th frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watch: Vec<Watch>,
    /// Sample on every frame number divisible by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u64>,
    /// Sample after these frame numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<u64>,
}

/// What one step of the clock counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ClockUnit {
    /// Physics frames (each advances physics by 1/physics_ticks_per_second).
    #[default]
    Physics,
    /// Main-loop iterations (process frames: the physics frames due in it, then `_process`).
    Process,
}

/// One watched value: a node's property, or an Expression on the current scene.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Watch {
    /// A node's property (`node`: a path from the root, e.g. /root/Main/Ball).
    Property { node: String, property: String },
    /// A Godot Expression whose base is the current scene.
    Expression { expression: String },
}

impl ProbeRequest {
    /// The `cmd` tag of this request.
    pub fn cmd(&self) -> &'static str {
        match self {
            Self::Status {} => "status",
            Self::Input { .. } => "input",
            Self::ReleaseAll {} => "release_all",
            Self::Screenshot { .. } => "screenshot",
            Self::GetProperty { .. } => "get_property",
            Self::Evaluate { .. } => "evaluate",
            Self::Quit {} => "quit",
            Self::Monitors {} => "monitors",
            Self::Tree { .. } => "tree",
            Self::FindUi { .. } => "find_ui",
            Self::Sample { .. } => "sample",
            Self::RecordStart {} => "record_start",
            Self::RecordStop {} => "record_stop",
            Self::ClockPause {} => "clock_pause",
            Self::ClockResume {} => "clock_resume",
            Self::ClockStep(_) => "clock_step",
        }
    }
}

/// Every `cmd` the probe knows, in [`ProbeRequest`]'s order.
pub const PROBE_COMMANDS: [&str; 16] = [
    "status",
    "input",
    "release_all",
    "screenshot",
    "get_property",
    "evaluate",
    "quit",
    "monitors",
    "tree",
    "find_ui",
    "sample",
    "record_start",
    "record_stop",
    "clock_pause",
    "clock_resume",
    "clock_step",
];

/// Why the probe did not do what was asked: a stable `error` code and a sentence.
/// A too-large screenshot also says how large (`bytes`, `width`, `height`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRefusal {
    pub error: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<i64>,
}

impl ProbeRefusal {
    pub fn new(error: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: error.into(),
            message: message.into(),
            bytes: None,
            width: None,
            height: None,
        }
    }
}

/// The answer to one request: its `id`, and `ok: true` with the body `T`, or
/// `ok: false` with a [`ProbeRefusal`]. On the wire the body's fields sit beside `id`
/// and `ok`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeReply<T> {
    pub id: u64,
    pub outcome: Result<T, ProbeRefusal>,
}

impl<T> ProbeReply<T> {
    pub fn ok(id: u64, body: T) -> Self {
        Self {
            id,
            outcome: Ok(body),
        }
    }

    pub fn refused(id: u64, refusal: ProbeRefusal) -> Self {
        Self {
            id,
            outcome: Err(refusal),
        }
    }
}

impl<T: Serialize> ProbeReply<T> {
    /// The reply as one JSON object (the wire form, without the newline).
    pub fn to_json(&self) -> Json {
        let (ok, body) = match &self.outcome {
            Ok(b) => (true, serde_json::to_value(b)),
            Err(r) => (false, serde_json::to_value(r)),
        };
        let mut map = match body {
            Ok(Json::Object(m)) => m,
            // A body is always a struct; anything else is a bug in the answer type.
            Ok(other) => Map::from_iter([("value".to_string(), other)]),
            Err(e) => Map::from_iter([
                ("error".to_string(), Json::from("encode_failed")),
                ("message".to_string(), Json::from(e.to_string())),
            ]),
        };
        map.insert("id".into(), Json::from(self.id));
        map.insert("ok".into(), Json::Bool(ok));
        Json::Object(map)
    }
}

impl<T: Serialize> Serialize for ProbeReply<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for ProbeReply<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RawReply::deserialize(d)?
            .decode()
            .map_err(|e| D::Error::custom(e.0))
    }
}

/// A reply whose `id` and `ok` are read but whose body is not decoded yet: the server
/// matches the `id` first, then decodes the body as the answer its request expects.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RawReply {
    pub id: u64,
    pub ok: bool,
    #[serde(flatten)]
    pub body: Map<String, Json>,
}

/// A probe message that does not have the shape its protocol says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl RawReply {
    /// The body as the answer `T` (or the refusal, when not `ok`).
    pub fn decode<T: DeserializeOwned>(self) -> Result<ProbeReply<T>, Malformed> {
        let body = Json::Object(self.body);
        let outcome = if self.ok {
            Ok(serde_json::from_value::<T>(body)
                .map_err(|e| Malformed(format!("answer to request {}: {e}", self.id)))?)
        } else {
            Err(serde_json::from_value::<ProbeRefusal>(body)
                .map_err(|e| Malformed(format!("refusal of request {}: {e}", self.id)))?)
        };
        Ok(ProbeReply {
            id: self.id,
            outcome,
        })
    }
}

/// Decodes one request line as the probe receives it. A line that is not a request
/// gets the refusal to answer with, and the `id` to answer it under when the line had
/// one: `unknown_command` for a `cmd` the probe does not know, `bad_request` for any
/// other shape (a missing field, a field of the wrong type, not JSON at all).
pub fn decode_request(line: &[u8]) -> Result<ProbeFrame, (Option<u64>, ProbeRefusal)> {
    let json: Json = serde_json::from_slice(line).map_err(|e| {
        (
            None,
            ProbeRefusal::new("bad_request", format!("not JSON: {e}")),
        )
    })?;
    let id = json.get("id").and_then(Json::as_u64);
    let cmd = json.get("cmd").and_then(Json::as_str).map(str::to_owned);
    serde_json::from_value::<ProbeFrame>(json).map_err(|e| match cmd {
        Some(cmd) if !PROBE_COMMANDS.contains(&cmd.as_str()) => {
            (id, ProbeRefusal::new("unknown_command", cmd))
        }
        _ => (id, ProbeRefusal::new("bad_request", e.to_string())),
    })
}

/// An answer with nothing in it (`quit`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// `status`: whether the game is stopped at a breakpoint, and the inputs it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReply {
    pub breaked: bool,
    pub held: u64,
}

/// `input`: the inputs held now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldReply {
    pub held: u64,
}

/// `release_all`: how many held inputs were released.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleasedReply {
    pub released: u64,
}

/// `screenshot`: the PNG (base64) and, from the real probe, its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenshotReply {
    pub png_base64: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// `get_property` / `evaluate`: one value of the game, in the value model's JSON form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueReply {
    #[serde(with = "value_json")]
    pub value: Value,
}

/// `monitors`: one snapshot, by monitor name (`null` for a value that is not a number).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorsReply {
    pub monitors: BTreeMap<String, Option<f64>>,
}

/// One node of the game's tree (also get_game_tree's result rows, hence the schema
/// and the strict decoding: an undeclared field is a malformed answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "GameNode")
)]
#[serde(deny_unknown_fields)]
pub struct TreeNode {
    pub path: String,
    pub name: String,
    pub class: String,
    pub depth: u64,
    pub children: u64,
}

/// `tree`: a page of nodes, how many there are in all, and whether the walk stopped at
/// its cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeReply {
    pub nodes: Vec<TreeNode>,
    pub total: u64,
    pub capped: bool,
}

/// A screen rectangle (Godot's `f32`s, kept digit for digit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UiRect {
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
}

/// One Control found by `find_ui` (also find_ui_elements' result rows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UiElement {
    pub path: String,
    pub class: String,
    pub text: String,
    pub rect: UiRect,
    pub visible: bool,
}

/// `find_ui`: the first `limit` matches, how many matched, whether the walk was capped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindUiReply {
    pub elements: Vec<UiElement>,
    pub matched: u64,
    pub capped: bool,
}

/// `sample`: the property's text on each frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleReply {
    pub values: Vec<String>,
}

/// `record_start`: recording runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingReply {
    pub recording: bool,
}

/// One recorded input: when (ms since the start, and the clock frame it reached the
/// game on, from a probe that counts frames), what, and pressed or released.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedEvent {
    pub t_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    pub event: ProbeEvent,
    pub pressed: bool,
}

/// `record_stop`: the recorded inputs, those not in the replayable form (by class), and
/// how long the recording ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedReply {
    pub events: Vec<RecordedEvent>,
    pub skipped: BTreeMap<String, u64>,
    pub duration_ms: u64,
}

/// `clock_pause` / `clock_resume`: the clock frame (physics frames the game has
/// advanced while the probe ran), and whether the agent holds the clock now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockReply {
    pub frame: u64,
    pub paused: bool,
}

/// One sampled frame: its clock frame and the watched values in `watch` order, each
/// in the value model's JSON form, or, for a watch that could not be read (the node is
/// gone, the expression failed), [`watch_error`]: never `null` for a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchRow {
    pub frame: u64,
    pub values: Vec<Json>,
}

/// A watched value that could not be read, in a watch row (and a playtest
/// expectation's value): `{"$error": kind, "message": why}`; `kind` is the probe's
/// refusal name (`parse_error`, `execute_failed`, `method_not_called`,
/// `node_not_found`) and `message` the engine's own text.
pub fn watch_error(kind: &str, message: &str) -> Json {
    serde_json::json!({"$error": kind, "message": message})
}

/// The refusal of a step whose `until` failed after `frame` frames: its kind, and
/// Godot's text with where the clock holds.
pub fn until_failed(frame: u64, message: &str) -> String {
    format!("until failed after frame {frame} (the clock holds there): {message}")
}

/// `clock_step`: the frame the clock stands at (held), the frames it advanced, whether
/// `until` became true (absent without one), and the sampled rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReply {
    pub frame: u64,
    pub advanced: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    pub rows: Vec<WatchRow>,
}

/// A [`Value`] as its JSON form (`serde(with)`): the one value model has its own
/// codec, and a value it refuses is a decode error, not a panic.
pub mod value_json {
    use super::{Json, Value};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        v.to_json().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let json = Json::deserialize(d)?;
        Value::from_json(&json).map_err(|e| D::Error::custom(e.0))
    }
}

#[cfg(test)]
mod tests;
