//! VisualShader graphs on the file plane: create a VisualShader `.tres`, read its graph,
//! add and remove nodes, connect and disconnect ports, set a node's property.
//!
//! The file plane, not the editor's: a VisualShader is a resource file, so a read works
//! from disk without an editor, and every edit is a journaled write with compare-and-swap
//! (`expected_sha256`) that a crash cannot tear. Each write is destructive by the
//! classification rule (a resource file write no undo stack covers). The file is read
//! into `godot_mcp_formats::visual_shader::VisualShaderFile`, edited, written back in
//! Godot's layout through the one write seam, and the result reports what changed.

use std::collections::BTreeMap;
use std::sync::Arc;

use godot_mcp_formats::visual_shader::{
    self as vs, Connection, FUNCTIONS, MODES, OUTPUT_ID, Prop, VisualShaderFile,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::honesty::Persistence;
use crate::planes::project::Expect;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::kit::file_write::{FileEffect, plan_write};
use crate::tools::kit::tres_edit::{
    FileEdit, check_expected, edit_args, edit_meta, read_model, require_tres, sub_id,
};
use crate::tools::{Call, Committed, Out, Plan, ToolDef, ToolMeta};

mod check;
use check::{check_function, check_position, class_property, node_not_found, value_text};

fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::Destructive> {
    edit_meta(Toolset::VisualShader, name, title, description)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::planned(
            meta(
                "create_visual_shader",
                "Create a VisualShader",
                "Create an empty VisualShader .tres of a mode (spatial, canvas_item, \
                 particles, sky, fog).",
            ),
            plan_create,
        ),
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::VisualShader,
                "get_visual_shader_graph",
                "Read a VisualShader graph",
                "A VisualShader .tres graph from disk: per function its nodes (id, class, \
                 position, properties) and port connections.",
            ),
            get_graph,
        ),
        ToolDef::planned(
            meta(
                "add_visual_shader_node",
                "Add a VisualShader node",
                "Add a VisualShaderNode (e.g. VisualShaderNodeColorConstant) with position \
                 and properties to a function of a VisualShader .tres.",
            ),
            plan_add_node,
        ),
        ToolDef::planned(
            meta(
                "remove_visual_shader_node",
                "Remove a VisualShader node",
                "Remove a node and its connections from a function of a VisualShader .tres.",
            ),
            plan_remove_node,
        ),
        ToolDef::planned(
            meta(
                "connect_visual_shader_nodes",
                "Connect VisualShader nodes",
                "Connect an output port of one node to an input port of another (node 0 is \
                 the output) in a VisualShader .tres.",
            ),
            plan_connect,
        ),
        ToolDef::planned(
            meta(
                "disconnect_visual_shader_nodes",
                "Disconnect VisualShader nodes",
                "Remove a port connection between two nodes of a VisualShader .tres.",
            ),
            plan_disconnect,
        ),
        ToolDef::planned(
            meta(
                "set_visual_shader_node_property",
                "Set a VisualShader node property",
                "Set a stored property (constant, operator, parameter_name…) or the position \
                 of a node in a VisualShader .tres.",
            ),
            plan_set_property,
        ),
    ]
}

/// A shader mode (`Shader.Mode`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    Spatial,
    CanvasItem,
    Particles,
    Sky,
    Fog,
}

/// What a graph write will do: the file write, the change, and the shader's mode.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GraphEffect<C> {
    #[serde(flatten)]
    file: FileEffect,
    mode: &'static str,
    change: C,
}

type GraphPlan<C> = Plan<GraphEffect<C>, Committed>;

/// The persistence of a VisualShader write: on disk, but an open editor holds its copy.
fn shader_on_disk() -> Persistence {
    Persistence {
        persisted: true,
        reason: "written to the VisualShader file on disk atomically".into(),
        hint: Some(
            "An editor that has this shader open keeps its own copy and overwrites the file \
             when it saves it; reopen the shader there to see this change."
                .into(),
        ),
    }
}

/// Read and model the VisualShader at `path`; returns it with the sha256 of its bytes.
fn read_shader(state: &AppState, path: &ResPath) -> Result<(VisualShaderFile, String), ToolError> {
    require_tres(path, "VisualShader")?;
    let real = state.project.resolve("path", path)?;
    if !real.is_file() {
        return Err(ToolError::not_found(format!("{path} does not exist")).param("path"));
    }
    read_model(
        state,
        path,
        &real,
        "VisualShader",
        VisualShaderFile::from_resource,
    )
}

/// Read the shader, apply `edit`, and plan the write of the result.
fn plan_edit<C: Serialize + JsonSchema>(
    state: Arc<AppState>,
    file: FileEdit<ResPath>,
    edit: impl FnOnce(&mut VisualShaderFile) -> Result<C, ToolError>,
) -> Result<GraphPlan<C>, ToolError> {
    let (mut shader, read_sha) = read_shader(&state, &file.path)?;
    check_expected(
        &file.path,
        file.expected_sha256.as_deref(),
        Some(&read_sha),
        "Read the graph again (get_visual_shader_graph) and retry.",
    )?;
    let change = edit(&mut shader)?;
    let text = shader.to_text();
    // What is written must read back as a VisualShader this model keeps.
    godot_mcp_formats::parse_resource(&text)
        .map_err(|e| e.to_string())
        .and_then(|r| VisualShaderFile::from_resource(&r))
        .map_err(|e| {
            ToolError::internal(format!("the VisualShader written does not parse: {e}"))
        })?;
    let mode = MODES[shader.mode()];
    Ok(plan_write(
        &state,
        "path",
        file.path,
        text.into_bytes(),
        Expect::Sha256(&read_sha),
        shader_on_disk(),
    )?
    .map_effect(|file| GraphEffect { file, mode, change }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateArgs {
    /// The new .tres.
    path: ResPath,
    /// Default spatial.
    #[serde(default)]
    mode: Option<Mode>,
}

/// What create adds: the functions the new shader has.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Created {
    functions: Vec<&'static str>,
}

fn plan_create(state: Arc<AppState>, args: CreateArgs) -> Result<GraphPlan<Created>, ToolError> {
    require_tres(&args.path, "VisualShader")?;
    if crate::planes::project::current(&state.project, "path", &args.path)?.is_some() {
        return Err(
            ToolError::invalid_params("path", format!("{} already exists", args.path))
                .hint("Edit it with the visual_shader tools, or choose a new path."),
        );
    }
    let mode = args.mode.unwrap_or(Mode::Spatial) as usize;
    let shader = VisualShaderFile::new(mode);
    let change = Created {
        functions: shader.functions(),
    };
    Ok(plan_write(
        &state,
        "path",
        args.path,
        shader.to_text().into_bytes(),
        Expect::Absent,
        shader_on_disk(),
    )?
    .map_effect(|file| GraphEffect {
        file,
        mode: MODES[mode],
        change,
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GraphArgs {
    /// The VisualShader .tres.
    path: ResPath,
}

/// One node of a function's graph.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeOut {
    function: &'static str,
    id: i64,
    class: String,
    position: [f64; 2],
    /// Stored properties as Godot Variant text.
    properties: BTreeMap<String, String>,
}

/// One connection of a function's graph.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ConnectionOut {
    function: &'static str,
    from_node: i64,
    from_port: i64,
    to_node: i64,
    to_port: i64,
}

fn connection_out(function: &'static str, c: Connection) -> ConnectionOut {
    ConnectionOut {
        function,
        from_node: c.from_node,
        from_port: c.from_port,
        to_node: c.to_node,
        to_port: c.to_port,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GraphOut {
    path: String,
    sha256: String,
    mode: &'static str,
    functions: Vec<&'static str>,
    nodes: Vec<NodeOut>,
    connections: Vec<ConnectionOut>,
}

async fn get_graph(Call { state, args, .. }: Call<GraphArgs>) -> Out<GraphOut> {
    let (shader, sha256) = read_shader(&state, &args.path)?;
    let functions = shader.functions();
    let mut nodes = Vec::new();
    let mut connections = Vec::new();
    for (f, function) in FUNCTIONS.iter().enumerate() {
        if !functions.contains(function) {
            continue;
        }
        for id in shader.node_ids(function) {
            let Some(n) = shader.node(function, id) else {
                continue;
            };
            let properties = match &n.node {
                Some(godot_mcp_formats::Literal::SubResource(sid)) => shader
                    .sub_resources
                    .iter()
                    .find(|s| &s.id == sid)
                    .map(|s| {
                        s.properties
                            .iter()
                            .map(|p| (p.name.clone(), p.text.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
                _ => BTreeMap::new(),
            };
            nodes.push(NodeOut {
                function,
                id,
                class: shader.node_class(&n).unwrap_or_default().to_string(),
                position: n.position,
                properties,
            });
        }
        connections.extend(
            shader.connections[f]
                .iter()
                .map(|c| connection_out(function, *c)),
        );
    }
    Ok(GraphOut {
        path: args.path.to_string(),
        sha256,
        mode: MODES[shader.mode()],
        functions,
        nodes,
        connections,
    })
}

fn default_function() -> String {
    "fragment".into()
}

// The arguments of the graph edits.
edit_args! {
    path: [
        /// The VisualShader .tres.
        ResPath
    ];

    pub struct AddNodeArgs {
        /// vertex, fragment, light; start, process, collide, start_custom, process_custom
        /// (particles); sky; fog. Default fragment.
        #[serde(default = "default_function")]
        function: String,
        /// A VisualShaderNode class, e.g. VisualShaderNodeFloatConstant.
        class: String,
        /// Graph position [x, y] (default [0, 0]).
        #[serde(default)]
        position: Option<[f64; 2]>,
        /// Stored properties as JSON, e.g. {"constant": [1, 0, 0, 1]} (Color and vectors
        /// as arrays).
        #[serde(default)]
        properties: BTreeMap<String, Value>,
        /// Node id (default: the next free one, as the editor picks it).
        #[serde(default)]
        id: Option<i64>,
    }

    pub struct NodeArgs {
        /// The node's function (default fragment).
        #[serde(default = "default_function")]
        function: String,
        /// The node id (get_visual_shader_graph lists them).
        id: i64,
    }

    pub struct ConnectArgs {
        /// The nodes' function (default fragment).
        #[serde(default = "default_function")]
        function: String,
        from_node: i64,
        /// An output port of from_node.
        from_port: i64,
        /// Node 0 is the function's output.
        to_node: i64,
        /// An input port of to_node.
        to_port: i64,
    }

    pub struct SetPropertyArgs {
        /// The node's function (default fragment).
        #[serde(default = "default_function")]
        function: String,
        /// The node id.
        id: i64,
        /// A stored property of the node's class, or `position`.
        property: String,
        /// The value as JSON (Color and vectors as arrays, position as [x, y]).
        value: Value,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeAdded {
    function: &'static str,
    id: i64,
    class: String,
    sub_resource: String,
}

fn plan_add_node(state: Arc<AppState>, a: AddNodeArgs) -> Result<GraphPlan<NodeAdded>, ToolError> {
    if vs::class_properties(&a.class).is_none() {
        return Err(ToolError::invalid_params(
            "class",
            format!("{:?} is not a VisualShaderNode class Godot 4.4 can add", a.class),
        )
        .hint("E.g. VisualShaderNodeColorConstant, VisualShaderNodeFloatOp, VisualShaderNodeInput, VisualShaderNodeTexture2DParameter."));
    }
    let position = a.position.unwrap_or([0.0, 0.0]);
    check_position(position)?;
    let mut props = Vec::new();
    for (name, value) in &a.properties {
        let param = format!("properties.{name}");
        let ty = class_property(&a.class, name, &param)?;
        let text = value_text(ty, value, &param)?;
        props.push(Prop::new(name, text).map_err(ToolError::internal)?);
    }
    plan_edit(state, a.file(), move |shader| {
        let function = check_function(shader, &a.function)?;
        let id = match a.id {
            Some(id) if !(2..=vs::MAX_NODE_ID).contains(&id) => {
                return Err(ToolError::invalid_params(
                    "id",
                    format!(
                        "id must be 2..={} (0 is the output, 1 is reserved)",
                        vs::MAX_NODE_ID
                    ),
                ));
            }
            Some(id) if shader.node_ids(function).contains(&id) => {
                return Err(ToolError::invalid_params(
                    "id",
                    format!("{function} already has a node {id}"),
                ));
            }
            Some(id) => id,
            None => shader.next_id(function),
        };
        let seed = format!("{function}/{id}/{}/{props:?}", a.class);
        let sid = sub_id(&a.class, &seed, |id| shader.id_taken(id));
        shader.add_node(function, id, position, &a.class, sid.clone(), props);
        Ok(NodeAdded {
            function,
            id,
            class: a.class,
            sub_resource: sid,
        })
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeRemoved {
    function: &'static str,
    id: i64,
    class: String,
    connections_removed: Vec<ConnectionOut>,
}

fn plan_remove_node(
    state: Arc<AppState>,
    a: NodeArgs,
) -> Result<GraphPlan<NodeRemoved>, ToolError> {
    plan_edit(state, a.file(), move |shader| {
        let function = check_function(shader, &a.function)?;
        if a.id == OUTPUT_ID {
            return Err(ToolError::invalid_params(
                "id",
                "node 0 is the function's output and cannot be removed",
            ));
        }
        let node = shader
            .node(function, a.id)
            .ok_or_else(|| node_not_found(shader, "id", function, a.id))?;
        let class = shader.node_class(&node).unwrap_or_default().to_string();
        let gone = shader.remove_node(function, a.id);
        Ok(NodeRemoved {
            function,
            id: a.id,
            class,
            connections_removed: gone
                .into_iter()
                .map(|c| connection_out(function, c))
                .collect(),
        })
    })
}

impl ConnectArgs {
    fn connection(&self) -> Connection {
        Connection {
            from_node: self.from_node,
            from_port: self.from_port,
            to_node: self.to_node,
            to_port: self.to_port,
        }
    }
}

/// Whether `to` is reachable from `from` along the connections (Godot's
/// `is_nodes_connected_relatively`, which keeps a graph acyclic).
fn reaches(conns: &[Connection], from: i64, to: i64) -> bool {
    let mut todo = vec![from];
    let mut seen = vec![from];
    while let Some(n) = todo.pop() {
        if n == to {
            return true;
        }
        for c in conns.iter().filter(|c| c.from_node == n) {
            if !seen.contains(&c.to_node) {
                seen.push(c.to_node);
                todo.push(c.to_node);
            }
        }
    }
    false
}

fn plan_connect(
    state: Arc<AppState>,
    a: ConnectArgs,
) -> Result<GraphPlan<ConnectionOut>, ToolError> {
    for (param, port) in [("from_port", a.from_port), ("to_port", a.to_port)] {
        if !(0..=255).contains(&port) {
            return Err(ToolError::invalid_params(
                param,
                format!("{param} must be 0..=255"),
            ));
        }
    }
    let c = a.connection();
    plan_edit(state, a.file(), move |shader| {
        let function = check_function(shader, &a.function)?;
        let f = vs::function_index(function).unwrap_or(0);
        for (param, id) in [("from_node", c.from_node), ("to_node", c.to_node)] {
            if shader.node(function, id).is_none() {
                return Err(node_not_found(shader, param, function, id));
            }
        }
        if c.to_node == OUTPUT_ID {
            let ports = vs::output_port_count(shader.mode(), function).unwrap_or(0);
            if c.to_port >= ports {
                return Err(ToolError::invalid_params(
                    "to_port",
                    format!(
                        "the {function} output of a {} shader has input ports 0..={}",
                        MODES[shader.mode()],
                        ports - 1
                    ),
                ));
            }
        }
        if c.from_node == OUTPUT_ID {
            return Err(ToolError::invalid_params(
                "from_node",
                "node 0 is the output; it has no output ports",
            ));
        }
        let conns = &shader.connections[f];
        if let Some(e) = conns
            .iter()
            .find(|e| e.to_node == c.to_node && e.to_port == c.to_port)
        {
            return Err(ToolError::invalid_params(
                "to_port",
                format!(
                    "input port {} of node {} is already connected (from node {} port {})",
                    c.to_port, c.to_node, e.from_node, e.from_port
                ),
            )
            .hint("An input port takes one connection; disconnect_visual_shader_nodes it first."));
        }
        if c.from_node == c.to_node || reaches(conns, c.to_node, c.from_node) {
            return Err(ToolError::invalid_params(
                "to_node",
                format!(
                    "connecting node {} to node {} would make a loop",
                    c.from_node, c.to_node
                ),
            ));
        }
        shader.connections[f].push(c);
        Ok(connection_out(function, c))
    })
}

fn plan_disconnect(
    state: Arc<AppState>,
    a: ConnectArgs,
) -> Result<GraphPlan<ConnectionOut>, ToolError> {
    let c = a.connection();
    plan_edit(state, a.file(), move |shader| {
        let function = check_function(shader, &a.function)?;
        let f = vs::function_index(function).unwrap_or(0);
        let Some(i) = shader.connections[f].iter().position(|e| *e == c) else {
            return Err(ToolError::not_found(format!(
                "{function} has no connection {}:{} -> {}:{}",
                c.from_node, c.from_port, c.to_node, c.to_port
            ))
            .param("from_node")
            .hint("get_visual_shader_graph lists the connections."));
        };
        shader.connections[f].remove(i);
        Ok(connection_out(function, c))
    })
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PropertySet {
    function: &'static str,
    id: i64,
    class: String,
    property: String,
    /// The Variant text before (null: not stored, the class default).
    previous: Option<String>,
    /// The Variant text written.
    value: String,
}

fn plan_set_property(
    state: Arc<AppState>,
    a: SetPropertyArgs,
) -> Result<GraphPlan<PropertySet>, ToolError> {
    plan_edit(state, a.file(), move |shader| {
        let function = check_function(shader, &a.function)?;
        let node = shader
            .node(function, a.id)
            .ok_or_else(|| node_not_found(shader, "id", function, a.id))?;
        let class = shader.node_class(&node).unwrap_or_default().to_string();
        if a.property == "position" {
            let text = value_text("Vector2", &a.value, "value")?;
            let p: [f64; 2] = serde_json::from_value(a.value.clone())
                .map_err(|_| ToolError::invalid_params("value", "position is [x, y]"))?;
            check_position(p).map_err(|e| e.param("value"))?;
            let previous = vs::vector2_text(node.position);
            shader.set_position(function, a.id, p);
            return Ok(PropertySet {
                function,
                id: a.id,
                class,
                property: a.property,
                previous: Some(previous),
                value: text,
            });
        }
        if a.id == OUTPUT_ID {
            return Err(ToolError::invalid_params(
                "property",
                "the output node (0) has only a position",
            ));
        }
        let ty = class_property(&class, &a.property, "property")?;
        let text = value_text(ty, &a.value, "value")?;
        let prop = Prop::new(&a.property, text.clone()).map_err(ToolError::internal)?;
        let res = shader.node_resource_mut(&node).ok_or_else(|| {
            ToolError::invalid_params("id", "the node's resource is not embedded in this file")
        })?;
        let previous = match res.properties.iter_mut().find(|p| p.name == a.property) {
            Some(p) => Some(std::mem::replace(p, prop).text),
            None => {
                res.properties.push(prop);
                None
            }
        };
        Ok(PropertySet {
            function,
            id: a.id,
            class,
            property: a.property,
            previous,
            value: text,
        })
    })
}
