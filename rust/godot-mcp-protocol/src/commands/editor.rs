//! Generic editor parameters: the selection, save-all, the editor screenshot.

use serde::{Deserialize, Serialize};

/// `editor.select`: the editor's selection (`[]` clears it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditorSelect {
    pub nodes: Vec<String>,
}

no_params! {
    /// `editor.selection`.
    EditorSelection,
    /// `scene.save_all`.
    SceneSaveAll,
}

/// Which part of the editor a screenshot shows (also capture_editor_screenshot's `view`
/// argument, hence the schema; its variants' notes are plain comments so that the
/// schema stays a plain `enum` of names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ScreenshotView {
    // The 2D editor's viewport (the edited scene, no rulers or gizmos).
    #[serde(rename = "2d")]
    TwoD,
    // The first 3D editor viewport.
    #[serde(rename = "3d")]
    ThreeD,
    // The whole editor window.
    #[serde(rename = "window")]
    Window,
}

impl ScreenshotView {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TwoD => "2d",
            Self::ThreeD => "3d",
            Self::Window => "window",
        }
    }
}

/// `editor.screenshot`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditorScreenshot {
    pub view: ScreenshotView,
    /// Downscale (keeping the aspect) so that the longer edge is at most this many pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_edge: Option<u32>,
    /// Refuse a PNG larger than this (it could not travel or be shown).
    pub max_bytes: usize,
    /// 2D only: crop to this node's bounds in the view (a path from the edited scene's root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}
