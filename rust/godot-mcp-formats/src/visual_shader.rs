//! A `VisualShader` resource (`.tres`) as Godot 4.4 stores it, and its writer.
//!
//! `VisualShader::_get_property_list` stores, per function (`vertex`, `fragment`, …):
//! `nodes/<function>/<id>/node = SubResource(…)` and `nodes/<function>/<id>/position =
//! Vector2(…)` for every node but the output (id 0, whose position is stored only when
//! moved from its default), and `nodes/<function>/connections = PackedInt32Array(from_node,
//! from_port, to_node, to_port, …)`. Checked against what the 4.4.1 engine saves and loads
//! (tests/visual_shader.rs has the engine load what this writes).
//!
//! The saved `code` is derived: the engine regenerates it from the graph when the file
//! loads, so the writer drops it rather than keep a copy that no longer matches.

use std::sync::LazyLock;

use serde::Serialize;

use crate::literal::Literal;

/// The shader functions, indexed as `VisualShader::Type`.
pub const FUNCTIONS: [&str; 10] = [
    "vertex",
    "fragment",
    "light",
    "start",
    "process",
    "collide",
    "start_custom",
    "process_custom",
    "sky",
    "fog",
];

/// The modes, indexed as `Shader::Mode` (the `mode` property).
pub const MODES: [&str; 5] = ["spatial", "canvas_item", "particles", "sky", "fog"];

/// The functions a mode's shader has (the editor's tabs).
pub fn mode_functions(mode: usize) -> &'static [&'static str] {
    match mode {
        0 | 1 => &FUNCTIONS[0..3],
        2 => &FUNCTIONS[3..8],
        3 => &FUNCTIONS[8..9],
        _ => &FUNCTIONS[9..10],
    }
}

/// The output node's id in every function.
pub const OUTPUT_ID: i64 = 0;
/// Where `VisualShader`'s constructor puts every output node.
pub const DEFAULT_OUTPUT_POSITION: [f64; 2] = [400.0, 150.0];
/// Largest node id accepted (Godot's ids are ints; this bounds hostile input).
pub const MAX_NODE_ID: i64 = 1_000_000;

/// One `name = value` line of a section, kept as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    pub name: String,
    pub text: String,
    pub value: Literal,
}

impl Prop {
    /// A property from Variant text; `Err` when the text is not one Variant value.
    pub fn new(name: &str, text: String) -> Result<Self, String> {
        let value = crate::parse_value(&text).map_err(|e| format!("{name}: {e}"))?;
        Ok(Self {
            name: name.to_string(),
            text,
            value,
        })
    }
}

/// An embedded resource (`[sub_resource]`): a graph node, or what a node uses.
#[derive(Debug, Clone, PartialEq)]
pub struct SubRes {
    pub id: String,
    pub class: String,
    pub properties: Vec<Prop>,
}

/// An `[ext_resource]` (a texture or mesh a node uses).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtRes {
    pub id: String,
    pub class: String,
    pub uid: Option<String>,
    pub path: String,
}

/// One node of a function's graph.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphNode {
    pub function: String,
    pub id: i64,
    pub position: [f64; 2],
    /// The node resource (`SubResource`/`ExtResource`); `None` for the output node.
    pub node: Option<Literal>,
    /// Other `nodes/<function>/<id>/<field>` lines (`size`, `expression`,
    /// `input_ports`…), kept as written.
    pub extra: Vec<(String, String)>,
}

/// One connection `from_node:from_port -> to_node:to_port` of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Connection {
    pub from_node: i64,
    pub from_port: i64,
    pub to_node: i64,
    pub to_port: i64,
}

/// A whole VisualShader file as an edit sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct VisualShaderFile {
    /// The header's `uid=`, kept.
    pub uid: Option<String>,
    pub ext_resources: Vec<ExtRes>,
    pub sub_resources: Vec<SubRes>,
    /// `[resource]` lines that are not graph lines (`mode`, `flags/…`, `graph_offset`,
    /// `varyings/…`), in file order; `code` is not kept (see the module doc).
    pub properties: Vec<Prop>,
    /// Nodes in the order Godot writes them: by function, then id. Output nodes are
    /// listed only when their position is stored.
    pub nodes: Vec<GraphNode>,
    /// Per function (index of [`FUNCTIONS`]), its connections in stored order.
    pub connections: Vec<Vec<Connection>>,
}

/// How many input ports each function's output node (id 0) has, per mode: the ports
/// the engine's `can_connect_nodes` accepts (tests/visual_shader.rs probes the engine).
pub const OUTPUT_PORTS: [(usize, &str, i64); 13] = [
    (0, "vertex", 12),
    (0, "fragment", 24),
    (0, "light", 3),
    (1, "vertex", 5),
    (1, "fragment", 7),
    (1, "light", 3),
    (2, "start", 8),
    (2, "process", 7),
    (2, "collide", 5),
    (2, "start_custom", 6),
    (2, "process_custom", 6),
    (3, "sky", 4),
    (4, "fog", 3),
];

/// The input port count of the output node of `function` in a shader of `mode`.
pub fn output_port_count(mode: usize, function: &str) -> Option<i64> {
    OUTPUT_PORTS
        .iter()
        .find(|(m, f, _)| *m == mode && *f == function)
        .map(|(_, _, n)| *n)
}

/// The class of a function's output node (id 0).
pub fn output_class(function: &str) -> &'static str {
    match function_index(function) {
        Some(3..=7) => "VisualShaderNodeParticleOutput",
        _ => "VisualShaderNodeOutput",
    }
}

/// The index of a function name in [`FUNCTIONS`].
pub fn function_index(name: &str) -> Option<usize> {
    FUNCTIONS.iter().position(|f| *f == name)
}

/// A number inside a constructor, as Godot writes it (`100`, `50.5`, `-0.25`).
pub fn component_text(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// A `Vector2` as Godot writes it.
pub fn vector2_text(p: [f64; 2]) -> String {
    format!(
        "Vector2({}, {})",
        component_text(p[0]),
        component_text(p[1])
    )
}

fn number(v: &Literal) -> Option<f64> {
    match v {
        Literal::Int(i) => Some(*i as f64),
        Literal::Float(f) => Some(*f),
        _ => None,
    }
}

fn reference_text(v: &Literal) -> Option<String> {
    match v {
        Literal::SubResource(id) => Some(format!("SubResource({})", crate::audio_bus::quoted(id))),
        Literal::ExtResource(id) => Some(format!("ExtResource({})", crate::audio_bus::quoted(id))),
        _ => None,
    }
}

/// Every resource reference inside a value, in order.
fn references<'a>(v: &'a Literal, out: &mut Vec<&'a Literal>) {
    match v {
        Literal::SubResource(_) | Literal::ExtResource(_) => out.push(v),
        Literal::Array(items) => items.iter().for_each(|i| references(i, out)),
        Literal::Dictionary(entries) => entries.iter().for_each(|e| {
            references(&e.key, out);
            references(&e.value, out);
        }),
        Literal::Object { properties, .. } => {
            properties.iter().for_each(|p| references(&p.value, out))
        }
        Literal::Constructor { args, .. } => args.iter().for_each(|a| references(a, out)),
        _ => {}
    }
}

impl VisualShaderFile {
    /// A new, empty VisualShader of `mode` (index of [`MODES`]).
    pub fn new(mode: usize) -> Self {
        let mut properties = Vec::new();
        if mode != 0 {
            properties.push(Prop {
                name: "mode".into(),
                text: mode.to_string(),
                value: Literal::Int(mode as i64),
            });
        }
        Self {
            uid: None,
            ext_resources: Vec::new(),
            sub_resources: Vec::new(),
            properties,
            nodes: Vec::new(),
            connections: vec![Vec::new(); FUNCTIONS.len()],
        }
    }

    /// The graph a parsed `.tres` holds. `Err` names what this model cannot keep: a
    /// graph line of an unknown function or shape, a node id out of range, a
    /// connection list that is not whole quadruples of ints.
    pub fn from_resource(res: &crate::Resource) -> Result<Self, String> {
        if res.resource_type != "VisualShader" {
            return Err(format!(
                "a {} resource, not a VisualShader",
                res.resource_type
            ));
        }
        if res.script_class.is_some() {
            return Err("the VisualShader has a script class".into());
        }
        let mut out = Self::new(0);
        out.uid = res.uid.clone();
        out.ext_resources = res
            .ext_resources
            .iter()
            .map(|e| ExtRes {
                id: e.id.clone(),
                class: e.resource_type.clone(),
                uid: e.uid.clone(),
                path: e.path.clone(),
            })
            .collect();
        out.sub_resources = res
            .sub_resources
            .iter()
            .map(|s| SubRes {
                id: s.id.clone(),
                class: s.resource_type.clone(),
                properties: s
                    .properties
                    .iter()
                    .map(|p| Prop {
                        name: p.name.clone(),
                        text: p.text.clone(),
                        value: p.value.clone(),
                    })
                    .collect(),
            })
            .collect();
        for p in &res.properties {
            if p.name == "code" {
                continue;
            }
            let Some(rest) = p.name.strip_prefix("nodes/") else {
                out.properties.push(Prop {
                    name: p.name.clone(),
                    text: p.text.clone(),
                    value: p.value.clone(),
                });
                continue;
            };
            let (function, rest) = rest
                .split_once('/')
                .ok_or_else(|| format!("{}: not a graph line", p.name))?;
            let f = function_index(function)
                .ok_or_else(|| format!("{}: no shader function {function:?}", p.name))?;
            if rest == "connections" {
                let Literal::Constructor { name, args } = &p.value else {
                    return Err(format!("{}: not a PackedInt32Array", p.name));
                };
                if name != "PackedInt32Array" || args.len() % 4 != 0 {
                    return Err(format!("{}: not whole quadruples of ints", p.name));
                }
                let mut ints = Vec::with_capacity(args.len());
                for a in args {
                    match a {
                        Literal::Int(i) => ints.push(*i),
                        _ => return Err(format!("{}: not whole quadruples of ints", p.name)),
                    }
                }
                out.connections[f] = ints
                    .chunks(4)
                    .map(|c| Connection {
                        from_node: c[0],
                        from_port: c[1],
                        to_node: c[2],
                        to_port: c[3],
                    })
                    .collect();
                continue;
            }
            let (id, field) = rest
                .split_once('/')
                .ok_or_else(|| format!("{}: not a graph line", p.name))?;
            let id: i64 = id
                .parse()
                .ok()
                .filter(|i| (0..=MAX_NODE_ID).contains(i))
                .ok_or_else(|| format!("{}: node id out of range", p.name))?;
            let node = out.node_entry(function, id);
            match field {
                "node" => {
                    if id == OUTPUT_ID || reference_text(&p.value).is_none() {
                        return Err(format!("{}: not a node resource", p.name));
                    }
                    node.node = Some(p.value.clone());
                }
                "position" => match &p.value {
                    Literal::Constructor { name, args } if name == "Vector2" && args.len() == 2 => {
                        let (Some(x), Some(y)) = (number(&args[0]), number(&args[1])) else {
                            return Err(format!("{}: not a Vector2", p.name));
                        };
                        node.position = [x, y];
                    }
                    _ => return Err(format!("{}: not a Vector2", p.name)),
                },
                other => node.extra.push((other.to_string(), p.text.clone())),
            }
        }
        if let Some(n) = out
            .nodes
            .iter()
            .find(|n| n.id != OUTPUT_ID && n.node.is_none())
        {
            return Err(format!(
                "nodes/{}/{} has no node resource",
                n.function, n.id
            ));
        }
        Ok(out)
    }

    /// The node `function`/`id`, created (at the default position) if absent, kept in
    /// Godot's order.
    fn node_entry(&mut self, function: &str, id: i64) -> &mut GraphNode {
        let key = (function_index(function).unwrap_or(0), id);
        let at = self
            .nodes
            .iter()
            .position(|n| (function_index(&n.function).unwrap_or(0), n.id) >= key);
        match at {
            Some(i) if self.nodes[i].function == function && self.nodes[i].id == id => {
                &mut self.nodes[i]
            }
            _ => {
                let i = at.unwrap_or(self.nodes.len());
                self.nodes.insert(
                    i,
                    GraphNode {
                        function: function.to_string(),
                        id,
                        position: if id == OUTPUT_ID {
                            DEFAULT_OUTPUT_POSITION
                        } else {
                            [0.0, 0.0]
                        },
                        node: None,
                        extra: Vec::new(),
                    },
                );
                &mut self.nodes[i]
            }
        }
    }

    /// The `mode` (index of [`MODES`]; 0 when not stored).
    pub fn mode(&self) -> usize {
        self.properties
            .iter()
            .find(|p| p.name == "mode")
            .and_then(|p| match p.value {
                Literal::Int(m) => Some(m),
                _ => None,
            })
            .and_then(|m| usize::try_from(m).ok())
            .filter(|m| *m < MODES.len())
            .unwrap_or(0)
    }

    /// The node `function`/`id` (the output node too, stored or not).
    pub fn node(&self, function: &str, id: i64) -> Option<GraphNode> {
        match self
            .nodes
            .iter()
            .find(|n| n.function == function && n.id == id)
        {
            Some(n) => Some(n.clone()),
            None if id == OUTPUT_ID && function_index(function).is_some() => Some(GraphNode {
                function: function.to_string(),
                id,
                position: DEFAULT_OUTPUT_POSITION,
                node: None,
                extra: Vec::new(),
            }),
            None => None,
        }
    }

    /// The class of a node (for id 0, the output class the engine makes for its
    /// function: the particle functions have their own).
    pub fn node_class(&self, node: &GraphNode) -> Option<&str> {
        match &node.node {
            None => Some(output_class(&node.function)),
            Some(Literal::SubResource(id)) => self
                .sub_resources
                .iter()
                .find(|s| &s.id == id)
                .map(|s| s.class.as_str()),
            Some(Literal::ExtResource(id)) => self
                .ext_resources
                .iter()
                .find(|e| &e.id == id)
                .map(|e| e.class.as_str()),
            Some(_) => None,
        }
    }

    /// The embedded resource of a node, if it is a `SubResource`.
    pub fn node_resource_mut(&mut self, node: &GraphNode) -> Option<&mut SubRes> {
        match &node.node {
            Some(Literal::SubResource(id)) => self.sub_resources.iter_mut().find(|s| &s.id == id),
            _ => None,
        }
    }

    /// The functions the graph reports: the mode's, then any other holding a node or
    /// a connection.
    pub fn functions(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = mode_functions(self.mode()).to_vec();
        for (i, f) in FUNCTIONS.iter().enumerate() {
            let used = self
                .nodes
                .iter()
                .any(|n| n.function == *f && n.id != OUTPUT_ID)
                || !self.connections[i].is_empty();
            if used && !out.contains(f) {
                out.push(f);
            }
        }
        out.sort_by_key(|f| function_index(f));
        out
    }

    /// The node ids of a function, as `VisualShader::get_node_list` lists them (the
    /// output node first, then ascending).
    pub fn node_ids(&self, function: &str) -> Vec<i64> {
        let mut ids = vec![OUTPUT_ID];
        ids.extend(
            self.nodes
                .iter()
                .filter(|n| n.function == function && n.id != OUTPUT_ID)
                .map(|n| n.id),
        );
        ids
    }

    /// The id `VisualShader::get_valid_node_id` gives a new node of `function`.
    pub fn next_id(&self, function: &str) -> i64 {
        self.node_ids(function)
            .into_iter()
            .max()
            .map_or(2, |m| (m + 1).max(2))
    }

    /// Add a node with an embedded resource of `class` and `properties`; the
    /// sub-resource id is `class_` + `suffix`. Returns nothing: the caller chose `id`.
    pub fn add_node(
        &mut self,
        function: &str,
        id: i64,
        position: [f64; 2],
        class: &str,
        sub_id: String,
        properties: Vec<Prop>,
    ) {
        self.sub_resources.push(SubRes {
            id: sub_id.clone(),
            class: class.to_string(),
            properties,
        });
        let node = self.node_entry(function, id);
        node.position = position;
        node.node = Some(Literal::SubResource(sub_id));
    }

    /// Move a node (the output node too).
    pub fn set_position(&mut self, function: &str, id: i64, position: [f64; 2]) {
        self.node_entry(function, id).position = position;
    }

    /// Remove a node and every connection to or from it; returns those connections.
    pub fn remove_node(&mut self, function: &str, id: i64) -> Vec<Connection> {
        self.nodes
            .retain(|n| !(n.function == function && n.id == id));
        let f = function_index(function).unwrap_or(0);
        let (gone, kept): (Vec<Connection>, Vec<Connection>) = self.connections[f]
            .iter()
            .partition(|c| c.from_node == id || c.to_node == id);
        self.connections[f] = kept;
        gone
    }

    /// Whether a sub-resource or ext-resource id is taken.
    pub fn id_taken(&self, id: &str) -> bool {
        self.sub_resources.iter().any(|s| s.id == id)
            || self.ext_resources.iter().any(|e| e.id == id)
    }

    /// The file's text as Godot's text saver lays it out: the resources still
    /// referenced, each after what it references (the saver's depth-first order); the
    /// kept `[resource]` lines, then per function its nodes and connections.
    pub fn to_text(&self) -> String {
        let mut graph: Vec<(String, String)> = Vec::new();
        for (f, function) in FUNCTIONS.iter().enumerate() {
            for n in self.nodes.iter().filter(|n| n.function == *function) {
                let key = format!("nodes/{function}/{}", n.id);
                if let Some(r) = n.node.as_ref().and_then(reference_text) {
                    graph.push((format!("{key}/node"), r));
                }
                if n.node.is_some() || n.position != DEFAULT_OUTPUT_POSITION {
                    graph.push((format!("{key}/position"), vector2_text(n.position)));
                }
                for (field, text) in &n.extra {
                    graph.push((format!("{key}/{field}"), text.clone()));
                }
            }
            let conns = &self.connections[f];
            if !conns.is_empty() {
                let ints: Vec<String> = conns
                    .iter()
                    .flat_map(|c| [c.from_node, c.from_port, c.to_node, c.to_port])
                    .map(|i| i.to_string())
                    .collect();
                graph.push((
                    format!("nodes/{function}/connections"),
                    format!("PackedInt32Array({})", ints.join(", ")),
                ));
            }
        }
        // The resources still referenced, in file order: a file Godot saved keeps its
        // order (an edit changes only the lines it must), and a resource is listed
        // after what it references, as the loader needs.
        let mut ext_ids: Vec<&str> = Vec::new();
        let mut sub_ids: Vec<&str> = Vec::new();
        let mut top: Vec<&Literal> = self.properties.iter().map(|p| &p.value).collect();
        top.extend(self.nodes.iter().filter_map(|n| n.node.as_ref()));
        for v in top {
            self.visit(v, &mut ext_ids, &mut sub_ids, 0);
        }
        let used_ext: Vec<&ExtRes> = self
            .ext_resources
            .iter()
            .filter(|x| ext_ids.contains(&x.id.as_str()))
            .collect();
        let used_sub: Vec<&SubRes> = self
            .sub_resources
            .iter()
            .filter(|x| sub_ids.contains(&x.id.as_str()))
            .collect();
        let steps = used_ext.len() + used_sub.len() + 1;
        let q = crate::audio_bus::quoted;
        let mut out = String::from("[gd_resource type=\"VisualShader\"");
        if steps > 1 {
            out.push_str(&format!(" load_steps={steps}"));
        }
        out.push_str(" format=3");
        if let Some(uid) = &self.uid {
            out.push_str(&format!(" uid={}", q(uid)));
        }
        out.push_str("]\n\n");
        for x in &used_ext {
            out.push_str(&format!("[ext_resource type={}", q(&x.class)));
            if let Some(uid) = &x.uid {
                out.push_str(&format!(" uid={}", q(uid)));
            }
            out.push_str(&format!(" path={} id={}]\n", q(&x.path), q(&x.id)));
        }
        if !used_ext.is_empty() {
            out.push('\n');
        }
        for x in &used_sub {
            out.push_str(&format!(
                "[sub_resource type={} id={}]\n",
                q(&x.class),
                q(&x.id)
            ));
            for p in &x.properties {
                out.push_str(&format!(
                    "{} = {}\n",
                    crate::scene_edit::property_key(&p.name),
                    p.text
                ));
            }
            out.push('\n');
        }
        out.push_str("[resource]\n");
        for p in &self.properties {
            out.push_str(&format!(
                "{} = {}\n",
                crate::scene_edit::property_key(&p.name),
                p.text
            ));
        }
        for (name, text) in graph {
            out.push_str(&format!("{name} = {text}\n"));
        }
        out
    }

    /// Collect the ids of the resources `v` reaches.
    fn visit<'a>(
        &'a self,
        v: &Literal,
        ext: &mut Vec<&'a str>,
        sub: &mut Vec<&'a str>,
        depth: usize,
    ) {
        let mut refs = Vec::new();
        references(v, &mut refs);
        for r in refs {
            match r {
                Literal::ExtResource(id) => {
                    if let Some(x) = self.ext_resources.iter().find(|x| &x.id == id)
                        && !ext.contains(&x.id.as_str())
                    {
                        ext.push(&x.id);
                    }
                }
                Literal::SubResource(id) => {
                    if let Some(x) = self.sub_resources.iter().find(|x| &x.id == id)
                        && !sub.contains(&x.id.as_str())
                        && depth < 64
                    {
                        sub.push(&x.id);
                        for p in &x.properties {
                            self.visit(&p.value, ext, sub, depth + 1);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// The node classes Godot 4.4.1 can put in a VisualShader (concrete `VisualShaderNode`
/// classes but the output and the script-defined custom node), with the properties each
/// stores and their Variant types. Dumped from the engine's ClassDB;
/// tests/visual_shader.rs checks it against the engine.
pub static NODE_CLASSES: LazyLock<Vec<NodeClass>> = LazyLock::new(|| {
    serde_json::from_str(include_str!("visual_shader_classes.json"))
        .expect("visual_shader_classes.json is a list of [class, [[property, type], …]]")
});

/// A VisualShader node class and the properties it stores, with their Variant types.
pub type NodeClass = (&'static str, Vec<(&'static str, &'static str)>);

/// The stored properties of a node class, or `None` when it is not one.
pub fn class_properties(class: &str) -> Option<&'static [(&'static str, &'static str)]> {
    NODE_CLASSES
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, p)| p.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Godot 4.4.1 saved for a spatial shader built with `add_node`/`connect_nodes`
    /// (ids 2 and 3 in fragment, 5 in vertex), its `code` removed.
    const GODOT_SAVED: &str =
        include_str!("../../../tests/fixtures/visual_shader/godot_saved.tres");

    #[test]
    fn reads_the_graph_godot_saved() {
        let res = crate::parse_resource(GODOT_SAVED).unwrap();
        let vs = VisualShaderFile::from_resource(&res).unwrap();
        assert_eq!(vs.mode(), 0);
        assert_eq!(vs.node_ids("fragment"), [0, 2, 3]);
        assert_eq!(vs.node_ids("vertex"), [0, 5]);
        let n = vs.node("fragment", 3).unwrap();
        assert_eq!(n.position, [-100.0, 50.5]);
        assert_eq!(vs.node_class(&n), Some("VisualShaderNodeFloatConstant"));
        assert_eq!(
            vs.connections[1],
            [
                Connection {
                    from_node: 2,
                    from_port: 0,
                    to_node: 0,
                    to_port: 0
                },
                Connection {
                    from_node: 3,
                    from_port: 0,
                    to_node: 0,
                    to_port: 2
                }
            ]
        );
        assert_eq!(vs.next_id("fragment"), 4);
        assert_eq!(vs.next_id("light"), 2);
    }

    #[test]
    fn writes_back_what_godot_saved_without_its_code() {
        let res = crate::parse_resource(GODOT_SAVED).unwrap();
        let vs = VisualShaderFile::from_resource(&res).unwrap();
        assert_eq!(vs.to_text(), GODOT_SAVED);
        // Round trip of a moved output node and a removed node with its connections.
        let mut vs = vs;
        vs.node_entry("fragment", 0).position = [700.0, 100.0];
        let gone = vs.remove_node("fragment", 2);
        assert_eq!(gone.len(), 1);
        let text = vs.to_text();
        assert!(
            text.contains("nodes/fragment/0/position = Vector2(700, 100)\n"),
            "{text}"
        );
        assert!(
            !text.contains("ColorConstant"),
            "an unreferenced node resource stays: {text}"
        );
        assert!(
            text.starts_with("[gd_resource type=\"VisualShader\" load_steps=3 format=3]"),
            "{text}"
        );
        let again =
            VisualShaderFile::from_resource(&crate::parse_resource(&text).unwrap()).unwrap();
        assert_eq!(again.to_text(), text);
    }

    #[test]
    fn refuses_what_it_cannot_keep() {
        for bad in [
            "nodes/nowhere/2/position = Vector2(0, 0)",
            "nodes/fragment/connections = PackedInt32Array(1, 2, 3)",
            "nodes/fragment/2/position = Vector2(0, 0)",
            "nodes/fragment/99999999/position = Vector2(0, 0)",
            "nodes/fragment/0/node = SubResource(\"x\")",
            "nodes/fragment/2/node = 3",
        ] {
            let src = format!(
                "[gd_resource type=\"VisualShader\" format=3]\n\n\
                 [sub_resource type=\"VisualShaderNodeFloatConstant\" id=\"x\"]\n\n[resource]\n{bad}\n"
            );
            let res = crate::parse_resource(&src).unwrap();
            assert!(VisualShaderFile::from_resource(&res).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_new_shader_of_each_mode() {
        assert_eq!(
            VisualShaderFile::new(0).to_text(),
            "[gd_resource type=\"VisualShader\" format=3]\n\n[resource]\n"
        );
        let sky = VisualShaderFile::new(3);
        assert!(sky.to_text().ends_with("[resource]\nmode = 3\n"));
        assert_eq!(sky.functions(), ["sky"]);
        assert_eq!(VisualShaderFile::new(2).functions().len(), 5);
        for mode in 0..MODES.len() {
            for f in mode_functions(mode) {
                assert!(output_port_count(mode, f).is_some(), "{mode} {f}");
            }
        }
    }

    #[test]
    fn the_class_table_is_sorted_and_unique() {
        assert!(NODE_CLASSES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(class_properties("VisualShaderNodeOutput").is_none());
        assert_eq!(
            class_properties("VisualShaderNodeColorConstant"),
            Some(&[("constant", "Color")][..])
        );
    }
}
