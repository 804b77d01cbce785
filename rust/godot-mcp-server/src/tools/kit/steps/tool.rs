//! The definition of a recipe tool (physics, navigation, particles, spatial): the tool
//! builds the steps of one call, and its plan is one `scene.steps` request named after
//! the tool (`kit::steps::plan`).

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::ToolError;
use crate::rules::class::Plans;
use crate::state::AppState;
use crate::tools::kit::steps::{Steps, plan};
use crate::tools::{ToolDef, ToolMeta};

/// A recipe tool: `build` adds the steps of a call with arguments `A` and answers what
/// the effect reports besides them (`X`).
pub(crate) fn recipe<A, X>(
    meta: ToolMeta<impl Plans>,
    build: impl Fn(&AppState, A, &mut Steps) -> Result<X, ToolError> + Send + Sync + 'static,
) -> ToolDef
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    X: Serialize + JsonSchema + 'static,
{
    let tool = meta.name;
    ToolDef::planned(meta, move |state, args: A| {
        let mut steps = Steps::default();
        let extra = build(&state, args, &mut steps)?;
        plan(state, tool, steps, extra)
    })
}
