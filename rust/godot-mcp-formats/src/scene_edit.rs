//! Line-level edits of a `.tscn` or `.tres` that keep every other byte: set one property
//! of one node or one `[sub_resource]`. The parse says where the section and its
//! properties are (1-based lines; a value may span several lines), so the edit replaces
//! exactly the lines of that property, or inserts one line after the section's last
//! property (after its header when it has none). Godot loads the result as it loads any property line;
//! it writes a new property in its own order when it next saves the scene.

use crate::resource::SubResource;
use crate::scene::Scene;
use crate::text::Property;

/// What [`set_node_property`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyEdit {
    pub text: String,
    /// The value's text before; `None` when the node did not store the property.
    pub previous: Option<String>,
}

/// A property name as Godot's text saver writes it (`_valprop`): bare, or quoted
/// and escaped when it holds `=`, `"`, `;`, `[`, `]`, a space, a control or a
/// non-ASCII character (`"parameters/Animation 2/current_length" = 0.8`).
pub fn property_key(name: &str) -> String {
    if name
        .chars()
        .any(|c| matches!(c, '=' | '"' | ';' | '[' | ']') || !('!'..='~').contains(&c))
    {
        crate::variant::quote(name)
    } else {
        name.to_string()
    }
}

/// Set `property` of the node at `node_path` (`"."` is the root) to `value_text` in
/// `src`, which `scene` was parsed from. `Err` says why not (no such node).
pub fn set_node_property(
    src: &str,
    scene: &Scene,
    node_path: &str,
    property: &str,
    value_text: &str,
) -> Result<PropertyEdit, String> {
    let node = scene
        .node(node_path)
        .ok_or_else(|| format!("no node {node_path:?}"))?;
    set_section_property(src, node.line, &node.properties, property, value_text)
}

/// Set `property` of the `[sub_resource]` whose id is `id` (of a scene's or a
/// resource's `sub_resources`, parsed from `src`) to `value_text`: an Animation's
/// `length` or one of its `tracks/N/keys`, a TileSet source's tile. Same rules as
/// [`set_node_property`].
pub fn set_sub_resource_property(
    src: &str,
    sub_resources: &[SubResource],
    id: &str,
    property: &str,
    value_text: &str,
) -> Result<PropertyEdit, String> {
    let sub = sub_resources
        .iter()
        .find(|s| s.id == id)
        .ok_or_else(|| format!("no sub_resource {id:?}"))?;
    set_section_property(src, sub.line, &sub.properties, property, value_text)
}

/// Set `property` of the section whose header is at 1-based `header_line` and whose
/// parsed properties are `properties` to `value_text`: its lines replaced when the
/// section stores it, else one line after the section's last property (after the
/// header when it has none).
pub fn set_section_property(
    src: &str,
    header_line: u32,
    properties: &[Property],
    property: &str,
    value_text: &str,
) -> Result<PropertyEdit, String> {
    let new_line = format!("{} = {value_text}\n", property_key(property));
    let mut lines: Vec<&str> = src.split_inclusive('\n').collect();
    // Ensure the last line ends with a newline before anything is put after it.
    let owned_last;
    if let Some(last) = lines.last_mut()
        && !last.ends_with('\n')
    {
        owned_last = format!("{last}\n");
        *last = owned_last.as_str();
    }
    let span = |line: u32, text: &str| {
        let first = line as usize - 1;
        (first, first + text.split('\n').count())
    };
    let (at, remove, previous) = match properties.iter().find(|p| p.name == property) {
        Some(p) => {
            let (first, end) = span(p.line, &p.text);
            (first, end - first, Some(p.text.clone()))
        }
        None => {
            let after = match properties.last() {
                Some(p) => span(p.line, &p.text).1,
                None => header_line as usize,
            };
            (after, 0, None)
        }
    };
    if at > lines.len() || at + remove > lines.len() {
        return Err("the scene's lines do not match its parse".into());
    }
    let mut out = String::with_capacity(src.len() + new_line.len());
    for l in &lines[..at] {
        out.push_str(l);
    }
    out.push_str(&new_line);
    for l in &lines[at + remove..] {
        out.push_str(l);
    }
    Ok(PropertyEdit {
        text: out,
        previous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "[gd_scene format=3]\n\n[node name=\"Root\" type=\"Node2D\"]\n\n\
        [node name=\"A\" type=\"Sprite2D\" parent=\".\"]\nposition = Vector2(1, 2)\n\
        metadata/m = {\n\"k\": 1\n}\n\n[node name=\"B\" type=\"Sprite2D\" parent=\".\"]\n";

    fn set(path: &str, prop: &str, v: &str) -> PropertyEdit {
        let scene = crate::parse_scene(SRC).unwrap();
        set_node_property(SRC, &scene, path, prop, v).unwrap()
    }

    #[test]
    fn replaces_a_stored_property_in_place() {
        let e = set("A", "position", "Vector2(5, 6)");
        assert_eq!(e.previous.as_deref(), Some("Vector2(1, 2)"));
        assert_eq!(e.text, SRC.replace("Vector2(1, 2)", "Vector2(5, 6)"));
        // A value over several lines is replaced whole.
        let e = set("A", "metadata/m", "{}");
        assert!(
            e.text.contains("metadata/m = {}\n\n[node name=\"B\""),
            "{}",
            e.text
        );
        crate::parse_scene(&e.text).unwrap();
    }

    #[test]
    fn adds_a_property_after_the_last_one_or_the_header() {
        let e = set("A", "visible", "false");
        assert!(
            e.text.contains("}\nvisible = false\n\n[node name=\"B\""),
            "{}",
            e.text
        );
        assert_eq!(e.previous, None);
        let e = set("B", "visible", "false");
        assert!(
            e.text.ends_with("parent=\".\"]\nvisible = false\n"),
            "{}",
            e.text
        );
        let e = set(".", "scale", "Vector2(2, 2)");
        assert!(
            e.text
                .contains("type=\"Node2D\"]\nscale = Vector2(2, 2)\n\n"),
            "{}",
            e.text
        );
        let scene = crate::parse_scene(&e.text).unwrap();
        assert_eq!(scene.nodes[0].properties[0].name, "scale");
    }
}
