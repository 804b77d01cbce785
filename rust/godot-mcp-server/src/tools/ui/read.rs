//! Theme reads from disk: a Theme .tres's defaults and items per theme type
//! (`godot_mcp_formats::theme`), with resource references resolved.

use std::collections::BTreeMap;

use godot_mcp_formats::Literal as GValue;
use godot_mcp_formats::theme::parse_theme;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::kit::scene_doc::{Doc, load_doc, typed};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        ToolMeta {
            name: "get_theme",
            title: "Get a theme",
            description: "Read a Theme .tres: default font and size, and per type its colors, \
                constants, fonts, font sizes, icons, styleboxes and base type.",
            class: class::ReadOnly,
            toolset: Toolset::Theme,
            effect: None,
        },
        get_theme,
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ThemeArgs {
    /// The Theme .tres.
    path: ResPath,
    /// Only this theme type, e.g. Button.
    #[serde(default)]
    r#type: Option<String>,
}

/// Most theme types one call returns (Godot's default theme has about 80).
const MAX_TYPES: usize = 500;

/// One theme type: its base type and its items by kind (a kind with none is absent).
#[derive(Debug, Default, Serialize, JsonSchema)]
struct ThemeTypeOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    base_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    colors: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    constants: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fonts: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    font_sizes: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    styles: Option<Map<String, Value>>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ThemeOut {
    path: String,
    default_base_scale: Option<f64>,
    default_font: Option<Value>,
    default_font_size: Option<i64>,
    type_count: usize,
    truncated: bool,
    types: BTreeMap<String, ThemeTypeOut>,
}

async fn get_theme(Call { state, args, .. }: Call<ThemeArgs>) -> Out<ThemeOut> {
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
    let mut types = BTreeMap::new();
    for (name, t) in theme
        .types
        .iter()
        .filter(|(n, _)| args.r#type.as_ref().is_none_or(|t| t == *n))
        .take(MAX_TYPES)
    {
        let items = |items: &std::collections::BTreeMap<String, GValue>| {
            (!items.is_empty()).then(|| items.iter().map(|(k, v)| (k.clone(), item(v))).collect())
        };
        types.insert(
            name.clone(),
            ThemeTypeOut {
                base_type: t.base_type.clone(),
                colors: items(&t.colors),
                constants: items(&t.constants),
                fonts: items(&t.fonts),
                font_sizes: items(&t.font_sizes),
                icons: items(&t.icons),
                styles: items(&t.styles),
            },
        );
    }
    Ok(ThemeOut {
        path: args.path.to_string(),
        default_base_scale: theme.default_base_scale,
        default_font: theme.default_font.as_ref().map(item),
        default_font_size: theme.default_font_size,
        type_count: theme.types.len(),
        truncated: args.r#type.is_none() && theme.types.len() > MAX_TYPES,
        types,
    })
}
