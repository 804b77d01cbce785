//! Per-node reads of a saved scene (.tscn) from disk: groups, signal connections,
//! stored properties. Also the shared loaders the other disk-reading families
//! (animation, audio, theme, tilemap) use: one bounded read, one parse, typed values.

use std::collections::BTreeMap;

use godot_mcp_formats::Literal as GValue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::scene_doc::{Doc, find_node, load_scene, typed};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::ReadOnly> {
    ToolMeta::read_only(Toolset::SceneInspect, name, title, description)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "list_node_groups",
                "List node groups",
                "List the groups of a saved .tscn: each group with its member node paths \
                 (or one node's groups).",
            ),
            list_node_groups,
        ),
        ToolDef::new(
            meta(
                "list_signal_connections",
                "List signal connections",
                "List a saved .tscn's signal connections (signal, from, to, method, flags, \
                 binds), optionally only those from or to one node.",
            ),
            list_signal_connections,
        ),
        ToolDef::new(
            meta(
                "get_node_properties",
                "Get node properties",
                "Read every property stored for one node of a saved .tscn, as typed \
                 values.",
            ),
            get_node_properties,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeFilterArgs {
    /// The .tscn.
    path: ResPath,
    /// Node path from the root ("." is the root); default: all nodes.
    #[serde(default)]
    node: Option<String>,
}

/// A scene's groups: one node's (`node` and `groups` as a list), or every group
/// with its member node paths (`groups` as a map).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeGroupsOut {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<String>,
    groups: Groups,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
enum Groups {
    Of(Vec<String>),
    All(BTreeMap<String, Vec<String>>),
}

async fn list_node_groups(Call { state, args, .. }: Call<NodeFilterArgs>) -> Out<NodeGroupsOut> {
    let scene = load_scene(&state, &args.path)?;
    if let Some(node) = &args.node {
        let n = find_node(&scene, &args.path, node)?;
        return Ok(NodeGroupsOut {
            path: args.path.to_string(),
            node: Some(n.path.clone()),
            groups: Groups::Of(n.groups.clone()),
        });
    }
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for n in &scene.nodes {
        for g in &n.groups {
            groups.entry(g.clone()).or_default().push(n.path.clone());
        }
    }
    Ok(NodeGroupsOut {
        path: args.path.to_string(),
        node: None,
        groups: Groups::All(groups),
    })
}

/// One `[connection]` of a scene.
#[derive(Debug, Serialize, JsonSchema)]
struct ConnectionOut {
    signal: String,
    from: String,
    to: String,
    method: String,
    flags: i64,
    unbinds: i64,
    /// Bound arguments, as typed Godot values.
    binds: Vec<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ConnectionsOut {
    path: String,
    connections: Vec<ConnectionOut>,
}

async fn list_signal_connections(
    Call { state, args, .. }: Call<NodeFilterArgs>,
) -> Out<ConnectionsOut> {
    let scene = load_scene(&state, &args.path)?;
    let node = match &args.node {
        Some(n) => Some(find_node(&scene, &args.path, n)?.path.clone()),
        None => None,
    };
    let connections = scene
        .connections
        .iter()
        .filter(|c| node.as_ref().is_none_or(|n| &c.from == n || &c.to == n))
        .map(|c| ConnectionOut {
            signal: c.signal.clone(),
            from: c.from.clone(),
            to: c.to.clone(),
            method: c.method.clone(),
            flags: c.flags.unwrap_or(0),
            unbinds: c.unbinds.unwrap_or(0),
            binds: c.binds.iter().map(typed).collect(),
        })
        .collect();
    Ok(ConnectionsOut {
        path: args.path.to_string(),
        connections,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeArgs {
    /// The .tscn.
    path: ResPath,
    /// Node path from the root ("." is the root).
    node: String,
}

/// One node's stored properties (typed Godot values) and the resources they name.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodePropertiesOut {
    path: String,
    node: String,
    r#type: Option<String>,
    instance: Option<String>,
    properties: Map<String, Value>,
    resources: Map<String, Value>,
}

async fn get_node_properties(Call { state, args, .. }: Call<NodeArgs>) -> Out<NodePropertiesOut> {
    let doc = Doc::Scene(load_scene(&state, &args.path)?);
    let Doc::Scene(scene) = &doc else {
        return Err(ToolError::internal("a scene document is not a scene"));
    };
    let n = find_node(scene, &args.path, &args.node)?;
    let mut props = Map::new();
    // References resolved through the file, as get_scene_tree gives them.
    let file_refs = godot_mcp_formats::variant::Refs::of_scene(scene);
    for p in &n.properties {
        let v = godot_mcp_formats::variant::from_text(&p.value, &file_refs);
        props.insert(p.name.clone(), v.to_json());
    }
    // References are listed once, resolved, so a property's `sub_resource` or
    // `ext_resource` value says what it points at without a second read.
    let mut refs = Map::new();
    for p in &n.properties {
        if let GValue::SubResource(id) | GValue::ExtResource(id) = &p.value {
            refs.insert(id.clone(), doc.reference(&p.value));
        }
    }
    Ok(NodePropertiesOut {
        path: args.path.to_string(),
        node: n.path.clone(),
        r#type: n.node_type.clone(),
        instance: n.instance.as_ref().map(|i| i.path.clone()),
        properties: props,
        resources: refs,
    })
}
