//! Layer names: the `[layer_names]` section of project.godot, which names the bits
//! of physics, render, navigation and avoidance layers in the inspector. Reading is
//! from disk; writing is a project.godot edit through the settings seam
//! (`kit::project_godot::plan_edit`), destructive like every ProjectSettings write.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use godot_mcp_formats::project_edit::ConfigText;
use godot_mcp_formats::variant;

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::project_godot::{EditPlan, plan_edit};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Settings,
                "get_layer_names",
                "Get layer names",
                "Named physics, render, navigation and avoidance layers from project.godot \
                 [layer_names], by kind.",
            ),
            get_layer_names,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "set_layer_names",
                title: "Set layer names",
                description: "Name or unname layers of one kind (2d_physics, 3d_render, …) in \
                    project.godot [layer_names]; other bytes kept.",
                class: class::Destructive,
                toolset: Toolset::Settings,
                effect: Some(EffectKind::File),
            },
            plan_set_layer_names,
        ),
    ]
}

/// The layer kinds Godot 4.4 names, with how many layers each has.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
pub(crate) enum LayerKind {
    #[serde(rename = "2d_physics")]
    Physics2d,
    #[serde(rename = "3d_physics")]
    Physics3d,
    #[serde(rename = "2d_render")]
    Render2d,
    #[serde(rename = "3d_render")]
    Render3d,
    #[serde(rename = "2d_navigation")]
    Navigation2d,
    #[serde(rename = "3d_navigation")]
    Navigation3d,
    #[serde(rename = "avoidance")]
    Avoidance,
}

impl LayerKind {
    const ALL: [LayerKind; 7] = [
        Self::Physics2d,
        Self::Physics3d,
        Self::Render2d,
        Self::Render3d,
        Self::Navigation2d,
        Self::Navigation3d,
        Self::Avoidance,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Self::Physics2d => "2d_physics",
            Self::Physics3d => "3d_physics",
            Self::Render2d => "2d_render",
            Self::Render3d => "3d_render",
            Self::Navigation2d => "2d_navigation",
            Self::Navigation3d => "3d_navigation",
            Self::Avoidance => "avoidance",
        }
    }

    /// Layers Godot offers for the kind (render layers are 20 bits, the rest 32).
    fn count(self) -> u32 {
        match self {
            Self::Render2d | Self::Render3d => 20,
            _ => 32,
        }
    }
}

const SECTION: &str = "layer_names";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetLayerNamesArgs {
    /// One kind (default: all seven).
    #[serde(default)]
    kind: Option<LayerKind>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct NamedLayer {
    layer: u32,
    name: String,
}

fn read_project(state: &AppState) -> Result<godot_mcp_formats::ProjectInfo, ToolError> {
    let path =
        ResPath::parse("res://project.godot").map_err(|e| ToolError::internal(e.to_string()))?;
    let real = state.project.resolve("path", &path)?;
    let text =
        std::fs::read_to_string(&real).map_err(|e| ToolError::io("res://project.godot", &e))?;
    godot_mcp_formats::parse_project(&text).map_err(|e| {
        ToolError::new(
            ErrorCode::ParseError,
            format!("project.godot does not parse: {}", e.message()),
        )
    })
}

/// One kind's layers: how many Godot offers and the named ones.
#[derive(Debug, Serialize, JsonSchema)]
struct KindLayers {
    layers: u32,
    named: Vec<NamedLayer>,
}

/// The named layers by kind; a kind left out by `kind` is absent.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub(crate) struct LayerNamesOut {
    #[serde(rename = "2d_physics", skip_serializing_if = "Option::is_none")]
    physics_2d: Option<KindLayers>,
    #[serde(rename = "3d_physics", skip_serializing_if = "Option::is_none")]
    physics_3d: Option<KindLayers>,
    #[serde(rename = "2d_render", skip_serializing_if = "Option::is_none")]
    render_2d: Option<KindLayers>,
    #[serde(rename = "3d_render", skip_serializing_if = "Option::is_none")]
    render_3d: Option<KindLayers>,
    #[serde(rename = "2d_navigation", skip_serializing_if = "Option::is_none")]
    navigation_2d: Option<KindLayers>,
    #[serde(rename = "3d_navigation", skip_serializing_if = "Option::is_none")]
    navigation_3d: Option<KindLayers>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avoidance: Option<KindLayers>,
}

impl LayerNamesOut {
    fn slot(&mut self, kind: LayerKind) -> &mut Option<KindLayers> {
        match kind {
            LayerKind::Physics2d => &mut self.physics_2d,
            LayerKind::Physics3d => &mut self.physics_3d,
            LayerKind::Render2d => &mut self.render_2d,
            LayerKind::Render3d => &mut self.render_3d,
            LayerKind::Navigation2d => &mut self.navigation_2d,
            LayerKind::Navigation3d => &mut self.navigation_3d,
            LayerKind::Avoidance => &mut self.avoidance,
        }
    }
}

async fn get_layer_names(Call { state, args, .. }: Call<GetLayerNamesArgs>) -> Out<LayerNamesOut> {
    let project = read_project(&state)?;
    let mut out = LayerNamesOut::default();
    for kind in LayerKind::ALL
        .into_iter()
        .filter(|k| args.kind.is_none_or(|only| only == *k))
    {
        let mut named = Vec::new();
        for layer in 1..=kind.count() {
            if let Some(p) = project.setting(SECTION, &format!("{}/layer_{layer}", kind.as_str()))
                && let godot_mcp_formats::Literal::String(name) = &p.value
                && !name.is_empty()
            {
                named.push(NamedLayer {
                    layer,
                    name: name.clone(),
                });
            }
        }
        *out.slot(kind) = Some(KindLayers {
            layers: kind.count(),
            named,
        });
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetLayerNamesArgs {
    /// Which layers.
    kind: LayerKind,
    /// Layer number (1-based) → name; "" removes the name.
    names: BTreeMap<u32, String>,
}

/// One layer's name before and after.
#[derive(Debug, Serialize, JsonSchema)]
struct LayerChange {
    layer: u32,
    setting: String,
    previous: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct LayerChanges {
    kind: LayerKind,
    changes: Vec<LayerChange>,
}

fn plan_set_layer_names(
    state: Arc<AppState>,
    args: SetLayerNamesArgs,
) -> Result<EditPlan<LayerChanges>, ToolError> {
    let kind = args.kind;
    if args.names.is_empty() {
        return Err(ToolError::invalid_params(
            "names",
            "give at least one layer",
        ));
    }
    for (layer, name) in &args.names {
        if *layer == 0 || *layer > kind.count() {
            return Err(ToolError::invalid_params(
                format!("names.{layer}"),
                format!(
                    "{} has layers 1 to {}; {layer} is not one",
                    kind.as_str(),
                    kind.count()
                ),
            ));
        }
        if name.len() > 256 || name.chars().any(char::is_control) {
            return Err(ToolError::invalid_params(
                format!("names.{layer}"),
                "a layer name is one line of at most 256 bytes",
            ));
        }
    }
    plan_edit(state, move |config| {
        let mut text = config.text().to_string();
        let mut changes = Vec::new();
        for (layer, name) in &args.names {
            let key = format!("{}/layer_{layer}", kind.as_str());
            let current = ConfigText::parse(&text);
            let previous = current.get(SECTION, &key).map(str::to_string);
            if name.is_empty() {
                if let Some(t) = current.remove(SECTION, &key) {
                    text = t;
                }
            } else {
                text = current.set(SECTION, &key, &variant::quote(name));
            }
            changes.push(LayerChange {
                layer: *layer,
                setting: format!("{SECTION}/{key}"),
                previous,
                name: (!name.is_empty()).then(|| variant::quote(name)),
            });
        }
        Ok((text, LayerChanges { kind, changes }))
    })
}
