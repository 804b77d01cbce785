//! Project-plane file writes: scripts and resource files. Every one is destructive by
//! the classification rule: a file write is disk state no undo stack covers, even when
//! the file is new (spec: create_resource is destructive for the same reason).
//!
//! Each tool plans first (containment, preconditions, the compare-and-swap check, the
//! exact bytes and their hash) and applies through the one write seam,
//! `planes::project`, with the plan's view of the target as the expectation: a file
//! that changed between plan and apply (say, while a human approved) is `STALE`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use godot_mcp_formats::{ids, variant};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, Undo};
use crate::planes::project::{self as plane, Expect};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::common::{
    DELETED_UNDO_HINT, check_property_key, head, is_identifier, not_undoable, on_disk,
    script_header_gd, script_of_class,
};
use crate::tools::kit::dotnet_build::Check;
use crate::tools::kit::ext_ref;
use crate::tools::kit::file_write::{
    ScriptPlan, WritePlan, build_check, plan_script, plan_write, require_script_path,
};
use crate::tools::{Plan, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::planned(
            ToolMeta {
                name: "create_script",
                title: "Create a script",
                description: "Create a new script or shader file (.gd, .cs, .gdshader) with \
                    content, or `extends <base>`. Refuses an existing file (see write_script).",
                class: class::Destructive,
                toolset: Toolset::ScriptEdit,
                effect: Some(EffectKind::File),
            },
            plan_create_script,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "write_script",
                title: "Write a script",
                description: "Replace a script or shader's whole text (or create it); \
                    expected_sha256 refuses the write if the file changed since read. A .gd \
                    is parse-checked by Godot (parse_errors) and its class_name registered.",
                class: class::Destructive,
                toolset: Toolset::Build,
                effect: Some(EffectKind::File),
            },
            plan_write_script,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "create_resource",
                title: "Create a resource file",
                description: "Write a .tres resource of a Godot class with properties from \
                    JSON. Refuses an existing file unless overwrite.",
                class: class::Destructive,
                toolset: Toolset::ResourceEdit,
                effect: Some(EffectKind::File),
            },
            plan_create_resource,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "delete_resource_file",
                title: "Delete a resource file",
                description: "Delete a project file (resource, scene, script, asset) and its \
                    .import/.uid sidecars. Not project.godot.",
                class: class::Destructive,
                toolset: Toolset::ResourceEdit,
                effect: Some(EffectKind::File),
            },
            plan_delete,
        ),
    ]
}

/// What a delete adds when applied: the transaction of the file and of each sidecar.
#[derive(Debug, Serialize, JsonSchema)]
struct Deleted {
    transaction_ids: Vec<Option<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateScriptArgs {
    /// The new file.
    path: ResPath,
    /// Full text (default: `extends <extends>`; .cs: a partial class named as the file).
    #[serde(default)]
    content: Option<String>,
    /// Base class without content (default Node).
    #[serde(default)]
    extends: Option<String>,
    /// build: dotnet build after writing; if it fails the file is put back.
    #[serde(default)]
    #[schemars(schema_with = "crate::tools::kit::dotnet_build::check_schema")]
    check: Option<Check>,
}

fn plan_create_script(
    state: Arc<AppState>,
    args: CreateScriptArgs,
) -> Result<ScriptPlan, ToolError> {
    require_script_path(&args.path)?;
    let check = build_check(&state, &args.path, args.check)?;
    let cs = args.path.extension().as_deref() == Some("cs");
    let content = match (args.content, args.extends) {
        (Some(c), _) => c,
        // C#: Godot's template, the class named as the file.
        (None, base) if cs => {
            let base = base.unwrap_or_else(|| "Node".into());
            crate::tools::kit::dotnet::cs_template(&args.path.to_string(), &base).ok_or_else(
                || {
                    ToolError::invalid_params(
                        "path",
                        format!(
                            "{} and {base} must be C# names: a C# script's class is named as \
                             its file",
                            args.path
                        ),
                    )
                },
            )?
        }
        (None, base) => {
            let base = base.unwrap_or_else(|| "Node".into());
            if base.is_empty() || !base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(ToolError::invalid_params(
                    "extends",
                    "extends must be a class name like Node2D",
                ));
            }
            format!("extends {base}\n")
        }
    };
    if plane::current(&state.project, "path", &args.path)?.is_some() {
        return Err(
            ToolError::invalid_params("path", format!("{} already exists", args.path))
                .hint("Use write_script (with expected_sha256 from scripts_read) to replace it."),
        );
    }
    let mut persistence = Persistence::written_to_disk();
    if cs {
        persistence.hint = crate::tools::kit::dotnet::missing_csproj_hint(state.project.root())
            .map(str::to_string);
    }
    plan_script(
        &state,
        args.path,
        content.into_bytes(),
        Expect::Absent,
        persistence,
        check,
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteScriptArgs {
    /// The script or shader.
    path: ResPath,
    /// The full new text.
    content: String,
    /// The file's sha256 now (from scripts_read), null: must not exist; else STALE.
    #[serde(default, deserialize_with = "plane::expected_or_null")]
    #[schemars(with = "plane::ShaOrNull")]
    expected_sha256: Option<Option<String>>,
    /// build: dotnet build after writing; if it fails the file is put back.
    #[serde(default)]
    #[schemars(schema_with = "crate::tools::kit::dotnet_build::check_schema")]
    check: Option<Check>,
}

fn plan_write_script(state: Arc<AppState>, args: WriteScriptArgs) -> Result<ScriptPlan, ToolError> {
    require_script_path(&args.path)?;
    let check = build_check(&state, &args.path, args.check)?;
    plan_script(
        &state,
        args.path,
        args.content.into_bytes(),
        plane::expect_of(&args.expected_sha256),
        Persistence::written_to_disk(),
        check,
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateResourceArgs {
    /// The .tres file.
    path: ResPath,
    /// Godot class, e.g. Curve, Gradient, StyleBoxFlat.
    #[serde(rename = "type")]
    type_name: String,
    /// Property values as JSON.
    #[serde(default)]
    properties: Map<String, Value>,
    /// Replace an existing file (default false).
    #[serde(default)]
    overwrite: bool,
    /// With overwrite: the file's sha256 now, null: must not exist; else STALE.
    #[serde(default, deserialize_with = "plane::expected_or_null")]
    #[schemars(with = "plane::ShaOrNull")]
    expected_sha256: Option<Option<String>>,
}

fn plan_create_resource(
    state: Arc<AppState>,
    args: CreateResourceArgs,
) -> Result<WritePlan, ToolError> {
    if args.path.extension().as_deref() != Some("tres") {
        return Err(ToolError::invalid_params(
            "path",
            format!("{} is not a .tres path", args.path),
        ));
    }
    if !is_identifier(&args.type_name) {
        return Err(ToolError::invalid_params(
            "type",
            "type must be a Godot class name like Resource",
        ));
    }
    let exists = plane::current(&state.project, "path", &args.path)?.is_some();
    // As Godot saves one: a uid in the header, kept by an overwrite so references by
    // uid still find the file.
    let kept = exists
        .then(|| state.project.resolve("path", &args.path).ok())
        .flatten()
        .and_then(|real| std::fs::read_to_string(real).ok())
        .and_then(|text| ext_ref::header_uid(&text));
    let uid = kept.unwrap_or_else(|| {
        ids::uid_text(ext_ref::derived_u64(&[
            "create_resource",
            &args.path.to_string(),
        ]))
    });
    let text = resource_text(&state, &args.type_name, &uid, &args.properties)?;
    if exists && !args.overwrite {
        return Err(
            ToolError::invalid_params("path", format!("{} already exists", args.path))
                .hint("Pass overwrite=true (and expected_sha256) to replace it."),
        );
    }
    let expect = plane::expect_or_create(&args.expected_sha256, exists);
    plan_write(
        &state,
        "path",
        args.path,
        text.into_bytes(),
        expect,
        Persistence::written_to_disk(),
    )
}

/// A `.tres` of `type_name` holding `properties`. A `type_name` that a project script
/// declares (`class_name Inventory`) is a Resource with that script, written as Godot
/// writes one (`script_class`, the script an ext_resource): `[gd_resource type="Inventory"]`
/// is a file Godot cannot load. A `script` property given as a `res://` path is that
/// script, not a string.
fn resource_text(
    state: &Arc<AppState>,
    type_name: &str,
    uid: &str,
    properties: &Map<String, Value>,
) -> Result<String, ToolError> {
    let class_script = script_of_class(state, type_name)?;
    let script = match properties.get("script") {
        Some(Value::String(p)) if p.starts_with("res://") => {
            let path = ResPath::parse(p)
                .map_err(|e| ToolError::invalid_params("properties.script", e.to_string()))?;
            if plane::current(&state.project, "properties.script", &path)?.is_none() {
                return Err(ToolError::invalid_params(
                    "properties.script",
                    format!("{path} does not exist"),
                ));
            }
            Some(path)
        }
        _ => class_script.clone(),
    };
    let mut text = match &script {
        Some(path) => {
            let class = match script_of_path_class(state, path) {
                Some(c) => format!(" script_class=\"{c}\""),
                None => String::new(),
            };
            let base = if class_script.is_some() {
                "Resource"
            } else {
                type_name
            };
            let ext = ext_ref::ext_line(
                &ext_ref::ext_target(state, "properties.script", path)?,
                "1_script",
            );
            format!(
                "[gd_resource type=\"{base}\"{class} load_steps=2 format=3 uid=\"{uid}\"]\n\n\
                 {ext}\n[resource]\nscript = ExtResource(\"1_script\")\n"
            )
        }
        None => {
            format!("[gd_resource type=\"{type_name}\" format=3 uid=\"{uid}\"]\n\n[resource]\n")
        }
    };
    // A script's typed array (`var items: Array[String]`) is written as Godot writes it,
    // `Array[String]([...])`, not as an untyped literal.
    let script_text = script
        .as_ref()
        .and_then(|p| state.project.resolve("properties.script", p).ok())
        .and_then(|real| std::fs::read_to_string(real).ok());
    // An engine class's property is written as the type the class declares (`"#ff0000"`
    // for a Color is a Color, not a String Godot would drop on load); the class reference
    // is asked only for a value JSON cannot type by itself (a string, array or object).
    let untyped = |v: &Value| matches!(v, Value::String(_) | Value::Array(_) | Value::Object(_));
    let db = if script.is_none() && properties.values().any(untyped) {
        tokio::runtime::Handle::try_current().ok().and_then(|h| {
            h.block_on(crate::tools::kit::class_db::class_db(state))
                .ok()
        })
    } else {
        None
    };
    for (key, value) in properties {
        check_property_key(key)?;
        if key == "script" && script.is_some() {
            continue;
        }
        let param = format!("properties.{key}");
        let v = match db.as_deref() {
            Some(db) if untyped(value) => declared_text(db, type_name, key, value, &param)?,
            _ => None,
        };
        let v = match v {
            Some(v) => v,
            None => variant::plain_json_text(value, &param)?,
        };
        let v = match (
            value,
            script_text.as_deref().and_then(|t| typed_array_of(t, key)),
        ) {
            (Value::Array(_), Some(item)) => format!("Array[{item}]({v})"),
            _ => v,
        };
        text.push_str(&format!("{key} = {v}\n"));
    }
    Ok(text)
}

/// The item type of `var <key>: Array[<item>]` in a GDScript's text, for the item types
/// a JSON array writes as Godot does (String, int, float, bool).
fn typed_array_of(script: &str, key: &str) -> Option<&'static str> {
    script.lines().find_map(|line| {
        // A member is declared at the class's level (no indent); `@export var ...` too.
        let rest = match line.find("var ") {
            Some(at) if at == 0 || line.starts_with('@') => &line[at + 4..],
            _ => return None,
        };
        let (name, ty) = rest.split_once(':')?;
        if name.trim() != key {
            return None;
        }
        let ty = ty.split('=').next()?.trim();
        let item = ty.strip_prefix("Array[")?.strip_suffix(']')?.trim();
        ["String", "int", "float", "bool"]
            .into_iter()
            .find(|t| *t == item)
    })
}

/// `value` as Godot text of `class.key`'s declared type `ty` (`None`: as JSON says it).
/// A resource-typed property is refused for a string: this tool writes values, not the
/// `ext_resource` a `res://` file needs.
fn declared_text(
    db: &godot_mcp_formats::classdoc::ClassDb,
    class: &str,
    key: &str,
    value: &Value,
    param: &str,
) -> Result<Option<String>, ToolError> {
    let Some(ty) = db
        .member_type(class, key)
        .or_else(|| theme_item_type(db, class, key))
    else {
        return Ok(None);
    };
    if ty == "Resource" || db.chain(ty).iter().any(|c| c == "Resource") {
        return Err(ToolError::invalid_params(
            param,
            format!("{class}.{key} is a {ty} (a resource), which create_resource does not load"),
        )
        .hint(format!(
            "Create the file without {key}, then set it with set_resource_property \
             (it loads a res:// file)."
        )));
    }
    godot_mcp_formats::coerce::json_as_declared_text(value, ty)
        .map_err(|e| ToolError::invalid_params(param, format!("{class}.{key} is a {ty}: {e}")))
}

/// A Theme's item (`Button/colors/font_color`), a property ClassDB does not list: its
/// type is its data type's (agent run 13b: `"#ff0000"` for a font color was written as
/// a String).
fn theme_item_type<'a>(
    db: &godot_mcp_formats::classdoc::ClassDb,
    class: &str,
    key: &str,
) -> Option<&'a str> {
    if class != "Theme" && !db.chain(class).iter().any(|c| c == "Theme") {
        return None;
    }
    let mut parts = key.split('/');
    let (Some(_), Some(kind), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    Some(match kind {
        "colors" => "Color",
        "constants" | "font_sizes" => "int",
        "fonts" => "Font",
        "icons" => "Texture2D",
        "styles" => "StyleBox",
        _ => return None,
    })
}

/// The `class_name` the GDScript at `path` declares.
fn script_of_path_class(state: &AppState, path: &ResPath) -> Option<String> {
    let real = state.project.resolve("path", path).ok()?;
    script_header_gd(&head(&real)?).class_name
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteArgs {
    /// The file.
    path: ResPath,
    /// The file's sha256 now; else STALE.
    #[serde(default)]
    expected_sha256: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct DeleteEffect {
    action: &'static str,
    #[serde(flatten)]
    delete: plane::DeleteOutcome,
    /// Godot's sidecar files deleted with it.
    sidecars: Vec<plane::DeleteOutcome>,
    #[serde(flatten)]
    persistence: Persistence,
    #[serde(flatten)]
    undo: Undo,
}

fn plan_delete(
    state: Arc<AppState>,
    args: DeleteArgs,
) -> Result<Plan<DeleteEffect, Deleted>, ToolError> {
    if args.path.rel() == "project.godot" {
        return Err(ToolError::new(
            ErrorCode::PathRefused,
            "res://project.godot cannot be deleted",
        )
        .param("path")
        .hint("Change settings with set_setting and the autoload / input-map tools."));
    }
    let main = plane::check_delete(
        &state.project,
        "path",
        &args.path,
        args.expected_sha256.as_deref().into(),
    )?;
    let mut sidecars = Vec::new();
    for suffix in [".import", ".uid"] {
        let Ok(side) = ResPath::parse(&format!("{}{suffix}", args.path)) else {
            continue;
        };
        if plane::current(&state.project, "path", &side)?.is_some() {
            sidecars.push(plane::check_delete(
                &state.project,
                "path",
                &side,
                Expect::Anything,
            )?);
        }
    }
    let expected: Vec<(String, String)> = std::iter::once(&main)
        .chain(&sidecars)
        .map(|d| (d.path.clone(), d.sha256_before.clone()))
        .collect();
    let effect = DeleteEffect {
        action: "delete",
        delete: main,
        sidecars,
        persistence: on_disk("deleted from disk (unlink, fsync of the folder)", None),
        undo: not_undoable(DELETED_UNDO_HINT),
    };
    let state = state.clone();
    Plan::new(effect, move |call| {
        // The file first, then its sidecars (Godot regenerates those). Should a sidecar
        // fail after the file is gone, the error says exactly what was deleted.
        let mut deleted: Vec<String> = Vec::new();
        let mut transaction_ids: Vec<Option<String>> = Vec::new();
        for (path, sha) in &expected {
            let res = ResPath::parse(path).map_err(|e| ToolError::internal(e.to_string()))?;
            let outcome = plane::delete_file(&state, call, "path", &res, Expect::Sha256(sha));
            if let Ok(done) = &outcome {
                transaction_ids.push(done.transaction_id.clone());
            }
            if let Err(e) = outcome {
                if deleted.is_empty() {
                    return Err(e);
                }
                let mut e = e;
                e.message = format!(
                    "{} was deleted, but {path} was not: {}",
                    deleted.join(", "),
                    e.message
                );
                e.details = Some(Box::new(
                    serde_json::json!({ "deleted": deleted, "not_deleted": path }),
                ));
                return Err(e);
            }
            deleted.push(path.clone());
        }
        Ok(Deleted { transaction_ids })
    })
}

#[cfg(test)]
mod tests {
    use super::typed_array_of;

    /// A class-level `var` (or `@export var`) typed `Array[T]` gives T; an untyped
    /// array, another member, a function's local or an item type Godot writes otherwise
    /// gives nothing.
    #[test]
    fn typed_array_of_reads_the_members_declared_item_type() {
        let script = "extends Resource\n@export var items: Array[String] = []\n\
                      var counts : Array[int]\nvar any: Array = []\n\
                      @export var tex: Array[Texture2D]\nfunc f():\n\tvar loose: Array[float] = []\n";
        assert_eq!(typed_array_of(script, "items"), Some("String"));
        assert_eq!(typed_array_of(script, "counts"), Some("int"));
        assert_eq!(typed_array_of(script, "any"), None);
        assert_eq!(typed_array_of(script, "tex"), None);
        assert_eq!(typed_array_of(script, "loose"), None);
        assert_eq!(typed_array_of(script, "missing"), None);
    }
}
