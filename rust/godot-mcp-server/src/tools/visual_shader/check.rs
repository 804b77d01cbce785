//! The checks of a VisualShader edit's arguments against the file and the node
//! classes: the shader function, a node id, a graph position, a typed property value.

use godot_mcp_formats::variant;
use godot_mcp_formats::visual_shader::{self as vs, MODES, VisualShaderFile};
use serde_json::{Value, json};

use crate::error::ToolError;

/// A shader function, checked against the file's mode.
pub(super) fn check_function(
    shader: &VisualShaderFile,
    function: &str,
) -> Result<&'static str, ToolError> {
    let funcs = vs::mode_functions(shader.mode());
    funcs
        .iter()
        .find(|f| **f == function)
        .copied()
        .ok_or_else(|| {
            ToolError::invalid_params(
                "function",
                format!(
                    "a {} VisualShader has no function {function:?}",
                    MODES[shader.mode()]
                ),
            )
            .hint(format!("Functions: {}", funcs.join(", ")))
        })
}

pub(super) fn node_not_found(
    shader: &VisualShaderFile,
    param: &str,
    function: &str,
    id: i64,
) -> ToolError {
    let ids: Vec<String> = shader
        .node_ids(function)
        .iter()
        .map(|i| i.to_string())
        .collect();
    ToolError::not_found(format!("{function} has no node {id}"))
        .param(param)
        .hint(format!("Nodes of {function}: {}", ids.join(", ")))
}

pub(super) fn check_position(p: [f64; 2]) -> Result<(), ToolError> {
    if p.iter().all(|c| c.is_finite() && c.abs() <= 1e7) {
        Ok(())
    } else {
        Err(ToolError::invalid_params(
            "position",
            "position must be two finite numbers within ±10,000,000",
        ))
    }
}

/// A JSON value as the Variant text of a property of Variant type `ty`.
pub(super) fn value_text(ty: &str, v: &Value, param: &str) -> Result<String, ToolError> {
    let bad = |want: &str| {
        ToolError::invalid_params(param, format!("`{param}` must be {want} (a {ty} property)"))
    };
    let numbers = |n: usize| -> Result<String, ToolError> {
        let want = format!("an array of {n} numbers");
        let items = v
            .as_array()
            .filter(|a| a.len() == n)
            .ok_or_else(|| bad(&want))?;
        let mut parts = Vec::with_capacity(n);
        for i in items {
            let f = i
                .as_f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| bad(&want))?;
            parts.push(vs::component_text(f));
        }
        Ok(format!("{ty}({})", parts.join(", ")))
    };
    match ty {
        "bool" => v
            .as_bool()
            .map(|b| b.to_string())
            .ok_or_else(|| bad("true or false")),
        "int" => v
            .as_i64()
            .map(|i| i.to_string())
            .ok_or_else(|| bad("an integer")),
        "float" => v
            .as_f64()
            .filter(|f| f.is_finite())
            .map(variant::float_text)
            .ok_or_else(|| bad("a number")),
        // Godot writes a parameter_name (a StringName) as a plain string; the loader
        // converts it.
        "String" | "StringName" => v
            .as_str()
            .filter(|s| s.len() <= 4096)
            .map(variant::quote)
            .ok_or_else(|| bad("a string")),
        "Color" => match v.as_array().map(Vec::len) {
            Some(3) => {
                let mut a = v.as_array().cloned().unwrap_or_default();
                a.push(json!(1));
                value_text(ty, &Value::Array(a), param)
            }
            _ => numbers(4).map_err(|_| bad("[r, g, b] or [r, g, b, a]")),
        },
        "Vector2" => numbers(2),
        "Vector3" => numbers(3),
        "Vector4" | "Quaternion" => numbers(4),
        "Transform3D" => numbers(12),
        "PackedInt32Array" => {
            let items = v.as_array().ok_or_else(|| bad("an array of integers"))?;
            let ints: Option<Vec<String>> = items
                .iter()
                .map(|i| {
                    i.as_i64()
                        .filter(|i| i32::try_from(*i).is_ok())
                        .map(|i| i.to_string())
                })
                .collect();
            ints.map(|i| format!("PackedInt32Array({})", i.join(", ")))
                .ok_or_else(|| bad("an array of 32-bit integers"))
        }
        "PackedStringArray" => {
            let items = v.as_array().ok_or_else(|| bad("an array of strings"))?;
            let strs: Option<Vec<String>> = items
                .iter()
                .map(|i| i.as_str().map(variant::quote))
                .collect();
            strs.map(|s| format!("PackedStringArray({})", s.join(", ")))
                .ok_or_else(|| bad("an array of strings"))
        }
        _ => Err(ToolError::invalid_params(
            param,
            format!("`{param}` is a {ty} property, which these tools do not set"),
        )
        .hint("Set resource-valued properties (textures, meshes) in the Godot editor.")),
    }
}

/// The node class's stored property `name`, with its Variant type.
pub(super) fn class_property(
    class: &str,
    name: &str,
    param: &str,
) -> Result<&'static str, ToolError> {
    let props = vs::class_properties(class).ok_or_else(|| {
        ToolError::invalid_params(
            param,
            format!("{class} is not a node class these tools edit"),
        )
    })?;
    props
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = props.iter().map(|(n, _)| *n).collect();
            ToolError::invalid_params(param, format!("{class} stores no property {name:?}")).hint(
                if names.is_empty() {
                    format!("{class} has no settable properties")
                } else {
                    format!("Properties: {}", names.join(", "))
                },
            )
        })
}
