//! Family C executors: an audio player and shader materials in the edited scene. Each
//! edit is one `EditorUndoRedoManager` action on the edited scene's history, validated
//! before the first change (so an error is `effect: unchanged`), and stamped with the
//! same persistence verdict as every node edit.

use godot::classes::{AudioServer, AudioStream, ResourceLoader, Shader, ShaderMaterial};

use super::*;

pub(super) fn execute(cmd: Command) -> Res {
    match cmd {
        Command::AudioAddPlayer(wire::AudioAddPlayer {
            parent,
            name,
            player_type,
            stream,
            bus,
            autoplay,
            volume_db,
        }) => add_audio_player(
            &parent,
            &name,
            &player_type,
            stream.as_deref(),
            bus.as_deref(),
            autoplay,
            volume_db,
        ),
        Command::ShaderAssignMaterial(wire::ShaderAssignMaterial { node, shader }) => {
            assign_material(&node, &shader)
        }
        Command::ShaderUniforms(wire::ShaderUniforms { node }) => uniforms(&node),
        Command::ShaderSetUniform(wire::ShaderSetUniform { node, name, value }) => {
            set_uniform(&node, &name, &value)
        }
        _ => Err(err(ErrorCode::Internal, "not a family C command")),
    }
}

fn load_as<T: GodotClass + Inherits<Resource>>(
    path: &str,
    what: &str,
) -> Result<Gd<T>, BridgeError> {
    ResourceLoader::singleton()
        .load(path)
        .and_then(|r| r.try_cast::<T>().ok())
        .ok_or_else(|| {
            err(
                ErrorCode::NotFound,
                format!("{path} is not {what} that loads"),
            )
        })
}

fn add_audio_player(
    parent: &str,
    name: &str,
    player_type: &str,
    stream: Option<&str>,
    bus: Option<&str>,
    autoplay: bool,
    volume_db: Option<f64>,
) -> Res {
    let root = scene_root()?;
    let parent_node = find(&root, parent)?;
    let stream = stream
        .map(|s| load_as::<AudioStream>(s, "an AudioStream"))
        .transpose()?;
    // A player on a bus the editor's layout lacks plays on Master and saves no bus: refuse
    // rather than report a bus that will not be there.
    if let Some(b) = bus {
        let server = AudioServer::singleton();
        if server.get_bus_index(b) < 0 {
            let names: Vec<String> = (0..server.get_bus_count())
                .map(|i| server.get_bus_name(i).to_string())
                .collect();
            return Err(err(
                ErrorCode::InvalidParams,
                format!(
                    "the editor's audio bus layout has no bus {b:?} (buses: {})",
                    names.join(", ")
                ),
            ));
        }
    }
    let mut child = super::new_node(player_type, name)?;
    // Properties go on the new node before the action: undo removes the node, redo adds
    // it back as it was.
    if let Some(s) = &stream {
        child.set("stream", &s.to_variant());
    }
    if let Some(b) = bus {
        child.set("bus", &StringName::from(b).to_variant());
    }
    if autoplay {
        child.set("autoplay", &true.to_variant());
    }
    if let Some(v) = volume_db {
        child.set("volume_db", &(v as f32).to_variant());
    }
    super::add_child_action(
        &root,
        &parent_node,
        &child,
        &format!("MCP: add {player_type} {name}"),
    )?;
    Ok(with_verdict(
        &root,
        &child,
        json!({
            "node": rel_path(&root, &child), "type": player_type,
            "stream": stream.map(|s| s.get_path().to_string()),
            "bus": child.get("bus").to_string(),
            "autoplay": child.get("autoplay").to::<bool>(),
            "volume_db": child.get("volume_db").to::<f64>(),
        }),
    ))
}

/// The node's material property: `material_override` on a GeometryInstance3D,
/// `material` on a CanvasItem.
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
    let names: Vec<String> = uniform_list(&shader).into_iter().map(|(n, _)| n).collect();
    if !names.iter().any(|u| u == name) {
        return Err(err(
            ErrorCode::InvalidParams,
            format!(
                "the shader has no uniform {name:?} (uniforms: {})",
                names.join(", ")
            ),
        ));
    }
    let v = to_variant(value).map_err(failed)?;
    let old = material.get_shader_parameter(name);
    let mut ur = undo_redo()?;
    begin(&mut ur, &root, &format!("MCP: set {node} uniform {name}"));
    let key = StringName::from(name).to_variant();
    ur.add_do_method(&obj(&material), "set_shader_parameter", &[key.clone(), v]);
    ur.add_undo_method(&obj(&material), "set_shader_parameter", &[key, old.clone()]);
    ur.commit_action();
    let now = from_variant(&material.get_shader_parameter(name)).to_json();
    Ok(with_verdict(
        &root,
        &n,
        json!({"node": node, "uniform": name, "value": now,
               "previous": from_variant(&old).to_json()}),
    ))
}
