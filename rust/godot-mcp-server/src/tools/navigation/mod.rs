//! The navigation family: regions (a 2D outline polygon, or a 3D navigation mesh), agents,
//! navigation layers by their project-settings names, and baking — the baked polygon or
//! mesh is a new resource, so one undo puts the previous one back. Each tool is one
//! `scene.steps` recipe: one undo action.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::ToolError;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::steps::tool::recipe;
use crate::tools::kit::steps::{Dim, LayerRef, layer_bits, meta, new_resource};
use crate::tools::{NoFields, ToolDef};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegionArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    dim: Dim,
    /// 2D: the walkable outline, [[x,y],…] (at least 3 points); bake to fill it.
    #[serde(default)]
    outline: Option<Vec<[f64; 2]>>,
    /// Agent radius the bake keeps away from edges.
    #[serde(default)]
    agent_radius: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentArgs {
    /// Parent node path (the moving node, e.g. a CharacterBody).
    parent: String,
    /// Default NavigationAgent.
    #[serde(default)]
    name: Option<String>,
    dim: Dim,
    #[serde(default)]
    radius: Option<f64>,
    #[serde(default)]
    max_speed: Option<f64>,
    /// Distance at which the target counts as reached.
    #[serde(default)]
    target_desired_distance: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NavLayersArgs {
    /// A region, agent or link node path.
    node: String,
    dim: Dim,
    /// Layers (numbers 1-32 or names in project settings).
    layers: Vec<LayerRef>,
}

/// The bits set_navigation_layers sets.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NavigationBits {
    navigation_layers: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BakeArgs {
    /// The NavigationRegion2D/3D node path.
    node: String,
}

pub(crate) fn tools() -> Vec<ToolDef> {
    use class::Mutating;
    vec![
        recipe(
            meta(
                Toolset::Navigation,
                "add_navigation_region",
                "Add a navigation region",
                "Add a NavigationRegion2D (with an outline polygon) or NavigationRegion3D \
                 (with a NavigationMesh) as one undo action.",
                Mutating,
            ),
            |_, a: RegionArgs, steps| {
                let region = steps.create(&a.parent, &a.dim.class("NavigationRegion"), &a.name);
                let mut props = serde_json::Map::new();
                if let Some(r) = a.agent_radius {
                    props.insert("agent_radius".into(), json!(r));
                }
                match (a.dim, &a.outline) {
                    (Dim::TwoD, Some(o)) => {
                        if o.len() < 3 {
                            return Err(ToolError::invalid_params(
                                "outline",
                                "an outline needs at least 3 points",
                            ));
                        }
                        props.insert(
                            "outlines".into(),
                            json!([{"$type": "PackedVector2Array", "values": o}]),
                        );
                    }
                    (Dim::ThreeD, Some(_)) => {
                        return Err(ToolError::invalid_params(
                            "outline",
                            "an outline is for 2d; a 3d region bakes from its child meshes",
                        ));
                    }
                    _ => {}
                }
                let (prop, class) = match a.dim {
                    Dim::TwoD => ("navigation_polygon", "NavigationPolygon"),
                    Dim::ThreeD => ("navigation_mesh", "NavigationMesh"),
                };
                steps.set(&region, prop, new_resource(class, props.into()));
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Navigation,
                "add_navigation_agent",
                "Add a navigation agent",
                "Add a NavigationAgent2D/3D (radius, max speed, target distance) to a node.",
                Mutating,
            ),
            |_, a: AgentArgs, steps| {
                let name = a.name.as_deref().unwrap_or("NavigationAgent");
                let agent = steps.create(&a.parent, &a.dim.class("NavigationAgent"), name);
                steps.set_some(
                    &agent,
                    &[
                        ("radius", a.radius.map(|v| json!(v))),
                        ("max_speed", a.max_speed.map(|v| json!(v))),
                        (
                            "target_desired_distance",
                            a.target_desired_distance.map(|v| json!(v)),
                        ),
                    ],
                );
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Navigation,
                "set_navigation_layers",
                "Set navigation layers",
                "Set a navigation region's, agent's or link's navigation_layers from numbers or \
                 their names in project settings (layer_names).",
                Mutating,
            ),
            |state, a: NavLayersArgs, steps| {
                let kind = format!("{}_navigation", a.dim.key());
                let bits = layer_bits(state, &kind, &a.layers, "layers")?;
                steps.set(&a.node, "navigation_layers", json!(bits));
                let extra = NavigationBits {
                    navigation_layers: bits,
                };
                Ok(extra)
            },
        ),
        recipe(
            meta(
                Toolset::Navigation,
                "bake_navigation_mesh",
                "Bake a navigation mesh",
                "Bake a NavigationRegion2D/3D's polygon or mesh from its outline and children; \
                 undo restores the previous one.",
                Mutating,
            ),
            |_, a: BakeArgs, steps| {
                steps.step(godot_mcp_protocol::commands::Step::BakeNavigation { node: a.node });
                Ok(NoFields {})
            },
        ),
    ]
}
