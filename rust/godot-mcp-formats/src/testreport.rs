//! The results of GDScript test runs, as the two test frameworks report them:
//! GUT (`-gjunit_xml_file`) and gdUnit4 (`--report-directory` → `results.xml`)
//! write JUnit XML, and both print a console log. The XML is preferred; the
//! console log is the fallback when no report was written (a run killed at its
//! time limit, or a report that is not well-formed XML — GUT does not escape
//! its attributes).
//!
//! Each parser returns one [`TestResult`] per test, in report order. The
//! parsers are pure and never panic; the samples they are tested on were
//! captured from GUT 9.4.0 and gdUnit4 5.1.1 on Godot 4.4.1
//! (tests/fixtures/godot-4.4.1/run_tests).

use serde::Serialize;

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    /// An assertion failed.
    Failed,
    /// The test raised an error (gdUnit4's `<error>`).
    Error,
    /// Skipped or pending.
    Skipped,
    /// Ran without asserting anything (GUT's "no asserts"/risky).
    Risky,
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestResult {
    /// The suite: GUT's script path, gdUnit4's suite name.
    pub suite: String,
    pub name: String,
    pub status: TestStatus,
    /// The failure, error or skip text, with the framework's colours removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The suite's script, `res://…`, when the report names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The failing line, when the framework knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// Counts per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    pub risky: usize,
}

/// Counts `results` per status.
pub fn summarize(results: &[TestResult]) -> Summary {
    let mut s = Summary {
        total: results.len(),
        ..Summary::default()
    };
    for r in results {
        match r.status {
            TestStatus::Passed => s.passed += 1,
            TestStatus::Failed => s.failed += 1,
            TestStatus::Error => s.errors += 1,
            TestStatus::Skipped => s.skipped += 1,
            TestStatus::Risky => s.risky += 1,
        }
    }
    s
}

/// A report that is not JUnit XML.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a JUnit XML report: {0}")]
pub struct ReportError(pub String);

fn attr<'a>(node: roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    node.attribute(name).unwrap_or("")
}

fn text_of(node: roxmltree::Node<'_, '_>) -> String {
    node.descendants()
        .filter(roxmltree::Node::is_text)
        .filter_map(|t| t.text())
        .collect::<String>()
        .trim()
        .to_string()
}

fn check_root(doc: &roxmltree::Document<'_>) -> Result<(), ReportError> {
    let name = doc.root_element().tag_name().name();
    if name == "testsuites" || name == "testsuite" {
        Ok(())
    } else {
        Err(ReportError(format!(
            "the root element is <{name}>, not <testsuites>"
        )))
    }
}

/// The first child element of `case` named one of `names`.
fn outcome<'a, 'i>(
    case: roxmltree::Node<'a, 'i>,
    names: &[&str],
) -> Option<roxmltree::Node<'a, 'i>> {
    case.children()
        .find(|c| c.is_element() && names.contains(&c.tag_name().name()))
}

/// The number after the last `at line ` in GUT's failure text; GUT writes -1
/// when the engine gave it no stack (a run without `-d`).
fn gut_line(text: &str) -> Option<u32> {
    let at = text.rfind("at line ")?;
    let digits: String = text[at + 8..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits
        .parse::<i64>()
        .ok()
        .and_then(|n| u32::try_from(n).ok())
}

/// GUT's failure text without its trailing `at line N`.
fn gut_message(text: &str) -> String {
    let text = strip_ansi(text);
    match text.rfind("at line ") {
        Some(at) => text[..at].trim().to_string(),
        None => text.trim().to_string(),
    }
}

fn res_path(script: &str) -> String {
    if script.starts_with("res://") {
        script.to_string()
    } else {
        format!("res://{script}")
    }
}

/// GUT's JUnit XML (`-gjunit_xml_file`): a `<testsuite>` per script (its
/// name is the script path without `res://`), a `<testcase status="pass|fail|
/// pending|no asserts|…">` per test, the failure text in `<failure>` ending in
/// `at line N`.
pub fn parse_gut_junit(xml: &str) -> Result<Vec<TestResult>, ReportError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| ReportError(e.to_string()))?;
    check_root(&doc)?;
    let mut out = Vec::new();
    for case in doc
        .root_element()
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "testcase")
    {
        let script = attr(case, "classname");
        let detail = outcome(case, &["failure", "error", "skipped"]);
        let status = match (attr(case, "status"), detail.map(|d| d.tag_name().name())) {
            ("pass", _) => TestStatus::Passed,
            ("fail", _) | (_, Some("failure")) => TestStatus::Failed,
            (_, Some("error")) => TestStatus::Error,
            ("pending" | "skipped", _) | (_, Some("skipped")) => TestStatus::Skipped,
            ("no asserts", _) => TestStatus::Risky,
            // "not run" and anything newer: it did not pass.
            _ => TestStatus::Skipped,
        };
        let text = detail.map(text_of).unwrap_or_default();
        out.push(TestResult {
            suite: res_path(script),
            name: attr(case, "name").to_string(),
            status,
            message: (!text.is_empty()).then(|| gut_message(&text)),
            file: (!script.is_empty()).then(|| res_path(script)),
            line: gut_line(&text),
        });
    }
    Ok(out)
}

/// `res://a/b.gd:12` at the end of gdUnit4's `FAILED: res://a/b.gd:12`.
fn gdunit_location(message: &str) -> Option<(String, Option<u32>)> {
    let at = message.find("res://")?;
    let loc = message[at..].trim();
    match loc.rsplit_once(':') {
        Some((file, line)) if !file.ends_with("res:/") => {
            Some((file.to_string(), line.trim().parse().ok()))
        }
        _ => Some((loc.to_string(), None)),
    }
}

/// gdUnit4's JUnit XML (`<report dir>/report_N/results.xml`): a `<testsuite
/// name="<suite>" package="<dir>">` per suite, a `<testcase>` per test with a
/// `<failure|error|skipped message="FAILED: res://x.gd:LINE">` for each report.
/// A test's file is its report's; a passing test takes its suite's file from a
/// sibling's report, when one has it.
pub fn parse_gdunit4_junit(xml: &str) -> Result<Vec<TestResult>, ReportError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| ReportError(e.to_string()))?;
    check_root(&doc)?;
    let mut out = Vec::new();
    for suite in doc
        .root_element()
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().name() == "testsuite")
    {
        let first = out.len();
        let mut suite_file = None;
        for case in suite
            .children()
            .filter(|n| n.is_element() && n.tag_name().name() == "testcase")
        {
            let detail = outcome(case, &["failure", "error", "skipped"]);
            let status = match detail.map(|d| d.tag_name().name()) {
                None => TestStatus::Passed,
                Some("failure") => TestStatus::Failed,
                Some("error") => TestStatus::Error,
                Some(_) => TestStatus::Skipped,
            };
            let location = detail.and_then(|d| gdunit_location(attr(d, "message")));
            if let Some((file, _)) = &location {
                suite_file.get_or_insert_with(|| file.clone());
            }
            let text = detail.map(text_of).unwrap_or_default();
            out.push(TestResult {
                suite: attr(case, "classname").to_string(),
                name: attr(case, "name").to_string(),
                status,
                message: (!text.is_empty()).then(|| strip_ansi(&text)),
                file: location.as_ref().map(|(f, _)| f.clone()),
                line: location.and_then(|(_, l)| l),
            });
        }
        for r in &mut out[first..] {
            if r.file.is_none() {
                r.file.clone_from(&suite_file);
            }
        }
    }
    Ok(out)
}

/// `text` without ANSI escape sequences (CSI `ESC [ … final`, and lone ESCs).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in @..~.
            for p in chars.by_ref() {
                if ('@'..='~').contains(&p) {
                    break;
                }
            }
        }
    }
    out
}

/// GUT's console log, for a run that left no JUnit report. GUT prints each
/// script's path on a line of its own, `* test_name` when a test starts, then
/// `[Failed]:  …` / `[Pending]:  …` / `[Risky]:  …` lines, an `at line N`
/// line, and `N/M passed.` after each script; its run summary (after `= Run
/// Summary`) repeats the failures and is not read. A test that started and
/// has no outcome line passed, unless the log ends inside it (a run killed at
/// its limit): that test is not reported, since it never finished.
pub fn parse_gut_console(log: &str) -> Vec<TestResult> {
    let text = strip_ansi(log);
    let mut out: Vec<TestResult> = Vec::new();
    let mut script: Option<String> = None;
    // Whether the last test started in `out` has finished (a later test, or
    // its script's `N/M passed.` line, closes it).
    let mut open = false;
    for raw in text.lines() {
        // The local debugger's prompt has no newline: what follows it is GUT's.
        let line = raw.trim();
        let line = line.strip_prefix("debug> ").unwrap_or(line).trim();
        if line.starts_with("= Run Summary") {
            break;
        }
        if line.starts_with("res://") && !line.contains(' ') {
            open = false;
            script = Some(line.to_string());
            continue;
        }
        let Some(suite) = &script else { continue };
        if let Some(name) = line.strip_prefix("* ") {
            open = true;
            out.push(TestResult {
                suite: suite.clone(),
                name: name.trim().to_string(),
                status: TestStatus::Passed,
                message: None,
                file: Some(suite.clone()),
                line: None,
            });
            continue;
        }
        if line.ends_with(" passed.") && line.contains('/') {
            open = false;
            continue;
        }
        let Some(last) = out.last_mut() else { continue };
        let tagged = |tag: &str| line.strip_prefix(tag).map(|m| m.trim().to_string());
        if let Some(m) = tagged("[Failed]:") {
            last.status = TestStatus::Failed;
            last.message = Some(m);
        } else if let Some(m) = tagged("[Pending]:") {
            last.status = TestStatus::Skipped;
            last.message = Some(m);
        } else if let Some(m) = tagged("[Risky]:") {
            if last.status == TestStatus::Passed {
                last.status = TestStatus::Risky;
                last.message = Some(m);
            }
        } else if line.starts_with("at line ") && last.line.is_none() {
            last.line = gut_line(line);
        }
    }
    if open {
        // The log ended inside this test: it never finished.
        out.pop();
    }
    out
}

/// gdUnit4's console log, for a run that left no report: one
/// `<res path> > <test> STARTED` and one `<res path> > <test> PASSED|FAILED|
/// ERROR|SKIPPED <time>` line per test, then for a failed test a `Report:`
/// block whose lines start with `line N:`. A test that started and never
/// ended (a run killed at its limit) is not reported.
pub fn parse_gdunit4_console(log: &str) -> Vec<TestResult> {
    let text = strip_ansi(log);
    let mut out: Vec<TestResult> = Vec::new();
    let mut in_report = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some((path, rest)) = line.split_once(" > ")
            && path.starts_with("res://")
        {
            in_report = false;
            let mut words = rest.split_whitespace();
            let (Some(name), Some(state)) = (words.next(), words.next()) else {
                continue;
            };
            let status = match state {
                "PASSED" => TestStatus::Passed,
                "FAILED" => TestStatus::Failed,
                "ERROR" => TestStatus::Error,
                "SKIPPED" => TestStatus::Skipped,
                _ => continue,
            };
            let suite = gdunit4_suite_of(path);
            out.push(TestResult {
                suite,
                name: name.to_string(),
                status,
                message: None,
                file: Some(path.to_string()),
                line: None,
            });
            continue;
        }
        if line == "Report:" {
            in_report = true;
            continue;
        }
        if line.is_empty() {
            // The report block ends at the first blank line.
            in_report = false;
            continue;
        }
        if !in_report {
            continue;
        }
        let Some(last) = out.last_mut() else { continue };
        if let Some(rest) = line.strip_prefix("line ")
            && let Some((n, msg)) = rest.split_once(':')
            && let Ok(n) = n.trim().parse::<u32>()
        {
            last.line.get_or_insert(n);
            let msg = msg.trim();
            let m = last.message.get_or_insert_with(String::new);
            if !m.is_empty() {
                m.push('\n');
            }
            m.push_str(msg);
        } else if let Some(m) = &mut last.message {
            m.push('\n');
            m.push_str(line);
        }
    }
    out
}

/// A script error that stopped a run in Godot's local debugger (`-d`): the
/// engine prints `Debugger Break, Reason: '…'` and `*Frame 0 - <file>:<line> in
/// function '<name>'`, then waits on stdin. At EOF there (as under a supervisor)
/// GUT's run ends without its summary or report and gdUnit4's aborts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DebuggerBreak {
    pub reason: String,
    pub file: String,
    pub line: Option<u32>,
    pub function: String,
}

/// Every debugger break in a console log, in order.
pub fn debugger_breaks(log: &str) -> Vec<DebuggerBreak> {
    let text = strip_ansi(log);
    let mut out = Vec::new();
    let mut reason: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(r) = line.strip_prefix("Debugger Break, Reason: ") {
            let r = r.strip_prefix('\'').unwrap_or(r);
            reason = Some(r.strip_suffix('\'').unwrap_or(r).to_string());
            continue;
        }
        let Some(frame) = line.strip_prefix("*Frame 0 - ") else {
            continue;
        };
        let Some(r) = reason.take() else { continue };
        let Some((loc, func)) = frame.rsplit_once(" in function '") else {
            continue;
        };
        let (file, at) = match loc.rsplit_once(':') {
            Some((f, n)) => (f, n.parse().ok()),
            None => (loc, None),
        };
        out.push(DebuggerBreak {
            reason: r,
            file: file.to_string(),
            line: at,
            function: func.trim_end_matches('\'').to_string(),
        });
    }
    out
}

/// Marks the test each break stopped (same file and function name) as an
/// error with the break's reason and line, or adds it when the report does not
/// have it (gdUnit4's log has no end line for it). `suite_of` names the suite
/// of a file the way the framework does.
pub fn apply_breaks(
    results: &mut Vec<TestResult>,
    breaks: &[DebuggerBreak],
    suite_of: impl Fn(&str) -> String,
) {
    for b in breaks {
        let found = results
            .iter_mut()
            .find(|r| r.name == b.function && r.file.as_deref() == Some(b.file.as_str()));
        let r = match found {
            Some(r) => r,
            None => {
                results.push(TestResult {
                    suite: suite_of(&b.file),
                    name: b.function.clone(),
                    status: TestStatus::Error,
                    message: None,
                    file: Some(b.file.clone()),
                    line: None,
                });
                let last = results.len() - 1;
                &mut results[last]
            }
        };
        r.status = TestStatus::Error;
        r.message = Some(b.reason.clone());
        r.line = b.line;
    }
}

/// gdUnit4's suite name of a script: its file name without the extension.
pub fn gdunit4_suite_of(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.rsplit_once('.')
        .map_or(name, |(stem, _)| stem)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured (tests/fixtures/godot-4.4.1/README.md, run_tests/).
    const GUT_XML: &str =
        include_str!("../../../tests/fixtures/godot-4.4.1/run_tests/gut/junit.xml");
    const GUT_LOG: &str =
        include_str!("../../../tests/fixtures/godot-4.4.1/run_tests/gut/stdout.log");
    const GDU_XML: &str =
        include_str!("../../../tests/fixtures/godot-4.4.1/run_tests/gdunit4/results.xml");
    const GDU_LOG: &str =
        include_str!("../../../tests/fixtures/godot-4.4.1/run_tests/gdunit4/stdout.log");

    fn sample_expectation(results: &[TestResult], suite: &str, file: &str) {
        assert_eq!(results.len(), 2, "{results:#?}");
        let pass = &results[0];
        assert_eq!(
            (pass.suite.as_str(), pass.name.as_str(), pass.status),
            (suite, "test_passes", TestStatus::Passed)
        );
        assert_eq!(pass.file.as_deref(), Some(file));
        assert_eq!(pass.message, None);
        let fail = &results[1];
        assert_eq!(
            (fail.suite.as_str(), fail.name.as_str(), fail.status),
            (suite, "test_fails", TestStatus::Failed)
        );
        assert_eq!(fail.file.as_deref(), Some(file));
        assert_eq!(fail.line, Some(9), "the assert_* call's line");
        assert_eq!(
            summarize(results),
            Summary {
                total: 2,
                passed: 1,
                failed: 1,
                ..Summary::default()
            }
        );
    }

    #[test]
    fn gut_junit_sample_reports_the_pass_and_the_failure_with_its_line() {
        let r = parse_gut_junit(GUT_XML).unwrap();
        sample_expectation(&r, "res://test/test_sample.gd", "res://test/test_sample.gd");
        assert_eq!(
            r[1].message.as_deref(),
            Some(r#"["apple"] expected to equal ["pear"]:  fruit"#)
        );
    }

    #[test]
    fn gut_console_sample_matches_its_junit_report() {
        let from_log = parse_gut_console(GUT_LOG);
        assert_eq!(from_log, parse_gut_junit(GUT_XML).unwrap());
    }

    #[test]
    fn gut_console_cut_inside_a_test_does_not_report_that_test() {
        // The log as it stood when test_fails had started and not finished.
        let cut = &GUT_LOG[..GUT_LOG.find("[Failed]").unwrap()];
        let r = parse_gut_console(cut);
        assert_eq!(r.len(), 1, "{r:#?}");
        assert_eq!(r[0].name, "test_passes");
    }

    #[test]
    fn gdunit4_junit_sample_reports_the_pass_and_the_failure_with_its_line() {
        let r = parse_gdunit4_junit(GDU_XML).unwrap();
        sample_expectation(&r, "sample_test", "res://test/sample_test.gd");
        let m = r[1].message.as_deref().unwrap();
        assert!(m.starts_with("Expecting:"), "{m}");
        assert!(m.contains("'pear'"), "{m}");
    }

    #[test]
    fn gdunit4_console_sample_matches_its_junit_report_but_for_the_text() {
        let from_log = parse_gdunit4_console(GDU_LOG);
        let from_xml = parse_gdunit4_junit(GDU_XML).unwrap();
        sample_expectation(&from_log, "sample_test", "res://test/sample_test.gd");
        // The console's report is the same failure, line by line.
        let m = from_log[1].message.as_deref().unwrap();
        assert!(m.starts_with("Expecting:"), "{m}");
        assert_eq!(from_log.len(), from_xml.len());
    }

    #[test]
    fn gdunit4_console_cut_inside_a_test_does_not_report_that_test() {
        // The log as it stood when test_fails had started and not finished.
        let cut = &GDU_LOG[..GDU_LOG.find("FAILED").unwrap()];
        let r = parse_gdunit4_console(cut);
        assert_eq!(r.len(), 1, "{r:#?}");
        assert_eq!(r[0].name, "test_passes");
    }

    #[test]
    fn what_is_not_junit_is_an_error_never_a_partial_result() {
        assert!(parse_gut_junit("").is_err());
        assert!(parse_gut_junit("<html/>").is_err());
        let cut = &GUT_XML[..GUT_XML.len() / 2];
        assert!(parse_gut_junit(cut).is_err());
        assert!(parse_gdunit4_junit(&GDU_XML[..GDU_XML.len() / 2]).is_err());
    }

    const GUT_ERROR_LOG: &str =
        include_str!("../../../tests/fixtures/godot-4.4.1/run_tests/gut_error/stdout.log");
    const GDU_ERROR_LOG: &str =
        include_str!("../../../tests/fixtures/godot-4.4.1/run_tests/gdunit4_error/stdout.log");

    fn the_error(r: &[TestResult], suite: &str, file: &str) {
        assert_eq!(r.len(), 2, "{r:#?}");
        assert_eq!(
            (r[0].name.as_str(), r[0].status),
            ("test_passes", TestStatus::Passed)
        );
        let e = &r[1];
        assert_eq!(
            (e.suite.as_str(), e.name.as_str(), e.status),
            (suite, "test_errors", TestStatus::Error)
        );
        assert_eq!((e.file.as_deref(), e.line), (Some(file), Some(10)));
        assert_eq!(
            e.message.as_deref(),
            Some("Invalid call. Nonexistent function 'queue_free' in base 'Nil'.")
        );
    }

    #[test]
    fn a_script_error_under_gut_is_that_tests_error_not_a_risky_pass() {
        let mut r = parse_gut_console(GUT_ERROR_LOG);
        // GUT itself calls it risky (it did not assert).
        assert_eq!(r[1].status, TestStatus::Risky);
        apply_breaks(&mut r, &debugger_breaks(GUT_ERROR_LOG), str::to_string);
        the_error(&r, "res://test/test_error.gd", "res://test/test_error.gd");
    }

    #[test]
    fn a_script_error_under_gdunit4_is_the_test_that_never_ended() {
        let mut r = parse_gdunit4_console(GDU_ERROR_LOG);
        assert_eq!(r.len(), 1, "it has no end line: {r:#?}");
        apply_breaks(&mut r, &debugger_breaks(GDU_ERROR_LOG), gdunit4_suite_of);
        the_error(&r, "error_test", "res://test/error_test.gd");
    }

    #[test]
    fn logs_without_a_break_have_none() {
        assert!(debugger_breaks(GUT_LOG).is_empty());
        assert!(debugger_breaks(GDU_LOG).is_empty());
    }

    #[test]
    fn ansi_sequences_are_removed() {
        assert_eq!(strip_ansi("\u{1b}[38;2;1;2;3mred\u{1b}[0m x"), "red x");
        assert_eq!(strip_ansi("\u{1b}[2J\u{1b}[Ha"), "a");
    }
}
