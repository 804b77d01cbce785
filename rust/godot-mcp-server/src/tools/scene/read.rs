//! Scene and resource reads from the project's files (.tscn, .tres, project.godot),
//! parsed by `godot-mcp-formats` — no editor and no Godot binary involved.

use std::collections::BTreeMap;
use std::sync::Arc;

use godot_mcp_formats::variant;
use godot_mcp_formats::{Autoload, InputAction, ResourceLink};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::honesty::absent_when_none;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::kit::common::read_text;
use crate::tools::kit::scene_doc::parse_error;
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "project_info",
                title: "Project info",
                description: "project.godot: name, main scene, features, autoloads, input \
                    actions and events, plugins.",
                class: class::ReadOnly,
                toolset: Toolset::Project,
                effect: None,
            },
            project_info,
        ),
        ToolDef::new(
            ToolMeta {
                name: "get_scene_tree",
                title: "Scene tree",
                description: "A scene's node tree: a saved .tscn's nodes, connections and \
                    dependencies; with no path (or the edited scene's), the live editor tree \
                    with unsaved edits. Paged.",
                class: class::ReadOnly,
                toolset: Toolset::SceneRead,
                effect: None,
            },
            get_scene_tree,
        ),
        ToolDef::new(
            ToolMeta {
                name: "read_resource",
                title: "Read a resource",
                description: "A .tres resource: type, script class, properties, \
                    sub-resources, dependencies.",
                class: class::ReadOnly,
                toolset: Toolset::ResourceRead,
                effect: None,
            },
            read_resource,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProjectInfoArgs {}

/// What project.godot says about the project.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ProjectInfo {
    name: Option<String>,
    description: Option<String>,
    main_scene: Option<String>,
    icon: Option<String>,
    config_version: i64,
    features: Vec<String>,
    #[schemars(with = "Vec<AutoloadSchema>")]
    autoloads: Vec<Autoload>,
    #[schemars(with = "Vec<InputActionSchema>")]
    input_actions: Vec<InputAction>,
    enabled_plugins: Vec<String>,
    sections: Vec<String>,
    // C#: .csproj, .sln, assembly (docs/csharp.md). Its schema is left open: the
    // default tools/list has no tokens to spare for it (tests/contract.rs's budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    dotnet: Option<crate::tools::kit::dotnet::DotnetInfo>,
}

// godot-mcp-formats serializes these; it does not depend on schemars, so their schemas
// are declared here (test builds check every result against them: output_check).

#[derive(JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct AutoloadSchema {
    name: String,
    path: String,
    singleton: bool,
}

#[derive(JsonSchema)]
#[allow(dead_code)] // a schema only: never built
struct InputActionSchema {
    name: String,
    deadzone: Option<f64>,
    /// null for an entry that is no InputEvent (the editor leaves one after a
    /// removed event; Godot skips it).
    events: Vec<Option<InputEventSchema>>,
}

/// An input event summary: its `kind` (key, mouse_button, joypad_button,
/// joypad_motion, other) and that kind's own fields, left open here so that one small
/// schema covers them all.
#[derive(JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
#[allow(dead_code)] // a schema only: never built
struct InputEventSchema {
    kind: String,
}

async fn project_info(Call { state, .. }: Call<ProjectInfoArgs>) -> Out<ProjectInfo> {
    let path = ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.0))?;
    let real = state.project.resolve("path", &path)?;
    let text = read_text(&state, "path", &path, &real)?;
    let info = godot_mcp_formats::parse_project(&text).map_err(|e| parse_error(&path, &e))?;
    let dotnet = crate::tools::kit::dotnet::dotnet_info(state.project.root(), &info);
    Ok(ProjectInfo {
        dotnet,
        sections: info.sections.iter().map(|s| s.tag.clone()).collect(),
        name: info.name,
        description: info.description,
        main_scene: info.main_scene,
        icon: info.icon,
        config_version: info.config_version,
        features: info.features,
        autoloads: info.autoloads,
        input_actions: info.input_actions,
        enabled_plugins: info.enabled_plugins,
    })
}

/// Properties by name, each in the one value model (docs/values.md): the JSON the
/// editor and the running game give for the same value.
type Props = BTreeMap<String, Value>;

fn props_object(
    props: &[godot_mcp_formats::Property],
    refs: &variant::Refs<'_>,
    file: &ResPath,
    warnings: &mut Vec<String>,
) -> Props {
    props
        .iter()
        .map(|p| {
            let v = match variant::from_text(&p.value, refs) {
                // Untyped: the file's own text of it, verbatim.
                variant::Value::Raw(_) => variant::Value::Raw(p.text.trim().to_string()),
                v => v,
            };
            if let Some(raw) = v.first_raw() {
                let mut text: String = raw.chars().take(80).collect();
                if text.len() < raw.len() {
                    text.push('…');
                }
                // A value the model does not type: where it is, so an agent knows
                // which value it was not given in typed form.
                warnings.push(format!(
                    "{file}:{} {}: not in the value model, kept as Raw: {text}",
                    p.line, p.name
                ));
            }
            (p.name.clone(), v.to_json())
        })
        .collect()
}

/// A script link as a path: the file's, or `SubResource("id")` for a built-in one.
fn link_path(link: &Option<ResourceLink>) -> Option<String> {
    match link {
        Some(ResourceLink::External(l)) => Some(l.path.clone()),
        Some(ResourceLink::Internal { id }) => Some(format!("SubResource(\"{id}\")")),
        None => None,
    }
}

/// A scene's node tree: read from the .tscn, or live from the editor.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SceneTree {
    /// `disk` or `editor`.
    source: &'static str,
    /// Nodes in the whole scene.
    node_count: usize,
    /// Nodes in this page.
    returned: usize,
    #[serde(flatten)]
    page: TreePage,
}

/// The two forms of a tree page (which one is in `source`).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
enum TreePage {
    Disk(DiskTree),
    Live(LiveTree),
}

/// A page of a saved scene, parsed from its .tscn.
#[derive(Debug, Serialize, JsonSchema)]
struct DiskTree {
    path: String,
    uid: Option<String>,
    root: Option<RootNode>,
    next_offset: Option<usize>,
    nodes: Vec<DiskNode>,
    connections: Vec<ConnectionRow>,
    ext_resources: Vec<ExtResourceRow>,
    sub_resources: Vec<SubResourceRow>,
    editable: Vec<String>,
    /// `res://file:line property: …` of each value of this page the value model
    /// does not type (read as `Raw`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct RootNode {
    name: String,
    #[serde(rename = "type")]
    node_type: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DiskNode {
    path: String,
    name: String,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    node_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    script: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    instance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    instance_placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    groups: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    properties: Option<Props>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ConnectionRow {
    signal: String,
    from: String,
    to: String,
    method: String,
    flags: Option<i64>,
    /// How many values are bound.
    binds: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ExtResourceRow {
    id: String,
    #[serde(rename = "type")]
    resource_type: String,
    path: String,
    uid: Option<String>,
}

impl From<&godot_mcp_formats::ExtResource> for ExtResourceRow {
    fn from(e: &godot_mcp_formats::ExtResource) -> Self {
        Self {
            id: e.id.clone(),
            resource_type: e.resource_type.clone(),
            path: e.path.clone(),
            uid: e.uid.clone(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
struct SubResourceRow {
    id: String,
    #[serde(rename = "type")]
    resource_type: String,
}

/// The add-on's reply: the scene's size and a page of it.
#[derive(Debug, Serialize, Deserialize)]
struct LiveReply {
    node_count: usize,
    #[serde(flatten)]
    page: LiveTree,
}

/// A page of the edited scene in the add-on's compact form
/// (`godot_mcp_editor_core::tree::CompactTree`): parallel arrays in pre-order.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct LiveTree {
    scene: String,
    offset: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    next_offset: Option<usize>,
    type_names: Vec<String>,
    names: Vec<String>,
    types: Vec<u32>,
    depths: Vec<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SceneTreeArgs {
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
        state.editor.bridge_status(),
        crate::rules::BridgeStatus::Connected { .. }
    ) {
        return false;
    }
    crate::tools::kit::editor::ask(state, &godot_mcp_protocol::commands::EditorState {}, None)
        .ok()
        .and_then(|v| {
            v.get("active_scene")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .is_some_and(|active| active == path.to_string())
}

/// A scene read's page size: 1000 when absent, 1 to 5000.
fn page_limit(limit: Option<u32>) -> Result<u32, ToolError> {
    ToolError::arg_in(
        "limit",
        limit,
        1000,
        1..=5000,
        "limit must be between 1 and 5000",
    )
}

async fn get_scene_tree(Call { state, args, .. }: Call<SceneTreeArgs>) -> Out<SceneTree> {
    let limit = page_limit(args.limit)?;
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
        return crate::tools::kit::editor::blocking_as(move || {
            let page = godot_mcp_protocol::commands::SceneTree {
                offset: offset as usize,
                limit: limit as usize,
            };
            let reply: LiveReply = crate::tools::kit::editor::query_as(&state, &page, None)?;
            Ok(SceneTree {
                source: "editor",
                node_count: reply.node_count,
                returned: reply.page.names.len(),
                page: TreePage::Live(reply.page),
            })
        })
        .await;
    }
    let Some(path) = args.path else {
        return Err(crate::rules::Precondition::BridgeConnected.error());
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
) -> Result<SceneTree, ToolError> {
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
    let limit = page_limit(args.limit)? as usize;
    let offset = args.offset.unwrap_or(0) as usize;
    let with_props = args.include_properties.unwrap_or(true);
    let text = read_text(&state, "path", &args.path, &real)?;
    let scene = godot_mcp_formats::parse_scene(&text).map_err(|e| parse_error(&args.path, &e))?;
    let refs = variant::Refs::of_scene(&scene);
    let total = scene.nodes.len();
    let mut warnings = Vec::new();
    let nodes: Vec<DiskNode> = scene
        .nodes
        .iter()
        .skip(offset)
        .take(limit)
        .map(|n| DiskNode {
            path: n.path.clone(),
            name: n.name.clone(),
            node_type: n.node_type.clone(),
            parent: n.parent.clone(),
            script: link_path(&n.script),
            instance: n.instance.as_ref().map(|i| i.path.clone()),
            instance_placeholder: n.instance_placeholder.clone(),
            groups: (!n.groups.is_empty()).then(|| n.groups.clone()),
            owner: n.owner.clone(),
            properties: (with_props && !n.properties.is_empty())
                .then(|| props_object(&n.properties, &refs, &args.path, &mut warnings)),
        })
        .collect();
    let returned = nodes.len();
    let next_offset = (offset + returned < total).then_some(offset + returned);
    Ok(SceneTree {
        source: "disk",
        node_count: total,
        returned,
        page: TreePage::Disk(DiskTree {
            path: args.path.to_string(),
            root: scene.root().map(|r| RootNode {
                name: r.name.clone(),
                node_type: r.node_type.clone(),
            }),
            next_offset,
            nodes,
            connections: scene
                .connections
                .iter()
                .map(|c| ConnectionRow {
                    signal: c.signal.clone(),
                    from: c.from.clone(),
                    to: c.to.clone(),
                    method: c.method.clone(),
                    flags: c.flags,
                    binds: c.binds.len(),
                })
                .collect(),
            ext_resources: scene.ext_resources.iter().map(Into::into).collect(),
            sub_resources: scene
                .sub_resources
                .iter()
                .map(|s| SubResourceRow {
                    id: s.id.clone(),
                    resource_type: s.resource_type.clone(),
                })
                .collect(),
            uid: scene.uid,
            editable: scene.editable,
            warnings,
        }),
    })
}

struct DiskTreeArgs {
    path: ResPath,
    include_properties: Option<bool>,
    offset: Option<u32>,
    limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadResourceArgs {
    /// The .tres file.
    path: ResPath,
}

/// A .tres resource, parsed.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ResourceFile {
    path: String,
    #[serde(rename = "type")]
    resource_type: String,
    script_class: Option<String>,
    uid: Option<String>,
    script: Option<String>,
    properties: Props,
    sub_resources: Vec<SubResourceProps>,
    ext_resources: Vec<ExtResourceRow>,
    /// `res://file:line property: …` of each value the value model does not type
    /// (read as `Raw`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SubResourceProps {
    id: String,
    #[serde(rename = "type")]
    resource_type: String,
    properties: Props,
}

async fn read_resource(Call { state, args, .. }: Call<ReadResourceArgs>) -> Out<ResourceFile> {
    let real = state.project.resolve("path", &args.path)?;
    if !matches!(args.path.extension().as_deref(), Some("tres")) {
        return Err(ToolError::invalid_params(
            "path",
            format!("{} is not a text resource (.tres)", args.path),
        ));
    }
    let text = read_text(&state, "path", &args.path, &real)?;
    let res = godot_mcp_formats::parse_resource(&text).map_err(|e| parse_error(&args.path, &e))?;
    let refs = variant::Refs::of_resource(&res);
    let mut warnings = Vec::new();
    let sub_resources = res
        .sub_resources
        .iter()
        .map(|s| SubResourceProps {
            id: s.id.clone(),
            resource_type: s.resource_type.clone(),
            properties: props_object(&s.properties, &refs, &args.path, &mut warnings),
        })
        .collect();
    Ok(ResourceFile {
        path: args.path.to_string(),
        script: link_path(&res.script),
        properties: props_object(&res.properties, &refs, &args.path, &mut warnings),
        sub_resources,
        warnings,
        ext_resources: res.ext_resources.iter().map(Into::into).collect(),
        resource_type: res.resource_type,
        script_class: res.script_class,
        uid: res.uid,
    })
}
