//! Scene editing, the rest: instancing a scene, editable children, and live reads of a
//! node's signal connections, properties and property list.

use godot::classes::{Node, Object, PackedScene, ResourceLoader};
use godot::prelude::*;
use godot_mcp_protocol::ErrorCode;
use serde_json::{Value as Json, json};

use super::{
    Res, add_child_action, begin, err, failed, find, obj, rel_path, scene_path, scene_root,
    undo_redo, with_verdict,
};
use crate::variant::from_variant;

/// `Object.CONNECT_PERSIST`: the connection is saved with the scene.
pub(crate) const CONNECT_PERSIST: i64 = 2;
/// `PropertyUsageFlags`: STORAGE, EDITOR; and the group/category markers that are not
/// properties.
pub(crate) const USAGE_STORAGE: i64 = 2;
pub(crate) const USAGE_EDITOR: i64 = 4;
pub(crate) const USAGE_MARKERS: i64 = 64 | 128 | 256;

/// Whether `node` or anything under it instances `scene` (instancing it again would be a
/// cycle).
pub(crate) fn instances(node: &Gd<Node>, scene: &str) -> bool {
    node.get_scene_file_path() == scene
        || node
            .get_children()
            .iter_shared()
            .any(|c| instances(&c, scene))
}

pub(crate) fn instance(parent: &str, scene: &str, name: Option<&str>) -> Res {
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

pub(crate) fn editable_children(node: &str, editable: bool) -> Res {
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

/// Where a connection's other end is: a path from the scene root when it is a node of the
/// edited scene's tree, else its class.
pub(crate) fn endpoint(root: &Gd<Node>, o: Option<Gd<Object>>) -> Json {
    match o {
        Some(o) => match o.clone().try_cast::<Node>() {
            Ok(n) if n == *root || root.is_ancestor_of(&n) => json!(rel_path(root, &n)),
            Ok(n) => json!(format!("<{} outside the scene>", n.get_class())),
            Err(o) => json!(format!("<{}>", o.get_class())),
        },
        None => Json::Null,
    }
}

pub(crate) fn connections(node: &str) -> Res {
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

pub(crate) fn properties(node: &str, list: bool, offset: usize, limit: usize) -> Res {
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
