//! The shapes of a tool on the running game: its metadata (`meta`, a toolset other than
//! `runtime` with `in_set`) and the arguments of one that takes only the session.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::rules::class::{self, Class};
use crate::rules::{EffectKind, Toolset};
use crate::tools::ToolMeta;

pub(crate) fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    effect: Option<EffectKind>,
) -> ToolMeta<class::Runtime> {
    ToolMeta::runtime(Toolset::Runtime, name, title, description, effect)
}

pub(crate) fn in_set<C: Class>(mut m: ToolMeta<C>, toolset: Toolset) -> ToolMeta<C> {
    m.toolset = toolset;
    m
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    pub(crate) session_id: Option<String>,
}
