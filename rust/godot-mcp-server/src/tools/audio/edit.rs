//! Audio bus layout edits on the file plane: add, remove and set buses, add and remove
//! their effects. Each is destructive by the classification rule (a resource file write
//! no undo stack covers; spec names remove_audio_bus). The layout file is read, edited
//! as a model (`godot_mcp_formats::audio_bus::LayoutFile`), written back the way Godot's
//! text saver writes it, and applied through the one write seam with the hash of the
//! bytes that were read as the compare-and-swap expectation. Every result carries the
//! buses read back from the new bytes as Godot will load them.

use std::sync::Arc;

use godot_mcp_formats::Literal as GValue;
use godot_mcp_formats::audio_bus::{Bus, BusEffect, EffectResource, LayoutFile};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use godot_mcp_formats::variant;

use crate::error::ToolError;
use crate::honesty::Persistence;
use crate::honesty::{EditReply, InSceneOrNull};
use crate::planes::project::Expect;
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::audio::read::{buses_json, layout_target};
use crate::tools::kit::editor::NodeCommand;
use crate::tools::kit::editor::present;
use crate::tools::kit::editor::{node_edit, reply_fields};
use crate::tools::kit::file_write::{FileEffect, plan_write};
use crate::tools::kit::scene_doc::Doc;
use crate::tools::kit::tres_edit::{
    FileEdit, check_expected, edit_args, edit_meta, is_property_name, read_model, require_tres,
    sub_id,
};
use crate::tools::{Also, Committed, Plan, ToolDef, ToolMeta};

fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::Destructive> {
    edit_meta(Toolset::Audio, name, title, description)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::planned(
            meta(
                "add_audio_bus",
                "Add an audio bus",
                "Add a bus to the audio bus layout file (volume, mute, solo, bypass, send).",
            ),
            plan_add_bus,
        ),
        ToolDef::planned(
            meta(
                "remove_audio_bus",
                "Remove an audio bus",
                "Remove a bus and its effects from the audio bus layout file (not Master).",
            ),
            plan_remove_bus,
        ),
        ToolDef::planned(
            meta(
                "set_audio_bus",
                "Set an audio bus",
                "Rename a bus or set its volume_db, mute, solo, bypass_fx or send in the \
                 audio bus layout file.",
            ),
            plan_set_bus,
        ),
        ToolDef::planned(
            meta(
                "add_audio_bus_effect",
                "Add an audio bus effect",
                "Add an AudioEffect (Reverb, Delay, Compressor…) with properties to a bus \
                 of the audio bus layout file.",
            ),
            plan_add_effect,
        ),
        ToolDef::planned(
            meta(
                "remove_audio_bus_effect",
                "Remove an audio bus effect",
                "Remove the effect at an index from a bus of the audio bus layout file.",
            ),
            plan_remove_effect,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "add_audio_player",
                title: "Add an audio player",
                description: "Add an AudioStreamPlayer (or 2D/3D) with a stream, bus, \
                    autoplay and volume to the edited scene (one undo action).",
                class: class::Mutating,
                toolset: Toolset::Audio,
                effect: Some(EffectKind::EditorRuntime),
            },
            plan_add_player,
        ),
    ]
}

/// The player classes (`godot_mcp_protocol`'s `audio.add_player` takes these).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(crate) enum PlayerType {
    AudioStreamPlayer,
    AudioStreamPlayer2D,
    AudioStreamPlayer3D,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddPlayerArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    /// Default AudioStreamPlayer.
    #[serde(rename = "type", default)]
    player_type: Option<PlayerType>,
    /// An audio file or AudioStream resource.
    #[serde(default)]
    stream: Option<ResPath>,
    /// Bus name (default Master).
    #[serde(default)]
    bus: Option<String>,
    #[serde(default)]
    autoplay: bool,
    #[serde(default)]
    volume_db: Option<f64>,
}

reply_fields!(
    pub(crate) struct PlayerAdded {
        node: String,
        #[serde(rename = "type")]
        player_type: String,
        /// The stream's file (null: none).
        #[serde(deserialize_with = "present")]
        #[schemars(transform = crate::honesty::nullable)]
        stream: Option<String>,
        bus: String,
        autoplay: bool,
        volume_db: f64,
    }
);

fn plan_add_player(
    state: Arc<AppState>,
    a: AddPlayerArgs,
) -> Result<Plan<NodeCommand, EditReply<PlayerAdded, InSceneOrNull>>, ToolError> {
    if let Some(b) = &a.bus {
        check_bus_name("bus", b)?;
    }
    if let Some(v) = a.volume_db {
        check_volume(v)?;
    }
    let ty = match a.player_type.unwrap_or(PlayerType::AudioStreamPlayer) {
        PlayerType::AudioStreamPlayer => "AudioStreamPlayer",
        PlayerType::AudioStreamPlayer2D => "AudioStreamPlayer2D",
        PlayerType::AudioStreamPlayer3D => "AudioStreamPlayer3D",
    };
    let p = godot_mcp_protocol::commands::AudioAddPlayer {
        parent: a.parent.clone(),
        name: a.name,
        player_type: ty.into(),
        stream: a.stream.map(|s| s.to_string()),
        bus: a.bus,
        autoplay: a.autoplay,
        volume_db: a.volume_db,
    };
    node_edit(state, "create", a.parent, p)
}

/// The AudioEffect classes Godot 4.4 can instance (`ClassDB`, not abstract).
const EFFECT_CLASSES: [&str; 27] = [
    "AudioEffectAmplify",
    "AudioEffectBandLimitFilter",
    "AudioEffectBandPassFilter",
    "AudioEffectCapture",
    "AudioEffectChorus",
    "AudioEffectCompressor",
    "AudioEffectDelay",
    "AudioEffectDistortion",
    "AudioEffectEQ",
    "AudioEffectEQ10",
    "AudioEffectEQ21",
    "AudioEffectEQ6",
    "AudioEffectFilter",
    "AudioEffectHardLimiter",
    "AudioEffectHighPassFilter",
    "AudioEffectHighShelfFilter",
    "AudioEffectLimiter",
    "AudioEffectLowPassFilter",
    "AudioEffectLowShelfFilter",
    "AudioEffectNotchFilter",
    "AudioEffectPanner",
    "AudioEffectPhaser",
    "AudioEffectPitchShift",
    "AudioEffectRecord",
    "AudioEffectReverb",
    "AudioEffectSpectrumAnalyzer",
    "AudioEffectStereoEnhance",
];

/// The persistence of a layout write: on disk, but an open editor holds its own copy.
fn layout_on_disk() -> Persistence {
    Persistence {
        persisted: true,
        reason: "written to the bus layout file on disk atomically".into(),
        hint: Some(
            "A running Godot editor keeps the layout it loaded and writes it back when its \
             Audio panel changes; load this file there (Audio > Load Layout) to use it."
                .into(),
        ),
    }
}

/// What a layout edit reports besides the write: where the layout file came from, what
/// the edit changed (`C`), and the buses read back from the bytes written.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct LayoutChange<C> {
    layout_source: &'static str,
    change: C,
    /// As get_audio_bus_layout reports them.
    buses: Vec<Value>,
}

type LayoutPlan<C> = Plan<Also<FileEffect, LayoutChange<C>>, Committed>;

/// Read the layout, apply `edit`, and plan the write of the result. `edit` returns what
/// it changed, reported under `change`.
fn plan_layout_edit<C>(
    state: Arc<AppState>,
    file: FileEdit<Option<ResPath>>,
    edit: impl FnOnce(&mut LayoutFile) -> Result<C, ToolError>,
) -> Result<LayoutPlan<C>, ToolError> {
    let (path, source) = layout_target(&state, file.path)?;
    require_tres(&path, "AudioBusLayout")?;
    let real = state.project.resolve("path", &path)?;
    let (mut layout, read_sha) = match std::fs::metadata(&real) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (LayoutFile::builtin(), None),
        _ => {
            let (layout, sha) = read_model(
                &state,
                &path,
                &real,
                "AudioBusLayout",
                LayoutFile::from_resource,
            )?;
            (layout, Some(sha))
        }
    };
    let change = edit(&mut layout)?;
    let text = layout.to_text();
    // The read-back is derived from the bytes about to be written, not from the model.
    let written = godot_mcp_formats::parse_resource(&text)
        .map_err(|e| ToolError::internal(format!("the layout written does not parse: {e}")))?;
    let buses = buses_json(&path, &Doc::Resource(written))?;
    check_expected(
        &path,
        file.expected_sha256.as_deref(),
        read_sha.as_deref(),
        "Read the layout again (get_audio_bus_layout, read_resource) and retry.",
    )?;
    let expect = read_sha.as_deref().map_or(Expect::Absent, Expect::Sha256);
    let plan = plan_write(
        &state,
        "path",
        path,
        text.into_bytes(),
        expect,
        layout_on_disk(),
    )?;
    Ok(plan.map_effect(|write| Also {
        base: write,
        more: LayoutChange {
            layout_source: source,
            change,
            buses,
        },
    }))
}

fn check_bus_name(param: &str, name: &str) -> Result<(), ToolError> {
    if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
        return Err(ToolError::invalid_params(
            param,
            format!("{name:?} is not a bus name (1 to 128 characters, no control characters)"),
        ));
    }
    Ok(())
}

fn bus_not_found(layout: &LayoutFile, param: &str, name: &str) -> ToolError {
    let names: Vec<&str> = layout.buses.iter().map(|b| b.name.as_str()).collect();
    ToolError::not_found(format!("the layout has no bus {name:?}"))
        .param(param)
        .hint(format!("Buses: {}", names.join(", ")))
}

fn find_bus(layout: &LayoutFile, param: &str, name: &str) -> Result<usize, ToolError> {
    layout
        .bus_index(name)
        .ok_or_else(|| bus_not_found(layout, param, name))
}

/// Godot mixes a bus into one before it: the editor offers only earlier buses as sends.
fn check_send(layout: &LayoutFile, index: usize, send: &str) -> Result<(), ToolError> {
    if send.is_empty() {
        return Ok(());
    }
    match layout.bus_index(send) {
        Some(s) if s < index => Ok(()),
        Some(_) => Err(ToolError::invalid_params(
            "send",
            format!(
                "bus {:?} comes after (or is) this bus; a bus sends only to one before it",
                send
            ),
        )
        .hint("Godot mixes buses from last to first, so a send points to an earlier bus.")),
        None => Err(bus_not_found(layout, "send", send)),
    }
}

fn check_volume(v: f64) -> Result<(), ToolError> {
    if v.is_finite() && (-80.0..=24.0).contains(&v) {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            "volume_db",
            "volume_db must be between -80 and 24 (the editor's fader range)",
        ))
    }
}

// The settings a bus is created with and changed by: add_audio_bus and set_audio_bus
// take the same fields after their own (one declaration; `#[serde(flatten)]` would
// lose deny_unknown_fields' error text). Each tool keeps its own notes on `volume_db`
// and `send` (their defaults differ).
macro_rules! bus_args {
    ($(
        $(#[$sm:meta])* pub struct $name:ident { $($own:tt)* }
        volume_db: $(#[$vd:meta])*;
        send: $(#[$sd:meta])*;
    )*) => {
        edit_args! {
            path: [
                /// An AudioBusLayout .tres (default: the project's).
                #[serde(default)]
                Option<ResPath>
            ];
            $(
                $(#[$sm])*
                pub struct $name {
                    $($own)*
                    $(#[$vd])*
                    #[serde(default)]
                    volume_db: Option<f64>,
                    #[serde(default)]
                    mute: Option<bool>,
                    #[serde(default)]
                    solo: Option<bool>,
                    #[serde(default)]
                    bypass_fx: Option<bool>,
                    $(#[$sd])*
                    #[serde(default)]
                    send: Option<String>,
                }
            )*
        }
    };
}

bus_args! {
    pub struct AddBusArgs {
        /// The new bus's name (unique).
        name: String,
        /// Position (default: last; 0 is Master and cannot be taken).
        #[serde(default)]
        at_index: Option<usize>,
    }
    volume_db: /// Default 0.
    ;
    send: /// An earlier bus it feeds (default: empty, which is Master).
    ;

    pub struct SetBusArgs {
        /// The bus, by name.
        bus: String,
        /// A new name (not for Master).
        #[serde(default)]
        new_name: Option<String>,
    }
    volume_db: ;
    send: /// An earlier bus it feeds.
    ;
}

// The arguments of the layout edits.
edit_args! {
    path: [
        /// An AudioBusLayout .tres (default: the project's).
        #[serde(default)]
        Option<ResPath>
    ];

    pub struct BusArgs {
        /// The bus, by name.
        bus: String,
    }

    pub struct AddEffectArgs {
        /// The bus, by name.
        bus: String,
        /// AudioEffect class, e.g. AudioEffectReverb.
        effect: String,
        /// The effect's properties as JSON, e.g. {"room_size": 0.5}.
        #[serde(default)]
        properties: Map<String, Value>,
        /// Default true.
        #[serde(default)]
        enabled: Option<bool>,
        /// Slot (default: last).
        #[serde(default)]
        at_index: Option<usize>,
    }

    pub struct RemoveEffectArgs {
        /// The bus, by name.
        bus: String,
        /// The effect's slot (get_audio_bus_layout lists them).
        index: usize,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BusAdded {
    added: String,
    index: usize,
}

fn plan_add_bus(state: Arc<AppState>, args: AddBusArgs) -> Result<LayoutPlan<BusAdded>, ToolError> {
    check_bus_name("name", &args.name)?;
    if let Some(v) = args.volume_db {
        check_volume(v)?;
    }
    plan_layout_edit(state, args.file(), move |layout| {
        if layout.bus_index(&args.name).is_some() {
            return Err(ToolError::invalid_params(
                "name",
                format!("a bus named {:?} already exists", args.name),
            ));
        }
        let at = args.at_index.unwrap_or(layout.buses.len());
        if at == 0 || at > layout.buses.len() {
            return Err(ToolError::invalid_params(
                "at_index",
                format!("at_index must be 1..={} (0 is Master)", layout.buses.len()),
            ));
        }
        // Godot's own add_bus leaves the send empty, which mixes into Master.
        let send = args.send.clone().unwrap_or_default();
        layout.buses.insert(
            at,
            Bus {
                index: at,
                name: args.name.clone(),
                volume_db: args.volume_db.unwrap_or(0.0),
                mute: args.mute.unwrap_or(false),
                solo: args.solo.unwrap_or(false),
                bypass_fx: args.bypass_fx.unwrap_or(false),
                send: send.clone(),
                effects: Vec::new(),
            },
        );
        check_send(layout, at, &send)?;
        reindex(layout);
        Ok(BusAdded {
            added: args.name,
            index: at,
        })
    })
}

fn reindex(layout: &mut LayoutFile) {
    for (i, b) in layout.buses.iter_mut().enumerate() {
        b.index = i;
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BusRemoved {
    removed: String,
    index: usize,
    effects_removed: usize,
    /// Buses whose send named it: Godot routes them to Master now.
    sends_now_to_master: Vec<String>,
}

fn plan_remove_bus(
    state: Arc<AppState>,
    args: BusArgs,
) -> Result<LayoutPlan<BusRemoved>, ToolError> {
    plan_layout_edit(state, args.file(), move |layout| {
        let i = find_bus(layout, "bus", &args.bus)?;
        if i == 0 {
            return Err(ToolError::invalid_params(
                "bus",
                "Master (bus 0) cannot be removed",
            ));
        }
        let removed = layout.buses.remove(i);
        reindex(layout);
        // Godot routes a send that names no bus to Master; say which buses that is now.
        let rerouted: Vec<String> = layout
            .buses
            .iter()
            .filter(|b| b.send == removed.name)
            .map(|b| b.name.clone())
            .collect();
        Ok(BusRemoved {
            effects_removed: removed.effects.len(),
            removed: removed.name,
            index: i,
            sends_now_to_master: rerouted,
        })
    })
}

/// A set field's [before, after], for each field the call set.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct BusChanges {
    #[serde(skip_serializing_if = "Option::is_none")]
    bypass_fx: Option<[bool; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mute: Option<[bool; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<[String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    send: Option<[String; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    solo: Option<[bool; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    volume_db: Option<[f64; 2]>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BusSet {
    bus: String,
    index: usize,
    changed: BusChanges,
}

fn plan_set_bus(state: Arc<AppState>, args: SetBusArgs) -> Result<LayoutPlan<BusSet>, ToolError> {
    if let Some(n) = &args.new_name {
        check_bus_name("new_name", n)?;
    }
    if let Some(v) = args.volume_db {
        check_volume(v)?;
    }
    let nothing = args.new_name.is_none()
        && args.volume_db.is_none()
        && args.mute.is_none()
        && args.solo.is_none()
        && args.bypass_fx.is_none()
        && args.send.is_none();
    if nothing {
        return Err(ToolError::invalid_params(
            "bus",
            "give at least one of new_name, volume_db, mute, solo, bypass_fx, send",
        ));
    }
    plan_layout_edit(state, args.file(), move |layout| {
        let i = find_bus(layout, "bus", &args.bus)?;
        let mut changed = BusChanges::default();
        if let Some(send) = &args.send {
            if i == 0 {
                return Err(ToolError::invalid_params("send", "Master has no send"));
            }
            check_send(layout, i, send)?;
        }
        if let Some(n) = &args.new_name {
            if i == 0 {
                return Err(ToolError::invalid_params(
                    "new_name",
                    "Master keeps its name (Godot renames bus 0 to Master on load)",
                ));
            }
            if layout.bus_index(n).is_some_and(|j| j != i) {
                return Err(ToolError::invalid_params(
                    "new_name",
                    format!("a bus named {n:?} already exists"),
                ));
            }
        }
        let old_name = layout.buses[i].name.clone();
        let bus = &mut layout.buses[i];
        if let Some(v) = args.volume_db {
            changed.volume_db = Some([bus.volume_db, v]);
            bus.volume_db = v;
        }
        for (field, arg, slot) in [
            (&mut changed.mute, args.mute, &mut bus.mute),
            (&mut changed.solo, args.solo, &mut bus.solo),
            (&mut changed.bypass_fx, args.bypass_fx, &mut bus.bypass_fx),
        ] {
            if let Some(v) = arg {
                *field = Some([*slot, v]);
                *slot = v;
            }
        }
        if let Some(send) = &args.send {
            changed.send = Some([bus.send.clone(), send.clone()]);
            bus.send = send.clone();
        }
        if let Some(n) = &args.new_name {
            changed.name = Some([old_name.clone(), n.clone()]);
            bus.name = n.clone();
            // Buses that fed the old name keep feeding this bus.
            for b in layout.buses.iter_mut().filter(|b| b.send == old_name) {
                b.send = n.clone();
            }
        }
        Ok(BusSet {
            bus: old_name,
            index: i,
            changed,
        })
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EffectAdded {
    bus: String,
    effect: String,
    index: usize,
    sub_resource: String,
}

fn plan_add_effect(
    state: Arc<AppState>,
    args: AddEffectArgs,
) -> Result<LayoutPlan<EffectAdded>, ToolError> {
    if !EFFECT_CLASSES.contains(&args.effect.as_str()) {
        return Err(ToolError::invalid_params(
            "effect",
            format!(
                "{:?} is not an AudioEffect class Godot can create",
                args.effect
            ),
        )
        .hint(format!("One of: {}", EFFECT_CLASSES.join(", "))));
    }
    let mut properties = Vec::new();
    for (key, value) in &args.properties {
        if key.len() > 128 || !is_property_name(key) {
            return Err(ToolError::invalid_params(
                format!("properties.{key}"),
                format!("{key:?} is not a property name"),
            ));
        }
        properties.push((
            key.clone(),
            variant::plain_json_text(value, &format!("properties.{key}"))?,
        ));
    }
    plan_layout_edit(state, args.file(), move |layout| {
        let i = find_bus(layout, "bus", &args.bus)?;
        let slots = layout.buses[i].effects.len();
        let at = args.at_index.unwrap_or(slots);
        if at > slots {
            return Err(ToolError::invalid_params(
                "at_index",
                format!("at_index must be 0..={slots}"),
            ));
        }
        let seed = format!("{}/{}/{}/{:?}", args.bus, at, args.effect, properties);
        let id = sub_id(&args.effect, &seed, |id| {
            layout.sub_resources.iter().any(|s| s.id == id)
                || layout.ext_resources.iter().any(|e| e.id == id)
        });
        layout.sub_resources.push(EffectResource {
            id: id.clone(),
            class: args.effect.clone(),
            properties,
        });
        layout.buses[i].effects.insert(
            at,
            BusEffect {
                effect: GValue::SubResource(id.clone()),
                enabled: args.enabled.unwrap_or(true),
            },
        );
        Ok(EffectAdded {
            bus: args.bus,
            effect: args.effect,
            index: at,
            sub_resource: id,
        })
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EffectRemoved {
    bus: String,
    index: usize,
    /// Its class (null: not a sub-resource of the file).
    effect: Option<String>,
}

fn plan_remove_effect(
    state: Arc<AppState>,
    args: RemoveEffectArgs,
) -> Result<LayoutPlan<EffectRemoved>, ToolError> {
    plan_layout_edit(state, args.file(), move |layout| {
        let i = find_bus(layout, "bus", &args.bus)?;
        let slots = layout.buses[i].effects.len();
        if args.index >= slots {
            return Err(ToolError::invalid_params(
                "index",
                format!("bus {:?} has {slots} effect(s)", args.bus),
            ));
        }
        let removed = layout.buses[i].effects.remove(args.index);
        let class = layout.effect_class(&removed.effect).map(str::to_string);
        Ok(EffectRemoved {
            bus: args.bus,
            index: args.index,
            effect: class,
        })
    })
}
