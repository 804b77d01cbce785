//! The physics family: bodies with collision shapes (sized, or fitted to a Sprite2D's rect
//! or a mesh's bounds by the add-on), collision layers and masks by their project-settings
//! names, raycasts. Each tool is one `scene.steps` recipe: one undo action.

use godot_mcp_protocol::commands::{self as cmd, FitKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::ToolError;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::steps::tool::recipe;
use crate::tools::kit::steps::{
    Dim, LayerRef, Steps, layer_bits, meta, new_resource, vec2, vec3, vector,
};
use crate::tools::{NoFields, ToolDef};

/// A collision shape's kind: 2D rectangle, circle, capsule; 3D box, sphere, capsule,
/// cylinder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ShapeKind {
    Rectangle,
    Circle,
    Capsule,
    Box,
    Sphere,
    Cylinder,
}

/// A collision shape: its kind and size, or fitted to a sprite or mesh.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShapeArg {
    kind: ShapeKind,
    /// rectangle [w,h]; circle/sphere [r]; capsule/cylinder [r,h]; box [x,y,z].
    #[serde(default)]
    size: Option<Vec<f64>>,
    /// Size and place it to this Sprite2D/MeshInstance3D's bounds instead (node path).
    #[serde(default)]
    fit_to: Option<String>,
}

/// The steps that give the CollisionShape `node` its shape.
fn shape_steps(steps: &mut Steps, node: &str, dim: Dim, s: &ShapeArg) -> Result<(), ToolError> {
    use ShapeKind::*;
    let ok = match dim {
        Dim::TwoD => matches!(s.kind, Rectangle | Circle | Capsule),
        Dim::ThreeD => matches!(s.kind, Box | Sphere | Capsule | Cylinder),
    };
    if !ok {
        return Err(ToolError::invalid_params(
            "shape.kind",
            "2d shapes: rectangle, circle, capsule; 3d: box, sphere, capsule, cylinder",
        ));
    }
    if let Some(to) = &s.fit_to {
        if s.size.is_some() {
            return Err(ToolError::invalid_params(
                "shape",
                "give size or fit_to, not both",
            ));
        }
        let shape = match s.kind {
            Rectangle => FitKind::Rectangle,
            Circle => FitKind::Circle,
            Capsule => FitKind::Capsule,
            Box => FitKind::Box,
            Sphere => FitKind::Sphere,
            Cylinder => {
                return Err(ToolError::invalid_params(
                    "shape.fit_to",
                    "fit_to makes a box, sphere or capsule in 3D",
                ));
            }
        };
        steps.step(cmd::Step::FitShape {
            node: node.into(),
            to: to.clone(),
            shape,
        });
        return Ok(());
    }
    let size = s.size.clone().unwrap_or_else(|| match s.kind {
        Rectangle => vec![32.0, 32.0],
        Circle => vec![16.0],
        Capsule if dim == Dim::TwoD => vec![10.0, 30.0],
        Box => vec![1.0, 1.0, 1.0],
        Sphere => vec![0.5],
        Capsule | Cylinder => vec![0.5, 2.0],
    });
    let bad = || {
        ToolError::invalid_params(
            "shape.size",
            "rectangle [w,h]; circle/sphere [r]; capsule/cylinder [r,h]; box [x,y,z]; all > 0",
        )
    };
    if size.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return Err(bad());
    }
    let (class, props) = match (s.kind, dim, size.as_slice()) {
        (Rectangle, _, [w, h]) => ("RectangleShape2D", json!({"size": vec2([*w, *h])})),
        (Circle, _, [r]) => ("CircleShape2D", json!({"radius": r})),
        (Capsule, Dim::TwoD, [r, h]) => ("CapsuleShape2D", json!({"radius": r, "height": h})),
        (Capsule, Dim::ThreeD, [r, h]) => ("CapsuleShape3D", json!({"radius": r, "height": h})),
        (Box, _, [x, y, z]) => ("BoxShape3D", json!({"size": vec3([*x, *y, *z])})),
        (Sphere, _, [r]) => ("SphereShape3D", json!({"radius": r})),
        (Cylinder, _, [r, h]) => ("CylinderShape3D", json!({"radius": r, "height": h})),
        _ => return Err(bad()),
    };
    steps.set(node, "shape", new_resource(class, props));
    Ok(())
}

/// The bits set_collision_layers sets, each only when given.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CollisionBits {
    #[serde(skip_serializing_if = "Option::is_none")]
    collision_layer: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    collision_mask: Option<i64>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BodyKind {
    Static,
    Rigid,
    Character,
    Area,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BodyArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    body: BodyKind,
    dim: Dim,
    shape: ShapeArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShapeArgs {
    /// The body (or area) node path.
    parent: String,
    /// Default: the class name (CollisionShape2D/3D), as the editor names it.
    #[serde(default)]
    name: Option<String>,
    dim: Dim,
    shape: ShapeArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LayersArgs {
    /// A CollisionObject (body, area) node path.
    node: String,
    dim: Dim,
    /// Layers it is on (numbers 1-32 or names); omitted: unchanged.
    #[serde(default)]
    layer: Option<Vec<LayerRef>>,
    /// Layers it detects; omitted: unchanged.
    #[serde(default)]
    mask: Option<Vec<LayerRef>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RaycastArgs {
    /// Parent node path ("." is the root).
    parent: String,
    /// Node name.
    name: String,
    dim: Dim,
    /// Ray end, relative: [x,y] or [x,y,z].
    target: Vec<f64>,
    /// Layers it detects (numbers or names).
    #[serde(default)]
    mask: Option<Vec<LayerRef>>,
    #[serde(default)]
    collide_with_areas: Option<bool>,
}

pub(crate) fn tools() -> Vec<ToolDef> {
    use class::Mutating;
    vec![
        recipe(
            meta(
                Toolset::Physics,
                "add_physics_body",
                "Add a physics body",
                "Add a StaticBody/RigidBody/CharacterBody/Area (2D or 3D) with a CollisionShape \
                 sized or fitted to a sprite/mesh, as one undo action.",
                Mutating,
            ),
            |_, a: BodyArgs, steps| {
                let stem = match a.body {
                    BodyKind::Static => "StaticBody",
                    BodyKind::Rigid => "RigidBody",
                    BodyKind::Character => "CharacterBody",
                    BodyKind::Area => "Area",
                };
                let body = steps.create(&a.parent, &a.dim.class(stem), &a.name);
                // Named as the editor names a new node: its class (CollisionShape2D/3D).
                let class = a.dim.class("CollisionShape");
                let shape = steps.create(&body, &class, &class);
                shape_steps(steps, &shape, a.dim, &a.shape)?;
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Physics,
                "add_collision_shape",
                "Add a collision shape",
                "Add a CollisionShape2D/3D to a body or area, sized, or fitted to a \
                 Sprite2D/MeshInstance3D's bounds.",
                Mutating,
            ),
            |_, a: ShapeArgs, steps| {
                let class = a.dim.class("CollisionShape");
                let name = a.name.clone().unwrap_or_else(|| class.clone());
                let shape = steps.create(&a.parent, &class, &name);
                shape_steps(steps, &shape, a.dim, &a.shape)?;
                Ok(NoFields {})
            },
        ),
        recipe(
            meta(
                Toolset::Physics,
                "set_collision_layers",
                "Set collision layers and mask",
                "Set a body's or area's collision_layer and collision_mask from layer numbers \
                 or their names in project settings (layer_names).",
                Mutating,
            ),
            |state, a: LayersArgs, steps| {
                if a.layer.is_none() && a.mask.is_none() {
                    return Err(ToolError::invalid_params(
                        "layer",
                        "give layer, mask or both",
                    ));
                }
                let kind = format!("{}_physics", a.dim.key());
                let mut extra = CollisionBits {
                    collision_layer: None,
                    collision_mask: None,
                };
                if let Some(l) = &a.layer {
                    let bits = layer_bits(state, &kind, l, "layer")?;
                    steps.set(&a.node, "collision_layer", json!(bits));
                    extra.collision_layer = Some(bits);
                }
                if let Some(m) = &a.mask {
                    let bits = layer_bits(state, &kind, m, "mask")?;
                    steps.set(&a.node, "collision_mask", json!(bits));
                    extra.collision_mask = Some(bits);
                }
                Ok(extra)
            },
        ),
        recipe(
            meta(
                Toolset::Physics,
                "add_raycast",
                "Add a raycast",
                "Add a RayCast2D/3D with a target position and optional collision mask.",
                Mutating,
            ),
            |state, a: RaycastArgs, steps| {
                let ray = steps.create(&a.parent, &a.dim.class("RayCast"), &a.name);
                steps.set(&ray, "target_position", vector(a.dim, &a.target, "target")?);
                if let Some(m) = &a.mask {
                    let bits = layer_bits(state, &format!("{}_physics", a.dim.key()), m, "mask")?;
                    steps.set(&ray, "collision_mask", json!(bits));
                }
                steps.set_some(
                    &ray,
                    &[("collide_with_areas", a.collide_with_areas.map(|b| json!(b)))],
                );
                Ok(NoFields {})
            },
        ),
    ]
}
