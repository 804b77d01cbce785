//! A live read of a grid node's cells in the edited scene (a GridMap's, a
//! TileMapLayer's): the paged `cells.get` request and its reply, shared by the spatial
//! and tile map tools.

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::Deserialize;

/// Paged cells of a node in the edited scene.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CellsArgs {
    /// The node path.
    pub node: String,
    /// First cell (default 0).
    #[serde(default)]
    pub offset: Option<u32>,
    /// Most cells (default 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20000))]
    pub limit: Option<u32>,
}

pub(crate) fn cells_request(a: &CellsArgs) -> (cmd::Cells, Option<String>) {
    let p = cmd::Cells {
        node: a.node.clone(),
        offset: a.offset.unwrap_or(0) as usize,
        limit: a.limit.map_or(cmd::DEFAULT_PAGE_LIMIT, |l| l as usize),
    };
    (p, Some(a.node.clone()))
}

/// The add-on's `cells.get` reply (steps.rs `cells`): one page of rows, `columns`
/// naming their fields.
#[derive(Debug, Deserialize, serde::Serialize, JsonSchema)]
pub(crate) struct CellsReply {
    node: String,
    kind: String,
    total: u64,
    offset: u64,
    columns: Vec<String>,
    cells: Vec<Vec<i64>>,
    scene: String,
}
