//! Tile map reads from disk: a TileMapLayer's cells decoded from a saved .tscn's
//! `tile_map_data`, and a TileSet's sources and atlas tiles (`godot_mcp_formats::tilemap`).

use godot_mcp_formats::Literal as GValue;
use godot_mcp_formats::tilemap::{
    decode_tile_map_data, packed_bytes, parse_atlas_source, parse_tile_set,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::common::count_param;
use crate::tools::kit::scene_doc::{Doc, find_node, load_doc, load_scene};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::ReadOnly> {
    ToolMeta::read_only(Toolset::Tilemap, name, title, description)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "get_tilemap_cells",
                "Get tilemap cells",
                "Read the used cells of a TileMapLayer in a saved .tscn: coords, source id, \
                 atlas coords, alternative tile. Paged.",
            ),
            get_tilemap_cells,
        ),
        ToolDef::new(
            meta(
                "get_tileset",
                "Get a tile set",
                "Read a TileSet (.tres, or a TileMapLayer's in a .tscn): tile size and shape, \
                 layers, sources with their atlas texture, region size and tiles.",
            ),
            get_tileset,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CellsArgs {
    /// The .tscn.
    // `scene` too: the tile map's edit tools name the scene so (run 5, tiles-paint-floor).
    #[serde(alias = "scene")]
    path: ResPath,
    /// The TileMapLayer's node path from the root.
    node: String,
    /// First cell (default 0).
    #[serde(default)]
    offset: Option<u32>,
    /// Most cells (default 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10000))]
    limit: Option<u32>,
}

/// One used cell of a layer.
#[derive(Debug, Serialize, JsonSchema)]
struct CellOut {
    coords: [i32; 2],
    source_id: i32,
    atlas_coords: [i32; 2],
    alternative: i32,
}

/// A page of a layer's used cells.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CellsOut {
    path: String,
    node: String,
    tile_set: Option<Value>,
    cell_count: usize,
    returned: usize,
    next_offset: Option<usize>,
    cells: Vec<CellOut>,
}

async fn get_tilemap_cells(Call { state, args, .. }: Call<CellsArgs>) -> Out<CellsOut> {
    let limit = count_param("limit", args.limit, 1000, 10_000)?;
    let offset = args.offset.unwrap_or(0) as usize;
    let doc = Doc::Scene(load_scene(&state, &args.path)?);
    let Doc::Scene(scene) = &doc else {
        return Err(ToolError::internal("a scene document is not a scene"));
    };
    let node = find_node(scene, &args.path, &args.node)?;
    let is_layer = node.node_type.as_deref() == Some("TileMapLayer");
    if !is_layer && node.property("tile_map_data").is_none() {
        return Err(ToolError::invalid_params(
            "node",
            format!(
                "{} is a {}, not a TileMapLayer",
                node.path,
                node.node_type
                    .as_deref()
                    .unwrap_or("node of an instanced scene")
            ),
        ));
    }
    let cells = match node.property("tile_map_data") {
        None => Vec::new(),
        Some(p) => packed_bytes(&p.value)
            .and_then(|b| decode_tile_map_data(&b))
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::ParseError,
                    format!("{}:{}: {e}", args.path, p.line),
                )
                .param("node")
            })?,
    };
    let total = cells.len();
    let page: Vec<CellOut> = cells
        .iter()
        .skip(offset)
        .take(limit)
        .map(|c| CellOut {
            coords: c.coords,
            source_id: c.source_id,
            atlas_coords: c.atlas_coords,
            alternative: c.alternative,
        })
        .collect();
    let returned = page.len();
    Ok(CellsOut {
        path: args.path.to_string(),
        node: node.path.clone(),
        tile_set: node.property("tile_set").map(|p| doc.reference(&p.value)),
        cell_count: total,
        returned,
        next_offset: (offset + returned < total).then_some(offset + returned),
        cells: page,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TileSetArgs {
    /// A TileSet .tres, or a .tscn (then give `node`).
    path: ResPath,
    /// For a .tscn: the TileMapLayer whose tile_set to read.
    #[serde(default)]
    node: Option<String>,
}

/// The TileSet file a .tscn layer's `tile_set` names, when it is an ExtResource.
fn external_tile_set(doc: &Doc, args: &TileSetArgs) -> Result<Option<ResPath>, ToolError> {
    let (Doc::Scene(scene), Some(n)) = (doc, &args.node) else {
        return Ok(None);
    };
    let node = find_node(scene, &args.path, n)?;
    let Some(GValue::ExtResource(id)) = node.property("tile_set").map(|p| &p.value) else {
        return Ok(None);
    };
    let file = doc.ext(id).map(|e| e.path.as_str()).unwrap_or_default();
    ResPath::parse(file).map(Some).map_err(|e| {
        ToolError::new(
            ErrorCode::PathRefused,
            format!("{}'s tile set {file:?} is refused: {}", node.path, e.0),
        )
        .param("node")
    })
}

/// Most atlas tiles listed per source.
const MAX_TILES: usize = 2000;

/// One tile of an atlas source.
#[derive(Debug, Serialize, JsonSchema)]
struct AtlasTileOut {
    atlas_coords: [i64; 2],
    size_in_atlas: [i64; 2],
    alternatives: Vec<i64>,
}

/// One scene of a scenes-collection source.
#[derive(Debug, Serialize, JsonSchema)]
struct SourceScene {
    id: Option<i64>,
    scene: Value,
}

/// One source of a tile set; an atlas adds its texture and tiles, a scenes
/// collection its scenes.
#[derive(Debug, Serialize, JsonSchema)]
struct SourceOut {
    id: i64,
    resource: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    texture: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    texture_region_size: Option<[i64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    margins: Option<[i64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    separation: Option<[i64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tile_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tiles: Option<Vec<AtlasTileOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scenes: Option<Vec<SourceScene>>,
}

/// The scene and node a tile set was read through.
#[derive(Debug, Serialize, JsonSchema)]
struct TileSetFrom {
    path: String,
    node: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TileSetOut {
    path: String,
    from: Option<TileSetFrom>,
    tile_size: [i64; 2],
    tile_shape: &'static str,
    physics_layers: usize,
    terrain_sets: usize,
    navigation_layers: usize,
    occlusion_layers: usize,
    custom_data_layers: Vec<String>,
    sources: Vec<SourceOut>,
}

async fn get_tileset(Call { state, args, .. }: Call<TileSetArgs>) -> Out<TileSetOut> {
    let first = load_doc(&state, "path", &args.path, &["tscn", "tres"])?;
    // A layer whose tile set is saved in its own file: read that file (inside the
    // project, checked like any path argument).
    let (doc, file, node_arg) = match external_tile_set(&first, &args)? {
        Some(file) => {
            let doc = load_doc(&state, "node", &file, &["tres"])?;
            (doc, file, None)
        }
        None => (first, args.path.clone(), args.node.clone()),
    };
    let props = match (&doc, &node_arg) {
        (Doc::Resource(res), None) if res.resource_type == "TileSet" => res.properties.clone(),
        (Doc::Resource(res), _) => {
            return Err(ToolError::invalid_params(
                if args.node.is_some() { "node" } else { "path" },
                format!(
                    "{} is a {} resource{}",
                    args.path,
                    res.resource_type,
                    if args.node.is_some() {
                        "; `node` is for a .tscn"
                    } else {
                        ", not a TileSet"
                    }
                ),
            ));
        }
        (Doc::Scene(_), None) => {
            return Err(ToolError::invalid_params(
                "node",
                "for a .tscn, name the TileMapLayer node whose tile_set to read",
            ));
        }
        (Doc::Scene(scene), Some(n)) => {
            let node = find_node(scene, &args.path, n)?;
            match node.property("tile_set").map(|p| &p.value) {
                Some(GValue::SubResource(id)) => doc
                    .sub(id)
                    .map(|s| s.properties.clone())
                    .ok_or_else(|| ToolError::internal(format!("SubResource {id} is missing")))?,
                _ => {
                    return Err(
                        ToolError::not_found(format!("{} has no tile_set", node.path))
                            .param("node"),
                    );
                }
            }
        }
    };
    let ts = parse_tile_set(&props);
    let sources = ts
        .sources
        .iter()
        .map(|(id, r)| {
            let mut o = SourceOut {
                id: *id,
                resource: doc.reference(r),
                texture: None,
                texture_region_size: None,
                margins: None,
                separation: None,
                tile_count: None,
                tiles: None,
                scenes: None,
            };
            let sub = match r {
                GValue::SubResource(sid) => doc.sub(sid),
                _ => None,
            };
            match sub {
                Some(s) if s.resource_type == "TileSetAtlasSource" => {
                    let a = parse_atlas_source(&s.properties);
                    o.texture = Some(a.texture.as_ref().map_or(Value::Null, |t| doc.reference(t)));
                    o.texture_region_size = Some(a.texture_region_size);
                    o.margins = Some(a.margins);
                    o.separation = Some(a.separation);
                    o.tile_count = Some(a.tiles.len());
                    o.tiles = Some(
                        a.tiles
                            .iter()
                            .take(MAX_TILES)
                            .map(|t| AtlasTileOut {
                                atlas_coords: t.atlas_coords,
                                size_in_atlas: t.size_in_atlas,
                                alternatives: t.alternatives.clone(),
                            })
                            .collect(),
                    );
                }
                Some(s) if s.resource_type == "TileSetScenesCollectionSource" => {
                    o.scenes = Some(
                        s.properties
                            .iter()
                            .filter(|p| p.name.starts_with("scenes/") && p.name.ends_with("/scene"))
                            .map(|p| SourceScene {
                                id: p.name.split('/').nth(1).and_then(|i| i.parse::<i64>().ok()),
                                scene: doc.reference(&p.value),
                            })
                            .collect(),
                    );
                }
                _ => {}
            }
            o
        })
        .collect();
    Ok(TileSetOut {
        path: file.to_string(),
        from: args.node.as_ref().map(|n| TileSetFrom {
            path: args.path.to_string(),
            node: n.clone(),
        }),
        tile_size: ts.tile_size,
        tile_shape: ts.tile_shape,
        physics_layers: ts.physics_layers,
        terrain_sets: ts.terrain_sets,
        navigation_layers: ts.navigation_layers,
        occlusion_layers: ts.occlusion_layers,
        custom_data_layers: ts.custom_data_layers.clone(),
        sources,
    })
}
