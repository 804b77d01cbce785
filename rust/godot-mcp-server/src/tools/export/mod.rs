//! The rest of the `export` toolset (export_project and export_status are process
//! tools in `runtime.rs`): the presets of `export_presets.cfg`, and what an export
//! would need and write — the engine's export templates, where Godot 4.4 looks for
//! them on this OS, and each preset's output path.

use std::path::{Component, Path, PathBuf};

use godot_mcp_formats::export_presets::{ExportPreset, parse_export_presets};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::project_root::Project;
use crate::project_root::decide_export_target;
use crate::respath::ExportDest;
use crate::rules::Toolset;
use crate::state::AppState;
use crate::tools::kit::godot_process::{engine_version, godot};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Export,
                "list_export_presets",
                "List export presets",
                "The export presets of export_presets.cfg: name, platform, runnable, output \
                 path, resource filters.",
            ),
            list_export_presets,
        ),
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Export,
                "export_info",
                "Export templates and output paths",
                "Export templates installed for the project's Godot version (where Godot looks \
                 on this OS) and each preset's output path, inside the project or not.",
            ),
            export_info,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

/// The presets on disk (none when the file is absent).
fn presets(state: &AppState) -> Result<(bool, Vec<ExportPreset>), ToolError> {
    let path = state.project.root().join("export_presets.cfg");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((false, Vec::new())),
        Err(e) => return Err(ToolError::io("export_presets.cfg", &e)),
    };
    parse_export_presets(&text)
        .map(|p| (true, p))
        .map_err(|e| ToolError::new(ErrorCode::ParseError, format!("export_presets.cfg: {e}")))
}

/// One preset of export_presets.cfg.
#[derive(Debug, Serialize, JsonSchema)]
struct PresetOut {
    name: String,
    platform: String,
    runnable: bool,
    export_path: String,
    export_filter: String,
    export_files: Vec<String>,
    include_filter: String,
    exclude_filter: String,
}

fn preset_out(p: &ExportPreset) -> PresetOut {
    PresetOut {
        name: p.name.clone(),
        platform: p.platform.clone(),
        runnable: p.runnable,
        export_path: p.export_path.clone(),
        export_filter: p.export_filter.clone(),
        export_files: p.export_files.clone(),
        include_filter: p.include_filter.clone(),
        exclude_filter: p.exclude_filter.clone(),
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PresetsOut {
    file_exists: bool,
    presets: Vec<PresetOut>,
}

async fn list_export_presets(Call { state, .. }: Call<NoArgs>) -> Out<PresetsOut> {
    let (exists, presets) = presets(&state)?;
    Ok(PresetsOut {
        file_exists: exists,
        presets: presets.iter().map(preset_out).collect(),
    })
}

/// `4.4.1.stable` from `4.4.1.stable.custom_build`: the numbers and the status,
/// the name of Godot's templates folder (`VERSION_FULL_CONFIG`).
pub(crate) fn templates_version(version_line: &str) -> Option<String> {
    let mut parts = Vec::new();
    for part in version_line.trim().split('.') {
        parts.push(part);
        if !part.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
    }
    let numeric = parts
        .iter()
        .filter(|p| p.chars().all(|c| c.is_ascii_digit()))
        .count();
    (numeric >= 2 && parts.len() == numeric + 1).then(|| parts.join("."))
}

/// The editor's data folder, where Godot 4.4 keeps `export_templates/`: next to the
/// binary in self-contained mode (`_sc_` or `._sc_` beside it), else per OS.
fn editor_data_dir(binary: &Path) -> Option<(PathBuf, &'static str)> {
    if let Some(dir) = binary.parent()
        && (dir.join("_sc_").exists() || dir.join("._sc_").exists())
    {
        return Some((dir.join("editor_data"), "self_contained"));
    }
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(target_os = "macos") {
        env("HOME").map(|h| (h.join("Library/Application Support/Godot"), "macos"))
    } else if cfg!(windows) {
        env("APPDATA").map(|a| (a.join("Godot"), "windows"))
    } else {
        env("XDG_DATA_HOME")
            .map(|d| (d.join("godot"), "xdg_data_home"))
            .or_else(|| env("HOME").map(|h| (h.join(".local/share/godot"), "home")))
    }
}

/// The template files an export for `p` reads (debug and release), by platform.
fn expected_templates(p: &ExportPreset) -> Option<Vec<String>> {
    let arch = p.option("binary_format/architecture").unwrap_or("x86_64");
    let threads = p.option("variant/thread_support") != Some("false");
    let both = |f: &dyn Fn(&str) -> String| Some(vec![f("debug"), f("release")]);
    match p.platform.as_str() {
        "Linux" | "Linux/X11" | "Linux/BSD" => both(&|k| format!("linux_{k}.{arch}")),
        "Windows Desktop" => both(&|k| format!("windows_{k}_{arch}.exe")),
        "macOS" => Some(vec!["macos.zip".into()]),
        "Web" if threads => both(&|k| format!("web_{k}.zip")),
        "Web" => both(&|k| format!("web_nothreads_{k}.zip")),
        "Android" => both(&|k| format!("android_{k}.apk")),
        "iOS" => Some(vec!["ios.zip".into()]),
        _ => None,
    }
}

/// `path` with `.` and `..` folded, without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where a preset's export_path lands (a relative path is from the project folder,
/// as the editor resolves it) and whether that is inside the project, judged the way
/// export_project judges its output_path (symlinks of existing ancestors followed).
/// The third item says why export_project would refuse that path, if it would.
fn output_of(project: &Project, export_path: &str) -> (Option<PathBuf>, bool, Option<String>) {
    if export_path.is_empty() {
        return (None, false, None);
    }
    let rel = export_path.strip_prefix("res://").unwrap_or(export_path);
    let abs = lexical(&project.root().join(rel));
    match decide_export_target(project, "export_path", &abs.display().to_string()) {
        Ok(ExportDest::Inside { real, .. }) => (Some(real), true, None),
        Ok(ExportDest::Outside { real }) => (Some(real), false, None),
        Err(e) => (Some(abs), false, Some(e.message)),
    }
}

/// What exporting one preset needs and where it writes.
#[derive(Debug, Serialize, JsonSchema)]
struct PresetExport {
    name: String,
    platform: String,
    export_path: String,
    output_path: Option<String>,
    inside_project: bool,
    output_refused: Option<String>,
    templates_expected: Option<Vec<String>>,
    templates_missing: Vec<String>,
    custom_templates: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ExportInfoOut {
    godot_version: String,
    templates_version: Option<String>,
    templates_dir: Option<String>,
    templates_dir_source: Option<&'static str>,
    templates_installed: Vec<String>,
    presets_file_exists: bool,
    presets: Vec<PresetExport>,
}

async fn export_info(Call { state, .. }: Call<NoArgs>) -> Out<ExportInfoOut> {
    let (exists, presets) = presets(&state)?;
    let program = godot(&state)?;
    let version_line = engine_version(&state, &program).await?;
    let version = templates_version(&version_line);
    let data = editor_data_dir(&program);
    let templates_dir = match (&data, &version) {
        (Some((d, _)), Some(v)) => Some(d.join("export_templates").join(v)),
        _ => None,
    };
    let mut installed: Vec<String> = templates_dir
        .as_ref()
        .and_then(|d| std::fs::read_dir(d).ok())
        .map(|it| {
            it.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    installed.sort();
    let per_preset = presets
        .iter()
        .map(|p| {
            let (output, inside, refused) = output_of(&state.project, &p.export_path);
            let expected = expected_templates(p);
            let missing: Vec<String> = expected
                .iter()
                .flatten()
                .filter(|t| !installed.contains(t))
                .cloned()
                .collect();
            let custom: Vec<String> = ["custom_template/debug", "custom_template/release"]
                .into_iter()
                .filter_map(|k| p.option(k).filter(|v| !v.is_empty()))
                .map(str::to_string)
                .collect();
            PresetExport {
                name: p.name.clone(),
                platform: p.platform.clone(),
                export_path: p.export_path.clone(),
                output_path: output.map(|o| o.display().to_string()),
                inside_project: inside,
                output_refused: refused,
                templates_expected: expected,
                templates_missing: missing,
                custom_templates: custom,
            }
        })
        .collect();
    Ok(ExportInfoOut {
        godot_version: version_line,
        templates_version: version,
        templates_dir: templates_dir.map(|d| d.display().to_string()),
        templates_dir_source: data.map(|(_, s)| s),
        templates_installed: installed,
        presets_file_exists: exists,
        presets: per_preset,
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn the_templates_folder_is_named_by_numbers_and_status() {
        assert_eq!(
            templates_version("4.4.1.stable.custom_build").as_deref(),
            Some("4.4.1.stable")
        );
        assert_eq!(
            templates_version("4.4.stable.official.4c311cbee").as_deref(),
            Some("4.4.stable")
        );
        assert_eq!(
            templates_version("4.5.beta2.official").as_deref(),
            Some("4.5.beta2")
        );
        assert_eq!(templates_version("garbage"), None);
    }

    #[test]
    fn paths_fold_without_the_disk() {
        assert_eq!(
            lexical(Path::new("/p/game/../web/./i.html")),
            PathBuf::from("/p/web/i.html")
        );
        assert_eq!(
            lexical(Path::new("/p/game/build/x")),
            PathBuf::from("/p/game/build/x")
        );
    }
}
