//! Per-node reads of a saved scene (.tscn) from disk: groups, signal connections,
//! stored properties. Also the shared loaders the other disk-reading families
//! (animation, audio, theme, tilemap) use: one bounded read, one parse, typed values.

use std::collections::BTreeMap;

use godot_mcp_formats::{ExtResource, Literal as GValue, Resource, Scene, SubResource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::state::AppState;
use crate::tools::kit::common::read_text;
use crate::tools::scene::read::parse_error;
use crate::tools::{Call, Out, ToolDef, ToolMeta};

fn meta(name: &'static str, title: &'static str, description: &'static str) -> ToolMeta {
    ToolMeta::read_only(Toolset::SceneInspect, name, title, description)
}

pub fn tools() -> Vec<ToolDef> {
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

/// A parsed value in the one JSON form of a Godot value (docs/values.md); a
/// `SubResource("id")`/`ExtResource("id")` reference stays Godot's text of it (Raw),
/// its id the key under which the tool lists what it points at.
pub(crate) fn typed(v: &GValue) -> Value {
    godot_mcp_formats::variant::from_text(v, &godot_mcp_formats::variant::Refs::default()).to_json()
}

/// A parsed .tscn or .tres: what resource references resolve against.
pub(crate) enum Doc {
    Scene(Scene),
    Resource(Resource),
}

impl Doc {
    fn tables(&self) -> (&[ExtResource], &[SubResource]) {
        match self {
            Doc::Scene(s) => (&s.ext_resources, &s.sub_resources),
            Doc::Resource(r) => (&r.ext_resources, &r.sub_resources),
        }
    }

    pub(crate) fn sub(&self, id: &str) -> Option<&SubResource> {
        self.tables().1.iter().find(|s| s.id == id)
    }

    pub(crate) fn ext(&self, id: &str) -> Option<&ExtResource> {
        self.tables().0.iter().find(|e| e.id == id)
    }

    /// A `SubResource`/`ExtResource` reference described by what it points at:
    /// `{"sub_resource": id, "type": …}` or `{"ext_resource": id, "type": …, "path": …}`;
    /// any other value in its typed form.
    pub(crate) fn reference(&self, v: &GValue) -> Value {
        match v {
            GValue::SubResource(id) => json!({
                "sub_resource": id,
                "type": self.sub(id).map(|s| s.resource_type.as_str()),
            }),
            GValue::ExtResource(id) => {
                let e = self.ext(id);
                json!({
                    "ext_resource": id,
                    "type": e.map(|e| e.resource_type.as_str()),
                    "path": e.map(|e| e.path.as_str()),
                })
            }
            other => typed(other),
        }
    }
}

/// Read and parse `path` (param `param`): a .tscn or .tres, as `exts` allows.
pub(crate) fn load_doc(
    state: &AppState,
    param: &str,
    path: &ResPath,
    exts: &[&str],
) -> Result<Doc, ToolError> {
    let real = state.project.resolve(param, path)?;
    let ext = path.extension().unwrap_or_default();
    if !exts.contains(&ext.as_str()) {
        return Err(ToolError::invalid_params(
            param,
            format!(
                "{path} is not a {} file (binary .scn/.res cannot be read from disk)",
                exts.iter()
                    .map(|e| format!(".{e}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    let text = read_text(state, param, path, &real)?;
    if ext == "tscn" {
        godot_mcp_formats::parse_scene(&text).map(Doc::Scene)
    } else {
        godot_mcp_formats::parse_resource(&text).map(Doc::Resource)
    }
    .map_err(|e| parse_error(path, &e))
}

/// Read and parse a .tscn.
pub(crate) fn load_scene(state: &AppState, path: &ResPath) -> Result<Scene, ToolError> {
    match load_doc(state, "path", path, &["tscn"])? {
        Doc::Scene(s) => Ok(s),
        Doc::Resource(_) => Err(ToolError::internal("a .tscn parsed as a resource")),
    }
}

/// The node at `node` (a path from the root, `.` for the root) of `scene`.
pub(crate) fn find_node<'a>(
    scene: &'a Scene,
    path: &ResPath,
    node: &str,
) -> Result<&'a godot_mcp_formats::Node, ToolError> {
    let key = node.trim_start_matches("./");
    let key = if key.is_empty() { "." } else { key };
    scene.node(key).ok_or_else(|| {
        ToolError::not_found(format!("{path} has no node {node:?}"))
            .param("node")
            .hint(format!(
                "Node paths are relative to the root (\".\" is the root): {}",
                some_node_paths(scene)
            ))
    })
}

/// The first 20 node paths of `scene`, for the hint of a node not found.
pub(crate) fn some_node_paths(scene: &Scene) -> String {
    let some: Vec<&str> = scene
        .nodes
        .iter()
        .take(20)
        .map(|n| n.path.as_str())
        .collect();
    some.join(", ")
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeFilterArgs {
    /// The .tscn.
    path: ResPath,
    /// Node path from the root ("." is the root); default: all nodes.
    #[serde(default)]
    node: Option<String>,
}

/// A scene's groups: one node's (`node` and `groups` as a list), or every group
/// with its member node paths (`groups` as a map).
#[derive(Debug, Serialize, JsonSchema)]
pub struct NodeGroupsOut {
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
pub struct ConnectionsOut {
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
pub struct NodeArgs {
    /// The .tscn.
    path: ResPath,
    /// Node path from the root ("." is the root).
    node: String,
}

/// One node's stored properties (typed Godot values) and the resources they name.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NodePropertiesOut {
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
