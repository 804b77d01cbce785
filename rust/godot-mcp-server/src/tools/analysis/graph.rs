//! The reference graph's questions: dependency_graph, find_references,
//! find_circular_dependencies and find_unused_resources.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::tools::kit::common::{FileKind, paged_args};

use super::index::{RefSite, indexed, normalize};
use crate::tools::kit::page::{Page, PageWith, page, with};
use crate::tools::{Call, Out};

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

pub(super) async fn dependency_graph(
    Call { state, args, .. }: Call<DependencyGraphArgs>,
) -> Out<PageWith<GraphItem, GraphExtra>> {
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

pub(super) fn one_of(path: &Option<ResPath>, uid: &Option<String>) -> Result<(), ToolError> {
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

pub(super) async fn find_references(
    Call { state, args, .. }: Call<FindReferencesArgs>,
) -> Out<PageWith<RefSite, RefsExtra>> {
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

pub(super) async fn find_circular_dependencies(
    Call { state, args, .. }: Call<CyclesArgs>,
) -> Out<Page<Cycle>> {
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

pub(super) async fn find_unused_resources(
    Call { state, args, .. }: Call<UnusedArgs>,
) -> Out<PageWith<UnusedFile, UnusedExtra>> {
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
