//! The authoring executors: instancing, groups, editable children, selection, save-all,
//! live reads of a node's connections and properties, animation editing, theme items,
//! Control overrides, anchors and containers. Same rules as `exec`: validation before the
//! first change (an error says `effect: unchanged`), every edit ONE action on the edited
//! scene's undo history, every reply stamped with the persistence verdict.
//!
//! Undo records whole states, not inverse steps, wherever an edit is more than one call:
//! an animation edit is applied to a copy and undone by restoring a snapshot through one
//! call ([`GodotMcpAnimationState`]), a theme item by one call that sets (or clears) it and
//! saves the file ([`GodotMcpThemeItem`]), anchors by the editor's own `_edit_set_state`.
//! One call per direction cannot be split or reordered by the undo history.

use godot::classes::{
    Animation, AnimationLibrary, ClassDb, Control, Node, Object, PackedScene, Resource,
    ResourceLoader, ResourceSaver, StyleBoxFlat,
};
use godot::global::Error as GdError;
use godot::prelude::*;
use godot_mcp_editor_core::authoring::{
    Authoring, Graph, LoopMode, ThemeKind, ThemeValue, TrackKind,
};
use godot_mcp_editor_core::persistence::Effect;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::{Value as Json, json};

use crate::exec::{
    Res, add_child_action, begin, editor, err, failed, find, new_node, obj, rel_path,
    scene_history, scene_path, scene_root, stamped, undo_redo, with_verdict,
};
use crate::variant::{from_variant, has_property, to_variant};

/// `Object.CONNECT_PERSIST`: the connection is saved with the scene.
const CONNECT_PERSIST: i64 = 2;
/// `PropertyUsageFlags`: STORAGE, EDITOR; and the group/category markers that are not
/// properties.
const USAGE_STORAGE: i64 = 2;
const USAGE_EDITOR: i64 = 4;
const USAGE_MARKERS: i64 = 64 | 128 | 256;
/// `Animation.FIND_MODE_APPROX`.
const FIND_APPROX: i64 = 1;

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
        } => animation_add(&player, &library, &name, length, loop_mode),
        Authoring::AnimationRemove { player, animation } => animation_remove(&player, &animation),
        Authoring::TrackAdd {
            player,
            animation,
            kind,
            path,
        } => animation_edit(&player, &animation, "add track", |anim| {
            let track = anim
                .call("add_track", &[kind.ord().to_variant()])
                .to::<i64>();
            anim.call(
                "track_set_path",
                &[
                    track.to_variant(),
                    NodePath::from(path.as_str()).to_variant(),
                ],
            );
            Ok(json!({"track": track, "track_type": TrackKind::name_of(kind.ord()), "path": path}))
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

// ---------------------------------------------------------------------------------
// Scene editing, the rest
// ---------------------------------------------------------------------------------

/// Whether `node` or anything under it instances `scene` (instancing it again would be a
/// cycle).
fn instances(node: &Gd<Node>, scene: &str) -> bool {
    node.get_scene_file_path() == scene
        || node
            .get_children()
            .iter_shared()
            .any(|c| instances(&c, scene))
}

fn instance(parent: &str, scene: &str, name: Option<&str>) -> Res {
    let root = scene_root()?;
    let parent_node = find(&root, parent)?;
    let packed = ResourceLoader::singleton()
        .load(scene)
        .and_then(|r| r.try_cast::<PackedScene>().ok())
        .ok_or_else(|| {
            err(
                ErrorCode::NotFound,
                format!("{scene} is not a scene that loads"),
            )
        })?;
    if scene == scene_path(&root) {
        return Err(failed(format!(
            "{scene} is the edited scene: a scene cannot instance itself"
        )));
    }
    let mut inst = packed
        .instantiate_ex()
        .edit_state(godot::classes::packed_scene::GenEditState::INSTANCE)
        .done()
        .ok_or_else(|| failed(format!("{scene} did not instantiate")))?;
    if instances(&inst, &scene_path(&root)) {
        inst.free();
        return Err(failed(format!(
            "{scene} instances the edited scene: that would be a cycle"
        )));
    }
    inst.set_scene_file_path(scene);
    if let Some(n) = name {
        inst.set_name(n);
    }
    add_child_action(
        &root,
        &parent_node,
        &inst,
        &format!("MCP: instance {scene}"),
    )?;
    Ok(with_verdict(
        &root,
        &inst,
        json!({"node": rel_path(&root, &inst), "instance": scene}),
    ))
}

fn node_group(node: &str, group: &str, add: bool) -> Res {
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

fn groups(n: &Gd<Node>) -> Vec<String> {
    n.get_groups()
        .iter_shared()
        .map(|g| g.to_string())
        .filter(|g| !g.starts_with('_'))
        .collect()
}

fn editable_children(node: &str, editable: bool) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    if n == root || n.get_scene_file_path().is_empty() {
        return Err(failed(format!(
            "{node} is not an instanced scene: only an instance has editable children"
        )));
    }
    let was = root.is_editable_instance(&n);
    if was == editable {
        return Err(failed(format!(
            "{node}'s children are already {}",
            if editable { "editable" } else { "not editable" }
        )));
    }
    let mut ur = undo_redo()?;
    begin(
        &mut ur,
        &root,
        &format!("MCP: editable children of {node}: {editable}"),
    );
    ur.add_do_method(
        &obj(&root),
        "set_editable_instance",
        &[n.to_variant(), editable.to_variant()],
    );
    ur.add_undo_method(
        &obj(&root),
        "set_editable_instance",
        &[n.to_variant(), was.to_variant()],
    );
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "editable": root.is_editable_instance(&n)}),
    ))
}

fn select(nodes: &[String]) -> Res {
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

fn selection() -> Res {
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
fn save_all() -> Res {
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

/// Where a connection's other end is: a path from the scene root when it is a node of the
/// edited scene's tree, else its class.
fn endpoint(root: &Gd<Node>, o: Option<Gd<Object>>) -> Json {
    match o {
        Some(o) => match o.clone().try_cast::<Node>() {
            Ok(n) if n == *root || root.is_ancestor_of(&n) => json!(rel_path(root, &n)),
            Ok(n) => json!(format!("<{} outside the scene>", n.get_class())),
            Err(o) => json!(format!("<{}>", o.get_class())),
        },
        None => Json::Null,
    }
}

fn connections(node: &str) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let mut outgoing = Vec::new();
    for sig in n.get_signal_list().iter_shared() {
        let Some(name) = sig.get("name") else {
            continue;
        };
        let name = name.to_string();
        for c in n.get_signal_connection_list(name.as_str()).iter_shared() {
            let flags = c.get("flags").map(|f| f.to::<i64>()).unwrap_or(0);
            let callable = c.get("callable").and_then(|v| v.try_to::<Callable>().ok());
            outgoing.push(json!({
                "signal": name,
                "to": endpoint(&root, callable.as_ref().and_then(Callable::object)),
                "method": callable.as_ref().and_then(Callable::method_name).map(|m| m.to_string()),
                "flags": flags,
                "persistent": flags & CONNECT_PERSIST != 0,
            }));
        }
    }
    let mut incoming = Vec::new();
    for c in n.get_incoming_connections().iter_shared() {
        let flags = c.get("flags").map(|f| f.to::<i64>()).unwrap_or(0);
        let signal = c.get("signal").and_then(|v| v.try_to::<Signal>().ok());
        let callable = c.get("callable").and_then(|v| v.try_to::<Callable>().ok());
        incoming.push(json!({
            "from": endpoint(&root, signal.as_ref().and_then(Signal::object)),
            "signal": signal.as_ref().map(|s| s.name().to_string()),
            "method": callable.as_ref().and_then(Callable::method_name).map(|m| m.to_string()),
            "flags": flags,
            "persistent": flags & CONNECT_PERSIST != 0,
        }));
    }
    Ok(
        json!({"scene": scene_path(&root), "node": node, "outgoing": outgoing, "incoming": incoming}),
    )
}

fn properties(node: &str, list: bool, offset: usize, limit: usize) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let all: Vec<VarDictionary> = n
        .get_property_list()
        .iter_shared()
        .filter(|d| {
            let usage = d.get("usage").map(|u| u.to::<i64>()).unwrap_or(0);
            usage & USAGE_MARKERS == 0 && usage & (USAGE_STORAGE | USAGE_EDITOR) != 0
        })
        .collect();
    let total = all.len();
    let page: Vec<Json> = all
        .iter()
        .skip(offset)
        .take(limit)
        .map(|d| {
            let get = |k: &str| d.get(k).unwrap_or_default();
            let name = get("name").to_string();
            let ty = get("type").to::<i64>();
            let type_name = godot_mcp_protocol::variant_wire::type_name(ty as u32);
            let class = get("class_name").to_string();
            if list {
                json!({
                    "name": name,
                    "type": type_name,
                    "class_name": (!class.is_empty()).then_some(class),
                    "hint": get("hint").to::<i64>(),
                    "hint_string": get("hint_string").to_string(),
                    "usage": get("usage").to::<i64>(),
                })
            } else {
                json!({
                    "name": name,
                    "type": type_name,
                    "value": from_variant(&n.get(name.as_str())).to_json(),
                })
            }
        })
        .collect();
    let next = (offset + page.len() < total).then_some(offset + page.len());
    Ok(json!({
        "scene": scene_path(&root),
        "node": node,
        "class": n.get_class().to_string(),
        "total": total,
        "next_offset": next,
        "properties": page,
    }))
}

// ---------------------------------------------------------------------------------
// Animation
// ---------------------------------------------------------------------------------

/// The full stored state of an animation, restored onto the animation being edited in one
/// call: the undo history's do and undo of every animation edit.
#[derive(GodotClass)]
#[class(tool, no_init, base = RefCounted)]
pub struct GodotMcpAnimationState {
    state: Gd<Animation>,
}

#[godot_api]
impl GodotMcpAnimationState {
    /// Make `target` what the snapshot holds: cleared, then every stored property set in
    /// the order the property list gives (the order Godot loads an animation in).
    #[func]
    fn restore(&self, mut target: Gd<Animation>) {
        target.clear();
        for d in self.state.get_property_list().iter_shared() {
            let usage = d.get("usage").map(|u| u.to::<i64>()).unwrap_or(0);
            if usage & USAGE_STORAGE == 0 || usage & USAGE_MARKERS != 0 {
                continue;
            }
            let name = d.get("name").unwrap_or_default().to_string();
            if name == "resource_path" || name == "resource_scene_unique_id" || name == "script" {
                continue;
            }
            target.set(name.as_str(), &self.state.get(name.as_str()));
        }
    }
}

fn snapshot(anim: &Gd<Animation>) -> Result<Gd<Animation>, BridgeError> {
    Ok(anim.duplicate_resource())
}

/// Whether `res` is stored inside a scene or resource file (not in a file of its own).
fn embedded(res: &Gd<impl Inherits<Resource>>) -> bool {
    let path = res.clone().upcast::<Resource>().get_path().to_string();
    path.is_empty() || path.contains("::")
}

struct FoundAnimation {
    library: Gd<AnimationLibrary>,
    name: String,
    animation: Gd<Animation>,
}

/// `lib/name` or `name` (the default library).
fn split_name(animation: &str) -> (&str, &str) {
    animation.split_once('/').unwrap_or(("", animation))
}

fn player_node(root: &Gd<Node>, player: &str) -> Result<Gd<Node>, BridgeError> {
    let p = find(root, player)?;
    if !p.is_class("AnimationMixer") {
        return Err(failed(format!(
            "{player} is a {}, not an AnimationPlayer or AnimationTree",
            p.get_class()
        )));
    }
    Ok(p)
}

fn library_of(p: &Gd<Node>, lib: &str) -> Option<Gd<AnimationLibrary>> {
    if !p
        .clone()
        .call(
            "has_animation_library",
            &[StringName::from(lib).to_variant()],
        )
        .to::<bool>()
    {
        return None;
    }
    p.clone()
        .call(
            "get_animation_library",
            &[StringName::from(lib).to_variant()],
        )
        .try_to::<Gd<AnimationLibrary>>()
        .ok()
}

fn resolve(
    root: &Gd<Node>,
    player: &str,
    animation: &str,
) -> Result<(Gd<Node>, FoundAnimation), BridgeError> {
    let p = player_node(root, player)?;
    let (lib, name) = split_name(animation);
    let library = library_of(&p, lib).ok_or_else(|| {
        err(
            ErrorCode::NotFound,
            format!("{player} has no animation library {lib:?}"),
        )
    })?;
    let anim = library.get_animation(name).ok_or_else(|| {
        err(
            ErrorCode::NotFound,
            format!("{player} has no animation {animation:?}"),
        )
    })?;
    Ok((
        p,
        FoundAnimation {
            library,
            name: name.into(),
            animation: anim,
        },
    ))
}

fn file_refusal(what: &str, res: &Gd<impl Inherits<Resource>>) -> BridgeError {
    failed(format!(
        "the {what} is saved in its own file ({}): open and edit that file; this edits \
         animations stored in the scene",
        res.clone().upcast::<Resource>().get_path()
    ))
}

/// Apply `edit` to a copy of the animation and make the copy's state the new one, as ONE
/// undo action whose undo restores the old state.
fn animation_edit(
    player: &str,
    animation: &str,
    what: &str,
    edit: impl FnOnce(&mut Gd<Animation>) -> Result<Json, BridgeError>,
) -> Res {
    let root = scene_root()?;
    let (p, found) = resolve(&root, player, animation)?;
    if !embedded(&found.library) {
        return Err(file_refusal("animation library", &found.library));
    }
    if !embedded(&found.animation) {
        return Err(file_refusal("animation", &found.animation));
    }
    let before = snapshot(&found.animation)?;
    let mut after = snapshot(&found.animation)?;
    let mut out = edit(&mut after)?;
    let undo_state = Gd::from_object(GodotMcpAnimationState { state: before });
    let do_state = Gd::from_object(GodotMcpAnimationState { state: after });
    let target = found.animation.to_variant();
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: {what} in {animation}"));
    ur.add_do_method(&obj(&do_state), "restore", std::slice::from_ref(&target));
    ur.add_undo_method(&obj(&undo_state), "restore", std::slice::from_ref(&target));
    ur.add_do_reference(&obj(&do_state));
    ur.add_undo_reference(&obj(&undo_state));
    ur.commit_action();
    out["player"] = json!(player);
    out["animation"] = json!(animation);
    out["track_count"] = json!(found.animation.get_track_count());
    Ok(with_verdict(&root, &p, out))
}

fn check_track(anim: &Gd<Animation>, track: i32) -> Result<i32, BridgeError> {
    let count = anim.get_track_count();
    if track >= count {
        return Err(err(
            ErrorCode::NotFound,
            format!("the animation has {count} track(s); there is no track {track}"),
        ));
    }
    Ok(anim
        .clone()
        .call("track_get_type", &[track.to_variant()])
        .to::<i32>())
}

fn find_key(anim: &Gd<Animation>, track: i32, time: f64) -> i64 {
    anim.clone()
        .call(
            "track_find_key",
            &[
                track.to_variant(),
                time.to_variant(),
                FIND_APPROX.to_variant(),
            ],
        )
        .to::<i64>()
}

/// A key's value in the form its track kind stores: a rotation is given as Euler angles
/// (radians, a Vector3) and stored as a Quaternion; an audio key is its stream's file.
fn key_value(
    kind: i32,
    value: &godot_mcp_editor_core::value::Value,
) -> Result<Variant, BridgeError> {
    use godot_mcp_editor_core::value::Value as V;
    let v = to_variant(value).map_err(failed)?;
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(failed(format!(
                "a {} key's value is {what}",
                TrackKind::name_of(kind)
            )))
        }
    };
    Ok(match kind {
        1 | 3 => {
            want(matches!(value, V::Vector3(_)), "a Vector3")?;
            v
        }
        2 => {
            want(
                matches!(value, V::Vector3(_)),
                "a Vector3 of Euler angles (radians)",
            )?;
            Quaternion::from_euler(v.to::<Vector3>()).to_variant()
        }
        4 | 6 => {
            want(matches!(value, V::Float(_) | V::Int(_)), "a number")?;
            (v.try_to::<f64>().unwrap_or_default()).to_variant()
        }
        5 => {
            want(
                matches!(value, V::Dictionary(d) if d.iter().any(|(k, _)| k == "method")),
                "{\"method\": name, \"args\": [..]}",
            )?;
            let mut d = v.to::<VarDictionary>();
            if d.get("args").is_none() {
                d.set("args", &VarArray::new());
            }
            d.to_variant()
        }
        7 => {
            want(
                matches!(value, V::Resource(_)),
                "an AudioStream's res:// file",
            )?;
            v
        }
        8 => {
            want(matches!(value, V::String(_)), "an animation name")?;
            StringName::from(v.to::<GString>().to_string().as_str()).to_variant()
        }
        _ => v,
    })
}

/// The live animation: length, loop mode, step, tracks and their keys.
fn describe(anim: &Gd<Animation>, max_keys: usize) -> Json {
    let mut a = anim.clone();
    let tracks: Vec<Json> = (0..anim.get_track_count())
        .map(|t| {
            let kind = a.call("track_get_type", &[t.to_variant()]).to::<i32>();
            let count = anim.track_get_key_count(t);
            let keys: Vec<Json> = (0..count)
                .take(max_keys)
                .map(|k| {
                    let value = if kind == 6 {
                        a.call("bezier_track_get_key_value", &[t.to_variant(), k.to_variant()])
                    } else if kind == 7 {
                        a.call("audio_track_get_key_stream", &[t.to_variant(), k.to_variant()])
                    } else {
                        anim.track_get_key_value(t, k)
                    };
                    json!({
                        "time": anim.track_get_key_time(t, k),
                        "transition": anim.track_get_key_transition(t, k),
                        "value": from_variant(&value).to_json(),
                    })
                })
                .collect();
            json!({
                "index": t,
                "type": TrackKind::name_of(kind),
                "path": anim.track_get_path(t).to_string(),
                "interpolation": a.call("track_get_interpolation_type", &[t.to_variant()]).to::<i64>(),
                "key_count": count,
                "keys": keys,
                "truncated": count as usize > max_keys,
            })
        })
        .collect();
    json!({
        "length": anim.get_length(),
        "loop_mode": LoopMode::name_of(a.call("get_loop_mode", &[]).to::<i32>()),
        "step": a.call("get_step", &[]).to::<f64>(),
        "tracks": tracks,
    })
}

fn animation_add(player: &str, library: &str, name: &str, length: f64, loop_mode: LoopMode) -> Res {
    let root = scene_root()?;
    let mut p = player_node(&root, player)?;
    let id = if library.is_empty() {
        name.to_string()
    } else {
        format!("{library}/{name}")
    };
    let existing = library_of(&p, library);
    if let Some(lib) = &existing {
        if !embedded(lib) {
            return Err(file_refusal("animation library", lib));
        }
        if lib.has_animation(name) {
            return Err(failed(format!("{player} already has an animation {id:?}")));
        }
    }
    let mut anim = Animation::new_gd();
    anim.set_length(length as f32);
    anim.call("set_loop_mode", &[loop_mode.ord().to_variant()]);
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: add animation {id}"));
    let args = [StringName::from(name).to_variant(), anim.to_variant()];
    match existing {
        Some(lib) => {
            ur.add_do_method(&obj(&lib), "add_animation", &args);
            ur.add_undo_method(
                &obj(&lib),
                "remove_animation",
                &[StringName::from(name).to_variant()],
            );
        }
        None => {
            // A new library holding the animation, added to the player in one call.
            let mut lib = AnimationLibrary::new_gd();
            lib.add_animation(name, &anim);
            let lib_args = [StringName::from(library).to_variant(), lib.to_variant()];
            ur.add_do_method(&obj(&p), "add_animation_library", &lib_args);
            ur.add_undo_method(
                &obj(&p),
                "remove_animation_library",
                &[StringName::from(library).to_variant()],
            );
            ur.add_do_reference(&obj(&lib));
        }
    }
    ur.add_do_reference(&obj(&anim));
    ur.commit_action();
    let _ = &mut p;
    Ok(with_verdict(
        &root,
        &p,
        json!({"player": player, "animation": id, "length": anim.get_length(),
               "loop_mode": LoopMode::name_of(loop_mode.ord())}),
    ))
}

fn animation_remove(player: &str, animation: &str) -> Res {
    let root = scene_root()?;
    let (p, found) = resolve(&root, player, animation)?;
    if !embedded(&found.library) {
        return Err(file_refusal("animation library", &found.library));
    }
    let name = StringName::from(found.name.as_str()).to_variant();
    let mut ur = undo_redo()?;
    begin(
        &mut ur,
        &root,
        &format!("MCP: remove animation {animation}"),
    );
    ur.add_do_method(
        &obj(&found.library),
        "remove_animation",
        std::slice::from_ref(&name),
    );
    ur.add_undo_method(
        &obj(&found.library),
        "add_animation",
        &[name.clone(), found.animation.to_variant()],
    );
    ur.add_undo_reference(&obj(&found.animation));
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &p,
        json!({"player": player, "animation": animation}),
    ))
}

// ---------------------------------------------------------------------------------
// AnimationTree graphs
// ---------------------------------------------------------------------------------

fn animation_tree(root: &Gd<Node>, tree: &str) -> Result<Gd<Node>, BridgeError> {
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
fn graph_at(t: &Gd<Node>, path: &str, class: &str) -> Result<Option<Gd<Resource>>, BridgeError> {
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

fn tree_add_node(
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

fn tree_connect(
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
fn blend_connections(bt: &Gd<Resource>) -> Vec<(String, i64, String)> {
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

fn tree_blend_connect(tree: &str, blend_tree: &str, to: &str, port: i32, from: &str) -> Res {
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

// ---------------------------------------------------------------------------------
// Theme and UI
// ---------------------------------------------------------------------------------

/// One theme item's state (set to `value`, or absent), applied and saved in one call: the
/// do and the undo of a theme item edit, so that undo leaves the file as it was.
#[derive(GodotClass)]
#[class(tool, no_init, base = RefCounted)]
pub struct GodotMcpThemeItem {
    kind: i32,
    name: StringName,
    theme_type: StringName,
    /// `None`: the item is absent.
    value: Option<Variant>,
    path: GString,
    /// The last save's result (`Error` as an integer).
    last_error: i64,
}

#[godot_api]
impl GodotMcpThemeItem {
    #[func]
    fn apply(&mut self, mut theme: Gd<Resource>) {
        let (kind, name, ty) = (
            self.kind.to_variant(),
            self.name.to_variant(),
            self.theme_type.to_variant(),
        );
        match &self.value {
            Some(v) => theme.call("set_theme_item", &[kind, name, ty, v.clone()]),
            None => theme.call("clear_theme_item", &[kind, name, ty]),
        };
        let e = ResourceSaver::singleton()
            .save_ex(&theme)
            .path(&self.path)
            .done();
        self.last_error = e.ord() as i64;
    }
}

/// A loaded resource of `class` (or a subclass) at `path`.
fn load_as(path: &str, class: &str) -> Result<Gd<Resource>, BridgeError> {
    let r = ResourceLoader::singleton()
        .load(path)
        .ok_or_else(|| err(ErrorCode::NotFound, format!("{path} does not load")))?;
    if !r.is_class(class) {
        return Err(failed(format!(
            "{path} is a {}, not a {class}",
            r.get_class()
        )));
    }
    Ok(r)
}

/// The Godot value of a theme item or override (`None`: remove it).
fn theme_variant(kind: ThemeKind, value: &ThemeValue) -> Result<Option<Variant>, BridgeError> {
    Ok(Some(match value {
        ThemeValue::Remove => return Ok(None),
        ThemeValue::Plain(v) => to_variant(v).map_err(failed)?,
        ThemeValue::File(path) => {
            let class = match kind {
                ThemeKind::Font => "Font",
                ThemeKind::Icon => "Texture2D",
                _ => "StyleBox",
            };
            load_as(path, class)?.to_variant()
        }
        ThemeValue::StyleBoxFlat(props) => {
            let mut sb = StyleBoxFlat::new_gd();
            for (k, v) in props {
                if !has_property(&obj(&sb), k) {
                    return Err(failed(format!("StyleBoxFlat has no property {k}")));
                }
                let gv = to_variant(v).map_err(failed)?;
                let current = sb.get(k.as_str());
                let gv = if current.get_type() == VariantType::FLOAT
                    && gv.get_type() == VariantType::INT
                {
                    (gv.to::<i64>() as f64).to_variant()
                } else {
                    gv
                };
                if current.get_type() != gv.get_type() && !current.is_nil() {
                    return Err(failed(format!(
                        "StyleBoxFlat.{k} is a {:?}, not a {:?}",
                        current.get_type(),
                        gv.get_type()
                    )));
                }
                sb.set(k.as_str(), &gv);
            }
            sb.to_variant()
        }
    }))
}

fn theme_set_item(
    path: &str,
    theme_type: &str,
    kind: ThemeKind,
    name: &str,
    value: &ThemeValue,
) -> Res {
    let root = scene_root()?;
    let theme = load_as(path, "Theme")?;
    if !embedded(&theme) && theme.get_path() != path {
        return Err(failed(format!("{path} loaded as {}", theme.get_path())));
    }
    let new = theme_variant(kind, value)?;
    let mut t = theme.clone();
    let key = [
        kind.ord().to_variant(),
        StringName::from(name).to_variant(),
        StringName::from(theme_type).to_variant(),
    ];
    let old = if t.call("has_theme_item", &key).to::<bool>() {
        Some(t.call("get_theme_item", &key))
    } else {
        None
    };
    let state = |value: Option<Variant>| {
        Gd::from_object(GodotMcpThemeItem {
            kind: kind.ord(),
            name: name.into(),
            theme_type: theme_type.into(),
            value,
            path: path.into(),
            last_error: 0,
        })
    };
    let do_state = state(new);
    let undo_state = state(old);
    let action = format!("MCP: theme {path} {theme_type}/{name}");
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &action);
    let target = [theme.to_variant()];
    ur.add_do_method(&obj(&do_state), "apply", &target);
    ur.add_undo_method(&obj(&undo_state), "apply", &target);
    ur.add_do_reference(&obj(&do_state));
    ur.add_undo_reference(&obj(&undo_state));
    ur.commit_action();
    let saved = do_state.bind().last_error;
    if saved != GdError::OK.ord() as i64 {
        // Undo our own action (its undo restores the item and saves again), and say what
        // that left.
        let mut h = scene_history(&root)?;
        let effect = if h.get_current_action_name().to_string() == action
            && h.undo()
            && undo_state.bind().last_error == GdError::OK.ord() as i64
        {
            ErrorEffect::RolledBack
        } else {
            ErrorEffect::Changed
        };
        return Err(BridgeError::new(
            ErrorCode::Failed,
            format!("saving {path} failed (error {saved}); the item was set, then undone"),
        )
        .with_effect(effect));
    }
    let now = t.call("get_theme_item", &key);
    Ok(stamped(
        Effect::ResourceSave,
        path,
        json!({"path": path, "theme_type": theme_type, "name": name,
               "value": from_variant(&now).to_json()}),
    ))
}

fn control(root: &Gd<Node>, node: &str) -> Result<Gd<Node>, BridgeError> {
    let n = find(root, node)?;
    if !n.is_class("Control") {
        return Err(failed(format!(
            "{node} is a {}, not a Control",
            n.get_class()
        )));
    }
    Ok(n)
}

fn theme_override(node: &str, kind: ThemeKind, name: &str, value: &ThemeValue) -> Res {
    let root = scene_root()?;
    let n = control(&root, node)?;
    let property = kind.override_property(name);
    let new = theme_variant(kind, value)?.unwrap_or_default();
    let old = n.get(property.as_str());
    if new.is_nil() && old.is_nil() {
        return Err(err(
            ErrorCode::NotFound,
            format!("{node} has no {property} override"),
        ));
    }
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: override {node} {property}"));
    ur.add_do_property(&obj(&n), property.as_str(), &new);
    ur.add_undo_property(&obj(&n), property.as_str(), &old);
    ur.commit_action();
    let now = n.get(property.as_str());
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "property": property, "value": from_variant(&now).to_json()}),
    ))
}

fn anchors_preset(node: &str, preset: i32) -> Res {
    let root = scene_root()?;
    let mut n = control(&root, node)?;
    if n.get_parent().is_some_and(|p| p.is_class("Container")) {
        return Err(failed(format!(
            "{node} is in a Container, which sets its position and size: anchors do not apply"
        )));
    }
    if !n.has_method("_edit_get_state") {
        return Err(failed(
            "this Godot has no Control._edit_get_state (an editor build is needed)",
        ));
    }
    let old = n.call("_edit_get_state", &[]);
    // What the editor's own anchor preset menu does: anchors layout mode, then the preset
    // (anchors, offsets as Godot computes them, grow direction); undo restores the state.
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: anchors preset of {node}"));
    ur.add_do_property(&obj(&n), "layout_mode", &1.to_variant());
    ur.add_do_property(&obj(&n), "anchors_preset", &preset.to_variant());
    ur.add_undo_method(&obj(&n), "_edit_set_state", &[old]);
    ur.commit_action();
    let c = n.clone().cast::<Control>();
    use godot::builtin::Side;
    let sides = [Side::LEFT, Side::TOP, Side::RIGHT, Side::BOTTOM];
    let anchors: Vec<f32> = sides.iter().map(|s| c.get_anchor(*s)).collect();
    let offsets: Vec<f32> = sides.iter().map(|s| c.get_offset(*s)).collect();
    let _ = &mut n;
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "preset": godot_mcp_editor_core::authoring::LAYOUT_PRESETS[preset as usize],
               "anchors": anchors, "offsets": offsets}),
    ))
}

fn add_container(
    parent: &str,
    container_type: &str,
    name: &str,
    separation: Option<i64>,
    columns: Option<i64>,
    margin: Option<i64>,
) -> Res {
    let root = scene_root()?;
    let parent_node = find(&root, parent)?;
    let mut child = new_node(container_type, name)?;
    if let Some(s) = separation {
        let names: &[&str] = match container_type {
            "HBoxContainer" | "VBoxContainer" => &["separation"],
            _ => &["h_separation", "v_separation"],
        };
        for n in names {
            child.set(
                ThemeKind::Constant.override_property(n).as_str(),
                &s.to_variant(),
            );
        }
    }
    if let Some(c) = columns {
        child.set("columns", &c.to_variant());
    }
    if let Some(m) = margin {
        for side in ["margin_left", "margin_top", "margin_right", "margin_bottom"] {
            child.set(
                ThemeKind::Constant.override_property(side).as_str(),
                &m.to_variant(),
            );
        }
    }
    add_child_action(
        &root,
        &parent_node,
        &child,
        &format!("MCP: add {container_type} {name}"),
    )?;
    Ok(with_verdict(
        &root,
        &child,
        json!({"node": rel_path(&root, &child), "type": container_type}),
    ))
}
