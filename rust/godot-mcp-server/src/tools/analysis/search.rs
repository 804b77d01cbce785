//! project_stats, resolve_uid and search_files (text search with a glob filter).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::graph::one_of;
use super::index::{UidDecl, UidSource, indexed};
use crate::error::{ErrorCode, ToolError};
use crate::respath::ResPath;
use crate::tools::kit::common::paged_args;
use crate::tools::kit::common::{read_small, walk_files};
use crate::tools::kit::page::{PageWith, blocking, page, with};
use crate::tools::{Call, Out};

// project_stats

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct StatsArgs {}

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

pub(super) async fn project_stats(Call { state, .. }: Call<StatsArgs>) -> Out<StatsOut> {
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

// resolve_uid

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ResolveUidArgs {
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

pub(super) async fn resolve_uid(Call { state, args, .. }: Call<ResolveUidArgs>) -> Out<UidOut> {
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

pub(super) async fn search_files(
    Call { state, args, .. }: Call<SearchFilesArgs>,
) -> Out<PageWith<FileMatch, SearchExtra>> {
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
}
