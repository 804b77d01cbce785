//! `scene.steps`: ordered steps (create a node, set a property, add to a group, set tile
//! or grid cells, fit a collision shape, bake a navigation region) applied as ONE
//! `EditorUndoRedoManager` action. Main thread only. The tile and grid cell steps and the
//! TileSet steps live in `tilemap.rs` (with the two cell/mesh-library reads), the shape
//! fit in `physics.rs`, the plan they all add to in `plan.rs`.
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

use godot::classes::packed_scene::GenEditState;
use godot::classes::{Node, Object, PackedScene, Resource, ResourceLoader};
use godot::prelude::*;
use godot_mcp_editor_core::command::{Command, NodeRef, Step};
use godot_mcp_editor_core::persistence;
use godot_mcp_protocol::commands::CheckIn;
use godot_mcp_protocol::{BridgeError, ErrorCode};
use serde_json::{Value as Json, json};

use super::ctx::{
    Res, err, failed, misrouted, new_node, not_held, obj, on_scene, rel_path, roll_back,
    scene_path, scene_root, undo_redo,
};
use super::physics::fit;
use super::plan::{Op, Prepared};
use super::tilemap::{
    grid_cells, tile_cells, tile_collision, tileset_atlas, tileset_physics_layer,
    tileset_terrain_set,
};
use crate::variant::{checked_value, reads_back};

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

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::Steps {
            action,
            steps: list,
            check_only,
            on,
            check_in: Some(at),
        } if check_only && on.scene.is_none() => {
            // Checked on a stand-in of the scene the call would open or create: made
            // apart from the editor's scenes, and freed.
            let root = stand_in(&at)?;
            let out = steps(root.clone(), &action, &list, true);
            root.free();
            out
        }
        Command::Steps {
            action,
            steps: list,
            check_only,
            on,
            check_in: None,
        } => {
            let root = scene_root()?;
            if on.scene.is_some() {
                on_scene(&on, &root)?;
            }
            steps(root, &action, &list, check_only)
        }
        _ => Err(misrouted("steps")),
    }
}

/// The scene a dry run checks steps on when its call would open or create it first:
/// the file instanced as the editor opens one, or the new scene's root.
fn stand_in(at: &CheckIn) -> Result<Gd<Node>, BridgeError> {
    match at {
        CheckIn::File(path) => {
            let packed = ResourceLoader::singleton()
                .load(path.as_str())
                .and_then(|r| r.try_cast::<PackedScene>().ok())
                .ok_or_else(|| {
                    err(
                        ErrorCode::NotFound,
                        format!("{path} is not a scene that loads"),
                    )
                })?;
            let mut root = packed
                .instantiate_ex()
                .edit_state(GenEditState::MAIN)
                .done()
                .ok_or_else(|| failed(format!("{path} did not instantiate")))?;
            root.set_scene_file_path(path.as_str());
            Ok(root)
        }
        CheckIn::NewRoot { node_type, name } => new_node(node_type, name),
    }
}

fn steps(root: Gd<Node>, action: &str, steps: &[Step], check_only: bool) -> Res {
    let mut p = Prepared {
        created: Vec::with_capacity(steps.len()),
        tops: Vec::new(),
        parent_of: HashMap::new(),
        ops: Vec::new(),
        props: HashMap::new(),
        restored: std::collections::HashSet::new(),
        fresh: std::collections::HashSet::new(),
        layers: HashMap::new(),
        asked: Vec::new(),
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
    // Every set is read back: a value Godot does not hold as asked undoes the action.
    let mut seen: Vec<(&Gd<Node>, &str)> = Vec::new();
    for (n, property, v) in p.asked.iter().rev() {
        if seen.contains(&(n, property.as_str())) {
            continue;
        }
        seen.push((n, property.as_str()));
        if let Err(why) = reads_back(&obj(n), property, v) {
            // Each property's value before the action: the old value of its first set.
            let restored = || {
                let mut firsts: Vec<(&Gd<Object>, &str, &Variant)> = Vec::new();
                for op in &p.ops {
                    if let Op::Prop {
                        target,
                        property,
                        old,
                        ..
                    } = op
                        && !firsts
                            .iter()
                            .any(|(t, q, _)| *t == target && *q == property)
                    {
                        firsts.push((target, property.as_str(), old));
                    }
                }
                firsts.iter().all(|(t, q, old)| t.get(*q) == **old)
            };
            let effect = roll_back(&ur, &obj(&root), action, restored);
            return Err(not_held(&n.get_name().to_string(), &why, effect));
        }
    }
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

/// A Control's properties whose meaning depends on its parent control (the layout
/// mode: position, anchors, container), which Godot keeps as "uncontrolled" (and an
/// anchors preset as none) while the node has no parent control yet.
const LAYOUT: [&str; 2] = ["layout_mode", "anchors_preset"];

/// A set step's read-back: at once on a node this action creates (it is set directly,
/// off the scene, so a refusal leaves the scene unchanged), after the action otherwise.
fn asked(
    p: &mut Prepared,
    n: &Gd<Node>,
    is_new: bool,
    what: &str,
    property: &str,
    v: Variant,
) -> Result<(), BridgeError> {
    if is_new {
        reads_back(&obj(n), property, &v)
            .map_err(|why| failed(format!("{what}:{why}, not what was asked")))
    } else {
        p.asked.push((n.clone(), property.to_string(), v));
        Ok(())
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
            let child = new_node(node_type, name)?;
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
                    // A Control's layout reads its parent control, which a node made by
                    // this action has only once the action adds it: set it then, and
                    // read it back after the action like an existing node's.
                    if is_new && n.is_class("Control") && LAYOUT.contains(&property.as_str()) {
                        p.ops.push(Op::Do {
                            target: obj(&n),
                            method: "set",
                            args: vec![StringName::from(property.as_str()).to_variant(), v.clone()],
                        });
                        asked(p, &n, false, &what, property, v)?;
                    } else {
                        p.set(&n, is_new, property, v.clone());
                        asked(p, &n, is_new, &what, property, v)?;
                    }
                }
                Some((base, sub)) => {
                    let holder = n.get(base).try_to::<Gd<Resource>>().map_err(|_| {
                        failed(format!(
                            "{what}:{base} holds no resource to set {sub} on (set {base} first)"
                        ))
                    })?;
                    let v = checked_value(&obj(&holder), &format!("{what}:{base}"), sub, value)
                        .map_err(failed)?;
                    p.set_indexed(&n, is_new, property, v.clone());
                    asked(p, &n, is_new, &what, property, v)?;
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
        Step::Connect {
            node,
            signal,
            to,
            method,
        } => connect(root, p, node, signal, to, method)?,
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
        Step::BakeNavigation { node } => bake_navigation(root, p, node)?,
        Step::TilesetAtlas {
            node,
            texture,
            tile_size,
            source_id,
        } => tileset_atlas(root, p, node, texture, *tile_size, *source_id)?,
        Step::TilesetPhysicsLayer {
            node,
            collision_layer,
            collision_mask,
        } => tileset_physics_layer(root, p, node, *collision_layer, *collision_mask)?,
        Step::TilesetTerrainSet {
            node,
            mode,
            terrains,
        } => tileset_terrain_set(root, p, node, *mode, terrains)?,
        Step::TileCollision {
            node,
            source_id,
            atlas,
            physics_layer,
            polygon,
        } => tile_collision(root, p, node, *source_id, *atlas, *physics_layer, polygon)?,
    }
    p.created.push(created);
    Ok(())
}

/// A `connect` step: a persistent connection, as the editor's Connect dialog makes.
fn connect(
    root: &Gd<Node>,
    p: &mut Prepared,
    node: &NodeRef,
    signal: &str,
    to: &NodeRef,
    method: &str,
) -> Result<(), BridgeError> {
    let (mut n, is_new) = p.node(root, node)?;
    let (t, _) = p.node(root, to)?;
    if !n.has_signal(signal) {
        return Err(failed(format!(
            "{} ({}) has no signal {signal}",
            n.get_name(),
            n.get_class()
        )));
    }
    let callable = Callable::from_object_method(&t, method);
    if n.is_connected(signal, &callable) {
        return Err(failed(format!(
            "{}.{signal} is already connected to {}.{method}",
            n.get_name(),
            t.get_name()
        )));
    }
    // CONNECT_PERSIST (2): saved with the scene, as the editor's Connect dialog does.
    let sig = GString::from(signal).to_variant();
    if is_new {
        n.call("connect", &[sig, callable.to_variant(), 2i64.to_variant()]);
    } else {
        p.ops.push(Op::Call {
            target: obj(&n),
            method: "connect",
            args: vec![sig.clone(), callable.to_variant(), 2i64.to_variant()],
            undo_method: "disconnect",
            undo_args: vec![sig, callable.to_variant()],
        });
    }
    Ok(())
}

/// A `bake_navigation` step: the region's navigation resource baked into a copy the action sets.
fn bake_navigation(root: &Gd<Node>, p: &mut Prepared, node: &NodeRef) -> Result<(), BridgeError> {
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
    Ok(())
}
