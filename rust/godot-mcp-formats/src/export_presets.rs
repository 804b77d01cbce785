//! `export_presets.cfg`: the editor's export presets, a ConfigFile with a
//! `[preset.N]` section per preset (name, platform, runnable, export_path, the
//! resource filter) and a `[preset.N.options]` section of platform options.

use serde::Serialize;

use crate::error::ParseError;
use crate::text::{HeaderMode, parse_document};

/// One export preset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportPreset {
    /// N of `[preset.N]`.
    pub index: u32,
    pub name: String,
    /// The export platform's name, e.g. `Linux`, `Windows Desktop`, `Web`.
    pub platform: String,
    /// The preset the editor's one-click deploy runs.
    pub runnable: bool,
    /// Where the export is written; relative paths are from the project folder.
    pub export_path: String,
    /// `all_resources`, `resources` (export_files), `scenes`, `exclude` or
    /// `customized`.
    pub export_filter: String,
    /// The files of a `resources`/`scenes`/`exclude` filter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub export_files: Vec<String>,
    /// Non-resource files to include (comma-separated globs).
    pub include_filter: String,
    /// Files to leave out (comma-separated globs).
    pub exclude_filter: String,
    /// `[preset.N.options]`, as written (each value's text).
    pub options: Vec<(String, String)>,
    /// The `[preset.N]` header's line.
    pub line: u32,
}

impl ExportPreset {
    /// An option's value text, e.g. `binary_format/architecture` → `"x86_64"`.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses `export_presets.cfg`, presets in index order. Keys a preset does not
/// have read as empty (false for `runnable`), as the editor defaults them.
pub fn parse_export_presets(src: &str) -> Result<Vec<ExportPreset>, ParseError> {
    let doc = parse_document(src, HeaderMode::Simple)?;
    let mut out: Vec<ExportPreset> = Vec::new();
    for s in &doc.sections {
        let Some(rest) = s.tag.strip_prefix("preset.") else {
            continue;
        };
        let (index, options) = match rest.split_once('.') {
            Some((n, "options")) => (n, true),
            Some(_) => continue,
            None => (rest, false),
        };
        let Ok(index) = index.parse::<u32>() else {
            continue;
        };
        if options {
            if let Some(p) = out.iter_mut().find(|p| p.index == index) {
                p.options = s
                    .properties
                    .iter()
                    .map(|p| {
                        (
                            p.name.clone(),
                            p.value
                                .as_str()
                                .map_or_else(|| p.text.clone(), str::to_string),
                        )
                    })
                    .collect();
            }
            continue;
        }
        let text = |key: &str| {
            s.property(key)
                .and_then(|p| p.value.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        out.push(ExportPreset {
            index,
            name: text("name"),
            platform: text("platform"),
            runnable: s
                .property("runnable")
                .and_then(|p| p.value.as_bool())
                .unwrap_or(false),
            export_path: text("export_path"),
            export_filter: text("export_filter"),
            export_files: s
                .property("export_files")
                .and_then(|p| p.value.as_string_list())
                .unwrap_or_default(),
            include_filter: text("include_filter"),
            exclude_filter: text("exclude_filter"),
            options: Vec::new(),
            line: s.line,
        });
    }
    out.sort_by_key(|p| p.index);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two presets in the editor's format (tests/fixtures/export/README.md).
    const PRESETS: &str = include_str!("../../../tests/fixtures/export/export_presets.cfg");

    #[test]
    fn presets_are_read_with_their_paths_filters_and_options() {
        let p = parse_export_presets(PRESETS).unwrap();
        assert_eq!(p.len(), 2, "{p:#?}");
        assert_eq!(
            (p[0].index, p[0].name.as_str(), p[0].platform.as_str()),
            (0, "Linux", "Linux")
        );
        assert!(p[0].runnable);
        assert_eq!(p[0].export_path, "build/game.x86_64");
        assert_eq!(p[0].export_filter, "all_resources");
        assert_eq!(p[0].option("binary_format/architecture"), Some("x86_64"));
        assert_eq!(
            (p[1].name.as_str(), p[1].platform.as_str(), p[1].runnable),
            ("Web", "Web", false)
        );
        assert_eq!(p[1].export_filter, "resources");
        assert_eq!(p[1].export_files, ["res://main.tscn"]);
        assert_eq!(p[1].exclude_filter, "secret/*");
    }

    #[test]
    fn a_malformed_file_is_an_error() {
        assert!(parse_export_presets("[preset.0]\nname=\"x").is_err());
        assert_eq!(parse_export_presets("").unwrap(), vec![]);
    }
}
