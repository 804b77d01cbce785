//! C# scripts as the script tools speak of them: the class Godot binds to the file
//! (the top-level class named as the file), its base resolved through the project's
//! own C# classes to an engine class, its exports and signals (`godot_mcp_csharp`, the
//! rules of Godot's source generators), and the refusal `attach_script` gives a `.cs`
//! whose class does not match its file or does not fit the node.

use std::collections::BTreeMap;
use std::path::Path;

use godot_mcp_csharp::{CsExport, CsFile, CsSignal, GeneratorDiagnostic, read_cs, script_class};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::common::{read_text, walk_scripts};
use std::sync::Arc;

/// A C# script as list_scripts and get_node_script report it.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct CsScript {
    /// The class Godot binds to this file: the top-level class named as the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_name: Option<String>,
    /// Its base as written (`CharacterBody2D`, a project class).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// The engine class it derives from, through the project's C# classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_base: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_class: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exports: Vec<CsExport>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<CsSignal>,
    /// What keeps Godot from using the file as a script, and what its source
    /// generators would report (GD0001…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<GeneratorDiagnostic>,
}

/// The project's C# classes by simple name: their bases as written (for resolving a
/// script's base through project classes to an engine class).
#[derive(Debug, Default)]
pub struct CsIndex {
    bases: BTreeMap<String, Option<String>>,
}

impl CsIndex {
    /// Add every class of one file.
    pub fn add(&mut self, file: &CsFile) {
        for c in &file.classes {
            self.bases.entry(c.name.clone()).or_insert(c.base.clone());
        }
    }

    /// `base` followed through the project's classes: the first name that is no
    /// project class (an engine class, or unknown), and the project classes on the way.
    pub fn native_base(&self, base: &str) -> (String, Vec<String>) {
        let mut name = strip_generic(base).to_string();
        let mut via = Vec::new();
        while let Some(next) = self.bases.get(&name) {
            if via.contains(&name) || via.len() > 64 {
                break; // a cycle is the compiler's error; never loop on it
            }
            via.push(name.clone());
            match next {
                Some(b) => name = strip_generic(b).to_string(),
                None => break,
            }
        }
        (name, via)
    }
}

/// `Node25D<T>` → `Node25D`; `Godot.Node` → `Node`.
fn strip_generic(t: &str) -> &str {
    let t = t.split('<').next().unwrap_or(t);
    t.rsplit('.').next().unwrap_or(t)
}

/// The file name without `.cs` (Godot's `Path.GetFileNameWithoutExtension`).
pub(crate) fn file_stem(res_path: &str) -> &str {
    let name = res_path.rsplit('/').next().unwrap_or(res_path);
    name.strip_suffix(".cs").unwrap_or(name)
}

/// Read a `.cs` script: the class bound to `res_path`, resolved with `index` (the
/// project's classes; `None`: this file's alone).
pub fn cs_script(res_path: &str, text: &str, index: Option<&CsIndex>) -> CsScript {
    let file = read_cs(text);
    let stem = file_stem(res_path);
    let mut out = CsScript::default();
    for l in &file.syntax_error_lines {
        out.problems.push(GeneratorDiagnostic {
            code: "syntax",
            message: "the C# grammar found a syntax error here".into(),
            line: *l,
        });
    }
    let Some(class) = script_class(&file, stem) else {
        let classes: Vec<&str> = file
            .classes
            .iter()
            .filter(|c| c.top_level())
            .map(|c| c.name.as_str())
            .collect();
        out.problems.push(GeneratorDiagnostic {
            code: "class_name_mismatch",
            message: format!(
                "no top-level class is named '{stem}' like the file; Godot binds a C# script to \
                 the class named as its file (classes here: {})",
                if classes.is_empty() {
                    "none".to_string()
                } else {
                    classes.join(", ")
                }
            ),
            line: 1,
        });
        return out;
    };
    let own;
    let index = match index {
        Some(i) => i,
        None => {
            let mut i = CsIndex::default();
            i.add(&file);
            own = i;
            &own
        }
    };
    out.class_name = Some(class.name.clone());
    out.extends = class.base.clone();
    out.native_base = class.base.as_deref().map(|b| index.native_base(b).0);
    out.namespace = class.namespace.clone();
    out.tool = class.tool;
    out.global_class = class.global_class;
    out.exports = class.exports.clone();
    out.signals = class.signals.clone();
    if !class.partial && class.base.is_some() {
        out.problems.push(GeneratorDiagnostic {
            code: "GD0001",
            message: format!(
                "the class '{}' is not partial; Godot's source generators need `partial class`",
                class.name
            ),
            line: class.line,
        });
    }
    out.problems.extend(class.diagnostics.iter().cloned());
    out
}

/// Why `attach_script` refuses a `.cs`, if it does: its class does not match its file,
/// it has no base, or the node's class (`node_class`, with its engine ancestors
/// `node_chain`, nearest first, from the class reference; `None`: not available) is
/// not its engine base nor derives from it.
pub(crate) fn attach_refusal(
    res_path: &str,
    script: &CsScript,
    node: &str,
    node_class: &str,
    node_chain: Option<&[String]>,
) -> Option<ToolError> {
    let Some(class) = &script.class_name else {
        let why = script
            .problems
            .iter()
            .find(|p| p.code == "class_name_mismatch")
            .map_or("its class does not match its file", |p| p.message.as_str());
        return Some(
            ToolError::new(
                ErrorCode::InvalidParams,
                format!("{res_path} cannot be attached: {why}"),
            )
            .param("script")
            .hint(format!(
                "Rename the class to '{}' (or the file after its class), then attach it.",
                file_stem(res_path)
            )),
        );
    };
    let Some(base) = script.native_base.as_deref() else {
        return Some(
            ToolError::new(
                ErrorCode::InvalidParams,
                format!("{res_path}: class '{class}' derives from no Godot class"),
            )
            .param("script")
            .hint(format!(
                "Declare it `public partial class {class} : {node_class}` (or a base of \
                 {node_class}), then attach it."
            )),
        );
    };
    // Without the engine's class reference the node's bases are unknown: the editor
    // decides (it refuses a script its node cannot take).
    let chain = node_chain?;
    if base == node_class || base == "GodotObject" || chain.iter().any(|a| a == base) {
        return None;
    }
    let chain_note = if chain.is_empty() {
        String::new()
    } else {
        format!(" ({node_class} derives from {})", chain.join(" < "))
    };
    Some(
        ToolError::new(
            ErrorCode::InvalidParams,
            format!(
                "{res_path}: class '{class}' derives from {base}, and node {node:?} is a \
                 {node_class}{chain_note}; Godot refuses a script whose base the node's class \
                 does not derive from"
            ),
        )
        .param("script")
        .hint(format!(
            "Attach it to a {base} node (or one derived from it), or change its base to \
             {node_class} or one of its bases."
        )),
    )
}

/// Read every `.cs` of `files` into one index (unreadable files are skipped: they
/// cannot add a class).
pub(crate) fn index_of<'a>(files: impl IntoIterator<Item = &'a Path>) -> CsIndex {
    let mut idx = CsIndex::default();
    for f in files {
        if let Ok(text) = std::fs::read_to_string(f) {
            idx.add(&read_cs(&text));
        }
    }
    idx
}

/// Every C# class of the project, for resolving bases through the project's own classes.
pub(crate) fn cs_index(state: &AppState) -> Result<CsIndex, ToolError> {
    let mut files = Vec::new();
    walk_scripts(state, &mut |res, real| {
        if res.extension().as_deref() == Some("cs") {
            files.push(real);
        }
    })?;
    Ok(index_of(files.iter().map(std::path::PathBuf::as_path)))
}

/// attach_script's check of a `.cs` (the editor tool calls it with the node's class,
/// asked of the live editor): the script's class must be named as its file and derive
/// from the node's class or one of its bases (the engine's class reference, when a
/// Godot binary is configured; without it the editor decides). Planners run on the
/// blocking pool, where waiting for the class reference is allowed.
pub(crate) fn check_cs_attach(
    state: &Arc<AppState>,
    script: &ResPath,
    node: &str,
    node_class: &str,
) -> Result<(), ToolError> {
    let real = state.project.resolve("script", script)?;
    let text = read_text(state, "script", script, &real)?;
    let index = cs_index(state)?;
    let cs = cs_script(&script.to_string(), &text, Some(&index));
    let chain = tokio::runtime::Handle::try_current().ok().and_then(|h| {
        h.block_on(crate::tools::kit::class_db::class_db(state))
            .ok()
            .filter(|db| db.classes.contains_key(node_class))
            .map(|db| db.chain(node_class))
    });
    match attach_refusal(&script.to_string(), &cs, node, node_class, chain.as_deref()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_resolve_through_project_classes() {
        let mut idx = CsIndex::default();
        idx.add(&read_cs("public partial class Base25 : Node2D {}"));
        idx.add(&read_cs(
            "public partial class Mid<T> : Base25 where T : Node {}",
        ));
        let s = cs_script(
            "res://a/Leaf.cs",
            "public partial class Leaf : Mid<Node> { [Export] public int X; }",
            Some(&idx),
        );
        assert_eq!(s.class_name.as_deref(), Some("Leaf"));
        assert_eq!(s.extends.as_deref(), Some("Mid<Node>"));
        assert_eq!(s.native_base.as_deref(), Some("Node2D"));
        assert!(s.problems.is_empty(), "{:?}", s.problems);
    }

    #[test]
    fn attach_rules() {
        let chain = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = cs_script(
            "res://Player.cs",
            "public partial class Player : Node2D {}",
            None,
        );
        // Sprite2D < Node2D: fits; Node2D itself: fits.
        let sprite = chain(&["Node2D", "CanvasItem", "Node", "Object"]);
        assert!(attach_refusal("res://Player.cs", &s, ".", "Sprite2D", Some(&sprite)).is_none());
        assert!(attach_refusal("res://Player.cs", &s, ".", "Node2D", Some(&[])).is_none());
        // Node3D does not derive from Node2D.
        let e = attach_refusal(
            "res://Player.cs",
            &s,
            ".",
            "Node3D",
            Some(&chain(&["Node", "Object"])),
        )
        .unwrap();
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert!(e.message.contains("derives from Node2D"), "{}", e.message);
        // Without the class reference the bases are unknown: the editor decides.
        assert!(attach_refusal("res://Player.cs", &s, ".", "Node3D", None).is_none());
        // A class that does not match the file.
        let s = cs_script(
            "res://Enemy.cs",
            "public partial class Player : Node2D {}",
            None,
        );
        let e = attach_refusal("res://Enemy.cs", &s, ".", "Node2D", Some(&[])).unwrap();
        assert!(
            e.message.contains("no top-level class is named 'Enemy'"),
            "{}",
            e.message
        );
        // Not partial: attachable by base, but reported.
        let s = cs_script("res://P.cs", "public class P : Node {}", None);
        assert_eq!(s.problems[0].code, "GD0001");
    }
}
