//! Physics in `scene.steps`: a collision shape fitted to a node's bounds, in the
//! coordinates of the shape node's parent.

use super::ctx::failed;
use super::plan::Prepared;
use godot::classes::{ClassDb, Node, Node3D, Resource, Sprite2D, VisualInstance3D};
use godot::prelude::*;
use godot_mcp_editor_core::command::FitKind;
use godot_mcp_protocol::BridgeError;

pub(crate) fn new_shape(
    class: &str,
    props: &[(&str, Variant)],
) -> Result<Gd<Resource>, BridgeError> {
    let mut r = ClassDb::singleton()
        .instantiate(class)
        .try_to::<Gd<Resource>>()
        .map_err(|_| failed(format!("could not create a {class}")))?;
    for (k, v) in props {
        r.set(*k, v);
    }
    Ok(r)
}

/// `n`'s transform in the scene: a node in the tree answers it; a node the action
/// creates is composed from where it will go (its parent's, times its own). A plain Node
/// in between (no transform) passes its parent's through, as Godot does.
pub(crate) fn global_2d(p: &Prepared, n: &Gd<Node>) -> Transform2D {
    if n.is_inside_tree() {
        return match n.clone().try_cast::<godot::classes::CanvasItem>() {
            Ok(c) => c.get_global_transform(),
            Err(_) => Transform2D::IDENTITY,
        };
    }
    let up = p
        .parent(n)
        .map_or(Transform2D::IDENTITY, |q| global_2d(p, &q));
    match n.clone().try_cast::<godot::classes::CanvasItem>() {
        Ok(c) => up * c.get_transform(),
        Err(_) => up,
    }
}

pub(crate) fn global_3d(p: &Prepared, n: &Gd<Node>) -> Transform3D {
    if n.is_inside_tree() {
        return match n.clone().try_cast::<Node3D>() {
            Ok(s) => s.get_global_transform(),
            Err(_) => Transform3D::IDENTITY,
        };
    }
    let up = p
        .parent(n)
        .map_or(Transform3D::IDENTITY, |q| global_3d(p, &q));
    match n.clone().try_cast::<Node3D>() {
        Ok(s) => up * s.get_transform(),
        Err(_) => up,
    }
}

/// A new shape sized to `target`'s bounds, and the position that centres it there, in
/// the coordinates of `shape_node`'s parent (rotation is not followed: the shape is
/// axis-aligned in its parent).
pub(crate) fn fit(
    p: &Prepared,
    shape_node: &Gd<Node>,
    target: &Gd<Node>,
    kind: FitKind,
) -> Result<(Gd<Resource>, Variant), BridgeError> {
    let parent = p
        .parent(shape_node)
        .ok_or_else(|| failed("the collision shape has no parent"))?;
    if shape_node.is_class("CollisionShape2D") {
        let sprite = target
            .clone()
            .try_cast::<Sprite2D>()
            .map_err(|_| failed(format!("{} is not a Sprite2D to fit to", target.get_name())))?;
        let rect = sprite.get_rect();
        if rect.size.x <= 0.0 || rect.size.y <= 0.0 {
            return Err(failed(format!(
                "{} has no texture: nothing to size the shape to",
                target.get_name()
            )));
        }
        let xf = global_2d(p, &parent).affine_inverse() * global_2d(p, target);
        let scale = xf.scale();
        let size = Vector2::new(rect.size.x * scale.x, rect.size.y * scale.y).abs();
        let centre = xf * rect.center();
        let res = match kind {
            FitKind::Rectangle => new_shape("RectangleShape2D", &[("size", size.to_variant())])?,
            FitKind::Circle => new_shape(
                "CircleShape2D",
                &[("radius", (size.x.max(size.y) / 2.0).to_variant())],
            )?,
            FitKind::Capsule => new_shape(
                "CapsuleShape2D",
                &[
                    ("radius", (size.x / 2.0).to_variant()),
                    ("height", size.y.to_variant()),
                ],
            )?,
            _ => return Err(failed("a 2D shape is rectangle, circle or capsule")),
        };
        Ok((res, centre.to_variant()))
    } else if shape_node.is_class("CollisionShape3D") {
        let vi = target.clone().try_cast::<VisualInstance3D>().map_err(|_| {
            failed(format!(
                "{} is not a MeshInstance3D (VisualInstance3D) to fit to",
                target.get_name()
            ))
        })?;
        let aabb = vi.get_aabb();
        let xf = global_3d(p, &parent).affine_inverse() * global_3d(p, target);
        let s = xf.basis.get_scale();
        let size = Vector3::new(aabb.size.x * s.x, aabb.size.y * s.y, aabb.size.z * s.z).abs();
        if size.x <= 0.0 && size.y <= 0.0 && size.z <= 0.0 {
            return Err(failed(format!(
                "{} has no mesh: nothing to size the shape to",
                target.get_name()
            )));
        }
        let centre = xf * aabb.center();
        let res = match kind {
            FitKind::Box => new_shape("BoxShape3D", &[("size", size.to_variant())])?,
            FitKind::Sphere => new_shape(
                "SphereShape3D",
                &[(
                    "radius",
                    (size.x.max(size.y).max(size.z) / 2.0).to_variant(),
                )],
            )?,
            FitKind::Capsule => new_shape(
                "CapsuleShape3D",
                &[
                    ("radius", (size.x.max(size.z) / 2.0).to_variant()),
                    ("height", size.y.to_variant()),
                ],
            )?,
            _ => return Err(failed("a 3D shape is box, sphere or capsule")),
        };
        Ok((res, centre.to_variant()))
    } else {
        Err(failed(format!(
            "{} ({}) is not a CollisionShape2D or CollisionShape3D",
            shape_node.get_name(),
            shape_node.get_class()
        )))
    }
}
