//! The 3D family: mesh instances with a primitive mesh, cameras, lights, WorldEnvironment
//! settings, GridMap cells and MeshLibrary items. Edits are `scene.steps` recipes (one
//! undo action; a cell edit records the previous cells for its undo); reads ask the live
//! editor.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use godot_mcp_protocol::commands as cmd;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::tools::kit::cells::{CellsReply, cells_request};
use crate::tools::kit::editor::editor_read;
use crate::tools::kit::steps::tool::recipe;
use crate::tools::kit::steps::{color, meta, new_resource, vec2, vec3};
use crate::tools::{NoFields, ToolDef};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MeshKind {
    Box,
    Sphere,
    Capsule,
    Cylinder,
    Plane,
    Prism,
    Torus,
    Quad,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MeshArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    mesh: MeshKind,
    /// box/prism [x,y,z]; sphere/capsule [r,h]; cylinder [top r,bottom r,h]; plane/quad
    /// [w,d]; torus [inner r,outer r].
    #[serde(default)]
    size: Option<Vec<f64>>,
    #[serde(default)]
    position: Option<[f64; 3]>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CameraArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    /// Vertical field of view, degrees.
    #[serde(default)]
    fov: Option<f64>,
    /// Make it the current camera.
    #[serde(default)]
    current: Option<bool>,
    #[serde(default)]
    position: Option<[f64; 3]>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LightKind {
    Directional,
    Omni,
    Spot,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LightArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    kind: LightKind,
    #[serde(default)]
    energy: Option<f64>,
    /// [r,g,b,a] 0-1.
    #[serde(default)]
    color: Option<[f64; 4]>,
    /// Omni/spot reach.
    #[serde(default)]
    range: Option<f64>,
    #[serde(default)]
    shadows: Option<bool>,
    #[serde(default)]
    position: Option<[f64; 3]>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Background {
    ClearColor,
    Color,
    Sky,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Tonemap {
    Linear,
    Reinhard,
    Filmic,
    Aces,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvironmentArgs {
    /// An existing WorldEnvironment to change; omitted: create one under parent.
    #[serde(default)]
    node: Option<String>,
    /// Where a new WorldEnvironment goes (default ".").
    #[serde(default)]
    parent: Option<String>,
    /// A new one's name (default WorldEnvironment).
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    background: Option<Background>,
    /// [r,g,b,a] 0-1.
    #[serde(default)]
    background_color: Option<[f64; 4]>,
    #[serde(default)]
    ambient_light_color: Option<[f64; 4]>,
    #[serde(default)]
    ambient_light_energy: Option<f64>,
    #[serde(default)]
    tonemap: Option<Tonemap>,
    #[serde(default)]
    glow: Option<bool>,
    #[serde(default)]
    fog: Option<bool>,
    #[serde(default)]
    ssao: Option<bool>,
}

use cmd::GridCell as GridCellArg;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GridSetArgs {
    /// The GridMap node path.
    node: String,
    #[schemars(length(min = 1, max = 100000))]
    cells: Vec<GridCellArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GridClearArgs {
    /// The GridMap node path.
    node: String,
    /// [[x,y,z],…].
    #[schemars(length(min = 1, max = 100000))]
    coords: Vec<[i32; 3]>,
}

/// The add-on's `mesh_library.items` reply (steps.rs `mesh_library_items`).
#[derive(Debug, Deserialize, serde::Serialize, JsonSchema)]
pub(crate) struct LibraryItems {
    path: String,
    items: Vec<LibraryItem>,
}

/// One MeshLibrary item; `mesh` is its mesh's class, null without a mesh.
#[derive(Debug, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LibraryItem {
    id: i64,
    name: String,
    mesh: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LibraryArgs {
    /// The MeshLibrary (.tres/.res).
    path: ResPath,
}

fn mesh_resource(kind: MeshKind, size: Option<&[f64]>) -> Result<Value, ToolError> {
    use MeshKind::*;
    let bad = |shape: &str| ToolError::invalid_params("size", format!("{shape}, all > 0"));
    if let Some(s) = size
        && s.iter().any(|v| !v.is_finite() || *v <= 0.0)
    {
        return Err(bad("sizes"));
    }
    let (class, props) = match (kind, size) {
        (_, None) => (
            match kind {
                Box => "BoxMesh",
                Sphere => "SphereMesh",
                Capsule => "CapsuleMesh",
                Cylinder => "CylinderMesh",
                Plane => "PlaneMesh",
                Prism => "PrismMesh",
                Torus => "TorusMesh",
                Quad => "QuadMesh",
            },
            json!({}),
        ),
        (Box, Some([x, y, z])) => ("BoxMesh", json!({"size": vec3([*x, *y, *z])})),
        (Prism, Some([x, y, z])) => ("PrismMesh", json!({"size": vec3([*x, *y, *z])})),
        (Sphere, Some([r, h])) => ("SphereMesh", json!({"radius": r, "height": h})),
        (Capsule, Some([r, h])) => ("CapsuleMesh", json!({"radius": r, "height": h})),
        (Cylinder, Some([t, b, h])) => (
            "CylinderMesh",
            json!({"top_radius": t, "bottom_radius": b, "height": h}),
        ),
        (Plane, Some([w, d])) => ("PlaneMesh", json!({"size": vec2([*w, *d])})),
        (Quad, Some([w, d])) => ("QuadMesh", json!({"size": vec2([*w, *d])})),
        (Torus, Some([i, o])) => ("TorusMesh", json!({"inner_radius": i, "outer_radius": o})),
        _ => {
            return Err(bad(
                "box/prism [x,y,z]; sphere/capsule [r,h]; cylinder [top,bottom,h]; plane/quad \
                 [w,d]; torus [inner,outer]",
            ));
        }
    };
    Ok(new_resource(class, props))
}

pub(crate) fn tools() -> Vec<ToolDef> {
    [node_tools(), lighting_tools(), gridmap_tools()]
        .into_iter()
        .flatten()
        .collect()
}

/// Mesh instances and cameras.
fn node_tools() -> Vec<ToolDef> {
    use crate::rules::class::Mutating;
    vec![
        recipe(
            meta(
                Toolset::Spatial,
                "add_mesh_instance",
                "Add a 3D mesh instance",
                "Add a MeshInstance3D with a primitive mesh (box, sphere, capsule, cylinder, \
                 plane, prism, torus, quad) of a given size.",
                Mutating,
            ),
            |_, a: MeshArgs, steps| {
                let n = steps.create(&a.parent, "MeshInstance3D", &a.name);
                steps.set(&n, "mesh", mesh_resource(a.mesh, a.size.as_deref())?);
                steps.set_some(&n, &[("position", a.position.map(vec3))]);
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Spatial,
                "add_camera_3d",
                "Add a 3D camera",
                "Add a Camera3D (field of view, current, position).",
                Mutating,
            ),
            |_, a: CameraArgs, steps| {
                let n = steps.create(&a.parent, "Camera3D", &a.name);
                steps.set_some(
                    &n,
                    &[
                        ("fov", a.fov.map(|v| json!(v))),
                        ("current", a.current.map(|v| json!(v))),
                        ("position", a.position.map(vec3)),
                    ],
                );
                Ok(NoFields {})
            },
        ),
    ]
}

/// Lights and the WorldEnvironment.
fn lighting_tools() -> Vec<ToolDef> {
    use crate::rules::class::Mutating;
    vec![
        recipe(
            meta(
                Toolset::Spatial,
                "add_light_3d",
                "Add a 3D light",
                "Add a DirectionalLight3D, OmniLight3D or SpotLight3D (energy, colour, range, \
                 shadows, position).",
                Mutating,
            ),
            |_, a: LightArgs, steps| {
                let (class, range) = match a.kind {
                    LightKind::Directional => ("DirectionalLight3D", None),
                    LightKind::Omni => ("OmniLight3D", Some("omni_range")),
                    LightKind::Spot => ("SpotLight3D", Some("spot_range")),
                };
                let range = match (range, a.range) {
                    (None, Some(_)) => {
                        return Err(ToolError::invalid_params(
                            "range",
                            "a directional light has no range",
                        ));
                    }
                    (Some(k), Some(r)) => Some((k, json!(r))),
                    _ => None,
                };
                let n = steps.create(&a.parent, class, &a.name);
                steps.set_some(
                    &n,
                    &[
                        ("light_energy", a.energy.map(|v| json!(v))),
                        ("light_color", a.color.map(color)),
                        ("shadow_enabled", a.shadows.map(|v| json!(v))),
                        ("position", a.position.map(vec3)),
                    ],
                );
                if let Some((k, v)) = range {
                    steps.set(&n, k, v);
                }
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Spatial,
                "set_environment",
                "Set the world environment",
                "Create a WorldEnvironment with a new Environment, or change an existing one: \
                 background, ambient light, tonemap, glow, fog, SSAO.",
                Mutating,
            ),
            |_, a: EnvironmentArgs, steps| {
                let props: Vec<(&str, Option<Value>)> = vec![
                    (
                        "background_mode",
                        a.background.map(|b| {
                            json!(match b {
                                Background::ClearColor => 0,
                                Background::Color => 1,
                                Background::Sky => 2,
                            })
                        }),
                    ),
                    ("background_color", a.background_color.map(color)),
                    ("ambient_light_color", a.ambient_light_color.map(color)),
                    (
                        "ambient_light_energy",
                        a.ambient_light_energy.map(|v| json!(v)),
                    ),
                    (
                        "tonemap_mode",
                        a.tonemap.map(|t| {
                            json!(match t {
                                Tonemap::Linear => 0,
                                Tonemap::Reinhard => 1,
                                Tonemap::Filmic => 2,
                                Tonemap::Aces => 3,
                            })
                        }),
                    ),
                    ("glow_enabled", a.glow.map(|v| json!(v))),
                    ("fog_enabled", a.fog.map(|v| json!(v))),
                    ("ssao_enabled", a.ssao.map(|v| json!(v))),
                ];
                match &a.node {
                    Some(node) => {
                        if a.parent.is_some() || a.name.is_some() {
                            return Err(ToolError::invalid_params(
                                "node",
                                "node changes an existing WorldEnvironment; parent/name create one",
                            ));
                        }
                        for (k, v) in props {
                            if let Some(v) = v {
                                steps.set(node, &format!("environment:{k}"), v);
                            }
                        }
                        if steps.len() == 0 {
                            return Err(ToolError::invalid_params(
                                "node",
                                "nothing to change: give at least one setting",
                            ));
                        }
                    }
                    None => {
                        let n = steps.create(
                            a.parent.as_deref().unwrap_or("."),
                            "WorldEnvironment",
                            a.name.as_deref().unwrap_or("WorldEnvironment"),
                        );
                        let set: Map<String, Value> = props
                            .into_iter()
                            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
                            .collect();
                        steps.set(&n, "environment", new_resource("Environment", set.into()));
                    }
                }
                Ok(NoFields {})
            },
        ),
    ]
}

/// GridMap cells and MeshLibrary items.
fn gridmap_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating, ReadOnly};
    vec![
        recipe(
            meta(
                Toolset::Spatial,
                "set_gridmap_cells",
                "Set GridMap cells",
                "Set GridMap cells to MeshLibrary items with an orientation (item -1 erases); \
                 one undo action restores the previous cells.",
                Mutating,
            ),
            |_, a: GridSetArgs, steps| {
                steps.step(cmd::Step::GridCells {
                    node: a.node,
                    cells: a.cells,
                });
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Spatial,
                "clear_gridmap_cells",
                "Clear GridMap cells",
                "Erase GridMap cells at the given coordinates (one undo action).",
                Destructive,
            ),
            |_, a: GridClearArgs, steps| {
                let cells = a
                    .coords
                    .iter()
                    .map(|&coords| GridCellArg {
                        coords,
                        item: -1,
                        orientation: 0,
                    })
                    .collect();
                steps.step(cmd::Step::GridCells {
                    node: a.node,
                    cells,
                });
                Ok(NoFields {})
            },
        ),
        editor_read::<_, _, CellsReply>(
            meta(
                Toolset::Spatial,
                "get_gridmap_cells",
                "Get GridMap cells",
                "Read a GridMap's used cells in the live editor: [x,y,z,item,orientation] rows, \
                 paged.",
                ReadOnly,
            ),
            cells_request,
        ),
        editor_read::<_, _, LibraryItems>(
            meta(
                Toolset::Spatial,
                "list_mesh_library_items",
                "List MeshLibrary items",
                "List a MeshLibrary's items (id, name, mesh class) as the editor loads it.",
                ReadOnly,
            ),
            |a: &LibraryArgs| {
                let p = cmd::MeshLibraryItems {
                    path: a.path.to_string(),
                };
                (p, None)
            },
        ),
    ]
}
