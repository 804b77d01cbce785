//! A project file as an `[ext_resource]` of a scene or resource text: the type and uid
//! Godot writes for it (the uid from its `.import`, its `.uid` sidecar or its own
//! header), and the edit that adds the section to an existing text (every other byte
//! kept) or finds the one already there. `create_material`'s textures and
//! `cross_scene_set_property`'s `res://` values are written through it.

use godot_mcp_formats::{ExtResource, ids};

use crate::error::ToolError;
use crate::planes::project as plane;
use crate::planes::project::sha256_hex;
use crate::respath::ResPath;
use crate::state::AppState;

/// What an `[ext_resource]` line says of its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExtTarget {
    pub path: String,
    /// `type=`: the class Godot loads it as (`Texture2D`, `PackedScene`, `Script`…).
    pub type_name: String,
    pub uid: Option<String>,
}

/// The text of the project file `path`, if it exists and reads.
fn read_sidecar(state: &AppState, path: &str) -> Option<String> {
    let p = ResPath::parse(path).ok()?;
    let real = state.project.resolve("path", &p).ok()?;
    std::fs::read_to_string(real).ok()
}

/// The header uid of a scene or resource text.
pub(crate) fn header_uid(text: &str) -> Option<String> {
    attr(text.lines().next()?, "uid")
}

/// The string attribute `name` of a section header line.
fn attr(line: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let at = line.find(&key)? + key.len();
    let len = line[at..].find('"')?;
    Some(line[at..at + len].to_string())
}

/// The uid of an imported file, from its `.import` (`None`: not imported yet).
pub(crate) fn import_uid(state: &AppState, path: &ResPath) -> Option<String> {
    read_sidecar(state, &format!("{path}.import"))
        .and_then(|t| crate::tools::kit::common::import_uid(&t))
}

/// `path` (param `param`) as an ext_resource target: RESOURCE_NOT_FOUND when no such
/// file exists.
pub(crate) fn ext_target(
    state: &AppState,
    param: &str,
    path: &ResPath,
) -> Result<ExtTarget, ToolError> {
    if plane::current(&state.project, param, path)?.is_none() {
        return Err(ToolError::not_found(format!("{path} does not exist"))
            .param(param)
            .hint("Give the res:// path of a file in the project (list_files shows them)."));
    }
    let import = read_sidecar(state, &format!("{path}.import"));
    let ext = path.extension().unwrap_or_default();
    let own_header = || {
        matches!(ext.as_str(), "tscn" | "tres")
            .then(|| read_sidecar(state, &path.to_string()))
            .flatten()
    };
    let uid = match &import {
        Some(t) => crate::tools::kit::common::import_uid(t),
        None => own_header().as_deref().and_then(header_uid).or_else(|| {
            read_sidecar(state, &format!("{path}.uid"))
                .map(|t| t.trim().to_string())
                .filter(|u| u.starts_with("uid://"))
        }),
    };
    let type_name = match (&import, ext.as_str()) {
        (Some(t), _) => t
            .lines()
            .find_map(|l| l.trim().strip_prefix("type="))
            .map(|v| v.trim().trim_matches('"'))
            // Godot's saver writes an imported texture as the class it loads as.
            .map(|v| match v {
                "CompressedTexture2D" => "Texture2D",
                "CompressedTexture3D" => "Texture3D",
                other => other,
            })
            .unwrap_or("Resource")
            .to_string(),
        (None, "tscn" | "scn") => "PackedScene".into(),
        (None, "tres") => own_header()
            .and_then(|t| attr(t.lines().next().unwrap_or_default(), "type"))
            .unwrap_or_else(|| "Resource".into()),
        (None, "gd" | "cs") => "Script".into(),
        (None, "gdshader") => "Shader".into(),
        (None, "gdshaderinc") => "ShaderInclude".into(),
        _ => "Resource".into(),
    };
    Ok(ExtTarget {
        path: path.to_string(),
        type_name,
        uid,
    })
}

/// The `[ext_resource]` line of `target` with id `id`, as Godot 4 writes it.
pub(crate) fn ext_line(target: &ExtTarget, id: &str) -> String {
    let uid = target
        .uid
        .as_ref()
        .map(|u| format!(" uid=\"{u}\""))
        .unwrap_or_default();
    format!(
        "[ext_resource type=\"{}\"{uid} path=\"{}\" id=\"{id}\"]\n",
        target.type_name, target.path
    )
}

/// A new ext_resource id as Godot makes one (`N_xxxxx`, N the section's place),
/// derived from `seed` so a dry run and the real run write the same bytes.
pub(crate) fn new_ext_id(index: usize, seed: &[&str], taken: impl Fn(&str) -> bool) -> String {
    let mut n = 0u32;
    loop {
        let mut parts = seed.to_vec();
        let salt = n.to_string();
        parts.push(&salt);
        let id = ids::ext_resource_id(index, derived_u64(&parts) as u32);
        if !taken(&id) {
            return id;
        }
        n += 1;
    }
}

/// `src` (whose parsed `[ext_resource]`s are `exts`) with `target` as an ext_resource:
/// the id of the section already naming its path, or a new section after the last
/// one (after the header when there is none), `load_steps` of the header counted up.
/// Answers the text and the id.
pub(crate) fn with_ext_resource(
    src: &str,
    exts: &[ExtResource],
    target: &ExtTarget,
    seed: &str,
) -> (String, String) {
    if let Some(e) = exts.iter().find(|e| e.path == target.path) {
        return (src.to_string(), e.id.clone());
    }
    let id = new_ext_id(exts.len() + 1, &[seed, &target.path], |id| {
        exts.iter().any(|e| e.id == id)
    });
    let mut lines: Vec<String> = src.split_inclusive('\n').map(String::from).collect();
    if let Some(first) = lines.first_mut() {
        if !first.ends_with('\n') {
            first.push('\n');
        }
        // load_steps (Godot 4.4 writes it; 4.6 does not) counts every resource + 1.
        if let Some(at) = first.find(" load_steps=") {
            let at = at + " load_steps=".len();
            let digits: String = first[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(count) = digits.parse::<u64>() {
                first.replace_range(at..at + digits.len(), &(count + 1).to_string());
            }
        }
    }
    let line = ext_line(target, &id);
    match exts.iter().map(|e| e.line).max() {
        // An ext_resource section is its header line alone.
        Some(last) => lines.insert(last as usize, line),
        None => lines.insert(1.min(lines.len()), format!("\n{line}")),
    }
    (lines.concat(), id)
}

/// 64 bits derived from `parts` (sha256), standing in for the engine's random uid
/// and id bits. Derived, not drawn, so a dry run reports the exact bytes the real
/// run writes; the target path is always a part, so distinct files get distinct ids.
pub(crate) fn derived_u64(parts: &[&str]) -> u64 {
    let joined = parts.join("\0");
    let hex = sha256_hex(joined.as_bytes());
    u64::from_str_radix(&hex[..16], 16).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn icon() -> ExtTarget {
        ExtTarget {
            path: "res://icon.svg".into(),
            type_name: "Texture2D".into(),
            uid: Some("uid://bvc2gk7x0d3ns".into()),
        }
    }

    #[test]
    fn a_new_ext_resource_follows_the_last_and_counts_load_steps() {
        let src = "[gd_scene load_steps=2 format=3]\n\n\
                   [ext_resource type=\"Script\" path=\"res://a.gd\" id=\"1_a\"]\n\n\
                   [node name=\"S\" type=\"Sprite2D\"]\n";
        let scene = godot_mcp_formats::parse_scene(src).unwrap();
        let (text, id) = with_ext_resource(src, &scene.ext_resources, &icon(), "s");
        assert!(id.starts_with("2_"), "{id}");
        assert_eq!(
            text,
            format!(
                "[gd_scene load_steps=3 format=3]\n\n\
                 [ext_resource type=\"Script\" path=\"res://a.gd\" id=\"1_a\"]\n\
                 [ext_resource type=\"Texture2D\" uid=\"uid://bvc2gk7x0d3ns\" path=\"res://icon.svg\" id=\"{id}\"]\n\n\
                 [node name=\"S\" type=\"Sprite2D\"]\n"
            )
        );
        let again = godot_mcp_formats::parse_scene(&text).unwrap();
        assert_eq!(
            with_ext_resource(&text, &again.ext_resources, &icon(), "s"),
            (text.clone(), id)
        );
    }

    #[test]
    fn the_first_ext_resource_follows_the_header() {
        let src = "[gd_scene format=3]\n\n[node name=\"S\" type=\"Sprite2D\"]\n";
        let (text, id) = with_ext_resource(src, &[], &icon(), "s");
        assert_eq!(
            text,
            format!(
                "[gd_scene format=3]\n\n\
                 [ext_resource type=\"Texture2D\" uid=\"uid://bvc2gk7x0d3ns\" path=\"res://icon.svg\" id=\"{id}\"]\n\n\
                 [node name=\"S\" type=\"Sprite2D\"]\n"
            )
        );
    }
}
