//! Theme and UI parameters: theme items, Control overrides, anchors, containers.

use serde::{Deserialize, Serialize};

/// A theme item's kind (`Theme.DataType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ThemeKind {
    Color,
    Constant,
    Font,
    FontSize,
    Icon,
    Stylebox,
}

impl ThemeKind {
    /// `Theme.DataType`'s ordinal (the variants are in Godot's order).
    pub fn ord(self) -> i32 {
        self as i32
    }

    /// The Control property an override of this kind is stored under
    /// (`theme_override_colors/font_color`).
    pub fn override_property(self, name: &str) -> String {
        let group = match self {
            ThemeKind::Color => "colors",
            ThemeKind::Constant => "constants",
            ThemeKind::Font => "fonts",
            ThemeKind::FontSize => "font_sizes",
            ThemeKind::Icon => "icons",
            ThemeKind::Stylebox => "styles",
        };
        format!("theme_override_{group}/{name}")
    }
}

/// `theme.set_item`: an item of a Theme file. `value` is the agent's JSON as given; the
/// add-on checks it against `kind` (a color, an integer, a `res://` file, StyleBoxFlat
/// properties).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThemeSetItem {
    pub path: String,
    pub theme_type: String,
    pub kind: ThemeKind,
    pub name: String,
    pub value: serde_json::Value,
}

/// `control.theme_override`: as [`ThemeSetItem`], on a Control; `null` removes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlThemeOverride {
    pub node: String,
    pub kind: ThemeKind,
    pub name: String,
    pub value: serde_json::Value,
}

/// `control.anchors_preset`: a preset by name (`Control.LayoutPreset`, snake_case).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlAnchorsPreset {
    pub node: String,
    pub preset: String,
}

/// `control.add_container`: a Container class by name, with the fields that apply to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlAddContainer {
    pub parent: String,
    #[serde(rename = "type")]
    pub container_type: String,
    pub name: String,
    #[serde(default)]
    pub separation: Option<i64>,
    #[serde(default)]
    pub columns: Option<i64>,
    #[serde(default)]
    pub margin: Option<i64>,
}
