//! Theme and UI executors: theme items, Control theme overrides, anchors and containers.
//!
//! A theme item's undo records whole states ([`GodotMcpThemeItem`]: one call that sets (or
//! clears) it and saves the file); anchors use the editor's own `_edit_set_state`. One
//! call per direction cannot be split or reordered by the undo history.

use godot::classes::{Control, Node, Resource, ResourceLoader, ResourceSaver, StyleBoxFlat};
use godot::global::Error as GdError;
use godot::prelude::*;
use godot_mcp_editor_core::authoring::{ThemeKind, ThemeValue};
use godot_mcp_editor_core::persistence::Effect;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::json;

use super::ctx::{
    Res, add_child_action, begin, embedded, err, failed, find, misrouted, new_node, obj, rel_path,
    scene_history, scene_root, stamped, undo_redo, with_verdict,
};
use crate::variant::{from_variant, has_property, to_variant};
use godot_mcp_editor_core::command::Command;

/// One theme item's state (set to `value`, or absent), applied and saved in one call: the
/// do and the undo of a theme item edit, so that undo leaves the file as it was.
#[derive(GodotClass)]
#[class(tool, no_init, base = RefCounted)]
pub(crate) struct GodotMcpThemeItem {
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
pub(crate) fn load_as(path: &str, class: &str) -> Result<Gd<Resource>, BridgeError> {
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
pub(crate) fn theme_variant(
    kind: ThemeKind,
    value: &ThemeValue,
) -> Result<Option<Variant>, BridgeError> {
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

pub(crate) fn theme_set_item(
    path: &str,
    theme_type: &str,
    kind: ThemeKind,
    name: &str,
    value: &ThemeValue,
) -> Res {
    let root = scene_root().ok();
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
    let mut do_state = state(new);
    let mut undo_state = state(old);
    let reply = |t: &Gd<Resource>, effect| {
        let now = t.clone().call("get_theme_item", &key);
        stamped(
            effect,
            path,
            json!({"path": path, "theme_type": theme_type, "name": name,
                   "value": from_variant(&now).to_json()}),
        )
    };
    let Some(root) = root else {
        // No scene open: Godot's undo histories belong to open scenes, so the item is set
        // and saved outside any (the server journals the file's pre-state), and a failed
        // save puts the old state back.
        do_state.bind_mut().apply(theme.clone());
        let saved = do_state.bind().last_error;
        if saved != GdError::OK.ord() as i64 {
            undo_state.bind_mut().apply(theme.clone());
            let effect = if undo_state.bind().last_error == GdError::OK.ord() as i64 {
                ErrorEffect::RolledBack
            } else {
                ErrorEffect::Changed
            };
            return Err(BridgeError::new(
                ErrorCode::Failed,
                format!("saving {path} failed (error {saved}); the item's old state was put back"),
            )
            .with_effect(effect));
        }
        return Ok(reply(&theme, Effect::ResourceWrite));
    };
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
    Ok(reply(&t, Effect::ResourceSave))
}

pub(crate) fn control(root: &Gd<Node>, node: &str) -> Result<Gd<Node>, BridgeError> {
    let n = find(root, node)?;
    if !n.is_class("Control") {
        return Err(failed(format!(
            "{node} is a {}, not a Control",
            n.get_class()
        )));
    }
    Ok(n)
}

pub(crate) fn theme_override(node: &str, kind: ThemeKind, name: &str, value: &ThemeValue) -> Res {
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

pub(crate) fn anchors_preset(node: &str, preset: i32) -> Res {
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

pub(crate) fn add_container(
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

pub(crate) fn run(a: Command) -> Res {
    match a {
        Command::ThemeSetItem {
            path,
            theme_type,
            kind,
            name,
            value,
        } => theme_set_item(&path, &theme_type, kind, &name, &value),
        Command::ThemeOverride {
            node,
            kind,
            name,
            value,
        } => theme_override(&node, kind, &name, &value),
        Command::AnchorsPreset { node, preset } => anchors_preset(&node, preset),
        Command::AddContainer {
            parent,
            container_type,
            name,
            separation,
            columns,
            margin,
        } => add_container(&parent, &container_type, &name, separation, columns, margin),
        _ => Err(misrouted("ui")),
    }
}
