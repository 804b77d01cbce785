//! The project's .NET side, from its files: the `.csproj` and `.sln` Godot makes beside
//! project.godot (`Godot.NET.Sdk/<version>`), and project.godot's `[dotnet]` section
//! (`project/assembly_name`). `project_info` reports it; `build_csharp` builds the
//! project it names; a `.cs` created in a project without one is told how Godot makes
//! one.

use std::path::Path;

use godot_mcp_csharp::{DotnetProject, Solution, csproj_info, sln_info};
use godot_mcp_formats::ProjectInfo;
use schemars::JsonSchema;
use serde::Serialize;

/// What `project_info` says about C#: absent when the project has no trace of it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct DotnetInfo {
    /// project.godot `[dotnet] project/assembly_name` (Godot names the .csproj and the
    /// assembly after it; it defaults to the project's name).
    pub assembly_name: Option<String>,
    /// The `.csproj` files at the project's root.
    pub projects: Vec<DotnetProject>,
    /// The `.sln` files at the project's root.
    pub solutions: Vec<Solution>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

/// How Godot makes the .NET project, for a project with C# and no `.csproj`.
pub(crate) const MAKE_CSPROJ: &str = "This project has no .csproj: Godot's .NET editor writes \
    <assembly_name>.csproj (Sdk=\"Godot.NET.Sdk/<version>\") and a .sln beside project.godot \
    when its first C# script is created, or with Project > Tools > C# > Create C# solution; \
    C# scripts do not build or run until it exists.";

/// The `.csproj` and `.sln` files directly under `root`, sorted by name.
fn root_files(root: &Path, ext: &str) -> Vec<(String, std::path::PathBuf)> {
    let mut out: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            name.to_ascii_lowercase()
                .ends_with(ext)
                .then(|| (format!("res://{name}"), e.path()))
        })
        .collect();
    out.sort();
    out
}

/// The `.csproj` files at the project's root, read.
pub(crate) fn csprojs(root: &Path) -> Vec<DotnetProject> {
    root_files(root, ".csproj")
        .into_iter()
        .map(|(res, real)| match std::fs::read_to_string(&real) {
            Ok(text) => csproj_info(&res, &text),
            Err(e) => DotnetProject {
                path: res,
                error: Some(e.to_string()),
                ..DotnetProject::default()
            },
        })
        .collect()
}

/// The project's .NET side; `None` when there is none (no .csproj, .sln, `[dotnet]`
/// section or `C#` feature).
pub(crate) fn dotnet_info(root: &Path, project: &ProjectInfo) -> Option<DotnetInfo> {
    let assembly_name = project
        .setting("dotnet", "project/assembly_name")
        .and_then(|p| p.value.as_str().map(str::to_string));
    let projects = csprojs(root);
    let solutions: Vec<Solution> = root_files(root, ".sln")
        .into_iter()
        .map(|(res, real)| sln_info(&res, &std::fs::read_to_string(real).unwrap_or_default()))
        .collect();
    let has_section = project.sections.iter().any(|s| s.tag == "dotnet");
    let feature = project.features.iter().any(|f| f == "C#");
    if projects.is_empty() && solutions.is_empty() && !has_section && !feature {
        return None;
    }
    Some(DotnetInfo {
        hint: projects.is_empty().then_some(MAKE_CSPROJ),
        assembly_name,
        projects,
        solutions,
    })
}

/// The text of a new `.cs` script at `res_path` deriving from `base`: Godot's own C#
/// template (`modules/mono/editor/script_templates/Object/empty.cs`), its class named
/// as the file. `None` when the file's name is no C# identifier (its class could not
/// be named as it).
pub(crate) fn cs_template(res_path: &str, base: &str) -> Option<String> {
    let name = res_path.rsplit('/').next()?.strip_suffix(".cs")?;
    let ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    (ident(name) && ident(base)).then(|| {
        format!("using Godot;\nusing System;\n\npublic partial class {name} : {base}\n{{\n}}\n")
    })
}

/// The hint a `.cs` write carries when the project has no `.csproj`.
pub(crate) fn missing_csproj_hint(root: &Path) -> Option<&'static str> {
    csprojs(root).is_empty().then_some(MAKE_CSPROJ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cs_template_is_named_as_its_file() {
        let t = cs_template("res://actors/Player.cs", "CharacterBody2D").unwrap();
        assert!(
            t.contains("public partial class Player : CharacterBody2D"),
            "{t}"
        );
        let f = godot_mcp_csharp::read_cs(&t);
        assert_eq!(
            godot_mcp_csharp::script_class(&f, "Player").map(|c| c.partial),
            Some(true)
        );
        assert_eq!(cs_template("res://my player.cs", "Node"), None);
        assert_eq!(cs_template("res://2d.cs", "Node"), None);
    }

    #[test]
    fn a_project_without_csproj_is_told_how_godot_makes_one() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(missing_csproj_hint(dir.path()), Some(MAKE_CSPROJ));
        std::fs::write(
            dir.path().join("Game.csproj"),
            "<Project Sdk=\"Godot.NET.Sdk/4.4.1\"/>",
        )
        .unwrap();
        assert_eq!(missing_csproj_hint(dir.path()), None);
        let p = &csprojs(dir.path())[0];
        assert_eq!(
            (p.path.as_str(), p.godot_sdk_version.as_deref()),
            ("res://Game.csproj", Some("4.4.1"))
        );
    }
}
