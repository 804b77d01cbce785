//! Animation executors: animations, tracks and keys (the trees: `animation_tree.rs`).
//!
//! Undo records whole states, not inverse steps: an animation edit is applied to a copy
//! and undone by restoring a snapshot through one call ([`GodotMcpAnimationState`]). One
//! call per direction cannot be split or reordered by the undo history.

use godot::classes::{Animation, AnimationLibrary, Node, Resource};
use godot::prelude::*;
use godot_mcp_editor_core::authoring::{
    Interpolation, LoopMode, NewTrack, TrackKind, TrackSettings, UpdateMode,
};
use godot_mcp_protocol::{BridgeError, ErrorCode};
use serde_json::{Value as Json, json};

use super::ctx::{
    Res, USAGE_MARKERS, USAGE_STORAGE, begin, embedded, err, failed, find, misrouted, obj,
    scene_path, scene_root, undo_redo, with_verdict,
};
use crate::variant::{from_variant, to_variant};
use godot_mcp_editor_core::command::Command;

/// `Animation.FIND_MODE_APPROX`.
const FIND_APPROX: i64 = 1;

/// The full stored state of an animation, restored onto the animation being edited in one
/// call: the undo history's do and undo of every animation edit.
#[derive(GodotClass)]
#[class(tool, no_init, base = RefCounted)]
pub(crate) struct GodotMcpAnimationState {
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
        // `clear()` leaves the `capture_included` flag as it was and loading a value
        // track's keys only ever raises it, so an undo of "update_mode = capture" would
        // save `capture_included = true` still. Removing a track makes Godot recompute
        // the flag from the tracks (`_check_capture_included`): add one and remove it.
        let last = target.add_track(godot::classes::animation::TrackType::VALUE);
        target.remove_track(last);
    }
}

pub(crate) fn snapshot(anim: &Gd<Animation>) -> Result<Gd<Animation>, BridgeError> {
    Ok(anim.duplicate_resource())
}

pub(crate) struct FoundAnimation {
    pub(crate) library: Gd<AnimationLibrary>,
    pub(crate) name: String,
    pub(crate) animation: Gd<Animation>,
}

/// `lib/name` or `name` (the default library).
pub(crate) fn split_name(animation: &str) -> (&str, &str) {
    animation.split_once('/').unwrap_or(("", animation))
}

pub(crate) fn player_node(root: &Gd<Node>, player: &str) -> Result<Gd<Node>, BridgeError> {
    let p = find(root, player)?;
    if !p.is_class("AnimationMixer") {
        return Err(failed(format!(
            "{player} is a {}, not an AnimationPlayer or AnimationTree",
            p.get_class()
        )));
    }
    Ok(p)
}

pub(crate) fn library_of(p: &Gd<Node>, lib: &str) -> Option<Gd<AnimationLibrary>> {
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

pub(crate) fn resolve(
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

pub(crate) fn file_refusal(what: &str, res: &Gd<impl Inherits<Resource>>) -> BridgeError {
    failed(format!(
        "the {what} is saved in its own file ({}): open and edit that file; this edits \
         animations stored in the scene",
        res.clone().upcast::<Resource>().get_path()
    ))
}

/// Apply `edit` to a copy of the animation and make the copy's state the new one, as ONE
/// undo action whose undo restores the old state.
pub(crate) fn animation_edit(
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

pub(crate) fn check_track(anim: &Gd<Animation>, track: i32) -> Result<i32, BridgeError> {
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

/// `value` read by the type the value track's property holds now (`Sprite:position:y`
/// → float): the one value language, so `-20` is -20.0 and `"#ff0000"` a Color. As sent
/// when the node or the property is not found from the player's `root_node`.
pub(crate) fn typed_for_track(
    player: &str,
    anim: &Gd<Animation>,
    track: i32,
    value: &godot_mcp_editor_core::value::Value,
) -> Result<godot_mcp_editor_core::value::Value, BridgeError> {
    let held = (|| {
        let root = scene_root().ok()?;
        let p = player_node(&root, player).ok()?;
        let base = p.get_node_or_null(&p.get("root_node").try_to::<NodePath>().ok()?)?;
        let path = anim.track_get_path(track);
        let names: Vec<String> = (0..path.get_name_count())
            .map(|i| path.get_name(i).to_string())
            .collect();
        let node = base.get_node_or_null(&NodePath::from(names.join("/").as_str()))?;
        let property = path.get_concatenated_subnames().to_string();
        (!property.is_empty()).then(|| node.get_indexed(&NodePath::from(property.as_str())))
    })();
    let Some(held) = held.filter(|h| !h.is_nil()) else {
        return Ok(value.clone());
    };
    let ty = godot::global::type_string(held.get_type().ord() as i64).to_string();
    godot_mcp_editor_core::coerce::coerce(
        value,
        &godot_mcp_editor_core::coerce::Declared::of(&ty),
        &|_| None,
    )
    .map_err(|e| {
        failed(format!(
            "track {track} animates {} (a {ty}): {e}",
            anim.track_get_path(track)
        ))
    })
}

pub(crate) fn find_key(anim: &Gd<Animation>, track: i32, time: f64) -> i64 {
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
pub(crate) fn key_value(
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
pub(crate) fn describe(anim: &Gd<Animation>, max_keys: usize) -> Json {
    let mut a = anim.clone();
    let tracks: Vec<Json> = (0..anim.get_track_count())
        .map(|t| {
            let kind = a.call("track_get_type", &[t.to_variant()]).to::<i32>();
            let count = anim.track_get_key_count(t);
            let keys: Vec<Json> = (0..count)
                .take(max_keys)
                .map(|k| {
                    let value = if kind == 6 {
                        a.call(
                            "bezier_track_get_key_value",
                            &[t.to_variant(), k.to_variant()],
                        )
                    } else if kind == 7 {
                        a.call(
                            "audio_track_get_key_stream",
                            &[t.to_variant(), k.to_variant()],
                        )
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
            let mut track = json!({
                "index": t,
                "type": TrackKind::name_of(kind),
                "path": anim.track_get_path(t).to_string(),
                "interpolation": interpolation_of(anim, t),
                "key_count": count,
                "keys": keys,
                "truncated": count as usize > max_keys,
            });
            if kind == 0 {
                track["update_mode"] = json!(update_mode_of(anim, t));
            }
            track
        })
        .collect();
    json!({
        "length": length_of(anim),
        "loop_mode": loop_mode_of(anim),
        "step": step_of(anim),
        "tracks": tracks,
    })
}

fn loop_mode_of(anim: &Gd<Animation>) -> &'static str {
    LoopMode::name_of(anim.clone().call("get_loop_mode", &[]).to::<i32>())
}

/// A 32-bit float as its shortest decimal (what a file writes: `0.05`, not
/// `0.05000000074505806`).
fn real32(x: f32) -> f64 {
    format!("{x}").parse().unwrap_or(f64::from(x))
}

/// The step as Godot holds it (a 32-bit float: its shortest decimal, as a file's).
fn step_of(anim: &Gd<Animation>) -> f64 {
    real32(anim.clone().call("get_step", &[]).to::<f32>())
}

fn length_of(anim: &Gd<Animation>) -> f64 {
    real32(anim.get_length())
}

fn interpolation_of(anim: &Gd<Animation>, track: i32) -> &'static str {
    Interpolation::name_of(
        anim.clone()
            .call("track_get_interpolation_type", &[track.to_variant()])
            .to::<i32>(),
    )
}

fn update_mode_of(anim: &Gd<Animation>, track: i32) -> &'static str {
    UpdateMode::name_of(
        anim.clone()
            .call("value_track_get_update_mode", &[track.to_variant()])
            .to::<i32>(),
    )
}

/// Godot held something other than what was set: an error naming both.
fn not_held(
    what: &str,
    asked: impl std::fmt::Display,
    held: impl std::fmt::Display,
) -> BridgeError {
    failed(format!("{what} was set to {asked} but Godot holds {held}"))
}

/// Track `track`'s update mode and interpolation, what is named, checked against its kind
/// first (update modes are a value track's; interpolation is for value, 3D and blend
/// shape tracks), set and read back into `out`.
pub(crate) fn track_modes(
    anim: &mut Gd<Animation>,
    track: i32,
    update_mode: Option<UpdateMode>,
    interpolation: Option<Interpolation>,
    out: &mut Json,
) -> Result<(), BridgeError> {
    let kind = check_track(anim, track)?;
    if update_mode.is_some() && kind != 0 {
        return Err(failed(format!(
            "update_mode is for value tracks; track {track} is a {} track",
            TrackKind::name_of(kind)
        )));
    }
    if interpolation.is_some() && !(0..=4).contains(&kind) {
        return Err(failed(format!(
            "interpolation is for value, position/rotation/scale 3D and blend shape tracks; \
             track {track} is a {} track",
            TrackKind::name_of(kind)
        )));
    }
    if let Some(m) = update_mode {
        anim.call(
            "value_track_set_update_mode",
            &[track.to_variant(), m.ord().to_variant()],
        );
        let held = update_mode_of(anim, track);
        if held != m.name() {
            return Err(not_held(
                &format!("track {track}'s update_mode"),
                m.name(),
                held,
            ));
        }
    }
    if let Some(i) = interpolation {
        anim.call(
            "track_set_interpolation_type",
            &[track.to_variant(), i.ord().to_variant()],
        );
        let held = interpolation_of(anim, track);
        if held != i.name() {
            return Err(not_held(
                &format!("track {track}'s interpolation"),
                i.name(),
                held,
            ));
        }
    }
    out["interpolation"] = json!(interpolation_of(anim, track));
    if kind == 0 {
        out["update_mode"] = json!(update_mode_of(anim, track));
    }
    Ok(())
}

/// `animation.set` on the copy being edited: every named track checked before anything
/// is set, then each setting set and read back. The answer is what Godot holds.
pub(crate) fn animation_set(
    anim: &mut Gd<Animation>,
    length: Option<f64>,
    step: Option<f64>,
    loop_mode: Option<LoopMode>,
    tracks: &[TrackSettings],
) -> Result<Json, BridgeError> {
    for t in tracks {
        check_track(anim, t.track)?;
    }
    if let Some(l) = length {
        anim.set_length(l as f32);
        if anim.get_length() != l as f32 {
            return Err(not_held("length", l, anim.get_length()));
        }
    }
    if let Some(s) = step {
        anim.call("set_step", &[(s as f32).to_variant()]);
        if step_of(anim) != real32(s as f32) {
            return Err(not_held("step", s, step_of(anim)));
        }
    }
    if let Some(m) = loop_mode {
        anim.call("set_loop_mode", &[m.ord().to_variant()]);
        if loop_mode_of(anim) != m.name() {
            return Err(not_held("loop_mode", m.name(), loop_mode_of(anim)));
        }
    }
    let mut rows = Vec::new();
    for t in tracks {
        let mut row = json!({"track": t.track});
        track_modes(anim, t.track, t.update_mode, t.interpolation, &mut row)?;
        rows.push(row);
    }
    Ok(json!({
        "length": length_of(anim),
        "step": step_of(anim),
        "loop_mode": loop_mode_of(anim),
        "tracks": rows,
    }))
}

pub(crate) fn animation_add(
    player: &str,
    library: &str,
    name: &str,
    length: f64,
    (loop_mode, step): (LoopMode, Option<f64>),
    autoplay: bool,
    tracks: &[NewTrack],
) -> Res {
    let root = scene_root()?;
    let p = player_node(&root, player)?;
    let id = if library.is_empty() {
        name.to_string()
    } else {
        format!("{library}/{name}")
    };
    if autoplay && !p.is_class("AnimationPlayer") {
        return Err(failed(format!(
            "{player} is a {}: autoplay is an AnimationPlayer's; nothing was added",
            p.get_class()
        )));
    }
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
    if let Some(s) = step {
        anim.call("set_step", &[(s as f32).to_variant()]);
    }
    // The tracks go into the new animation before the undo action that adds it: one
    // that fails leaves nothing added.
    for (i, t) in tracks.iter().enumerate() {
        add_track(player, &mut anim, t).map_err(|mut e| {
            e.message = format!("tracks[{i}]: {}; nothing was added", e.message);
            e
        })?;
    }
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
    if autoplay {
        let before = p.get("autoplay");
        ur.add_do_property(&obj(&p), "autoplay", &id.to_variant());
        ur.add_undo_property(&obj(&p), "autoplay", &before);
    }
    ur.add_do_reference(&obj(&anim));
    ur.commit_action();
    let mut out = json!({"player": player, "animation": id, "length": length_of(&anim),
               "loop_mode": loop_mode_of(&anim), "step": step_of(&anim)});
    if autoplay {
        out["autoplay"] = json!(p.get("autoplay").to_string());
    }
    if !tracks.is_empty() {
        out["tracks"] = json!(anim.get_track_count());
    }
    Ok(with_verdict(&root, &p, out))
}

pub(crate) fn animation_remove(player: &str, animation: &str) -> Res {
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
    // As the editor's own Remove does: a player's autoplay naming it is cleared (and put
    // back by undo), so the saved scene names no animation it lacks.
    if p.is_class("AnimationPlayer") && p.get("autoplay").to_string() == animation {
        ur.add_do_property(&obj(&p), "autoplay", &"".to_variant());
        ur.add_undo_property(&obj(&p), "autoplay", &animation.to_variant());
    }
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &p,
        json!({"player": player, "animation": animation}),
    ))
}

/// A new track on `anim` (the copy [`animation_edit`] edits, or a new animation not yet
/// added): its path, modes and keys, each read back.
fn add_track(player: &str, anim: &mut Gd<Animation>, t: &NewTrack) -> Result<Json, BridgeError> {
    let track = anim
        .call("add_track", &[t.kind.ord().to_variant()])
        .to::<i32>();
    anim.call(
        "track_set_path",
        &[
            track.to_variant(),
            NodePath::from(t.path.as_str()).to_variant(),
        ],
    );
    let mut out =
        json!({"track": track, "track_type": TrackKind::name_of(t.kind.ord()), "path": t.path});
    track_modes(anim, track, t.update_mode, t.interpolation, &mut out)?;
    if !t.keys.is_empty() {
        insert_keys(player, anim, track, &t.keys)?;
        out["keys"] = json!(t.keys.len());
    }
    Ok(out)
}

/// Insert `keys` into `track` of `anim` (the copy [`animation_edit`] edits: an error
/// leaves the animation as it was). Refused where a key exists at one of the times, so
/// that nothing is overwritten. Answers the first key's index once all are in.
fn insert_keys(
    player: &str,
    anim: &mut Gd<Animation>,
    track: i32,
    keys: &[godot_mcp_editor_core::authoring::Key],
) -> Result<i64, BridgeError> {
    let kind = check_track(anim, track)?;
    for k in keys {
        let time = k.time;
        if find_key(anim, track, time) >= 0 {
            return Err(failed(format!(
                "track {track} already has a key at {time}s: remove it first \
                 (remove_animation_key) so that nothing is overwritten"
            )));
        }
        // A value track's key takes the type of the property it animates: an agent's
        // `-20` for `position:y` is the float -20.0 (an int key was saved as `-20`).
        let value = match kind {
            0 => typed_for_track(player, anim, track, &k.value)?,
            _ => k.value.clone(),
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
                    k.transition.to_variant(),
                ],
            ),
        }
        .to::<i64>();
        if key < 0 {
            return Err(failed(format!(
                "Godot refused the key at {time}s for a {} track",
                TrackKind::name_of(kind)
            )));
        }
    }
    Ok(find_key(anim, track, keys[0].time))
}

pub(crate) fn run(a: Command) -> Res {
    match a {
        Command::AnimationAdd {
            player,
            library,
            name,
            length,
            loop_mode,
            step,
            autoplay,
            tracks,
        } => animation_add(
            &player,
            &library,
            &name,
            length,
            (loop_mode, step),
            autoplay,
            &tracks,
        ),
        Command::AnimationSet {
            player,
            animation,
            length,
            step,
            loop_mode,
            tracks,
        } => animation_edit(&player, &animation, "set animation", |anim| {
            animation_set(anim, length, step, loop_mode, &tracks)
        }),
        Command::AnimationRemove { player, animation } => animation_remove(&player, &animation),
        Command::TrackAdd {
            player,
            animation,
            track,
        } => animation_edit(&player, &animation, "add track", |anim| {
            add_track(&player, anim, &track)
        }),
        Command::TrackRemove {
            player,
            animation,
            track,
        } => animation_edit(&player, &animation, "remove track", |anim| {
            check_track(anim, track)?;
            anim.call("remove_track", &[track.to_variant()]);
            Ok(json!({"track": track}))
        }),
        Command::KeyInsert {
            player,
            animation,
            track,
            keys,
        } => animation_edit(&player, &animation, "insert key", |anim| {
            let first = insert_keys(&player, anim, track, &keys)?;
            let mut out = json!({"track": track, "key": first, "time": keys[0].time});
            if keys.len() > 1 {
                out["inserted"] = json!(keys.len());
            }
            Ok(out)
        }),
        Command::KeyRemove {
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
        Command::AnimationGet {
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
        _ => Err(misrouted("animation")),
    }
}
