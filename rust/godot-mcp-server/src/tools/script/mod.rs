//! Scripts, the rest: the engine's own parse check, the script listing, the script of
//! a node in a scene file, and patching a script with unified-diff hunks.
//!
//! `get_parse_errors` runs Godot headless under the supervisor with a checker script
//! that loads res://x.gd as `--check-only` does (`kit/godot_process.rs::check_only`):
//! Godot's GDScript parser and analyzer, not a re-implementation. Godot 4.4 prints the first error of a file as
//! `SCRIPT ERROR: Parse Error: <message>` / `at: GDScript::reload (res://x.gd:<line>)`
//! (captured in tests/fixtures/godot-4.4.1/check_only); it prints no column.
//!
//! `patch_script` is a file write like write_script: compare-and-swap on the file's
//! sha256 and the journal's one write seam (`files::plan_write`).

use crate::rules::class;
use crate::tools::kit::cs_script as csharp;

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::{Persistence, RescanPending};
use crate::planes::project::{self as plane, Expect};
use crate::respath::ResPath;
use crate::rules::{EffectKind, Toolset};
use crate::state::AppState;
use crate::tools::kit::common::head;
pub(crate) use crate::tools::kit::common::{ScriptHeader, script_header_gd};
use crate::tools::kit::common::{page_limit, paged_args, read_text, walk_scripts};
use crate::tools::kit::file_write::{plan_script, require_script_path};
pub(crate) use crate::tools::kit::godot_process::ParseErrorItem;
use crate::tools::kit::godot_process::{CHECK_TIMEOUT, check_gd, godot};
use crate::tools::kit::scene_doc::some_node_paths;
use crate::tools::{Call, Out, ToolDef, ToolMeta};
use csharp::cs_index;

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "get_parse_errors",
                title: "GDScript parse errors",
                description: "Check .gd scripts with Godot's own parser (needs \
                    Godot), .cs through one dotnet build (needs the .NET SDK): each file's \
                    errors with line and message.",
                class: class::ReadOnly,
                toolset: Toolset::ScriptCheck,
                effect: Some(EffectKind::ProcessLaunch),
            },
            get_parse_errors,
        ),
        ToolDef::new(
            ToolMeta {
                name: "list_scripts",
                title: "List scripts",
                description: "Every .gd and .cs script with its class_name, extends and @tool \
                    (C#: also exports, signals, problems), from disk, paged.",
                class: class::ReadOnly,
                toolset: Toolset::ScriptCheck,
                effect: None,
            },
            list_scripts,
        ),
        ToolDef::new(
            ToolMeta {
                name: "get_node_script",
                title: "Script of a node",
                description: "The script attached to a node of a scene file (.tscn, from \
                    disk): its path, or a built-in script's source; a C# script's class, \
                    exports and signals.",
                class: class::ReadOnly,
                toolset: Toolset::ScriptCheck,
                effect: None,
            },
            get_node_script,
        ),
        ToolDef::planned(
            ToolMeta {
                name: "patch_script",
                title: "Patch a script",
                description: "Apply unified-diff hunks (@@ -a,b +c,d @@) to a script or \
                    shader; refused unchanged if expected_sha256 is stale or a hunk does not \
                    apply.",
                class: class::Destructive,
                toolset: Toolset::ScriptEdit,
                effect: Some(EffectKind::File),
            },
            plan_patch_script,
        ),
    ]
}

// ---------------------------------------------------------------------------------
// get_parse_errors
// ---------------------------------------------------------------------------------

/// Files one call checks: each is one Godot start (~2 s).
const MAX_CHECK: usize = 10;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ParseErrorsArgs {
    /// The .gd or .cs scripts to check (1-10).
    #[schemars(length(min = 1, max = 10))]
    paths: Vec<ResPath>,
}

/// One checked file: its errors, and when Godot failed without one, its exit and output.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct CheckedFile {
    path: String,
    ok: bool,
    errors: Vec<ParseErrorItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<Option<i32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tail: Option<String>,
    /// Why the file was not checked (a .cs without the .NET SDK or a .csproj).
    #[serde(skip_serializing_if = "Option::is_none")]
    not_checked: Option<String>,
}

/// get_parse_errors' result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ParseErrors {
    files: Vec<CheckedFile>,
    error_count: usize,
    column_reported: bool,
    #[serde(flatten)]
    rescan: RescanPending,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'static str>,
}

async fn get_parse_errors(Call { state, args, .. }: Call<ParseErrorsArgs>) -> Out<ParseErrors> {
    if args.paths.is_empty() || args.paths.len() > MAX_CHECK {
        return Err(ToolError::invalid_params(
            "paths",
            format!("paths must name 1 to {MAX_CHECK} scripts"),
        ));
    }
    for (i, p) in args.paths.iter().enumerate() {
        let param = format!("paths[{i}]");
        let real = state.project.resolve(&param, p)?;
        if !matches!(p.extension().as_deref(), Some("gd" | "cs")) {
            return Err(ToolError::invalid_params(
                &param,
                format!("{p} is not a GDScript (.gd) or C# (.cs) file"),
            ));
        }
        if !real.is_file() {
            return Err(
                ToolError::new(ErrorCode::ResourceNotFound, format!("{p} does not exist"))
                    .param(param),
            );
        }
    }
    let (cs, gd): (Vec<&ResPath>, Vec<&ResPath>) = args
        .paths
        .iter()
        .partition(|p| p.extension().as_deref() == Some("cs"));
    let program = if gd.is_empty() {
        None
    } else {
        Some(godot(&state)?)
    };
    // Before the check: a class cache older than a script means the engine's view
    // of global class names may lag the files the check reads.
    let pending_before = rescan_pending(&state);
    let mut files = Vec::new();
    let mut error_count = 0;
    for p in &gd {
        // `gd` is empty when there is no program.
        let Some(program) = program.as_deref() else {
            break;
        };
        let path = p.to_string();
        let c = check_gd(&state, program, &path, CHECK_TIMEOUT).await?;
        error_count += c.errors.len();
        files.push(CheckedFile {
            ok: c.ok(),
            exit_code: c.unexplained().then_some(c.ended.code),
            output_tail: c.unexplained().then(|| c.output_tail()),
            path,
            errors: c.errors,
            not_checked: None,
        });
    }
    let cs_checked = !cs.is_empty();
    if cs_checked {
        let checked = check_cs(&state, &cs).await?;
        error_count += checked.iter().map(|f| f.errors.len()).sum::<usize>();
        files.extend(checked);
    }
    let pending = pending_before || rescan_pending(&state);
    Ok(ParseErrors {
        files,
        error_count,
        column_reported: cs_checked,
        rescan: RescanPending {
            rescan_pending: pending,
        },
        hint: pending.then_some(
            "The project's global class cache (.godot/global_script_class_cache.cfg) is \
             missing or older than a script, so errors about unknown class names may be \
             stale: let the editor finish its scan (or run godot --import), then check again.",
        ),
    })
}

/// The C# files through one build of the project: each file's errors (MSBuild's,
/// matched by the file's real path). Without the SDK or a single `.csproj` each is
/// marked not checked, with why and what to do.
async fn check_cs(
    state: &Arc<AppState>,
    paths: &[&ResPath],
) -> Result<Vec<CheckedFile>, ToolError> {
    let built = match crate::tools::kit::dotnet_build::build_for_check(state).await {
        Ok(b) => b,
        Err(e) if e.code == ErrorCode::PreconditionFailed => {
            let why = format!(
                "not checked: {}. {}",
                e.message.trim_end_matches("; nothing was built"),
                e.hint.as_deref().unwrap_or_default()
            );
            return Ok(paths
                .iter()
                .map(|p| CheckedFile {
                    path: p.to_string(),
                    ok: false,
                    errors: Vec::new(),
                    exit_code: None,
                    output_tail: None,
                    not_checked: Some(why.clone()),
                })
                .collect());
        }
        Err(e) => return Err(e),
    };
    let unexplained = !built.ok && built.diagnostics.iter().all(|d| d.severity != "error");
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let real = state.project.resolve("paths", p)?;
        let real = real.canonicalize().unwrap_or(real);
        let errors: Vec<ParseErrorItem> = built
            .diagnostics
            .iter()
            .filter(|d| d.severity == "error")
            .filter(|d| {
                d.file.as_deref().is_some_and(|f| {
                    let f = Path::new(f);
                    f.canonicalize().map_or(f == real, |c| c == real)
                })
            })
            .map(|d| ParseErrorItem {
                file: p.to_string(),
                line: d.line,
                column: d.column,
                message: match &d.code {
                    Some(code) => format!("{code}: {}", d.message),
                    None => d.message.clone(),
                },
            })
            .collect();
        out.push(CheckedFile {
            path: p.to_string(),
            ok: errors.is_empty() && !unexplained,
            errors,
            exit_code: unexplained.then_some(built.exit_code),
            output_tail: if unexplained {
                built.output_tail.clone()
            } else {
                None
            },
            not_checked: None,
        });
    }
    Ok(out)
}

/// Whether the engine's class-name cache lags the scripts: it is missing while a
/// script declares a class_name, or a script is newer than it. The check then raced
/// (or precedes) an import scan, and its answer about global names may be out of date.
fn rescan_pending(state: &AppState) -> bool {
    let cache = std::fs::metadata(
        state
            .project
            .root()
            .join(".godot/global_script_class_cache.cfg"),
    )
    .and_then(|m| m.modified())
    .ok();
    let mut pending = false;
    let walked = walk_scripts(state, &mut |_, real| {
        if pending || real.extension().is_none_or(|e| e != "gd") {
            return;
        }
        pending = match cache {
            Some(t) => std::fs::metadata(real)
                .and_then(|m| m.modified())
                .is_ok_and(|m| m > t),
            None => head(&real).is_some_and(|h| script_header_gd(&h).class_name.is_some()),
        };
    });
    // A project too large to walk is not known to be in step.
    pending || walked.is_err()
}

// ---------------------------------------------------------------------------------
// list_scripts
// ---------------------------------------------------------------------------------

paged_args! {
    cursor;
    pub struct ListScriptsArgs {}
}

/// One listed script.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScriptEntry {
    path: String,
    language: &'static str,
    #[serde(flatten)]
    header: ScriptHeader,
    /// C#: the engine class it derives from, through the project's classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    native_base: Option<String>,
    /// C#: `[GlobalClass]`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    global_class: bool,
    /// C#: the `[Export]` members' names (get_node_script has their types and hints).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    exports: Vec<String>,
    /// C#: the `[Signal]` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    signals: Vec<String>,
    /// C#: why Godot would not use it as is (class not named as the file, GD0001…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    problems: Vec<godot_mcp_csharp::GeneratorDiagnostic>,
}

/// Most bytes of a C# file read (a script is far smaller; a generated giant is cut).
const CS_MAX_BYTES: u64 = 1024 * 1024;

/// A `.cs` file's text, at most [`CS_MAX_BYTES`].
pub(crate) fn cs_text(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(CS_MAX_BYTES)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Every C# class of the project (for resolving bases through project classes).
/// list_scripts' page.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ScriptsPage {
    total: usize,
    returned: usize,
    scripts: Vec<ScriptEntry>,
    next_cursor: Option<String>,
}

async fn list_scripts(Call { state, args, .. }: Call<ListScriptsArgs>) -> Out<ScriptsPage> {
    let limit = page_limit(&state, args.limit, 200)?;
    let mut all: Vec<(String, std::path::PathBuf)> = Vec::new();
    walk_scripts(&state, &mut |res, real| all.push((res.to_string(), real)))?;
    all.sort();
    let total = all.len();
    let start = match &args.cursor {
        Some(c) => all.partition_point(|(p, _)| p.as_str() <= c.as_str()),
        None => 0,
    };
    let window = &all[start..all.len().min(start + limit)];
    let index = if window.iter().any(|(p, _)| p.ends_with(".cs")) {
        Some(cs_index(&state)?)
    } else {
        None
    };
    let page: Vec<ScriptEntry> = window
        .iter()
        .map(|(res, real)| {
            let mut entry = ScriptEntry {
                path: res.clone(),
                language: "gdscript",
                header: ScriptHeader::default(),
                native_base: None,
                global_class: false,
                exports: Vec::new(),
                signals: Vec::new(),
                problems: Vec::new(),
            };
            if res.ends_with(".cs") {
                let cs = csharp::cs_script(res, &cs_text(real).unwrap_or_default(), index.as_ref());
                entry.language = "csharp";
                entry.header = ScriptHeader {
                    class_name: cs.class_name,
                    extends: cs.extends,
                    tool: cs.tool,
                };
                entry.native_base = cs.native_base;
                entry.global_class = cs.global_class;
                entry.exports = cs.exports.into_iter().map(|e| e.name).collect();
                entry.signals = cs.signals.into_iter().map(|e| e.name).collect();
                entry.problems = cs.problems;
            } else {
                entry.header = script_header_gd(&head(real).unwrap_or_default());
            }
            entry
        })
        .collect();
    let end = start + page.len();
    Ok(ScriptsPage {
        total,
        returned: page.len(),
        scripts: page,
        next_cursor: (end < total).then(|| all[end - 1].0.clone()),
    })
}

// ---------------------------------------------------------------------------------
// get_node_script
// ---------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeScriptArgs {
    /// The scene file (.tscn).
    scene: ResPath,
    /// Node path from the root: "." (default) or "Player/Sprite".
    #[serde(default)]
    node: Option<String>,
}

/// A node's script: a file, or a built-in script's sub-resource and source.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum NodeScriptRef {
    File {
        path: String,
        uid: Option<String>,
        built_in: bool,
    },
    BuiltIn {
        built_in: bool,
        sub_resource: String,
        source: Option<String>,
    },
}

/// get_node_script's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeScript {
    scene: String,
    node: String,
    #[serde(rename = "type")]
    node_type: Option<String>,
    script: Option<NodeScriptRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance: Option<String>,
    /// A C# script's class, base, exports, signals and problems, from its source.
    #[serde(skip_serializing_if = "Option::is_none")]
    csharp: Option<csharp::CsScript>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'static str>,
}

async fn get_node_script(Call { state, args, .. }: Call<NodeScriptArgs>) -> Out<NodeScript> {
    let real = state.project.resolve("scene", &args.scene)?;
    if args.scene.extension().as_deref() != Some("tscn") {
        return Err(ToolError::invalid_params(
            "scene",
            format!("{} is not a text scene (.tscn)", args.scene),
        ));
    }
    let text = read_text(&state, "scene", &args.scene, &real)?;
    let scene = godot_mcp_formats::parse_scene(&text).map_err(|e| {
        ToolError::new(
            ErrorCode::ParseError,
            format!(
                "{}:{}:{}: {}",
                args.scene,
                e.line(),
                e.column(),
                e.message()
            ),
        )
        .param("scene")
    })?;
    let node_path = args.node.as_deref().unwrap_or(".");
    let Some(node) = scene.node(node_path) else {
        return Err(ToolError::new(
            ErrorCode::ResourceNotFound,
            format!("{} has no node {node_path:?}", args.scene),
        )
        .param("node")
        .hint(format!(
            "Node paths in this scene: {}.",
            some_node_paths(&scene)
        )));
    };
    let mut out = NodeScript {
        scene: args.scene.to_string(),
        node: node.path.clone(),
        node_type: node.node_type.clone(),
        script: None,
        instance: None,
        csharp: None,
        hint: None,
    };
    match &node.script {
        Some(godot_mcp_formats::ResourceLink::External(link)) => {
            if link.path.ends_with(".cs")
                && let Ok(res) = ResPath::parse(&link.path)
            {
                let real = state.project.resolve("scene", &res)?;
                let text = read_text(&state, "scene", &res, &real)?;
                out.csharp = Some(csharp::cs_script(
                    &link.path,
                    &text,
                    Some(&cs_index(&state)?),
                ));
            }
            out.script = Some(NodeScriptRef::File {
                path: link.path.clone(),
                uid: link.uid.clone(),
                built_in: false,
            });
        }
        Some(godot_mcp_formats::ResourceLink::Internal { id }) => {
            let sub = scene.sub_resources.iter().find(|s| &s.id == id);
            let source = sub
                .and_then(|s| s.properties.iter().find(|p| p.name == "script/source"))
                .and_then(|p| p.value.as_str().map(str::to_string));
            out.script = Some(NodeScriptRef::BuiltIn {
                built_in: true,
                sub_resource: id.clone(),
                source,
            });
        }
        None => {
            if let Some(inst) = &node.instance {
                out.instance = Some(inst.path.clone());
                out.hint = Some(
                    "No script is set here; the instanced scene's root may have one: \
                     call get_node_script on that scene.",
                );
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------
// patch_script
// ---------------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchScriptArgs {
    /// The script or shader.
    path: ResPath,
    /// Unified diff: one or more @@ hunks (---/+++ headers optional).
    patch: String,
    /// The file's sha256 now (from scripts_read).
    expected_sha256: String,
}

/// `base` with `patch` applied; the hunks must match exactly where they say.
pub(crate) fn apply_patch(base: &str, patch: &str) -> Result<String, ToolError> {
    let text = if patch.starts_with("--- ") || patch.starts_with("diff ") {
        patch.to_string()
    } else {
        // diffy parses a patch with its file headers; hunks alone get neutral ones.
        format!("--- a\n+++ b\n{patch}")
    };
    let text = if text.ends_with('\n') {
        text
    } else {
        format!("{text}\n")
    };
    let parsed = diffy::Patch::from_str(&text).map_err(|e| {
        ToolError::invalid_params("patch", format!("not a unified diff: {e}"))
            .hint("Send hunks like \"@@ -3,2 +3,2 @@\\n context\\n-old\\n+new\\n\".")
    })?;
    if parsed.hunks().is_empty() {
        return Err(ToolError::invalid_params("patch", "the patch has no hunks"));
    }
    diffy::apply(base, &parsed).map_err(|e| {
        // diffy names the hunk only in its message ("error applying hunk #2").
        let n = e
            .to_string()
            .rsplit('#')
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(1);
        let hunk = &parsed.hunks()[n.clamp(1, parsed.hunks().len()) - 1];
        let (expected, line, found) = hunk_mismatch(base, hunk);
        ToolError::new(
            ErrorCode::Conflict,
            format!(
                "the patch does not apply: hunk {n} expects at line {line} {expected:?} but \
                 the file holds {found:?}; nothing was written"
            ),
        )
        .param("patch")
        .hint("Read the script again (scripts_read) and make the hunks' context and - lines match it exactly.")
        .details(serde_json::json!({"hunk": n, "line": line, "expected": expected, "found": found}))
    })
}

/// What a hunk expects (its context and `-` lines, in order) at the line it names,
/// and what `base` holds at that line, as many lines.
fn hunk_mismatch(base: &str, hunk: &diffy::Hunk<'_, str>) -> (Vec<String>, usize, Vec<String>) {
    let expected: Vec<String> = hunk
        .lines()
        .iter()
        .filter_map(|l| match l {
            diffy::Line::Context(t) | diffy::Line::Delete(t) => {
                Some(t.trim_end_matches('\n').to_string())
            }
            diffy::Line::Insert(_) => None,
        })
        .collect();
    let line = hunk.old_range().start().max(1);
    let found = base
        .lines()
        .skip(line - 1)
        .take(expected.len())
        .map(str::to_string)
        .collect();
    (expected, line, found)
}

fn plan_patch_script(
    state: Arc<AppState>,
    args: PatchScriptArgs,
) -> Result<crate::tools::kit::file_write::ScriptPlan, ToolError> {
    let real = state.project.resolve("path", &args.path)?;
    require_script_path(&args.path)?;
    let base = read_text(&state, "path", &args.path, &real)?;
    // Compare-and-swap first: a stale sha is STALE, whatever the hunks say.
    plane::check_write(
        &state.project,
        "path",
        &args.path,
        base.as_bytes(),
        Expect::Sha256(&args.expected_sha256),
    )?;
    let patched = apply_patch(&base, &args.patch)?;
    plan_script(
        &state,
        args.path,
        patched.into_bytes(),
        Expect::Sha256(&args.expected_sha256),
        Persistence::written_to_disk(),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::kit::godot_process::parse_check_output;

    /// Captured: tests/fixtures/godot-4.4.1/check_only (README there).
    const BAD_STDERR: &str =
        include_str!("../../../../../tests/fixtures/godot-4.4.1/check_only/bad.stderr");
    const BAD2_STDERR: &str =
        include_str!("../../../../../tests/fixtures/godot-4.4.1/check_only/bad2.stderr");
    const GOOD_STDERR: &str =
        include_str!("../../../../../tests/fixtures/godot-4.4.1/check_only/good.stderr");

    #[test]
    fn captured_check_only_output() {
        let e = parse_check_output("res://bad.gd", BAD_STDERR);
        assert_eq!(
            e,
            vec![ParseErrorItem {
                file: "res://bad.gd".into(),
                line: Some(5),
                column: None,
                message: "Expected \":\" after \"if\" condition.".into(),
            }]
        );
        let e = parse_check_output("res://bad2.gd", BAD2_STDERR);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].line, Some(4));
        assert!(e[0].message.contains("undefined_thing"), "{e:?}");
        // "No renderers available" is an engine ERROR, not the script's.
        assert!(parse_check_output("res://good.gd", GOOD_STDERR).is_empty());
    }

    #[test]
    fn headers() {
        let h = script_header_gd(
            "@tool\nclass_name Player extends CharacterBody2D # hi\n\nfunc f():\n\tpass\n",
        );
        assert_eq!(h.class_name.as_deref(), Some("Player"));
        assert_eq!(h.extends.as_deref(), Some("CharacterBody2D"));
        assert!(h.tool);
        let h = script_header_gd("extends \"res://base.gd\"\n");
        assert_eq!(h.extends.as_deref(), Some("res://base.gd"));
        assert_eq!(h.class_name, None);
    }

    #[test]
    fn patch_applies_and_refuses() {
        let base = "extends Node\n\nfunc _ready():\n\tprint(1)\n";
        let out = apply_patch(
            base,
            "@@ -3,2 +3,2 @@\n func _ready():\n-\tprint(1)\n+\tprint(2)\n",
        )
        .unwrap();
        assert_eq!(out, "extends Node\n\nfunc _ready():\n\tprint(2)\n");
        let e = apply_patch(
            base,
            "@@ -3,2 +3,2 @@\n func _ready():\n-\tprint(9)\n+\tprint(2)\n",
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Conflict);
        let e = apply_patch(base, "hello").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams);
    }
}
