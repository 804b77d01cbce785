//! The project at a glance, appended to the server's `instructions` when a client
//! connects (issue #40: an agent's first call was a look at the project — `ls`, `cat`
//! of the scene it is told to change — before any edit). Read from disk at connect:
//! the name, engine, main scene, autoloads and input actions of `project.godot`, each
//! scene's node tree (`Name:Type`, instances as `Name:res://…`), each script's
//! `class_name`/`extends`, and the other files. Bounded ([`MAX_CHARS`], a few nodes a
//! scene, a few files a kind): context is paid on every turn, so a large project gets
//! a sample and the words to read the rest. `addons/` (plugins, this server's add-on
//! among them) is left out.

use std::fmt::Write as _;

use godot_mcp_formats::parse_scene;

use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::common::{FileKind, script_header_gd, walk_files};

/// The overview's size bound, in bytes.
pub(crate) const MAX_CHARS: usize = 2_000;
/// Scenes shown with their trees.
const MAX_SCENES: usize = 8;
/// Nodes shown of one scene.
const MAX_NODES: usize = 24;
/// One scene's tree, in bytes.
const MAX_TREE_CHARS: usize = 400;
/// Files a project may hold for the overview to walk it (a larger one is not listed).
const MAX_FILES: usize = 2_000;

/// The overview, or `None` when the project cannot be read.
pub(crate) fn overview(state: &AppState) -> Option<String> {
    let root = state.project.root();
    let mut files = Vec::new();
    let mut visited = 0;
    walk_files(state, root, &ResPath::root(), &mut files, &mut visited).ok()?;
    if files.len() > MAX_FILES {
        return None;
    }
    // project.godot is summarized above.
    files.retain(|(p, ..)| {
        !p.starts_with("res://addons/") && !is_sidecar(p) && p != "res://project.godot"
    });
    let mut out = String::from("The project when you connected (read from disk):");
    if let Ok(text) = std::fs::read_to_string(root.join("project.godot"))
        && let Ok(p) = godot_mcp_formats::parse_project(&text)
    {
        let _ = write!(out, " {:?}", p.name.unwrap_or_default());
        if let Some(v) = p.features.iter().find(|f| f.starts_with('4')) {
            let _ = write!(out, ", Godot {v}");
        }
        if let Some(m) = p.main_scene {
            let _ = write!(out, ", main scene {m}");
        }
        let list = |names: Vec<&str>| names.join(", ");
        if !p.autoloads.is_empty() {
            let names = p.autoloads.iter().map(|a| a.name.as_str()).collect();
            let _ = write!(out, "; autoloads: {}", list(names));
        }
        // Godot's own ui_* actions, when overridden, are counted, not named.
        let (ui, own): (Vec<_>, Vec<_>) = p
            .input_actions
            .iter()
            .map(|a| a.name.as_str())
            .partition(|n| n.starts_with("ui_"));
        if !own.is_empty() {
            let _ = write!(out, "; input actions: {}", list(own));
        }
        if !ui.is_empty() {
            let _ = write!(out, " ({} ui_* overridden)", ui.len());
        }
    }
    out.push('.');
    let kind = |p: &str| FileKind::of(p.rsplit_once('.').map(|(_, e)| e));
    let (mut scenes, mut other) = (0, Vec::new());
    for (path, real, size) in &files {
        let k = kind(path);
        let text = || (*size <= 256 * 1024).then(|| std::fs::read_to_string(real).ok())?;
        match k {
            FileKind::Scene if scenes < MAX_SCENES && path.ends_with(".tscn") => {
                scenes += 1;
                let _ = write!(out, "\n{path}: ");
                match text().map(|t| parse_scene(&t)) {
                    Some(Ok(s)) => out.push_str(&tree(&s)),
                    _ => out.push_str("(not read)"),
                }
            }
            FileKind::Script if path.ends_with(".gd") => {
                let h = text().map(|t| script_header_gd(&t)).unwrap_or_default();
                let _ = write!(out, "\n{path}");
                if let Some(c) = h.class_name {
                    let _ = write!(out, " class_name {c}");
                }
                if let Some(e) = h.extends {
                    let _ = write!(out, " extends {e}");
                }
            }
            _ => other.push(path.as_str()),
        }
    }
    if !other.is_empty() {
        let _ = write!(out, "\nOther files: {}", other.join(", "));
    }
    Some(bounded(out))
}

/// `.import` and `.uid` files, which Godot writes beside the file they describe.
fn is_sidecar(path: &str) -> bool {
    path.ends_with(".import") || path.ends_with(".uid")
}

/// A scene's nodes in file order, `Name:Type` (an instance `Name:res://…`), each
/// child's parent named by indentation-free paths: `Main:Node2D > Player:Area2D, HUD…`.
fn tree(s: &godot_mcp_formats::Scene) -> String {
    let mut parts = Vec::new();
    // Overrides of an instance's nodes (no type, no instance of their own) are left out.
    let shown: Vec<_> = s
        .nodes
        .iter()
        .filter(|n| n.node_type.is_some() || n.instance.is_some())
        .collect();
    for n in shown.iter().take(MAX_NODES) {
        let ty = match (&n.node_type, &n.instance) {
            (Some(t), _) => t.clone(),
            (None, Some(link)) => link.path.clone(),
            (None, None) => continue,
        };
        let path = if n.parent.is_none() {
            n.name.clone()
        } else {
            n.path.clone()
        };
        parts.push(format!("{path}:{ty}"));
    }
    let mut t = String::new();
    for (i, part) in parts.iter().enumerate() {
        if t.len() + part.len() > MAX_TREE_CHARS {
            let _ = write!(t, ", … {} more (get_scene_tree)", shown.len() - i);
            return t;
        }
        if i > 0 {
            t.push_str(", ");
        }
        t.push_str(part);
    }
    if shown.len() > MAX_NODES {
        let _ = write!(t, ", … {} more (get_scene_tree)", shown.len() - MAX_NODES);
    }
    t
}

/// `text` cut at a line end within [`MAX_CHARS`], saying where the rest is.
fn bounded(text: String) -> String {
    if text.len() <= MAX_CHARS {
        return text;
    }
    const MORE: &str = "\n… (more: get_scene_tree, scripts_read, or your shell)";
    let limit = MAX_CHARS - MORE.len();
    let mut cut = (0..=limit)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    if let Some(nl) = text[..cut].rfind('\n') {
        cut = nl;
    }
    format!("{}{MORE}", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_overview_is_cut_at_a_line_and_says_where_the_rest_is() {
        let text: String = (0..400).map(|i| format!("res://f{i}.gd\n")).collect();
        let b = bounded(text);
        assert!(b.len() <= MAX_CHARS, "{}", b.len());
        assert!(b.ends_with("or your shell)"), "{b}");
        assert!(b.contains("\nres://f1.gd\n"));
        assert_eq!(bounded("short".into()), "short");
    }
}
