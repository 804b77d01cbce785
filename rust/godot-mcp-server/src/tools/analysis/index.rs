//! The project index: every call scans the project afresh into an `Index` (files,
//! their references, the uids they declare, parse failures), which the analysis
//! tools then ask.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use godot_mcp_formats::deps::{Graph, resource_literals};
use godot_mcp_formats::{ErrorKind, Scene};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::kit::common::FileKind;
use crate::tools::kit::common::import_uid;
use crate::tools::kit::common::{read_small, walk_files};
use crate::tools::kit::page::blocking;

#[derive(Debug, Clone)]
pub(super) struct FileInfo {
    pub(super) kind: FileKind,
    pub(super) size: u64,
    pub(super) real: PathBuf,
}

/// Where a reference is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum RefKind {
    /// An `[ext_resource]` of a scene or resource.
    ExtResource,
    /// A `"res://…"`/`"uid://…"` string in a script or shader.
    ScriptLiteral,
    /// A value in project.godot.
    ProjectSetting,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(super) struct RefSite {
    pub(super) file: String,
    pub(super) line: u32,
    pub(super) kind: RefKind,
    /// The path as written (`path=`, or the literal); may be a uid:// for literals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) written: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) uid: Option<String>,
    /// The `[ext_resource]` id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<String>,
    /// The file it resolves to, when one exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) target: Option<String>,
    /// For project settings: the setting's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) setting: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum UidSource {
    UidFile,
    ImportFile,
    SceneHeader,
    ResourceHeader,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(super) struct UidDecl {
    pub(super) uid: String,
    pub(super) path: String,
    pub(super) source: UidSource,
    /// The sidecar or file the uid is written in.
    pub(super) declared_in: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(super) struct Issue {
    pub(super) file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) line: Option<u32>,
    pub(super) kind: &'static str,
    pub(super) severity: &'static str,
    pub(super) message: String,
}

#[derive(Default)]
pub(super) struct Index {
    /// Every project file except sidecars, by res:// path.
    pub(super) files: BTreeMap<String, FileInfo>,
    /// .uid/.import files, by res:// path, with the file they describe.
    pub(super) sidecars: BTreeMap<String, String>,
    pub(super) refs: Vec<RefSite>,
    pub(super) uids: Vec<UidDecl>,
    pub(super) uid_paths: BTreeMap<String, BTreeSet<String>>,
    pub(super) scenes: BTreeMap<String, Scene>,
    /// Resource type of each parsed .tres.
    pub(super) resource_types: BTreeMap<String, String>,
    /// Script and shader line counts.
    pub(super) script_lines: BTreeMap<String, usize>,
    /// Scenes and resources that failed to parse (read with the fallback scan).
    pub(super) problems: Vec<Issue>,
    pub(super) roots: Vec<(String, String)>,
    pub(super) graph: Graph,
    /// Whether the project targets Godot 4.4+ (scripts then carry .uid files).
    pub(super) uid_files_expected: bool,
}

impl Index {
    pub(super) fn build(state: &AppState) -> Result<Self, ToolError> {
        let mut ix = Index::default();
        let root = ResPath::root();
        let real = state.project.resolve("path", &root)?;
        let mut visited = 0;
        let mut paths: Vec<(String, PathBuf, u64)> = Vec::new();
        walk_files(state, &real, &root, &mut paths, &mut visited)?;
        for (path, real, size) in paths {
            if let Some(src) = path.strip_suffix(".uid") {
                ix.sidecars.insert(path.clone(), src.to_string());
                if let Ok(text) = read_small(state, &real, size) {
                    let uid = text.trim();
                    if uid.starts_with("uid://") {
                        ix.add_uid(uid, src, UidSource::UidFile, &path);
                    }
                }
            } else if let Some(src) = path.strip_suffix(".import") {
                ix.sidecars.insert(path.clone(), src.to_string());
                if let Ok(text) = read_small(state, &real, size)
                    && let Some(uid) = import_uid(&text)
                {
                    ix.add_uid(&uid, src, UidSource::ImportFile, &path);
                }
            } else {
                let kind = FileKind::of(
                    ResPath::parse(&path)
                        .ok()
                        .and_then(|p| p.extension())
                        .as_deref(),
                );
                ix.files.insert(path, FileInfo { kind, size, real });
            }
        }
        let files: Vec<(String, FileInfo)> = ix
            .files
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (path, info) in &files {
            let ext = path.rsplit('.').next().unwrap_or("");
            match ext {
                "tscn" | "tres" => ix.read_text_resource(state, path, info, ext == "tscn"),
                "gd" | "cs" | "gdshader" | "gdshaderinc" => {
                    if let Ok(text) = read_small(state, &info.real, info.size) {
                        ix.script_lines.insert(path.clone(), text.lines().count());
                        for lit in resource_literals(&text) {
                            ix.refs.push(literal_ref(
                                path,
                                lit.line,
                                &lit.text,
                                RefKind::ScriptLiteral,
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        ix.read_project(state);
        // Resolve every reference now that every uid is known.
        let refs = std::mem::take(&mut ix.refs);
        ix.refs = refs
            .into_iter()
            .map(|mut r| {
                r.target = ix.resolve(&r);
                r
            })
            .collect();
        // Answers list references by file and line, whatever order the walk found them.
        ix.refs
            .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        for r in &ix.refs {
            if let Some(t) = &r.target
                && r.kind != RefKind::ProjectSetting
            {
                ix.graph.add_edge(&r.file, t);
            }
        }
        Ok(ix)
    }

    pub(super) fn add_uid(&mut self, uid: &str, path: &str, source: UidSource, declared_in: &str) {
        self.uid_paths
            .entry(uid.to_string())
            .or_default()
            .insert(path.to_string());
        self.uids.push(UidDecl {
            uid: uid.to_string(),
            path: path.to_string(),
            source,
            declared_in: declared_in.to_string(),
        });
    }

    pub(super) fn read_text_resource(
        &mut self,
        state: &AppState,
        path: &str,
        info: &FileInfo,
        scene: bool,
    ) {
        let text = match read_small(state, &info.real, info.size) {
            Ok(t) => t,
            Err(e) => {
                self.problems.push(Issue {
                    file: path.into(),
                    line: None,
                    kind: "unreadable",
                    severity: "error",
                    message: e.message,
                });
                return;
            }
        };
        let parsed = if scene {
            godot_mcp_formats::parse_scene(&text)
                .map(|s| (s.uid.clone(), s.ext_resources.clone(), Some(s), None))
        } else {
            godot_mcp_formats::parse_resource(&text).map(|r| {
                (
                    r.uid.clone(),
                    r.ext_resources.clone(),
                    None,
                    Some(r.resource_type),
                )
            })
        };
        match parsed {
            Ok((uid, exts, scene_data, res_type)) => {
                if let Some(uid) = uid {
                    let source = if scene {
                        UidSource::SceneHeader
                    } else {
                        UidSource::ResourceHeader
                    };
                    self.add_uid(&uid, path, source, path);
                } else {
                    self.problems.push(Issue {
                        file: path.into(),
                        line: Some(1),
                        kind: "missing_uid",
                        severity: "warning",
                        message: "the header declares no uid=; references to it go by path only"
                            .into(),
                    });
                }
                for e in exts {
                    self.refs.push(RefSite {
                        file: path.into(),
                        line: e.line,
                        kind: RefKind::ExtResource,
                        written: Some(e.path),
                        uid: e.uid,
                        id: Some(e.id),
                        target: None,
                        setting: None,
                    });
                }
                if let Some(s) = scene_data {
                    self.scenes.insert(path.into(), s);
                }
                if let Some(t) = res_type {
                    self.resource_types.insert(path.into(), t);
                }
            }
            Err(err) => {
                // Godot refuses to load the file; say why, and still follow the
                // [ext_resource] lines so the graph does not lose its edges.
                let kind = if err.kind() == ErrorKind::UnknownResourceReference {
                    "undeclared_resource_id"
                } else {
                    "parse_error"
                };
                self.problems.push(Issue {
                    file: path.into(),
                    line: Some(err.line()),
                    kind,
                    severity: "error",
                    message: err.message().to_string(),
                });
                for (line, attrs) in ext_resource_lines(&text) {
                    if let Some(p) = attrs.get("path") {
                        self.refs.push(RefSite {
                            file: path.into(),
                            line,
                            kind: RefKind::ExtResource,
                            written: Some(p.clone()),
                            uid: attrs.get("uid").cloned(),
                            id: attrs.get("id").cloned(),
                            target: None,
                            setting: None,
                        });
                    }
                }
            }
        }
    }

    /// project.godot: the roots (main scene, autoloads, plugins, every res:// value).
    pub(super) fn read_project(&mut self, state: &AppState) {
        const PROJECT: &str = "res://project.godot";
        let Some(info) = self.files.get(PROJECT).cloned() else {
            return;
        };
        let Ok(text) = read_small(state, &info.real, info.size) else {
            return;
        };
        let Ok(project) = godot_mcp_formats::parse_project(&text) else {
            self.problems.push(Issue {
                file: PROJECT.into(),
                line: None,
                kind: "parse_error",
                severity: "error",
                message: "project.godot does not parse; no roots are known".into(),
            });
            return;
        };
        self.uid_files_expected = project.features.iter().any(|f| {
            let mut parts = f.split('.').map(|p| p.parse::<u32>().ok());
            matches!((parts.next(), parts.next()), (Some(Some(major)), Some(Some(minor))) if (major, minor) >= (4, 4))
        });
        for section in &project.sections {
            for prop in &section.properties {
                let key = format!("{}/{}", section.tag, prop.name);
                for lit in resource_literals(&prop.text) {
                    let text = lit.text.trim_start_matches('*');
                    let mut r = literal_ref(
                        PROJECT,
                        prop.line + lit.line - 1,
                        text,
                        RefKind::ProjectSetting,
                    );
                    r.setting = Some(key.clone());
                    self.refs.push(r);
                }
            }
        }
        // Autoload values carry a leading `*` inside the string ("*res://…").
        for section in project.sections.iter().filter(|s| s.tag == "autoload") {
            for prop in &section.properties {
                if let godot_mcp_formats::Literal::String(s) = &prop.value
                    && let Some(p) = s.strip_prefix('*')
                {
                    let mut r = literal_ref(PROJECT, prop.line, p, RefKind::ProjectSetting);
                    r.setting = Some(format!("autoload/{}", prop.name));
                    self.refs.push(r);
                }
            }
        }
        if let Some(m) = &project.main_scene {
            self.roots.push((m.clone(), "main_scene".into()));
        }
        for a in &project.autoloads {
            self.roots
                .push((a.path.clone(), format!("autoload {}", a.name)));
        }
        for p in &project.enabled_plugins {
            // An enabled plugin's folder is loaded by the editor, not by reference.
            if let Some((dir, _)) = p.rsplit_once('/') {
                let prefix = format!("{dir}/");
                for f in self.files.keys().filter(|f| f.starts_with(&prefix)) {
                    self.roots.push((f.clone(), format!("plugin {p}")));
                }
            }
        }
        const BUS_LAYOUT: &str = "res://default_bus_layout.tres";
        if self.files.contains_key(BUS_LAYOUT) {
            self.roots
                .push((BUS_LAYOUT.into(), "default bus layout".into()));
        }
    }

    /// The existing file a reference names: its uid when known, else its path.
    pub(super) fn resolve(&self, r: &RefSite) -> Option<String> {
        let by_uid = |u: &str| {
            self.uid_paths
                .get(u)
                .and_then(|s| s.iter().find(|p| self.files.contains_key(*p)))
                .cloned()
        };
        if let Some(u) = &r.uid
            && let Some(p) = by_uid(u)
        {
            return Some(p);
        }
        let written = r.written.as_deref()?;
        if written.starts_with("uid://") {
            return by_uid(written);
        }
        let p = normalize(&r.file, written)?;
        self.files.contains_key(&p).then_some(p)
    }

    /// The roots, resolved (uid:// settings become paths), that exist.
    pub(super) fn resolved_roots(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut push = |p: String, why: String| {
            if self.files.contains_key(&p) && !out.iter().any(|(q, _)| *q == p) {
                out.push((p, why));
            }
        };
        for (p, why) in &self.roots {
            let p = if p.starts_with("uid://") {
                self.uid_paths.get(p).and_then(|s| s.first().cloned())
            } else {
                normalize("res://project.godot", p)
            };
            if let Some(p) = p {
                push(p, why.clone());
            }
        }
        for r in self
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::ProjectSetting)
        {
            if let Some(t) = &r.target {
                push(
                    t.clone(),
                    format!("project setting {}", r.setting.as_deref().unwrap_or("?")),
                );
            }
        }
        out
    }

    /// A path argument that must name a project file.
    pub(super) fn require(&self, param: &str, path: &ResPath) -> Result<String, ToolError> {
        let p = path.to_string();
        if self.files.contains_key(&p) {
            Ok(p)
        } else {
            Err(
                ToolError::new(ErrorCode::ResourceNotFound, format!("{p} does not exist"))
                    .param(param)
                    .hint("list_files shows the project's files."),
            )
        }
    }
}

pub(super) fn literal_ref(file: &str, line: u32, text: &str, kind: RefKind) -> RefSite {
    let (written, uid) = if text.starts_with("uid://") {
        (None, Some(text.to_string()))
    } else {
        (Some(text.to_string()), None)
    };
    RefSite {
        file: file.into(),
        line,
        kind,
        written,
        uid,
        id: None,
        target: None,
        setting: None,
    }
}

/// A written reference as a normalized res:// path: absolute `res://` paths are
/// normalized; relative ones are taken from the referring file's folder.
pub(super) fn normalize(from: &str, written: &str) -> Option<String> {
    if written.starts_with("res://") {
        return ResPath::parse(written).ok().map(|p| p.to_string());
    }
    if written.contains("://") {
        return None;
    }
    let dir = from.rsplit_once('/').map_or("res://", |(d, _)| d);
    let joined = if dir.ends_with('/') {
        format!("{dir}{written}")
    } else {
        format!("{dir}/{written}")
    };
    ResPath::parse(&joined).ok().map(|p| p.to_string())
}

/// `[ext_resource …]` header lines and their string attributes, for a file the
/// parser refused (so its references are still known).
pub(super) fn ext_resource_lines(text: &str) -> Vec<(u32, BTreeMap<String, String>)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("[ext_resource") else {
            continue;
        };
        let mut attrs = BTreeMap::new();
        let mut s = rest;
        while let Some(eq) = s.find("=\"") {
            let key = s[..eq].rsplit(' ').next().unwrap_or("").trim().to_string();
            let after = &s[eq + 2..];
            let Some(end) = after.find('"') else { break };
            attrs.insert(key, after[..end].to_string());
            s = &after[end + 1..];
        }
        out.push((i as u32 + 1, attrs));
    }
    out
}

pub(super) async fn indexed<T, F>(state: Arc<AppState>, f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&AppState, Index) -> Result<T, ToolError> + Send + 'static,
{
    blocking(move || {
        let ix = Index::build(&state)?;
        f(&state, ix)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_absolute_references_normalize() {
        assert_eq!(
            normalize("res://scenes/main.tscn", "player.tscn").as_deref(),
            Some("res://scenes/player.tscn")
        );
        assert_eq!(
            normalize("res://scenes/main.tscn", "../icon.svg").as_deref(),
            Some("res://icon.svg")
        );
        assert_eq!(
            normalize("res://a.tscn", "res://x/./y.tres").as_deref(),
            Some("res://x/y.tres")
        );
        assert_eq!(normalize("res://a.tscn", "../../etc/passwd"), None);
        assert_eq!(normalize("res://a.tscn", "user://save.tres"), None);
    }

    #[test]
    fn ext_resource_lines_survive_a_refused_file() {
        let text = "[gd_scene format=3]\n\n[ext_resource type=\"Script\" uid=\"uid://abc\" path=\"res://a.gd\" id=\"1_x\"]\n";
        let got = ext_resource_lines(text);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 3);
        assert_eq!(got[0].1["path"], "res://a.gd");
        assert_eq!(got[0].1["uid"], "uid://abc");
        assert_eq!(got[0].1["id"], "1_x");
    }

    #[test]
    fn import_uid_reads_the_remap_line() {
        let text = "[remap]\n\nimporter=\"texture\"\nuid=\"uid://bvc2gk7x0d3ns\"\npath=\"res://.godot/x\"\n";
        assert_eq!(import_uid(text).as_deref(), Some("uid://bvc2gk7x0d3ns"));
    }
}
