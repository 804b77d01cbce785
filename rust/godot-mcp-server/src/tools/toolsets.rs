//! Toolset discovery and switching: `list_toolsets` says what every toolset is for and
//! whether it is on; `manage_toolsets` turns toolsets on or off within the operator's
//! ceiling, and with `find` searches every tool's name and description and turns on
//! the best match's toolset in the same call (an agent reaches any tool in one step).
//! A change sends notifications/tools/list_changed (server.rs).
//!
//! `manage_toolsets` changes this server's tool surface, never the project. By the
//! classification rule it is `mutating`: a reversible change (disabling undoes
//! enabling), with a dry run that says what would change (with `find`: a search that
//! changes nothing). It must not claim
//! `readOnlyHint`: a client that auto-approves read-only tools would otherwise let an
//! agent widen its own surface unseen; as a mutating call it also goes to the approval
//! gate when one is configured. Toolsets keep the tool list small; they are not the
//! human-oversight layer (that is the gate, and the operator's ceiling bounds them).
//!
//! The search lives in `manage_toolsets` rather than a tool of its own: the default
//! tools/list is within a few tokens of its budget, and one more tool with its schemas
//! cost ~250 tokens where a field costs ~60.

use std::collections::BTreeSet;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::rules::Toolset;
use crate::rules::class;
use crate::state::AppState;
use crate::tools::{Call, Out, Plan, ToolDef, ToolMeta};

/// Every registered tool's description, filled in by `Registry::builtin` once every
/// tool is registered (list_toolsets is one of them).
pub(crate) type Catalog = Arc<std::sync::OnceLock<Vec<ToolMeta>>>;

pub(crate) fn tools(catalog: Catalog) -> Vec<ToolDef> {
    let listing = catalog.clone();
    vec![
        ToolDef::new(
            ToolMeta {
                name: "list_toolsets",
                title: "List toolsets",
                description: "Every toolset: purpose, tools, whether enabled, whether the \
                    operator allows it.",
                class: class::ReadOnly,
                toolset: Toolset::Toolsets,
                effect: None,
            },
            move |call| list_toolsets(call, listing.clone()),
        ),
        ToolDef::planned(
            ToolMeta {
                name: "manage_toolsets",
                title: "Manage toolsets",
                description: "Enable or disable toolsets (list_toolsets) or a named tool's \
                    toolset. find: words; answers the best-matching tools and enables their \
                    toolsets (up to 3; dry_run: search only).",
                class: class::Mutating,
                toolset: Toolset::Toolsets,
                effect: None,
            },
            move |state, args| plan_manage_toolsets(state, args, &catalog),
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListToolsetsArgs {}

/// Every toolset, in declaration order.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ToolsetList {
    toolsets: Vec<ToolsetInfo>,
}

/// One toolset: what it is for, its tools, and whether it is (or may be) on. (No
/// count or safety classes: every byte here is paid on every turn of every agent, and
/// tools/list carries each tool's class once it is enabled.)
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ToolsetInfo {
    name: &'static str,
    purpose: &'static str,
    enabled: bool,
    allowed: bool,
    tools: Vec<&'static str>,
}

async fn list_toolsets(
    Call { state, .. }: Call<ListToolsetsArgs>,
    catalog: Catalog,
) -> Out<ToolsetList> {
    let catalog = catalog.get().map(Vec::as_slice).unwrap_or_default();
    let enabled = state.safety.enabled();
    let toolsets: Vec<ToolsetInfo> = Toolset::ALL
        .iter()
        .map(|t| ToolsetInfo {
            name: t.as_str(),
            purpose: t.purpose(),
            enabled: enabled.contains(t),
            allowed: state.safety.allows(*t),
            tools: catalog
                .iter()
                .filter(|m| m.toolset == *t)
                .map(|m| m.name)
                .collect(),
        })
        .collect();
    Ok(ToolsetList { toolsets })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ManageToolsetsArgs {
    /// Toolsets or tools to enable.
    #[serde(default)]
    enable: Vec<String>,
    /// Toolsets to disable.
    #[serde(default)]
    disable: Vec<String>,
    #[serde(default)]
    find: Option<String>,
}

/// Each name as a toolset; in `enable`, a tool's name stands for its toolset.
fn parse_all(
    param: &str,
    names: &[String],
    tools: Option<&[ToolMeta]>,
) -> Result<Vec<Toolset>, ToolError> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            Toolset::parse(n)
                .or_else(|| {
                    tools?
                        .iter()
                        .find(|m| m.name == n.as_str())
                        .map(|m| m.toolset)
                })
                .ok_or_else(|| {
                    let mut e = ToolError::invalid_params(
                        format!("{param}[{i}]"),
                        format!(
                            "unknown toolset {n:?}; toolsets are: {}",
                            Toolset::ALL.map(Toolset::as_str).join(", ")
                        ),
                    );
                    if let Some(m) = tools.and_then(|t| closest(t.iter(), n)) {
                        e = e.hint(format!(
                            "The tool closest to {n:?} is {} (toolset {}).",
                            m.name,
                            m.toolset.as_str()
                        ));
                    }
                    e
                })
        })
        .collect()
}

fn names(set: &BTreeSet<Toolset>) -> Vec<&'static str> {
    set.iter().map(|t| t.as_str()).collect()
}

/// Whether the enabled set changed, and the set now; with `find`, the matching tools,
/// best first. A dry run changes nothing: `changed` is false, `enabled` the set now, and
/// `would_enable` what the call would turn on.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ToolsetChange {
    changed: bool,
    enabled: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    would_enable: Option<Vec<&'static str>>,
    // With find: "name (toolset): what it does", "off" when not listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    found: Option<Vec<String>>,
}

/// Plan: every name known, nothing outside the ceiling, `toolsets` kept; the effect is
/// the enabled set afterwards. Apply re-checks under the lock and changes the set.
fn plan_manage_toolsets(
    state: Arc<AppState>,
    args: ManageToolsetsArgs,
    catalog: &Catalog,
) -> Result<Plan<ToolsetChange, ToolsetChange>, ToolError> {
    let tools = catalog.get().map(Vec::as_slice).unwrap_or_default();
    let mut enable = parse_all("enable", &args.enable, Some(tools))?;
    let disable = parse_all("disable", &args.disable, None)?;
    let found: Option<Vec<ToolMeta>> = args.find.as_deref().map(|query| {
        let scored = find_scored(tools.iter(), query);
        enable.extend(found_toolsets(&scored, |t| state.safety.allows(t)));
        scored.into_iter().map(|(_, m)| *m).collect()
    });
    let before = state.safety.enabled();
    let after = state.safety.preview_toolsets(&enable, &disable)?;
    // The preview is a dry run's whole answer: nothing is enabled yet.
    let effect = ToolsetChange {
        changed: false,
        enabled: names(&before),
        would_enable: Some(names(&after.difference(&before).copied().collect())),
        found: found_lines(found.as_deref(), &before),
    };
    Plan::new(effect, move |_| {
        let changed = state.safety.set_toolsets(&enable, &disable)?;
        let now = state.safety.enabled();
        Ok(ToolsetChange {
            changed,
            enabled: names(&now),
            would_enable: None,
            found: found_lines(found.as_deref(), &now),
        })
    })
}

/// `find`'s answer, each match marked by whether its toolset is in `on`.
fn found_lines(found: Option<&[ToolMeta]>, on: &BTreeSet<Toolset>) -> Option<Vec<String>> {
    found.map(|f| {
        f.iter()
            .map(|m| found_line(m, on.contains(&m.toolset)))
            .collect()
    })
}

// ---------------------------------------------------------------------------------
// The search: every tool's name, its toolset and its description, ranked
// ---------------------------------------------------------------------------------

/// How many matches `find` answers.
const FOUND_MAX: usize = 8;

/// Words that say nothing about which tool is meant.
const STOP_WORDS: [&str; 22] = [
    "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "with", "my", "i", "how", "do",
    "is", "it", "from", "into", "by", "at", "tool",
];

/// The lowercase alphanumeric runs of `text` (an underscore separates words).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

/// A plural's singular, roughly: "scripts" and "script" are one term.
fn stem(w: &str) -> &str {
    match w.strip_suffix('s') {
        Some(s) if s.len() >= 3 && !s.ends_with('s') => s,
        _ => w,
    }
}

/// How well `term` matches `text`: `exact` when one of its words is the term,
/// `prefix` when one starts with it ("tile" in "TileMapLayer"), else 0.
fn field(term: &str, text: &[String], exact: u32, prefix: u32) -> u32 {
    let mut best = 0;
    for w in text {
        if stem(w) == term {
            return exact;
        }
        if w.starts_with(term) {
            best = prefix;
        }
    }
    best
}

/// One tool's words, by field.
struct Fields {
    name: Vec<String>,
    toolset: Vec<String>,
    text: Vec<String>,
    purpose: Vec<String>,
}

impl Fields {
    fn of(m: &ToolMeta) -> Self {
        Self {
            name: words(m.name).collect(),
            toolset: words(m.toolset.as_str()).collect(),
            text: words(m.title).chain(words(m.description)).collect(),
            purpose: words(m.toolset.purpose()).collect(),
        }
    }

    /// A term's weight in this tool: its name first, then its toolset, its text.
    fn weight(&self, term: &str) -> u32 {
        field(term, &self.name, 10, 6)
            .max(field(term, &self.toolset, 4, 4))
            .max(field(term, &self.text, 3, 2))
            .max(field(term, &self.purpose, 1, 1))
    }
}

/// Most toolsets one `find` enables.
const FIND_TOOLSETS: usize = 3;

/// The toolsets `find` enables: the best match's, and those of the other matches that
/// match as many of the query's words, while the operator allows them (at most
/// [`FIND_TOOLSETS`]). Agent run 13b: "theme resource create font color" ranked
/// set_theme_override first and enabled `ui`; `theme` and `resource_edit`, whose tools
/// matched as many words, took two more calls.
fn found_toolsets(scored: &[(usize, &ToolMeta)], allows: impl Fn(Toolset) -> bool) -> Vec<Toolset> {
    let mut out: Vec<Toolset> = Vec::new();
    let Some((top, best)) = scored.first() else {
        return out;
    };
    // The best match's toolset even when the ceiling refuses it: the refusal says so.
    out.push(best.toolset);
    for (matched, m) in &scored[1..] {
        if matched == top
            && out.len() < FIND_TOOLSETS
            && !out.contains(&m.toolset)
            && allows(m.toolset)
        {
            out.push(m.toolset);
        }
    }
    out
}

/// The tools of `tools` that match `query`, best first (at most [`FOUND_MAX`]): the
/// most query words matched, then the highest weight; two adjacent words also match
/// as one ("tile map": tilemap). A query that is a tool's name finds it first.
pub(crate) fn find<'a>(
    tools: impl Iterator<Item = &'a ToolMeta>,
    query: &str,
) -> Vec<&'a ToolMeta> {
    find_scored(tools, query)
        .into_iter()
        .map(|(_, m)| m)
        .collect()
}

/// [`find`], each match with how many of the query's words it matched.
fn find_scored<'a>(
    tools: impl Iterator<Item = &'a ToolMeta>,
    query: &str,
) -> Vec<(usize, &'a ToolMeta)> {
    let terms: Vec<String> = words(query)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w).to_string())
        .collect();
    if terms.is_empty() {
        return Vec::new();
    }
    let joined = words(query).collect::<Vec<_>>().join("_");
    let mut ranked: Vec<(usize, u32, usize, &ToolMeta)> = tools
        .enumerate()
        .filter_map(|(i, m)| {
            let fields = Fields::of(m);
            let mut best: Vec<u32> = terms.iter().map(|t| fields.weight(t)).collect();
            for k in 1..terms.len() {
                let pair = fields.weight(&format!("{}{}", terms[k - 1], terms[k]));
                best[k - 1] = best[k - 1].max(pair);
                best[k] = best[k].max(pair);
            }
            let matched = best.iter().filter(|&&w| w > 0).count();
            let exact = if m.name == joined { 100 } else { 0 };
            (matched > 0).then(|| (matched, best.iter().sum::<u32>() + exact, i, m))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    ranked
        .into_iter()
        .take(FOUND_MAX)
        .map(|(matched, .., m)| (matched, m))
        .collect()
}

/// The registered tool whose name is closest to `name`, an unknown one: within a few
/// edits ("rescan_filesytem"), or the search's best match when it matches every word
/// of the name ("rescan", "tilemap_cells").
pub(crate) fn closest<'a>(
    tools: impl Iterator<Item = &'a ToolMeta> + Clone,
    name: &str,
) -> Option<&'a ToolMeta> {
    let typo = tools
        .clone()
        .map(|m| (edit_distance(m.name, name), m))
        .filter(|&(d, _)| d <= 3.min(name.len() / 3))
        .min_by_key(|&(d, _)| d)
        .map(|(_, m)| m);
    typo.or_else(|| {
        let best = *find(tools, name).first()?;
        let fields = Fields::of(best);
        words(name)
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .all(|w| fields.weight(stem(&w)) >= 6)
            .then_some(best)
    })
}

/// Levenshtein distance, by bytes (tool names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != b[j])).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// "name (toolset): its first sentence", "(toolset, off)" when it is not listed.
fn found_line(m: &ToolMeta, on: bool) -> String {
    let d = m.description;
    let end = d.find(". ").or_else(|| d.find("; ")).unwrap_or(d.len());
    let mut about = d[..end].trim_end_matches('.').to_string();
    if about.len() > 120 {
        let cut = (0..=117)
            .rev()
            .find(|&i| about.is_char_boundary(i))
            .unwrap_or(0);
        about.truncate(cut);
        about.push_str("...");
    }
    let off = if on { "" } else { ", off" };
    format!("{} ({}{off}): {about}", m.name, m.toolset.as_str())
}

/// The refusal's hint for a call of `name`, a tool nobody registered: the closest
/// registered tool, and the exact call that lists it when its toolset is off.
pub(crate) fn unknown_tool_hint<'a>(
    tools: impl Iterator<Item = &'a ToolMeta> + Clone,
    enabled: &BTreeSet<Toolset>,
    name: &str,
) -> (Option<&'static str>, String) {
    match closest(tools, name) {
        Some(m) if enabled.contains(&m.toolset) => (
            Some(m.name),
            format!("Did you mean {}? It is listed.", m.name),
        ),
        Some(m) => (
            Some(m.name),
            format!(
                "Did you mean {0}? Its toolset {1} is off: call manage_toolsets \
                 {{\"enable\":[\"{1}\"]}}, then {0}.",
                m.name,
                m.toolset.as_str()
            ),
        ),
        None => (
            None,
            format!(
                "tools/list names every tool listed now; manage_toolsets {{\"find\":\"{}\"}} \
                 searches every tool and enables the best match's toolset.",
                name.replace(['"', '\\'], "")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Vec<ToolMeta> {
        crate::tools::builtin_for_tests()
            .iter()
            .map(|d| d.meta)
            .collect()
    }

    fn first(query: &str) -> &'static str {
        let tools = catalog();
        find(tools.iter(), query).first().map_or("", |m| m.name)
    }

    /// What agents typed (issue 40) finds the tool that does it first.
    #[test]
    fn find_ranks_the_tool_that_does_it_first() {
        assert_eq!(first("rescan"), "rescan_filesystem");
        assert_eq!(first("rescan the file system"), "rescan_filesystem");
        assert_eq!(first("rescan_filesystem"), "rescan_filesystem");
        assert_eq!(first("tile map cells"), "get_tilemap_cells");
        assert_eq!(first("input map action"), "add_input_action");
        assert!(find(catalog().iter(), "the of").is_empty());
        let tools = catalog();
        let tile = find(tools.iter(), "tile map");
        assert!(
            tile.iter().all(|m| m.toolset == Toolset::Tilemap),
            "{:?}",
            tile.iter().map(|m| m.name).collect::<Vec<_>>()
        );
    }

    /// find enables the toolsets of every match as good as the best (at most three,
    /// those the ceiling allows), not the best's alone.
    #[test]
    fn find_enables_every_toolset_as_good_as_the_best() {
        let tools = catalog();
        let scored = find_scored(tools.iter(), "theme resource create font color");
        let all = found_toolsets(&scored, |_| true);
        assert!(all.len() > 1 && all.len() <= FIND_TOOLSETS, "{all:?}");
        assert!(all.contains(&Toolset::Theme), "{all:?}");
        assert_eq!(all[0], scored[0].1.toolset);
        // Toolsets outside the ceiling are left out, but for the best's.
        assert_eq!(
            found_toolsets(&scored, |_| false),
            vec![scored[0].1.toolset]
        );
        // One toolset's tools: that toolset alone.
        let tile = found_toolsets(&find_scored(tools.iter(), "tile map"), |_| true);
        assert_eq!(tile, vec![Toolset::Tilemap]);
    }

    /// A near miss of a tool's name names the tool; a name like nothing names none.
    #[test]
    fn an_unknown_name_close_to_a_tool_names_it() {
        let tools = catalog();
        let near = |n: &str| closest(tools.iter(), n).map(|m| m.name);
        assert_eq!(near("rescan_filesytem"), Some("rescan_filesystem"));
        assert_eq!(near("rescan"), Some("rescan_filesystem"));
        assert_eq!(near("get_tilemap_cell"), Some("get_tilemap_cells"));
        assert_eq!(near("bake_bread"), None);
        let enabled = crate::rules::Toolset::DEFAULT.into_iter().collect();
        let (tool, hint) = unknown_tool_hint(tools.iter(), &enabled, "rescan_filesytem");
        assert_eq!(tool, Some("rescan_filesystem"));
        assert!(
            hint.contains(r#"manage_toolsets {"enable":["filesystem"]}"#),
            "{hint}"
        );
    }

    #[test]
    fn a_found_line_is_one_sentence() {
        let tools = catalog();
        let m = tools
            .iter()
            .find(|m| m.name == "rescan_filesystem")
            .unwrap();
        let line = found_line(m, false);
        assert!(
            line.starts_with("rescan_filesystem (filesystem, off): "),
            "{line}"
        );
        assert!(!line.contains(". "), "{line}");
    }
}
