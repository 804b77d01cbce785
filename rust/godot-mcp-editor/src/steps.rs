//! `scene.steps`: ordered steps (create a node, set a property, add to a group, set tile
//! or grid cells, fit a collision shape, bake a navigation region) applied as ONE
//! `EditorUndoRedoManager` action, and the two cell/mesh-library reads the family tools
//! need. Main thread only.
//!
//! Honesty is BatchApply's: every step is checked before the first change to the edited
//! scene, so an error reply is `effect: unchanged`. Nodes the action creates are built
//! off the tree during the check (their properties, groups and cells set directly, since
//! they reach the scene only through the action's `add_child`, and leave it with its
//! undo); steps on nodes already in the scene become do/undo pairs, their "old" values
//! read as the earlier steps of the same action leave them, and the action runs its undo
//! operations backwards, so one undo walks the steps back in reverse. Cell edits undo by
//! restoring the layer's whole stored cells (`tile_map_data`, GridMap `data`), so the
//! saved file comes back byte for byte, cell order included.

use std::collections::HashMap;

use godot::classes::{
    ClassDb, MeshLibrary, Node, Node3D, Object, Resource, ResourceLoader, Sprite2D, Texture2D,
    TileMapLayer, TileSet, TileSetAtlasSource, VisualInstance3D,
};
use godot::prelude::*;
use godot_mcp_editor_core::command::{FitKind, GridCell, NodeRef, Step, TileCell};
use godot_mcp_editor_core::persistence;
use godot_mcp_protocol::{BridgeError, ErrorCode};
use serde_json::{Value as Json, json};

use crate::exec::{err, failed, find, obj, owned, rel_path, scene_path, scene_root, undo_redo};
use crate::variant::checked_value;

type Res = Result<Json, BridgeError>;

/// One do/undo pair of the action.
enum Op {
    /// Add a created node under a node of the scene (undo: remove it).
    AddChild { parent: Gd<Node>, child: Gd<Node> },
    Prop {
        target: Gd<Object>,
        property: String,
        new: Variant,
        old: Variant,
    },
    Call {
        target: Gd<Object>,
        method: &'static str,
        args: Vec<Variant>,
        undo_method: &'static str,
        undo_args: Vec<Variant>,
    },
    /// A call with no undo of its own (a cell write: [`Op::Restore`] undoes them all).
    Do {
        target: Gd<Object>,
        method: &'static str,
        args: Vec<Variant>,
    },
    /// Undo only: a call.
    UndoCall {
        target: Gd<Object>,
        method: &'static str,
        args: Vec<Variant>,
    },
    /// Undo only: put a whole stored property back (a layer's cells, in their saved
    /// order — cell by cell would re-add an erased cell at the end of the map and save
    /// the same cells in another order).
    Restore {
        target: Gd<Object>,
        property: &'static str,
        old: Variant,
    },
}

/// What the check builds: the created nodes (by step) and the operations, in step order.
struct Prepared {
    created: Vec<Option<Gd<Node>>>,
    /// Created nodes whose parent is a node of the scene (they are added by the action).
    tops: Vec<Gd<Node>>,
    /// Where each created node goes (its parent is set only when the action runs).
    parent_of: HashMap<InstanceId, Gd<Node>>,
    ops: Vec<Op>,
    /// Property values as the earlier steps leave them (for the next step's undo).
    props: HashMap<(InstanceId, String), Variant>,
    /// Nodes whose cells the action already restores on undo.
    restored: std::collections::HashSet<InstanceId>,
    /// TileSets this action makes (edited directly: they reach the scene only with it).
    fresh: std::collections::HashSet<InstanceId>,
    /// Physics layers / terrain sets earlier steps add to a TileSet, by kind.
    layers: HashMap<(InstanceId, &'static str), i32>,
}

impl Prepared {
    fn node(&self, root: &Gd<Node>, r: &NodeRef) -> Result<(Gd<Node>, bool), BridgeError> {
        match r {
            NodeRef::Step(i) => self
                .created
                .get(*i)
                .cloned()
                .flatten()
                .map(|n| (n, true))
                .ok_or_else(|| failed(format!("${i} is not a node this action creates"))),
            NodeRef::Path(p) => {
                let n = find(root, p)?;
                if !owned(root, &n) {
                    return Err(failed(format!(
                        "{p} belongs to an instanced sub-scene: open that scene to edit it"
                    )));
                }
                Ok((n, false))
            }
        }
    }

    fn parent(&self, n: &Gd<Node>) -> Option<Gd<Node>> {
        self.parent_of
            .get(&n.instance_id())
            .cloned()
            .or_else(|| n.get_parent())
    }

    /// Set `property` on `n`: directly on a created node, as a do/undo pair otherwise.
    fn set(&mut self, n: &Gd<Node>, created: bool, property: &str, v: Variant) {
        if created {
            n.clone().set(property, &v);
            return;
        }
        let key = (n.instance_id(), property.to_string());
        let old = self
            .props
            .get(&key)
            .cloned()
            .unwrap_or_else(|| n.get(property));
        self.props.insert(key, v.clone());
        self.ops.push(Op::Prop {
            target: obj(n),
            property: property.into(),
            new: v,
            old,
        });
    }
}

impl Prepared {
    /// `set_indexed` of `base:sub` (a property of a sub-resource the node holds).
    fn set_indexed(&mut self, n: &Gd<Node>, created: bool, path: &str, v: Variant) {
        let np = NodePath::from(path);
        if created {
            n.clone().set_indexed(&np, &v);
            return;
        }
        let key = (n.instance_id(), path.to_string());
        let old = self
            .props
            .get(&key)
            .cloned()
            .unwrap_or_else(|| n.get_indexed(&np));
        self.props.insert(key, v.clone());
        self.ops.push(Op::Call {
            target: obj(n),
            method: "set_indexed",
            args: vec![np.to_variant(), v],
            undo_method: "set_indexed",
            undo_args: vec![np.to_variant(), old],
        });
    }
}

impl Prepared {
    /// How many `kind` layers earlier steps of this action add to `ts` (not there yet).
    fn added(&mut self, ts: &Gd<TileSet>, kind: &'static str) -> i32 {
        let n = self.layers.entry((ts.instance_id(), kind)).or_insert(0);
        *n += 1;
        *n - 1
    }
}

/// The built-in TileSet of the TileMapLayer `n` as the earlier steps leave it, and whether
/// this action made it; with `create`, a layer without one gets a new TileSet of that
/// tile size. A TileSet saved in its own file is refused: saving the scene would not save
/// the edit, so it could not be reported as one.
fn tile_set_of(
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

/// Free the nodes a check built (none of them reached the scene): every created node is
/// a top or a descendant of one.
fn discard(p: Prepared) {
    for n in p.tops {
        n.free();
    }
}

fn verdict(root: &Gd<Node>) -> Json {
    serde_json::to_value(persistence::verdict(true, &scene_path(root)))
        .unwrap_or_else(|_| json!({}))
}

pub(crate) fn steps(action: &str, steps: &[Step], check_only: bool) -> Res {
    let root = scene_root()?;
    let mut p = Prepared {
        created: Vec::with_capacity(steps.len()),
        tops: Vec::new(),
        parent_of: HashMap::new(),
        ops: Vec::new(),
        props: HashMap::new(),
        restored: std::collections::HashSet::new(),
        fresh: std::collections::HashSet::new(),
        layers: HashMap::new(),
    };
    for (i, step) in steps.iter().enumerate() {
        if let Err(e) = check(&root, &mut p, step) {
            discard(p);
            return Err(err(e.code, format!("steps[{i}]: {}", e.message)));
        }
    }
    if check_only {
        discard(p);
        let mut out = verdict(&root);
        out["steps"] = json!(steps.len());
        out["scene"] = json!(scene_path(&root));
        return Ok(out);
    }
    let mut ur = undo_redo()?;
    ur.create_action_ex(action)
        .custom_context(&obj(&root))
        .backward_undo_ops(true)
        .done();
    for top in &p.tops {
        ur.add_do_reference(&obj(top));
    }
    for op in &p.ops {
        match op {
            Op::AddChild { parent, child } => {
                ur.add_do_method(
                    &obj(parent),
                    "add_child",
                    &[child.to_variant(), true.to_variant()],
                );
                ur.add_undo_method(&obj(parent), "remove_child", &[child.to_variant()]);
                // The owner makes it (and its created children) part of the saved scene.
                let mut sub = Vec::new();
                subtree(child, &mut sub);
                for n in sub {
                    ur.add_do_property(&obj(&n), "owner", &root.to_variant());
                }
            }
            Op::Prop {
                target,
                property,
                new,
                old,
            } => {
                ur.add_do_property(target, property.as_str(), new);
                ur.add_undo_property(target, property.as_str(), old);
            }
            Op::Call {
                target,
                method,
                args,
                undo_method,
                undo_args,
            } => {
                ur.add_do_method(target, *method, args);
                ur.add_undo_method(target, *undo_method, undo_args);
            }
            Op::Do {
                target,
                method,
                args,
            } => ur.add_do_method(target, *method, args),
            Op::UndoCall {
                target,
                method,
                args,
            } => ur.add_undo_method(target, *method, args),
            Op::Restore {
                target,
                property,
                old,
            } => ur.add_undo_property(target, *property, old),
        }
    }
    ur.commit_action();
    let nodes: Vec<Json> = p
        .created
        .iter()
        .flatten()
        .map(|n| json!(rel_path(&root, n)))
        .collect();
    let mut out = verdict(&root);
    out["action"] = json!(action);
    out["steps"] = json!(steps.len());
    out["nodes"] = json!(nodes);
    out["scene"] = json!(scene_path(&root));
    Ok(out)
}

fn subtree(n: &Gd<Node>, out: &mut Vec<Gd<Node>>) {
    out.push(n.clone());
    for c in n.get_children().iter_shared() {
        subtree(&c, out);
    }
}

fn check(root: &Gd<Node>, p: &mut Prepared, step: &Step) -> Result<(), BridgeError> {
    let mut created = None;
    match step {
        Step::Create {
            parent,
            node_type,
            name,
        } => {
            let (mut parent, parent_created) = p.node(root, parent)?;
            let child = crate::exec::new_node(node_type, name)?;
            if parent_created {
                parent.add_child_ex(&child).force_readable_name(true).done();
            } else {
                p.parent_of.insert(child.instance_id(), parent.clone());
                p.tops.push(child.clone());
                p.ops.push(Op::AddChild {
                    parent,
                    child: child.clone(),
                });
            }
            created = Some(child);
        }
        Step::Set {
            node,
            property,
            value,
        } => {
            let (n, is_new) = p.node(root, node)?;
            let what = n.get_name().to_string();
            match property.split_once(':') {
                None => {
                    let v = checked_value(&obj(&n), &what, property, value).map_err(failed)?;
                    p.set(&n, is_new, property, v);
                }
                Some((base, sub)) => {
                    let holder = n.get(base).try_to::<Gd<Resource>>().map_err(|_| {
                        failed(format!(
                            "{what}:{base} holds no resource to set {sub} on (set {base} first)"
                        ))
                    })?;
                    let v = checked_value(&obj(&holder), &format!("{what}:{base}"), sub, value)
                        .map_err(failed)?;
                    p.set_indexed(&n, is_new, property, v);
                }
            }
        }
        Step::Group { node, group } => {
            let (mut n, is_new) = p.node(root, node)?;
            if n.is_in_group(group.as_str()) {
                return Err(failed(format!(
                    "{} is already in group {group}",
                    n.get_name()
                )));
            }
            if is_new {
                n.add_to_group_ex(group.as_str()).persistent(true).done();
            } else {
                let g = StringName::from(group.as_str()).to_variant();
                p.ops.push(Op::Call {
                    target: obj(&n),
                    method: "add_to_group",
                    args: vec![g.clone(), true.to_variant()],
                    undo_method: "remove_from_group",
                    undo_args: vec![g],
                });
            }
        }
        Step::TileCells { node, cells } => {
            let (n, is_new) = p.node(root, node)?;
            tile_cells(p, n, is_new, cells)?;
        }
        Step::GridCells { node, cells } => {
            let (n, is_new) = p.node(root, node)?;
            grid_cells(p, n, is_new, cells)?;
        }
        Step::FitShape { node, to, shape } => {
            let (n, is_new) = p.node(root, node)?;
            let (target, _) = p.node(root, to)?;
            let (res, position) = fit(p, &n, &target, *shape)?;
            p.set(&n, is_new, "shape", res.to_variant());
            p.set(&n, is_new, "position", position);
        }
        Step::BakeNavigation { node } => {
            let (mut n, is_new) = p.node(root, node)?;
            let (property, method) = if n.is_class("NavigationRegion2D") {
                ("navigation_polygon", "bake_navigation_polygon")
            } else if n.is_class("NavigationRegion3D") {
                ("navigation_mesh", "bake_navigation_mesh")
            } else {
                return Err(failed(format!(
                    "{} ({}) is not a NavigationRegion2D or NavigationRegion3D",
                    n.get_name(),
                    n.get_class()
                )));
            };
            let old = n.get(property);
            let Ok(old_res) = old.try_to::<Gd<Resource>>() else {
                return Err(failed(format!(
                    "{} has no {property} to bake: give it one (with an outline in 2D) first",
                    n.get_name()
                )));
            };
            let fresh = old_res.duplicate_resource();
            // Bake into a copy (synchronously), then put the old resource back: the
            // action sets the baked copy, and its undo restores the very same old one.
            n.set(property, &fresh.to_variant());
            n.call(method, &[false.to_variant()]);
            n.set(property, &old);
            p.set(&n, is_new, property, fresh.to_variant());
        }
        Step::TilesetAtlas {
            node,
            texture,
            tile_size,
            source_id,
        } => {
            let (n, is_new) = p.node(root, node)?;
            let size = Vector2i::new(tile_size[0], tile_size[1]);
            let (mut ts, fresh) = tile_set_of(p, &n, is_new, Some(size))?;
            let tex = ResourceLoader::singleton()
                .load(texture.as_str())
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
        }
        Step::TilesetPhysicsLayer {
            node,
            collision_layer,
            collision_mask,
        } => {
            let (n, is_new) = p.node(root, node)?;
            let (mut ts, fresh) = tile_set_of(p, &n, is_new, None)?;
            let idx = ts.get_physics_layers_count() + p.added(&ts, "physics");
            let sets = [
                ("set_physics_layer_collision_layer", *collision_layer),
                ("set_physics_layer_collision_mask", *collision_mask),
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
        }
        Step::TilesetTerrainSet {
            node,
            mode,
            terrains,
        } => {
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
        }
    }
    p.created.push(created);
    Ok(())
}

fn tile_cells(
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

fn grid_cells(
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

fn new_shape(class: &str, props: &[(&str, Variant)]) -> Result<Gd<Resource>, BridgeError> {
    let mut r = ClassDb::singleton()
        .instantiate(class)
        .try_to::<Gd<Resource>>()
        .map_err(|_| failed(format!("could not create a {class}")))?;
    for (k, v) in props {
        r.set(*k, v);
    }
    Ok(r)
}

/// `n`'s transform in the scene: a node in the tree answers it; a node the action
/// creates is composed from where it will go (its parent's, times its own). A plain Node
/// in between (no transform) passes its parent's through, as Godot does.
fn global_2d(p: &Prepared, n: &Gd<Node>) -> Transform2D {
    if n.is_inside_tree() {
        return match n.clone().try_cast::<godot::classes::CanvasItem>() {
            Ok(c) => c.get_global_transform(),
            Err(_) => Transform2D::IDENTITY,
        };
    }
    let up = p
        .parent(n)
        .map_or(Transform2D::IDENTITY, |q| global_2d(p, &q));
    match n.clone().try_cast::<godot::classes::CanvasItem>() {
        Ok(c) => up * c.get_transform(),
        Err(_) => up,
    }
}

fn global_3d(p: &Prepared, n: &Gd<Node>) -> Transform3D {
    if n.is_inside_tree() {
        return match n.clone().try_cast::<Node3D>() {
            Ok(s) => s.get_global_transform(),
            Err(_) => Transform3D::IDENTITY,
        };
    }
    let up = p
        .parent(n)
        .map_or(Transform3D::IDENTITY, |q| global_3d(p, &q));
    match n.clone().try_cast::<Node3D>() {
        Ok(s) => up * s.get_transform(),
        Err(_) => up,
    }
}

/// A new shape sized to `target`'s bounds, and the position that centres it there, in
/// the coordinates of `shape_node`'s parent (rotation is not followed: the shape is
/// axis-aligned in its parent).
fn fit(
    p: &Prepared,
    shape_node: &Gd<Node>,
    target: &Gd<Node>,
    kind: FitKind,
) -> Result<(Gd<Resource>, Variant), BridgeError> {
    let parent = p
        .parent(shape_node)
        .ok_or_else(|| failed("the collision shape has no parent"))?;
    if shape_node.is_class("CollisionShape2D") {
        let sprite = target
            .clone()
            .try_cast::<Sprite2D>()
            .map_err(|_| failed(format!("{} is not a Sprite2D to fit to", target.get_name())))?;
        let rect = sprite.get_rect();
        if rect.size.x <= 0.0 || rect.size.y <= 0.0 {
            return Err(failed(format!(
                "{} has no texture: nothing to size the shape to",
                target.get_name()
            )));
        }
        let xf = global_2d(p, &parent).affine_inverse() * global_2d(p, target);
        let scale = xf.scale();
        let size = Vector2::new(rect.size.x * scale.x, rect.size.y * scale.y).abs();
        let centre = xf * rect.center();
        let res = match kind {
            FitKind::Rectangle => new_shape("RectangleShape2D", &[("size", size.to_variant())])?,
            FitKind::Circle => new_shape(
                "CircleShape2D",
                &[("radius", (size.x.max(size.y) / 2.0).to_variant())],
            )?,
            FitKind::Capsule => new_shape(
                "CapsuleShape2D",
                &[
                    ("radius", (size.x / 2.0).to_variant()),
                    ("height", size.y.to_variant()),
                ],
            )?,
            _ => return Err(failed("a 2D shape is rectangle, circle or capsule")),
        };
        Ok((res, centre.to_variant()))
    } else if shape_node.is_class("CollisionShape3D") {
        let vi = target.clone().try_cast::<VisualInstance3D>().map_err(|_| {
            failed(format!(
                "{} is not a MeshInstance3D (VisualInstance3D) to fit to",
                target.get_name()
            ))
        })?;
        let aabb = vi.get_aabb();
        let xf = global_3d(p, &parent).affine_inverse() * global_3d(p, target);
        let s = xf.basis.get_scale();
        let size = Vector3::new(aabb.size.x * s.x, aabb.size.y * s.y, aabb.size.z * s.z).abs();
        if size.x <= 0.0 && size.y <= 0.0 && size.z <= 0.0 {
            return Err(failed(format!(
                "{} has no mesh: nothing to size the shape to",
                target.get_name()
            )));
        }
        let centre = xf * aabb.center();
        let res = match kind {
            FitKind::Box => new_shape("BoxShape3D", &[("size", size.to_variant())])?,
            FitKind::Sphere => new_shape(
                "SphereShape3D",
                &[(
                    "radius",
                    (size.x.max(size.y).max(size.z) / 2.0).to_variant(),
                )],
            )?,
            FitKind::Capsule => new_shape(
                "CapsuleShape3D",
                &[
                    ("radius", (size.x.max(size.z) / 2.0).to_variant()),
                    ("height", size.y.to_variant()),
                ],
            )?,
            _ => return Err(failed("a 3D shape is box, sphere or capsule")),
        };
        Ok((res, centre.to_variant()))
    } else {
        Err(failed(format!(
            "{} ({}) is not a CollisionShape2D or CollisionShape3D",
            shape_node.get_name(),
            shape_node.get_class()
        )))
    }
}

/// The used cells of a TileMapLayer or GridMap, in a stable order (y, then x, then z).
pub(crate) fn cells(node: &str, offset: usize, limit: usize) -> Res {
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
pub(crate) fn mesh_library_items(path: &str) -> Res {
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
