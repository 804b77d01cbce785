//! Saved scenes checked from disk: check_scene_integrity (broken references, missing
//! resources, bad node paths) and signal_flow (every connection, its emitter and target).

use std::collections::BTreeSet;

use godot_mcp_formats::Scene;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::ToolError;
use crate::respath::ResPath;
use crate::tools::kit::common::{FileKind, paged_args};

use super::index::{Index, Issue, RefKind, indexed, normalize};
use crate::tools::kit::page::{Page, PageWith, page, with};
use crate::tools::{Call, Out};

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

pub(super) async fn check_scene_integrity(
    Call { state, args, .. }: Call<IntegrityArgs>,
) -> Out<PageWith<Issue, IntegrityExtra>> {
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

pub(super) async fn signal_flow(Call { state, args, .. }: Call<SignalFlowArgs>) -> Out<Page<Flow>> {
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
