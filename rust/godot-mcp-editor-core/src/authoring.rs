//! The authoring commands' checks (scene editing beyond nodes and properties, animation,
//! theme and UI): one function per command, taking its protocol struct as
//! [`crate::decode`] decoded it and giving the [`Command`] its executor takes, before
//! anything runs: a bad request is `invalid_params` with `effect: unchanged`.

use godot_mcp_protocol::BridgeError;
use godot_mcp_protocol::commands as c;
use serde_json::Value as Json;

use crate::check::{invalid, res_path};
use crate::command::Command;
pub use crate::command::{Key, NewTrack, ThemeValue};
use crate::value::Value;

/// The wire's enums, with Godot's ordinals (the add-on's executors use these names).
pub use godot_mcp_protocol::commands::{
    ADVANCE_MODES, Graph, Interpolation, LoopMode, SWITCH_MODES, ThemeKind, TrackSettings,
    TrackType as TrackKind, UpdateMode,
};

/// What `control.add_container` creates.
pub const CONTAINER_TYPES: [&str; 10] = [
    "HBoxContainer",
    "VBoxContainer",
    "GridContainer",
    "MarginContainer",
    "CenterContainer",
    "PanelContainer",
    "ScrollContainer",
    "HFlowContainer",
    "VFlowContainer",
    "AspectRatioContainer",
];

/// Control layout presets by name, as `Control.LayoutPreset` numbers them.
pub const LAYOUT_PRESETS: [&str; 16] = [
    "top_left",
    "top_right",
    "bottom_left",
    "bottom_right",
    "center_left",
    "center_top",
    "center_right",
    "center_bottom",
    "center",
    "left_wide",
    "top_wide",
    "right_wide",
    "bottom_wide",
    "vcenter_wide",
    "hcenter_wide",
    "full_rect",
];

/// An animation's length: Godot's least is 0.001 s.
fn length_ok(length: f64) -> Result<(), BridgeError> {
    if finite("length", length)? < 0.001 {
        return Err(invalid("length must be at least 0.001 seconds"));
    }
    Ok(())
}

/// An animation's step: 0 (no snapping) or more.
fn step_ok(step: Option<f64>) -> Result<(), BridgeError> {
    if let Some(s) = step
        && finite("step", s)? < 0.0
    {
        return Err(invalid("step must be 0 (no snapping) or more seconds"));
    }
    Ok(())
}

fn name_ok(what: &str, name: &str) -> Result<(), BridgeError> {
    if name.is_empty() || name.contains(['/', ':', '@', '%', '.', '"', '[', ']', ',']) {
        return Err(invalid(format!("{name:?} is not a valid {what} name")));
    }
    Ok(())
}

fn finite(what: &str, v: f64) -> Result<f64, BridgeError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid(format!("{what} must be a finite number")))
    }
}

/// A theme value checked against its kind. `removable`: `null` removes (overrides).
pub fn theme_value(kind: ThemeKind, v: &Json, removable: bool) -> Result<ThemeValue, BridgeError> {
    if v.is_null() {
        return if removable {
            Ok(ThemeValue::Remove)
        } else {
            Err(invalid("value: null removes only an override"))
        };
    }
    let parsed = || Value::from_json(v).map_err(|e| invalid(format!("value: {e}")));
    match kind {
        // The colour forms every value takes (docs/values.md): "#ff0000", a Godot colour
        // name, [r, g, b] or [r, g, b, a], or a $type object.
        ThemeKind::Color => {
            let rgba = match v {
                Json::String(t) => godot_mcp_formats::coerce::parse_color(t.trim()),
                Json::Array(xs) if matches!(xs.len(), 3 | 4) => {
                    let n: Vec<f64> = xs.iter().filter_map(Json::as_f64).collect();
                    (n.len() == xs.len())
                        .then(|| [n[0], n[1], n[2], n.get(3).copied().unwrap_or(1.0)])
                }
                _ => None,
            };
            match rgba {
                Some(c) => Ok(ThemeValue::Plain(Value::Color(c))),
                None => match parsed() {
                    Ok(c @ Value::Color(_)) => Ok(ThemeValue::Plain(c)),
                    _ => Err(invalid(
                        "value: a color is \"#ff0000\", a Godot colour name (\"red\"), \
                         [r, g, b] or [r, g, b, a] (0 to 1), or {\"$type\": \"Color\", \"r\", \
                         \"g\", \"b\", \"a\"}",
                    )),
                },
            }
        }
        ThemeKind::Constant | ThemeKind::FontSize => match v.as_i64() {
            Some(i) if kind == ThemeKind::Constant || i > 0 => Ok(ThemeValue::Plain(Value::Int(i))),
            _ => Err(invalid(if kind == ThemeKind::Constant {
                "value: a constant is an integer"
            } else {
                "value: a font size is a positive integer"
            })),
        },
        ThemeKind::Font | ThemeKind::Icon => match v.as_str() {
            Some(p) => {
                res_path(p)?;
                Ok(ThemeValue::File(p.into()))
            }
            None => Err(invalid("value: a font or icon is its res:// file")),
        },
        ThemeKind::Stylebox => match v {
            Json::String(p) => {
                res_path(p)?;
                Ok(ThemeValue::File(p.clone()))
            }
            Json::Object(props) => {
                let mut out = Vec::with_capacity(props.len());
                for (k, pv) in props {
                    let val =
                        Value::from_json(pv).map_err(|e| invalid(format!("value.{k}: {e}")))?;
                    out.push((k.clone(), val));
                }
                Ok(ThemeValue::StyleBoxFlat(out))
            }
            _ => Err(invalid(
                "value: a stylebox is its res:// file or an object of StyleBoxFlat properties",
            )),
        },
    }
}

/// Largest page of a property read.
pub const MAX_PROPERTY_PAGE: usize = 2000;

fn named(what: &str, list: &[&str], v: &str) -> Result<i32, BridgeError> {
    list.iter()
        .position(|n| *n == v)
        .map(|i| i as i32)
        .ok_or_else(|| invalid(format!("{what} {v:?}: one of {}", list.join(", "))))
}

/// The keys of one track's insert, checked; two at one time are refused (the second
/// would overwrite the first).
fn keys(list: Vec<c::AnimationKey>) -> Result<Vec<Key>, BridgeError> {
    let one = list.len() == 1;
    let mut out: Vec<Key> = Vec::with_capacity(list.len());
    for (i, k) in list.into_iter().enumerate() {
        let at = |what: &str| {
            if one {
                what.to_string()
            } else {
                format!("keys[{i}].{what}")
            }
        };
        if finite(&at("time"), k.time)? < 0.0 {
            return Err(invalid(format!("{} must be 0 or more", at("time"))));
        }
        if out.iter().any(|o| o.time == k.time) {
            return Err(invalid(format!(
                "{} repeats time {}: one key per time",
                at("time"),
                k.time
            )));
        }
        out.push(Key {
            value: Value::from_json(&k.value)
                .map_err(|e| invalid(format!("{}: {e}", at("value"))))?,
            time: k.time,
            transition: finite(&at("transition"), k.transition)?,
        });
    }
    Ok(out)
}

fn track_index(t: i32) -> Result<i32, BridgeError> {
    if t < 0 {
        return Err(invalid("track must be 0 or more"));
    }
    Ok(t)
}

/// [`c::NodeInstance`]'s checks, and the form its executor takes.
pub(crate) fn node_instance(a: c::NodeInstance) -> Result<Command, BridgeError> {
    res_path(&a.scene)?;
    if let Some(n) = &a.name {
        name_ok("node", n)?;
    }
    Ok(Command::NodeInstance {
        parent: a.parent,
        scene: a.scene,
        name: a.name,
    })
}

/// [`c::NodeGroup`]'s checks, and the form its executor takes.
pub(crate) fn node_group(a: c::NodeGroup) -> Result<Command, BridgeError> {
    if a.group.trim().is_empty() {
        return Err(invalid("group must not be empty"));
    }
    Ok(Command::NodeGroup {
        node: a.node,
        group: a.group,
        add: a.add,
    })
}

/// [`c::NodeEditableChildren`]'s checks, and the form its executor takes.
pub(crate) fn node_editable_children(a: c::NodeEditableChildren) -> Result<Command, BridgeError> {
    Ok(Command::EditableChildren {
        node: a.node,
        editable: a.editable,
    })
}

/// [`c::NodeProperties`]'s checks, and the form its executor takes.
pub(crate) fn node_properties(a: c::NodeProperties) -> Result<Command, BridgeError> {
    let limit = a.limit.unwrap_or(c::DEFAULT_PROPERTY_PAGE);
    if limit == 0 || limit > MAX_PROPERTY_PAGE {
        return Err(invalid(format!("limit must be 1..={MAX_PROPERTY_PAGE}")));
    }
    Ok(Command::Properties {
        node: a.node,
        list: a.list,
        offset: a.offset,
        limit,
    })
}

/// [`c::AnimationAdd`]'s checks, and the form its executor takes.
pub(crate) fn animation_add(a: c::AnimationAdd) -> Result<Command, BridgeError> {
    name_ok("animation", &a.name)?;
    if !a.library.is_empty() {
        name_ok("library", &a.library)?;
    }
    length_ok(a.length)?;
    step_ok(a.step)?;
    Ok(Command::AnimationAdd {
        player: a.player,
        library: a.library,
        name: a.name,
        length: a.length,
        loop_mode: a.loop_mode,
        step: a.step,
        autoplay: a.autoplay,
        tracks: a
            .tracks
            .into_iter()
            .enumerate()
            .map(|(i, t)| new_track(t, &format!("tracks[{i}].")))
            .collect::<Result<_, _>>()?,
    })
}

/// [`c::AnimationSet`]'s checks, and the form its executor takes.
pub(crate) fn animation_set(a: c::AnimationSet) -> Result<Command, BridgeError> {
    if a.length.is_none() && a.step.is_none() && a.loop_mode.is_none() && a.tracks.is_empty() {
        return Err(invalid(
            "name what to set: length, step, loop_mode, or tracks \
             [{track, update_mode, interpolation}]",
        ));
    }
    if let Some(l) = a.length {
        length_ok(l)?;
    }
    step_ok(a.step)?;
    for t in &a.tracks {
        track_index(t.track)?;
        if t.update_mode.is_none() && t.interpolation.is_none() {
            return Err(invalid(format!(
                "tracks: track {} names neither update_mode nor interpolation",
                t.track
            )));
        }
    }
    Ok(Command::AnimationSet {
        player: a.player,
        animation: a.animation,
        length: a.length,
        step: a.step,
        loop_mode: a.loop_mode,
        tracks: a.tracks,
    })
}

/// [`c::AnimationRemove`]'s checks, and the form its executor takes.
pub(crate) fn animation_remove(a: c::AnimationRemove) -> Result<Command, BridgeError> {
    Ok(Command::AnimationRemove {
        player: a.player,
        animation: a.animation,
    })
}

/// [`c::AnimationTrackAdd`]'s checks, and the form its executor takes.
pub(crate) fn animation_track_add(a: c::AnimationTrackAdd) -> Result<Command, BridgeError> {
    Ok(Command::TrackAdd {
        player: a.player,
        animation: a.animation,
        track: new_track(
            c::NewTrack {
                track_type: a.track_type,
                path: a.path,
                update_mode: a.update_mode,
                interpolation: a.interpolation,
                keys: a.keys,
            },
            "",
        )?,
    })
}

/// A new track's checks (`at`: where it sits in the request, "" for a lone track).
fn new_track(t: c::NewTrack, at: &str) -> Result<NewTrack, BridgeError> {
    if t.path.is_empty() {
        return Err(invalid(format!(
            "{at}path must name a node (and property), e.g. Sprite2D:modulate"
        )));
    }
    if t.update_mode.is_some() && t.track_type != TrackKind::Value {
        return Err(invalid(format!(
            "{at}update_mode is for value tracks; this is a {} track",
            TrackKind::name_of(t.track_type.ord())
        )));
    }
    Ok(NewTrack {
        kind: t.track_type,
        path: t.path,
        update_mode: t.update_mode,
        interpolation: t.interpolation,
        keys: keys(t.keys).map_err(|e| prefixed(e, at))?,
    })
}

/// `e` with `at` before its message.
fn prefixed(mut e: BridgeError, at: &str) -> BridgeError {
    e.message = format!("{at}{}", e.message);
    e
}

/// [`c::AnimationTrackRemove`]'s checks, and the form its executor takes.
pub(crate) fn animation_track_remove(a: c::AnimationTrackRemove) -> Result<Command, BridgeError> {
    Ok(Command::TrackRemove {
        player: a.player,
        animation: a.animation,
        track: track_index(a.track)?,
    })
}

/// [`c::AnimationKeyInsert`]'s checks, and the form its executor takes.
pub(crate) fn animation_key_insert(a: c::AnimationKeyInsert) -> Result<Command, BridgeError> {
    let first = c::AnimationKey {
        time: a.time,
        value: a.value,
        transition: a.transition,
    };
    Ok(Command::KeyInsert {
        keys: keys(std::iter::once(first).chain(a.more).collect())?,
        player: a.player,
        animation: a.animation,
        track: track_index(a.track)?,
    })
}

/// [`c::AnimationKeyRemove`]'s checks, and the form its executor takes.
pub(crate) fn animation_key_remove(a: c::AnimationKeyRemove) -> Result<Command, BridgeError> {
    Ok(Command::KeyRemove {
        player: a.player,
        animation: a.animation,
        track: track_index(a.track)?,
        time: finite("time", a.time)?,
    })
}

/// [`c::AnimationGet`]'s checks, and the form its executor takes.
pub(crate) fn animation_get(a: c::AnimationGet) -> Result<Command, BridgeError> {
    Ok(Command::AnimationGet {
        player: a.player,
        animation: a.animation,
        max_keys: a.max_keys.unwrap_or(c::DEFAULT_MAX_KEYS),
    })
}

/// [`c::AnimationTreeAddNode`]'s checks, and the form its executor takes.
pub(crate) fn animation_tree_add_node(a: c::AnimationTreeAddNode) -> Result<Command, BridgeError> {
    name_ok("graph node", &a.name)?;
    if !a.node_type.starts_with("AnimationNode") {
        return Err(invalid(format!(
            "node_type {:?} is not an AnimationNode class",
            a.node_type
        )));
    }
    finite("position.x", a.position[0])?;
    finite("position.y", a.position[1])?;
    Ok(Command::TreeAddNode {
        tree: a.tree,
        parent: a.parent,
        graph: a.graph,
        name: a.name,
        node_type: a.node_type,
        animation: a.animation,
        position: a.position,
    })
}

/// [`c::AnimationTreeConnect`]'s checks, and the form its executor takes.
pub(crate) fn animation_tree_connect(a: c::AnimationTreeConnect) -> Result<Command, BridgeError> {
    if finite("xfade_time", a.xfade_time)? < 0.0 {
        return Err(invalid("xfade_time must be 0 or more"));
    }
    Ok(Command::TreeConnect {
        switch_mode: named("switch_mode", &SWITCH_MODES, &a.switch_mode)?,
        advance_mode: named("advance_mode", &ADVANCE_MODES, &a.advance_mode)?,
        tree: a.tree,
        state_machine: a.state_machine,
        from: a.from,
        to: a.to,
        advance_condition: a.advance_condition.filter(|c| !c.is_empty()),
        xfade_time: a.xfade_time,
    })
}

/// [`c::AnimationTreeBlendConnect`]'s checks, and the form its executor takes.
pub(crate) fn animation_tree_blend_connect(
    a: c::AnimationTreeBlendConnect,
) -> Result<Command, BridgeError> {
    if a.port < 0 {
        return Err(invalid("port must be 0 or more"));
    }
    if a.from == a.to {
        return Err(invalid("a node cannot feed itself"));
    }
    Ok(Command::TreeBlendConnect {
        tree: a.tree,
        blend_tree: a.blend_tree,
        to: a.to,
        port: a.port,
        from: a.from,
    })
}

/// [`c::ThemeSetItem`]'s checks, and the form its executor takes.
pub(crate) fn theme_set_item(a: c::ThemeSetItem) -> Result<Command, BridgeError> {
    res_path(&a.path)?;
    name_ok("theme type", &a.theme_type)?;
    name_ok("theme item", &a.name)?;
    Ok(Command::ThemeSetItem {
        value: theme_value(a.kind, &a.value, false)?,
        path: a.path,
        theme_type: a.theme_type,
        kind: a.kind,
        name: a.name,
    })
}

/// [`c::ControlThemeOverride`]'s checks, and the form its executor takes.
pub(crate) fn control_theme_override(a: c::ControlThemeOverride) -> Result<Command, BridgeError> {
    name_ok("theme item", &a.name)?;
    Ok(Command::ThemeOverride {
        value: theme_value(a.kind, &a.value, true)?,
        node: a.node,
        kind: a.kind,
        name: a.name,
    })
}

/// [`c::ControlAnchorsPreset`]'s checks, and the form its executor takes.
pub(crate) fn control_anchors_preset(a: c::ControlAnchorsPreset) -> Result<Command, BridgeError> {
    let preset = LAYOUT_PRESETS
        .iter()
        .position(|n| *n == a.preset)
        .ok_or_else(|| {
            invalid(format!(
                "preset {:?}: one of {}",
                a.preset,
                LAYOUT_PRESETS.join(", ")
            ))
        })?;
    Ok(Command::AnchorsPreset {
        node: a.node,
        preset: preset as i32,
    })
}

/// [`c::ControlAddContainer`]'s checks, and the form its executor takes.
pub(crate) fn control_add_container(a: c::ControlAddContainer) -> Result<Command, BridgeError> {
    name_ok("node", &a.name)?;
    if !CONTAINER_TYPES.contains(&a.container_type.as_str()) {
        return Err(invalid(format!(
            "type {:?}: one of {}",
            a.container_type,
            CONTAINER_TYPES.join(", ")
        )));
    }
    let t = a.container_type.as_str();
    let fits = |field: &str, ok: bool| {
        if ok {
            Ok(())
        } else {
            Err(invalid(format!("{field} does not apply to a {t}")))
        }
    };
    if a.separation.is_some() {
        fits(
            "separation",
            matches!(
                t,
                "HBoxContainer"
                    | "VBoxContainer"
                    | "GridContainer"
                    | "HFlowContainer"
                    | "VFlowContainer"
            ),
        )?;
    }
    if let Some(n) = a.columns {
        fits("columns", t == "GridContainer")?;
        if n < 1 {
            return Err(invalid("columns must be 1 or more"));
        }
    }
    if a.margin.is_some() {
        fits("margin", t == "MarginContainer")?;
    }
    Ok(Command::AddContainer {
        parent: a.parent,
        container_type: a.container_type,
        name: a.name,
        separation: a.separation,
        columns: a.columns,
        margin: a.margin,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use godot_mcp_protocol::{ErrorCode, ErrorEffect};

    /// The request decoded by the add-on's one decoder.
    fn decode(cmd: &str, p: &Json) -> Option<Result<Command, BridgeError>> {
        Some(crate::decode::decode(cmd, p))
    }

    /// A theme colour takes the forms every value takes (agent trial ui-theme-resource:
    /// "#ff0000" was refused); the $type object keeps working; a non-colour is refused.
    #[test]
    fn a_theme_color_takes_hex_names_and_arrays() {
        let color = |v: Json| match theme_value(ThemeKind::Color, &v, false) {
            Ok(ThemeValue::Plain(Value::Color(c))) => Some(c),
            _ => None,
        };
        assert_eq!(color(json!("#ff0000")), Some([1.0, 0.0, 0.0, 1.0]));
        assert_eq!(color(json!("red")), Some([1.0, 0.0, 0.0, 1.0]));
        assert_eq!(color(json!([0, 0.5, 1])), Some([0.0, 0.5, 1.0, 1.0]));
        assert_eq!(
            color(json!({"$type": "Color", "r": 0, "g": 1, "b": 0, "a": 0.5})),
            Some([0.0, 1.0, 0.0, 0.5])
        );
        assert_eq!(color(json!("not a colour")), None);
        assert_eq!(color(json!(7)), None);
    }

    #[test]
    fn every_authoring_command_decodes_from_its_documented_params() {
        let examples = [
            (
                c::NODE_INSTANCE,
                json!({"parent": ".", "scene": "res://p.tscn"}),
            ),
            (
                c::NODE_GROUP,
                json!({"node": "A", "group": "g", "add": true}),
            ),
            (
                c::NODE_EDITABLE_CHILDREN,
                json!({"node": "P", "editable": true}),
            ),
            (c::EDITOR_SELECT, json!({"nodes": ["A", "B"]})),
            (c::EDITOR_SELECTION, json!({})),
            (c::SCENE_SAVE_ALL, json!(null)),
            (c::NODE_CONNECTIONS, json!({"node": "A"})),
            (c::NODE_PROPERTIES, json!({"node": "A", "list": true})),
            (
                c::ANIMATION_ADD,
                json!({"player": "AP", "name": "walk", "length": 1.5, "loop_mode": "linear"}),
            ),
            (
                c::ANIMATION_REMOVE,
                json!({"player": "AP", "animation": "walk"}),
            ),
            (
                c::ANIMATION_TRACK_ADD,
                json!({"player": "AP", "animation": "walk", "track_type": "position_3d", "path": "Mesh"}),
            ),
            (
                c::ANIMATION_TRACK_REMOVE,
                json!({"player": "AP", "animation": "walk", "track": 0}),
            ),
            (
                c::ANIMATION_KEY_INSERT,
                json!({"player": "AP", "animation": "walk", "track": 0, "time": 0.5, "value": 1}),
            ),
            (
                c::ANIMATION_KEY_REMOVE,
                json!({"player": "AP", "animation": "walk", "track": 0, "time": 0.5}),
            ),
            (
                c::ANIMATION_GET,
                json!({"player": "AP", "animation": "walk"}),
            ),
            (
                c::ANIMATION_SET,
                json!({"player": "AP", "animation": "walk", "step": 0.1, "loop_mode": 2, "tracks": [{"track": 0, "update_mode": "discrete", "interpolation": "CUBIC_ANGLE"}]}),
            ),
            (
                c::ANIMATION_TREE_ADD_NODE,
                json!({"tree": "AT", "graph": "state_machine", "name": "Idle", "node_type": "AnimationNodeAnimation", "animation": "idle"}),
            ),
            (
                c::ANIMATION_TREE_CONNECT,
                json!({"tree": "AT", "from": "Start", "to": "Idle", "advance_mode": "auto"}),
            ),
            (
                c::ANIMATION_TREE_BLEND_CONNECT,
                json!({"tree": "AT", "blend_tree": "Mixer", "to": "output", "port": 0, "from": "Blend"}),
            ),
            (
                c::THEME_SET_ITEM,
                json!({"path": "res://t.tres", "theme_type": "Button", "kind": "stylebox", "name": "normal", "value": {"bg_color": {"$type": "Color", "r": 1, "g": 0, "b": 0, "a": 1}}}),
            ),
            (
                c::CONTROL_THEME_OVERRIDE,
                json!({"node": "L", "kind": "font_size", "name": "font_size", "value": 20}),
            ),
            (
                c::CONTROL_ANCHORS_PRESET,
                json!({"node": "L", "preset": "full_rect"}),
            ),
            (
                c::CONTROL_ADD_CONTAINER,
                json!({"parent": ".", "type": "GridContainer", "name": "G", "columns": 3, "separation": 4}),
            ),
        ];
        // The table's last commands (the others: `command::tests`).
        let all: Vec<_> = c::TABLE.iter().map(|(m, _)| *m).collect();
        let names: Vec<_> = examples.iter().map(|(m, _)| *m).collect();
        assert_eq!(names, all[all.len() - names.len()..]);
        for (cmd, p) in examples {
            decode(cmd, &p)
                .expect("an authoring command")
                .unwrap_or_else(|e| panic!("{cmd}: {e:?}"));
        }
        assert_eq!(
            decode(
                c::CONTROL_ANCHORS_PRESET,
                &json!({"node": "L", "preset": "full_rect"})
            )
            .unwrap()
            .unwrap(),
            Command::AnchorsPreset {
                node: "L".into(),
                preset: 15,
            }
        );
        // Names as agents type them, Godot's constants and integers: one value each.
        let set = |p: serde_json::Value| decode(c::ANIMATION_SET, &p).unwrap().unwrap();
        let Command::AnimationSet {
            loop_mode, tracks, ..
        } = set(
            json!({"player": "AP", "animation": "w", "loop_mode": "ping_pong",
            "tracks": [{"track": 1, "update_mode": 1, "interpolation": "INTERPOLATION_LINEAR_ANGLE"}]}),
        )
        else {
            panic!("not a set")
        };
        assert_eq!(loop_mode, Some(LoopMode::Pingpong));
        assert_eq!(tracks[0].update_mode, Some(UpdateMode::Discrete));
        assert_eq!(tracks[0].interpolation, Some(Interpolation::LinearAngle));
        assert_eq!(Interpolation::LinearAngle.ord(), 3);
        assert_eq!(UpdateMode::name_of(2), "capture");
        assert_eq!(TrackKind::Position3d.ord(), 1);
        assert_eq!(TrackKind::name_of(TrackKind::Audio.ord()), "audio");
        assert_eq!(ThemeKind::Stylebox.ord(), 5);
        assert_eq!(
            ThemeKind::FontSize.override_property("font_size"),
            "theme_override_font_sizes/font_size"
        );
    }

    #[test]
    fn bad_authoring_requests_get_structured_errors() {
        let cases = [
            (
                c::NODE_INSTANCE,
                json!({"parent": ".", "scene": "/etc/x.tscn"}),
            ),
            (
                c::NODE_GROUP,
                json!({"node": "A", "group": " ", "add": true}),
            ),
            (
                c::ANIMATION_ADD,
                json!({"player": "AP", "name": "walk", "length": 0}),
            ),
            (
                c::ANIMATION_ADD,
                json!({"player": "AP", "name": "a/b", "length": 1}),
            ),
            (
                c::ANIMATION_TRACK_ADD,
                json!({"player": "AP", "animation": "w", "track_type": "laser", "path": "X"}),
            ),
            (
                c::ANIMATION_TRACK_ADD,
                json!({"player": "AP", "animation": "w", "track_type": "position_3d", "path": "X", "update_mode": "discrete"}),
            ),
            (c::ANIMATION_SET, json!({"player": "AP", "animation": "w"})),
            (
                c::ANIMATION_SET,
                json!({"player": "AP", "animation": "w", "step": -0.1}),
            ),
            (
                c::ANIMATION_SET,
                json!({"player": "AP", "animation": "w", "tracks": [{"track": 0, "update_mode": "sideways"}]}),
            ),
            (
                c::ANIMATION_SET,
                json!({"player": "AP", "animation": "w", "loop_mode": 3}),
            ),
            (
                c::ANIMATION_SET,
                json!({"player": "AP", "animation": "w", "tracks": [{"track": 0}]}),
            ),
            (
                c::ANIMATION_KEY_INSERT,
                json!({"player": "AP", "animation": "w", "track": -1, "time": 0, "value": 1}),
            ),
            (
                c::ANIMATION_KEY_INSERT,
                json!({"player": "AP", "animation": "w", "track": 0, "time": -1, "value": 1}),
            ),
            (
                c::THEME_SET_ITEM,
                json!({"path": "res://t.tres", "theme_type": "Button", "kind": "color", "name": "x", "value": 3}),
            ),
            (
                c::THEME_SET_ITEM,
                json!({"path": "res://t.tres", "theme_type": "Button", "kind": "color", "name": "x", "value": null}),
            ),
            (
                c::CONTROL_THEME_OVERRIDE,
                json!({"node": "L", "kind": "font_size", "name": "font_size", "value": 0}),
            ),
            (
                c::CONTROL_ANCHORS_PRESET,
                json!({"node": "L", "preset": "diagonal"}),
            ),
            (
                c::CONTROL_ADD_CONTAINER,
                json!({"parent": ".", "type": "Button", "name": "B"}),
            ),
            (
                c::CONTROL_ADD_CONTAINER,
                json!({"parent": ".", "type": "VBoxContainer", "name": "B", "columns": 2}),
            ),
            (c::NODE_PROPERTIES, json!({"node": "A", "limit": 0})),
            (
                c::ANIMATION_TREE_ADD_NODE,
                json!({"tree": "AT", "graph": "state_machine", "name": "X", "node_type": "Node2D"}),
            ),
            (
                c::ANIMATION_TREE_CONNECT,
                json!({"tree": "AT", "from": "A", "to": "B", "switch_mode": "teleport"}),
            ),
            (
                c::ANIMATION_TREE_BLEND_CONNECT,
                json!({"tree": "AT", "to": "B", "port": -1, "from": "A"}),
            ),
            (
                c::ANIMATION_TREE_BLEND_CONNECT,
                json!({"tree": "AT", "to": "B", "port": 0, "from": "B"}),
            ),
        ];
        for (cmd, p) in cases {
            let e = decode(cmd, &p).unwrap().unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidParams, "{cmd} {p}: {}", e.message);
            assert_eq!(e.effect, Some(ErrorEffect::Unchanged));
        }
    }
}
