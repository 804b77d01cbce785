//! Tile maps and tile sets as Godot 4 stores them in text.
//!
//! `TileMapLayer.tile_map_data` is a `PackedByteArray`: a little-endian `u16`
//! format version (0, the only one Godot 4.4 writes or reads), then 12 bytes per
//! cell: `i16` x, `i16` y, `u16` source id, `u16` atlas x, `u16` atlas y,
//! `u16` alternative tile (Godot's `TileMapLayer::set_tile_map_data_from_array`).
//! A `TileSet` lists its sources as `sources/<id> = SubResource(…)`; an atlas source
//! lists its tiles as `<x>:<y>/<alternative> = …` and `<x>:<y>/size_in_atlas`.

use serde::Serialize;

use crate::literal::Literal;
use crate::text::Property;

/// One used cell of a `TileMapLayer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub coords: [i32; 2],
    pub source_id: i32,
    pub atlas_coords: [i32; 2],
    pub alternative: i32,
}

/// Why `tile_map_data` could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TileDataError {
    /// Not a `PackedByteArray` of integers 0-255.
    NotBytes,
    /// A format version other than 0.
    Version(u16),
    /// The length is not 2 + 12 × cells.
    Length(usize),
}

impl std::fmt::Display for TileDataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotBytes => f.write_str("tile_map_data is not a PackedByteArray of bytes"),
            Self::Version(v) => write!(
                f,
                "tile_map_data format {v} is unknown (Godot 4.4 writes 0)"
            ),
            Self::Length(n) => write!(f, "tile_map_data has {n} bytes, not 2 + 12 per cell"),
        }
    }
}

/// The bytes of `PackedByteArray(1, 2, …)` or of its base64 form
/// `PackedByteArray("AAAB…")` (what Godot 4.3+ writes, with `format=4`).
pub fn packed_bytes(v: &Literal) -> Result<Vec<u8>, TileDataError> {
    match v {
        Literal::Constructor { name, args } if name == "PackedByteArray" => match args.as_slice() {
            [Literal::String(b64)] => {
                crate::variant::base64_decode(b64).ok_or(TileDataError::NotBytes)
            }
            _ => args
                .iter()
                .map(|a| {
                    a.as_int()
                        .and_then(|i| u8::try_from(i).ok())
                        .ok_or(TileDataError::NotBytes)
                })
                .collect(),
        },
        _ => Err(TileDataError::NotBytes),
    }
}

/// The cells of a scene node's `tile_map_data` (none when it has no such property).
pub fn node_cells(node: &crate::Node) -> Result<Vec<Cell>, TileDataError> {
    match node.property("tile_map_data") {
        Some(p) => decode_tile_map_data(&packed_bytes(&p.value)?),
        None => Ok(Vec::new()),
    }
}

/// Decode `tile_map_data` bytes into cells, in stored order. Empty data is no cells.
pub fn decode_tile_map_data(bytes: &[u8]) -> Result<Vec<Cell>, TileDataError> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    if bytes.len() < 2 {
        return Err(TileDataError::Length(bytes.len()));
    }
    let version = u16::from_le_bytes([bytes[0], bytes[1]]);
    if version != 0 {
        return Err(TileDataError::Version(version));
    }
    let body = &bytes[2..];
    if !body.len().is_multiple_of(12) {
        return Err(TileDataError::Length(bytes.len()));
    }
    let u = |c: &[u8], i: usize| u16::from_le_bytes([c[i], c[i + 1]]);
    Ok(body
        .chunks_exact(12)
        .map(|c| Cell {
            coords: [i32::from(u(c, 0) as i16), i32::from(u(c, 2) as i16)],
            source_id: i32::from(u(c, 4)),
            atlas_coords: [i32::from(u(c, 6)), i32::from(u(c, 8))],
            alternative: i32::from(u(c, 10)),
        })
        .collect())
}

/// `tile_map_data` bytes for `cells`, in the order given: format 0, then 12 bytes
/// per cell (what `TileMapLayer::get_tile_map_data_as_array` writes).
pub fn encode_tile_map_data(cells: &[Cell]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + 12 * cells.len());
    out.extend_from_slice(&0u16.to_le_bytes());
    for c in cells {
        for v in [
            c.coords[0],
            c.coords[1],
            c.source_id,
            c.atlas_coords[0],
            c.atlas_coords[1],
            c.alternative,
        ] {
            // i16 coordinates and u16 ids: the low 16 bits, as the engine stores them.
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
    }
    out
}

/// Bytes as a `PackedByteArray` in Godot's text: the base64 form Godot 4.3+ saves
/// (`PackedByteArray("…")`, in a `format=4` file) or the list form every 4.x reads.
pub fn packed_bytes_text(bytes: &[u8], base64: bool) -> String {
    use base64::Engine as _;
    if base64 {
        format!(
            "PackedByteArray(\"{}\")",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    } else {
        let items: Vec<String> = bytes.iter().map(u8::to_string).collect();
        format!("PackedByteArray({})", items.join(", "))
    }
}

/// Whether a `PackedByteArray` value is written in the base64 form.
pub fn is_base64_bytes(v: &Literal) -> bool {
    matches!(v, Literal::Constructor { name, args } if name == "PackedByteArray"
        && matches!(args.as_slice(), [Literal::String(_)]))
}

/// `cells` with `edits` applied as `TileMapLayer::set_cell` does: a cell already
/// there keeps its place and takes the new tile, a new one goes last, and source -1
/// erases.
pub fn set_cells(cells: &[Cell], edits: &[Cell]) -> Vec<Cell> {
    let mut out = cells.to_vec();
    for e in edits {
        let at = out.iter().position(|c| c.coords == e.coords);
        match (at, e.source_id) {
            (Some(i), -1) => {
                out.remove(i);
            }
            (None, -1) => {}
            (Some(i), _) => out[i] = *e,
            (None, _) => out.push(*e),
        }
    }
    out
}

/// The text of a `tile_map_data` value with `edits` applied ([`set_cells`]), in the
/// form the value was written in (base64 stays base64, a list stays a list): unchanged
/// cells keep their bytes and their order, so no edit gives the value's own text back.
pub fn set_cells_text(value: &Literal, edits: &[Cell]) -> Result<String, TileDataError> {
    let before = packed_bytes(value)?;
    let cells = set_cells(&decode_tile_map_data(&before)?, edits);
    // Empty data (no header) stays empty while no cell is set.
    let bytes = if before.is_empty() && cells.is_empty() {
        Vec::new()
    } else {
        encode_tile_map_data(&cells)
    };
    Ok(packed_bytes_text(&bytes, is_base64_bytes(value)))
}

/// A `TileSet`'s shape and its sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TileSetInfo {
    /// Cell size in pixels (Godot's default 16×16 when not written).
    pub tile_size: [i64; 2],
    /// `square`, `isometric`, `half_offset_square` or `hexagon`.
    pub tile_shape: &'static str,
    pub physics_layers: usize,
    pub terrain_sets: usize,
    pub navigation_layers: usize,
    pub occlusion_layers: usize,
    /// Custom data layer names, by index.
    pub custom_data_layers: Vec<String>,
    /// `(source id, the resource reference)`, by id.
    /// (The parsed text: no JSON form; the value model is `variant::Value`.)
    #[serde(skip)]
    pub sources: Vec<(i64, Literal)>,
}

fn vec2i(v: Option<&Literal>, default: [i64; 2]) -> [i64; 2] {
    match v {
        Some(Literal::Constructor { name, args }) if name == "Vector2i" && args.len() == 2 => {
            [args[0].as_int(), args[1].as_int()].map(Option::unwrap_or_default)
        }
        _ => default,
    }
}

fn layer_count(props: &[Property], prefix: &str) -> usize {
    props
        .iter()
        .filter_map(|p| p.name.strip_prefix(prefix))
        .filter_map(|rest| rest.split('/').next()?.parse::<usize>().ok())
        .map(|i| i + 1)
        .max()
        .unwrap_or(0)
}

/// Decode a `TileSet` from its properties.
pub fn parse_tile_set(props: &[Property]) -> TileSetInfo {
    let get = |n: &str| props.iter().find(|p| p.name == n).map(|p| &p.value);
    let mut sources: Vec<(i64, Literal)> = props
        .iter()
        .filter_map(|p| {
            Some((
                p.name.strip_prefix("sources/")?.parse().ok()?,
                p.value.clone(),
            ))
        })
        .collect();
    sources.sort_by_key(|(id, _)| *id);
    let n_custom = layer_count(props, "custom_data_layer_");
    let custom_data_layers = (0..n_custom)
        .map(|i| {
            get(&format!("custom_data_layer_{i}/name"))
                .and_then(Literal::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    TileSetInfo {
        tile_size: vec2i(get("tile_size"), [16, 16]),
        tile_shape: match get("tile_shape").and_then(Literal::as_int).unwrap_or(0) {
            0 => "square",
            1 => "isometric",
            2 => "half_offset_square",
            3 => "hexagon",
            _ => "unknown",
        },
        physics_layers: layer_count(props, "physics_layer_"),
        terrain_sets: layer_count(props, "terrain_set_"),
        navigation_layers: layer_count(props, "navigation_layer_"),
        occlusion_layers: layer_count(props, "occlusion_layer_"),
        custom_data_layers,
        sources,
    }
}

/// A `TileSetAtlasSource`, decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtlasSource {
    /// The texture reference, if any.
    /// (The parsed text: no JSON form; the value model is `variant::Value`.)
    #[serde(skip)]
    pub texture: Option<Literal>,
    /// Godot's default 16×16 when not written.
    pub texture_region_size: [i64; 2],
    pub margins: [i64; 2],
    pub separation: [i64; 2],
    pub tiles: Vec<AtlasTile>,
}

/// One tile of an atlas source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtlasTile {
    pub atlas_coords: [i64; 2],
    /// In atlas cells (default 1×1).
    pub size_in_atlas: [i64; 2],
    /// Alternative ids, 0 (the base tile) first.
    pub alternatives: Vec<i64>,
}

/// Decode a `TileSetAtlasSource` from its properties.
pub fn parse_atlas_source(props: &[Property]) -> AtlasSource {
    let get = |n: &str| props.iter().find(|p| p.name == n).map(|p| &p.value);
    let mut tiles: Vec<AtlasTile> = Vec::new();
    for p in props {
        let Some((coords, field)) = p.name.split_once('/') else {
            continue;
        };
        let Some((x, y)) = coords.split_once(':') else {
            continue;
        };
        let (Ok(x), Ok(y)) = (x.parse::<i64>(), y.parse::<i64>()) else {
            continue;
        };
        let pos = match tiles.iter().position(|t| t.atlas_coords == [x, y]) {
            Some(i) => i,
            None => {
                tiles.push(AtlasTile {
                    atlas_coords: [x, y],
                    size_in_atlas: [1, 1],
                    alternatives: Vec::new(),
                });
                tiles.len() - 1
            }
        };
        let tile = &mut tiles[pos];
        if field == "size_in_atlas" {
            tile.size_in_atlas = vec2i(Some(&p.value), [1, 1]);
        } else if let Ok(alt) = field.parse::<i64>()
            && !tile.alternatives.contains(&alt)
        {
            tile.alternatives.push(alt);
        }
    }
    AtlasSource {
        texture: get("texture").cloned(),
        texture_region_size: vec2i(get("texture_region_size"), [16, 16]),
        margins: vec2i(get("margins"), [0, 0]),
        separation: vec2i(get("separation"), [0, 0]),
        tiles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEVEL: &str = include_str!("../../../tests/fixtures/readfam/level.tscn");

    #[test]
    fn decodes_the_cells_godot_wrote() {
        let scene = crate::parse_scene(LEVEL).unwrap();
        let cells = node_cells(scene.node("Ground").unwrap()).unwrap();
        let cell = |coords, source_id, atlas_coords, alternative| Cell {
            coords,
            source_id,
            atlas_coords,
            alternative,
        };
        // make.gd's set_cell calls, in the order Godot stored them.
        assert_eq!(
            cells,
            vec![
                cell([0, 0], 0, [0, 0], 0),
                cell([-3, 7], 0, [1, 0], 1),
                cell([300, -200], 5, [0, 0], 0),
                cell([2, 2], 0, [2, 3], 0),
            ]
        );
    }

    proptest::proptest! {
        /// Whatever the bytes, decoding is a result, never a panic.
        #[test]
        fn any_bytes_decode_or_are_refused(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = decode_tile_map_data(&bytes);
        }
    }

    #[test]
    fn refuses_what_it_cannot_decode() {
        assert_eq!(
            decode_tile_map_data(&[1, 0]),
            Err(TileDataError::Version(1))
        );
        assert_eq!(
            decode_tile_map_data(&[0, 0, 1]),
            Err(TileDataError::Length(3))
        );
        assert_eq!(decode_tile_map_data(&[]), Ok(vec![]));
        let v = crate::parse_value("PackedByteArray(0, 256)").unwrap();
        assert_eq!(packed_bytes(&v), Err(TileDataError::NotBytes));
    }

    #[test]
    fn reads_the_tile_set_and_its_atlases() {
        let res =
            crate::parse_resource(include_str!("../../../tests/fixtures/readfam/tileset.tres"))
                .unwrap();
        let ts = parse_tile_set(&res.properties);
        assert_eq!(ts.tile_size, [16, 16]);
        assert_eq!(ts.tile_shape, "square");
        assert_eq!(
            ts.sources.iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![0, 5]
        );
        let a = parse_atlas_source(&res.sub_resources[0].properties);
        assert_eq!(a.texture_region_size, [16, 16]);
        let coords: Vec<_> = a.tiles.iter().map(|t| t.atlas_coords).collect();
        assert_eq!(coords, vec![[0, 0], [1, 0], [2, 3]]);
        assert_eq!(a.tiles[1].alternatives, vec![0, 1]);
        let b = parse_atlas_source(&res.sub_resources[1].properties);
        assert_eq!(b.texture_region_size, [32, 32]);
    }
}
