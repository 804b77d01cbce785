//! Generic editor commands: groups, the selection, save-all. Same rules as every
//! executor: validation before the first change (an error says `effect: unchanged`), every
//! edit ONE action on the edited scene's undo history, every reply stamped with the
//! persistence verdict.

use godot::classes::Node;
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_editor_core::persistence::Effect;
use godot_mcp_protocol::ErrorCode;
use serde_json::{Value as Json, json};

use super::ctx::{
    Res, begin, editor, err, failed, find, misrouted, obj, rel_path, scene_path, scene_root,
    stamped, undo_redo, with_verdict,
};

pub(crate) fn run(a: Command) -> Res {
    match a {
        Command::NodeGroup { node, group, add } => node_group(&node, &group, add),
        Command::Select { nodes } => select(&nodes),
        Command::Selection => selection(),
        Command::SaveAll => save_all(),
        _ => Err(misrouted("editor")),
    }
}

pub(crate) fn node_group(node: &str, group: &str, add: bool) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let member = n.is_in_group(group);
    if add && member {
        return Err(failed(format!("{node} is already in group {group}")));
    }
    if !add && !member {
        return Err(err(
            ErrorCode::NotFound,
            format!("{node} is not in group {group}"),
        ));
    }
    let join = [
        StringName::from(group).to_variant(),
        true.to_variant(), // persistent: saved with the scene
    ];
    let leave = [StringName::from(group).to_variant()];
    let mut ur = undo_redo()?;
    let verb = if add { "add" } else { "remove" };
    begin(&mut ur, &root, &format!("MCP: {verb} {node} group {group}"));
    if add {
        ur.add_do_method(&obj(&n), "add_to_group", &join);
        ur.add_undo_method(&obj(&n), "remove_from_group", &leave);
    } else {
        ur.add_do_method(&obj(&n), "remove_from_group", &leave);
        ur.add_undo_method(&obj(&n), "add_to_group", &join);
    }
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "group": group, "groups": groups(&n)}),
    ))
}

pub(crate) fn groups(n: &Gd<Node>) -> Vec<String> {
    n.get_groups()
        .iter_shared()
        .map(|g| g.to_string())
        .filter(|g| !g.starts_with('_'))
        .collect()
}

pub(crate) fn select(nodes: &[String]) -> Res {
    let root = scene_root()?;
    let found = nodes
        .iter()
        .map(|p| find(&root, p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sel = editor()
        .get_selection()
        .ok_or_else(|| err(ErrorCode::Internal, "the editor has no selection"))?;
    sel.clear();
    for n in &found {
        sel.add_node(n);
    }
    selection()
}

pub(crate) fn selection() -> Res {
    let root = scene_root()?;
    let sel = editor()
        .get_selection()
        .ok_or_else(|| err(ErrorCode::Internal, "the editor has no selection"))?;
    let nodes: Vec<Json> = sel
        .get_selected_nodes()
        .iter_shared()
        .map(|n| json!({"node": rel_path(&root, &n), "type": n.get_class().to_string()}))
        .collect();
    Ok(json!({"scene": scene_path(&root), "nodes": nodes}))
}

/// Saves every open scene the editor saves, and names them (`scenes`): Godot 4.4 writes
/// every open scene that has a file; an editor with `get_unsaved_scenes` only those with
/// unsaved changes. Godot's save_all_scenes reports nothing: the server proves each named
/// file from disk.
pub(crate) fn save_all() -> Res {
    let root = scene_root()?;
    let active = scene_path(&root);
    let mut ei = editor();
    let open: Vec<String> = ei
        .get_open_scenes()
        .as_slice()
        .iter()
        .map(|s| s.to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let scenes: Vec<String> = if ei.has_method("get_unsaved_scenes") {
        let unsaved = ei
            .call("get_unsaved_scenes", &[])
            .try_to::<PackedStringArray>()
            .map_err(|e| err(ErrorCode::Internal, format!("get_unsaved_scenes: {e}")))?;
        let unsaved: Vec<String> = unsaved.as_slice().iter().map(|s| s.to_string()).collect();
        open.into_iter().filter(|s| unsaved.contains(s)).collect()
    } else {
        open
    };
    ei.save_all_scenes();
    Ok(stamped(
        Effect::SceneSave,
        &active,
        json!({"scene": active, "scenes": scenes}),
    ))
}
