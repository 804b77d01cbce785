//! AnimationTree authoring: nodes of a state machine or blend tree, and the transitions
//! and connections between them.

use godot::classes::{ClassDb, Node, Resource};
use godot::prelude::*;
use godot_mcp_editor_core::authoring::Graph;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::json;

use super::animation::file_refusal;
use super::ctx::{
    Res, begin, embedded, err, failed, find, misrouted, obj, scene_history, scene_root, undo_redo,
    with_verdict,
};
use crate::variant::has_property;
use godot_mcp_editor_core::command::Command;

pub(crate) fn run(a: Command) -> Res {
    match a {
        Command::TreeAddNode {
            tree,
            parent,
            graph,
            name,
            node_type,
            animation,
            position,
        } => tree_add_node(
            &tree,
            &parent,
            graph,
            &name,
            &node_type,
            animation.as_deref(),
            position,
        ),
        Command::TreeConnect {
            tree,
            state_machine,
            from,
            to,
            switch_mode,
            advance_mode,
            advance_condition,
            xfade_time,
        } => tree_connect(
            &tree,
            &state_machine,
            (&from, &to),
            (switch_mode, advance_mode),
            advance_condition.as_deref(),
            xfade_time,
        ),
        Command::TreeBlendConnect {
            tree,
            blend_tree,
            to,
            port,
            from,
        } => tree_blend_connect(&tree, &blend_tree, &to, port, &from),
        _ => Err(misrouted("animation tree")),
    }
}

pub(crate) fn animation_tree(root: &Gd<Node>, tree: &str) -> Result<Gd<Node>, BridgeError> {
    let t = find(root, tree)?;
    if !t.is_class("AnimationTree") {
        return Err(failed(format!(
            "{tree} is a {}, not an AnimationTree",
            t.get_class()
        )));
    }
    Ok(t)
}

/// The graph at `path` ("a/b": nested graph nodes; "" the tree's root), which must be a
/// `class` stored in the scene. `Ok(None)`: the tree has no root yet (`path` is "").
pub(crate) fn graph_at(
    t: &Gd<Node>,
    path: &str,
    class: &str,
) -> Result<Option<Gd<Resource>>, BridgeError> {
    let Ok(mut g) = t.get("tree_root").try_to::<Gd<Resource>>() else {
        if path.is_empty() {
            return Ok(None);
        }
        return Err(err(
            ErrorCode::NotFound,
            "the AnimationTree has no tree_root",
        ));
    };
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        let has = g.has_method("has_node")
            && g.call("has_node", &[StringName::from(seg).to_variant()])
                .to::<bool>();
        if !has {
            return Err(err(
                ErrorCode::NotFound,
                format!("no graph node {seg:?} on {path:?}"),
            ));
        }
        g = g
            .call("get_node", &[StringName::from(seg).to_variant()])
            .try_to::<Gd<Resource>>()
            .map_err(|_| err(ErrorCode::NotFound, format!("{seg:?} is not a graph node")))?;
    }
    if !g.is_class(class) {
        return Err(failed(format!(
            "{} is a {}, not a {class}",
            if path.is_empty() { "tree_root" } else { path },
            g.get_class()
        )));
    }
    if !embedded(&g) {
        return Err(file_refusal("graph", &g));
    }
    Ok(Some(g))
}

pub(crate) fn tree_add_node(
    tree: &str,
    parent: &str,
    graph: Graph,
    name: &str,
    node_type: &str,
    animation: Option<&str>,
    position: [f64; 2],
) -> Res {
    let root = scene_root()?;
    let t = animation_tree(&root, tree)?;
    let existing = graph_at(&t, parent, graph.class())?;
    let db = ClassDb::singleton();
    let class = StringName::from(node_type);
    if !(db.class_exists(&class)
        && db.can_instantiate(&class)
        && db.is_parent_class(&class, "AnimationNode"))
    {
        return Err(failed(format!(
            "{node_type} is not an AnimationNode class this Godot can create"
        )));
    }
    let mut node = db
        .instantiate(&class)
        .try_to::<Gd<Resource>>()
        .map_err(|_| failed(format!("could not create a {node_type}")))?;
    if let Some(a) = animation {
        if !has_property(&obj(&node), "animation") {
            return Err(failed(format!("a {node_type} plays no animation")));
        }
        node.set("animation", &StringName::from(a).to_variant());
    }
    if let Some(g) = &existing
        && g.clone()
            .call("has_node", &[StringName::from(name).to_variant()])
            .to::<bool>()
    {
        return Err(failed(format!("the graph already has a node {name:?}")));
    }
    let pos = Vector2::new(position[0] as f32, position[1] as f32).to_variant();
    let args = [StringName::from(name).to_variant(), node.to_variant(), pos];
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: add {name} to {tree}"));
    match &existing {
        Some(g) => {
            ur.add_do_method(&obj(g), "add_node", &args);
            ur.add_undo_method(
                &obj(g),
                "remove_node",
                &[StringName::from(name).to_variant()],
            );
        }
        None => {
            // No root yet: a new one holding the node becomes the tree's root.
            let mut g = db
                .instantiate(graph.class())
                .try_to::<Gd<Resource>>()
                .map_err(|_| failed(format!("could not create a {}", graph.class())))?;
            g.call("add_node", &args);
            ur.add_do_property(&obj(&t), "tree_root", &g.to_variant());
            ur.add_undo_property(&obj(&t), "tree_root", &Variant::nil());
            ur.add_do_reference(&obj(&g));
        }
    }
    ur.add_do_reference(&obj(&node));
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &t,
        json!({"tree": tree, "graph": parent, "name": name, "node_type": node_type}),
    ))
}

pub(crate) fn tree_connect(
    tree: &str,
    state_machine: &str,
    (from, to): (&str, &str),
    (switch_mode, advance_mode): (i32, i32),
    advance_condition: Option<&str>,
    xfade_time: f64,
) -> Res {
    let root = scene_root()?;
    let t = animation_tree(&root, tree)?;
    let mut sm = graph_at(&t, state_machine, Graph::StateMachine.class())?
        .ok_or_else(|| err(ErrorCode::NotFound, "the AnimationTree has no tree_root"))?;
    for state in [from, to] {
        if !sm
            .call("has_node", &[StringName::from(state).to_variant()])
            .to::<bool>()
        {
            return Err(err(
                ErrorCode::NotFound,
                format!("the state machine has no state {state:?}"),
            ));
        }
    }
    let ends = [
        StringName::from(from).to_variant(),
        StringName::from(to).to_variant(),
    ];
    if sm.call("has_transition", &ends).to::<bool>() {
        return Err(failed(format!("{from} -> {to} is already a transition")));
    }
    let mut tr = ClassDb::singleton()
        .instantiate("AnimationNodeStateMachineTransition")
        .try_to::<Gd<Resource>>()
        .map_err(|_| failed("could not create a transition"))?;
    tr.set("switch_mode", &switch_mode.to_variant());
    tr.set("advance_mode", &advance_mode.to_variant());
    tr.set("xfade_time", &xfade_time.to_variant());
    if let Some(c) = advance_condition {
        tr.set("advance_condition", &StringName::from(c).to_variant());
    }
    let mut ur = undo_redo()?;
    begin(
        &mut ur,
        &root,
        &format!("MCP: transition {from} -> {to} in {tree}"),
    );
    ur.add_do_method(
        &obj(&sm),
        "add_transition",
        &[ends[0].clone(), ends[1].clone(), tr.to_variant()],
    );
    ur.add_undo_method(&obj(&sm), "remove_transition", &ends);
    ur.add_do_reference(&obj(&tr));
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &t,
        json!({"tree": tree, "state_machine": state_machine, "from": from, "to": to,
               "transition_count": sm.call("get_transition_count", &[]).to::<i64>()}),
    ))
}

/// A blend tree's connections as (to, port, from), from its stored `node_connections`.
pub(crate) fn blend_connections(bt: &Gd<Resource>) -> Vec<(String, i64, String)> {
    let flat: Vec<Variant> = bt
        .get("node_connections")
        .try_to::<VarArray>()
        .map(|a| a.iter_shared().collect())
        .unwrap_or_default();
    flat.chunks_exact(3)
        .map(|c| {
            (
                c[0].to_string(),
                c[1].try_to::<i64>().unwrap_or(-1),
                c[2].to_string(),
            )
        })
        .collect()
}

pub(crate) fn tree_blend_connect(
    tree: &str,
    blend_tree: &str,
    to: &str,
    port: i32,
    from: &str,
) -> Res {
    let root = scene_root()?;
    let t = animation_tree(&root, tree)?;
    let mut bt = graph_at(&t, blend_tree, Graph::BlendTree.class())?
        .ok_or_else(|| err(ErrorCode::NotFound, "the AnimationTree has no tree_root"))?;
    for n in [to, from] {
        if !bt
            .call("has_node", &[StringName::from(n).to_variant()])
            .to::<bool>()
        {
            return Err(err(
                ErrorCode::NotFound,
                format!("the blend tree has no node {n:?}"),
            ));
        }
    }
    let inputs = bt
        .call("get_node", &[StringName::from(to).to_variant()])
        .try_to::<Gd<Resource>>()
        .map(|mut n| n.call("get_input_count", &[]).to::<i64>())
        .unwrap_or(0);
    if i64::from(port) >= inputs {
        return Err(failed(format!(
            "{to} has {inputs} input port(s); there is no port {port}"
        )));
    }
    if let Some((_, _, by)) = blend_connections(&bt)
        .into_iter()
        .find(|(n, p, _)| n == to && *p == i64::from(port))
    {
        return Err(failed(format!(
            "{to}'s port {port} is already fed by {by}: overwriting a connection is refused"
        )));
    }
    // A loop (`from` already fed, however indirectly, by `to`) is refused: Godot's own
    // connect_node does not check for one (its editor does, before calling it).
    let edges = blend_connections(&bt);
    let mut stack = vec![from.to_string()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(n) = stack.pop() {
        if n == to {
            return Err(failed(format!(
                "{from} is already fed by {to}: connecting it into {to} would make a loop"
            )));
        }
        if seen.insert(n.clone()) {
            stack.extend(
                edges
                    .iter()
                    .filter(|(c, _, _)| *c == n)
                    .map(|(_, _, f)| f.clone()),
            );
        }
    }
    let action = format!("MCP: connect {from} -> {to}:{port} in {tree}");
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &action);
    ur.add_do_method(
        &obj(&bt),
        "connect_node",
        &[
            StringName::from(to).to_variant(),
            port.to_variant(),
            StringName::from(from).to_variant(),
        ],
    );
    ur.add_undo_method(
        &obj(&bt),
        "disconnect_node",
        &[StringName::from(to).to_variant(), port.to_variant()],
    );
    ur.commit_action();
    let made = blend_connections(&bt)
        .into_iter()
        .any(|(n, p, f)| n == to && p == i64::from(port) && f == from);
    if !made {
        // Godot refused the connection (a loop, say) after the action was recorded: take
        // the action back off the history, and say what that left.
        let mut h = scene_history(&root)?;
        let effect = if h.get_current_action_name().to_string() == action && h.undo() {
            ErrorEffect::RolledBack
        } else {
            ErrorEffect::Changed
        };
        return Err(BridgeError::new(
            ErrorCode::Failed,
            format!("Godot refused to connect {from} into {to}:{port}"),
        )
        .with_effect(effect));
    }
    let _ = &mut bt;
    Ok(with_verdict(
        &root,
        &t,
        json!({"tree": tree, "blend_tree": blend_tree, "to": to, "port": port, "from": from}),
    ))
}
