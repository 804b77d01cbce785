//! Godot as a child process: locate the binary (from `Config`), run it under the process
//! plane's supervisor and wait for it, and the runs every domain shares: `--version`,
//! `--doctool`, the parse check (`--check-only`'s load, ended at its verdict), `--import`. Every tool that runs Godot (class reference,
//! shaders, scripts, tests, export, runtime) goes through here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::GodotLookup;
use crate::error::{ErrorCode, ToolError};
use crate::planes::process::{Ended, LaunchSpec, NO_CONTROL_ARGS_PURPOSE, Session};
use crate::rules::find_godot_binary;
use crate::state::AppState;

/// Longest one parse check of a script may take.
pub(crate) const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest `godot --version` may take.
pub(crate) const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// The Godot binary this server launches: its [`GodotLookup`] from `Config`, resolved
/// now (the godot_binary precondition: an executable file).
pub(crate) fn godot(state: &AppState) -> Result<PathBuf, ToolError> {
    locate(&state.config.godot)
}

/// The one resolver of a [`GodotLookup`] (`serve`'s tools and `doctor`).
pub(crate) fn locate(lookup: &GodotLookup) -> Result<PathBuf, ToolError> {
    find_godot_binary(lookup.bin.as_deref(), lookup.path.as_deref())
}

/// A launch of `program args…` with no user arguments and no parent that writes no
/// project file (`purpose` is what the supervisor's control arguments key on).
pub(crate) fn plain_launch(
    purpose: &'static str,
    tool_family: &'static str,
    operation: &'static str,
    program: PathBuf,
    args: Vec<String>,
) -> LaunchSpec {
    LaunchSpec {
        purpose,
        program,
        args,
        user_args: vec![],
        tool_family,
        operation,
        parent: None,
        writes_disk: false,
    }
}

/// Wait for a supervised process to end, killing it after `limit`; `killed` is the
/// internal error should it outlive its kill.
pub(crate) async fn wait_ended(
    session: &Session,
    limit: Duration,
    killed: &'static str,
) -> Result<Ended, ToolError> {
    session
        .wait_or_kill(limit)
        .await
        .ok_or_else(|| ToolError::internal(killed))
}

/// Run `program args…` (purpose = `operation`) under the supervisor (a journaled process_launch) and wait
/// for it, at most `limit`; returns how it ended, its stdout and its stderr.
pub(crate) async fn run_supervised(
    state: &Arc<AppState>,
    program: PathBuf,
    args: Vec<String>,
    operation: &'static str,
    limit: Duration,
) -> Result<(Ended, String, String), ToolError> {
    let spec = plain_launch(operation, "project.scripts", operation, program, args);
    let session = state.process.launch(state, spec).await?;
    let ended = wait_ended(&session, limit, "the killed Godot process did not end").await?;
    if ended.timed_out {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "Godot ({operation}) did not finish within {} s",
                limit.as_secs()
            ),
        ));
    }
    let (stdout, stderr) = read_output(&session, operation)?;
    Ok((ended, stdout, stderr))
}

/// ended session's stdout and stderr. A log that cannot be read is an error, never
/// empty output: a parse check reading nothing would report "no errors".
fn read_output(session: &Session, operation: &str) -> Result<(String, String), ToolError> {
    let dir = session.output_dir();
    let read = |n: &str| {
        let path = dir.join(n);
        std::fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::Io,
                    format!(
                        "Godot ({operation}) ran, but its {n} cannot be read ({}); its output \
                         is unknown, not empty",
                        e.kind()
                    ),
                )
            })
    };
    Ok((read("stdout.log")?, read("stderr.log")?))
}

/// The engine's version line, from `godot --version`.
pub(crate) async fn engine_version(
    state: &Arc<AppState>,
    program: &Path,
) -> Result<String, ToolError> {
    let (_, stdout, stderr) = run_supervised(
        state,
        program.to_path_buf(),
        vec!["--version".into()],
        "engine_version",
        VERSION_TIMEOUT,
    )
    .await?;
    stdout
        .lines()
        .map(str::trim)
        .rfind(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string)
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::PreconditionFailed,
                format!(
                    "{} --version printed no version: {}",
                    program.display(),
                    stderr.trim()
                ),
            )
        })
}

/// `godot --headless --path <dir> --doctool <dir>`: the class reference's XML pages
/// written into `dir`, an empty private folder (doctool erases the doc folders of its
/// target, and with `--path` to it no project is loaded); at most `limit`.
pub(crate) async fn doctool(
    state: &Arc<AppState>,
    program: &Path,
    dir: &Path,
    limit: Duration,
) -> Result<(Ended, String, String), ToolError> {
    let dir = dir.display().to_string();
    let args = vec![
        "--headless".into(),
        "--path".into(),
        dir.clone(),
        "--doctool".into(),
        dir,
    ];
    run_supervised(state, program.to_path_buf(), args, "doctool", limit).await
}

/// One parse error, as Godot reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct ParseErrorItem {
    pub file: String,
    pub line: Option<u32>,
    /// C# only (MSBuild reports it; Godot does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    pub message: String,
}

/// The parse errors in Godot's `--check-only` output for `path`: `SCRIPT ERROR: Parse
/// Error:` headlines, and script errors located in that file. Engine `ERROR:` lines
/// (the C++ "Failed to load script" echo, "No renderers available") are not the
/// script's errors and are left out.
pub(crate) fn parse_check_output(path: &str, output: &str) -> Vec<ParseErrorItem> {
    crate::planes::process::errors::parse(output)
        .into_iter()
        .filter(|e| {
            e.kind == "parse_error" || (e.kind == "script_error" && e.file.as_deref() == Some(path))
        })
        .map(|e| ParseErrorItem {
            file: e.file.unwrap_or_else(|| path.to_string()),
            line: e.line,
            column: None,
            message: e.message,
        })
        .collect()
}

/// One `.gd` through Godot's parser ([`check_only`]): how Godot ended, the file's
/// errors from both streams, and stderr (for a failure with no error to show).
pub(crate) struct GdChecked {
    pub ended: Ended,
    pub errors: Vec<ParseErrorItem>,
    stderr: String,
    /// The checker's verdict: the engine loaded the script (or not).
    verdict: Option<bool>,
}

impl GdChecked {
    /// Godot parsed the file: its verdict (else exit 0) and no error.
    pub(crate) fn ok(&self) -> bool {
        self.errors.is_empty() && self.verdict.unwrap_or(self.ended.code == Some(0))
    }

    /// Godot failed without an error we can parse.
    pub(crate) fn unexplained(&self) -> bool {
        !self.ok() && self.errors.is_empty()
    }

    /// The last ten lines of Godot's stderr.
    pub(crate) fn output_tail(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }
}

/// Parses `script` (a res:// path) with Godot's own GDScript parser and analyzer.
pub(crate) async fn check_gd(
    state: &Arc<AppState>,
    program: &Path,
    script: &str,
    limit: Duration,
) -> Result<GdChecked, ToolError> {
    let (ended, stdout, stderr, verdict) = check_only(state, program, script, limit).await?;
    let mut errors = parse_check_output(script, &stderr);
    errors.extend(parse_check_output(script, &stdout));
    Ok(GdChecked {
        ended,
        errors,
        stderr,
        verdict,
    })
}

/// The script the parse check runs (`--script`, from the server's state folder): it
/// loads one script as `--check-only` does (the same `ResourceLoader` load, the same
/// `SCRIPT ERROR` lines) and prints its verdict on stderr. The check then ends when
/// the verdict is printed, not when Godot has quit: a quitting Godot spends about 2 s
/// joining its threads (4.4.1, measured: its joypad monitor sleeps in 1 s steps), which
/// was nine tenths of every `write_script` (agent run 10: 2.1 s a call).
const CHECKER: &str = "extends SceneTree\n\
func _initialize():\n\
\tvar path := \"\"\n\
\tfor a in OS.get_cmdline_user_args():\n\
\t\tif a.begins_with(\"--godot-mcp-check=\"):\n\
\t\t\tpath = a.trim_prefix(\"--godot-mcp-check=\")\n\
\tvar s = ResourceLoader.load(path, \"\", ResourceLoader.CACHE_MODE_IGNORE)\n\
\tvar ok: bool = s is Script and (s.can_instantiate() or (s.has_method(\"is_abstract\") and s.is_abstract()))\n\
\tprinterr(\"godot-mcp-checked \", \"ok\" if ok else \"failed\")\n\
\tquit(0 if ok else 1)\n";
/// The verdict line's start.
const VERDICT: &str = "godot-mcp-checked ";
/// How often the check looks for the verdict.
const VERDICT_POLL: Duration = Duration::from_millis(10);

/// The checker's path: written into the state folder when missing or different.
fn checker(state: &AppState) -> Result<PathBuf, ToolError> {
    let path = state.journal.lock().state_dir().join("check_script.gd");
    if std::fs::read(&path).ok().as_deref() != Some(CHECKER.as_bytes()) {
        std::fs::write(&path, CHECKER).map_err(|e| {
            ToolError::new(
                ErrorCode::Io,
                format!("could not write the parse checker {}: {e}", path.display()),
            )
        })?;
    }
    Ok(path)
}

/// The verdict in `stderr`: `Some(true)` when the engine loaded the script.
fn verdict_of(stderr: &str) -> Option<bool> {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix(VERDICT))
        .map(|v| v.trim() == "ok")
}

/// Godot parses one script (see [`CHECKER`]) and reports its errors on stderr; at most
/// `limit`. How Godot ended (killed once its verdict is printed), stdout, stderr, and
/// the verdict (`None` when Godot printed none).
pub(crate) async fn check_only(
    state: &Arc<AppState>,
    program: &Path,
    script: &str,
    limit: Duration,
) -> Result<(Ended, String, String, Option<bool>), ToolError> {
    let args = vec![
        "--headless".into(),
        "--path".into(),
        state.project.root().display().to_string(),
        "--script".into(),
        checker(state)?.display().to_string(),
    ];
    let mut spec = plain_launch(
        "check_only",
        "project.scripts",
        "check_only",
        program.to_path_buf(),
        args,
    );
    spec.user_args = vec![format!("--godot-mcp-check={script}")];
    let session = state.process.launch(state, spec).await?;
    let stderr_log = session.output_dir().join("stderr.log");
    let deadline = tokio::time::Instant::now() + limit;
    let ended = loop {
        if let Some(e) = session.ended() {
            break Some(e);
        }
        let printed = std::fs::read(&stderr_log).unwrap_or_default();
        if verdict_of(&String::from_utf8_lossy(&printed)).is_some() {
            // Nothing is left to print: killed, not waited for.
            break session.stop(Duration::ZERO).await;
        }
        if tokio::time::Instant::now() >= deadline {
            session.kill_for_timeout();
            break session.wait(Duration::from_secs(5)).await;
        }
        tokio::time::sleep(VERDICT_POLL).await;
    };
    let ended = ended.ok_or_else(|| ToolError::internal("the killed Godot process did not end"))?;
    let (stdout, stderr) = read_output(&session, "check_only")?;
    let verdict = verdict_of(&stderr);
    if ended.timed_out && verdict.is_none() {
        return Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "Godot (check_only) did not finish within {} s",
                limit.as_secs()
            ),
        ));
    }
    Ok((ended, stdout, stderr, verdict))
}

/// `godot --headless --path <project> --import`: Godot imports the project (writes
/// `.godot/` and `.import` files) and quits. A launch of `tool_family`'s `operation`
/// without control arguments (no probe), waited for at most `limit`; the session names
/// its journaled launch.
pub(crate) async fn import(
    state: &Arc<AppState>,
    program: &Path,
    tool_family: &'static str,
    operation: &'static str,
    limit: Duration,
) -> Result<(Arc<Session>, Ended), ToolError> {
    let args = vec![
        "--headless".into(),
        "--path".into(),
        state.project.root().display().to_string(),
        "--import".into(),
    ];
    let spec = plain_launch(
        NO_CONTROL_ARGS_PURPOSE,
        tool_family,
        operation,
        program.to_path_buf(),
        args,
    );
    let session = state.process.launch(state, spec).await?;
    let ended = wait_ended(&session, limit, "the killed import did not end").await?;
    Ok((session, ended))
}

/// The end of a Godot run's output: its last `max` bytes (from a char boundary),
/// and whether anything before them was cut.
pub(crate) fn tail(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut cut = text.len() - max;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    (&text[cut..], true)
}

/// The last `n` lines of a Godot run's output.
pub(crate) fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A fresh private folder under `base` (created if missing), named `<prefix><random>`,
/// removed when the guard is dropped: on every return and when the call's future is
/// dropped mid-await (a cancelled call), so no run of Godot leaves one behind.
pub(crate) fn temp_folder(base: &Path, prefix: &str) -> Result<tempfile::TempDir, ToolError> {
    std::fs::create_dir_all(base).map_err(|e| ToolError::internal(e.to_string()))?;
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .map_err(|e| ToolError::internal(format!("a work folder in {}: {e}", base.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_starts_on_a_char_boundary_and_says_whether_it_cut() {
        assert_eq!(tail("abc", 5), ("abc", false));
        // "é" is bytes 1..3: the last 4 bytes would start inside it.
        assert_eq!(tail("h\u{e9}llo", 4), ("llo", true));
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail_lines("a", 10), "a");
    }

    /// A call dropped while it awaits (a cancelled tools/call) leaves no work folder.
    #[tokio::test]
    async fn a_cancelled_call_leaves_no_work_folder() {
        let base = tempfile::tempdir().unwrap();
        let (made, seen) = tokio::sync::oneshot::channel();
        let root = base.path().to_path_buf();
        let call = async move {
            let work = temp_folder(&root, "doctool-").unwrap();
            made.send(work.path().to_path_buf()).unwrap();
            std::future::pending::<()>().await;
            drop(work);
        };
        let handle = tokio::spawn(async move {
            tokio::pin!(call);
            call.await
        });
        let folder = seen.await.unwrap();
        assert!(folder.is_dir());
        handle.abort();
        assert!(handle.await.unwrap_err().is_cancelled());
        assert!(!folder.exists(), "{} outlived its call", folder.display());
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }

    /// The verdict is the checker's own line, whatever Godot printed around it; none
    /// printed is `None` (the exit code then decides).
    #[test]
    fn the_checker_verdict_is_read_from_its_line() {
        let bad = include_str!("../../../../../tests/fixtures/godot-4.4.1/check_only/bad.stderr");
        assert_eq!(
            verdict_of(&format!("{bad}godot-mcp-checked failed\n")),
            Some(false)
        );
        assert_eq!(verdict_of("ERROR: x\ngodot-mcp-checked ok\n"), Some(true));
        assert_eq!(verdict_of(bad), None);
        assert!(CHECKER.contains(&format!("printerr(\"{VERDICT}\"")));
    }
}
