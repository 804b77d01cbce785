//! Theme and UI editing in the live editor.
//!
//! `set_theme_item` edits a Theme .tres the way `set_resource_property` edits a resource:
//! through the editor (so an open Theme editor and every Control using the theme see it),
//! as ONE action on the edited scene's undo history, then the file is saved. Its undo
//! restores the item and saves the file again, so one `editor_undo` leaves the .tres as it
//! was. The journal records the file's hash before and after, like every editor command
//! that may save a file. The `ui` tools edit Controls of the edited scene: theme overrides,
//! layout presets (what the editor's anchor menu does) and containers.

use godot_mcp_protocol::commands as cmd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::honesty::InSceneOrNull;
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::tools::ToolDef;
use crate::tools::kit::editor::present;
use crate::tools::kit::editor::{authoring_plan, editor_meta, node_edit, reply_fields, wire_name};
use crate::tools::kit::editor::{in_scene, in_scene_args};

// The theme item kind an agent names is the wire's (`commands::ThemeKind`): one type,
// its schema the agent's.
use cmd::ThemeKind;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ThemeItemArgs {
    /// The Theme .tres.
    path: ResPath,
    /// Theme type, e.g. Button.
    theme_type: String,
    kind: ThemeKind,
    /// Item name, e.g. font_color.
    name: String,
    /// See the kind: color "#ff0000", a name or [r, g, b(, a)]; constant/font_size integer; font/icon
    /// res:// file; stylebox res:// file or {StyleBoxFlat property: value}.
    value: Value,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OverrideArgs {
    /// Control node path from the scene root.
    node: String,
    kind: ThemeKind,
    /// Item name, e.g. font_color.
    name: String,
    /// As in set_theme_item; null removes the override.
    value: Value,
}
}

/// `Control.LayoutPreset`, by name.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LayoutPreset {
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
    CenterLeft,
    CenterTop,
    CenterRight,
    CenterBottom,
    Center,
    LeftWide,
    TopWide,
    RightWide,
    BottomWide,
    VcenterWide,
    HcenterWide,
    FullRect,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnchorsArgs {
    /// Control node path from the scene root.
    node: String,
    preset: LayoutPreset,
}
}

/// What `add_container` creates.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[allow(
    clippy::enum_variant_names,
    reason = "Godot's class names, and so the schema's values"
)]
pub(crate) enum ContainerType {
    HBoxContainer,
    VBoxContainer,
    GridContainer,
    MarginContainer,
    CenterContainer,
    PanelContainer,
    ScrollContainer,
    HFlowContainer,
    VFlowContainer,
    AspectRatioContainer,
}

in_scene_args! {
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContainerArgs {
    /// Parent node path ("." is the root).
    parent: String,
    #[serde(rename = "type")]
    container_type: ContainerType,
    /// Node name.
    name: String,
    /// Box/Grid/Flow: separation between children, in pixels.
    #[serde(default)]
    separation: Option<i64>,
    /// GridContainer: column count.
    #[serde(default)]
    columns: Option<u32>,
    /// MarginContainer: margin on every side, in pixels.
    #[serde(default)]
    margin: Option<i64>,
}
}

reply_fields!(
    pub(crate) struct ThemeItemSet {
        path: String,
        theme_type: String,
        name: String,
        /// The item now, as the editor's typed value JSON.
        #[serde(deserialize_with = "present")]
        value: Value,
    }
);

reply_fields!(
    pub(crate) struct OverrideSet {
        node: String,
        property: String,
        /// The override now (null: none), as the editor's typed value JSON.
        #[serde(deserialize_with = "present")]
        value: Value,
    }
);

reply_fields!(
    pub(crate) struct AnchorsSet {
        node: String,
        preset: String,
        anchors: Vec<f64>,
        offsets: Vec<f64>,
    }
);

reply_fields!(
    pub(crate) struct ContainerAdded {
        node: String,
        #[serde(rename = "type")]
        container_type: String,
    }
);

pub(crate) fn tools() -> Vec<ToolDef> {
    use crate::rules::class::Mutating;
    vec![
        ToolDef::planned(
            editor_meta(
                Toolset::Theme,
                Mutating,
                "set_theme_item",
                "Set a theme item",
                "Set a color, constant, font, font size, icon or stylebox of a type in a \
                 Theme .tres through the editor and save it (undo-tracked when a scene is \
                 open).",
            ),
            |state, a: ThemeItemArgs| {
                if !matches!(a.path.extension().as_deref(), Some("tres" | "res")) {
                    return Err(ToolError::invalid_params(
                        "path",
                        format!("{} is not a .tres or .res resource", a.path),
                    ));
                }
                let path = a.path.to_string();
                let p = cmd::ThemeSetItem {
                    path: path.clone(),
                    theme_type: a.theme_type,
                    kind: a.kind,
                    name: a.name,
                    value: a.value,
                };
                authoring_plan::<_, ThemeItemSet>(state, p, Some(path))
            },
        ),
        ToolDef::planned(
            editor_meta(
                Toolset::Ui,
                Mutating,
                "set_theme_override",
                "Set a theme override",
                "Set (or with null remove) a Control's theme override: color, constant, \
                 font, font size, icon, stylebox (one undo action). Several in one call: \
                 create_nodes set steps on theme_override_colors/<name> (_constants, \
                 _font_sizes, _fonts, _icons, _styles).",
            ),
            |state, a: OverrideArgs| {
                let p = cmd::ControlThemeOverride {
                    node: a.node.clone(),
                    kind: a.kind,
                    name: a.name,
                    value: a.value,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, OverrideSet, InSceneOrNull>(state, "set_property", a.node, p)
                })
            },
        ),
        ToolDef::planned(
            editor_meta(
                Toolset::Ui,
                Mutating,
                "set_anchors_preset",
                "Set a Control's anchors preset",
                "Apply a layout preset to a Control: anchors, offsets as Godot computes \
                 them, grow direction (one undo action).",
            ),
            |state, a: AnchorsArgs| {
                let p = cmd::ControlAnchorsPreset {
                    node: a.node.clone(),
                    preset: wire_name(a.preset),
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, AnchorsSet, InSceneOrNull>(state, "set_property", a.node, p)
                })
            },
        ),
        ToolDef::planned(
            editor_meta(
                Toolset::Ui,
                Mutating,
                "add_container",
                "Add a container",
                "Add an HBox/VBox/Grid/Margin/Center/Panel/Scroll/Flow container, with \
                 separation, columns or margin (one undo action).",
            ),
            |state, a: ContainerArgs| {
                let p = cmd::ControlAddContainer {
                    parent: a.parent.clone(),
                    container_type: wire_name(a.container_type),
                    name: a.name,
                    separation: a.separation,
                    columns: a.columns.map(i64::from),
                    margin: a.margin,
                };
                in_scene(state, a.scene, a.save, a.check, move |state| {
                    node_edit::<_, ContainerAdded, InSceneOrNull>(state, "create", a.parent, p)
                })
            },
        ),
    ]
}
