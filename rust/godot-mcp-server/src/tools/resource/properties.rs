//! `get_resource_properties`: every property of a `.tres` resource (or of one of its
//! `[sub_resource]`s) as Godot lists it: the values the file stores, and, from the
//! engine's class reference when a Godot binary is configured, every declared property
//! the file leaves at its default, with its type and default value. The properties a
//! class makes from its data (a TileSet's `physics_layer_N/…` once it has layer N, a
//! Curve's `point_N/…` for its `point_count`) are listed as Godot's `_get_property_list`
//! makes them (`dynamic`).

use std::collections::BTreeSet;

use godot_mcp_formats::Property;
use godot_mcp_formats::classdoc::ClassDb;
use godot_mcp_formats::variant::{self, Refs};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::honesty::absent_when_none;
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::tools::kit::common::{page_limit, paged_args};
use crate::tools::kit::scene_doc::{Doc, load_doc};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "get_resource_properties",
            title: "Get resource properties",
            description: "Every property of a .tres resource (or a sub_resource id) as Godot \
                lists it: stored values, and the class's other properties with type and \
                default (class reference). Paged.",
            class: class::ReadOnly,
            toolset: Toolset::ResourceRead,
            // The class reference is built by the project's Godot binary once (--doctool).
            effect: Some(EffectKind::ProcessLaunch),
        },
        get_resource_properties,
    )]
}

paged_args! {
    offset;
    pub struct ResourcePropertiesArgs {
        /// The .tres file.
        path: ResPath,
        /// A `[sub_resource]` id of the file (default: its `[resource]`).
        #[serde(default)]
        sub_resource: Option<String>,
    }
}

/// One property: its value (stored, or the class's default) and type.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PropertyRow {
    name: String,
    /// The declared type (class reference), when known.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    type_name: Option<String>,
    /// The typed value; for a property not stored, the default.
    value: Value,
    /// Written in the file (else Godot uses the default).
    stored: bool,
}

/// A page of a resource's properties.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ResourceProperties {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    sub_resource: Option<String>,
    class: String,
    total: usize,
    next_offset: Option<usize>,
    properties: Vec<PropertyRow>,
    /// Why the class's declared properties are not listed, when they are not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    declared_note: Option<String>,
}

async fn get_resource_properties(
    Call { state, args, .. }: Call<ResourcePropertiesArgs>,
) -> Out<ResourceProperties> {
    let limit = page_limit(&state, args.limit, 100)?;
    let Doc::Resource(res) = load_doc(&state, "path", &args.path, &["tres"])? else {
        return Err(ToolError::internal("a .tres parsed as a scene"));
    };
    let (class, stored) = match &args.sub_resource {
        None => (res.resource_type.clone(), res.properties.clone()),
        Some(id) => match res.sub_resources.iter().find(|s| &s.id == id) {
            Some(s) => (s.resource_type.clone(), s.properties.clone()),
            None => {
                let ids: Vec<&str> = res.sub_resources.iter().map(|s| s.id.as_str()).collect();
                return Err(ToolError::not_found(format!(
                    "{} has no sub_resource {id:?}",
                    args.path
                ))
                .param("sub_resource")
                .hint(format!("Its sub_resource ids: [{}].", ids.join(", "))));
            }
        },
    };
    let (db, declared_note) = match crate::tools::kit::class_db::class_db(&state).await {
        Ok(db) => (Some(db), None),
        Err(e) => (
            None,
            Some(format!(
                "only stored values (no class reference: {})",
                e.message
            )),
        ),
    };
    let refs = Refs::of_resource(&res);
    let all = rows(&class, &stored, &refs, db.as_deref());
    let offset = args.offset.unwrap_or(0) as usize;
    let total = all.len();
    let properties: Vec<PropertyRow> = all.into_iter().skip(offset).take(limit).collect();
    let next = offset + properties.len();
    Ok(ResourceProperties {
        path: args.path.to_string(),
        sub_resource: args.sub_resource,
        class,
        total,
        next_offset: (next < total).then_some(next),
        properties,
        declared_note,
    })
}

/// The stored properties in file order, then the class's others by name.
fn rows(
    class: &str,
    stored: &[Property],
    refs: &Refs<'_>,
    db: Option<&ClassDb>,
) -> Vec<PropertyRow> {
    let declared = db.map(|db| declared(db, class, stored)).unwrap_or_default();
    let type_of = |name: &str| {
        declared
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.type_name.clone())
    };
    let mut out: Vec<PropertyRow> = stored
        .iter()
        .map(|p| PropertyRow {
            name: p.name.clone(),
            type_name: type_of(&p.name),
            value: variant::from_text(&p.value, refs).to_json(),
            stored: true,
        })
        .collect();
    let mut rest: Vec<PropertyRow> = declared
        .into_iter()
        .filter(|d| !stored.iter().any(|p| p.name == d.name))
        .map(|d| PropertyRow {
            value: d.default,
            name: d.name,
            type_name: Some(d.type_name),
            stored: false,
        })
        .collect();
    rest.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(rest);
    out
}

/// A member of a dynamic family: name, type and default.
type Member = (&'static str, &'static str, Value);

/// A property the class declares: name, type and default (typed; null when none).
struct Declared {
    name: String,
    type_name: String,
    default: Value,
}

/// What the class reference declares for `class` and its bases (nearest first, so a
/// subclass's default wins), and the properties its data makes ([`dynamic`]).
fn declared(db: &ClassDb, class: &str, stored: &[Property]) -> Vec<Declared> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for c in std::iter::once(class.to_string()).chain(db.chain(class)) {
        let Some(doc) = db.classes.get(&c) else {
            continue;
        };
        for m in &doc.members {
            if seen.insert(m.name.clone()) {
                out.push(Declared {
                    name: m.name.clone(),
                    type_name: m.ty.display().to_string(),
                    default: m
                        .default
                        .as_deref()
                        .map_or(Value::Null, |t| variant::from_variant_text(t).to_json()),
                });
            }
        }
    }
    let is = |base: &str| class == base || db.chain(class).iter().any(|c| c == base);
    for d in dynamic(&is, stored) {
        if seen.insert(d.name.clone()) {
            out.push(d);
        }
    }
    out
}

/// The properties Godot's `_get_property_list` makes from a resource's data (they are
/// in no class reference): a TileSet's occlusion, physics, navigation and custom data
/// layers (layer N when the file stores a `…_layer_N/` property) and a Curve's points
/// (`point_count` of them, their values from `_data`).
fn dynamic(is: &dyn Fn(&str) -> bool, stored: &[Property]) -> Vec<Declared> {
    let one = |name: String, ty: &str, default: Option<Value>| Declared {
        name,
        type_name: ty.to_string(),
        default: default.unwrap_or(Value::Null),
    };
    let mut out = Vec::new();
    if is("TileSet") {
        // Each layer family: its members (name, type, default). Godot knows layer N once
        // the file stores one of its always-stored members.
        let families: [(&str, &[Member]); 4] = [
            (
                "occlusion_layer",
                &[
                    ("light_mask", "int", json!(1)),
                    ("sdf_collision", "bool", json!(false)),
                ],
            ),
            (
                "physics_layer",
                &[
                    ("collision_layer", "int", json!(1)),
                    ("collision_mask", "int", json!(1)),
                    ("physics_material", "PhysicsMaterial", Value::Null),
                ],
            ),
            ("navigation_layer", &[("layers", "int", json!(1))]),
            (
                "custom_data_layer",
                &[("name", "String", json!("")), ("type", "int", json!(0))],
            ),
        ];
        for (family, members) in families {
            let prefix = format!("{family}_");
            let count = stored
                .iter()
                .filter_map(|p| {
                    let rest = p.name.strip_prefix(&prefix)?;
                    rest.split_once('/')?.0.parse::<u32>().ok()
                })
                .max()
                .map_or(0, |n| n + 1);
            for n in 0..count {
                for (member, ty, default) in members {
                    out.push(one(
                        format!("{family}_{n}/{member}"),
                        ty,
                        Some(default.clone()),
                    ));
                }
            }
        }
    }
    if is("Curve") {
        let count = stored
            .iter()
            .find(|p| p.name == "point_count")
            .and_then(|p| p.text.trim().parse::<usize>().ok())
            .unwrap_or(0);
        // `_data`: per point its position, left and right tangents, left and right modes.
        let data: Vec<Value> = stored
            .iter()
            .find(|p| p.name == "_data")
            .and_then(|p| match variant::from_text(&p.value, &Refs::default()) {
                variant::Value::Array(items) => Some(items),
                _ => None,
            })
            .map(|items| items.iter().map(variant::Value::to_json).collect())
            .unwrap_or_default();
        let at = |n: usize, k: usize| data.get(n * 5 + k).cloned();
        for n in 0..count {
            out.push(one(format!("point_{n}/position"), "Vector2", at(n, 0)));
            if n != 0 {
                out.push(one(format!("point_{n}/left_tangent"), "float", at(n, 1)));
                out.push(one(format!("point_{n}/left_mode"), "int", at(n, 3)));
            }
            if n + 1 != count {
                out.push(one(format!("point_{n}/right_tangent"), "float", at(n, 2)));
                out.push(one(format!("point_{n}/right_mode"), "int", at(n, 4)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(res: &str) -> Vec<String> {
        let res = godot_mcp_formats::parse_resource(res).unwrap();
        let is = |c: &str| c == res.resource_type;
        dynamic(&is, &res.properties)
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    #[test]
    fn tileset_layers_and_curve_points_are_listed_as_godot_makes_them() {
        let tileset = "[gd_resource type=\"TileSet\" format=3]\n\n[resource]\n\
            physics_layer_0/collision_layer = 1\ncustom_data_layer_1/name = \"hp\"\n";
        let got = names(tileset);
        for want in [
            "physics_layer_0/collision_mask",
            "physics_layer_0/physics_material",
            "custom_data_layer_0/type",
            "custom_data_layer_1/name",
        ] {
            assert!(got.iter().any(|g| g == want), "{want} not in {got:?}");
        }
        assert!(
            !got.iter().any(|g| g.starts_with("physics_layer_1")),
            "{got:?}"
        );
        let curve = "[gd_resource type=\"Curve\" format=3]\n\n[resource]\n\
            _data = [Vector2(0, 0), 0.0, 0.0, 0, 0, Vector2(1, 1), 0.0, 0.0, 0, 0]\n\
            point_count = 2\n";
        assert_eq!(
            names(curve),
            [
                "point_0/position",
                "point_0/right_tangent",
                "point_0/right_mode",
                "point_1/position",
                "point_1/left_tangent",
                "point_1/left_mode",
            ]
        );
    }
}
