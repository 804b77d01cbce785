//! Generic editor commands: groups, the selection, save-all; and the dispatch of every
//! authoring command to its domain's executor (scene, animation, ui). Same rules as
//! `exec`: validation before the first change (an error says `effect: unchanged`), every
//! edit ONE action on the edited scene's undo history, every reply stamped with the
//! persistence verdict.

use godot::classes::Node;
use godot::prelude::*;
use godot_mcp_editor_core::authoring::{Authoring, TrackKind};
use godot_mcp_editor_core::persistence::Effect;
use godot_mcp_protocol::ErrorCode;
use serde_json::{Value as Json, json};

use super::animation::*;
use super::scene::*;
use super::ui::*;
use super::{
    Res, begin, editor, err, failed, find, obj, rel_path, scene_path, scene_root, stamped,
    undo_redo, with_verdict,
};

pub(crate) fn execute(a: Authoring) -> Res {
    match a {
        Authoring::NodeInstance {
            parent,
            scene,
            name,
        } => instance(&parent, &scene, name.as_deref()),
        Authoring::NodeGroup { node, group, add } => node_group(&node, &group, add),
        Authoring::EditableChildren { node, editable } => editable_children(&node, editable),
        Authoring::Select { nodes } => select(&nodes),
        Authoring::Selection => selection(),
        Authoring::SaveAll => save_all(),
        Authoring::Connections { node } => connections(&node),
        Authoring::Properties {
            node,
            list,
            offset,
            limit,
        } => properties(&node, list, offset, limit),
        Authoring::AnimationAdd {
            player,
            library,
            name,
            length,
            loop_mode,
            step,
        } => animation_add(&player, &library, &name, length, loop_mode, step),
        Authoring::AnimationSet {
            player,
            animation,
            length,
            step,
            loop_mode,
            tracks,
        } => animation_edit(&player, &animation, "set animation", |anim| {
            animation_set(anim, length, step, loop_mode, &tracks)
        }),
        Authoring::AnimationRemove { player, animation } => animation_remove(&player, &animation),
        Authoring::TrackAdd {
            player,
            animation,
            kind,
            path,
            update_mode,
            interpolation,
        } => animation_edit(&player, &animation, "add track", |anim| {
            let track = anim
                .call("add_track", &[kind.ord().to_variant()])
                .to::<i32>();
            anim.call(
                "track_set_path",
                &[
                    track.to_variant(),
                    NodePath::from(path.as_str()).to_variant(),
                ],
            );
            let mut out =
                json!({"track": track, "track_type": TrackKind::name_of(kind.ord()), "path": path});
            track_modes(anim, track, update_mode, interpolation, &mut out)?;
            Ok(out)
        }),
        Authoring::TrackRemove {
            player,
            animation,
            track,
        } => animation_edit(&player, &animation, "remove track", |anim| {
            check_track(anim, track)?;
            anim.call("remove_track", &[track.to_variant()]);
            Ok(json!({"track": track}))
        }),
        Authoring::KeyInsert {
            player,
            animation,
            track,
            time,
            value,
            transition,
        } => animation_edit(&player, &animation, "insert key", |anim| {
            let kind = check_track(anim, track)?;
            if find_key(anim, track, time) >= 0 {
                return Err(failed(format!(
                    "track {track} already has a key at {time}s: remove it first \
                     (remove_animation_key) so that nothing is overwritten"
                )));
            }
            // A value track's key takes the type of the property it animates: an agent's
            // `-20` for `position:y` is the float -20.0 (an int key was saved as `-20`).
            let value = match kind {
                0 => typed_for_track(&player, anim, track, &value)?,
                _ => value.clone(),
            };
            let v = key_value(kind, &value)?;
            let key = match kind {
                6 => anim.call(
                    "bezier_track_insert_key",
                    &[track.to_variant(), time.to_variant(), v],
                ),
                7 => anim.call(
                    "audio_track_insert_key",
                    &[track.to_variant(), time.to_variant(), v],
                ),
                _ => anim.call(
                    "track_insert_key",
                    &[
                        track.to_variant(),
                        time.to_variant(),
                        v,
                        transition.to_variant(),
                    ],
                ),
            }
            .to::<i64>();
            if key < 0 {
                return Err(failed(format!(
                    "Godot refused the key for a {} track",
                    TrackKind::name_of(kind)
                )));
            }
            Ok(json!({"track": track, "key": key, "time": time}))
        }),
        Authoring::KeyRemove {
            player,
            animation,
            track,
            time,
        } => animation_edit(&player, &animation, "remove key", |anim| {
            check_track(anim, track)?;
            let key = find_key(anim, track, time);
            if key < 0 {
                return Err(err(
                    ErrorCode::NotFound,
                    format!("track {track} has no key at {time}s"),
                ));
            }
            anim.call("track_remove_key", &[track.to_variant(), key.to_variant()]);
            Ok(json!({"track": track, "time": time}))
        }),
        Authoring::AnimationGet {
            player,
            animation,
            max_keys,
        } => {
            let root = scene_root()?;
            let (_p, found) = resolve(&root, &player, &animation)?;
            let mut out = describe(&found.animation, max_keys);
            out["player"] = json!(player);
            out["animation"] = json!(animation);
            out["scene"] = json!(scene_path(&root));
            Ok(out)
        }
        Authoring::TreeAddNode {
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
        Authoring::TreeConnect {
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
        Authoring::TreeBlendConnect {
            tree,
            blend_tree,
            to,
            port,
            from,
        } => tree_blend_connect(&tree, &blend_tree, &to, port, &from),
        Authoring::ThemeSetItem {
            path,
            theme_type,
            kind,
            name,
            value,
        } => theme_set_item(&path, &theme_type, kind, &name, &value),
        Authoring::ThemeOverride {
            node,
            kind,
            name,
            value,
        } => theme_override(&node, kind, &name, &value),
        Authoring::AnchorsPreset { node, preset } => anchors_preset(&node, preset),
        Authoring::AddContainer {
            parent,
            container_type,
            name,
            separation,
            columns,
            margin,
        } => add_container(&parent, &container_type, &name, separation, columns, margin),
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
