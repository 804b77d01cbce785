//! `.tscn` files: [`Scene`], its [`Node`] tree, [`Connection`]s and
//! `[editable]` paths, with Godot's node-path rules and reference checks.

use serde::Serialize;

use crate::error::{ErrorKind, Mark, ParseError};
use crate::literal::Literal;
use crate::resource::{
    ExtLink, ExtResource, FileHeader, ResourceLink, ResourceTables, SubResource, int_attr,
    required_string_attr, string_attr, unknown_section,
};
use crate::text::{HeaderMode, Property, Section, parse_document};
use rustc_hash::{FxHashMap as FastMap, FxHashSet as FastSet};

/// A parsed `.tscn` file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scene {
    /// `format=` of the header (3 for Godot 4).
    pub format: i64,
    /// `uid=` of the header, e.g. `uid://b6x1f3k2m7qcd`.
    pub uid: Option<String>,
    /// `load_steps=` of the header, if written.
    pub load_steps: Option<i64>,
    /// Dependencies, in file order.
    pub ext_resources: Vec<ExtResource>,
    /// Embedded resources, in file order.
    pub sub_resources: Vec<SubResource>,
    /// Nodes in file order; the first is the root.
    pub nodes: Vec<Node>,
    /// Signal connections, in file order.
    pub connections: Vec<Connection>,
    /// `[editable path=…]`: instanced nodes whose children are editable here.
    pub editable: Vec<String>,
}

/// One `[node …]` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// `name=`.
    pub name: String,
    /// `type=`; absent for instanced scenes and for overrides of nodes that
    /// come from an instanced scene.
    #[serde(rename = "type")]
    pub node_type: Option<String>,
    /// `parent=` as written (`None` for the root, `"."` for its children).
    pub parent: Option<String>,
    /// The path from the root, as Godot's `root.get_node(path)` takes it:
    /// `"."` for the root, `"Enemy"`, `"Enemy/CollisionShape2D"`, …
    pub path: String,
    /// `owner=`, when written (nodes of editable instances).
    pub owner: Option<String>,
    /// `index=`, when written.
    pub index: Option<i64>,
    /// `instance=ExtResource(…)`: the scene instanced here.
    pub instance: Option<ExtLink>,
    /// `instance_placeholder=`: path of a scene loaded later on demand.
    pub instance_placeholder: Option<String>,
    /// The `script` property, resolved.
    pub script: Option<ResourceLink>,
    /// `groups=[…]`.
    pub groups: Vec<String>,
    /// Properties in file order (including `script`), each with its Godot text.
    pub properties: Vec<Property>,
    /// Header attributes other than those above (kept, not interpreted).
    pub other_attributes: Vec<Property>,
    /// 1-based line of the section.
    pub line: u32,
}

/// One `[connection …]` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Connection {
    /// `signal=`.
    pub signal: String,
    /// `from=`: path of the emitting node, relative to the root.
    pub from: String,
    /// `to=`: path of the receiving node, relative to the root.
    pub to: String,
    /// `method=`.
    pub method: String,
    /// `flags=`, when written (Godot omits it for a plain persistent connection).
    pub flags: Option<i64>,
    /// `unbinds=`, when written.
    pub unbinds: Option<i64>,
    /// `binds=[…]`, empty when not written.
    /// (The parsed text: no JSON form; the value model is `variant::Value`.)
    #[serde(skip)]
    pub binds: Vec<Literal>,
    /// 1-based line of the section.
    pub line: u32,
}

impl Scene {
    /// The root node.
    pub fn root(&self) -> Option<&Node> {
        self.nodes.first()
    }

    /// The node at `path` (`"."` for the root).
    pub fn node(&self, path: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.path == path)
    }

    /// The `[ext_resource]` with `id`.
    pub fn ext_resource(&self, id: &str) -> Option<&ExtResource> {
        self.ext_resources.iter().find(|e| e.id == id)
    }
}

impl Node {
    /// The property named `name`.
    pub fn property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.name == name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    ExtResources,
    SubResources,
    Nodes,
}

/// Parses a `.tscn` scene.
///
/// Checks Godot's rules: a `format=3` header; `ext_resource`, then
/// `sub_resource`, then `node`/`connection`/`editable` sections; unique ids;
/// references only to resources declared before; one root; every parent,
/// connection end and editable path naming a node of the scene (or a node
/// inside an instanced scene); no two nodes at the same path.
///
/// ```
/// let scene = godot_mcp_formats::parse_scene(
///     "[gd_scene format=3]\n\n[node name=\"Root\" type=\"Node2D\"]\n\n[node name=\"A\" type=\"Node\" parent=\".\"]\n",
/// ).unwrap();
/// assert_eq!(scene.nodes[1].path, "A");
/// ```
pub fn parse_scene(src: &str) -> Result<Scene, ParseError> {
    let doc = parse_document(src, HeaderMode::Attributes)?;
    let section_count = doc.sections.len();
    let mut sections = doc.sections.into_iter();
    let header = FileHeader::read(src, &doc.preamble, sections.next(), "gd_scene")?;
    let mut tables = ResourceTables::default();
    let mut phase = Phase::ExtResources;
    let mut nodes: Vec<Node> = Vec::with_capacity(section_count);
    let mut tree = Tree::default();
    tree.declared.reserve(section_count);
    let mut pending_connections: Vec<Section> = Vec::new();
    let mut pending_editable: Vec<Section> = Vec::new();

    for section in sections {
        let section_phase = match section.tag.as_str() {
            "ext_resource" => Phase::ExtResources,
            "sub_resource" => Phase::SubResources,
            "node" | "connection" | "editable" => Phase::Nodes,
            other => return Err(unknown_section(src, &section, other, "a .tscn")),
        };
        if section_phase < phase {
            return Err(section.mark.error(
                src,
                ErrorKind::Structure,
                format!(
                    "[{}] must come before [sub_resource] and [node] sections",
                    section.tag
                ),
            ));
        }
        phase = section_phase;
        match section.tag.as_str() {
            "ext_resource" => tables.add_ext(src, section)?,
            "sub_resource" => tables.add_sub(src, section)?,
            "node" => {
                tables.check_refs(src, &section.refs)?;
                let node = build_node(src, section, &tables, &mut tree)?;
                nodes.push(node);
            }
            "connection" => pending_connections.push(section),
            _ => pending_editable.push(section),
        }
    }

    if nodes.is_empty() {
        return Err(header
            .mark
            .error(src, ErrorKind::Truncated, "the scene has no nodes"));
    }

    // Connections and editable paths may name nodes declared after them.
    let mut connections = Vec::with_capacity(pending_connections.len());
    for section in pending_connections {
        connections.push(build_connection(src, section, &tables, &tree)?);
    }
    let mut editable = Vec::with_capacity(pending_editable.len());
    for mut section in pending_editable {
        no_properties(src, &section)?;
        // Godot records the path as it is (add_editable_instance), whatever node
        // it names: in an inherited scene it names a node of the base scene.
        let path = required_string_attr(src, &mut section, "path")?;
        editable.push(path);
    }

    Ok(Scene {
        format: header.format,
        uid: header.uid,
        load_steps: header.load_steps,
        ext_resources: tables.ext,
        sub_resources: tables.sub,
        nodes,
        connections,
        editable,
    })
}

/// What is known of the node tree so far.
#[derive(Default)]
struct Tree {
    /// Path → line of every declared node.
    declared: FastMap<String, u32>,
    /// Paths of nodes that instance another scene: nodes below them come from
    /// that scene and need not be declared here.
    instanced: FastSet<String>,
    has_root: bool,
}

impl Tree {
    /// Whether `path` names a node: declared here, the root, or beneath an
    /// instanced node (whose children live in the instanced scene).
    fn resolves(&self, path: &str) -> bool {
        if path == "." {
            return self.has_root;
        }
        if self.declared.contains_key(path) || self.instanced.contains(".") {
            return true;
        }
        path.match_indices('/').any(|(i, _)| {
            path.get(..i)
                .is_some_and(|prefix| self.instanced.contains(prefix))
        })
    }
}

fn value_mark(section: &Section, attr: &str) -> Mark {
    section
        .attribute(attr)
        .map_or(section.mark, |p| p.value_mark)
}

fn no_properties(src: &str, section: &Section) -> Result<(), ParseError> {
    match section.properties.first() {
        Some(p) => Err(p.mark.error(
            src,
            ErrorKind::Structure,
            format!("[{}] takes no properties, found '{}'", section.tag, p.name),
        )),
        None => Ok(()),
    }
}

const NODE_ATTRIBUTES: &[&str] = &[
    "name",
    "type",
    "parent",
    "owner",
    "index",
    "instance",
    "instance_placeholder",
    "groups",
];

fn build_node(
    src: &str,
    mut section: Section,
    tables: &ResourceTables,
    tree: &mut Tree,
) -> Result<Node, ParseError> {
    let name = required_string_attr(src, &mut section, "name")?;
    // Only what would break node paths is refused; Godot's editor is stricter
    // but older or imported scenes may carry other characters.
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', ':']) {
        return Err(value_mark(&section, "name").error(
            src,
            ErrorKind::Structure,
            format!("\"{name}\" is not a valid node name"),
        ));
    }
    let node_type = string_attr(src, &mut section, "type")?;
    let parent = string_attr(src, &mut section, "parent")?;
    let owner = string_attr(src, &mut section, "owner")?;
    let index = int_attr(src, &section, "index")?;
    let instance_placeholder = string_attr(src, &mut section, "instance_placeholder")?;

    let instance = match section.attribute("instance") {
        None => None,
        Some(p) => {
            let link = match &p.value {
                Literal::ExtResource(id) => tables
                    .ext_link(id)
                    .filter(|_| tables.ext_type(id) == Some("PackedScene")),
                _ => None,
            };
            match link {
                Some(link) => Some(link),
                None => {
                    return Err(p.value_mark.error(
                        src,
                        ErrorKind::Structure,
                        format!(
                            "instance= must be an ExtResource of type PackedScene, found {}",
                            p.text
                        ),
                    ));
                }
            }
        }
    };

    let groups = match section.attributes.iter_mut().find(|p| p.name == "groups") {
        None => Vec::new(),
        Some(p) => {
            let groups = match &mut p.value {
                Literal::Array(items) => std::mem::take(items)
                    .into_iter()
                    .map(|v| match v {
                        Literal::String(s) | Literal::StringName(s) => Some(s),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>(),
                _ => None,
            };
            groups.ok_or_else(|| {
                p.value_mark.error(
                    src,
                    ErrorKind::Structure,
                    format!("groups= must be an array of strings, found {}", p.text),
                )
            })?
        }
    };

    let path = match parent.as_deref() {
        None => {
            if tree.has_root {
                return Err(section.mark.error(
                    src,
                    ErrorKind::Structure,
                    format!("node \"{name}\" has no parent=, but the scene already has a root"),
                ));
            }
            tree.has_root = true;
            ".".to_owned()
        }
        Some(parent) => {
            if !tree.resolves(parent) {
                let message = if tree.has_root {
                    format!(
                        "parent \"{parent}\" of node \"{name}\" names no node declared before it"
                    )
                } else {
                    format!("node \"{name}\" has parent=\"{parent}\" but the scene has no root yet")
                };
                return Err(value_mark(&section, "parent").error(
                    src,
                    ErrorKind::UnknownNode,
                    message,
                ));
            }
            if parent == "." {
                name.clone()
            } else {
                let mut p = String::with_capacity(parent.len() + 1 + name.len());
                p.push_str(parent);
                p.push('/');
                p.push_str(&name);
                p
            }
        }
    };

    if let Some(&line) = tree.declared.get(path.as_str()) {
        return Err(section.mark.error(
            src,
            ErrorKind::DuplicateNode,
            format!("a node at path \"{path}\" is already declared on line {line}"),
        ));
    }
    tree.declared.insert(path.clone(), section.line);
    if instance.is_some() {
        tree.instanced.insert(path.clone());
    }

    let script = section
        .property("script")
        .and_then(|p| tables.link(&p.value));
    let other_attributes = std::mem::take(&mut section.attributes)
        .into_iter()
        .filter(|a| !NODE_ATTRIBUTES.contains(&a.name.as_str()))
        .collect();

    Ok(Node {
        name,
        node_type,
        parent,
        path,
        owner,
        index,
        instance,
        instance_placeholder,
        script,
        groups,
        properties: section.properties,
        other_attributes,
        line: section.line,
    })
}

fn build_connection(
    src: &str,
    mut section: Section,
    tables: &ResourceTables,
    tree: &Tree,
) -> Result<Connection, ParseError> {
    no_properties(src, &section)?;
    tables.check_refs(src, &section.refs)?;
    let signal = required_string_attr(src, &mut section, "signal")?;
    let from = required_string_attr(src, &mut section, "from")?;
    let to = required_string_attr(src, &mut section, "to")?;
    let method = required_string_attr(src, &mut section, "method")?;
    for (attr, path) in [("from", &from), ("to", &to)] {
        if !tree.resolves(path) {
            return Err(value_mark(&section, attr).error(
                src,
                ErrorKind::UnknownNode,
                format!("connection {attr}=\"{path}\" names no node of this scene"),
            ));
        }
    }
    let flags = int_attr(src, &section, "flags")?;
    let unbinds = int_attr(src, &section, "unbinds")?;
    let binds = match section.attribute("binds") {
        None => Vec::new(),
        Some(p) => match &p.value {
            Literal::Array(items) => items.clone(),
            _ => {
                return Err(p.value_mark.error(
                    src,
                    ErrorKind::Structure,
                    format!("binds= must be an array, found {}", p.text),
                ));
            }
        },
    };
    Ok(Connection {
        signal,
        from,
        to,
        method,
        flags,
        unbinds,
        binds,
        line: section.line,
    })
}
