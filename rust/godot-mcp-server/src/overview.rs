//! The project at a glance, appended to the server's `instructions` when a client
//! connects (issue #40: an agent's first call was a look at the project — `ls`, `cat`
//! of the scene it is told to change — before any edit). Read from disk at connect:
//! the name, engine, main scene, autoloads and input actions of `project.godot`, each
//! scene's node tree (`Name:Type`, instances as `Name:res://…`), each script's
//! `class_name`/`extends`, and the other files; a small project's scripts, scenes and
//! resources whole, each with its sha256 ([`whole_files`]). Bounded ([`MAX_CHARS`], a few nodes a
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
/// A small project's text files shown whole: at most this many bytes together...
const WHOLE_CHARS: usize = 4_000;
/// ...each of at most this many.
const WHOLE_FILE: u64 = 1_500;
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
    files.retain(|(p, ..)| !p.starts_with("res://addons/") && !is_sidecar(p));
    let whole = whole_files(&files);
    // project.godot is summarized below.
    files.retain(|(p, ..)| p != "res://project.godot");
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
    let mut out = bounded(out);
    if let Some(w) = whole {
        out.push_str(&w);
    }
    Some(out)
}

/// A small project's text files, whole, with their sha256 (write_script's
/// `expected_sha256`): the pilot of agent run 13 began 6 tasks of 7 with `cat` of the
/// files it was to change. Only when every text file of at most [`WHOLE_FILE`] bytes
/// fits in [`WHOLE_CHARS`] together: a larger project gets the overview alone, not a
/// sample of its scripts.
fn whole_files(files: &[(String, std::path::PathBuf, u64)]) -> Option<String> {
    let text: Vec<_> = files
        .iter()
        .filter(|(p, _, size)| *size <= WHOLE_FILE && is_text(p))
        .collect();
    let total: u64 = text.iter().map(|(.., size)| size).sum();
    if text.is_empty() || total > WHOLE_CHARS as u64 {
        return None;
    }
    let mut out = String::from(
        "\n\nIts text files, whole (it is small; the sha256 is write_script's expected_sha256):",
    );
    for (path, real, _) in text {
        let bytes = std::fs::read(real).ok()?;
        let body = String::from_utf8(bytes).ok()?;
        let sha = crate::planes::project::sha256_hex(body.as_bytes());
        let _ = write!(out, "\n--- {path} sha256 {sha}\n{}", body.trim_end());
    }
    Some(out)
}

/// Files shown whole in a small project: what an agent reads before editing.
fn is_text(path: &str) -> bool {
    // Not .cfg, .json or .txt: export_presets.cfg holds keystore passwords, and an
    // agent's context is no place for them.
    const TEXT: [&str; 6] = [".gd", ".tscn", ".tres", ".gdshader", ".cs", "project.godot"];
    TEXT.iter().any(|e| path.ends_with(e))
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

    fn project(
        files: &[(&str, &str)],
    ) -> (tempfile::TempDir, Vec<(String, std::path::PathBuf, u64)>) {
        let dir = tempfile::tempdir().unwrap();
        let listed = files
            .iter()
            .map(|(name, text)| {
                let real = dir.path().join(name);
                std::fs::write(&real, text).unwrap();
                (format!("res://{name}"), real, text.len() as u64)
            })
            .collect();
        (dir, listed)
    }

    /// A small project's text files come whole, with the hash write_script takes; art
    /// and export presets (keystore passwords) do not, nor a file too large to show.
    #[test]
    fn a_small_project_is_shown_whole_with_each_files_hash() {
        let big = "#".repeat(WHOLE_FILE as usize + 1);
        let (_dir, files) = project(&[
            ("hud.gd", "extends CanvasLayer\n"),
            ("hud.tscn", "[gd_scene format=3]\n"),
            ("icon.svg", "<svg/>"),
            ("export_presets.cfg", "keystore/release_password=\"x\"\n"),
            ("big.gd", &big),
        ]);
        let w = whole_files(&files).unwrap();
        let sha = crate::planes::project::sha256_hex(b"extends CanvasLayer\n");
        assert!(
            w.contains(&format!(
                "\n--- res://hud.gd sha256 {sha}\nextends CanvasLayer"
            )),
            "{w}"
        );
        assert!(w.contains("\n--- res://hud.tscn sha256 "), "{w}");
        assert!(!w.contains("svg") && !w.contains("big.gd"), "{w}");
        assert!(!w.contains("password"), "{w}");
    }

    /// A project whose text files do not fit gets no sample of them.
    #[test]
    fn a_larger_project_is_not_shown_whole() {
        let text = "#".repeat(WHOLE_FILE as usize);
        let names: Vec<String> = (0..=WHOLE_CHARS / WHOLE_FILE as usize)
            .map(|i| format!("s{i}.gd"))
            .collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), text.as_str())).collect();
        let (_dir, files) = project(&files);
        assert_eq!(whole_files(&files), None);
    }

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
