//! An `AudioBusLayout` resource (`default_bus_layout.tres`) as Godot loads it.
//!
//! The file stores `bus/<i>/<field>` and `bus/<i>/effect/<j>/<field>`, omitting
//! fields that equal their defaults. Loading follows `AudioBusLayout::_set` and
//! `AudioServer::set_bus_layout`: a layout has at least one bus; an index past the
//! end grows the list with default buses (empty name, 0 dB, flags off); bus 0 is
//! always named `Master` and has no send; effects without a resource are dropped;
//! an effect's `enabled` defaults to false.

use serde::Serialize;

use crate::text::Property;
use crate::value::Value;

/// One bus, as the audio server will have it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bus {
    pub index: usize,
    pub name: String,
    pub volume_db: f64,
    pub mute: bool,
    pub solo: bool,
    pub bypass_fx: bool,
    /// The bus this one feeds (empty for Master).
    pub send: String,
    pub effects: Vec<BusEffect>,
}

/// One effect slot of a [`Bus`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BusEffect {
    /// The effect resource reference (`SubResource`/`ExtResource`).
    pub effect: Value,
    pub enabled: bool,
}

/// Most buses or effects per bus accepted (Godot's editor has no limit; this bounds
/// what a hostile index like `bus/99999999/mute` can allocate).
pub const MAX_INDEX: usize = 1024;

fn default_bus(index: usize) -> Bus {
    Bus {
        index,
        name: String::new(),
        volume_db: 0.0,
        mute: false,
        solo: false,
        bypass_fx: false,
        send: String::new(),
        effects: Vec::new(),
    }
}

/// The buses of an `AudioBusLayout`, from its `[resource]` properties. `Err` names a
/// property whose index exceeds [`MAX_INDEX`].
pub fn parse_bus_layout(props: &[Property]) -> Result<Vec<Bus>, String> {
    let mut buses = vec![default_bus(0)];
    // Per bus, the effect slots as stored (before dropping empty ones).
    let mut effects: Vec<Vec<(Option<Value>, bool)>> = vec![Vec::new()];
    for p in props {
        let Some(rest) = p.name.strip_prefix("bus/") else {
            continue;
        };
        let Some((idx, field)) = rest.split_once('/') else {
            continue;
        };
        let Ok(i) = idx.parse::<usize>() else {
            continue;
        };
        if i >= MAX_INDEX {
            return Err(p.name.clone());
        }
        while buses.len() <= i {
            buses.push(default_bus(buses.len()));
            effects.push(Vec::new());
        }
        let bus = &mut buses[i];
        let v = &p.value;
        match field {
            "name" => bus.name = v.as_str().unwrap_or("").to_string(),
            "volume_db" => bus.volume_db = v.as_f64().unwrap_or(0.0),
            "mute" => bus.mute = v.as_bool().unwrap_or(false),
            "solo" => bus.solo = v.as_bool().unwrap_or(false),
            "bypass_fx" => bus.bypass_fx = v.as_bool().unwrap_or(false),
            "send" => bus.send = v.as_str().unwrap_or("").to_string(),
            _ => {
                let Some((j, efield)) = field
                    .strip_prefix("effect/")
                    .and_then(|r| r.split_once('/'))
                    .and_then(|(j, f)| Some((j.parse::<usize>().ok()?, f)))
                else {
                    continue;
                };
                if j >= MAX_INDEX {
                    return Err(p.name.clone());
                }
                let slots = &mut effects[i];
                while slots.len() <= j {
                    slots.push((None, false));
                }
                match efield {
                    "effect" if *v != Value::Nil => slots[j].0 = Some(v.clone()),
                    "enabled" => slots[j].1 = v.as_bool().unwrap_or(false),
                    _ => {}
                }
            }
        }
    }
    for (bus, slots) in buses.iter_mut().zip(effects) {
        bus.effects = slots
            .into_iter()
            .filter_map(|(effect, enabled)| {
                Some(BusEffect {
                    effect: effect?,
                    enabled,
                })
            })
            .collect();
    }
    buses[0].name = "Master".into();
    buses[0].send = String::new();
    Ok(buses)
}

/// An embedded effect resource (`[sub_resource]`) of a layout file, kept as written.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectResource {
    pub id: String,
    /// The AudioEffect class, e.g. `AudioEffectReverb`.
    pub class: String,
    /// `(name, Variant text)` lines, in file order.
    pub properties: Vec<(String, String)>,
}

/// An `[ext_resource]` of a layout file (an effect saved in its own file).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtEffect {
    pub id: String,
    pub class: String,
    pub uid: Option<String>,
    pub path: String,
}

/// A whole `AudioBusLayout` file as an edit sees it: the buses as Godot loads them and
/// the resources their effects name. [`LayoutFile::to_text`] writes it the way Godot's
/// text saver does, so a file edited here and one Godot saved from the same layout are
/// the same bytes (`tests/disk_edits.rs` has Godot re-save what this writes).
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutFile {
    /// The header's `uid=`, kept.
    pub uid: Option<String>,
    pub ext_resources: Vec<ExtEffect>,
    pub sub_resources: Vec<EffectResource>,
    pub buses: Vec<Bus>,
}

/// A StringName literal as Godot writes one.
fn string_name(s: &str) -> String {
    format!("&{}", quoted(s))
}

/// Godot's string literal and float text: the value model's one writer.
pub use crate::variant::{float_text, quote as quoted};

fn reference_text(v: &Value) -> Option<String> {
    match v {
        Value::SubResource(id) => Some(format!("SubResource({})", quoted(id))),
        Value::ExtResource(id) => Some(format!("ExtResource({})", quoted(id))),
        _ => None,
    }
}

impl LayoutFile {
    /// The built-in layout Godot uses without a file: one Master bus.
    pub fn builtin() -> Self {
        let mut master = default_bus(0);
        master.name = "Master".into();
        Self {
            uid: None,
            ext_resources: Vec::new(),
            sub_resources: Vec::new(),
            buses: vec![master],
        }
    }

    /// The layout a parsed `.tres` holds. `Err` names what this writer cannot keep:
    /// an index past [`MAX_INDEX`], or an effect that is not a resource reference.
    pub fn from_resource(res: &crate::Resource) -> Result<Self, String> {
        let buses = parse_bus_layout(&res.properties)?;
        for bus in &buses {
            for e in &bus.effects {
                if reference_text(&e.effect).is_none() {
                    return Err(format!(
                        "bus {} has an effect that is not a resource",
                        bus.name
                    ));
                }
            }
        }
        Ok(Self {
            uid: res.uid.clone(),
            ext_resources: res
                .ext_resources
                .iter()
                .map(|e| ExtEffect {
                    id: e.id.clone(),
                    class: e.resource_type.clone(),
                    uid: e.uid.clone(),
                    path: e.path.clone(),
                })
                .collect(),
            sub_resources: res
                .sub_resources
                .iter()
                .map(|s| EffectResource {
                    id: s.id.clone(),
                    class: s.resource_type.clone(),
                    properties: s
                        .properties
                        .iter()
                        .map(|p| (p.name.clone(), p.text.clone()))
                        .collect(),
                })
                .collect(),
            buses,
        })
    }

    /// The index of the bus named `name`.
    pub fn bus_index(&self, name: &str) -> Option<usize> {
        self.buses.iter().position(|b| b.name == name)
    }

    /// The class of the resource an effect reference names.
    pub fn effect_class(&self, effect: &Value) -> Option<&str> {
        match effect {
            Value::SubResource(id) => self
                .sub_resources
                .iter()
                .find(|s| &s.id == id)
                .map(|s| s.class.as_str()),
            Value::ExtResource(id) => self
                .ext_resources
                .iter()
                .find(|e| &e.id == id)
                .map(|e| e.class.as_str()),
            _ => None,
        }
    }

    /// The file's text, as Godot 4.4's `ResourceFormatSaverText` writes this layout:
    /// only the resources still referenced, sub-resources in the order the buses use
    /// them; bus 0's fields only where they differ from the built-in Master bus, every
    /// other bus's fields always (the default layout has no such bus to compare with).
    pub fn to_text(&self) -> String {
        let mut used_ext: Vec<&ExtEffect> = Vec::new();
        let mut used_sub: Vec<&EffectResource> = Vec::new();
        for e in self.buses.iter().flat_map(|b| &b.effects) {
            match &e.effect {
                Value::ExtResource(id) => {
                    if let Some(x) = self.ext_resources.iter().find(|x| &x.id == id)
                        && !used_ext.iter().any(|u| u.id == x.id)
                    {
                        used_ext.push(x);
                    }
                }
                Value::SubResource(id) => {
                    if let Some(x) = self.sub_resources.iter().find(|x| &x.id == id)
                        && !used_sub.iter().any(|u| u.id == x.id)
                    {
                        used_sub.push(x);
                    }
                }
                _ => {}
            }
        }
        // Godot keeps the declaration order of external resources.
        used_ext.sort_by_key(|x| self.ext_resources.iter().position(|e| e.id == x.id));
        let steps = used_ext.len() + used_sub.len() + 1;
        let mut out = String::from("[gd_resource type=\"AudioBusLayout\"");
        if steps > 1 {
            out.push_str(&format!(" load_steps={steps}"));
        }
        out.push_str(" format=3");
        if let Some(uid) = &self.uid {
            out.push_str(&format!(" uid={}", quoted(uid)));
        }
        out.push_str("]\n\n");
        for x in &used_ext {
            out.push_str(&format!("[ext_resource type={}", quoted(&x.class)));
            if let Some(uid) = &x.uid {
                out.push_str(&format!(" uid={}", quoted(uid)));
            }
            out.push_str(&format!(
                " path={} id={}]\n",
                quoted(&x.path),
                quoted(&x.id)
            ));
        }
        if !used_ext.is_empty() {
            out.push('\n');
        }
        for x in &used_sub {
            out.push_str(&format!(
                "[sub_resource type={} id={}]\n",
                quoted(&x.class),
                quoted(&x.id)
            ));
            for (name, text) in &x.properties {
                out.push_str(&format!(
                    "{} = {text}\n",
                    crate::scene_edit::property_key(name)
                ));
            }
            out.push('\n');
        }
        out.push_str("[resource]\n");
        for (i, bus) in self.buses.iter().enumerate() {
            let all = i > 0;
            let p = format!("bus/{i}/");
            if all || bus.name != "Master" {
                out.push_str(&format!("{p}name = {}\n", string_name(&bus.name)));
            }
            for (field, v) in [
                ("solo", bus.solo),
                ("mute", bus.mute),
                ("bypass_fx", bus.bypass_fx),
            ] {
                if all || v {
                    out.push_str(&format!("{p}{field} = {v}\n"));
                }
            }
            if all || bus.volume_db != 0.0 {
                out.push_str(&format!("{p}volume_db = {}\n", float_text(bus.volume_db)));
            }
            if all || !bus.send.is_empty() {
                out.push_str(&format!("{p}send = {}\n", string_name(&bus.send)));
            }
            for (j, e) in bus.effects.iter().enumerate() {
                if let Some(r) = reference_text(&e.effect) {
                    out.push_str(&format!("{p}effect/{j}/effect = {r}\n"));
                    out.push_str(&format!("{p}effect/{j}/enabled = {}\n", e.enabled));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_layout_godot_wrote_as_godot_loads_it() {
        let res = crate::parse_resource(include_str!(
            "../../../tests/fixtures/readfam/default_bus_layout.tres"
        ))
        .unwrap();
        let buses = parse_bus_layout(&res.properties).unwrap();
        let names: Vec<_> = buses.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["Master", "SFX", "Music"]);
        assert_eq!(buses[0].volume_db, -1.5);
        assert!(buses[1].mute && !buses[1].solo);
        assert_eq!(buses[1].volume_db, -6.0);
        assert_eq!(buses[1].effects.len(), 2);
        assert!(buses[1].effects[0].enabled && !buses[1].effects[1].enabled);
        assert!(buses[2].solo && buses[2].bypass_fx);
        assert_eq!(buses[2].send, "SFX");
    }

    #[test]
    fn godots_loading_rules() {
        let res = crate::parse_resource(
            "[gd_resource type=\"AudioBusLayout\" format=3]\n\n[resource]\n\
             bus/0/name = &\"Main\"\nbus/0/send = &\"X\"\nbus/2/effect/1/enabled = true\n",
        )
        .unwrap();
        let buses = parse_bus_layout(&res.properties).unwrap();
        assert_eq!(
            (buses[0].name.as_str(), buses[0].send.as_str()),
            ("Master", "")
        );
        assert_eq!(buses.len(), 3);
        assert_eq!(buses[1].name, "");
        assert!(
            buses[2].effects.is_empty(),
            "an effect slot without a resource is dropped"
        );
        let res = crate::parse_resource(
            "[gd_resource type=\"AudioBusLayout\" format=3]\n\n[resource]\nbus/5000/mute = true\n",
        )
        .unwrap();
        assert_eq!(
            parse_bus_layout(&res.properties),
            Err("bus/5000/mute".into())
        );
    }

    #[test]
    fn writes_back_the_file_godot_wrote_byte_for_byte() {
        let src = include_str!("../../../tests/fixtures/readfam/default_bus_layout.tres");
        let res = crate::parse_resource(src).unwrap();
        let layout = LayoutFile::from_resource(&res).unwrap();
        assert_eq!(layout.to_text(), src);
    }

    #[test]
    fn the_builtin_layout_is_an_empty_resource() {
        assert_eq!(
            LayoutFile::builtin().to_text(),
            "[gd_resource type=\"AudioBusLayout\" format=3]\n\n[resource]\n"
        );
    }
}
