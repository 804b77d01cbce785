//! Shader executors: a ShaderMaterial assigned to a node, its uniforms read and set. Each
//! edit is one `EditorUndoRedoManager` action on the edited scene's history, validated
//! before the first change, and stamped with the same persistence verdict as every node
//! edit.

use godot::classes::{Shader, ShaderMaterial};

use godot_mcp_editor_core::coerce::{self, Declared};

use super::ctx::{
    Res, begin, err, failed, find, load_as, misrouted, not_held, obj, roll_back, scene_root,
    undo_redo, with_verdict,
};
use crate::variant::held_as_asked;
use crate::variant::{from_variant, has_property, to_variant};
use godot::classes::Node;
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_protocol::commands as wire;
use godot_mcp_protocol::{BridgeError, ErrorCode};
use serde_json::{Value as Json, json};

/// The node's material property: `material_override` on a GeometryInstance3D,
/// `material` on a CanvasItem.
pub(crate) fn run(cmd: Command) -> Res {
    match cmd {
        Command::ShaderAssignMaterial(wire::ShaderAssignMaterial { node, shader }) => {
            assign_material(&node, &shader)
        }
        Command::ShaderUniforms(wire::ShaderUniforms { node }) => uniforms(&node),
        Command::ShaderSetUniform(wire::ShaderSetUniform { node, name, value }) => {
            set_uniform(&node, &name, &value)
        }
        _ => Err(misrouted("shader")),
    }
}

fn material_slot(n: &Gd<Node>) -> Result<&'static str, BridgeError> {
    for slot in ["material_override", "material"] {
        if has_property(&obj(n), slot) {
            return Ok(slot);
        }
    }
    Err(failed(format!(
        "{} ({}) has no material (a CanvasItem's material or a GeometryInstance3D's \
         material_override)",
        n.get_name(),
        n.get_class()
    )))
}

fn assign_material(node: &str, shader: &str) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let slot = material_slot(&n)?;
    let shader_res = load_as::<Shader>(shader, "a Shader")?;
    let mut material = ShaderMaterial::new_gd();
    material.set_shader(&shader_res);
    let old = n.get(slot);
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: shader material on {node}"));
    ur.add_do_property(&obj(&n), slot, &material.to_variant());
    ur.add_undo_property(&obj(&n), slot, &old);
    ur.add_do_reference(&obj(&material));
    ur.commit_action();
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "property": slot, "shader": shader,
               "replaced": !old.is_nil()}),
    ))
}

/// The node's ShaderMaterial, saved in the scene (not a file of its own).
fn shader_material(n: &Gd<Node>, node: &str) -> Result<Gd<ShaderMaterial>, BridgeError> {
    let slot = material_slot(n)?;
    let material = n
        .get(slot)
        .try_to::<Gd<ShaderMaterial>>()
        .map_err(|_| failed(format!("{node}'s {slot} is not a ShaderMaterial")))?;
    Ok(material)
}

/// `{name, type, hint, hint_string}` of each uniform of `shader`.
fn uniform_list(shader: &Gd<Shader>) -> Vec<(String, Json)> {
    shader
        .get_shader_uniform_list()
        .iter_shared()
        .filter_map(|v| v.try_to::<VarDictionary>().ok())
        .map(|d| {
            let name = d.get("name").map(|v| v.to_string()).unwrap_or_default();
            let ty = d
                .get("type")
                .and_then(|v| v.try_to::<i64>().ok())
                .unwrap_or(0);
            let info = json!({
                "name": name,
                "type": godot::global::type_string(ty).to_string(),
                "hint": d.get("hint").and_then(|v| v.try_to::<i64>().ok()),
                "hint_string": d.get("hint_string").map(|v| v.to_string()),
            });
            (name, info)
        })
        .collect()
}

/// The type `name` declares in `shader`'s uniform list, `None` when it has no such uniform.
fn uniform_declared(shader: &Gd<Shader>, name: &str) -> Option<Declared> {
    shader
        .get_shader_uniform_list()
        .iter_shared()
        .filter_map(|v| v.try_to::<VarDictionary>().ok())
        .map(|d| crate::variant::declared_of(&d))
        .find(|(n, _)| n == name)
        .map(|(_, d)| d)
}

fn uniforms(node: &str) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let material = shader_material(&n, node)?;
    let Some(shader) = material.get_shader() else {
        return Ok(json!({"node": node, "shader": null, "uniforms": []}));
    };
    let list: Vec<Json> = uniform_list(&shader)
        .into_iter()
        .map(|(name, mut info)| {
            info["value"] = from_variant(&material.get_shader_parameter(name.as_str())).to_json();
            info
        })
        .collect();
    Ok(json!({
        "node": node,
        "shader": shader.get_path().to_string(),
        "material_path": material.get_path().to_string(),
        "uniforms": list,
    }))
}

fn set_uniform(node: &str, name: &str, value: &godot_mcp_editor_core::value::Value) -> Res {
    let root = scene_root()?;
    let n = find(&root, node)?;
    let material = shader_material(&n, node)?;
    // A material saved as its own file would change that file, not the scene: the
    // verdict below would be wrong, so it is refused.
    let path = material.get_path().to_string();
    if !path.is_empty() && !path.contains("::") {
        return Err(failed(format!(
            "{node}'s ShaderMaterial is the file {path}; set its uniform there \
             (set_resource_property shader_parameter/{name})"
        )));
    }
    let shader = material
        .get_shader()
        .ok_or_else(|| failed(format!("{node}'s ShaderMaterial has no shader")))?;
    let Some(declared) = uniform_declared(&shader, name) else {
        let names: Vec<String> = uniform_list(&shader).into_iter().map(|(n, _)| n).collect();
        return Err(err(
            ErrorCode::InvalidParams,
            format!(
                "the shader has no uniform {name:?} (uniforms: {})",
                names.join(", ")
            ),
        ));
    };
    // Read by the uniform's own type: a JSON `0` for a float uniform is the float 0.0.
    // Godot keeps a value of another type only until the material's property list is
    // next built, then puts the shader's default (null in a headless editor) in its
    // place: the saved scene would say `null` where the answer said 0.
    let ty = declared.ty.clone();
    let v = coerce::coerce(value, &declared, &|_| None)
        .map_err(|e| failed(format!("{node} uniform {name}: {e}")))
        .and_then(|v| to_variant(&v).map_err(failed))?;
    let old = material.get_shader_parameter(name);
    let mut ur = undo_redo()?;
    let action = format!("MCP: set {node} uniform {name}");
    begin(&mut ur, &root, &action);
    let key = StringName::from(name).to_variant();
    ur.add_do_method(
        &obj(&material),
        "set_shader_parameter",
        &[key.clone(), v.clone()],
    );
    ur.add_undo_method(&obj(&material), "set_shader_parameter", &[key, old.clone()]);
    ur.commit_action();
    let held = material.get_shader_parameter(name);
    let held_ty = godot::global::type_string(held.get_type().ord() as i64).to_string();
    let type_kept = ty == "Nil" || held_ty == ty || (ty == "Object" && held.is_nil());
    if let Err(why) = held_as_asked(&v, &held).and_then(|()| {
        type_kept
            .then_some(())
            .ok_or_else(|| format!("Godot holds a {held_ty} for a {ty} uniform"))
    }) {
        let effect = roll_back(&ur, &obj(&root), &action, || {
            material.get_shader_parameter(name) == old
        });
        return Err(not_held(&format!("{node} uniform {name}"), &why, effect));
    }
    let now = from_variant(&held).to_json();
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "uniform": name, "value": now,
               "previous": from_variant(&old).to_json()}),
    ))
}
