//! Scene commands: the editor's state, the edited scene's tree, and opening, creating,
//! saving, reloading and closing a scene file; instancing a scene, editable children, and
//! live reads of a node's signal connections, properties and property list.

use godot::classes::{Node, Object, PackedScene, ResourceLoader, ResourceSaver};
use godot::global::Error as GdError;
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_editor_core::persistence::Effect;
use godot_mcp_editor_core::tree::{self, TreeNode};
use godot_mcp_protocol::commands as wire;
use godot_mcp_protocol::{BridgeError, ErrorCode};
use serde_json::{Value as Json, json};

use super::ctx::{
    Res, USAGE_EDITOR, USAGE_MARKERS, USAGE_STORAGE, add_child_action, begin, editor, err, failed,
    find, misrouted, new_node, obj, owned, rel_path, scene_path, scene_root, stamped, undo_redo,
    unknown_state, with_verdict,
};
use crate::variant::from_variant;

pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::EditorState => {
            let root = editor().get_edited_scene_root();
            Ok(json!({
                "active_scene": root.as_ref().map(scene_path),
                "root_id": root.as_ref().map(|r| r.instance_id().to_i64()),
                "open_scenes": editor().get_open_scenes().as_slice().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            }))
        }
        Command::SceneTree(wire::SceneTree { offset, limit }) => {
            let root = scene_root()?;
            let mut nodes = Vec::new();
            walk(&root, &root, 0, &mut nodes);
            let page = tree::page(&scene_path(&root), &nodes, offset, limit);
            serde_json::to_value(page).map_err(|e| err(ErrorCode::Internal, e.to_string()))
        }
        Command::SceneOpen(wire::SceneOpen { path }) => {
            if !ResourceLoader::singleton().exists(path.as_str()) {
                return Err(err(ErrorCode::NotFound, format!("{path} does not exist")));
            }
            editor().open_scene_from_path(path.as_str());
            let now = editor().get_edited_scene_root().map(|r| scene_path(&r));
            if now.as_deref() != Some(path.as_str()) {
                return Err(unknown_state(format!("the editor did not open {path}")));
            }
            Ok(stamped(Effect::SceneOpen, &path, json!({"scene": path})))
        }
        Command::SceneCreate(wire::SceneCreate {
            path,
            root_type,
            root_name,
        }) => {
            if ResourceLoader::singleton().exists(path.as_str()) {
                return Err(failed(format!("{path} already exists")));
            }
            let name: String = root_name.unwrap_or_else(|| {
                let stem = path
                    .rsplit('/')
                    .next()
                    .unwrap_or("Root")
                    .trim_end_matches(".tscn");
                let mut c = stem.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_else(|| "Root".into())
            });
            let root = new_node(&root_type, &name)?;
            let mut packed = PackedScene::new_gd();
            let packed_ok = packed.pack(&root);
            root.free();
            if packed_ok != GdError::OK {
                return Err(failed(format!(
                    "packing the new scene failed: {packed_ok:?}"
                )));
            }
            let saved = ResourceSaver::singleton()
                .save_ex(&packed)
                .path(path.as_str())
                .done();
            if saved != GdError::OK {
                return Err(failed(format!("saving {path} failed: {saved:?}")));
            }
            // The file is written; were the open not taken (the editor switching scenes
            // that frame), the next request's scene check refuses cleanly. Not an error
            // here: a `changed` error would quarantine a create that did what it says.
            editor().open_scene_from_path(path.as_str());
            Ok(stamped(Effect::SceneCreate, &path, json!({"scene": path})))
        }
        Command::SceneSave(wire::SceneSave { path }) => {
            let current = edited_path(path.as_deref())?;
            if current.is_empty() {
                return Err(failed("the edited scene has no file yet"));
            }
            let e = editor().save_scene();
            if e != GdError::OK {
                // A failed save changes nothing in the editor; what it left in the file
                // the server checks against the hash it recorded before sending.
                return Err(failed(format!("saving {current} failed: {e:?}")));
            }
            Ok(stamped(
                Effect::SceneSave,
                &current,
                json!({"scene": current}),
            ))
        }
        Command::SceneReload(wire::SceneReload { path }) => {
            let root = scene_root()?;
            let p = path.unwrap_or_else(|| scene_path(&root));
            editor().reload_scene_from_path(p.as_str());
            Ok(stamped(Effect::SceneReload, &p, json!({"scene": p})))
        }
        Command::SceneClose(wire::SceneClose { path }) => {
            let current = edited_path(path.as_deref())?;
            let mut ei = editor();
            // EditorInterface.close_scene exists from Godot 4.5; on 4.4 say so.
            if !ei.has_method("close_scene") {
                return Err(failed(format!(
                    "closing a scene needs Godot 4.5 or newer (EditorInterface.close_scene); \
                     this editor is Godot {}",
                    crate::engine_version::get()
                )));
            }
            let e = ei.call("close_scene", &[]);
            if e.try_to::<i64>().unwrap_or(0) != 0 {
                return Err(unknown_state(format!("closing {current} failed: {e}")));
            }
            Ok(stamped(
                Effect::SceneClose,
                &current,
                json!({"scene": current}),
            ))
        }
        Command::NodeInstance {
            parent,
            scene,
            name,
        } => instance(&parent, &scene, name.as_deref()),
        Command::EditableChildren { node, editable } => editable_children(&node, editable),
        Command::Connections { node } => connections(&node),
        Command::Properties {
            node,
            list,
            offset,
            limit,
        } => properties(&node, list, offset, limit),
        _ => Err(misrouted("scene")),
    }
}

/// The edited scene's path, refused when `path` names another scene.
fn edited_path(path: Option<&str>) -> Result<String, BridgeError> {
    let current = scene_path(&scene_root()?);
    match path {
        Some(p) if p != current => Err(failed(format!(
            "{p} is not the edited scene ({current}); open it first"
        ))),
        _ => Ok(current),
    }
}

/// Pre-order walk of the nodes that belong to the scene (the root and what it owns).
fn walk(root: &Gd<Node>, node: &Gd<Node>, depth: u32, out: &mut Vec<TreeNode>) {
    let included = owned(root, node);
    if included {
        out.push(TreeNode {
            name: node.get_name().to_string(),
            type_name: node.get_class().to_string(),
            depth,
        });
    }
    let child_depth = if included { depth + 1 } else { depth };
    for c in node.get_children().iter_shared() {
        walk(root, &c, child_depth, out);
    }
}

/// `Object.CONNECT_PERSIST`: the connection is saved with the scene.
pub(crate) const CONNECT_PERSIST: i64 = 2;

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
