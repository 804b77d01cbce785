//! Physics parameters: what a `fit_shape` step fits a collision shape to.

use serde::{Deserialize, Serialize};

/// The collision shape `fit_shape` sizes to a Sprite2D's rect or a mesh's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FitKind {
    Rectangle,
    Circle,
    Capsule,
    Box,
    Sphere,
}
