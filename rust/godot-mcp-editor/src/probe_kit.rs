//! What the runtime probe's parts share (`probe`, `probe_clock`, `probe_observe`): the
//! wire form of an answer and of a refusal, an input event built from its wire form, and
//! a node of the running game found by the path an agent gives. It imports none of them.

use godot::classes::{ClassDb, InputEvent, Node, Os, Window};
use godot::prelude::*;
use godot_mcp_protocol::probe::{Empty, ProbeEvent, ProbeRefusal, ProbeReply};
use serde_json::Value;

/// The wire form of an answer `body` to request `id`.
pub(crate) fn answer<T: serde::Serialize>(id: u64, body: T) -> Value {
    ProbeReply::ok(id, body).to_json()
}

/// The wire form of a refusal of request `id`.
pub(crate) fn refuse(id: u64, error: &str, message: impl Into<String>) -> Value {
    ProbeReply::<Empty>::refused(id, ProbeRefusal::new(error, message)).to_json()
}

/// Builds an InputEvent from the wire form (through ClassDB: the bindings this
/// add-on is built with carry only a minimal class set).
pub(crate) fn make_event(event: &ProbeEvent, pressed: bool) -> Option<Gd<InputEvent>> {
    let class = match event {
        ProbeEvent::Key { .. } => "InputEventKey",
        ProbeEvent::MouseButton { .. } => "InputEventMouseButton",
        ProbeEvent::Action { .. } => "InputEventAction",
    };
    let mut obj = ClassDb::singleton()
        .instantiate(class)
        .try_to::<Gd<InputEvent>>()
        .ok()?;
    match event {
        ProbeEvent::Key { key } => {
            let key = Os::singleton().find_keycode_from_string(key.as_str());
            obj.set("keycode", &key.ord().to_variant());
            obj.set("physical_keycode", &key.ord().to_variant());
        }
        ProbeEvent::MouseButton { button, x, y } => {
            obj.set("button_index", &button.to_variant());
            let pos = Vector2::new(x.unwrap_or(0.0), y.unwrap_or(0.0));
            obj.set("position", &pos.to_variant());
            obj.set("global_position", &pos.to_variant());
        }
        ProbeEvent::Action { action } => {
            obj.set("action", &StringName::from(action.as_str()).to_variant());
            obj.set("strength", &1.0f64.to_variant());
        }
    }
    obj.set("pressed", &pressed.to_variant());
    Some(obj)
}

/// A node of the running game by the path an agent gives: from the root window
/// (`/root/Main/Player`, `Main/Player`, autoloads), else from the current scene as the
/// editor tools read paths (`Player`, `.` for the scene's root). Agents wrote the
/// editor's paths and met "no node Sprite" (agent trial, anim-bounce).
pub(crate) fn game_node(root: &Gd<Window>, path: &str) -> Option<Gd<Node>> {
    let scene = || root.get_tree().get_current_scene();
    if path == "." {
        return scene();
    }
    if let Some(n) = root.get_node_or_null(path) {
        return Some(n);
    }
    if path.starts_with('/') {
        return None;
    }
    scene()?.get_node_or_null(path)
}
