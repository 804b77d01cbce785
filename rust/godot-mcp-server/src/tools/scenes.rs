//! Scene and resource reads from the project's files (.tscn, .tres, project.godot),
//! parsed by `godot-mcp-formats` — no editor and no Godot binary involved.

use std::sync::Arc;

use godot_mcp_formats::{ParseError, ResourceLink};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::safety::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::project::read_text;
use crate::tools::{CallFlags, ToolDef, ToolMeta, ToolResult};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "project_info",
                title: "Project info",
                description: "Read project.godot: name, main scene, features, autoloads, input \
                    actions and events, plugins.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::Project,
                effect: EffectKind::None,
            },
            project_info,
        ),
        ToolDef::new(
            ToolMeta {
                name: "get_scene_tree",
                title: "Scene tree",
                description: "Read a scene's node tree. From the saved .tscn: nodes with type, \
                    script, instance, groups, properties; signal connections; dependencies. \
                    Without path, or for the edited scene: the live editor tree, unsaved edits \
                    included (compact). Paged.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::SceneRead,
                effect: EffectKind::None,
            },
            get_scene_tree,
        ),
        ToolDef::new(
            ToolMeta {
                name: "read_resource",
                title: "Read a resource",
                description: "Read a .tres resource: type, script class, properties, \
                    sub-resources, dependencies.",
                class: SafetyClass::ReadOnly,
                toolset: Toolset::ResourceRead,
                effect: EffectKind::None,
            },
            read_resource,
        ),
    ]
}

/// A parse failure as a structured tool error: the file, line and column.
pub(crate) fn parse_error(path: &ResPath, err: &ParseError) -> ToolError {
    ToolError::new(
        ErrorCode::ParseError,
        format!("{path}:{}:{}: {}", err.line(), err.column(), err.message()),
    )
    .details(json!({
        "path": path.to_string(),
        "line": err.line(),
        "column": err.column(),
        "kind": err.kind().code(),
    }))
    .hint("The file is not valid Godot text; open it in the editor or fix the reported line.")
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectInfoArgs {}

async fn project_info(state: Arc<AppState>, _args: ProjectInfoArgs, _f: CallFlags) -> ToolResult {
    let path = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let real = state.project.resolve("path", &path)?;
    let text = read_text(&state, "path", &path, &real)?;
    let info = godot_mcp_formats::parse_project(&text).map_err(|e| parse_error(&path, &e))?;
    Ok(json!({
        "name": info.name,
        "description": info.description,
        "main_scene": info.main_scene,
        "icon": info.icon,
        "config_version": info.config_version,
        "features": info.features,
        "autoloads": info.autoloads,
        "input_actions": info.input_actions,
        "enabled_plugins": info.enabled_plugins,
        "sections": info.sections.iter().map(|s| s.tag.as_str()).collect::<Vec<_>>(),
    }))
}

fn props_object(props: &[godot_mcp_formats::Property]) -> Value {
    let mut m = Map::new();
    for p in props {
        m.insert(p.name.clone(), Value::String(p.text.clone()));
    }
    Value::Object(m)
}

fn link_path(link: &Option<ResourceLink>) -> Value {
    match link {
        Some(ResourceLink::External(l)) => json!(l.path),
        Some(ResourceLink::Internal { id }) => json!(format!("SubResource(\"{id}\")")),
        None => Value::Null,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SceneTreeArgs {
    /// The .tscn (default: the scene being edited).
    #[serde(default)]
    path: Option<ResPath>,
    /// Include node properties (default true; .tscn only).
    #[serde(default)]
    include_properties: Option<bool>,
    /// First node (default 0).
    #[serde(default)]
    offset: Option<u32>,
    /// Most nodes (default 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    limit: Option<u32>,
}

/// Whether the connected editor is editing `path` (false when no editor is connected).
fn editor_is_editing(state: &AppState, path: &ResPath) -> bool {
    if !matches!(
        crate::safety::BridgeStatus::current(state),
        crate::safety::BridgeStatus::Connected { .. }
    ) {
        return false;
    }
    crate::tools::editor::query(
        state,
        godot_mcp_protocol::commands::EDITOR_STATE,
        json!({}),
        None,
    )
    .ok()
    .and_then(|v| {
        v.get("active_scene")
            .and_then(Value::as_str)
            .map(String::from)
    })
    .is_some_and(|active| active == path.to_string())
}

async fn get_scene_tree(state: Arc<AppState>, args: SceneTreeArgs, _f: CallFlags) -> ToolResult {
    let limit = args.limit.unwrap_or(1000);
    if limit == 0 || limit > 5000 {
        return Err(ToolError::invalid_params(
            "limit",
            "limit must be between 1 and 5000",
        ));
    }
    let offset = args.offset.unwrap_or(0);
    let live = {
        let (state, path) = (state.clone(), args.path.clone());
        tokio::task::spawn_blocking(move || match &path {
            None => true,
            Some(p) => editor_is_editing(&state, p),
        })
        .await
        .map_err(|e| ToolError::internal(format!("editor task failed: {e}")))?
    };
    if live {
        return crate::tools::editor::blocking(move || {
            let mut v = crate::tools::editor::query(
                &state,
                godot_mcp_protocol::commands::SCENE_TREE,
                json!({"offset": offset, "limit": limit}),
                None,
            )?;
            v["source"] = json!("editor");
            v["returned"] = json!(v.get("names").and_then(Value::as_array).map_or(0, Vec::len));
            Ok(v)
        })
        .await;
    }
    let Some(path) = args.path else {
        return Err(crate::safety::Precondition::BridgeConnected.error());
    };
    let args = SceneTreeArgs {
        path: Some(path.clone()),
        ..args
    };
    get_scene_tree_from_disk(state, args, path).await
}

async fn get_scene_tree_from_disk(
    state: Arc<AppState>,
    args: SceneTreeArgs,
    path: ResPath,
) -> ToolResult {
    let args = DiskTreeArgs {
        path,
        include_properties: args.include_properties,
        offset: args.offset,
        limit: args.limit,
    };
    let real = state.project.resolve("path", &args.path)?;
    if !matches!(args.path.extension().as_deref(), Some("tscn")) {
        return Err(ToolError::invalid_params(
            "path",
            format!("{} is not a text scene (.tscn)", args.path),
        ));
    }
    let limit = args.limit.unwrap_or(1000) as usize;
    if limit == 0 || limit > 5000 {
        return Err(ToolError::invalid_params(
            "limit",
            "limit must be between 1 and 5000",
        ));
    }
    let offset = args.offset.unwrap_or(0) as usize;
    let with_props = args.include_properties.unwrap_or(true);
    let text = read_text(&state, "path", &args.path, &real)?;
    let scene = godot_mcp_formats::parse_scene(&text).map_err(|e| parse_error(&args.path, &e))?;
    let total = scene.nodes.len();
    let nodes: Vec<Value> = scene
        .nodes
        .iter()
        .skip(offset)
        .take(limit)
        .map(|n| {
            let mut o = Map::new();
            o.insert("path".into(), json!(n.path));
            o.insert("name".into(), json!(n.name));
            if let Some(t) = &n.node_type {
                o.insert("type".into(), json!(t));
            }
            if let Some(p) = &n.parent {
                o.insert("parent".into(), json!(p));
            }
            if n.script.is_some() {
                o.insert("script".into(), link_path(&n.script));
            }
            if let Some(inst) = &n.instance {
                o.insert("instance".into(), json!(inst.path));
            }
            if let Some(ph) = &n.instance_placeholder {
                o.insert("instance_placeholder".into(), json!(ph));
            }
            if !n.groups.is_empty() {
                o.insert("groups".into(), json!(n.groups));
            }
            if let Some(owner) = &n.owner {
                o.insert("owner".into(), json!(owner));
            }
            if with_props && !n.properties.is_empty() {
                o.insert("properties".into(), props_object(&n.properties));
            }
            Value::Object(o)
        })
        .collect();
    let returned = nodes.len();
    let next_offset = (offset + returned < total).then_some(offset + returned);
    Ok(json!({
        "path": args.path.to_string(),
        "source": "disk",
        "uid": scene.uid,
        "root": scene.root().map(|r| json!({"name": r.name, "type": r.node_type})),
        "node_count": total,
        "returned": returned,
        "next_offset": next_offset,
        "nodes": nodes,
        "connections": scene.connections.iter().map(|c| json!({
            "signal": c.signal, "from": c.from, "to": c.to, "method": c.method,
            "flags": c.flags, "binds": c.binds.len(),
        })).collect::<Vec<_>>(),
        "ext_resources": scene.ext_resources.iter().map(|e| json!({
            "id": e.id, "type": e.resource_type, "path": e.path, "uid": e.uid,
        })).collect::<Vec<_>>(),
        "sub_resources": scene.sub_resources.iter().map(|s| json!({
            "id": s.id, "type": s.resource_type,
        })).collect::<Vec<_>>(),
        "editable": scene.editable,
    }))
}

struct DiskTreeArgs {
    path: ResPath,
    include_properties: Option<bool>,
    offset: Option<u32>,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadResourceArgs {
    /// The .tres file.
    path: ResPath,
}

async fn read_resource(state: Arc<AppState>, args: ReadResourceArgs, _f: CallFlags) -> ToolResult {
    let real = state.project.resolve("path", &args.path)?;
    if !matches!(args.path.extension().as_deref(), Some("tres")) {
        return Err(ToolError::invalid_params(
            "path",
            format!("{} is not a text resource (.tres)", args.path),
        ));
    }
    let text = read_text(&state, "path", &args.path, &real)?;
    let res = godot_mcp_formats::parse_resource(&text).map_err(|e| parse_error(&args.path, &e))?;
    Ok(json!({
        "path": args.path.to_string(),
        "type": res.resource_type,
        "script_class": res.script_class,
        "uid": res.uid,
        "script": link_path(&res.script),
        "properties": props_object(&res.properties),
        "sub_resources": res.sub_resources.iter().map(|s| json!({
            "id": s.id, "type": s.resource_type, "properties": props_object(&s.properties),
        })).collect::<Vec<_>>(),
        "ext_resources": res.ext_resources.iter().map(|e| json!({
            "id": e.id, "type": e.resource_type, "path": e.path, "uid": e.uid,
        })).collect::<Vec<_>>(),
    }))
}
