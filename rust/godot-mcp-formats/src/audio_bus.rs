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
}
