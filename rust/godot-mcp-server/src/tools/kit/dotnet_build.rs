//! .NET as a child process: the SDK (`DOTNET_ROOT`, else `dotnet` on `PATH`), the
//! project's `.csproj`, one supervised `dotnet build` like every launch (the process
//! plane: journaled intent and receipt, its own process group, a time limit), its output
//! read for MSBuild's diagnostics in their documented canonical form
//! (`godot_mcp_csharp::msbuild`) and returned as data. build_csharp (`tools/csharp/`)
//! runs it; so do the checks below, for the domains that write C#.
//!
//! The launch is `/bin/sh -c 'exec "$0" build …' <dotnet> <project>`: the
//! supervisor appends its own arguments after `--`, which the shell takes as
//! positional parameters it never passes on, so dotnet sees only its own.
//!
//! [`BuildCheck`] is `check: "build"` of write_script, create_script and commit_change:
//! the files applied as one change the journal holds open
//! (`Journal::apply_change_held`), the same build run on them in place, and the
//! journal settling the change from disk (`Journal::finish_held`): `committed` when it
//! builds, `compensated` (every file put back, proven) when it does not, the answer
//! then a `PARSE_ERROR` carrying the build's diagnostics. [`build_for_check`] is
//! get_parse_errors' C# part.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use godot_mcp_csharp::Diagnostic;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::error::{ErrorCode, ToolError};
use crate::planes::process::LaunchSpec;
use crate::respath::ResPath;
use crate::state::AppState;
use crate::tools::Out;
use crate::tools::kit::dotnet::{MAKE_CSPROJ, csprojs};

/// build_csharp's time limit when the call names none, and the build check's.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 300_000;
/// Diagnostics returned at most (the counts are of all).
const MAX_DIAGNOSTICS: usize = 200;

/// build_csharp's result.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct BuildOut {
    project: String,
    /// The build exited 0 with no error.
    pub ok: bool,
    pub exit_code: Option<i32>,
    timed_out: bool,
    error_count: usize,
    warning_count: usize,
    /// Errors first, at most 200.
    pub diagnostics: Vec<Diagnostic>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    diagnostics_truncated: bool,
    transaction_id: String,
    ran_ms: u64,
    /// The output's last lines when the build failed without a diagnostic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
}

/// The `dotnet` executable: `$DOTNET_ROOT/dotnet`, else the first on `PATH`.
pub fn find_dotnet(dotnet_root: Option<&str>, path: Option<&str>) -> Option<PathBuf> {
    let exe = if cfg!(windows) {
        "dotnet.exe"
    } else {
        "dotnet"
    };
    let is_exec = |p: &Path| {
        let meta = std::fs::metadata(p);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            meta.is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            meta.is_ok_and(|m| m.is_file())
        }
    };
    if let Some(root) = dotnet_root.filter(|r| !r.is_empty()) {
        let p = Path::new(root).join(exe);
        if is_exec(&p) {
            return Some(p);
        }
    }
    std::env::split_paths(path?)
        .map(|d| d.join(exe))
        .find(|p| is_exec(p))
}

/// The refusal when no SDK is found: what to install, and where it is looked for.
pub(crate) fn no_sdk() -> ToolError {
    ToolError::new(
        ErrorCode::PreconditionFailed,
        "no .NET SDK found: DOTNET_ROOT does not hold a dotnet executable and there is no \
         dotnet on PATH; nothing was built",
    )
    .required("dotnet_sdk")
    .hint(
        "Install the .NET SDK 8.0 or later (https://dotnet.microsoft.com/download; Godot 4.4+ \
         projects target net8.0), then set DOTNET_ROOT to its folder or put dotnet on the \
         server's PATH, and restart the server.",
    )
}

/// The project to build: the argument, else the single `.csproj` at the root.
pub(crate) fn pick_project(
    state: &AppState,
    arg: Option<&ResPath>,
) -> Result<(String, PathBuf), ToolError> {
    if let Some(p) = arg {
        let real = state.project.resolve("project", p)?;
        let ext = p.extension().unwrap_or_default().to_ascii_lowercase();
        if !matches!(ext.as_str(), "csproj" | "sln" | "slnx") {
            return Err(ToolError::invalid_params(
                "project",
                format!("{p} is not a .csproj or .sln"),
            ));
        }
        if !real.is_file() {
            return Err(
                ToolError::new(ErrorCode::ResourceNotFound, format!("{p} does not exist"))
                    .param("project"),
            );
        }
        return Ok((p.to_string(), real));
    }
    let root = state.project.root();
    let found = csprojs(root);
    match found.as_slice() {
        [] => Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            "the project has no .csproj beside project.godot; nothing was built",
        )
        .hint(MAKE_CSPROJ)),
        [one] => {
            let res = ResPath::parse(&one.path).map_err(|e| ToolError::internal(e.0))?;
            Ok((one.path.clone(), state.project.resolve("project", &res)?))
        }
        many => Err(ToolError::invalid_params(
            "project",
            format!(
                "the project has {} .csproj files ({}): name one",
                many.len(),
                many.iter()
                    .map(|p| p.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Errors first, then warnings, each in output order.
pub(crate) fn order(mut d: Vec<Diagnostic>) -> Vec<Diagnostic> {
    d.sort_by_key(|x| x.severity != "error");
    d
}

/// The SDK's `dotnet` from the server's environment, or the refusal saying what to
/// install.
pub(crate) fn sdk() -> Result<PathBuf, ToolError> {
    find_dotnet(
        std::env::var("DOTNET_ROOT").ok().as_deref(),
        std::env::var("PATH").ok().as_deref(),
    )
    .ok_or_else(no_sdk)
}

/// One supervised `dotnet build` of `real` (`project` as the answer names it), its
/// output read for MSBuild's diagnostics.
pub(crate) async fn run_build(
    state: &Arc<AppState>,
    dotnet: &Path,
    project: String,
    real: &Path,
    timeout_ms: u64,
) -> Out<BuildOut> {
    let session = launch_build(state, dotnet, real).await?;
    let ended = session
        .wait_or_kill(Duration::from_millis(timeout_ms))
        .await
        .ok_or_else(|| ToolError::internal("the killed build did not end"))?;
    let dir = session.output_dir();
    let read = |n: &str| {
        std::fs::read(dir.join(n))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::Io,
                    format!(
                        "the build ran, but its {n} cannot be read ({}); its diagnostics are \
                         unknown, not none",
                        e.kind()
                    ),
                )
                .details(json!({"transaction_id": session.txn.to_string()}))
            })
    };
    let (stdout, stderr) = (read("stdout.log")?, read("stderr.log")?);
    let all = order(godot_mcp_csharp::parse_diagnostics(&format!(
        "{stdout}\n{stderr}"
    )));
    let error_count = all.iter().filter(|d| d.severity == "error").count();
    let warning_count = all.len() - error_count;
    let ok = ended.code == Some(0) && error_count == 0 && !ended.timed_out;
    let output_tail = (!ok && error_count == 0).then(|| {
        let text = if stderr.trim().is_empty() {
            &stdout
        } else {
            &stderr
        };
        crate::tools::kit::godot_process::tail_lines(text, 15)
    });
    let truncated = all.len() > MAX_DIAGNOSTICS;
    Ok(BuildOut {
        project,
        ok,
        exit_code: ended.code,
        timed_out: ended.timed_out,
        error_count,
        warning_count,
        diagnostics: all.into_iter().take(MAX_DIAGNOSTICS).collect(),
        diagnostics_truncated: truncated,
        transaction_id: session.txn.to_string(),
        ran_ms: ended.ran_ms,
        output_tail,
    })
}

// ---------------------------------------------------------------------------------
// check: "build" — a write or a change kept only if the project still builds
// ---------------------------------------------------------------------------------

/// A write's or a change's check after its files are in place: `build`, `dotnet build`
/// with the files in place (a failed build puts them back). Its schema is the
/// smallest that says so ([`check_schema`]): every tool list carries it three times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Check {
    Build,
}

/// `check`'s schema: `{"enum":["build"],"type":"string"}`.
pub(crate) fn check_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": ["build"], "type": "string"})
}

/// What a build check needs, found before anything is written: the SDK and the
/// project's one `.csproj` (else the refusals build_csharp gives).
#[derive(Debug, Clone)]
pub(crate) struct BuildCheck {
    dotnet: PathBuf,
    project: String,
    real: PathBuf,
}

impl BuildCheck {
    /// The check for `state`'s project, or why it cannot run (nothing is written).
    pub(crate) fn prepare(state: &AppState) -> Result<Self, ToolError> {
        let dotnet = sdk()?;
        let (project, real) = pick_project(state, None)?;
        Ok(Self {
            dotnet,
            project,
            real,
        })
    }

    /// One file written with the check (write_script, create_script): applied as a
    /// one-file change held open while the project builds. Returns its transaction.
    /// Inside an agent's change nothing is staged: commit_change takes the check.
    pub(crate) fn write(
        &self,
        state: &Arc<AppState>,
        call: &mut crate::planes::project::JournalCall,
        param: &str,
        path: &ResPath,
        bytes: &[u8],
        expected: crate::planes::project::Expect<'_>,
    ) -> Result<String, ToolError> {
        if let Some(stage) = &call.stage {
            return Err(ToolError::invalid_params(
                "check",
                format!(
                    "inside change {} the writes are staged, not built; nothing was staged",
                    stage.lock().id
                ),
            )
            .hint("Drop check here and pass check: \"build\" to commit_change."));
        }
        let steps = [crate::planes::project::ChangeStep {
            path,
            bytes: Some(bytes),
            expected,
        }];
        match crate::planes::project::apply_change_checked(
            state,
            call,
            param,
            &steps,
            None,
            None,
            Some("build"),
        )? {
            // A replay of a first run the check put back is no success.
            godot_mcp_journal::Applied::Done(godot_mcp_journal::ChangeOutcome::Replayed(p))
                if p.status != godot_mcp_journal::TxnStatus::Committed =>
            {
                Err(ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "this idempotency_key's first run was {} ({}); nothing was written",
                        p.status.as_str(),
                        p.reason.unwrap_or_default()
                    ),
                )
                .param(crate::tools::IDEMPOTENCY_KEY)
                .details(json!({"transaction_id": p.transaction_id.to_string(),
                                "status": p.status.as_str()})))
            }
            godot_mcp_journal::Applied::Done(done) => Ok(done.transaction_id().to_string()),
            godot_mcp_journal::Applied::Held(held) => self
                .settle(state, held, None, &[path.to_string()])
                .map(|(txn, _)| txn),
        }
    }

    /// Runs the check on a change the journal holds open (`held`), then has the
    /// journal settle it: a build that passes keeps every file (`committed`), one
    /// that fails or cannot run puts every file back (`compensated`, derived from
    /// disk). Blocking: called off the async threads, inside the runtime.
    pub(crate) fn settle(
        &self,
        state: &Arc<AppState>,
        held: godot_mcp_journal::HeldChange,
        editor: Option<&mut dyn godot_mcp_journal::EditorHook>,
        files: &[String],
    ) -> Result<(String, BuildOut), ToolError> {
        let built = tokio::runtime::Handle::current().block_on(run_build(
            state,
            &self.dotnet,
            self.project.clone(),
            &self.real,
            DEFAULT_TIMEOUT_MS,
        ));
        let why = match &built {
            Ok(b) if b.ok => String::new(),
            Ok(b) if b.timed_out => "the build check timed out".to_owned(),
            Ok(b) => format!(
                "the build check failed ({} error{})",
                b.error_count,
                if b.error_count == 1 { "" } else { "s" }
            ),
            Err(e) => format!("the build check could not run ({})", e.message),
        };
        let keep = why.is_empty();
        let why = if keep {
            // Put back although kept: a file left its new state during the build.
            "the build passed, but not every file was still as written after it".to_owned()
        } else {
            why
        };
        let end = crate::planes::project::finish_held(state, held, keep, &why, editor);
        let txn = end.transaction_id.to_string();
        let status = end.status.as_str();
        match (built, end.status) {
            (Ok(b), godot_mcp_journal::TxnStatus::Committed) if keep => Ok((txn, b)),
            (built, godot_mcp_journal::TxnStatus::Compensated) => {
                let (code, mut msg, build) = match built {
                    Ok(b) => (
                        ErrorCode::ParseError,
                        format!("{why}: {}", first_error(&b)),
                        Some(b),
                    ),
                    Err(e) => (e.code, why.clone(), None),
                };
                msg.push_str(&format!(
                    "; every file was put back (transaction {txn} compensated)"
                ));
                Err(ToolError::new(code, msg)
                    .hint(
                        "Fix the errors in details.build.diagnostics and write again \
                         (the files are as before the call).",
                    )
                    .details(json!({
                        "transaction_id": txn,
                        "status": status,
                        "files": files,
                        "build": build,
                    })))
            }
            (built, _) => Err(ToolError::new(
                ErrorCode::Io,
                format!(
                    "{}; the change is {status} ({})",
                    why,
                    end.reason.unwrap_or_default()
                ),
            )
            .hint(
                "list_transactions shows the change and its files; re-plan from the current state.",
            )
            .details(json!({
                "transaction_id": txn,
                "status": status,
                "files": files,
                "build": built.ok(),
            }))),
        }
    }
}

/// get_parse_errors' C# part: one `dotnet build` of the project's `.csproj`
/// (supervised, default time limit). `Err` with PRECONDITION_FAILED when there is
/// no SDK or no single `.csproj`: the C# files cannot be checked, and it says why.
pub(crate) async fn build_for_check(state: &Arc<AppState>) -> Out<BuildOut> {
    // A read-only tool runs no project code past an approval gate: build_csharp, gated,
    // gives the same diagnostics.
    if state.safety.approval.is_active() {
        return Err(ToolError::new(
            ErrorCode::PreconditionFailed,
            "a build runs the project's MSBuild targets and analyzers, which this server runs \
             only with approval",
        )
        .hint("Call build_csharp (it asks for approval): its diagnostics are the same."));
    }
    let check = BuildCheck::prepare(state)?;
    run_build(
        state,
        &check.dotnet,
        check.project,
        &check.real,
        DEFAULT_TIMEOUT_MS,
    )
    .await
}

/// The first error, as MSBuild printed it (`Mob.cs(15,20): CS1002: ; expected`).
fn first_error(b: &BuildOut) -> String {
    b.diagnostics
        .iter()
        .find(|d| d.severity == "error")
        .map_or_else(
            || b.output_tail.clone().unwrap_or_default(),
            |d| {
                let file = d
                    .file
                    .as_deref()
                    .map_or("", |f| f.rsplit('/').next().unwrap_or(f));
                format!(
                    "{file}({},{}): {}: {}",
                    d.line.unwrap_or(0),
                    d.column.unwrap_or(0),
                    d.code.as_deref().unwrap_or("error"),
                    d.message
                )
            },
        )
}

/// The supervised `dotnet build`.
async fn launch_build(
    state: &Arc<AppState>,
    dotnet: &Path,
    project: &Path,
) -> Result<Arc<crate::planes::process::Session>, ToolError> {
    let script = "export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1; \
                  exec \"$0\" build \"$1\" -nologo -p:GenerateFullPaths=true";
    state
        .process
        .launch(
            state,
            LaunchSpec {
                purpose: "build_csharp",
                program: PathBuf::from("/bin/sh"),
                args: vec![
                    "-c".into(),
                    script.into(),
                    dotnet.display().to_string(),
                    project.display().to_string(),
                ],
                user_args: vec![],
                tool_family: "csharp",
                operation: "build_csharp",
                parent: None,
                writes_disk: true,
            },
        )
        .await
}

#[cfg(test)]
#[cfg(unix)] // the tests set the executable bit
mod tests {
    use super::*;

    #[test]
    fn dotnet_is_found_from_dotnet_root_then_path() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("root"), dir.path().join("bin"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
            let f = d.join("dotnet");
            std::fs::write(&f, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = b.display().to_string();
        assert_eq!(
            find_dotnet(Some(&a.display().to_string()), Some(&path)),
            Some(a.join("dotnet"))
        );
        assert_eq!(find_dotnet(None, Some(&path)), Some(b.join("dotnet")));
        // A DOTNET_ROOT without dotnet falls back to PATH; nothing anywhere is None.
        assert_eq!(
            find_dotnet(Some("/nonexistent"), Some(&path)),
            Some(b.join("dotnet"))
        );
        assert_eq!(find_dotnet(None, Some("/nonexistent")), None);
        let e = no_sdk();
        assert_eq!(e.code, ErrorCode::PreconditionFailed);
        assert!(
            e.hint
                .as_deref()
                .is_some_and(|h| h.contains(".NET SDK 8.0"))
        );
    }
}
