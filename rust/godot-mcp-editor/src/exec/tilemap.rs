//! Tile maps and grid maps in `scene.steps`: a TileMapLayer's TileSet as the earlier
//! steps leave it, tile and grid cell edits (undone by restoring the layer's whole stored
//! cells), the TileSet steps (an atlas source, a physics layer, a terrain set), and the two
//! reads the tile-map tools need (used cells, a MeshLibrary's items).

use super::ctx::{Res, err, failed, find, misrouted, obj, scene_path, scene_root};
use super::plan::{Op, Prepared};
use godot::classes::{
    MeshLibrary, Node, ResourceLoader, Texture2D, TileMapLayer, TileSet, TileSetAtlasSource,
};
use godot::prelude::*;
use godot_mcp_editor_core::command::{Command, GridCell, NodeRef, Terrain, TileCell};
use godot_mcp_protocol::commands as wire;
use godot_mcp_protocol::{BridgeError, ErrorCode};
use serde_json::{Value as Json, json};

impl Prepared {
    /// How many `kind` layers earlier steps of this action add to `ts` (not there yet).
    pub(crate) fn added(&mut self, ts: &Gd<TileSet>, kind: &'static str) -> i32 {
        let n = self.layers.entry((ts.instance_id(), kind)).or_insert(0);
        *n += 1;
        *n - 1
    }
}

/// The built-in TileSet of the TileMapLayer `n` as the earlier steps leave it, and whether
/// this action made it; with `create`, a layer without one gets a new TileSet of that
/// tile size. A TileSet saved in its own file is refused: saving the scene would not save
/// the edit, so it could not be reported as one.
pub(crate) fn tile_set_of(
    p: &mut Prepared,
    n: &Gd<Node>,
    is_new: bool,
    create: Option<Vector2i>,
) -> Result<(Gd<TileSet>, bool), BridgeError> {
    if !n.is_class("TileMapLayer") {
        return Err(failed(format!(
            "{} ({}) is not a TileMapLayer",
            n.get_name(),
            n.get_class()
        )));
    }
    let current = p
        .props
        .get(&(n.instance_id(), "tile_set".to_string()))
        .cloned()
        .unwrap_or_else(|| n.get("tile_set"));
    if let Ok(ts) = current.try_to::<Gd<TileSet>>() {
        let fresh = p.fresh.contains(&ts.instance_id());
        let path = ts.get_path().to_string();
        if !fresh && !path.is_empty() && !path.contains("::") {
            return Err(failed(format!(
                "{}'s TileSet is saved in its own file ({path}): edit that resource, not the \
                 scene",
                n.get_name()
            )));
        }
        return Ok((ts, fresh));
    }
    let Some(size) = create else {
        return Err(failed(format!(
            "{} has no TileSet: add an atlas source first",
            n.get_name()
        )));
    };
    let mut ts = TileSet::new_gd();
    ts.set_tile_size(size);
    p.fresh.insert(ts.instance_id());
    p.set(n, is_new, "tile_set", ts.to_variant());
    Ok((ts, true))
}

pub(crate) fn tile_cells(
    p: &mut Prepared,
    n: Gd<Node>,
    is_new: bool,
    cells: &[TileCell],
) -> Result<(), BridgeError> {
    let Ok(mut layer) = n.clone().try_cast::<TileMapLayer>() else {
        return Err(failed(format!(
            "{} ({}) is not a TileMapLayer",
            n.get_name(),
            n.get_class()
        )));
    };
    let tile_set = layer.get_tile_set();
    for c in cells {
        if c.source < 0 {
            continue;
        }
        let at = Vector2i::new(c.atlas[0], c.atlas[1]);
        let ok = tile_set
            .as_ref()
            .and_then(|ts| ts.get_source(c.source))
            .is_some_and(|s| s.has_tile(at) && s.has_alternative_tile(at, c.alternative));
        if !ok {
            return Err(failed(format!(
                "the layer's TileSet has no tile source {} atlas {:?} alternative {}",
                c.source, c.atlas, c.alternative
            )));
        }
    }
    if !is_new && p.restored.insert(n.instance_id()) {
        // Added before the writes, so (undo running backwards) after undoing them: empty
        // the layer, let it drop the erased cells from its map (they linger there until
        // its next update), then load the old cells, which so keep their saved order.
        p.ops.push(Op::Restore {
            target: obj(&layer),
            property: "tile_map_data",
            old: layer.get("tile_map_data"),
        });
        p.ops.push(Op::UndoCall {
            target: obj(&layer),
            method: "update_internals",
            args: vec![],
        });
        p.ops.push(Op::UndoCall {
            target: obj(&layer),
            method: "set",
            args: vec![
                StringName::from("tile_map_data").to_variant(),
                PackedByteArray::new().to_variant(),
            ],
        });
    }
    for c in cells {
        let coords = Vector2i::new(c.coords[0], c.coords[1]);
        let atlas = if c.source < 0 {
            Vector2i::new(-1, -1)
        } else {
            Vector2i::new(c.atlas[0], c.atlas[1])
        };
        let alt = if c.source < 0 { -1 } else { c.alternative };
        if is_new {
            layer
                .set_cell_ex(coords)
                .source_id(c.source)
                .atlas_coords(atlas)
                .alternative_tile(alt)
                .done();
        } else {
            p.ops.push(Op::Do {
                target: obj(&layer),
                method: "set_cell",
                args: vec![
                    coords.to_variant(),
                    c.source.to_variant(),
                    atlas.to_variant(),
                    alt.to_variant(),
                ],
            });
        }
    }
    Ok(())
}

pub(crate) fn grid_cells(
    p: &mut Prepared,
    n: Gd<Node>,
    is_new: bool,
    cells: &[GridCell],
) -> Result<(), BridgeError> {
    if !n.is_class("GridMap") {
        return Err(failed(format!(
            "{} ({}) is not a GridMap",
            n.get_name(),
            n.get_class()
        )));
    }
    let mut grid = n.clone();
    let items: Vec<i32> = grid
        .get("mesh_library")
        .try_to::<Gd<MeshLibrary>>()
        .map(|l| l.get_item_list().as_slice().to_vec())
        .unwrap_or_default();
    for c in cells {
        if c.item >= 0 && !items.contains(&c.item) {
            return Err(failed(format!(
                "the GridMap's MeshLibrary has no item {} (items: {items:?})",
                c.item
            )));
        }
        if !(0..24).contains(&c.orientation) {
            return Err(failed("orientation is 0..=23 (an orthogonal basis index)"));
        }
    }
    if !is_new && p.restored.insert(n.instance_id()) {
        p.ops.push(Op::Restore {
            target: obj(&grid),
            property: "data",
            old: grid.get("data"),
        });
    }
    for c in cells {
        let pos = Vector3i::new(c.coords[0], c.coords[1], c.coords[2]);
        let args = vec![
            pos.to_variant(),
            c.item.to_variant(),
            c.orientation.to_variant(),
        ];
        if is_new {
            grid.call("set_cell_item", &args);
        } else {
            p.ops.push(Op::Do {
                target: obj(&grid),
                method: "set_cell_item",
                args,
            });
        }
    }
    Ok(())
}

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::Cells(wire::Cells {
            node,
            offset,
            limit,
        }) => cells(&node, offset, limit),
        Command::MeshLibraryItems(wire::MeshLibraryItems { path }) => mesh_library_items(&path),
        _ => Err(misrouted("tile map")),
    }
}

/// The used cells of a TileMapLayer or GridMap, in a stable order (y, then x, then z).
fn cells(node: &str, offset: usize, limit: usize) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let (kind, mut rows): (&str, Vec<Vec<i64>>) =
        if let Ok(layer) = n.clone().try_cast::<TileMapLayer>() {
            let rows = layer
                .get_used_cells()
                .iter_shared()
                .map(|c| {
                    let a = layer.get_cell_atlas_coords(c);
                    vec![
                        c.x.into(),
                        c.y.into(),
                        layer.get_cell_source_id(c).into(),
                        a.x.into(),
                        a.y.into(),
                        layer.get_cell_alternative_tile(c).into(),
                    ]
                })
                .collect();
            ("tile_map_layer", rows)
        } else if n.is_class("GridMap") {
            let mut g = n.clone();
            let used = g.call("get_used_cells", &[]).to::<Array<Vector3i>>();
            let rows = used
                .iter_shared()
                .map(|c| {
                    let item = g.call("get_cell_item", &[c.to_variant()]).to::<i64>();
                    let o = g
                        .call("get_cell_item_orientation", &[c.to_variant()])
                        .to::<i64>();
                    vec![c.x.into(), c.y.into(), c.z.into(), item, o]
                })
                .collect();
            ("grid_map", rows)
        } else {
            return Err(failed(format!(
                "{node} ({}) is not a TileMapLayer or GridMap",
                n.get_class()
            )));
        };
    rows.sort_by(|a, b| (a[1], a[0], a[2]).cmp(&(b[1], b[0], b[2])));
    let total = rows.len();
    let page: Vec<_> = rows.into_iter().skip(offset).take(limit).collect();
    let columns = if kind == "grid_map" {
        json!(["x", "y", "z", "item", "orientation"])
    } else {
        json!(["x", "y", "source", "atlas_x", "atlas_y", "alternative"])
    };
    Ok(json!({
        "node": node, "kind": kind, "total": total, "offset": offset,
        "columns": columns, "cells": page, "scene": scene_path(&root),
    }))
}

/// A MeshLibrary's items.
fn mesh_library_items(path: &str) -> Res {
    let lib = ResourceLoader::singleton()
        .load(path)
        .and_then(|r| r.try_cast::<MeshLibrary>().ok())
        .ok_or_else(|| {
            err(
                ErrorCode::NotFound,
                format!("{path} is not a MeshLibrary that loads"),
            )
        })?;
    let items: Vec<Json> = lib
        .get_item_list()
        .as_slice()
        .iter()
        .map(|id| {
            json!({
                "id": id,
                "name": lib.get_item_name(*id).to_string(),
                "mesh": lib.get_item_mesh(*id).map(|m| m.get_class().to_string()),
            })
        })
        .collect();
    Ok(json!({"path": path, "items": items}))
}

/// A `tileset_atlas` step: an atlas source of `texture` cut in tiles of `tile_size`.
pub(super) fn tileset_atlas(
    root: &Gd<Node>,
    p: &mut Prepared,
    node: &NodeRef,
    texture: &str,
    tile_size: [i32; 2],
    source_id: Option<i32>,
) -> Result<(), BridgeError> {
    let (n, is_new) = p.node(root, node)?;
    let size = Vector2i::new(tile_size[0], tile_size[1]);
    let (mut ts, fresh) = tile_set_of(p, &n, is_new, Some(size))?;
    let tex = ResourceLoader::singleton()
        .load(texture)
        .and_then(|r| r.try_cast::<Texture2D>().ok())
        .ok_or_else(|| {
            err(
                ErrorCode::NotFound,
                format!("{texture} is not a texture that loads"),
            )
        })?;
    let (w, h) = (tex.get_width() / size.x, tex.get_height() / size.y);
    if w < 1 || h < 1 {
        return Err(failed(format!(
            "{texture} ({}x{}) is smaller than one {}x{} tile",
            tex.get_width(),
            tex.get_height(),
            size.x,
            size.y
        )));
    }
    let id = source_id.unwrap_or_else(|| ts.get_next_source_id());
    if ts.has_source(id) {
        return Err(failed(format!("the TileSet already has a source {id}")));
    }
    let mut atlas = TileSetAtlasSource::new_gd();
    atlas.set_texture(&tex);
    atlas.set_texture_region_size(size);
    for y in 0..h {
        for x in 0..w {
            atlas.create_tile(Vector2i::new(x, y));
        }
    }
    if fresh {
        ts.add_source_ex(&atlas).atlas_source_id_override(id).done();
    } else {
        p.ops.push(Op::Call {
            target: obj(&ts),
            method: "add_source",
            args: vec![atlas.to_variant(), id.to_variant()],
            undo_method: "remove_source",
            undo_args: vec![id.to_variant()],
        });
    }
    Ok(())
}

/// A `tileset_physics_layer` step: a physics layer added to the layer's TileSet.
pub(super) fn tileset_physics_layer(
    root: &Gd<Node>,
    p: &mut Prepared,
    node: &NodeRef,
    collision_layer: u32,
    collision_mask: u32,
) -> Result<(), BridgeError> {
    let (n, is_new) = p.node(root, node)?;
    let (mut ts, fresh) = tile_set_of(p, &n, is_new, None)?;
    let idx = ts.get_physics_layers_count() + p.added(&ts, "physics");
    let sets = [
        ("set_physics_layer_collision_layer", collision_layer),
        ("set_physics_layer_collision_mask", collision_mask),
    ];
    if fresh {
        ts.add_physics_layer();
        for (m, v) in sets {
            ts.call(m, &[idx.to_variant(), v.to_variant()]);
        }
    } else {
        p.ops.push(Op::Call {
            target: obj(&ts),
            method: "add_physics_layer",
            args: vec![(-1).to_variant()],
            undo_method: "remove_physics_layer",
            undo_args: vec![idx.to_variant()],
        });
        for (m, v) in sets {
            p.ops.push(Op::Do {
                target: obj(&ts),
                method: m,
                args: vec![idx.to_variant(), v.to_variant()],
            });
        }
    }
    Ok(())
}

/// A `tile_collision` step: the tile's collision on a physics layer becomes one polygon
/// (Godot's tile coordinates, the centre at 0, 0; none given: the whole tile). Its undo puts
/// the tile's polygons on that layer back as they were.
#[allow(clippy::too_many_arguments, reason = "one step's fields")]
pub(super) fn tile_collision(
    root: &Gd<Node>,
    p: &mut Prepared,
    node: &NodeRef,
    source_id: i32,
    atlas: [i32; 2],
    layer: i32,
    polygon: &[[f64; 2]],
) -> Result<(), BridgeError> {
    let (n, is_new) = p.node(root, node)?;
    let (ts, fresh) = tile_set_of(p, &n, is_new, None)?;
    let now = ts.get_physics_layers_count();
    let layers = now + p.added(&ts, "physics");
    if layer >= layers {
        return Err(failed(format!(
            "{}'s TileSet has {layers} physics layer(s), so no layer {layer}: add one with \
             set_tileset_physics_layer",
            n.get_name()
        )));
    }
    let source = ts
        .get_source(source_id)
        .and_then(|s| s.try_cast::<TileSetAtlasSource>().ok())
        .ok_or_else(|| {
            failed(format!(
                "{}'s TileSet has no atlas source {source_id}",
                n.get_name()
            ))
        })?;
    let coords = Vector2i::new(atlas[0], atlas[1]);
    // has_tile first: Godot prints an error for the data of a tile that is not there.
    let td = source
        .has_tile(coords)
        .then(|| source.get_tile_data(coords, 0))
        .flatten()
        .ok_or_else(|| {
            failed(format!(
                "atlas source {source_id} has no tile at ({}, {})",
                atlas[0], atlas[1]
            ))
        })?;
    let points: PackedVector2Array = if polygon.is_empty() {
        let half = source.get_texture_region_size().to_vector2() / 2.0;
        [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
            .into_iter()
            .map(|(x, y)| Vector2::new(x * half.x, y * half.y))
            .collect()
    } else {
        polygon
            .iter()
            .map(|[x, y]| Vector2::new(*x as f32, *y as f32))
            .collect()
    };
    // A layer this action adds holds no polygon yet.
    let old: Vec<PackedVector2Array> = if layer < now {
        (0..td.get_collision_polygons_count(layer))
            .map(|i| td.get_collision_polygon_points(layer, i))
            .collect()
    } else {
        Vec::new()
    };
    if fresh {
        let mut td = td;
        td.set_collision_polygons_count(layer, 1);
        td.set_collision_polygon_points(layer, 0, &points);
        return Ok(());
    }
    let target = obj(&td);
    p.ops.push(Op::Do {
        target: target.clone(),
        method: "set_collision_polygons_count",
        args: vec![layer.to_variant(), 1.to_variant()],
    });
    p.ops.push(Op::Do {
        target: target.clone(),
        method: "set_collision_polygon_points",
        args: vec![layer.to_variant(), 0.to_variant(), points.to_variant()],
    });
    // Undo runs backwards: the count first, then each polygon's points.
    for (i, pts) in old.iter().enumerate() {
        p.ops.push(Op::UndoCall {
            target: target.clone(),
            method: "set_collision_polygon_points",
            args: vec![
                layer.to_variant(),
                (i as i32).to_variant(),
                pts.to_variant(),
            ],
        });
    }
    p.ops.push(Op::UndoCall {
        target,
        method: "set_collision_polygons_count",
        args: vec![layer.to_variant(), (old.len() as i32).to_variant()],
    });
    Ok(())
}

/// A `tileset_terrain_set` step: a terrain set with its terrains added to the layer's TileSet.
pub(super) fn tileset_terrain_set(
    root: &Gd<Node>,
    p: &mut Prepared,
    node: &NodeRef,
    mode: i32,
    terrains: &[Terrain],
) -> Result<(), BridgeError> {
    let (n, is_new) = p.node(root, node)?;
    let (mut ts, fresh) = tile_set_of(p, &n, is_new, None)?;
    let idx = ts.get_terrain_sets_count() + p.added(&ts, "terrain");
    let mut calls: Vec<(&'static str, Vec<Variant>)> = vec![(
        "set_terrain_set_mode",
        vec![idx.to_variant(), mode.to_variant()],
    )];
    for (t, terrain) in terrains.iter().enumerate() {
        let t = t as i32;
        let [r, g, b, a] = terrain.color;
        calls.push(("add_terrain", vec![idx.to_variant(), (-1).to_variant()]));
        calls.push((
            "set_terrain_name",
            vec![
                idx.to_variant(),
                t.to_variant(),
                GString::from(terrain.name.as_str()).to_variant(),
            ],
        ));
        calls.push((
            "set_terrain_color",
            vec![
                idx.to_variant(),
                t.to_variant(),
                Color::from_rgba(r as f32, g as f32, b as f32, a as f32).to_variant(),
            ],
        ));
    }
    if fresh {
        ts.add_terrain_set();
        for (m, args) in calls {
            ts.call(m, &args);
        }
    } else {
        p.ops.push(Op::Call {
            target: obj(&ts),
            method: "add_terrain_set",
            args: vec![(-1).to_variant()],
            undo_method: "remove_terrain_set",
            undo_args: vec![idx.to_variant()],
        });
        for (m, args) in calls {
            p.ops.push(Op::Do {
                target: obj(&ts),
                method: m,
                args,
            });
        }
    }
    Ok(())
}
