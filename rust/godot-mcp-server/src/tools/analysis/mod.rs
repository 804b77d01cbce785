//! Project analysis from the files on disk (the file plane; no editor, no Godot
//! binary): the reference graph and the questions asked of it, scene integrity,
//! signal connections, statistics, uid lookup and text search.
//!
//! Every call scans the project afresh into an [`Index`] (files, their references,
//! the uids they declare, parse failures), so an answer is never stale; the graph
//! logic itself is the pure `godot_mcp_formats::deps`.
//!
//! How a reference resolves follows Godot 4.4: an `[ext_resource]`'s `uid` wins
//! when it names a known file, and its `path` is the fallback. Uids are declared by
//! `.tscn`/`.tres` headers, by `.uid` files next to scripts and shaders, and by the
//! `uid=` of an imported asset's `.import` file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use godot_mcp_formats::deps::{Graph, resource_literals};
use godot_mcp_formats::{ErrorKind, Scene};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::state::AppState;
use crate::tools::common::FileKind;
use crate::tools::common::{Walk, page_limit, paged_args, project_too_large, walk_project};
use crate::tools::{Also, CallFlags, ToolDef, ToolMeta};

fn meta(name: &'static str, title: &'static str, description: &'static str) -> ToolMeta {
    ToolMeta::read_only(Toolset::Analysis, name, title, description)
}

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "dependency_graph",
                "Dependency graph",
                "What a file depends on, or what depends on it (direction), transitively, \
                 with depth. Paged.",
            ),
            dependency_graph,
        ),
        ToolDef::new(
            meta(
                "find_references",
                "Find references",
                "Every reference to a res:// path or uid:// in scenes, resources, scripts and \
                 project.godot, with file and line. Paged.",
            ),
            find_references,
        ),
        ToolDef::new(
            meta(
                "find_circular_dependencies",
                "Find circular dependencies",
                "Reference cycles between scenes, resources and scripts. Paged.",
            ),
            find_circular_dependencies,
        ),
        ToolDef::new(
            meta(
                "find_unused_resources",
                "Find unused resources",
                "Files no root (main scene, autoloads, project settings, plugins) reaches, \
                 and orphaned .uid/.import files. Paged.",
            ),
            find_unused_resources,
        ),
        ToolDef::new(
            meta(
                "check_scene_integrity",
                "Check scene integrity",
                "Broken references, unknown, missing or duplicate uids, undeclared resource ids \
                 and parse errors in scenes and resources. Paged.",
            ),
            check_scene_integrity,
        ),
        ToolDef::new(
            meta(
                "signal_flow",
                "Signal flow",
                "Signal connections in saved scenes: from node and signal to node and method, \
                 with node types and instanced scenes. Paged.",
            ),
            signal_flow,
        ),
        ToolDef::new(
            meta(
                "project_stats",
                "Project stats",
                "Counts and sizes by file kind and top folder; scenes, nodes, node types, \
                 scripts, resources.",
            ),
            project_stats,
        ),
        ToolDef::new(
            meta(
                "resolve_uid",
                "Resolve a uid",
                "uid:// to res:// path or back, from .uid, .import and scene/resource headers.",
            ),
            resolve_uid,
        ),
        ToolDef::new(
            meta(
                "search_files",
                "Search project files",
                "Search project text files for a string: matches with line and column, \
                 filtered by glob. Paged.",
            ),
            search_files,
        ),
    ]
}

// ---------------------------------------------------------------------------
// Paging

/// Page size when the caller gives none.
const DEFAULT_LIMIT: u32 = 100;

/// One page of a list: the paging fields and the page's items.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Page<T> {
    pub total: usize,
    pub offset: usize,
    pub returned: usize,
    pub next_offset: Option<usize>,
    pub items: Vec<T>,
}

/// A page with the fields a tool adds beside it.
pub(crate) type PageWith<T, X> = Also<Page<T>, X>;

/// `items[offset..offset+limit]` as a typed [`Page`].
pub(crate) fn page<T>(
    state: &AppState,
    offset: Option<u32>,
    limit: Option<u32>,
    items: Vec<T>,
) -> Result<Page<T>, ToolError> {
    let limit = page_limit(state, limit, DEFAULT_LIMIT)?;
    let offset = offset.unwrap_or(0) as usize;
    let total = items.len();
    let page: Vec<T> = items.into_iter().skip(offset).take(limit).collect();
    let next = offset + page.len();
    Ok(Page {
        total,
        offset,
        returned: page.len(),
        next_offset: (next < total).then_some(next),
        items: page,
    })
}

/// `items[offset..offset+limit]` with the paging fields of the answer.
pub(crate) fn paged<T: Serialize>(
    state: &AppState,
    offset: Option<u32>,
    limit: Option<u32>,
    items: &[T],
) -> Result<Value, ToolError> {
    let limit = page_limit(state, limit, DEFAULT_LIMIT)?;
    let offset = offset.unwrap_or(0) as usize;
    let page: Vec<&T> = items.iter().skip(offset).take(limit).collect();
    let next = offset + page.len();
    Ok(json!({
        "total": items.len(),
        "offset": offset,
        "returned": page.len(),
        "next_offset": (next < items.len()).then_some(next),
        "items": page,
    }))
}

/// A page with `more` beside it.
fn with<T, X>(page: Page<T>, more: X) -> PageWith<T, X> {
    Also { base: page, more }
}

/// Run `f` on the blocking pool (disk walks and parses).
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::internal(format!("analysis task failed: {e}")))?
}

// ---------------------------------------------------------------------------
// The project index

#[derive(Debug, Clone)]
struct FileInfo {
    kind: FileKind,
    size: u64,
    real: PathBuf,
}

/// Where a reference is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum RefKind {
    /// An `[ext_resource]` of a scene or resource.
    ExtResource,
    /// A `"res://…"`/`"uid://…"` string in a script or shader.
    ScriptLiteral,
    /// A value in project.godot.
    ProjectSetting,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
struct RefSite {
    file: String,
    line: u32,
    kind: RefKind,
    /// The path as written (`path=`, or the literal); may be a uid:// for literals.
    #[serde(skip_serializing_if = "Option::is_none")]
    written: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<String>,
    /// The `[ext_resource]` id.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    /// The file it resolves to, when one exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<String>,
    /// For project settings: the setting's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    setting: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum UidSource {
    UidFile,
    ImportFile,
    SceneHeader,
    ResourceHeader,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
struct UidDecl {
    uid: String,
    path: String,
    source: UidSource,
    /// The sidecar or file the uid is written in.
    declared_in: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
struct Issue {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    kind: &'static str,
    severity: &'static str,
    message: String,
}

#[derive(Default)]
struct Index {
    /// Every project file except sidecars, by res:// path.
    files: BTreeMap<String, FileInfo>,
    /// .uid/.import files, by res:// path, with the file they describe.
    sidecars: BTreeMap<String, String>,
    refs: Vec<RefSite>,
    uids: Vec<UidDecl>,
    uid_paths: BTreeMap<String, BTreeSet<String>>,
    scenes: BTreeMap<String, Scene>,
    /// Resource type of each parsed .tres.
    resource_types: BTreeMap<String, String>,
    /// Script and shader line counts.
    script_lines: BTreeMap<String, usize>,
    /// Scenes and resources that failed to parse (read with the fallback scan).
    problems: Vec<Issue>,
    roots: Vec<(String, String)>,
    graph: Graph,
    /// Whether the project targets Godot 4.4+ (scripts then carry .uid files).
    uid_files_expected: bool,
}

impl Index {
    fn build(state: &AppState) -> Result<Self, ToolError> {
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

    fn add_uid(&mut self, uid: &str, path: &str, source: UidSource, declared_in: &str) {
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

    fn read_text_resource(&mut self, state: &AppState, path: &str, info: &FileInfo, scene: bool) {
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
    fn read_project(&mut self, state: &AppState) {
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
    fn resolve(&self, r: &RefSite) -> Option<String> {
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
    fn resolved_roots(&self) -> Vec<(String, String)> {
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
    fn require(&self, param: &str, path: &ResPath) -> Result<String, ToolError> {
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

fn literal_ref(file: &str, line: u32, text: &str, kind: RefKind) -> RefSite {
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
fn normalize(from: &str, written: &str) -> Option<String> {
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

/// The `uid="uid://…"` of an `.import` file's `[remap]` section.
pub(crate) fn import_uid(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("uid="))
        .map(|v| v.trim().trim_matches('"').to_string())
        .find(|v| v.starts_with("uid://"))
}

/// `[ext_resource …]` header lines and their string attributes, for a file the
/// parser refused (so its references are still known).
fn ext_resource_lines(text: &str) -> Vec<(u32, BTreeMap<String, String>)> {
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

pub(crate) fn read_small(state: &AppState, real: &Path, size: u64) -> Result<String, ToolError> {
    if size > state.limits.max_read_bytes {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "larger than {} bytes; not read",
                state.limits.max_read_bytes
            ),
        ));
    }
    let bytes = std::fs::read(real).map_err(|e| ToolError::io(&real.display().to_string(), &e))?;
    String::from_utf8(bytes).map_err(|_| ToolError::new(ErrorCode::ParseError, "not UTF-8 text"))
}

/// Every file under `real` (res path, real path, size), as [`walk_project`] finds them.
pub(crate) fn walk_files(
    state: &AppState,
    real: &Path,
    res: &ResPath,
    out: &mut Vec<(String, PathBuf, u64)>,
    visited: &mut usize,
) -> Result<(), ToolError> {
    let how = Walk {
        recursive: true,
        skip: |_| false,
        too_many: project_too_large,
    };
    walk_project(state, real, res, &how, visited, &mut |child, real, size| {
        out.push((child.to_string(), real, size))
    })
}

async fn indexed<T, F>(state: Arc<AppState>, f: F) -> Result<T, ToolError>
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

// ---------------------------------------------------------------------------
// dependency_graph

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Direction {
    #[default]
    Dependencies,
    Dependents,
    Both,
}

paged_args! {
    offset;
    pub struct DependencyGraphArgs {
        /// The scene, resource or script.
        path: ResPath,
        /// dependencies (default), dependents or both.
        #[serde(default)]
        direction: Option<Direction>,
        /// Most hops (default: all).
        #[serde(default)]
        #[schemars(range(min = 1))]
        max_depth: Option<u32>,
    }
}

/// One file reached from the asked one, and through which direct reference.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GraphItem {
    path: String,
    direction: &'static str,
    depth: u32,
    via: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct GraphExtra {
    path: String,
    broken_references: Vec<RefSite>,
}

async fn dependency_graph(
    state: Arc<AppState>,
    args: DependencyGraphArgs,
    _f: CallFlags,
) -> Result<PageWith<GraphItem, GraphExtra>, ToolError> {
    indexed(state, move |state, ix| {
        let path = ix.require("path", &args.path)?;
        let depth = args.max_depth.unwrap_or(u32::MAX).max(1);
        let dir = args.direction.unwrap_or_default();
        let mut items: Vec<GraphItem> = Vec::new();
        let item = |direction: &'static str| {
            move |r: godot_mcp_formats::deps::Reached| GraphItem {
                path: r.path,
                direction,
                depth: r.depth,
                via: r.via,
            }
        };
        if dir != Direction::Dependents {
            items.extend(
                ix.graph
                    .dependencies(&path, depth)
                    .into_iter()
                    .map(item("dependency")),
            );
        }
        if dir != Direction::Dependencies {
            items.extend(
                ix.graph
                    .dependents(&path, depth)
                    .into_iter()
                    .map(item("dependent")),
            );
        }
        let broken: Vec<RefSite> = ix
            .refs
            .iter()
            .filter(|r| r.file == path && r.target.is_none())
            .cloned()
            .collect();
        Ok(with(
            page(state, args.offset, args.limit, items)?,
            GraphExtra {
                path,
                broken_references: broken,
            },
        ))
    })
    .await
}

// ---------------------------------------------------------------------------
// find_references

paged_args! {
    offset;
    pub struct FindReferencesArgs {
        /// The file referred to (or give uid).
        #[serde(default)]
        path: Option<ResPath>,
        /// Its uid:// (or give path).
        #[serde(default)]
        uid: Option<String>,
    }
}

fn check_uid(param: &str, uid: &str) -> Result<(), ToolError> {
    let body = uid.strip_prefix("uid://").unwrap_or("");
    if body.is_empty() || body.len() > 64 || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ToolError::invalid_params(
            param,
            format!("{uid:?} is not a uid (uid:// followed by letters and digits)"),
        ));
    }
    Ok(())
}

fn one_of(path: &Option<ResPath>, uid: &Option<String>) -> Result<(), ToolError> {
    match (path, uid) {
        (Some(_), Some(_)) | (None, None) => Err(ToolError::invalid_params(
            "path",
            "give exactly one of path and uid",
        )),
        (None, Some(u)) => check_uid("uid", u),
        _ => Ok(()),
    }
}

/// The file asked about (null when a uid names none) and its uids.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct RefsExtra {
    path: Option<String>,
    uids: BTreeSet<String>,
}

async fn find_references(
    state: Arc<AppState>,
    args: FindReferencesArgs,
    _f: CallFlags,
) -> Result<PageWith<RefSite, RefsExtra>, ToolError> {
    one_of(&args.path, &args.uid)?;
    indexed(state, move |state, ix| {
        let (path, uids): (Option<String>, BTreeSet<String>) = match (&args.path, &args.uid) {
            (Some(p), _) => {
                let p = p.to_string();
                let uids = ix
                    .uids
                    .iter()
                    .filter(|d| d.path == p)
                    .map(|d| d.uid.clone())
                    .collect();
                (Some(p), uids)
            }
            (None, Some(u)) => (
                ix.uid_paths.get(u).and_then(|s| s.first().cloned()),
                BTreeSet::from([u.clone()]),
            ),
            (None, None) => unreachable!("checked by one_of"),
        };
        let refs: Vec<RefSite> = ix
            .refs
            .iter()
            .filter(|r| {
                (path.is_some() && r.target == path)
                    || r.uid.as_ref().is_some_and(|u| uids.contains(u))
                    || (r.target.is_none()
                        && path.is_some()
                        && r.written.as_deref().and_then(|w| normalize(&r.file, w)) == path)
            })
            .cloned()
            .collect();
        Ok(with(
            page(state, args.offset, args.limit, refs)?,
            RefsExtra { path, uids },
        ))
    })
    .await
}

// ---------------------------------------------------------------------------
// find_circular_dependencies

paged_args! {
    offset;
    pub struct CyclesArgs {}
}

/// One dependency cycle, in loop order.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Cycle {
    length: usize,
    files: Vec<String>,
}

async fn find_circular_dependencies(
    state: Arc<AppState>,
    args: CyclesArgs,
    _f: CallFlags,
) -> Result<Page<Cycle>, ToolError> {
    indexed(state, move |state, ix| {
        let cycles: Vec<Cycle> = ix
            .graph
            .cycles()
            .into_iter()
            .map(|c| Cycle {
                length: c.len(),
                files: c,
            })
            .collect();
        page(state, args.offset, args.limit, cycles)
    })
    .await
}

// ---------------------------------------------------------------------------
// find_unused_resources

paged_args! {
    offset;
    pub struct UnusedArgs {
        /// Only this kind.
        #[serde(default)]
        kind: Option<FileKind>,
    }
}

/// Roots listed in an answer at most (`roots_total` counts them all).
const MAX_ROOTS_SHOWN: usize = 200;

/// A file no root reaches.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UnusedFile {
    path: String,
    kind: FileKind,
    size: u64,
    referenced_by_unused: Vec<String>,
}

/// A .import/.uid sidecar whose source file is gone.
#[derive(Debug, Serialize, JsonSchema)]
struct OrphanSidecar {
    path: String,
    missing_source: String,
}

/// A file everything reachable starts from, and why it is one.
#[derive(Debug, Serialize, JsonSchema)]
struct Root {
    path: String,
    reason: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UnusedExtra {
    roots: Vec<Root>,
    roots_total: usize,
    orphaned_sidecars: Vec<OrphanSidecar>,
    method: &'static str,
}

async fn find_unused_resources(
    state: Arc<AppState>,
    args: UnusedArgs,
    _f: CallFlags,
) -> Result<PageWith<UnusedFile, UnusedExtra>, ToolError> {
    indexed(state, move |state, ix| {
        let roots = ix.resolved_roots();
        let reached = ix.graph.reachable(roots.iter().map(|(p, _)| p.as_str()));
        let mut users: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for r in &ix.refs {
            if let Some(t) = &r.target {
                users.entry(t.as_str()).or_default().insert(r.file.as_str());
            }
        }
        let unused: Vec<UnusedFile> = ix
            .files
            .iter()
            .filter(|(p, f)| {
                f.kind != FileKind::Other
                    && args.kind.is_none_or(|k| k == f.kind)
                    && !reached.contains(*p)
            })
            .map(|(p, f)| {
                let referenced_by: Vec<String> = users
                    .get(p.as_str())
                    .map(|u| u.iter().map(|s| s.to_string()).collect())
                    .unwrap_or_default();
                UnusedFile {
                    path: p.clone(),
                    kind: f.kind,
                    size: f.size,
                    referenced_by_unused: referenced_by,
                }
            })
            .collect();
        let orphans: Vec<OrphanSidecar> = ix
            .sidecars
            .iter()
            .filter(|(_, src)| !ix.files.contains_key(*src))
            .take(1000)
            .map(|(side, src)| OrphanSidecar {
                path: side.clone(),
                missing_source: src.clone(),
            })
            .collect();
        Ok(with(
            page(state, args.offset, args.limit, unused)?,
            UnusedExtra {
                // An enabled plugin makes every file of its folder a root: bounded.
                roots: roots
                    .iter()
                    .take(MAX_ROOTS_SHOWN)
                    .map(|(p, why)| Root {
                        path: p.clone(),
                        reason: why.clone(),
                    })
                    .collect(),
                roots_total: roots.len(),
                orphaned_sidecars: orphans,
                method: "Reached from the roots through [ext_resource] lines, res:// and uid:// \
                         strings in scripts and shaders, and project.godot values. Paths built \
                         at run time are not seen: check before deleting.",
            },
        ))
    })
    .await
}

// ---------------------------------------------------------------------------
// check_scene_integrity

paged_args! {
    offset;
    pub struct IntegrityArgs {
        /// Only this file (default: the whole project).
        #[serde(default)]
        path: Option<ResPath>,
    }
}

fn integrity_issues(ix: &Index) -> Vec<Issue> {
    let mut issues: Vec<Issue> = ix.problems.clone();
    for r in &ix.refs {
        let what = r.written.as_deref().or(r.uid.as_deref()).unwrap_or("?");
        // A script string may be a pattern completed at run time, a plugin may be
        // installed later, and Godot opens a project whose icon or other setting
        // names no file (it says so when the value is used): those are warnings.
        // A scene's or resource's reference is an error (Godot refuses to load
        // it), and so are the main scene's and an autoload's (the game cannot start).
        let severity = match r.kind {
            RefKind::ScriptLiteral => "warning",
            RefKind::ProjectSetting
                if !r.setting.as_deref().is_some_and(|k| {
                    k == "application/run/main_scene" || k.starts_with("autoload/")
                }) =>
            {
                "warning"
            }
            _ => "error",
        };
        match &r.target {
            None => issues.push(Issue {
                file: r.file.clone(),
                line: Some(r.line),
                kind: "broken_reference",
                severity,
                message: match &r.uid {
                    Some(u) if r.written.is_some() => {
                        format!("{what} does not exist and {u} names no file")
                    }
                    _ => format!("{what} names no file"),
                },
            }),
            Some(target) => {
                if let Some(u) = &r.uid
                    && !ix.uid_paths.contains_key(u)
                {
                    issues.push(Issue {
                        file: r.file.clone(),
                        line: Some(r.line),
                        kind: "unknown_uid",
                        severity: "warning",
                        message: format!(
                            "{u} is declared by no file; Godot falls back to {target}"
                        ),
                    });
                } else if let Some(w) = &r.written
                    && normalize(&r.file, w).as_deref() != Some(target.as_str())
                {
                    issues.push(Issue {
                        file: r.file.clone(),
                        line: Some(r.line),
                        kind: "stale_path",
                        severity: "warning",
                        message: format!(
                            "path {w} is stale: its uid names {target}, which Godot loads"
                        ),
                    });
                }
            }
        }
    }
    for (uid, paths) in &ix.uid_paths {
        if paths.len() > 1 {
            let all: Vec<&str> = paths.iter().map(String::as_str).collect();
            for p in paths {
                issues.push(Issue {
                    file: p.clone(),
                    line: None,
                    kind: "duplicate_uid",
                    severity: "error",
                    message: format!("{uid} is declared by {}", all.join(", ")),
                });
            }
        }
    }
    if ix.uid_files_expected {
        let has_uid: BTreeSet<&str> = ix.uids.iter().map(|d| d.path.as_str()).collect();
        for (p, f) in &ix.files {
            if matches!(f.kind, FileKind::Script | FileKind::Shader)
                && !has_uid.contains(p.as_str())
            {
                issues.push(Issue {
                    file: p.clone(),
                    line: None,
                    kind: "missing_uid",
                    severity: "warning",
                    message: format!(
                        "{p}.uid is missing (Godot 4.4+ writes one per script and shader)"
                    ),
                });
            }
        }
    }
    issues.sort_by(|a, b| (&a.file, a.line, a.kind).cmp(&(&b.file, b.line, b.kind)));
    issues
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct IntegrityExtra {
    ok: bool,
    errors: usize,
    warnings: usize,
    checked_files: usize,
}

async fn check_scene_integrity(
    state: Arc<AppState>,
    args: IntegrityArgs,
    _f: CallFlags,
) -> Result<PageWith<Issue, IntegrityExtra>, ToolError> {
    indexed(state, move |state, ix| {
        let only = match &args.path {
            Some(p) => Some(ix.require("path", p)?),
            None => None,
        };
        let issues: Vec<Issue> = integrity_issues(&ix)
            .into_iter()
            .filter(|i| only.as_ref().is_none_or(|p| *p == i.file))
            .collect();
        let errors = issues.iter().filter(|i| i.severity == "error").count();
        let checked = match &only {
            Some(_) => 1,
            None => ix
                .files
                .values()
                .filter(|f| {
                    matches!(
                        f.kind,
                        FileKind::Scene | FileKind::Resource | FileKind::Script | FileKind::Shader
                    )
                })
                .count(),
        };
        let warnings = issues.len() - errors;
        Ok(with(
            page(state, args.offset, args.limit, issues)?,
            IntegrityExtra {
                ok: errors == 0,
                errors,
                warnings,
                checked_files: checked,
            },
        ))
    })
    .await
}

// ---------------------------------------------------------------------------
// signal_flow

paged_args! {
    offset;
    pub struct SignalFlowArgs {
        /// Only this .tscn (default: every scene).
        #[serde(default)]
        path: Option<ResPath>,
        /// Only this signal name.
        #[serde(default)]
        signal: Option<String>,
    }
}

/// A connection's end: the node's type, instanced scene and script, or `missing`.
#[derive(Debug, Serialize, JsonSchema)]
struct NodeDesc {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    missing: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    r#type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    script: Option<String>,
}

fn node_desc(scene: &Scene, path: &str) -> NodeDesc {
    let Some(n) = scene.node(path) else {
        return NodeDesc {
            path: path.to_string(),
            missing: Some(true),
            r#type: None,
            instance: None,
            script: None,
        };
    };
    NodeDesc {
        path: path.to_string(),
        missing: None,
        r#type: n.node_type.clone(),
        instance: n.instance.as_ref().map(|i| i.path.clone()),
        script: n.script.as_ref().and_then(|s| s.path()).map(str::to_string),
    }
}

/// One `[connection]` with both ends described.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Flow {
    scene: String,
    line: u32,
    signal: String,
    from: NodeDesc,
    to: NodeDesc,
    method: String,
    flags: Option<i64>,
}

async fn signal_flow(
    state: Arc<AppState>,
    args: SignalFlowArgs,
    _f: CallFlags,
) -> Result<Page<Flow>, ToolError> {
    indexed(state, move |state, ix| {
        let only = match &args.path {
            Some(p) => {
                let p = ix.require("path", p)?;
                if !ix.scenes.contains_key(&p) {
                    return Err(ToolError::invalid_params(
                        "path",
                        format!("{p} is not a .tscn that parses (check_scene_integrity says why)"),
                    ));
                }
                Some(p)
            }
            None => None,
        };
        let mut items: Vec<Flow> = Vec::new();
        for (path, scene) in &ix.scenes {
            if only.as_ref().is_some_and(|o| o != path) {
                continue;
            }
            for c in &scene.connections {
                if args.signal.as_ref().is_some_and(|s| *s != c.signal) {
                    continue;
                }
                items.push(Flow {
                    scene: path.clone(),
                    line: c.line,
                    signal: c.signal.clone(),
                    from: node_desc(scene, &c.from),
                    to: node_desc(scene, &c.to),
                    method: c.method.clone(),
                    flags: c.flags,
                });
            }
        }
        page(state, args.offset, args.limit, items)
    })
    .await
}

// ---------------------------------------------------------------------------
// project_stats

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsArgs {}

#[derive(Debug, Serialize, JsonSchema)]
struct NameCount {
    name: String,
    count: u64,
}

/// The `n` largest counts, largest first, then by name.
fn top(counts: BTreeMap<String, u64>, n: usize) -> Vec<NameCount> {
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter()
        .take(n)
        .map(|(name, count)| NameCount { name, count })
        .collect()
}

#[derive(Debug, Serialize, JsonSchema)]
struct CountBytes {
    count: u64,
    bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct LargestScene {
    path: String,
    nodes: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct SceneStats {
    count: usize,
    nodes: u64,
    connections: u64,
    largest: Vec<LargestScene>,
    node_types: Vec<NameCount>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ScriptStats {
    count: usize,
    lines: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct ResourceStats {
    count: usize,
    types: Vec<NameCount>,
}

/// The project in numbers: files by kind and top folder, scenes, scripts, resources.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct StatsOut {
    files: usize,
    bytes: u64,
    by_kind: BTreeMap<String, CountBytes>,
    folders: BTreeMap<String, CountBytes>,
    scenes: SceneStats,
    scripts: ScriptStats,
    resources: ResourceStats,
    uids: usize,
    references: usize,
    unparsed: usize,
}

async fn project_stats(
    state: Arc<AppState>,
    _args: StatsArgs,
    _f: CallFlags,
) -> Result<StatsOut, ToolError> {
    indexed(state, move |_state, ix| {
        let mut by_kind: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        let mut bytes = 0u64;
        // The project's structure: its top-level folders ("." for files at the root).
        let mut folders: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (p, f) in &ix.files {
            let rel = p.strip_prefix("res://").unwrap_or(p);
            let top = rel.split_once('/').map_or(".", |(d, _)| d);
            let e = folders.entry(top.to_string()).or_default();
            e.0 += 1;
            e.1 += f.size;
        }
        for f in ix.files.values() {
            let k = serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let e = by_kind.entry(k).or_default();
            e.0 += 1;
            e.1 += f.size;
            bytes += f.size;
        }
        let mut node_types: BTreeMap<String, u64> = BTreeMap::new();
        let mut nodes = 0u64;
        let mut connections = 0u64;
        let mut largest: Vec<(usize, &String)> = Vec::new();
        for (p, s) in &ix.scenes {
            nodes += s.nodes.len() as u64;
            connections += s.connections.len() as u64;
            largest.push((s.nodes.len(), p));
            for n in &s.nodes {
                let t = match (&n.node_type, &n.instance) {
                    (Some(t), _) => t.clone(),
                    (None, Some(_)) => "(instance)".into(),
                    (None, None) => "(override)".into(),
                };
                *node_types.entry(t).or_default() += 1;
            }
        }
        largest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        let mut res_types: BTreeMap<String, u64> = BTreeMap::new();
        for t in ix.resource_types.values() {
            *res_types.entry(t.clone()).or_default() += 1;
        }
        let count_bytes = |(k, (count, bytes)): (&String, &(u64, u64))| {
            (
                k.clone(),
                CountBytes {
                    count: *count,
                    bytes: *bytes,
                },
            )
        };
        Ok(StatsOut {
            files: ix.files.len(),
            bytes,
            by_kind: by_kind.iter().map(count_bytes).collect(),
            folders: folders.iter().take(100).map(count_bytes).collect(),
            scenes: SceneStats {
                count: ix.scenes.len(),
                nodes,
                connections,
                largest: largest
                    .iter()
                    .take(10)
                    .map(|(n, p)| LargestScene {
                        path: (*p).clone(),
                        nodes: *n,
                    })
                    .collect(),
                node_types: top(node_types, 20),
            },
            scripts: ScriptStats {
                count: ix.script_lines.len(),
                lines: ix.script_lines.values().sum::<usize>(),
            },
            resources: ResourceStats {
                count: ix.resource_types.len(),
                types: top(res_types, 20),
            },
            uids: ix.uid_paths.len(),
            references: ix.refs.len(),
            unparsed: ix.problems.iter().filter(|p| p.severity == "error").count(),
        })
    })
    .await
}

// ---------------------------------------------------------------------------
// resolve_uid

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveUidArgs {
    /// A uid:// to resolve (or give path).
    #[serde(default)]
    uid: Option<String>,
    /// A file whose uid to find (or give uid).
    #[serde(default)]
    path: Option<ResPath>,
}

/// What a uid names (or a file's uid), from every place that declares it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UidOut {
    uid: String,
    path: String,
    exists: bool,
    source: UidSource,
    declared_in: String,
    conflict: bool,
    declarations: Vec<UidDecl>,
}

async fn resolve_uid(
    state: Arc<AppState>,
    args: ResolveUidArgs,
    _f: CallFlags,
) -> Result<UidOut, ToolError> {
    one_of(&args.path, &args.uid)?;
    indexed(state, move |_state, ix| {
        let decls: Vec<&UidDecl> = match (&args.uid, &args.path) {
            (Some(u), _) => ix.uids.iter().filter(|d| d.uid == *u).collect(),
            (None, Some(p)) => {
                let p = p.to_string();
                ix.uids.iter().filter(|d| d.path == p).collect()
            }
            (None, None) => unreachable!("checked by one_of"),
        };
        let Some(first) = decls.first() else {
            return Err(match (&args.uid, &args.path) {
                (Some(u), _) => {
                    ToolError::new(ErrorCode::ResourceNotFound, format!("no file declares {u}"))
                        .param("uid")
                        .hint("check_scene_integrity lists references to unknown uids.")
                }
                (None, Some(p)) if !ix.files.contains_key(&p.to_string()) => {
                    ToolError::new(ErrorCode::ResourceNotFound, format!("{p} does not exist"))
                        .param("path")
                }
                (None, Some(p)) => ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{p} has no uid (no .uid or .import file, no uid= header)"),
                )
                .param("path")
                .hint("Godot assigns one when the editor scans or saves the file."),
                (None, None) => unreachable!(),
            });
        };
        let consistent = decls
            .iter()
            .all(|d| d.uid == first.uid && d.path == first.path);
        Ok(UidOut {
            uid: first.uid.clone(),
            path: first.path.clone(),
            exists: ix.files.contains_key(&first.path),
            source: first.source,
            declared_in: first.declared_in.clone(),
            conflict: !consistent,
            declarations: decls.into_iter().cloned().collect(),
        })
    })
    .await
}

// ---------------------------------------------------------------------------
// search_files

/// Matches counted at most; past this the total is a lower bound.
const MAX_MATCHES: usize = 10_000;
/// Longest line text returned per match, in characters.
const MAX_LINE_CHARS: usize = 240;

paged_args! {
    offset;
    pub struct SearchFilesArgs {
        /// Text to find (literal, one line).
        #[schemars(length(min = 1, max = 1000))]
        query: String,
        /// File glob: *.gd, scenes/**/*.tscn (default: all text files).
        #[serde(default)]
        glob: Option<String>,
        /// Match case (default false).
        #[serde(default)]
        case_sensitive: Option<bool>,
    }
}

/// A `search_files` glob: `*` and `?` stay within one folder, `**` spans folders;
/// a glob without `/` matches the file name alone. Compiled by `globset` into an
/// automaton, so matching is linear in the path whatever the pattern (a hand-written
/// backtracking matcher was exponential in the number of `*`).
struct FileGlob {
    matcher: globset::GlobMatcher,
    name_only: bool,
}

impl FileGlob {
    fn new(glob: &str) -> Result<Self, ToolError> {
        let matcher = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| ToolError::invalid_params("glob", format!("glob is not valid: {e}")))?
            .compile_matcher();
        Ok(Self {
            matcher,
            name_only: !glob.contains('/'),
        })
    }

    /// Whether `path` (relative, `/`-separated) matches.
    fn matches(&self, path: &str) -> bool {
        if self.name_only {
            return self
                .matcher
                .is_match(path.rsplit('/').next().unwrap_or(path));
        }
        self.matcher.is_match(path)
    }
}

/// One matching line.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileMatch {
    path: String,
    line: usize,
    column: usize,
    text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SearchExtra {
    files_searched: usize,
    files_skipped: usize,
    capped: bool,
}

async fn search_files(
    state: Arc<AppState>,
    args: SearchFilesArgs,
    _f: CallFlags,
) -> Result<PageWith<FileMatch, SearchExtra>, ToolError> {
    if args.query.is_empty() || args.query.len() > 1000 || args.query.contains('\n') {
        return Err(ToolError::invalid_params(
            "query",
            "query must be 1 to 1000 bytes on one line",
        ));
    }
    if let Some(g) = &args.glob
        && (g.is_empty() || g.len() > 500)
    {
        return Err(ToolError::invalid_params(
            "glob",
            "glob must be 1 to 500 bytes",
        ));
    }
    let glob = args.glob.as_deref().map(FileGlob::new).transpose()?;
    blocking(move || {
        let root = ResPath::root();
        let real = state.project.resolve("path", &root)?;
        let mut files = Vec::new();
        let mut visited = 0;
        walk_files(&state, &real, &root, &mut files, &mut visited)?;
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let case = args.case_sensitive.unwrap_or(false);
        let needle = if case {
            args.query.clone()
        } else {
            args.query.to_lowercase()
        };
        let mut matches: Vec<FileMatch> = Vec::new();
        let (mut searched, mut skipped) = (0usize, 0usize);
        'files: for (path, real, size) in &files {
            let rel = path.strip_prefix("res://").unwrap_or(path);
            if glob.as_ref().is_some_and(|g| !g.matches(rel)) {
                continue;
            }
            // Binary and oversized files are skipped, and counted.
            let Ok(text) = read_small(&state, real, *size) else {
                skipped += 1;
                continue;
            };
            if text.contains('\0') {
                skipped += 1;
                continue;
            }
            searched += 1;
            for (i, line) in text.lines().enumerate() {
                let hay = if case {
                    line.to_string()
                } else {
                    line.to_lowercase()
                };
                if let Some(col) = hay.find(&needle) {
                    if matches.len() >= MAX_MATCHES {
                        break 'files;
                    }
                    let col = hay[..col].chars().count() + 1;
                    matches.push(FileMatch {
                        path: path.clone(),
                        line: i + 1,
                        column: col,
                        text: line.chars().take(MAX_LINE_CHARS).collect::<String>(),
                    });
                }
            }
        }
        let capped = matches.len() >= MAX_MATCHES;
        Ok(with(
            page(&state, args.offset, args.limit, matches)?,
            SearchExtra {
                files_searched: searched,
                files_skipped: skipped,
                capped,
            },
        ))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob_match(glob: &str, path: &str) -> bool {
        FileGlob::new(glob).unwrap().matches(path)
    }

    /// Guards against (issue 26, item 11): the glob matcher backtracked without
    /// memoisation, exponential in the number of `*` on a pattern an agent may
    /// send (500 bytes): this one did not end. The automaton's answer comes in
    /// time linear in the path.
    #[test]
    fn a_pattern_of_many_stars_is_matched_in_linear_time() {
        let stars = "*a".repeat(120) + "b";
        let path = "a".repeat(400);
        assert!(!glob_match(&stars, &path));
        assert!(glob_match(&stars, &(path + "b")));
        let deep = "**/".repeat(60) + "*.gd";
        assert!(glob_match(&deep, &format!("{}x.gd", "d/".repeat(200))));
    }

    #[test]
    fn a_glob_that_does_not_parse_is_refused_with_its_parameter() {
        let e = FileGlob::new("scenes/[a.tscn").err().unwrap();
        assert_eq!(e.param.as_deref(), Some("glob"));
    }

    #[test]
    fn globs_match_names_and_paths() {
        assert!(glob_match("*.gd", "scripts/player.gd"));
        assert!(!glob_match("*.gd", "scripts/player.gd.uid"));
        assert!(glob_match("scenes/*.tscn", "scenes/main.tscn"));
        assert!(!glob_match("scenes/*.tscn", "scenes/sub/main.tscn"));
        assert!(glob_match("scenes/**/*.tscn", "scenes/sub/deep/main.tscn"));
        assert!(glob_match("scenes/**/*.tscn", "scenes/main.tscn"));
        assert!(glob_match("**/*.tres", "resources/a.tres"));
        assert!(glob_match("p?ayer.*", "scripts/player.gd"));
        assert!(!glob_match("scripts/*", "scenes/main.tscn"));
    }

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
