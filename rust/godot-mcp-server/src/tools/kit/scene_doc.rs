//! Scene documents: a saved .tscn or .tres read from disk in one bounded read and one
//! parse, what its resource references point at, its nodes by path, its values in the
//! one JSON form (docs/values.md), and the refusal for text that does not parse. Every
//! domain that reads a scene or resource from disk (scene, animation, audio, resource,
//! tilemap, ui, input, recipes, script) uses these.

use godot_mcp_formats::{ExtResource, Literal as GValue, ParseError, Resource, Scene, SubResource};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::common::read_text;

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
