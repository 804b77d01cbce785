//! Across saved scenes, from disk: `find_nodes_by_type` (read-only, paged) and
//! `cross_scene_set_property` (destructive: scene file writes no undo stack covers; the
//! spec names it). The write plans every file first — parse, node match, the edit
//! (`godot_mcp_formats::scene_edit`, every other byte kept), the compare-and-swap check —
//! and writes nothing unless every file plans. Then each file is its own journaled
//! write with the hash its edit was computed from; should one fail, the error lists
//! exactly which files were written and which were not (the journal has no
//! multi-file transaction, so this is reported, never papered over).

use std::collections::BTreeMap;
use std::sync::Arc;

use godot_mcp_formats::scene_edit::set_node_property;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use godot_mcp_formats::variant;

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::planes::project::sha256_hex;
use crate::planes::project::{self as plane, Expect};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::common::read_text;
use crate::tools::kit::common::walk_files;
use crate::tools::kit::editor::blocking_as;
use crate::tools::kit::ext_ref;
use crate::tools::kit::file_write::{Written, write_each_as};
use crate::tools::kit::page::paged;
use crate::tools::{Call, Out, Plan, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Composite,
                "find_nodes_by_type",
                "Find nodes by type",
                "Every node of a class (exact type) in the project's saved .tscn scenes, \
                 from disk, paged: scene, node path, name.",
            ),
            find_nodes_by_type,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "cross_scene_set_property",
                title: "Set a property across scenes",
                description: "Set one property on a node path or on every node of a type in \
                    several saved .tscn scenes; each file CAS-checked, written through the \
                    journal only if all plan.",
                class: class::Destructive,
                toolset: Toolset::Composite,
                effect: Some(EffectKind::File),
            },
            plan_cross_scene_set,
        ),
    ]
}

/// Most scenes one call reads or writes.
const MAX_SCENES: usize = 500;

fn check_class(param: &str, name: &str) -> Result<(), ToolError> {
    let mut chars = name.chars();
    let ok = name.len() <= 128
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            param,
            format!("{name:?} is not a class name like Sprite2D"),
        ))
    }
}

/// The scenes a call covers: `scenes`, or every .tscn of the project (sorted).
fn scene_list(state: &AppState, scenes: Option<Vec<ResPath>>) -> Result<Vec<ResPath>, ToolError> {
    let list = match scenes {
        Some(list) => {
            if list.is_empty() {
                return Err(ToolError::invalid_params(
                    "scenes",
                    "scenes is empty (omit it for every scene)",
                ));
            }
            for (i, p) in list.iter().enumerate() {
                if p.extension().as_deref() != Some("tscn") {
                    return Err(ToolError::invalid_params(
                        format!("scenes[{i}]"),
                        format!("{p} is not a .tscn scene"),
                    ));
                }
            }
            list
        }
        None => {
            let root = ResPath::root();
            let real = state.project.resolve("path", &root)?;
            let mut files = Vec::new();
            let mut visited = 0;
            walk_files(state, &real, &root, &mut files, &mut visited)?;
            let mut list: Vec<ResPath> = files
                .into_iter()
                .filter(|(p, _, _)| p.ends_with(".tscn"))
                .filter_map(|(p, _, _)| ResPath::parse(&p).ok())
                .collect();
            list.sort_by_key(ToString::to_string);
            list
        }
    };
    if list.len() > MAX_SCENES {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{} scenes; one call covers at most {MAX_SCENES}",
                list.len()
            ),
        )
        .param("scenes"));
    }
    Ok(list)
}

/// A scene's text and its parse.
fn read_scene(
    state: &AppState,
    param: &str,
    path: &ResPath,
) -> Result<(String, godot_mcp_formats::Scene), ToolError> {
    let real = state.project.resolve(param, path)?;
    if !real.is_file() {
        return Err(ToolError::not_found(format!("{path} does not exist")).param(param));
    }
    let text = read_text(state, param, path, &real)?;
    let scene = godot_mcp_formats::parse_scene(&text)
        .map_err(|e| crate::tools::kit::scene_doc::parse_error(path, &e).param(param))?;
    Ok((text, scene))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindByTypeArgs {
    /// The node class, e.g. Sprite2D (exact, not subclasses).
    #[serde(rename = "type")]
    node_type: String,
    /// Scenes to search (default: every .tscn).
    #[serde(default)]
    scenes: Option<Vec<ResPath>>,
    #[serde(default)]
    offset: Option<u32>,
    /// Page size (default 100).
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Found {
    scene: String,
    path: String,
    name: String,
}

/// A page as `analysis::paged` makes it.
#[derive(Debug, Deserialize)]
struct Page<T> {
    total: usize,
    offset: usize,
    returned: usize,
    next_offset: Option<usize>,
    items: Vec<T>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Unreadable {
    scene: String,
    error: String,
}

/// A page of the nodes found, and what was searched.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FoundNodes {
    total: usize,
    offset: usize,
    returned: usize,
    next_offset: Option<usize>,
    nodes: Vec<Found>,
    #[serde(rename = "type")]
    node_type: String,
    scenes_searched: usize,
    unreadable: Vec<Unreadable>,
}

async fn find_nodes_by_type(Call { state, args, .. }: Call<FindByTypeArgs>) -> Out<FoundNodes> {
    check_class("type", &args.node_type)?;
    blocking_as(move || {
        let scenes = scene_list(&state, args.scenes)?;
        let mut found = Vec::new();
        let mut unreadable = Vec::new();
        for path in &scenes {
            match read_scene(&state, "scenes", path) {
                Ok((_, scene)) => found.extend(
                    scene
                        .nodes
                        .iter()
                        .filter(|n| n.node_type.as_deref() == Some(args.node_type.as_str()))
                        .map(|n| Found {
                            scene: path.to_string(),
                            path: n.path.clone(),
                            name: n.name.clone(),
                        }),
                ),
                Err(e) => unreadable.push(Unreadable {
                    scene: path.to_string(),
                    error: e.message,
                }),
            }
        }
        let page: Page<Found> =
            serde_json::from_value(paged(&state, args.offset, args.limit, &found)?)
                .map_err(|e| ToolError::internal(format!("a page is not of its type: {e}")))?;
        Ok(FoundNodes {
            total: page.total,
            offset: page.offset,
            returned: page.returned,
            next_offset: page.next_offset,
            nodes: page.items,
            node_type: args.node_type,
            scenes_searched: scenes.len(),
            unreadable,
        })
    })
    .await
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CrossSceneSetArgs {
    /// The scenes to edit (default: every .tscn).
    #[serde(default)]
    scenes: Option<Vec<ResPath>>,
    /// A node path from each root (`.` is the root); or give `type`.
    #[serde(default)]
    node: Option<String>,
    /// Every node of this class (exact type); or give `node`.
    #[serde(rename = "type", default)]
    node_type: Option<String>,
    /// Property name, e.g. modulate or collision_layer.
    property: String,
    /// The value as JSON; a res:// path is that file (an ext_resource).
    #[serde(default)]
    value: Option<Value>,
    /// The value as Godot text, e.g. Color(1, 0, 0, 1).
    #[serde(default)]
    value_text: Option<String>,
    /// Per scene path, its sha256 now; a scene that differs is STALE.
    #[serde(default)]
    expected_sha256: Option<BTreeMap<String, String>>,
}

/// One node set, with its previous value text (`null`: not stored before).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeSet {
    node: String,
    previous: Option<String>,
}

/// One file's planned edit.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileEdit {
    path: String,
    nodes: Vec<NodeSet>,
    sha256_before: String,
    sha256_after: String,
    bytes: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CrossEffect {
    action: &'static str,
    property: String,
    value: String,
    files: Vec<FileEdit>,
    /// Scenes searched that hold no matching node (left as they are).
    unmatched: Vec<String>,
    #[serde(flatten)]
    persistence: Persistence,
    #[serde(flatten)]
    undo: Undo,
}

fn check_property(name: &str) -> Result<(), ToolError> {
    let ok = !name.is_empty()
        && name.len() <= 256
        && !name.starts_with('/')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | ':'));
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            "property",
            format!("{name:?} is not a property name"),
        ))
    }
}

/// The nodes of `scene` to set: the one at path `node`, or every node of class `node_type`.
fn matching_nodes(
    scene: &godot_mcp_formats::Scene,
    node: Option<&str>,
    node_type: Option<&str>,
) -> Vec<String> {
    match (node, node_type) {
        (Some(n), _) => {
            let key = n.trim_start_matches("./");
            let key = if key.is_empty() { "." } else { key };
            scene
                .node(key)
                .map(|n| n.path.clone())
                .into_iter()
                .collect()
        }
        (None, Some(t)) => scene
            .nodes
            .iter()
            .filter(|n| n.node_type.as_deref() == Some(t))
            .map(|n| n.path.clone())
            .collect(),
        (None, None) => Vec::new(),
    }
}

/// The value to set, as Godot Variant text: `value` (JSON) or `value_text`, exactly
/// one; a `res://` string is the file as a resource (each scene gets an ext_resource:
/// the target, and no text).
fn value_to_set(
    state: &AppState,
    args: &CrossSceneSetArgs,
) -> Result<(Option<ext_ref::ExtTarget>, String), ToolError> {
    // A `res://` string is the file as a resource: each scene gets an ext_resource.
    let resource = match &args.value {
        Some(Value::String(s)) if s.starts_with("res://") => {
            let path = ResPath::parse(s).map_err(|e| ToolError::invalid_params("value", e.0))?;
            Some(ext_ref::ext_target(state, "value", &path)?)
        }
        _ => None,
    };
    let value = match (&args.value, &args.value_text) {
        (Some(_), None) if resource.is_some() => String::new(),
        (Some(v), None) => variant::plain_json_text(v, "value")?,
        (None, Some(t)) => {
            variant::check_text(t, "value_text")?;
            t.clone()
        }
        _ => {
            return Err(ToolError::invalid_params(
                "value",
                "give exactly one of `value` (JSON) or `value_text` (Godot Variant text)",
            ));
        }
    };
    Ok((resource, value))
}

fn plan_cross_scene_set(
    state: Arc<AppState>,
    args: CrossSceneSetArgs,
) -> Result<Plan<CrossEffect, Written>, ToolError> {
    check_property(&args.property)?;
    let (resource, value) = value_to_set(&state, &args)?;
    match (&args.node, &args.node_type) {
        (Some(_), None) => {}
        (None, Some(t)) => check_class("type", t)?,
        _ => {
            return Err(ToolError::invalid_params(
                "node",
                "give exactly one of `node` (a path) or `type` (a class)",
            ));
        }
    }
    let scenes = scene_list(&state, args.scenes)?;
    let expected = args.expected_sha256.unwrap_or_default();
    for key in expected.keys() {
        if !scenes.iter().any(|s| &s.to_string() == key) {
            return Err(ToolError::invalid_params(
                "expected_sha256",
                format!("{key} is not one of the scenes"),
            ));
        }
    }
    let mut files = Vec::new();
    let mut writes: Vec<(ResPath, Vec<u8>, String)> = Vec::new();
    let mut unmatched = Vec::new();
    for (i, path) in scenes.iter().enumerate() {
        let param = format!("scenes[{i}]");
        let (text, scene) = read_scene(&state, &param, path)?;
        let before = sha256_hex(text.as_bytes());
        if let Some(e) = expected.get(&path.to_string())
            && !e.eq_ignore_ascii_case(&before)
        {
            return Err(ToolError::new(
                ErrorCode::Stale,
                format!("{path} changed since it was read: its sha256 is not the expected one; nothing was written"),
            )
            .param("expected_sha256")
            .details(json!({"path": path.to_string(), "expected_sha256": e, "actual_sha256": before})));
        }
        let targets = matching_nodes(&scene, args.node.as_deref(), args.node_type.as_deref());
        if targets.is_empty() {
            unmatched.push(path.to_string());
            continue;
        }
        // Each edit re-parses the text it applies to: line numbers move as lines change.
        let (mut cur, value) = match &resource {
            Some(target) => {
                let (with, id) =
                    ext_ref::with_ext_resource(&text, &scene.ext_resources, target, &before);
                (with, format!("ExtResource(\"{id}\")"))
            }
            None => (text.clone(), value.clone()),
        };
        let mut nodes = Vec::new();
        for node in &targets {
            let parsed = godot_mcp_formats::parse_scene(&cur)
                .map_err(|e| ToolError::internal(format!("{path} after an edit: {e}")))?;
            let edit = set_node_property(&cur, &parsed, node, &args.property, &value)
                .map_err(|e| ToolError::internal(format!("{path}: {e}")))?;
            nodes.push(NodeSet {
                node: node.clone(),
                previous: edit.previous,
            });
            cur = edit.text;
        }
        // The result must still be a scene Godot's rules accept.
        godot_mcp_formats::parse_scene(&cur).map_err(|e| {
            ToolError::internal(format!("{path} would not parse after the edit: {e}"))
        })?;
        let bytes = cur.into_bytes();
        let outcome = plane::check_write(
            &state.project,
            &param,
            path,
            &bytes,
            Expect::Sha256(&before),
        )?;
        files.push(FileEdit {
            path: path.to_string(),
            nodes,
            sha256_before: before.clone(),
            sha256_after: outcome.sha256_after,
            bytes: bytes.len(),
        });
        writes.push((path.clone(), bytes, before));
    }
    if files.is_empty() {
        return Err(ToolError::not_found(match (&args.node, &args.node_type) {
            (Some(n), _) => format!("no scene of {} has a node {n:?}", scenes.len()),
            (_, t) => format!(
                "no scene of {} has a node of type {}",
                scenes.len(),
                t.as_deref().unwrap_or("")
            ),
        })
        .param(if args.node.is_some() { "node" } else { "type" }));
    }
    let effect = CrossEffect {
        action: "overwrite",
        property: args.property,
        value: resource.map_or(value, |t| t.path),
        files,
        unmatched,
        persistence: Persistence {
            persisted: true,
            reason: "every scene written to disk as one journaled change".into(),
            hint: Some(
                "A scene open in the Godot editor keeps its loaded copy: reload it there \
                 (reload_scene) before editing it, or its next save overwrites this change."
                    .into(),
            ),
        },
        undo: Undo::not_undo_tracked(),
    };
    let writes: Vec<(ResPath, Vec<u8>, Option<String>)> = writes
        .into_iter()
        .map(|(p, b, before)| (p, b, Some(before)))
        .collect();
    let state = state.clone();
    Plan::new(effect, move |call| {
        write_each_as(&state, call, "scenes", &writes)
    })
}
