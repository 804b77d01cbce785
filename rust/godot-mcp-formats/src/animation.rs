//! Animations as Godot stores them in text: an `Animation` resource's `length`,
//! `loop_mode`, `step` and `tracks/N/*` properties (`interp`, and a value track's
//! update mode in its keys' `update`), and the `{name: resource}` dictionaries
//! of `AnimationLibrary._data` and `AnimationPlayer.libraries`.
//!
//! Key layouts follow Godot 4's `Animation::_set`: value, method, audio and
//! animation tracks store a dictionary with `times`; bezier tracks store `points`
//! five floats per key (value, in-handle x/y, out-handle x/y); the 3D tracks store
//! one packed float array, `[time, transition, components…]` per key.

use std::borrow::Cow;

use serde::Serialize;

use crate::literal::{DictEntry, Literal};
use crate::text::Property;

/// One animation, decoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Animation {
    /// Seconds (Godot's default 1.0 when not written).
    pub length: f64,
    /// `none`, `linear` or `pingpong`.
    pub loop_mode: &'static str,
    /// The editor's snap step in seconds (Godot's default 1/30 when not written), as
    /// Godot holds it (a 32-bit float, its shortest decimal).
    pub step: f64,
    pub tracks: Vec<Track>,
}

/// One track of an [`Animation`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Track {
    pub index: usize,
    /// Godot's track type name: `value`, `method`, `bezier`, `position_3d`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The node path (and property), e.g. `Sprite2D:position`.
    pub path: String,
    /// `nearest`, `linear`, `cubic`, `linear_angle` or `cubic_angle`.
    pub interpolation: &'static str,
    pub enabled: bool,
    pub loop_wrap: bool,
    /// Literal tracks only: `continuous`, `discrete` or `capture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_mode: Option<&'static str>,
    /// False when the key layout is not one this module knows (keys is then empty).
    pub decoded: bool,
    pub keys: Vec<Key>,
}

/// One key of a [`Track`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Key {
    pub time: f64,
    /// The easing exponent (1 linear); absent for bezier, audio and animation keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition: Option<f64>,
    /// (The parsed text: no JSON form; the value model is `variant::Value`.)
    #[serde(skip)]
    pub value: Literal,
}

/// `Animation.LoopMode`, `Animation.InterpolationType` and `Animation.UpdateMode` by
/// name, in Godot's order (the index is the integer a file writes).
pub const LOOP_MODES: [&str; 3] = ["none", "linear", "pingpong"];
pub const INTERPOLATIONS: [&str; 5] = ["nearest", "linear", "cubic", "linear_angle", "cubic_angle"];
pub const UPDATE_MODES: [&str; 3] = ["continuous", "discrete", "capture"];

/// `Animation.step`'s default (1/30 s).
pub const DEFAULT_STEP: f64 = 1.0 / 30.0;

fn name_of(table: &'static [&'static str], v: Option<&Literal>, default: usize) -> &'static str {
    let i = v.and_then(Literal::as_int).map_or(default as i64, |i| i);
    usize::try_from(i)
        .ok()
        .and_then(|i| table.get(i).copied())
        .unwrap_or("unknown")
}

/// The numbers of a `PackedFloat32Array(…)`, `PackedFloat64Array(…)`,
/// `PackedInt32Array(…)` (or a plain array of numbers).
pub fn packed_numbers(v: &Literal) -> Option<Vec<f64>> {
    let items = match v {
        Literal::Constructor { name, args } if name.starts_with("Packed") => args.as_slice(),
        Literal::Array(items) => items.as_slice(),
        _ => return None,
    };
    items.iter().map(Literal::as_f64).collect()
}

fn float(x: f64) -> Literal {
    Literal::Float(x)
}

fn ctor(name: &'static str, args: &[f64]) -> Literal {
    Literal::Constructor {
        name: Cow::Borrowed(name),
        args: args.iter().copied().map(float).collect(),
    }
}

/// Decode an `Animation` resource from its properties.
pub fn parse_animation(props: &[Property]) -> Animation {
    let get = |n: &str| props.iter().find(|p| p.name == n).map(|p| &p.value);
    let mut tracks: Vec<(usize, Vec<(&str, &Literal)>)> = Vec::new();
    for p in props {
        let Some(rest) = p.name.strip_prefix("tracks/") else {
            continue;
        };
        let Some((idx, field)) = rest.split_once('/') else {
            continue;
        };
        let Ok(idx) = idx.parse::<usize>() else {
            continue;
        };
        match tracks.iter_mut().find(|(i, _)| *i == idx) {
            Some((_, fields)) => fields.push((field, &p.value)),
            None => tracks.push((idx, vec![(field, &p.value)])),
        }
    }
    tracks.sort_by_key(|(i, _)| *i);
    Animation {
        length: get("length").and_then(Literal::as_f64).unwrap_or(1.0),
        loop_mode: name_of(&LOOP_MODES, get("loop_mode"), 0),
        step: crate::variant::real(
            get("step")
                .and_then(Literal::as_f64)
                .unwrap_or(DEFAULT_STEP),
        ),
        tracks: tracks
            .into_iter()
            .map(|(index, fields)| track(index, &fields))
            .collect(),
    }
}

fn track(index: usize, fields: &[(&str, &Literal)]) -> Track {
    let get = |n: &str| fields.iter().find(|(f, _)| *f == n).map(|(_, v)| *v);
    let kind = get("type")
        .and_then(Literal::as_str)
        .unwrap_or("")
        .to_string();
    let keys_value = get("keys");
    let update = keys_value.and_then(|k| k.dict_get("update"));
    let keys = keys_value.and_then(|k| decode_keys(&kind, k));
    Track {
        index,
        path: get("path")
            .and_then(Literal::as_str)
            .unwrap_or("")
            .to_string(),
        interpolation: name_of(&INTERPOLATIONS, get("interp"), 1),
        enabled: get("enabled").and_then(Literal::as_bool).unwrap_or(true),
        loop_wrap: get("loop_wrap").and_then(Literal::as_bool).unwrap_or(true),
        update_mode: (kind == "value").then(|| name_of(&UPDATE_MODES, update, 0)),
        decoded: keys.is_some(),
        keys: keys.unwrap_or_default(),
        kind,
    }
}

fn decode_keys(kind: &str, keys: &Literal) -> Option<Vec<Key>> {
    // The 3D tracks: one flat array, [time, transition, components…] per key.
    let stride = match kind {
        "position_3d" | "scale_3d" => Some(5),
        "rotation_3d" => Some(6),
        "blend_shape" => Some(3),
        _ => None,
    };
    if let Some(stride) = stride {
        let flat = packed_numbers(keys)?;
        if !flat.len().is_multiple_of(stride) {
            return None;
        }
        return Some(
            flat.chunks(stride)
                .map(|k| Key {
                    time: k[0],
                    transition: Some(k[1]),
                    value: match kind {
                        "rotation_3d" => ctor("Quaternion", &k[2..]),
                        "blend_shape" => float(k[2]),
                        _ => ctor("Vector3", &k[2..]),
                    },
                })
                .collect(),
        );
    }
    let times = packed_numbers(keys.dict_get("times")?)?;
    let transitions = keys.dict_get("transitions").and_then(packed_numbers);
    let transition = |i: usize| transitions.as_ref().and_then(|t| t.get(i).copied());
    let values: Vec<Literal> = match kind {
        "value" | "method" => keys.dict_get("values")?.as_array()?.to_vec(),
        "bezier" => {
            let points = packed_numbers(keys.dict_get("points")?)?;
            let modes = keys.dict_get("handle_modes").and_then(packed_numbers);
            if points.len() != times.len() * 5 {
                return None;
            }
            points
                .chunks(5)
                .enumerate()
                .map(|(i, p)| {
                    let mode = modes.as_ref().and_then(|m| m.get(i)).copied();
                    Literal::Dictionary(vec![
                        entry("value", float(p[0])),
                        entry("in_handle", ctor("Vector2", &p[1..3])),
                        entry("out_handle", ctor("Vector2", &p[3..5])),
                        entry("handle_mode", Literal::Int(mode.unwrap_or(0.0) as i64)),
                    ])
                })
                .collect()
        }
        "audio" => keys.dict_get("clips")?.as_array()?.to_vec(),
        "animation" => match keys.dict_get("clips")? {
            Literal::Constructor { args, .. } => args.clone(),
            Literal::Array(a) => a.clone(),
            _ => return None,
        },
        _ => return None,
    };
    if values.len() != times.len() {
        return None;
    }
    let with_transition = matches!(kind, "value" | "method");
    Some(
        times
            .iter()
            .zip(values)
            .enumerate()
            .map(|(i, (&time, value))| Key {
                time,
                transition: if with_transition { transition(i) } else { None },
                value,
            })
            .collect(),
    )
}

fn entry(key: &str, value: Literal) -> DictEntry {
    DictEntry {
        key: Literal::String(key.to_string()),
        value,
    }
}

/// The `(name, resource)` pairs of a `{ &"name": SubResource("…"), … }` dictionary:
/// `AnimationLibrary._data` and `AnimationPlayer.libraries`. Names as written (the
/// default library is `""`); non-string keys are skipped.
pub fn named_resources(dict: &Literal) -> Vec<(String, Literal)> {
    match dict {
        Literal::Dictionary(entries) => entries
            .iter()
            .filter_map(|e| Some((e.key.as_str()?.to_string(), e.value.clone())))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBRARY: &str = include_str!("../../../tests/fixtures/readfam/anim_library.tres");

    fn walk() -> Animation {
        let res = crate::parse_resource(LIBRARY).unwrap();
        let data = res.properties.iter().find(|p| p.name == "_data").unwrap();
        let names = named_resources(&data.value);
        assert_eq!(names[0].0, "idle");
        assert_eq!(names[1].0, "walk");
        let Literal::SubResource(id) = &names[1].1 else {
            panic!("{:?}", names[1].1)
        };
        let sub = res.sub_resources.iter().find(|s| &s.id == id).unwrap();
        parse_animation(&sub.properties)
    }

    #[test]
    fn decodes_every_track_kind_godot_wrote() {
        let a = walk();
        assert_eq!(a.length, 2.0);
        assert_eq!(a.loop_mode, "linear");
        assert_eq!(a.tracks.len(), 4);
        let v = &a.tracks[0];
        assert_eq!(
            (v.kind.as_str(), v.path.as_str()),
            ("value", "Sprite2D:position")
        );
        assert_eq!(v.interpolation, "cubic");
        assert_eq!(v.update_mode, Some("continuous"));
        assert_eq!(v.keys.len(), 2);
        assert_eq!(v.keys[1].time, 1.5);
        assert_eq!(v.keys[1].transition, Some(0.5));
        assert_eq!(
            v.keys[1].value,
            ctor("Vector2", &[100.0, 20.0]).with_int_args()
        );
        let m = &a.tracks[1];
        assert_eq!(
            m.keys[0].value.dict_get("method").and_then(Literal::as_str),
            Some("jump")
        );
        let b = &a.tracks[2];
        assert_eq!(b.keys[0].time, 0.25);
        assert_eq!(
            b.keys[0].value.dict_get("value"),
            Some(&Literal::Float(0.5))
        );
        assert_eq!(
            b.keys[0].value.dict_get("out_handle"),
            Some(&ctor("Vector2", &[0.1, 0.2]))
        );
        let p = &a.tracks[3];
        assert!(p.decoded);
        assert_eq!(p.keys[0].time, 0.5);
        assert_eq!(p.keys[0].value, ctor("Vector3", &[1.0, 2.0, 3.0]));
    }

    #[test]
    fn defaults_are_godots() {
        let res = crate::parse_resource(LIBRARY).unwrap();
        let idle = parse_animation(&res.sub_resources[1].properties);
        assert_eq!((idle.length, idle.loop_mode), (0.5, "pingpong"));
        assert!(idle.tracks.is_empty());
        let empty = parse_animation(&[]);
        assert_eq!((empty.length, empty.loop_mode), (1.0, "none"));
        assert_eq!(empty.step, 0.033333335, "Godot's 1/30 as it holds it");
    }

    /// A corpus scene Godot saved (the platformer demo's coin): `step`, `loop_mode`, and
    /// the value tracks' update modes (continuous, discrete, capture) read as written;
    /// an animation that writes no `step` has Godot's 1/30 s.
    #[test]
    fn step_loop_mode_and_update_modes_read_as_the_corpus_wrote_them() {
        const COIN: &str =
            include_str!("../../../tests/fixtures/corpus/demo-4.4/2d/platformer/level/coin.tscn");
        let scene = crate::parse_scene(COIN).unwrap();
        let anim = |id: &str| {
            let sub = scene.sub_resources.iter().find(|s| s.id == id).unwrap();
            parse_animation(&sub.properties)
        };
        let reset = anim("Animation_4kkvr");
        assert_eq!((reset.length, reset.step), (0.001, 0.033333335));
        let picked = anim("1");
        assert_eq!(
            (picked.length, picked.step, picked.loop_mode),
            (1.5, 0.25, "none")
        );
        assert_eq!(picked.tracks[0].update_mode, Some("continuous"));
        assert_eq!(
            picked.tracks[1].update_mode, None,
            "a method track has none"
        );
        let spin = anim("2");
        assert_eq!((spin.step, spin.loop_mode), (0.25, "linear"));
        assert_eq!(spin.tracks[0].update_mode, Some("discrete"));
        assert_eq!(spin.tracks[0].interpolation, "linear");
        let captures: Vec<(String, usize)> = scene
            .sub_resources
            .iter()
            .filter(|s| s.resource_type == "Animation")
            .flat_map(|s| {
                let a = parse_animation(&s.properties);
                a.tracks
                    .iter()
                    .filter(|t| t.update_mode == Some("capture"))
                    .map(|t| (s.id.clone(), t.index))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(captures.len(), 3, "{captures:?}");
    }

    /// `tracks/N/interp = 2` in a corpus scene (the physics platformer's stage) is cubic.
    #[test]
    fn a_cubic_track_reads_as_cubic() {
        const STAGE: &str = include_str!(
            "../../../tests/fixtures/corpus/demo-4.4/2d/physics_platformer/stage.tscn"
        );
        let scene = crate::parse_scene(STAGE).unwrap();
        let cubic: Vec<&'static str> = scene
            .sub_resources
            .iter()
            .filter(|s| s.resource_type == "Animation")
            .flat_map(|s| parse_animation(&s.properties).tracks)
            .map(|t| t.interpolation)
            .filter(|i| *i == "cubic")
            .collect();
        assert_eq!(
            cubic.len(),
            STAGE.matches("/interp = 2\n").count(),
            "{cubic:?}"
        );
        assert!(!cubic.is_empty());
    }

    #[test]
    fn a_key_layout_that_does_not_add_up_is_not_decoded() {
        let v = crate::parse_value("PackedFloat32Array(0.5, 1, 1, 2)").unwrap();
        assert_eq!(decode_keys("position_3d", &v), None);
    }

    impl Literal {
        /// Vector2(100, 20) as Godot writes it: integer-looking arguments.
        fn with_int_args(self) -> Literal {
            match self {
                Literal::Constructor { name, args } => Literal::Constructor {
                    name,
                    args: args
                        .into_iter()
                        .map(|a| match a {
                            Literal::Float(f) if f.fract() == 0.0 => Literal::Int(f as i64),
                            o => o,
                        })
                        .collect(),
                },
                o => o,
            }
        }
    }
}
