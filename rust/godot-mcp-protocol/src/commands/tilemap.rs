//! Tile map and grid map parameters: cells, terrains, cell reads, MeshLibrary items.

use serde::{Deserialize, Serialize};

use super::default_page_limit;

/// One cell: source -1 erases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct TileCell {
    pub coords: [i32; 2],
    /// TileSet source id.
    pub source: i32,
    /// Atlas coords of the tile (default `[0,0]`).
    #[serde(default)]
    pub atlas: [i32; 2],
    /// Alternative tile (default 0).
    #[serde(default)]
    pub alternative: i32,
}

/// One GridMap cell: item -1 erases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GridCell {
    pub coords: [i32; 3],
    /// MeshLibrary item id.
    pub item: i32,
    /// Orthogonal orientation index 0-23.
    #[serde(default)]
    pub orientation: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Terrain {
    pub name: String,
    /// `[r,g,b,a]`, 0-1.
    pub color: [f64; 4],
}

/// `node.cells`: a page of a TileMapLayer's or GridMap's used cells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cells {
    pub node: String,
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "default_page_limit")]
    pub limit: usize,
}

/// `mesh_library.items`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshLibraryItems {
    pub path: String,
}
