//! `completion/complete`: values for an argument, by the argument's name, from the
//! project as it is on disk.
//!
//! MCP completes the arguments of prompts and resource templates. The server's
//! template (`godot-mcp://transactions/{transaction_id}`) completes its transaction
//! ids; a reference to anything else is answered by its argument's name, with the
//! names the tools use: `path`/`scene`/`script`/`shader` (`res://` files of the right
//! kind, found by the project walk `list_files` uses, with its containment rules),
//! `node`/`parent` (node paths of the scene in the context's `scene` or `path`
//! argument, else the main scene), `toolset`, `action` (project.godot's input
//! actions), `preset` (export_presets.cfg). Any other name gets no values. Each
//! answer is bounded: at most [`CompletionInfo::MAX_VALUES`] values, `hasMore` past
//! them, and the walk has the listing's own entry bound.

use std::collections::HashMap;

use rmcp::model::CompletionInfo;

use crate::respath::ResPath;
use crate::rules::Toolset;
use crate::state::AppState;
use crate::tools::kit::common::FileKind;
use crate::tools::kit::common::read_text;
use crate::tools::kit::common::{MAX_WALK_ENTRIES, Walk, walk_project};

/// The values for `argument` starting with `prefix`; `context` holds the other
/// arguments already chosen. Nothing the project cannot give (a missing or broken
/// file) is an error: it only gives no values.
pub(crate) fn complete(
    state: &AppState,
    argument: &str,
    prefix: &str,
    context: &HashMap<String, String>,
) -> CompletionInfo {
    let candidates = match argument {
        "path" => files(state, |_| true),
        "scene" => files(state, |k| k == FileKind::Scene),
        "script" => files(state, |k| k == FileKind::Script),
        "shader" => files(state, |k| k == FileKind::Shader),
        "node" | "parent" => node_paths(state, context),
        "toolset" => Toolset::ALL.iter().map(|t| t.as_str().to_owned()).collect(),
        "action" => input_actions(state),
        "preset" => export_presets(state),
        "transaction_id" => transaction_ids(state),
        _ => Vec::new(),
    };
    bounded(candidates, prefix)
}

/// The candidates starting with `prefix`, sorted, at most the protocol's maximum.
fn bounded(mut values: Vec<String>, prefix: &str) -> CompletionInfo {
    values.retain(|v| v.starts_with(prefix));
    values.sort();
    values.dedup();
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let has_more = total > values.len();
    CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more).unwrap_or_default()
}

/// Every project file whose kind passes `keep`, as `res://` paths.
fn files(state: &AppState, keep: impl Fn(FileKind) -> bool) -> Vec<String> {
    let root = ResPath::root();
    let Ok(real) = state.project.resolve("path", &root) else {
        return Vec::new();
    };
    let how = Walk {
        recursive: true,
        skip: |name| name.ends_with(".import") || name.ends_with(".uid"),
        too_many: |res| {
            crate::error::ToolError::internal(format!(
                "{res} holds more than {MAX_WALK_ENTRIES} entries"
            ))
        },
    };
    let mut out = Vec::new();
    // A walk that hits its bound still gives what it found before it.
    let _ = walk_project(state, &real, &root, &how, &mut 0, &mut |res, _, _| {
        if keep(FileKind::of(res.extension().as_deref())) {
            out.push(res.to_string());
        }
    });
    out
}

/// A project text file, read with the read tools' containment and size bound.
fn text(state: &AppState, path: &str) -> Option<String> {
    let res = ResPath::parse(path).ok()?;
    let real = state.project.resolve("path", &res).ok()?;
    read_text(state, "path", &res, &real).ok()
}

fn project_info(state: &AppState) -> Option<godot_mcp_formats::ProjectInfo> {
    godot_mcp_formats::parse_project(&text(state, "res://project.godot")?).ok()
}

/// The node paths of the scene named in `context` (`scene`, else `path`), else of
/// the main scene.
fn node_paths(state: &AppState, context: &HashMap<String, String>) -> Vec<String> {
    let scene = context
        .get("scene")
        .or_else(|| context.get("path"))
        .cloned()
        .or_else(|| project_info(state)?.main_scene);
    let Some(scene) = scene.filter(|s| s.starts_with("res://")) else {
        return Vec::new();
    };
    text(state, &scene)
        .and_then(|t| godot_mcp_formats::parse_scene(&t).ok())
        .map(|s| s.nodes.into_iter().map(|n| n.path).collect())
        .unwrap_or_default()
}

fn input_actions(state: &AppState) -> Vec<String> {
    project_info(state)
        .map(|p| p.input_actions.into_iter().map(|a| a.name).collect())
        .unwrap_or_default()
}

fn export_presets(state: &AppState) -> Vec<String> {
    text(state, "res://export_presets.cfg")
        .and_then(|t| godot_mcp_formats::export_presets::parse_export_presets(&t).ok())
        .map(|p| p.into_iter().map(|p| p.name).collect())
        .unwrap_or_default()
}

/// The newest transactions' ids (the resource lists 100).
fn transaction_ids(state: &AppState) -> Vec<String> {
    crate::tools::transactions::transactions_json(state, None, 100)
        .ok()
        .and_then(|v| {
            v["transactions"].as_array().map(|rows| {
                rows.iter()
                    .filter_map(|r| r["transaction_id"].as_str().map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::bounded;

    #[test]
    fn an_answer_is_capped_and_says_there_is_more() {
        let many: Vec<String> = (0..150).map(|i| format!("res://s{i:03}.tscn")).collect();
        let c = bounded(many, "res://s");
        assert_eq!(c.values.len(), 100);
        assert_eq!(c.total, Some(150));
        assert_eq!(c.has_more, Some(true));
        let c = bounded(vec!["b".into(), "a".into(), "ab".into()], "a");
        assert_eq!(c.values, ["a", "ab"]);
        assert_eq!(c.has_more, Some(false));
    }
}
