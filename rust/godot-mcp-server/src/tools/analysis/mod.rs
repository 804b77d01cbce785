//! Project analysis from the files on disk (the file plane; no editor, no Godot
//! binary): the reference graph and the questions asked of it, scene integrity,
//! signal connections, statistics, uid lookup and text search.
//!
//! Every call scans the project afresh into an `Index` (files, their references,
//! the uids they declare, parse failures), so an answer is never stale; the graph
//! logic itself is the pure `godot_mcp_formats::deps`.
//!
//! How a reference resolves follows Godot 4.4: an `[ext_resource]`'s `uid` wins
//! when it names a known file, and its `path` is the fallback. Uids are declared by
//! `.tscn`/`.tres` headers, by `.uid` files next to scripts and shaders, and by the
//! `uid=` of an imported asset's `.import` file.

mod graph;
mod index;
mod scenes;
mod search;

use crate::rules::Toolset;
use crate::rules::class;
use crate::tools::{ToolDef, ToolMeta};

fn meta(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> ToolMeta<class::ReadOnly> {
    ToolMeta::read_only(Toolset::Analysis, name, title, description)
}

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            meta(
                "dependency_graph",
                "Dependency graph",
                "What a file depends on, or what depends on it (direction), transitively, \
                 with depth. Paged.",
            ),
            graph::dependency_graph,
        ),
        ToolDef::new(
            meta(
                "find_references",
                "Find references",
                "Every reference to a res:// path or uid:// in scenes, resources, scripts and \
                 project.godot, with file and line. Paged.",
            ),
            graph::find_references,
        ),
        ToolDef::new(
            meta(
                "find_circular_dependencies",
                "Find circular dependencies",
                "Reference cycles between scenes, resources and scripts. Paged.",
            ),
            graph::find_circular_dependencies,
        ),
        ToolDef::new(
            meta(
                "find_unused_resources",
                "Find unused resources",
                "Files no root (main scene, autoloads, project settings, plugins) reaches, \
                 and orphaned .uid/.import files. Paged.",
            ),
            graph::find_unused_resources,
        ),
        ToolDef::new(
            meta(
                "check_scene_integrity",
                "Check scene integrity",
                "Broken references, unknown, missing or duplicate uids, undeclared resource ids \
                 and parse errors in scenes and resources. Paged.",
            ),
            scenes::check_scene_integrity,
        ),
        ToolDef::new(
            meta(
                "signal_flow",
                "Signal flow",
                "Signal connections in saved scenes: from node and signal to node and method, \
                 with node types and instanced scenes. Paged.",
            ),
            scenes::signal_flow,
        ),
        ToolDef::new(
            meta(
                "project_stats",
                "Project stats",
                "Counts and sizes by file kind and top folder; scenes, nodes, node types, \
                 scripts, resources.",
            ),
            search::project_stats,
        ),
        ToolDef::new(
            meta(
                "resolve_uid",
                "Resolve a uid",
                "uid:// to res:// path or back, from .uid, .import and scene/resource headers.",
            ),
            search::resolve_uid,
        ),
        ToolDef::new(
            meta(
                "search_files",
                "Search project files",
                "Search project text files for a string: matches with line and column, \
                 filtered by glob. Paged.",
            ),
            search::search_files,
        ),
    ]
}
