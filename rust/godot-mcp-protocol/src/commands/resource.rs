//! Resource parameters: `resource.set_property`.

use godot_mcp_formats::variant::Value;
use serde::{Deserialize, Serialize};

use super::value_json;

/// `resource.set_property`: a `.tres` property, set and saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceSetProperty {
    pub path: String,
    pub property: String,
    #[serde(with = "value_json")]
    pub value: Value,
}
