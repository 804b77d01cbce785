//! The executors: one decoded [`Command`] → one JSON result or a [`BridgeError`]. Main
//! thread only (called from the plugin's `process()`). Every create, rename, move,
//! duplicate, delete and set goes through `EditorUndoRedoManager`; a batch is one action
//! unless it touches more than 20 nodes (then it bypasses the history and says so).
//! Validation happens before the first change, so an error reply says `effect: unchanged`
//! ([`err`], [`failed`]); the few errors that come after a change say what they left:
//! `rolled_back` when its undo action ran and the value read back is the old one
//! (`resource.set_property` whose save failed), `changed` when not, and nothing at all
//! when the editor's state is unknown (a scene that did not open or close as asked).

use godot::classes::{
    ClassDb, EditorInterface, EditorUndoRedoManager, Node, Object, PackedScene, Resource,
    ResourceLoader, ResourceSaver, Script, UndoRedo,
};
use godot::global::Error as GdError;
use godot::prelude::*;
use godot_mcp_editor_core::batch;
use godot_mcp_editor_core::command::{Command, PropertySet};
use godot_mcp_editor_core::persistence::{self, Effect, Verdict};
use godot_mcp_editor_core::tree::{self, TreeNode};
use godot_mcp_protocol::commands as wire;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::{Value as Json, json};

use crate::variant::{
    checked_value, from_variant, has_property, instantiable_node_class, reads_back, to_variant,
};

mod animation;
mod audio;
mod editor;
mod files;
mod physics;
mod scene;
mod shader;
mod steps;
mod tilemap;
mod ui;

pub(crate) type Res = Result<Json, BridgeError>;

/// An error before the first change: the editor is unchanged.
pub(crate) fn err(code: ErrorCode, message: impl Into<String>) -> BridgeError {
    BridgeError::new(code, message).with_effect(ErrorEffect::Unchanged)
}

/// An error after the editor was asked to change something it did not confirm: what it
/// left is unknown, so no `effect` is claimed.
fn unknown_state(message: impl Into<String>) -> BridgeError {
    BridgeError::new(ErrorCode::Failed, message)
}

pub(crate) fn failed(message: impl Into<String>) -> BridgeError {
    err(ErrorCode::Failed, message)
}

pub(crate) fn editor() -> Gd<EditorInterface> {
    EditorInterface::singleton()
}

pub(crate) fn undo_redo() -> Result<Gd<EditorUndoRedoManager>, BridgeError> {
    editor()
        .get_editor_undo_redo()
        .ok_or_else(|| err(ErrorCode::Internal, "the editor has no undo manager"))
}

/// A new, unparented node of `class` (named `name`), refused unless `class` is a Node
/// class this engine can create.
pub(crate) fn new_node(class: &str, name: &str) -> Result<Gd<Node>, BridgeError> {
    if !instantiable_node_class(class) {
        return Err(failed(format!(
            "{class} is not a Node class this Godot can create"
        )));
    }
    let mut node = ClassDb::singleton()
        .instantiate(class)
        .try_to::<Gd<Node>>()
        .map_err(|_| failed(format!("could not create a {class}")))?;
    node.set_name(name);
    Ok(node)
}

/// Adds `child` (new, unparented) under `parent` as ONE undo action named `action`,
/// owned by the edited scene's `root`: undo removes it, redo adds it back as it was.
pub(crate) fn add_child_action(
    root: &Gd<Node>,
    parent: &Gd<Node>,
    child: &Gd<Node>,
    action: &str,
) -> Result<(), BridgeError> {
    let mut ur = undo_redo()?;
    begin(&mut ur, root, action);
    ur.add_do_method(
        &obj(parent),
        "add_child",
        &[child.to_variant(), true.to_variant()],
    );
    ur.add_do_property(&obj(child), "owner", &root.to_variant());
    ur.add_do_reference(&obj(child));
    ur.add_undo_method(&obj(parent), "remove_child", &[child.to_variant()]);
    ur.commit_action();
    Ok(())
}

pub(crate) fn scene_root() -> Result<Gd<Node>, BridgeError> {
    editor()
        .get_edited_scene_root()
        .ok_or_else(|| err(ErrorCode::NoActiveScene, "no scene is open in the editor"))
}

/// Refuses (`scene_mismatch`, nothing done) a request meant for another scene than
/// the edited one, or for a root that is no longer this one.
fn on_scene(
    on: &godot_mcp_editor_core::command::OnScene,
    root: &Gd<Node>,
) -> Result<(), BridgeError> {
    on.check(&scene_path(root), root.instance_id().to_i64())
}

pub(crate) fn scene_path(root: &Gd<Node>) -> String {
    root.get_scene_file_path().to_string()
}

pub(crate) fn find(root: &Gd<Node>, path: &str) -> Result<Gd<Node>, BridgeError> {
    if path == "." || path.is_empty() {
        return Ok(root.clone());
    }
    root.get_node_or_null(path).ok_or_else(|| {
        err(
            ErrorCode::NotFound,
            format!("node {path} does not exist in the edited scene"),
        )
    })
}

pub(crate) fn rel_path(root: &Gd<Node>, node: &Gd<Node>) -> String {
    root.get_path_to(node).to_string()
}

pub(crate) fn owned(root: &Gd<Node>, node: &Gd<Node>) -> bool {
    node == root || node.get_owner().is_some_and(|o| &o == root)
}

pub(crate) fn obj<T: Inherits<Object>>(g: &Gd<T>) -> Gd<Object> {
    g.clone().upcast::<Object>()
}

pub(crate) fn verdict_json(v: &Verdict) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// `out` with the verdict of a scene-level `effect` merged in (the server's dry run
/// reports the same verdict from the same rule).
pub(crate) fn stamped(effect: Effect, scene: &str, mut out: Json) -> Json {
    if let (Json::Object(o), Json::Object(v)) = (
        &mut out,
        verdict_json(&persistence::verdict_of(effect, scene)),
    ) {
        o.extend(v);
    }
    out
}

/// Merge the verdict of editing `node` into `out`.
pub(crate) fn with_verdict(root: &Gd<Node>, node: &Gd<Node>, mut out: Json) -> Json {
    let v = persistence::verdict(owned(root, node), &scene_path(root));
    if let (Json::Object(o), Json::Object(vv)) = (&mut out, verdict_json(&v)) {
        o.extend(vv);
        o.insert("scene".into(), json!(scene_path(root)));
    }
    out
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

/// Commits the action `ur` holds and answers with `n`'s path and its verdict.
fn committed(mut ur: Gd<EditorUndoRedoManager>, root: &Gd<Node>, n: &Gd<Node>) -> Res {
    ur.commit_action();
    Ok(with_verdict(root, n, json!({"node": rel_path(root, n)})))
}

/// Begin an undo action on the edited scene's history.
pub(crate) fn begin(ur: &mut Gd<EditorUndoRedoManager>, root: &Gd<Node>, name: &str) {
    ur.create_action_ex(name).custom_context(&obj(root)).done();
}

/// The edited scene's own history (what Ctrl+Z in that scene walks).
pub(crate) fn scene_history(root: &Gd<Node>) -> Result<Gd<UndoRedo>, BridgeError> {
    let ur = undo_redo()?;
    let id = ur.get_object_history_id(&obj(root));
    ur.get_history_undo_redo(id)
        .ok_or_else(|| err(ErrorCode::Internal, "the edited scene has no undo history"))
}

/// Set owner of `node` and every descendant that `owned_before` says was owned by root.
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

pub(crate) fn execute(cmd: Command) -> Res {
    match cmd {
        Command::Ping => Ok(json!({})),
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
        Command::NodeSetProperty(set) => {
            let root = scene_root()?;
            let (n, value) = check_set(&root, &set)?;
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
        Command::NodePersistence(wire::NodePersistence { node, op }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            // The same rule the handlers stamp: a created node is always owned by the scene
            // (its parent is `node` here); every other op is judged on `node` itself.
            let owned_after = op == "create" || owned(&root, &n);
            let mut out = verdict_json(&persistence::verdict(owned_after, &scene_path(&root)));
            out["exists"] = json!(true);
            out["node"] = json!(node);
            out["scene"] = json!(scene_path(&root));
            Ok(out)
        }
        Command::ScriptAttach(wire::ScriptAttach { node, script }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            let s = ResourceLoader::singleton()
                .load(script.as_str())
                .and_then(|r| r.try_cast::<Script>().ok())
                .ok_or_else(|| {
                    err(
                        ErrorCode::NotFound,
                        format!("{script} is not a script that loads"),
                    )
                })?;
            let old = n.get("script");
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: attach {script} to {node}"));
            ur.add_do_property(&obj(&n), "script", &s.to_variant());
            ur.add_undo_property(&obj(&n), "script", &old);
            ur.commit_action();
            Ok(with_verdict(
                &root,
                &n,
                json!({"node": node, "script": script}),
            ))
        }
        Command::ScriptDetach(wire::ScriptDetach { node }) => {
            let root = scene_root()?;
            let n = find(&root, &node)?;
            let old = n.get("script");
            if old.is_nil() {
                return Err(failed(format!("{node} has no script")));
            }
            let mut ur = undo_redo()?;
            begin(&mut ur, &root, &format!("MCP: detach script from {node}"));
            ur.add_do_property(&obj(&n), "script", &Variant::nil());
            ur.add_undo_property(&obj(&n), "script", &old);
            ur.commit_action();
            Ok(with_verdict(&root, &n, json!({"node": node})))
        }
        Command::SignalConnect(c) => signal_edit(true, &c),
        Command::SignalDisconnect(c) => signal_edit(false, &c),
        Command::ResourceSetProperty(wire::ResourceSetProperty {
            path,
            property,
            value,
        }) => {
            let mut res: Gd<Resource> = ResourceLoader::singleton()
                .load(path.as_str())
                .ok_or_else(|| err(ErrorCode::NotFound, format!("{path} does not load")))?;
            let v = checked_value(&obj(&res), &path, &property, &value).map_err(failed)?;
            let old = res.get(property.as_str());
            let mut ur = undo_redo()?;
            let action = format!("MCP: set {path}:{property}");
            ur.create_action(&action);
            ur.add_do_property(&obj(&res), property.as_str(), &v);
            ur.add_undo_property(&obj(&res), property.as_str(), &old);
            ur.commit_action();
            let restored = || res.get(property.as_str()) == old;
            if let Err(why) = reads_back(&obj(&res), &property, &v) {
                let effect = roll_back(&ur, &obj(&res), &action, restored);
                return Err(not_held(&path, &why, effect));
            }
            let saved = ResourceSaver::singleton().save(&res);
            if saved != GdError::OK {
                // The value is set in the editor: undo our own action, so the error can
                // say the editor is back where it was, and prove it by reading back.
                let effect = roll_back(&ur, &obj(&res), &action, restored);
                let left = match effect {
                    ErrorEffect::RolledBack => {
                        "the value was set, then undone in the editor (its undo action ran)"
                    }
                    _ => "the value is still set in the editor: undoing it failed",
                };
                return Err(BridgeError::new(
                    ErrorCode::Failed,
                    format!("saving {path} failed: {saved:?}; {left}"),
                )
                .with_effect(effect));
            }
            let _ = &mut res;
            Ok(stamped(
                Effect::ResourceSave,
                &path,
                json!({"path": path, "property": property, "value": from_variant(&res.get(property.as_str())).to_json()}),
            ))
        }
        Command::BatchApply(wire::BatchApply { sets, undo }) => {
            let root = scene_root()?;
            // Validate everything first: an error means nothing was applied.
            let mut checked = Vec::with_capacity(sets.len());
            for (i, s) in sets.iter().enumerate() {
                let (n, v) = check_set(&root, s)
                    .map_err(|e| err(e.code, format!("sets[{i}]: {}", e.message)))?;
                checked.push((n, s.property.clone(), v));
            }
            // The server decided the undo policy; executed as sent.
            let run = batch::execution(&sets, undo);
            // The values before the batch (a property set twice: its first old value).
            let mut before: Vec<(Gd<Node>, String, Variant)> = Vec::new();
            for (n, p, _) in &checked {
                if !before.iter().any(|(m, q, _)| m == n && q == p) {
                    before.push((n.clone(), p.clone(), n.get(p.as_str())));
                }
            }
            let mut ur = undo_redo()?;
            match &run.action {
                Some(action) => {
                    begin(&mut ur, &root, action);
                    for (n, p, v) in &checked {
                        let old = n.get(p.as_str());
                        ur.add_do_property(&obj(n), p.as_str(), v);
                        ur.add_undo_property(&obj(n), p.as_str(), &old);
                    }
                    ur.commit_action();
                }
                None => {
                    for (n, p, v) in &mut checked {
                        n.set(p.as_str(), &*v);
                    }
                    editor().mark_scene_as_unsaved();
                }
            }
            // Every set is read back (the last set of each property is what it holds).
            let mut seen: Vec<(&Gd<Node>, &str)> = Vec::new();
            for (i, (n, p, v)) in checked.iter().enumerate().rev() {
                if seen.contains(&(n, p.as_str())) {
                    continue;
                }
                seen.push((n, p.as_str()));
                if let Err(why) = reads_back(&obj(n), p, v) {
                    let restored = || before.iter().all(|(m, q, old)| m.get(q.as_str()) == *old);
                    let effect = match &run.action {
                        Some(action) => roll_back(&ur, &obj(&root), action, restored),
                        None => {
                            for (m, q, old) in &before {
                                m.clone().set(q.as_str(), old);
                            }
                            if restored() {
                                ErrorEffect::RolledBack
                            } else {
                                ErrorEffect::Changed
                            }
                        }
                    };
                    return Err(not_held(
                        &format!("sets[{i}]: {}", sets[i].node),
                        &why,
                        effect,
                    ));
                }
            }
            let mut out = verdict_json(&persistence::verdict(true, &scene_path(&root)));
            out["applied"] = json!(sets.len());
            out["nodes"] = json!(batch::distinct_nodes(&sets));
            out["undoable"] = json!(run.undoable);
            out["scene"] = json!(scene_path(&root));
            if let Some(hint) = run.undo_hint {
                out["undo_hint"] = json!(hint);
            }
            Ok(out)
        }
        Command::Undo { .. } | Command::Redo => {
            let undo = matches!(cmd, Command::Undo { .. });
            let root = scene_root()?;
            if let Command::Undo { on, .. } = &cmd {
                on_scene(on, &root)?;
            }
            let mut h = scene_history(&root)?;
            let possible = if undo { h.has_undo() } else { h.has_redo() };
            if !possible {
                return Err(failed(if undo {
                    "nothing to undo"
                } else {
                    "nothing to redo"
                }));
            }
            let name = h.get_current_action_name().to_string();
            // "Undo only if the current action is this one": never someone else's.
            if let Command::Undo {
                action: Some(only), ..
            } = &cmd
                && *only != name
            {
                let mut e = failed(format!(
                    "the current action is {name:?}, not {only:?}; nothing was undone"
                ));
                e.effect = Some(godot_mcp_protocol::ErrorEffect::Unchanged);
                return Err(e);
            }
            let done = if undo { h.undo() } else { h.redo() };
            if !done {
                return Err(failed("the editor refused the undo/redo"));
            }
            let name = if undo {
                name
            } else {
                h.get_current_action_name().to_string()
            };
            let mut out = verdict_json(&persistence::verdict(true, &scene_path(&root)));
            out["action"] = json!(name);
            out["version"] = json!(h.get_version());
            Ok(out)
        }
        Command::EditorScreenshot(req) => crate::capture::editor_screenshot(req),
        Command::Steps {
            action,
            steps,
            check_only,
            on,
        } => {
            if on.scene.is_some() {
                on_scene(&on, &scene_root()?)?;
            }
            steps::steps(&action, &steps, check_only)
        }
        Command::Cells(wire::Cells {
            node,
            offset,
            limit,
        }) => tilemap::cells(&node, offset, limit),
        Command::MeshLibraryItems(wire::MeshLibraryItems { path }) => {
            tilemap::mesh_library_items(&path)
        }
        Command::Authoring(a) => editor::execute(a),
        Command::EditorMonitors
        | Command::FilesystemScan
        | Command::FilesystemStatus
        | Command::FilesystemUpdate(..) => files::exec(&cmd),
        c @ (Command::AudioAddPlayer(..)
        | Command::ShaderAssignMaterial(..)
        | Command::ShaderUniforms(..)
        | Command::ShaderSetUniform(..)) => audio::execute(c),
        Command::History(on) => {
            let root = scene_root()?;
            on_scene(&on, &root)?;
            let h = scene_history(&root)?;
            let count = h.get_history_count();
            Ok(json!({
                "scene": scene_path(&root),
                "root_id": root.instance_id().to_i64(),
                "version": h.get_version(),
                "has_undo": h.has_undo(),
                "has_redo": h.has_redo(),
                "current_action": h.get_current_action(),
                "actions": (0..count).map(|i| h.get_action_name(i).to_string()).collect::<Vec<_>>(),
            }))
        }
    }
}

/// The error of a set whose read-back is not what was asked (`why` names both values),
/// with what undoing it left (`effect`).
pub(crate) fn not_held(what: &str, why: &str, effect: ErrorEffect) -> BridgeError {
    let left = match effect {
        ErrorEffect::RolledBack => "the set was undone (its undo action ran); nothing changed",
        _ => "undoing it failed: the value may still be set in the editor",
    };
    BridgeError::new(
        ErrorCode::Failed,
        format!("{what}:{why}, not what was asked; {left}"),
    )
    .with_effect(effect)
}

/// Undo `action` (just committed on `target`'s history) and report what that left:
/// `rolled_back` only when the history's current action is ours, its undo ran, and
/// `restored` says the old values read back; `changed` otherwise (the value may still
/// be set).
pub(crate) fn roll_back(
    ur: &Gd<EditorUndoRedoManager>,
    target: &Gd<Object>,
    action: &str,
    restored: impl Fn() -> bool,
) -> ErrorEffect {
    let id = ur.get_object_history_id(target);
    let Some(mut history) = ur.get_history_undo_redo(id) else {
        godot_error!("godot-mcp: no undo history for {action}");
        return ErrorEffect::Changed;
    };
    if history.get_current_action_name() != action {
        godot_error!("godot-mcp: {action} is not the current undo action; not undoing");
        return ErrorEffect::Changed;
    }
    if !history.undo() {
        return ErrorEffect::Changed;
    }
    if restored() {
        ErrorEffect::RolledBack
    } else {
        ErrorEffect::Changed
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

fn check_set(root: &Gd<Node>, s: &PropertySet) -> Result<(Gd<Node>, Variant), BridgeError> {
    let n = find(root, &s.node)?;
    let v = checked_value(&obj(&n), &s.node, &s.property, &s.value).map_err(failed)?;
    Ok((n, v))
}

fn signal_edit(connect: bool, c: &wire::Connection) -> Res {
    let (from, signal, to, method) = (&c.from, c.signal.as_str(), &c.to, c.method.as_str());
    let root = scene_root()?;
    let f = find(&root, from)?;
    let t = find(&root, to)?;
    if !f.has_signal(signal) {
        return Err(failed(format!(
            "{from} ({}) has no signal {signal}",
            f.get_class()
        )));
    }
    let callable = Callable::from_object_method(&t, method);
    let connected = f.is_connected(signal, &callable);
    if connect && connected {
        return Err(failed(format!(
            "{from}.{signal} is already connected to {to}.{method}"
        )));
    }
    if !connect && !connected {
        return Err(err(
            ErrorCode::NotFound,
            format!("{from}.{signal} is not connected to {to}.{method}"),
        ));
    }
    // CONNECT_PERSIST (2): saved with the scene, as the editor's own Connect dialog does.
    let persist = 2i64.to_variant();
    let mut ur = undo_redo()?;
    let verb = if connect { "connect" } else { "disconnect" };
    begin(
        &mut ur,
        &root,
        &format!("MCP: {verb} {from}.{signal} -> {to}.{method}"),
    );
    let args_connect = [
        GString::from(signal).to_variant(),
        callable.to_variant(),
        persist,
    ];
    let args_disconnect = [GString::from(signal).to_variant(), callable.to_variant()];
    if connect {
        ur.add_do_method(&obj(&f), "connect", &args_connect);
        ur.add_undo_method(&obj(&f), "disconnect", &args_disconnect);
    } else {
        ur.add_do_method(&obj(&f), "disconnect", &args_disconnect);
        ur.add_undo_method(&obj(&f), "connect", &args_connect);
    }
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &f,
        json!({"from": from, "signal": signal, "to": to, "method": method}),
    ))
}
