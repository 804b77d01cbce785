//! TileMapLayer cell edits in the live editor: set, fill a rectangle, clear, read the used
//! cells. Each edit is one `scene.steps` recipe whose undo restores the previous cells
//! (the add-on records them before the first change).

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::tools::kit::cells::{CellsReply, cells_request};
use crate::tools::kit::editor::editor_read;
use crate::tools::kit::editor::{in_scene, in_scene_args};
use crate::tools::kit::steps::{LayerRef, Steps, StepsEffect, StepsReply, layer_bits, meta, plan};
use crate::tools::{NoFields, Plan, ToolDef};

/// Most cells one edit may touch.
const MAX_CELLS: i64 = 100_000;

use cmd::{Terrain as TerrainArg, TileCell as TileCellArg};

/// The bits set_tileset_physics_layer gives the new physics layer.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PhysicsLayerBits {
    collision_layer: i64,
    collision_mask: i64,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetArgs {
    /// The TileMapLayer node path.
    node: String,
    #[schemars(length(min = 1, max = 100000))]
    cells: Vec<TileCellArg>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FillArgs {
    /// The TileMapLayer node path.
    node: String,
    /// One corner [x,y].
    from: [i32; 2],
    /// The opposite corner [x,y] (inclusive).
    to: [i32; 2],
    /// TileSet source id.
    source: i32,
    #[serde(default)]
    atlas: [i32; 2],
    #[serde(default)]
    alternative: i32,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClearArgs {
    /// The TileMapLayer node path.
    node: String,
    /// [[x,y],…].
    #[schemars(length(min = 1, max = 100000))]
    coords: Vec<[i32; 2]>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AtlasArgs {
    /// The TileMapLayer node path (its TileSet is made if it has none).
    node: String,
    /// The tile sheet image.
    texture: ResPath,
    /// Tile size in pixels [w,h].
    tile_size: [i32; 2],
    /// Source id (default: the next free one).
    #[serde(default)]
    source_id: Option<i32>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PhysicsLayerArgs {
    /// The TileMapLayer node path.
    node: String,
    /// Layers the tiles are on (numbers 1-32 or 2d_physics names).
    layer: Vec<LayerRef>,
    /// Layers they detect (default: layer 1, as Godot makes a new physics layer).
    #[serde(default)]
    mask: Option<Vec<LayerRef>>,
}
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TileCollisionArgs {
    /// The TileMapLayer node path.
    node: String,
    /// The tile's atlas coords [x,y].
    atlas: [i32; 2],
    /// Its atlas source (default 0).
    #[serde(default)]
    #[schemars(range(min = 0))]
    source_id: i32,
    /// The TileSet's physics layer (default 0).
    #[serde(default)]
    #[schemars(range(min = 0))]
    physics_layer: i32,
    /// [x,y] points, (0,0) the tile's centre as Godot stores them; omitted: the whole tile.
    #[serde(default)]
    #[schemars(length(min = 3, max = 1000))]
    polygon: Option<Vec<[f64; 2]>>,
}
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TerrainMode {
    CornersAndSides,
    Corners,
    Sides,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TerrainSetArgs {
    /// The TileMapLayer node path.
    node: String,
    mode: TerrainMode,
    #[schemars(length(max = 64))]
    terrains: Vec<TerrainArg>,
}
}

/// Layer bits as the wire's 32-bit mask.
fn bits32(param: &str, bits: i64) -> Result<u32, ToolError> {
    u32::try_from(bits)
        .map_err(|_| ToolError::invalid_params(param, format!("{bits} is not a 32-bit mask")))
}

fn cells_plan(
    state: std::sync::Arc<crate::state::AppState>,
    tool: &str,
    node: &str,
    cells: Vec<cmd::TileCell>,
) -> Result<Plan<StepsEffect<NoFields>, StepsReply>, ToolError> {
    let mut steps = Steps::default();
    steps.step(cmd::Step::TileCells {
        node: node.into(),
        cells,
    });
    plan(state, tool, steps, NoFields {})
}

pub(crate) fn tools() -> Vec<ToolDef> {
    let mut all = cell_tools();
    all.extend(tileset_tools());
    all
}

/// TileMapLayer cells: set, fill, clear.
fn cell_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Destructive, Mutating};
    vec![
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "set_tile_cells",
                "Set tile cells",
                "Set TileMapLayer cells (source, atlas coords, alternative; source -1 erases) in \
                 the live editor; one undo action restores the previous cells.",
                Mutating,
            ),
            |state, a: SetArgs| {
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    cells_plan(state, "set_tile_cells", &a.node, a.cells)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "fill_tile_rect",
                "Fill a tile rectangle",
                "Fill a rectangle of TileMapLayer cells (corners inclusive) with one tile, as \
                 one undo action.",
                Mutating,
            ),
            |state, a: FillArgs| {
                let (x0, x1) = (a.from[0].min(a.to[0]), a.from[0].max(a.to[0]));
                let (y0, y1) = (a.from[1].min(a.to[1]), a.from[1].max(a.to[1]));
                let count =
                    (i64::from(x1) - i64::from(x0) + 1) * (i64::from(y1) - i64::from(y0) + 1);
                if count > MAX_CELLS {
                    return Err(ToolError::invalid_params(
                        "to",
                        format!("{count} cells; one fill takes at most {MAX_CELLS}"),
                    ));
                }
                let cells = (y0..=y1)
                    .flat_map(|y| (x0..=x1).map(move |x| [x, y]))
                    .map(|coords| cmd::TileCell {
                        coords,
                        source: a.source,
                        atlas: a.atlas,
                        alternative: a.alternative,
                    })
                    .collect();
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    cells_plan(state, "fill_tile_rect", &a.node, cells)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "clear_tile_cells",
                "Clear tile cells",
                "Erase TileMapLayer cells at the given coordinates in the live editor (one undo \
                 action).",
                Destructive,
            ),
            |state, a: ClearArgs| {
                let cells = a
                    .coords
                    .iter()
                    .map(|&coords| cmd::TileCell {
                        coords,
                        source: -1,
                        atlas: [0, 0],
                        alternative: 0,
                    })
                    .collect();
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    cells_plan(state, "clear_tile_cells", &a.node, cells)
                })
            },
        ),
    ]
}

/// The TileMapLayer's built-in TileSet (atlas sources, physics layers, terrain sets), and
/// the live read of its cells.
fn tileset_tools() -> Vec<ToolDef> {
    use crate::rules::class::{Mutating, ReadOnly};
    vec![
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "add_tileset_atlas_source",
                "Add a TileSet atlas source",
                "Add a texture cut into tiles of a size (every tile created) as an atlas source \
                 of a TileMapLayer's built-in TileSet, making the TileSet if needed.",
                Mutating,
            ),
            |state, a: AtlasArgs| {
                let mut steps = Steps::default();
                steps.step(cmd::Step::TilesetAtlas {
                    node: a.node,
                    texture: a.texture.to_string(),
                    tile_size: a.tile_size,
                    source_id: a.source_id,
                });
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    plan(state, "add_tileset_atlas_source", steps, NoFields {})
                })
            },
        ),
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "set_tileset_physics_layer",
                "Add a TileSet physics layer",
                "Add a physics layer (collision layer and mask by number or 2d_physics name) to \
                 a TileMapLayer's built-in TileSet.",
                Mutating,
            ),
            |state, a: PhysicsLayerArgs| {
                let layer = layer_bits(&state, "2d_physics", &a.layer, "layer")?;
                let mask = match &a.mask {
                    Some(m) => layer_bits(&state, "2d_physics", m, "mask")?,
                    None => 1,
                };
                let mut steps = Steps::default();
                steps.step(cmd::Step::TilesetPhysicsLayer {
                    node: a.node,
                    collision_layer: bits32("layer", layer)?,
                    collision_mask: bits32("mask", mask)?,
                });
                let extra = PhysicsLayerBits {
                    collision_layer: layer,
                    collision_mask: mask,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    plan(state, "set_tileset_physics_layer", steps, extra)
                })
            },
        ),
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "set_tile_collision",
                "Set a tile's collision polygon",
                "Give a tile of a TileMapLayer's built-in TileSet one collision polygon on a \
                 physics layer (the whole tile by default); one undo action.",
                Mutating,
            ),
            |state, a: TileCollisionArgs| {
                let mut steps = Steps::default();
                steps.step(cmd::Step::TileCollision {
                    node: a.node,
                    source_id: a.source_id,
                    atlas: a.atlas,
                    physics_layer: a.physics_layer,
                    polygon: a.polygon.unwrap_or_default(),
                });
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    plan(state, "set_tile_collision", steps, NoFields {})
                })
            },
        ),
        ToolDef::planned(
            meta(
                Toolset::Tilemap,
                "set_tileset_terrain_set",
                "Add a TileSet terrain set",
                "Add a terrain set (corners_and_sides, corners or sides) with named, coloured \
                 terrains to a TileMapLayer's built-in TileSet.",
                Mutating,
            ),
            |state, a: TerrainSetArgs| {
                let mode = match a.mode {
                    TerrainMode::CornersAndSides => 0,
                    TerrainMode::Corners => 1,
                    TerrainMode::Sides => 2,
                };
                let mut steps = Steps::default();
                steps.step(cmd::Step::TilesetTerrainSet {
                    node: a.node,
                    mode,
                    terrains: a.terrains,
                });
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    plan(state, "set_tileset_terrain_set", steps, NoFields {})
                })
            },
        ),
        editor_read::<_, _, CellsReply>(
            meta(
                Toolset::Tilemap,
                "get_used_tile_cells",
                "Get used tile cells (live)",
                "Read a TileMapLayer's used cells in the live editor: [x,y,source,atlas_x,\
                 atlas_y,alternative] rows, paged.",
                ReadOnly,
            ),
            cells_request,
        ),
    ]
}
