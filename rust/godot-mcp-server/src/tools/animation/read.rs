//! Animation reads from disk: the AnimationPlayer (or AnimationTree) libraries of a
//! saved .tscn, or an AnimationLibrary / Animation .tres, decoded by
//! `godot_mcp_formats::animation`. Key values are typed values.

use godot_mcp_formats::Literal as GValue;
use godot_mcp_formats::animation::{Animation, named_resources, parse_animation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::common::count_param;
use crate::tools::kit::scene_doc::{Doc, load_doc, typed};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::ReadOnly> {
    ToolMeta::read_only(Toolset::Animation, name, title, description)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "list_animations",
                "List animations",
                "List the animations of a saved .tscn's AnimationPlayer/AnimationTree \
                 libraries, or of an AnimationLibrary .tres: name, length, loop mode, \
                 step, track count.",
            ),
            list_animations,
        ),
        ToolDef::new(
            meta(
                "get_animation",
                "Get an animation",
                "Read one animation from a .tscn or .tres: length, step, loop mode, its \
                 tracks (type, path, interpolation, update mode) and keyframes (time, \
                 transition, typed value).",
            ),
            get_animation,
        ),
    ]
}

/// Most animations one listing returns.
const MAX_LISTED: usize = 1000;
/// Most tracks one get_animation returns (keys are bounded per track by `max_keys`).
const MAX_TRACKS: usize = 1000;

/// One animation found in a document.
struct Found {
    /// The player/tree node path (scenes only).
    node: Option<String>,
    library: Option<String>,
    name: String,
    /// The decoded animation, or the path of an animation saved in its own file.
    anim: Result<Animation, String>,
}

impl Found {
    /// The name an AnimationPlayer plays it by: `lib/name`, or `name` in the
    /// default library.
    fn id(&self) -> String {
        match self.library.as_deref() {
            None | Some("") => self.name.clone(),
            Some(lib) => format!("{lib}/{}", self.name),
        }
    }
}

/// Resolve `reference` (an Animation) to its decoded form or its file.
fn animation(doc: &Doc, reference: &GValue) -> Result<Animation, String> {
    match reference {
        GValue::SubResource(id) => doc
            .sub(id)
            .map(|s| parse_animation(&s.properties))
            .ok_or_else(|| format!("SubResource {id} is missing")),
        GValue::ExtResource(id) => Err(doc.ext(id).map_or_else(
            || format!("ExtResource {id} is missing"),
            |e| e.path.clone(),
        )),
        _ => Err("not a resource reference".into()),
    }
}

/// Every animation of a library's `_data`.
fn from_library(doc: &Doc, node: Option<&str>, library: Option<&str>, data: &GValue) -> Vec<Found> {
    named_resources(data)
        .into_iter()
        .map(|(name, r)| Found {
            node: node.map(str::to_string),
            library: library.map(str::to_string),
            name,
            anim: animation(doc, &r),
        })
        .collect()
}

/// A player's library saved in its own file.
#[derive(Debug, Serialize, JsonSchema)]
struct ExternalLibrary {
    node: String,
    library: String,
    resource: Value,
}

/// Every animation in `doc`, and the libraries saved in their own files.
fn collect(
    doc: &Doc,
    path: &ResPath,
    node: Option<&str>,
) -> Result<(Vec<Found>, Vec<ExternalLibrary>), ToolError> {
    let mut found = Vec::new();
    let mut external = Vec::new();
    match doc {
        Doc::Resource(res) => {
            let data = res.properties.iter().find(|p| p.name == "_data");
            match (res.resource_type.as_str(), data) {
                ("AnimationLibrary", Some(d)) => found = from_library(doc, None, None, &d.value),
                ("AnimationLibrary", None) => {}
                ("Animation", _) => found.push(Found {
                    node: None,
                    library: None,
                    name: res
                        .properties
                        .iter()
                        .find(|p| p.name == "resource_name")
                        .and_then(|p| p.value.as_str())
                        .unwrap_or("")
                        .to_string(),
                    anim: Ok(parse_animation(&res.properties)),
                }),
                (other, _) => {
                    return Err(ToolError::invalid_params(
                        "path",
                        format!("this is a {other} resource, not an AnimationLibrary or Animation"),
                    ));
                }
            }
        }
        Doc::Scene(scene) => {
            let nodes: Vec<&godot_mcp_formats::Node> = match node {
                Some(n) => vec![crate::tools::kit::scene_doc::find_node(scene, path, n)?],
                None => scene.nodes.iter().collect(),
            };
            for n in nodes {
                for (lib, r) in node_libraries(n) {
                    match &r {
                        GValue::SubResource(id) => {
                            if let Some(d) = doc
                                .sub(id)
                                .and_then(|s| s.properties.iter().find(|p| p.name == "_data"))
                            {
                                found.extend(from_library(
                                    doc,
                                    Some(&n.path),
                                    Some(&lib),
                                    &d.value,
                                ));
                            }
                        }
                        other => external.push(ExternalLibrary {
                            node: n.path.clone(),
                            library: lib,
                            resource: doc.reference(other),
                        }),
                    }
                }
            }
        }
    }
    Ok((found, external))
}

/// A player's (or tree's) animation libraries, by name, as either engine saves them:
/// Godot 4.4 writes one `libraries = {&"": SubResource(…)}` dictionary, Godot 4.6 one
/// property a library (`libraries/ = SubResource(…)` for the default `""`).
fn node_libraries(n: &godot_mcp_formats::Node) -> Vec<(String, GValue)> {
    let mut out = Vec::new();
    for p in &n.properties {
        if p.name == "libraries" {
            out.extend(named_resources(&p.value));
        } else if let Some(lib) = p.name.strip_prefix("libraries/") {
            out.push((lib.to_owned(), p.value.clone()));
        }
    }
    out
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListAnimationsArgs {
    /// A .tscn, or an AnimationLibrary/Animation .tres.
    path: ResPath,
    /// Only this player/tree node of a .tscn (path from the root).
    #[serde(default)]
    node: Option<String>,
}

/// One listed animation: decoded (length, loop mode, track count) or in its own `file`.
#[derive(Debug, Serialize, JsonSchema)]
struct AnimationItem {
    id: String,
    name: String,
    library: Option<String>,
    node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    length: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loop_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    track_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AnimationsOut {
    path: String,
    animation_count: usize,
    truncated: bool,
    animations: Vec<AnimationItem>,
    external_libraries: Vec<ExternalLibrary>,
}

async fn list_animations(Call { state, args, .. }: Call<ListAnimationsArgs>) -> Out<AnimationsOut> {
    let doc = load_doc(&state, "path", &args.path, &["tscn", "tres"])?;
    let node = args.node.as_deref();
    let (found, external) = collect(&doc, &args.path, node)?;
    let total = found.len();
    let animations = found
        .iter()
        .take(MAX_LISTED)
        .map(|f| {
            let decoded = f.anim.as_ref().ok();
            AnimationItem {
                id: f.id(),
                name: f.name.clone(),
                library: f.library.clone(),
                node: f.node.clone(),
                length: decoded.map(|a| a.length),
                loop_mode: decoded.map(|a| a.loop_mode),
                step: decoded.map(|a| a.step),
                track_count: decoded.map(|a| a.tracks.len()),
                file: f.anim.as_ref().err().cloned(),
            }
        })
        .collect();
    Ok(AnimationsOut {
        path: args.path.to_string(),
        animation_count: total,
        truncated: total > MAX_LISTED,
        animations,
        external_libraries: external,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetAnimationArgs {
    /// A .tscn, or an AnimationLibrary/Animation .tres.
    path: ResPath,
    /// The animation as played: "name", or "library/name".
    animation: String,
    /// The player/tree node of a .tscn, when several have it.
    #[serde(default)]
    node: Option<String>,
    /// Most keys returned per track (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    max_keys: Option<u32>,
}

/// One key of a track: its time, typed value and transition when written.
#[derive(Debug, Serialize, JsonSchema)]
struct KeyOut {
    time: f64,
    value: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    transition: Option<f64>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct TrackOut {
    index: usize,
    r#type: String,
    path: String,
    interpolation: &'static str,
    enabled: bool,
    loop_wrap: bool,
    decoded: bool,
    key_count: usize,
    keys: Vec<KeyOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    update_mode: Option<&'static str>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AnimationOut {
    path: String,
    node: Option<String>,
    animation: String,
    length: f64,
    loop_mode: &'static str,
    step: f64,
    track_count: usize,
    tracks: Vec<TrackOut>,
}

async fn get_animation(Call { state, args, .. }: Call<GetAnimationArgs>) -> Out<AnimationOut> {
    let max_keys = count_param("max_keys", args.max_keys, 100, 5000)?;
    let doc = load_doc(&state, "path", &args.path, &["tscn", "tres"])?;
    let (found, _) = collect(&doc, &args.path, args.node.as_deref())?;
    let matching: Vec<&Found> = found
        .iter()
        .filter(|f| f.id() == args.animation || (f.library.is_none() && f.name == args.animation))
        .collect();
    let f = match matching.as_slice() {
        [one] => *one,
        [] => {
            let ids: Vec<String> = found.iter().take(30).map(Found::id).collect();
            return Err(ToolError::not_found(format!(
                "{} has no animation {:?}",
                args.path, args.animation
            ))
            .param("animation")
            .hint(format!("Animations: {}", ids.join(", "))));
        }
        many => {
            let nodes: Vec<String> = many.iter().filter_map(|f| f.node.clone()).collect();
            return Err(ToolError::invalid_params(
                "node",
                format!(
                    "{:?} is in several players ({}); name one with `node`",
                    args.animation,
                    nodes.join(", ")
                ),
            ));
        }
    };
    let anim = match &f.anim {
        Ok(a) => a,
        Err(file) => {
            return Err(ToolError::not_found(format!(
                "animation {:?} is saved in its own file, {file}",
                args.animation
            ))
            .param("animation")
            .hint("Call get_animation with that file as `path`."));
        }
    };
    let tracks = anim
        .tracks
        .iter()
        .take(MAX_TRACKS)
        .map(|t| TrackOut {
            index: t.index,
            r#type: t.kind.clone(),
            path: t.path.clone(),
            interpolation: t.interpolation,
            enabled: t.enabled,
            loop_wrap: t.loop_wrap,
            decoded: t.decoded,
            key_count: t.keys.len(),
            keys: t
                .keys
                .iter()
                .take(max_keys)
                .map(|k| KeyOut {
                    time: k.time,
                    value: typed(&k.value),
                    transition: k.transition,
                })
                .collect(),
            update_mode: t.update_mode,
        })
        .collect();
    Ok(AnimationOut {
        path: args.path.to_string(),
        node: f.node.clone(),
        animation: f.id(),
        length: anim.length,
        loop_mode: anim.loop_mode,
        step: anim.step,
        track_count: anim.tracks.len(),
        tracks,
    })
}
