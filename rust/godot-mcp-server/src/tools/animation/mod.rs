//! Animation: reads of saved libraries from disk ([`read`]), live edits of an
//! AnimationPlayer's animations, tracks and keys in the editor ([`edit`]) and of an
//! AnimationTree's graphs ([`tree`]); here, the metadata and the wire integer both
//! editing files use.

pub(crate) mod edit;
pub(crate) mod read;
pub(crate) mod tree;

use crate::error::ToolError;
use crate::rules::Toolset;
use crate::rules::class::Class;
use crate::tools::ToolMeta;
use crate::tools::kit::editor::editor_meta;

/// A track index or port as the wire's `int`.
pub(super) fn int(param: &str, v: u32) -> Result<i32, ToolError> {
    i32::try_from(v)
        .map_err(|_| ToolError::invalid_params(param, format!("{param} {v} is too large")))
}

/// An animation tool's metadata (the Animation toolset).
pub(super) fn meta<C: Class>(
    class: C,
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<C> {
    editor_meta(Toolset::Animation, class, name, title, description)
}
