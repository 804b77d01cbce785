//! The .NET project Godot makes for a C# project: `<assembly_name>.csproj` (MSBuild XML
//! with `Sdk="Godot.NET.Sdk/<engine version>"`) and `<assembly_name>.sln` beside
//! project.godot, and the `[dotnet]` section of project.godot
//! (`project/assembly_name`). Godot writes them when the first C# script is created
//! in the .NET editor, or with Project > Tools > C# > Create C# solution.

use schemars::JsonSchema;
use serde::Serialize;

/// What a `.csproj` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DotnetProject {
    /// res:// path of the .csproj.
    pub path: String,
    /// The `Sdk` attribute: `Godot.NET.Sdk/4.4.1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk: Option<String>,
    /// The Godot.NET.Sdk version (the engine version the project was made with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub godot_sdk_version: Option<String>,
    /// `TargetFramework` (`net8.0`), or the `TargetFrameworks` list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_frameworks: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assembly_name: Option<String>,
    /// Set when the XML does not parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A `.sln` and the projects it lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Solution {
    pub path: String,
    /// The project paths of its `Project(...) = "Name", "Path", "{GUID}"` lines.
    pub projects: Vec<String>,
}

/// Read a `.csproj`'s text; `path` is where it is (res://).
pub fn csproj_info(path: &str, text: &str) -> DotnetProject {
    let mut out = DotnetProject {
        path: path.to_string(),
        ..DotnetProject::default()
    };
    let doc = match roxmltree::Document::parse(text) {
        Ok(d) => d,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let root = doc.root_element();
    let mut sdk = root.attribute("Sdk").map(str::to_string);
    if sdk.is_none() {
        // <Sdk Name="Godot.NET.Sdk" Version="4.4.1" /> is the other way to write it.
        sdk = root
            .children()
            .find(|n| n.has_tag_name("Sdk"))
            .and_then(|n| {
                let name = n.attribute("Name")?;
                Some(match n.attribute("Version") {
                    Some(v) => format!("{name}/{v}"),
                    None => name.to_string(),
                })
            });
    }
    out.godot_sdk_version = sdk.as_deref().and_then(|s| {
        s.split(';')
            .find_map(|one| one.trim().strip_prefix("Godot.NET.Sdk/"))
            .map(str::to_string)
    });
    out.sdk = sdk;
    let prop = |tag: &str| {
        root.descendants()
            .filter(|n| n.has_tag_name(tag))
            .find_map(|n| n.text().map(|t| t.trim().to_string()))
            .filter(|t| !t.is_empty())
    };
    out.target_frameworks = match (prop("TargetFramework"), prop("TargetFrameworks")) {
        (Some(one), _) => vec![one],
        (None, Some(many)) => many
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        (None, None) => Vec::new(),
    };
    out.root_namespace = prop("RootNamespace");
    out.assembly_name = prop("AssemblyName");
    out
}

/// Read a `.sln`'s project lines.
pub fn sln_info(path: &str, text: &str) -> Solution {
    let projects = text
        .lines()
        .filter(|l| l.starts_with("Project("))
        .filter_map(|l| l.split('"').nth(5).map(|p| p.replace('\\', "/")))
        .collect();
    Solution {
        path: path.to_string(),
        projects,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn godot_made_project_files() {
        let p = csproj_info(
            "res://Dodge the Creeps with C#.csproj",
            r#"<Project Sdk="Godot.NET.Sdk/4.4.1">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <EnableDynamicLoading>true</EnableDynamicLoading>
    <RootNamespace>DodgeTheCreeps</RootNamespace>
  </PropertyGroup>
</Project>"#,
        );
        assert_eq!(p.sdk.as_deref(), Some("Godot.NET.Sdk/4.4.1"));
        assert_eq!(p.godot_sdk_version.as_deref(), Some("4.4.1"));
        assert_eq!(p.target_frameworks, ["net8.0"]);
        assert_eq!(p.root_namespace.as_deref(), Some("DodgeTheCreeps"));
        assert_eq!(p.error, None);
        let bad = csproj_info("res://x.csproj", "<Project");
        assert!(bad.error.is_some());
        let s = sln_info(
            "res://Pong.sln",
            "Project(\"{FAE04EC0-301F-11D3-BF4B-00C04F79EFBC}\") = \"Pong\", \"Pong.csproj\", \"{A}\"\nEndProject\n",
        );
        assert_eq!(s.projects, ["Pong.csproj"]);
    }
}
