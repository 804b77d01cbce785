//! Node commands: create, rename, move, duplicate, delete, read and set a property, and
//! the persistence check (the verdict an edit of a node would get, nothing changed).

use godot::classes::{EditorUndoRedoManager, Node};
use godot::prelude::*;
use godot_mcp_editor_core::command::{Command, PropertySet};
use godot_mcp_editor_core::persistence;
use godot_mcp_protocol::BridgeError;
use godot_mcp_protocol::commands as wire;
use serde_json::json;

use super::ctx::{
    Res, add_child_action, begin, check_set, failed, find, misrouted, new_node, not_held, obj,
    owned, rel_path, roll_back, scene_path, scene_root, undo_redo, verdict_json, with_verdict,
};
use crate::variant::{from_variant, has_property, reads_back};

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::NodeCreate(wire::NodeCreate {
            parent,
            node_type,
            name,
        }) => {
            let root = scene_root()?;
            let parent_node = find(&root, &parent)?;
            let child = new_node(&node_type, &name)?;
            add_child_action(&root, &parent_node, &child, &format!("MCP: create {name}"))?;
            Ok(with_verdict(
                &root,
                &child,
                json!({"node": rel_path(&root, &child), "type": node_type}),
            ))
        }
        Command::NodeRename(wire::NodeRename { node, new_name }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            let old = n.get_name();
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: rename {old} to {new_name}"));
            ur.add_do_property(
                &obj(&n),
                "name",
                &GString::from(new_name.as_str()).to_variant(),
            );
            ur.add_undo_property(&obj(&n), "name", &old.to_variant());
            committed(ur, &root, &n)
        }
        Command::NodeMove(wire::NodeMove { node, new_parent }) => {
            let (root, n) = non_root(&node, "the scene root cannot be moved")?;
            let to = find(&root, &new_parent)?;
            if n.is_ancestor_of(&to) || n == to {
                return Err(failed("a node cannot move under itself"));
            }
            let Leaving {
                parent: from,
                index,
                owned: owned_nodes,
            } = leaving(&root, &n)?;
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: move {node}"));
            ur.add_do_method(&obj(&from), "remove_child", &[n.to_variant()]);
            ur.add_do_method(&obj(&to), "add_child", &[n.to_variant(), true.to_variant()]);
            ur.add_undo_method(&obj(&to), "remove_child", &[n.to_variant()]);
            undo_reinsert(&mut ur, &from, &n, index);
            for o in &owned_nodes {
                ur.add_do_property(&obj(o), "owner", &root.to_variant());
                ur.add_undo_property(&obj(o), "owner", &root.to_variant());
            }
            committed(ur, &root, &n)
        }
        Command::NodeDuplicate(wire::NodeDuplicate { node, new_name }) => {
            let (root, n) = non_root(&node, "the scene root cannot be duplicated")?;
            let parent = n
                .get_parent()
                .ok_or_else(|| failed("the node has no parent"))?;
            let mut copy = n.duplicate_node();
            if let Some(name) = &new_name {
                copy.set_name(name.as_str());
            }
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: duplicate {node}"));
            ur.add_do_method(
                &obj(&parent),
                "add_child",
                &[copy.to_variant(), true.to_variant()],
            );
            // The copy's nodes that correspond to nodes the scene owns become owned too;
            // internal nodes of instanced sub-scenes stay theirs.
            let mut all = Vec::new();
            owned_pairs(&root, &n, &copy, &mut all);
            for o in &all {
                ur.add_do_property(&obj(o), "owner", &root.to_variant());
            }
            ur.add_do_reference(&obj(&copy));
            ur.add_undo_method(&obj(&parent), "remove_child", &[copy.to_variant()]);
            committed(ur, &root, &copy)
        }
        Command::NodeDelete(wire::NodeDelete { node }) => {
            let (root, n) = non_root(
                &node,
                "the scene root cannot be deleted (close the scene instead)",
            )?;
            let verdict = persistence::verdict(owned(&root, &n), &scene_path(&root));
            let Leaving {
                parent,
                index,
                owned: owned_nodes,
            } = leaving(&root, &n)?;
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: delete {node}"));
            ur.add_do_method(&obj(&parent), "remove_child", &[n.to_variant()]);
            undo_reinsert(&mut ur, &parent, &n, index);
            for o in &owned_nodes {
                ur.add_undo_property(&obj(o), "owner", &root.to_variant());
            }
            ur.add_undo_reference(&obj(&n));
            ur.commit_action();
            let mut out = verdict_json(&verdict);
            out["node"] = json!(node);
            out["scene"] = json!(scene_path(&root));
            Ok(out)
        }
        Command::NodeGetProperty(wire::NodeGetProperty { node, property }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            if !has_property(&obj(&n), &property) {
                return Err(failed(format!(
                    "{} has no property {property}",
                    n.get_class()
                )));
            }
            Ok(
                json!({"node": node, "property": property, "value": from_variant(&n.get(property.as_str())).to_json()}),
            )
        }
        Command::NodeSetProperty(set) => set_property(&set),
        Command::NodePersistence(wire::NodePersistence { node, op }) => persist_check(&node, &op),
        _ => Err(misrouted("node")),
    }
}

/// `node.set_property`: one undo action, read back; rolled back when Godot does not hold
/// what was asked.
fn set_property(set: &PropertySet) -> Res {
    let root = scene_root()?;
    let (n, value) = check_set(&root, set)?;
    let old = n.get(set.property.as_str());
    let mut ur = undo_redo()?;
    let action = format!("MCP: set {}:{}", set.node, set.property);
    begin(&mut ur, &root, &action);
    ur.add_do_property(&obj(&n), set.property.as_str(), &value);
    ur.add_undo_property(&obj(&n), set.property.as_str(), &old);
    ur.commit_action();
    // Every set is read back: what Godot holds must be what was asked.
    if let Err(why) = reads_back(&obj(&n), &set.property, &value) {
        let effect = roll_back(&ur, &obj(&n), &action, || {
            n.get(set.property.as_str()) == old
        });
        return Err(not_held(&set.node, &why, effect));
    }
    let now = from_variant(&n.get(set.property.as_str())).to_json();
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": set.node, "property": set.property, "value": now}),
    ))
}

/// The persistence check (`node.persistence`, read-only): the verdict an `op` edit of
/// `node` would get, nothing changed.
fn persist_check(node: &str, op: &str) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    // The same rule the handlers stamp: a created node is always owned by the scene
    // (its parent is `node` here); every other op is judged on `node` itself.
    let owned_after = op == "create" || owned(&root, &n);
    let mut out = verdict_json(&persistence::verdict(owned_after, &scene_path(&root)));
    out["exists"] = json!(true);
    out["node"] = json!(node);
    out["scene"] = json!(scene_path(&root));
    Ok(out)
}

/// Commits the action `ur` holds and answers with `n`'s path and its verdict.
fn committed(mut ur: Gd<EditorUndoRedoManager>, root: &Gd<Node>, n: &Gd<Node>) -> Res {
    ur.commit_action();
    Ok(with_verdict(root, n, json!({"node": rel_path(root, n)})))
}

/// The undo of taking `n` out of `parent`: back under it, at `index` (a move and a
/// delete both restore the node where it was).
fn undo_reinsert(ur: &mut Gd<EditorUndoRedoManager>, parent: &Gd<Node>, n: &Gd<Node>, index: i32) {
    ur.add_undo_method(
        &obj(parent),
        "add_child",
        &[n.to_variant(), true.to_variant()],
    );
    ur.add_undo_method(
        &obj(parent),
        "move_child",
        &[n.to_variant(), index.to_variant()],
    );
}

/// The scene root and the node at `node`, refused (`refusal`) when it is the root.
fn non_root(node: &str, refusal: &str) -> Result<(Gd<Node>, Gd<Node>), BridgeError> {
    let root = scene_root()?;
    let n = find(&root, node)?;
    if n == root {
        return Err(failed(refusal));
    }
    Ok((root, n))
}

/// A node about to be taken out of its parent (a move or a delete): the parent, its
/// index there, and the nodes of its subtree the scene owns.
struct Leaving {
    parent: Gd<Node>,
    index: i32,
    owned: Vec<Gd<Node>>,
}

fn leaving(root: &Gd<Node>, n: &Gd<Node>) -> Result<Leaving, BridgeError> {
    let parent = n
        .get_parent()
        .ok_or_else(|| failed("the node has no parent"))?;
    let mut owned = Vec::new();
    owned_subtree(root, n, &mut owned);
    Ok(Leaving {
        parent,
        index: n.get_index(),
        owned,
    })
}

fn owned_subtree(root: &Gd<Node>, node: &Gd<Node>, out: &mut Vec<Gd<Node>>) {
    if owned(root, node) {
        out.push(node.clone());
    }
    for child in node.get_children().iter_shared() {
        owned_subtree(root, &child, out);
    }
}

/// Walk an original and its duplicate in step, collecting the copies of owned nodes.
fn owned_pairs(root: &Gd<Node>, original: &Gd<Node>, copy: &Gd<Node>, out: &mut Vec<Gd<Node>>) {
    if owned(root, original) {
        out.push(copy.clone());
    }
    let n = original.get_child_count().min(copy.get_child_count());
    for i in 0..n {
        if let (Some(o), Some(c)) = (original.get_child(i), copy.get_child(i)) {
            owned_pairs(root, &o, &c, out);
        }
    }
}
