//! Shader parameters: a ShaderMaterial assigned, a uniform set.

use godot_mcp_formats::variant::Value;
use serde::{Deserialize, Serialize};

use super::value_json;

/// `shader.assign_material`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaderAssignMaterial {
    pub node: String,
    pub shader: String,
}

/// `shader.set_uniform`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShaderSetUniform {
    pub node: String,
    pub name: String,
    #[serde(with = "value_json")]
    pub value: Value,
}
