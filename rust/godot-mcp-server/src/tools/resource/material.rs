//! Materials from textures: a StandardMaterial3D or ORMMaterial3D `.tres` written as
//! Godot 4.4's text saver writes one — a header with `load_steps` and a fresh uid,
//! one `[ext_resource type="Texture2D"]` per texture with the texture's uid (from its
//! `.import`) and an `N_xxxxx` id, then the non-default properties. Destructive by
//! the classification rule (a resource file write no undo stack covers).

use std::collections::BTreeMap;
use std::sync::Arc;

use godot_mcp_formats::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use godot_mcp_formats::variant;

use crate::error::ToolError;
use crate::honesty::Persistence;
use crate::planes::project::{self as plane};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::state::AppState;
use crate::tools::kit::common::FileKind;
use crate::tools::kit::ext_ref;
use crate::tools::kit::ext_ref::derived_u64;
use crate::tools::kit::file_write::{FileEffect, plan_write};
use crate::tools::kit::tres_edit::{edit_meta, is_property_name};
use crate::tools::{Also, Committed, Plan, ToolDef};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::planned(
        edit_meta(
            Toolset::Materials,
            "create_material",
            "Create a material from textures",
            "Write a StandardMaterial3D or ORMMaterial3D .tres from texture files \
                (albedo, normal, roughness, metallic, ao, emission, orm) and colour/scalar settings.",
        ),
        plan_create_material,
    )]
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub(crate) enum MaterialClass {
    #[default]
    StandardMaterial3D,
    /// Roughness, metallic and ao packed in one `orm` texture.
    ORMMaterial3D,
}

impl MaterialClass {
    fn as_str(self) -> &'static str {
        match self {
            Self::StandardMaterial3D => "StandardMaterial3D",
            Self::ORMMaterial3D => "ORMMaterial3D",
        }
    }
}

/// Texture files by slot (imported images).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Textures {
    #[serde(default)]
    albedo: Option<ResPath>,
    #[serde(default)]
    normal: Option<ResPath>,
    #[serde(default)]
    roughness: Option<ResPath>,
    #[serde(default)]
    metallic: Option<ResPath>,
    #[serde(default)]
    ao: Option<ResPath>,
    #[serde(default)]
    emission: Option<ResPath>,
    /// ORMMaterial3D only.
    #[serde(default)]
    orm: Option<ResPath>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateMaterialArgs {
    /// The .tres file.
    path: ResPath,
    /// Default StandardMaterial3D.
    #[serde(default, rename = "class")]
    class: MaterialClass,
    #[serde(default)]
    textures: Textures,
    /// [r, g, b] or [r, g, b, a], 0..1.
    #[serde(default)]
    albedo_color: Option<Vec<f64>>,
    /// [r, g, b]; enables emission.
    #[serde(default)]
    emission_color: Option<Vec<f64>>,
    #[serde(default)]
    emission_energy: Option<f64>,
    /// 0..1 (Godot's default 1).
    #[serde(default)]
    roughness: Option<f64>,
    /// 0..1 (default 0; 1 when a metallic texture is given).
    #[serde(default)]
    metallic: Option<f64>,
    #[serde(default)]
    normal_scale: Option<f64>,
    /// More properties as JSON, e.g. {"cull_mode": 2}.
    #[serde(default)]
    properties: Map<String, Value>,
    /// Replace an existing file (keeps its uid).
    #[serde(default)]
    overwrite: bool,
    /// With overwrite: the file's sha256 now, null: must not exist; else STALE.
    #[serde(default, deserialize_with = "plane::expected_or_null")]
    #[schemars(with = "plane::ShaOrNull")]
    expected_sha256: Option<Option<String>>,
}

/// Godot's text form of a colour: `Color(r, g, b, a)` with the shortest numbers.
fn color_text(param: &str, c: &[f64]) -> Result<String, ToolError> {
    let ok = matches!(c.len(), 3 | 4) && c.iter().all(|v| v.is_finite());
    if !ok {
        return Err(ToolError::invalid_params(
            param,
            format!("`{param}` must be [r, g, b] or [r, g, b, a] with finite numbers"),
        ));
    }
    let a = c.get(3).copied().unwrap_or(1.0);
    Ok(format!("Color({}, {}, {}, {a})", c[0], c[1], c[2]))
}

fn scalar(param: &str, v: f64) -> Result<String, ToolError> {
    if v.is_finite() {
        Ok(variant::float_text(v))
    } else {
        Err(ToolError::invalid_params(
            param,
            format!("`{param}` must be a finite number"),
        ))
    }
}

/// A texture argument: an image in the project, and its uid when imported.
fn texture(
    state: &AppState,
    param: &str,
    path: &ResPath,
) -> Result<(String, Option<String>), ToolError> {
    if FileKind::of(path.extension().as_deref()) != FileKind::Image {
        return Err(ToolError::invalid_params(
            param,
            format!("{path} is not an image file (png, jpg, webp, svg, tga, exr, …)"),
        ));
    }
    if plane::current(&state.project, param, path)?.is_none() {
        return Err(ToolError::not_found(format!("{path} does not exist"))
            .param(param)
            .hint(
                "Import the image into the project first (copy it in, then let Godot import it).",
            ));
    }
    Ok((path.to_string(), ext_ref::import_uid(state, path)))
}

/// What a material write reports beyond the file write: its uid and its textures.
#[derive(Debug, Serialize, JsonSchema)]
struct MaterialMore {
    uid: String,
    textures: Vec<String>,
}

/// The texture slots agree with the class: an ORMMaterial3D reads roughness, metallic
/// and ao from its `orm` texture, and only it has one.
fn check_texture_slots(args: &CreateMaterialArgs) -> Result<(), ToolError> {
    let t = &args.textures;
    if args.class == MaterialClass::ORMMaterial3D {
        for (slot, given) in [
            ("roughness", &t.roughness),
            ("metallic", &t.metallic),
            ("ao", &t.ao),
        ] {
            if given.is_some() {
                return Err(ToolError::invalid_params(
                    format!("textures.{slot}"),
                    format!("ORMMaterial3D reads {slot} from the `orm` texture"),
                ));
            }
        }
    } else if t.orm.is_some() {
        return Err(ToolError::invalid_params(
            "textures.orm",
            "an orm texture needs class ORMMaterial3D",
        ));
    }
    Ok(())
}

/// The `.tres` text: the header (`load_steps` when it has textures, the uid), the
/// textures' ext resources, then the `[resource]` properties in order.
fn material_text(
    class: &str,
    uid: &str,
    ext_lines: &[String],
    props: &[(String, String)],
) -> String {
    let load_steps = if ext_lines.is_empty() {
        String::new()
    } else {
        format!(" load_steps={}", ext_lines.len() + 1)
    };
    let mut text = format!("[gd_resource type=\"{class}\"{load_steps} format=3 uid=\"{uid}\"]\n\n");
    for line in ext_lines {
        text.push_str(line);
    }
    if !ext_lines.is_empty() {
        text.push('\n');
    }
    text.push_str("[resource]\n");
    for (k, v) in props {
        text.push_str(&format!("{k} = {v}\n"));
    }
    text
}

fn plan_create_material(
    state: Arc<AppState>,
    args: CreateMaterialArgs,
) -> Result<Plan<Also<FileEffect, MaterialMore>, Committed>, ToolError> {
    if args.path.extension().as_deref() != Some("tres") {
        return Err(ToolError::invalid_params(
            "path",
            format!("{} is not a .tres path", args.path),
        ));
    }
    check_texture_slots(&args)?;
    let t = &args.textures;

    let target = args.path.to_string();
    // Ext resources in slot order, one per distinct texture, numbered as Godot numbers them.
    let mut ext_ids: BTreeMap<String, String> = BTreeMap::new();
    let mut ext_lines: Vec<String> = Vec::new();
    let mut tex_ref = |param: &str, p: &ResPath| -> Result<String, ToolError> {
        let (path, uid) = texture(&state, param, p)?;
        if let Some(id) = ext_ids.get(&path) {
            return Ok(format!("ExtResource(\"{id}\")"));
        }
        let index = ext_lines.len() + 1;
        let id = ids::ext_resource_id(
            index,
            derived_u64(&[&target, &path, &index.to_string()]) as u32,
        );
        let target = ext_ref::ExtTarget {
            path: path.clone(),
            type_name: "Texture2D".into(),
            uid,
        };
        ext_lines.push(ext_ref::ext_line(&target, &id));
        ext_ids.insert(path, id.clone());
        Ok(format!("ExtResource(\"{id}\")"))
    };

    // Properties in the order of Godot's property list for BaseMaterial3D.
    let mut props: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: String| props.push((k.to_string(), v));
    if let Some(c) = &args.albedo_color {
        set("albedo_color", color_text("albedo_color", c)?);
    }
    if let Some(p) = &t.albedo {
        set("albedo_texture", tex_ref("textures.albedo", p)?);
    }
    if let Some(p) = &t.orm {
        set("orm_texture", tex_ref("textures.orm", p)?);
    }
    let metallic = match (args.metallic, &t.metallic) {
        (Some(m), _) => Some(m),
        // The texture is multiplied by `metallic`, whose default 0 would hide it.
        (None, Some(_)) => Some(1.0),
        (None, None) => None,
    };
    if let Some(m) = metallic {
        set("metallic", scalar("metallic", m)?);
    }
    if let Some(p) = &t.metallic {
        set("metallic_texture", tex_ref("textures.metallic", p)?);
    }
    if let Some(r) = args.roughness {
        set("roughness", scalar("roughness", r)?);
    }
    if let Some(p) = &t.roughness {
        set("roughness_texture", tex_ref("textures.roughness", p)?);
    }
    if args.emission_color.is_some() || t.emission.is_some() || args.emission_energy.is_some() {
        set("emission_enabled", "true".into());
    }
    if let Some(c) = &args.emission_color {
        set("emission", color_text("emission_color", c)?);
    }
    if let Some(e) = args.emission_energy {
        set("emission_energy_multiplier", scalar("emission_energy", e)?);
    }
    if let Some(p) = &t.emission {
        set("emission_texture", tex_ref("textures.emission", p)?);
    }
    if t.normal.is_some() || args.normal_scale.is_some() {
        set("normal_enabled", "true".into());
    }
    if let Some(s) = args.normal_scale {
        set("normal_scale", scalar("normal_scale", s)?);
    }
    if let Some(p) = &t.normal {
        set("normal_texture", tex_ref("textures.normal", p)?);
    }
    if let Some(p) = &t.ao {
        set("ao_enabled", "true".into());
        set("ao_texture", tex_ref("textures.ao", p)?);
    }
    for (key, value) in &args.properties {
        if !is_property_name(key) || props.iter().any(|(k, _)| k == key) {
            return Err(ToolError::invalid_params(
                format!("properties.{key}"),
                format!("{key:?} is not a property name, or is already set by an argument"),
            ));
        }
        let v = variant::plain_json_text(value, &format!("properties.{key}"))?;
        props.push((key.clone(), v));
    }

    let existing = plane::current(&state.project, "path", &args.path)?;
    if existing.is_some() && !args.overwrite {
        return Err(
            ToolError::invalid_params("path", format!("{} already exists", args.path))
                .hint("Pass overwrite=true (and expected_sha256) to replace it."),
        );
    }
    // An overwrite keeps the file's uid, so references by uid still find it.
    let uid = match &existing {
        Some(_) => state
            .project
            .resolve("path", &args.path)
            .ok()
            .and_then(|real| std::fs::read_to_string(real).ok())
            .and_then(|text| ext_ref::header_uid(&text)),
        None => None,
    };
    let uid = match uid {
        Some(u) => u,
        None => ids::uid_text(derived_u64(&["create_material", &target])),
    };
    let text = material_text(args.class.as_str(), &uid, &ext_lines, &props);
    let expect = plane::expect_or_create(&args.expected_sha256, existing.is_some());
    let textures: Vec<String> = ext_ids.into_keys().collect();
    let plan = plan_write(
        &state,
        "path",
        args.path,
        text.into_bytes(),
        expect,
        Persistence::written_to_disk(),
    )?;
    Ok(plan.map_effect(|base| Also {
        base,
        more: MaterialMore { uid, textures },
    }))
}
