//! Audio parameters: `audio.add_player`.

use serde::{Deserialize, Serialize};

/// `audio.add_player`: an AudioStreamPlayer (2D/3D) with its properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AudioAddPlayer {
    pub parent: String,
    pub name: String,
    #[serde(rename = "type")]
    pub player_type: String,
    #[serde(default)]
    pub stream: Option<String>,
    #[serde(default)]
    pub bus: Option<String>,
    #[serde(default)]
    pub autoplay: bool,
    #[serde(default)]
    pub volume_db: Option<f64>,
}
