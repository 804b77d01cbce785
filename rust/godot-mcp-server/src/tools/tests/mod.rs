//! The `tests` toolset: `run_tests` runs a project's GUT or gdUnit4 suites headless
//! as a supervised `process_launch` (the process plane's launch path; nothing is
//! spawned here) and reports each test from the framework's JUnit XML, falling back
//! to its console log; `assert_node_state` checks a running game's node properties
//! through the runtime probe.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use godot_mcp_formats::testreport::{self, TestResult, TestStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{self, LaunchSpec, errors};
use crate::respath::ResPath;
use crate::rules::class;
use crate::rules::{EffectKind, Toolset};
use crate::tools::kit::game::probe::game_property;
use crate::tools::kit::game::session::{ended_json, session_of};
use crate::tools::kit::godot_process::{self, godot, plain_launch, wait_ended};
use crate::tools::{Call, Out, ToolDef, ToolMeta};

/// Default and longest time a test run may take.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Default and longest log tail returned.
const DEFAULT_LOG_BYTES: usize = 8 * 1024;
const MAX_LOG_BYTES: usize = 256 * 1024;

pub(crate) fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            ToolMeta {
                name: "run_tests",
                title: "Run GUT or gdUnit4 tests",
                description: "Run the project's GUT or gdUnit4 tests headless (supervised); \
                    per-test suite, name, status, message, file and line, a summary and the \
                    log tail. A run past timeout_ms is reported as a timeout.",
                class: class::Runtime,
                toolset: Toolset::Tests,
                effect: Some(EffectKind::ProcessLaunch),
            },
            run_tests,
        ),
        ToolDef::new(
            ToolMeta::read_only(
                Toolset::Tests,
                "assert_node_state",
                "Assert node properties of the running game",
                "Compare a running game's node properties with expected values; pass or fail \
                 per property, with the actual value.",
            ),
            assert_node_state,
        ),
    ]
}

/// A GDScript test framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Framework {
    Gut,
    Gdunit4,
}

impl Framework {
    fn as_str(self) -> &'static str {
        match self {
            Self::Gut => "gut",
            Self::Gdunit4 => "gdunit4",
        }
    }

    /// The framework's command-line entry script.
    fn entry(self) -> &'static str {
        match self {
            Self::Gut => "addons/gut/gut_cmdln.gd",
            Self::Gdunit4 => "addons/gdUnit4/bin/GdUnitCmdTool.gd",
        }
    }

    /// The class a test suite extends; the project's class cache must list it.
    fn base_class(self) -> &'static str {
        match self {
            Self::Gut => "GutTest",
            Self::Gdunit4 => "GdUnitTestSuite",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunTestsArgs {
    /// gut or gdunit4 (default: the one in addons/).
    #[serde(default)]
    framework: Option<Framework>,
    /// A folder of tests, with its subfolders (default res://test or res://tests).
    #[serde(default)]
    directory: Option<ResPath>,
    /// One test script (instead of directory).
    #[serde(default)]
    script: Option<ResPath>,
    /// Only tests whose name contains this (GUT only).
    #[serde(default)]
    test_name: Option<String>,
    /// Run Godot's import first (writes .godot/ and .import files), needed once when
    /// the framework's classes are not imported yet.
    #[serde(default)]
    import: bool,
    /// Kill the run after this many ms, 1-600000 (default 120000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600_000))]
    timeout_ms: Option<u64>,
    /// Most bytes of log tail returned, 0-262144 (default 8192).
    #[serde(default)]
    #[schemars(range(max = 262_144))]
    max_log_bytes: Option<usize>,
}

fn detect(root: &Path, asked: Option<Framework>) -> Result<Framework, ToolError> {
    let present: Vec<Framework> = [Framework::Gut, Framework::Gdunit4]
        .into_iter()
        .filter(|f| root.join(f.entry()).is_file())
        .collect();
    let missing = |what: &str| {
        ToolError::new(
            ErrorCode::PreconditionFailed,
            format!("{what}: the project has no addons/gut nor addons/gdUnit4."),
        )
        .required("test_framework")
        .hint("Copy GUT (addons/gut) or gdUnit4 (addons/gdUnit4) into the project.")
    };
    match asked {
        Some(f) if present.contains(&f) => Ok(f),
        Some(f) => Err(missing(&format!("{} is not installed", f.entry()))),
        None => match present.as_slice() {
            [one] => Ok(*one),
            [] => Err(missing("No test framework found")),
            _ => Err(ToolError::invalid_params(
                "framework",
                "the project has both GUT and gdUnit4; name one with framework",
            )),
        },
    }
}

/// Whether the project's class cache lists the framework's base class: both
/// frameworks refuse to run (GUT quits with exit 0 and no tests) before an import.
fn classes_imported(root: &Path, f: Framework) -> bool {
    std::fs::read_to_string(root.join(".godot/global_script_class_cache.cfg"))
        .map(|t| t.contains(&format!("&\"{}\"", f.base_class())))
        .unwrap_or(false)
}

/// The res:// folder to run when none is named: res://test, else res://tests.
fn default_dir(root: &Path) -> Option<ResPath> {
    ["test", "tests"]
        .into_iter()
        .find(|d| root.join(d).is_dir())
        .and_then(|d| ResPath::parse(&format!("res://{d}")).ok())
}

/// `../` up from `root` to `/`, so that `<this>@SESSION_DIR@` is the session folder
/// as a path relative to the project: gdUnit4 reads an absolute `-rd` as `res://…`
/// (`GdUnitFileAccess.make_qualified_path`) and a relative one from the working
/// directory, which is the project.
fn up_to_fs_root(root: &Path) -> String {
    let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let depth = real
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(_)))
        .count();
    // `..` × depth, no trailing slash: the placeholder starts with one.
    vec![".."; depth].join("/")
}

/// What a test run was restricted to.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Filters {
    directory: Option<String>,
    script: Option<String>,
    test_name: Option<String>,
}

/// The engine arguments of a test run, and what it filters on (for the answer).
fn engine_args(
    f: Framework,
    root: &Path,
    args: &RunTestsArgs,
) -> Result<(Vec<String>, Filters), ToolError> {
    if args.directory.is_some() && args.script.is_some() {
        return Err(ToolError::invalid_params(
            "script",
            "name a directory or a script, not both",
        ));
    }
    let mut engine = vec![
        "--headless".to_string(),
        // The local debugger: with it GUT learns the failing line from the stack
        // (without, it reports line -1). A script error breaks into it and reads
        // stdin, which is at EOF under the supervisor, so the run continues.
        "-d".into(),
        "--path".into(),
        root.display().to_string(),
        "-s".into(),
        format!("res://{}", f.entry()),
    ];
    let target = match (&args.script, &args.directory) {
        (Some(s), _) => {
            if !root.join(s.rel()).is_file() {
                return Err(ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{s} does not exist"),
                ));
            }
            Some(s.clone())
        }
        (None, Some(d)) => {
            if !root.join(d.rel()).is_dir() {
                return Err(ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{d} is not a folder"),
                ));
            }
            Some(d.clone())
        }
        // GUT's own .gutconfig.json names its folders; leave them to it.
        (None, None) if f == Framework::Gut && root.join(".gutconfig.json").is_file() => None,
        (None, None) => Some(default_dir(root).ok_or_else(|| {
            ToolError::new(
                ErrorCode::ResourceNotFound,
                "The project has no res://test or res://tests folder.",
            )
            .hint("Name the tests with directory or script.")
        })?),
    };
    match f {
        Framework::Gut => {
            match (&args.script, &target) {
                (Some(s), _) => engine.push(format!("-gtest={s}")),
                (None, Some(d)) => {
                    engine.push(format!("-gdir={d}"));
                    engine.push("-ginclude_subdirs".into());
                }
                (None, None) => {}
            }
            if let Some(name) = &args.test_name {
                engine.push(format!("-gunit_test_name={name}"));
            }
            engine.push("-gexit".into());
            engine.push(format!(
                "-gjunit_xml_file={}/junit.xml",
                process::SESSION_DIR_PLACEHOLDER
            ));
        }
        Framework::Gdunit4 => {
            if args.test_name.is_some() {
                return Err(ToolError::invalid_params(
                    "test_name",
                    "gdUnit4's command line selects suites, not test names; name the script",
                ));
            }
            let Some(t) = &target else {
                return Err(ToolError::internal("no gdUnit4 target"));
            };
            engine.extend([
                "-a".into(),
                t.to_string(),
                // Run every test (gdUnit4 stops at the first failure by default).
                "-c".into(),
                "--ignoreHeadlessMode".into(),
                "-rd".into(),
                format!(
                    "{}{}/reports",
                    up_to_fs_root(root),
                    process::SESSION_DIR_PLACEHOLDER
                ),
            ]);
        }
    }
    let filters = Filters {
        directory: args
            .directory
            .as_ref()
            .map(ToString::to_string)
            .or_else(|| {
                if args.script.is_none() {
                    target.as_ref().map(ToString::to_string)
                } else {
                    None
                }
            }),
        script: args.script.as_ref().map(ToString::to_string),
        test_name: args.test_name.clone(),
    };
    Ok((engine, filters))
}

/// The tail of `bytes` (at most `max`), ANSI colours removed, on a char boundary.
fn clean_tail(bytes: &[u8], max: usize) -> (String, bool) {
    let text = testreport::strip_ansi(&String::from_utf8_lossy(bytes));
    let (tail, cut) = godot_process::tail(&text, max);
    (tail.to_owned(), cut)
}

/// The framework's JUnit report in the session folder, if it wrote one.
fn find_report(f: Framework, dir: &Path) -> Option<PathBuf> {
    match f {
        Framework::Gut => Some(dir.join("junit.xml")).filter(|p| p.is_file()),
        Framework::Gdunit4 => {
            // reports/report_N/results.xml; a fresh folder holds report_1 only.
            let mut found: Vec<_> = std::fs::read_dir(dir.join("reports"))
                .ok()?
                .filter_map(Result::ok)
                .map(|e| e.path().join("results.xml"))
                .filter(|p| p.is_file())
                .collect();
            found.sort();
            found.pop()
        }
    }
}

/// One test's result (`testreport::TestResult`, with its schema).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TestRow {
    suite: String,
    name: String,
    /// passed, failed, error, skipped or risky.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
}

impl From<TestResult> for TestRow {
    fn from(r: TestResult) -> Self {
        Self {
            suite: r.suite,
            name: r.name,
            status: match r.status {
                TestStatus::Passed => "passed",
                TestStatus::Failed => "failed",
                TestStatus::Error => "error",
                TestStatus::Skipped => "skipped",
                TestStatus::Risky => "risky",
            },
            message: r.message,
            file: r.file,
            line: r.line,
        }
    }
}

/// Counts per status (`testreport::Summary`, with its schema).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Counts {
    total: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    skipped: usize,
    risky: usize,
}

/// Where a script error stopped the run (`testreport::DebuggerBreak`, with its schema).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BreakAt {
    reason: String,
    file: String,
    line: Option<u32>,
    function: String,
}

/// One error or warning Godot printed (`errors::ScriptError`, with its schema).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PrintedError {
    kind: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function: Option<String>,
}

impl From<errors::ScriptError> for PrintedError {
    fn from(e: errors::ScriptError) -> Self {
        Self {
            kind: e.kind,
            message: e.message,
            file: e.file,
            line: e.line,
            function: e.function,
        }
    }
}

/// The import run before the tests: its transaction and how it ended.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ImportRun {
    transaction_id: String,
    /// How the process ended (`kit::game::session::ended_json`).
    end: Value,
}

/// run_tests' result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TestRun {
    framework: &'static str,
    outcome: &'static str,
    timed_out: bool,
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped_at_script_error: Option<Vec<BreakAt>>,
    summary: Counts,
    results: Vec<TestRow>,
    results_from: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    report_error: Option<String>,
    filters: Filters,
    transaction_id: String,
    /// How the process ended (`kit::game::session::ended_json`).
    end: Value,
    ran_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    import: Option<ImportRun>,
    log_tail: String,
    stderr_tail: String,
    log_truncated: bool,
    script_errors: Vec<PrintedError>,
}

/// A Godot run of the `tests` family: no probe or debugger arguments.
fn tests_launch(operation: &'static str, program: PathBuf, args: Vec<String>) -> LaunchSpec {
    plain_launch(
        process::NO_CONTROL_ARGS_PURPOSE,
        "tests",
        operation,
        program,
        args,
    )
}

async fn run_tests(Call { state, args, .. }: Call<RunTestsArgs>) -> Out<TestRun> {
    let timeout_ms = ToolError::arg_in(
        "timeout_ms",
        args.timeout_ms,
        DEFAULT_TIMEOUT_MS,
        1..=MAX_TIMEOUT_MS,
        "timeout_ms must be 1–600000",
    )?;
    let max_log = args.max_log_bytes.unwrap_or(DEFAULT_LOG_BYTES);
    if max_log > MAX_LOG_BYTES {
        return Err(ToolError::invalid_params(
            "max_log_bytes",
            "max_log_bytes must be 0–262144",
        ));
    }
    let root = state.project.root().to_path_buf();
    let framework = detect(&root, args.framework)?;
    let (engine, filters) = engine_args(framework, &root, &args)?;
    let program = godot(&state)?;
    let started = Instant::now();
    let deadline = Duration::from_millis(timeout_ms);

    let mut imported: Option<ImportRun> = None;
    if !classes_imported(&root, framework) {
        if !args.import {
            return Err(ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "The project's class cache does not list {} yet: {} cannot run before \
                     Godot imports the project; nothing was run.",
                    framework.base_class(),
                    framework.as_str()
                ),
            )
            .required("import")
            .hint(
                "Call again with import=true (runs `godot --headless --import`, which writes \
                 .godot/ and .import files), or open the project in the editor once.",
            ));
        }
        let (session, ended) =
            godot_process::import(&state, &program, "tests", "run_tests_import", deadline).await?;
        let import = ImportRun {
            transaction_id: session.txn.to_string(),
            end: ended_json(&ended),
        };
        if ended.timed_out || !classes_imported(&root, framework) {
            return Err(ToolError::new(
                if ended.timed_out {
                    ErrorCode::Timeout
                } else {
                    ErrorCode::PreconditionFailed
                },
                format!(
                    "Godot's import {} and the class cache still does not list {}; no test \
                     was run.",
                    if ended.timed_out {
                        "ran past timeout_ms"
                    } else {
                        "ended"
                    },
                    framework.base_class()
                ),
            )
            .required("import")
            .details(json!({"import": import})));
        }
        imported = Some(import);
    }

    let spec = tests_launch("run_tests", program, engine);
    let session = state.process.launch(&state, spec).await?;
    let limit = deadline.saturating_sub(started.elapsed());
    let ended = wait_ended(&session, limit, "the killed test run did not end").await?;

    let dir = session.output_dir();
    let stdout = std::fs::read(dir.join("stdout.log")).unwrap_or_default();
    let stderr = std::fs::read(dir.join("stderr.log")).unwrap_or_default();
    let stdout_text = String::from_utf8_lossy(&stdout);

    // The JUnit report first; the console when there is none (a run killed at its
    // limit writes none) or it does not parse (GUT does not escape attributes).
    let mut report_error = None;
    let xml = find_report(framework, &dir).and_then(|p| std::fs::read_to_string(p).ok());
    let parsed = xml.map(|x| match framework {
        Framework::Gut => testreport::parse_gut_junit(&x),
        Framework::Gdunit4 => testreport::parse_gdunit4_junit(&x),
    });
    let (source, results): (&str, Vec<TestResult>) = match parsed {
        Some(Ok(r)) => ("junit_xml", r),
        other => {
            if let Some(Err(e)) = other {
                report_error = Some(e.to_string());
            }
            let r = match framework {
                Framework::Gut => testreport::parse_gut_console(&stdout_text),
                Framework::Gdunit4 => testreport::parse_gdunit4_console(&stdout_text),
            };
            ("console", r)
        }
    };
    // A script error stops the run in the local debugger (`-d`): the test it
    // stopped is an error with the engine's message and line, and nothing after it ran.
    let breaks = testreport::debugger_breaks(&stdout_text);
    let mut results = results;
    match framework {
        Framework::Gut => testreport::apply_breaks(&mut results, &breaks, str::to_string),
        Framework::Gdunit4 => {
            testreport::apply_breaks(&mut results, &breaks, testreport::gdunit4_suite_of);
        }
    }
    let summary = testreport::summarize(&results);
    crate::call_scope::step(format!(
        "results parsed from {source}: {} test(s)",
        results.len()
    ));
    let outcome = if ended.timed_out {
        "timeout"
    } else if summary.failed + summary.errors > 0 {
        "failed"
    } else if ended.code.is_none() {
        "crashed"
    } else if results.is_empty() {
        if ended.code == Some(0) {
            "no_tests"
        } else {
            "error"
        }
    } else {
        "passed"
    };
    let (log_tail, log_truncated) = clean_tail(&stdout, max_log);
    let (stderr_tail, stderr_truncated) = clean_tail(&stderr, max_log);
    let mut script_errors = errors::parse(&String::from_utf8_lossy(&stderr));
    script_errors.extend(errors::parse(&stdout_text));

    // Only a run that ended by itself, wrote its report and hit no script error ran
    // every test it was given; otherwise `results` holds the tests that finished.
    let complete =
        !ended.timed_out && ended.code.is_some() && source == "junit_xml" && breaks.is_empty();
    Ok(TestRun {
        framework: framework.as_str(),
        outcome,
        timed_out: ended.timed_out,
        complete,
        stopped_at_script_error: (!breaks.is_empty()).then(|| {
            breaks
                .into_iter()
                .map(|b| BreakAt {
                    reason: b.reason,
                    file: b.file,
                    line: b.line,
                    function: b.function,
                })
                .collect()
        }),
        summary: Counts {
            total: summary.total,
            passed: summary.passed,
            failed: summary.failed,
            errors: summary.errors,
            skipped: summary.skipped,
            risky: summary.risky,
        },
        results: results.into_iter().map(TestRow::from).collect(),
        results_from: source,
        report_error,
        filters,
        transaction_id: session.txn.to_string(),
        end: ended_json(&ended),
        ran_ms: ended.ran_ms,
        import: imported,
        log_tail,
        stderr_tail,
        log_truncated: log_truncated || stderr_truncated,
        script_errors: script_errors.into_iter().map(PrintedError::from).collect(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AssertNodeArgs {
    /// The session (default: the newest running game).
    #[serde(default)]
    session_id: Option<String>,
    /// Node path, e.g. /root/Main/Player.
    node: String,
    /// Property name → expected value (a number, bool, string, or an array of numbers
    /// for vectors and colors).
    expected: Map<String, Value>,
    /// Largest difference between numbers that still passes (default 0.0001).
    #[serde(default)]
    tolerance: Option<f64>,
}

/// The numbers in the probe's text of a value: `(1, 2.5)` → [1, 2.5].
fn numbers_in(text: &str) -> Option<Vec<f64>> {
    let inner = text
        .trim()
        .trim_start_matches(['(', '['])
        .trim_end_matches([')', ']']);
    inner
        .split(',')
        .map(|n| n.trim().parse::<f64>().ok())
        .collect()
}

/// Whether `actual` (the probe's value: its text today, typed JSON tomorrow) is
/// `expected`, numbers within `tol`.
fn matches(expected: &Value, actual: &Value, tol: f64) -> bool {
    let close = |a: f64, b: f64| (a - b).abs() <= tol || a == b;
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => match (e.as_f64(), a.as_f64()) {
            (Some(e), Some(a)) => close(e, a),
            _ => false,
        },
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| matches(e, a, tol))
        }
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len()
                && e.iter()
                    .all(|(k, v)| a.get(k).is_some_and(|av| matches(v, av, tol)))
        }
        (e, Value::String(text)) if !e.is_string() => match e {
            Value::Number(n) => n
                .as_f64()
                .zip(text.trim().parse::<f64>().ok())
                .is_some_and(|(e, a)| close(e, a)),
            Value::Bool(b) => text.trim() == b.to_string(),
            Value::Null => matches!(text.trim(), "<null>" | "null" | "Null"),
            Value::Array(items) => {
                let want: Option<Vec<f64>> = items.iter().map(Value::as_f64).collect();
                match (want, numbers_in(text)) {
                    (Some(w), Some(a)) => {
                        w.len() == a.len() && w.iter().zip(&a).all(|(w, a)| close(*w, *a))
                    }
                    _ => false,
                }
            }
            _ => false,
        },
        (e, a) => e == a,
    }
}

/// One property's comparison.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PropertyCheck {
    property: String,
    /// The expected value, as given.
    expected: Value,
    /// The probe's value (its text today, typed JSON tomorrow).
    actual: Value,
    pass: bool,
}

/// assert_node_state's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct NodeAssertion {
    session_id: String,
    node: String,
    passed: bool,
    failed: usize,
    results: Vec<PropertyCheck>,
}

async fn assert_node_state(Call { state, args, .. }: Call<AssertNodeArgs>) -> Out<NodeAssertion> {
    if args.expected.is_empty() {
        return Err(ToolError::invalid_params(
            "expected",
            "expected names no property",
        ));
    }
    let tol = args.tolerance.unwrap_or(1e-4);
    if !tol.is_finite() || tol < 0.0 {
        return Err(ToolError::invalid_params(
            "tolerance",
            "tolerance must be a finite number ≥ 0",
        ));
    }
    let session = session_of(&state, args.session_id.as_deref())?;
    let mut results = Vec::with_capacity(args.expected.len());
    let mut all = true;
    for (property, expected) in &args.expected {
        let actual = game_property(&session, &args.node, property).await?;
        let pass = matches(expected, &actual, tol);
        all &= pass;
        results.push(PropertyCheck {
            property: property.clone(),
            expected: expected.clone(),
            actual,
            pass,
        });
    }
    Ok(NodeAssertion {
        session_id: session.txn.to_string(),
        node: args.node,
        passed: all,
        failed: results.iter().filter(|r| !r.pass).count(),
        results,
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn values_compare_with_the_probes_text_and_typed_json() {
        let t = 1e-4;
        assert!(matches(&json!(3), &json!("3"), t));
        assert!(matches(&json!(2.5), &json!("2.50001"), t));
        assert!(!matches(&json!(2.5), &json!("2.6"), t));
        assert!(matches(&json!(true), &json!("true"), t));
        assert!(!matches(&json!(false), &json!("true"), t));
        assert!(matches(&json!([100, 200.5]), &json!("(100, 200.5)"), t));
        assert!(!matches(&json!([100, 200]), &json!("(100, 201)"), t));
        assert!(!matches(&json!([100]), &json!("(100, 200)"), t));
        assert!(matches(&json!("Player"), &json!("Player"), t));
        assert!(!matches(&json!("3"), &json!("3.0"), t));
        assert!(matches(&json!(null), &json!("<null>"), t));
        assert!(matches(&json!([1, 2]), &json!([1.00001, 2]), t));
    }

    #[test]
    fn the_way_up_from_a_folder_reaches_the_file_system_root() {
        let dir = std::env::temp_dir();
        let up = up_to_fs_root(&dir);
        let back = dir.join(format!("{up}/tmp"));
        assert_eq!(
            std::fs::canonicalize(back).unwrap(),
            std::fs::canonicalize("/tmp").unwrap()
        );
    }
}
