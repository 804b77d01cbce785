//! Theme reads from disk: a Theme .tres's defaults and items per theme type
//! (`godot_mcp_formats::theme`), with resource references resolved.

use std::sync::Arc;

use godot_mcp_formats::Value as GValue;
use godot_mcp_formats::theme::parse_theme;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::safety::{EffectKind, SafetyClass, Toolset};
use crate::state::AppState;
use crate::tools::scene_disk::{Doc, load_doc, typed};
use crate::tools::{CallFlags, ToolDef, ToolMeta, ToolResult};

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "get_theme",
            title: "Get a theme",
            description: "Read a Theme .tres: default font and size, and per type its colors, \
                constants, fonts, font sizes, icons, styleboxes and base type.",
            class: SafetyClass::ReadOnly,
            toolset: Toolset::Theme,
            effect: EffectKind::None,
        },
        get_theme,
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThemeArgs {
    /// The Theme .tres.
    path: ResPath,
    /// Only this theme type, e.g. Button.
    #[serde(default)]
    r#type: Option<String>,
}

/// Most theme types one call returns (Godot's default theme has about 80).
const MAX_TYPES: usize = 500;

async fn get_theme(state: Arc<AppState>, args: ThemeArgs, _f: CallFlags) -> ToolResult {
    let doc = load_doc(&state, "path", &args.path, &["tres"])?;
    let Doc::Resource(res) = &doc else {
        return Err(ToolError::internal("a .tres parsed as a scene"));
    };
    if res.resource_type != "Theme" {
        return Err(ToolError::invalid_params(
            "path",
            format!(
                "{} is a {} resource, not a Theme",
                args.path, res.resource_type
            ),
        ));
    }
    let theme = parse_theme(&res.properties);
    if let Some(t) = &args.r#type
        && !theme.types.contains_key(t)
    {
        return Err(
            ToolError::not_found(format!("{} has no theme type {t:?}", args.path))
                .param("type")
                .hint(format!(
                    "Types: {}",
                    theme
                        .types
                        .keys()
                        .take(50)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
        );
    }
    // An embedded stylebox or font is shown with its stored properties (a
    // StyleBoxFlat's bg_color is what an agent asks a theme for); a file reference
    // with its path.
    let item = |v: &GValue| match v {
        GValue::SubResource(id) => {
            let mut r = doc.reference(v);
            if let Some(sub) = doc.sub(id) {
                let props: Map<String, Value> = sub
                    .properties
                    .iter()
                    .map(|p| (p.name.clone(), typed(&p.value)))
                    .collect();
                r["properties"] = Value::Object(props);
            }
            r
        }
        GValue::ExtResource(_) => doc.reference(v),
        other => typed(other),
    };
    let mut types = Map::new();
    for (name, t) in theme
        .types
        .iter()
        .filter(|(n, _)| args.r#type.as_ref().is_none_or(|t| t == *n))
        .take(MAX_TYPES)
    {
        let mut o = Map::new();
        if let Some(b) = &t.base_type {
            o.insert("base_type".into(), json!(b));
        }
        for (kind, items) in [
            ("colors", &t.colors),
            ("constants", &t.constants),
            ("fonts", &t.fonts),
            ("font_sizes", &t.font_sizes),
            ("icons", &t.icons),
            ("styles", &t.styles),
        ] {
            if !items.is_empty() {
                let m: Map<String, Value> =
                    items.iter().map(|(k, v)| (k.clone(), item(v))).collect();
                o.insert(kind.into(), Value::Object(m));
            }
        }
        types.insert(name.clone(), Value::Object(o));
    }
    Ok(json!({
        "path": args.path.to_string(),
        "default_base_scale": theme.default_base_scale,
        "default_font": theme.default_font.as_ref().map(item),
        "default_font_size": theme.default_font_size,
        "type_count": theme.types.len(),
        "truncated": args.r#type.is_none() && theme.types.len() > MAX_TYPES,
        "types": types,
    }))
}
