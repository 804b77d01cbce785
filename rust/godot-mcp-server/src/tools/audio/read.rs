//! The audio bus layout, read from disk as Godot will load it
//! (`godot_mcp_formats::audio_bus`): the project's `audio/buses/default_bus_layout`
//! setting names the file (default `res://default_bus_layout.tres`).

use godot_mcp_formats::audio_bus::parse_bus_layout;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::kit::scene_doc::{Doc, load_doc};
use crate::tools::kit::tres_edit::require_class;
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "get_audio_bus_layout",
            title: "Get the audio bus layout",
            description: "Read the audio bus layout as Godot will load it: buses with volume, \
                mute, solo, bypass, send and effects. Default: the project's layout file.",
            class: class::ReadOnly,
            toolset: Toolset::Audio,
            effect: None,
        },
        get_audio_bus_layout,
    )]
}

const DEFAULT_LAYOUT: &str = "res://default_bus_layout.tres";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BusLayoutArgs {
    /// An AudioBusLayout .tres (default: the project's).
    #[serde(default)]
    path: Option<ResPath>,
}

/// The layout file project.godot names, or Godot's default.
fn project_layout(state: &AppState) -> Result<(String, &'static str), ToolError> {
    let pg = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let real = state.project.resolve("path", &pg)?;
    let text = crate::tools::kit::common::read_text(state, "path", &pg, &real)?;
    let info = godot_mcp_formats::parse_project(&text)
        .map_err(|e| crate::tools::kit::scene_doc::parse_error(&pg, &e))?;
    let set = info
        .sections
        .iter()
        .filter(|s| s.tag == "audio")
        .flat_map(|s| &s.properties)
        .find(|p| p.name == "buses/default_bus_layout")
        .and_then(|p| p.value.as_str().map(str::to_string));
    Ok(match set {
        Some(p) => (p, "project_setting"),
        None => (DEFAULT_LAYOUT.to_string(), "default_path"),
    })
}

/// The layout file a call acts on: `path`, else the one project.godot names, else
/// Godot's default; with where that came from.
pub(crate) fn layout_target(
    state: &AppState,
    path: Option<ResPath>,
) -> Result<(ResPath, &'static str), ToolError> {
    Ok(match path {
        Some(p) => (p, "argument"),
        None => {
            let (p, source) = project_layout(state)?;
            let p = ResPath::parse(&p).map_err(|e| {
                ToolError::new(
                    ErrorCode::PathRefused,
                    format!("audio/buses/default_bus_layout {p:?} is refused: {}", e.0),
                )
            })?;
            (p, source)
        }
    })
}

/// One bus as the read tools report it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BusOut {
    index: usize,
    name: String,
    volume_db: f64,
    mute: bool,
    solo: bool,
    bypass_fx: bool,
    send: String,
    effects: Vec<BusEffectOut>,
}

/// One effect slot: the effect resource (resolved reference) and whether it is on.
#[derive(Debug, Serialize, JsonSchema)]
struct BusEffectOut {
    effect: Value,
    enabled: bool,
}

fn bus_out(b: &godot_mcp_formats::audio_bus::Bus, doc: Option<&Doc>) -> BusOut {
    BusOut {
        index: b.index,
        name: b.name.clone(),
        volume_db: b.volume_db,
        mute: b.mute,
        solo: b.solo,
        bypass_fx: b.bypass_fx,
        send: b.send.clone(),
        effects: b
            .effects
            .iter()
            .map(|e| BusEffectOut {
                effect: match doc {
                    Some(doc) => doc.reference(&e.effect),
                    None => crate::tools::kit::scene_doc::typed(&e.effect),
                },
                enabled: e.enabled,
            })
            .collect(),
    }
}

/// The buses of a parsed layout file, typed.
pub(crate) fn buses_of(path: &ResPath, doc: &Doc) -> Result<Vec<BusOut>, ToolError> {
    let Doc::Resource(res) = doc else {
        return Err(ToolError::internal("a .tres parsed as a scene"));
    };
    require_class(path, res, "AudioBusLayout")?;
    let buses = parse_bus_layout(&res.properties).map_err(|name| {
        ToolError::new(
            ErrorCode::TooLarge,
            format!("{path}: {name} is past the most buses or effects this server reads"),
        )
    })?;
    Ok(buses.iter().map(|b| bus_out(b, Some(doc))).collect())
}

/// The buses of a parsed layout file, as the read tools report them.
pub(crate) fn buses_json(path: &ResPath, doc: &Doc) -> Result<Vec<Value>, ToolError> {
    buses_of(path, doc)?
        .iter()
        .map(|b| serde_json::to_value(b).map_err(|e| ToolError::internal(e.to_string())))
        .collect()
}

/// The bus layout Godot loads, and which file (or default) it came from.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BusLayoutOut {
    path: String,
    source: &'static str,
    exists: bool,
    buses: Vec<BusOut>,
}

async fn get_audio_bus_layout(Call { state, args, .. }: Call<BusLayoutArgs>) -> Out<BusLayoutOut> {
    let (path, source) = layout_target(&state, args.path)?;
    let real = state.project.resolve("path", &path)?;
    if source != "argument" && !real.exists() {
        // No layout file: Godot keeps its built-in layout, one Master bus.
        let buses = parse_bus_layout(&[]).map_err(ToolError::internal)?;
        return Ok(BusLayoutOut {
            path: path.to_string(),
            source,
            exists: false,
            buses: buses.iter().map(|b| bus_out(b, None)).collect(),
        });
    }
    let doc = load_doc(&state, "path", &path, &["tres"])?;
    let buses = buses_of(&path, &doc)?;
    Ok(BusLayoutOut {
        path: path.to_string(),
        source,
        exists: true,
        buses,
    })
}
