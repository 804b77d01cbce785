//! What the runtime tools share: the limit of a capture and the empty arguments. Their
//! metadata (`meta`), the limit of a probe request and how a game is launched are the
//! kit's (`tools/kit/game/`), shared with other domains.

use schemars::JsonSchema;
use serde::Deserialize;

/// Most output returned per stream.
pub(super) const MAX_OUTPUT: usize = 256 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct NoArgs {}
