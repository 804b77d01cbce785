//! The executors' shared kit: errors, the edited scene and its nodes, undo actions, and
//! the persistence verdict every reply is stamped with. It imports no domain of `exec`.

use godot::classes::{
    ClassDb, EditorInterface, EditorUndoRedoManager, Node, Object, Resource, ResourceLoader,
    UndoRedo,
};
use godot::prelude::*;
use godot_mcp_editor_core::command::PropertySet;
use godot_mcp_editor_core::persistence::{self, Effect, Verdict};
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::{Value as Json, json};

use crate::variant::{checked_value, instantiable_node_class};

pub(crate) type Res = Result<Json, BridgeError>;

/// An error before the first change: the editor is unchanged.
pub(crate) fn err(code: ErrorCode, message: impl Into<String>) -> BridgeError {
    BridgeError::new(code, message).with_effect(ErrorEffect::Unchanged)
}

/// An error after the editor was asked to change something it did not confirm: what it
/// left is unknown, so no `effect` is claimed.
pub(crate) fn unknown_state(message: impl Into<String>) -> BridgeError {
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
pub(crate) fn on_scene(
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

pub(crate) fn check_set(
    root: &Gd<Node>,
    s: &PropertySet,
) -> Result<(Gd<Node>, Variant), BridgeError> {
    let n = find(root, &s.node)?;
    let v = checked_value(&obj(&n), &s.node, &s.property, &s.value).map_err(failed)?;
    Ok((n, v))
}

/// The error of a command sent to a domain that does not execute it (a dispatch bug).
pub(crate) fn misrouted(domain: &str) -> BridgeError {
    err(
        ErrorCode::Internal,
        format!("the {domain} executor does not run this command"),
    )
}

/// Whether `res` is stored inside a scene or resource file (not in a file of its own).
pub(crate) fn embedded(res: &Gd<impl Inherits<Resource>>) -> bool {
    let path = res.clone().upcast::<Resource>().get_path().to_string();
    path.is_empty() || path.contains("::")
}

/// `PropertyUsageFlags`: STORAGE, EDITOR; and the group/category markers that are not
/// properties.
pub(crate) const USAGE_STORAGE: i64 = 2;
pub(crate) const USAGE_EDITOR: i64 = 4;
pub(crate) const USAGE_MARKERS: i64 = 64 | 128 | 256;

/// The resource at `path` as a `T`, refused (`not_found`) when it is not one that loads.
pub(crate) fn load_as<T: GodotClass + Inherits<Resource>>(
    path: &str,
    what: &str,
) -> Result<Gd<T>, BridgeError> {
    ResourceLoader::singleton()
        .load(path)
        .and_then(|r| r.try_cast::<T>().ok())
        .ok_or_else(|| {
            err(
                ErrorCode::NotFound,
                format!("{path} is not {what} that loads"),
            )
        })
}
