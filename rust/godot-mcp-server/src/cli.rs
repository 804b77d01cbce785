//! The `godot-mcp` command line.
//!
//! stdout belongs to MCP alone; everything a person reads (which project is served,
//! how to connect, errors) goes to stderr.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use rmcp::ServiceExt;
#[allow(deprecated)] // MCP logging (SEP-2577); see logging.rs
use rmcp::model::LoggingLevel;

use crate::config::Config;
use crate::project_root::Project;
use crate::rules::{SafetyState, ToolsetSelection};
use crate::server::McpServer;
use crate::state::AppState;

const AFTER_HELP: &str = "\
Environment:
  GODOT_MCP_PROJECT   the project folder to serve (same as serve --project)
  GODOT_MCP_STATE_DIR where journals and leases live (default: $XDG_STATE_HOME/godot-mcp,
                      else ~/.local/state/godot-mcp); one sub-folder per project
  GODOT_MCP_LOG       log level on stderr: error, warn, info (default), debug, trace
  GODOT_BIN           the Godot 4 executable for tools that launch Godot (else godot/godot4
                      on PATH); reading and editing files needs no Godot at all
  GODOT_MCP_TOOLSETS  the toolsets ceiling (same as serve --toolsets); `all` for clients
                      that search tools themselves
  GODOT_MCP_APPROVAL_WEBHOOK     http:// URL asked to approve each mutating/destructive call
  GODOT_MCP_APPROVAL_FAIL_OPEN   true: allow calls when the webhook is unreachable (default: deny)
  GODOT_MCP_APPROVAL_TIMEOUT_MS  how long the webhook may take (default 10000)
  GODOT_MCP_APPROVAL_REQUIRE     true: ask the human through the MCP client (elicitation)
  GODOT_MCP_HTTP      serve over streamable HTTP at this address (same as serve --http)
  GODOT_MCP_TRACE     append one JSON line per tool call to this file (same as serve --trace)
  GODOT_MCP_EDITOR_BRIDGE=off   do not start the editor bridge (no discovery file)
  GODOT_MCP_AUTO_EDITOR=off     an editing tool with no editor connected refuses instead of
                                starting this server's headless editor and waiting for it
  GODOT_MCP_EDITOR_TIMEOUT_MS   how long a tool waits for the editor's answer (default 10000);
                                a mutating command that times out may still run: may_have_applied
  GODOT_MCP_MAX_IMAGE_BYTES     largest screenshot a tool returns, bytes of PNG (default 4194304)
  GODOT_MCP_IMPORT_DIRS         `:`-separated folders import_asset may copy from (same as
                                serve --import-dir); a source elsewhere is PATH_REFUSED
  GODOT_MCP_AUTH_TOKEN
                      bearer token HTTP clients must send (Authorization: Bearer ...);
                      required to listen on a non-loopback address, enforced whenever set
  GODOT_MCP_ALLOWED_HOSTS, GODOT_MCP_ALLOWED_ORIGINS
                      comma-separated, same as --allowed-host / --allowed-origin

Stopping: closing stdin, Ctrl-C (SIGINT) and SIGTERM are all a normal stop: every
supervised session (play_scene, start_editor, exports) is stopped and recorded first,
then the server exits 0.

Connect a client (example for Claude Code):
  claude mcp add godot -- godot-mcp serve --project /path/to/your/game
Or serve many agents over HTTP on this machine:
  godot-mcp serve --project /path/to/your/game --http 127.0.0.1:8765
  (stderr prints: godot-mcp serve: listening on http://127.0.0.1:8765/mcp)";

/// godot-mcp: let AI agents edit a Godot 4 project safely and provably.
///
/// An MCP server for one Godot project. Read tools work on the project's files
/// alone (no editor, no Godot binary needed); every tool declares a safety class.
#[derive(Debug, Parser)]
#[command(name = "godot-mcp", version, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per run: the size of `serve`'s options costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve one Godot project to an MCP client over stdio (or to many over HTTP).
    ///
    /// The MCP client starts this command and speaks JSON-RPC on its stdin/stdout;
    /// logs go to stderr. With --http, agents connect to http://ADDR/mcp instead.
    #[command(after_help = AFTER_HELP)]
    Serve(ServeArgs),

    /// Inspect and resolve journaled transactions (operator commands; local shell only).
    #[command(subcommand)]
    Transaction(TransactionCommand),

    /// Self-diagnostics: the process boundary in use and why, the Godot binary,
    /// the displaced-autoload fact, the state dir and the lease holder.
    Doctor(DoctorArgs),

    /// Write or merge an MCP client's config file (claude-code, claude-desktop, cursor,
    /// vscode, codex) so it starts this binary for one project; idempotent, keeps a
    /// backup, never removes other servers; --dry-run shows the change.
    SetupClient(crate::setup_client::SetupClientArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct DoctorArgs {
    /// The Godot project folder (default: the current folder or a parent).
    #[arg(long, env = "GODOT_MCP_PROJECT")]
    pub project: Option<PathBuf>,
    /// Where journals and leases live.
    #[arg(long, env = "GODOT_MCP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TransactionCommand {
    /// Resolve a quarantined transaction with a proof (see docs/recovery.md).
    ///
    /// Re-derives every proof field itself against the current project object and
    /// generation, and journals exactly one proof-backed transition — or refuses with a
    /// non-zero exit and changes nothing. Start with `--operation reconcile`, or with
    /// `--dry-run`. Needs the project's lease: stop the server first. There is no
    /// `--force`.
    ///
    /// Exit status: 0 done (or would be done, with --dry-run); 1 refused (unproven,
    /// mismatched proof, wrong project or generation, not quarantined, I/O error);
    /// 2 bad arguments; 3 the project's lease is held by a running server.
    #[command(after_help = REPAIR_HELP)]
    Repair(RepairArgs),
}

const REPAIR_HELP: &str = "\
Example:
  godot-mcp transaction repair \\
    --project /srv/projects/my-game \\
    --transaction-id 00000000-0000-0000-0000-000000000301 \\
    --operation reconcile \\
    --proof-file ./proof.json \\
    --dry-run";

#[derive(Debug, clap::Args)]
pub(crate) struct RepairArgs {
    /// Folder of the Godot project (the one holding project.godot).
    #[arg(long, value_name = "PATH")]
    pub project: PathBuf,
    /// The transaction to repair, as `list_transactions` shows it.
    #[arg(long, value_name = "ID")]
    pub transaction_id: String,
    /// reconcile | compensate | terminate | acknowledge-safe-state
    #[arg(long, value_name = "OP")]
    pub operation: String,
    /// The repair-proof JSON file (schema in docs/recovery.md).
    #[arg(long, value_name = "FILE")]
    pub proof_file: PathBuf,
    /// Re-derive and report what would be recorded; record nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Where journals live (as for serve).
    #[arg(long, env = "GODOT_MCP_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Folder of the Godot project (the one holding project.godot). Default: the
    /// nearest folder at or above the working directory that holds project.godot.
    #[arg(long, env = "GODOT_MCP_PROJECT", value_name = "PATH")]
    pub project: Option<PathBuf>,

    /// Where journals and leases live; one sub-folder per project.
    #[arg(long, env = "GODOT_MCP_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Log level on stderr.
    #[arg(long, env = "GODOT_MCP_LOG", value_name = "LEVEL", default_value = "info",
          value_parser = ["error", "warn", "info", "debug", "trace"])]
    pub log_level: String,

    /// The toolsets an agent may use, and that are enabled at start: `default` (the
    /// core), `all`, or names separated by commas; `-name` removes one (e.g.
    /// `default,scene_edit`). Unset: every toolset is within reach, the core is
    /// enabled, and agents enable more with manage_toolsets. `all` lists every tool,
    /// for clients that search tools themselves.
    #[arg(long, env = "GODOT_MCP_TOOLSETS", value_name = "LIST")]
    pub toolsets: Option<String>,
    /// Serve MCP over streamable HTTP at ADDR (an IP:port, e.g. 127.0.0.1:8765; port 0
    /// picks a free one) instead of stdio; the endpoint is http://ADDR/mcp. Loopback
    /// only unless GODOT_MCP_AUTH_TOKEN is set. Requests whose Host is not this
    /// server's, or that come from a browser page of another Origin, are refused (403).
    #[arg(long, env = "GODOT_MCP_HTTP", value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,

    /// Append one JSON line per tool call to FILE (created 0600; kept and appended to
    /// if it exists): {"ts", "tool", "duration_ms", "outcome": ok|refused|error,
    /// "error_code", "bytes_in", "bytes_out"}, flushed as each call ends. For
    /// measuring agents (bench/agent-tasks/run.md).
    #[arg(long, env = "GODOT_MCP_TRACE", value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Also start a managed Godot editor (`godot -e --headless --path <project>`) as a
    /// supervised session (stdio: before serving; --http: once the socket accepts), so
    /// the first editing call finds it loaded; the godot_mcp add-on in it connects to
    /// this server by itself. Stopped with the server.
    #[arg(long)]
    pub editor: bool,

    /// With --http: also accept this Host (`name` at the bound port, or `name:port`),
    /// e.g. the machine's LAN name when listening on 0.0.0.0. Repeatable; ignored
    /// without --http (so the env var can be set for every run).
    #[arg(
        long = "allowed-host",
        env = "GODOT_MCP_ALLOWED_HOSTS",
        value_name = "HOST",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    /// With --http: also accept requests from browser pages of this origin
    /// (`http://host:port`). None by default. Repeatable; ignored without --http.
    #[arg(
        long = "allowed-origin",
        env = "GODOT_MCP_ALLOWED_ORIGINS",
        value_name = "ORIGIN",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,

    /// The import folders, the approval gate, the editor bridge, the image cap, the HTTP
    /// token and the Godot binary.
    #[command(flatten)]
    pub config: Config,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Transaction(TransactionCommand::Repair(args)) => repair(args),
        Command::Doctor(args) => doctor(args),
        Command::SetupClient(args) => crate::setup_client::run(args),
    }
}

fn state_root(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    explicit
        .or_else(godot_mcp_journal::state_dir::state_root)
        .ok_or_else(|| {
            "no state directory: set GODOT_MCP_STATE_DIR (or XDG_STATE_HOME or HOME)".to_string()
        })
}

fn repair(args: RepairArgs) -> ExitCode {
    use godot_mcp_journal::{RepairOperation, RepairRequest, TxnId};
    let fail = |msg: String, code: u8| {
        crate::say!("godot-mcp transaction repair: {msg}");
        ExitCode::from(code)
    };
    let transaction_id: TxnId = match args.transaction_id.parse() {
        Ok(id) => id,
        Err(e) => return fail(format!("error: --transaction-id: {e}"), 2),
    };
    let operation: RepairOperation = match args.operation.parse() {
        Ok(op) => op,
        Err(e) => return fail(format!("error: --operation: {e}"), 2),
    };
    let root = match state_root(args.state_dir) {
        Ok(r) => r,
        Err(e) => return fail(format!("error: {e}"), 1),
    };
    let req = RepairRequest {
        project: args.project,
        transaction_id,
        operation,
        proof_file: args.proof_file,
        dry_run: args.dry_run,
    };
    match godot_mcp_journal::repair::run(&root, &req) {
        Ok(report) => {
            println!("{}", report.summary());
            ExitCode::SUCCESS
        }
        Err(refusal) => {
            let code = u8::try_from(refusal.exit_code()).unwrap_or(1);
            fail(format!("refused: {refusal}"), code)
        }
    }
}

/// Stderr gets the operator's level; the MCP log hub gets every event of this
/// workspace's crates, and sends each session the ones at its own level.
fn init_logging(level: &str, hub: &Arc<crate::logging::LogHub>) {
    use tracing_subscriber::prelude::*;
    let level: tracing::Level = level.parse().unwrap_or(tracing::Level::INFO);
    // rmcp logs every message at info; keep it at warn unless debugging.
    let rmcp_level = if level >= tracing::Level::DEBUG {
        level
    } else {
        tracing::Level::WARN
    };
    let filter = tracing_subscriber::filter::Targets::new()
        .with_default(level)
        .with_target("rmcp", rmcp_level);
    let ours = tracing_subscriber::filter::Targets::new()
        .with_target("godot_mcp_server", tracing::Level::DEBUG)
        .with_target("godot_mcp_journal", tracing::Level::DEBUG);
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(crate::StderrLines::default)
                .with_ansi(std::io::stderr().is_terminal())
                .with_target(false)
                .with_filter(filter),
        )
        .with(hub.layer().with_filter(ours))
        .init();
}

fn doctor(args: DoctorArgs) -> ExitCode {
    let boundary = crate::planes::process::boundary_report();
    println!("process boundary: {} ({})", boundary.in_use, boundary.why);
    match crate::tools::kit::godot_process::locate(&crate::config::GodotLookup::from_env()) {
        Ok(p) => println!("godot binary: {}", p.display()),
        Err(e) => println!("godot binary: not found ({})", e.message),
    }
    println!(
        "displaced autoload: not_required (the runtime probe is passed on the command line; \
         no autoload or project setting is installed for a session)"
    );
    let root = match state_root(args.state_dir) {
        Ok(r) => r,
        Err(e) => {
            println!("state dir: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    match Project::discover(args.project.as_deref(), &cwd) {
        Ok(project) => {
            let canonical = std::fs::canonicalize(project.root())
                .unwrap_or_else(|_| project.root().to_path_buf());
            let dir = godot_mcp_journal::state_dir::project_state_dir(&root, &canonical);
            println!("state dir: {}", dir.display());
            if !dir.is_dir() {
                println!("lease: free (no state for this project yet)");
                return ExitCode::SUCCESS;
            }
            match godot_mcp_journal::lease::Lease::acquire(&dir) {
                Ok(lease) => {
                    drop(lease);
                    println!("lease: free (no server holds this project)");
                }
                Err(e) => println!("lease: {e}"),
            }
        }
        Err(e) => println!("state dir root: {} (no project: {e})", root.display()),
    }
    ExitCode::SUCCESS
}

#[allow(deprecated)] // LoggingLevel: see logging.rs
fn serve(args: ServeArgs) -> ExitCode {
    let log = Arc::new(crate::logging::LogHub::default());
    init_logging(&args.log_level, &log);
    // Test builds only (the journal's `failpoints` feature): crash points.
    godot_mcp_journal::failpoints::arm_sigkill_from_env("GODOT_MCP_CRASH_AT");
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let project = match Project::discover(args.project.as_deref(), &cwd) {
        Ok(p) => p,
        Err(e) => {
            crate::say!("godot-mcp serve: error: {e}");
            return ExitCode::from(2);
        }
    };
    let safety = match ToolsetSelection::from_operator(args.toolsets.as_deref()) {
        Ok(toolsets) => SafetyState::with_selection(args.config.approval(), toolsets),
        Err(e) => {
            crate::say!("godot-mcp serve: error: {e}");
            return ExitCode::from(2);
        }
    };
    let trace = match args
        .trace
        .as_deref()
        .map(crate::trace::Trace::open)
        .transpose()
    {
        Ok(t) => t,
        Err(e) => {
            let path = args
                .trace
                .as_deref()
                .unwrap_or_else(|| std::path::Path::new(""));
            crate::say!(
                "godot-mcp serve: error: --trace {}: {e} (the trace file's folder must exist and the file be writable)",
                path.display()
            );
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &args.trace {
        crate::say!("godot-mcp serve: call trace appended to {}", path.display());
    }
    crate::say!(
        "godot-mcp serve: project \"{}\" at {}",
        project.name(),
        project.root().display()
    );
    // Before the first request: the lease, the journal, reconciliation, the gate.
    let root = match state_root(args.state_dir) {
        Ok(r) => r,
        Err(e) => {
            crate::say!("godot-mcp serve: error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut journal = match godot_mcp_journal::Journal::open(&root, project.root()) {
        Ok(j) => j,
        Err(godot_mcp_journal::OpenError::Lease(e)) => {
            crate::say!("godot-mcp serve: error: {e}");
            return ExitCode::from(3);
        }
        Err(e) => {
            crate::say!("godot-mcp serve: error: cannot open the journal: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The editor bridge: loopback listener + discovery file for the add-on. Started once
    // the lease is ours (a refused second server must not replace the discovery file) and
    // before the gate line, which tests and scripts read as "startup is over". It accepts
    // once the transport runs (on its runtime for stdio: no thread of its own); an add-on
    // that connects earlier waits in the listen queue. A server without it still serves
    // every file tool; editor tools then say bridge_connected.
    let bridge = if !args.config.editor_bridge {
        crate::say!("godot-mcp serve: editor bridge off (GODOT_MCP_EDITOR_BRIDGE=off)");
        None
    } else {
        match crate::planes::editor::Bridge::begin(project.root()) {
            Ok(bridge) => {
                crate::say!(
                    "godot-mcp serve: editor bridge at {} for the add-on (discovery file {})",
                    bridge.local_addr(),
                    bridge.discovery_path().display()
                );
                Some(bridge)
            }
            Err(e) => {
                crate::say!("godot-mcp serve: warning: editor bridge not started: {e}");
                None
            }
        }
    };
    match journal.reconcile() {
        Ok(report) => {
            // A closed gate, and what closed it, is a warning; the rest is news.
            let level = if matches!(report.gate, godot_mcp_journal::WriteGate::Open) {
                LoggingLevel::Info
            } else {
                LoggingLevel::Warning
            };
            for line in report.stderr_lines() {
                log.startup(level, &line);
            }
        }
        Err(e) => {
            crate::say!("godot-mcp serve: error: startup reconciliation failed: {e}");
            return ExitCode::FAILURE;
        }
    }
    let token = args.config.token();
    let state = Arc::new(
        AppState::new(project, journal, safety)
            .with_config(args.config)
            .with_log(log),
    );
    // The registry lives above the state the tools see: the transport hands both down.
    let served = Arc::new(
        crate::safety::Served::new(state.clone(), Arc::new(crate::tools::Registry::builtin()))
            .with_trace(trace),
    );
    for line in crate::planes::process::startup_lines() {
        state.log.startup(LoggingLevel::Info, &line);
    }
    if let Some(bridge) = bridge {
        crate::tools::kit::editor::settle_late_replies(&state, &bridge);
        let class_of: crate::planes::editor::ClassOf = {
            let served = Arc::downgrade(&served);
            Arc::new(move |tool: &str| {
                let served = served.upgrade()?;
                served.registry.get(tool).map(|d| d.meta.class.as_str())
            })
        };
        bridge.publish_status(crate::planes::editor::status_feed(&state, class_of));
        state.editor.install(bridge);
    }
    let code = serve_transport(
        &served,
        args.http,
        args.allowed_hosts,
        args.allowed_origins,
        token,
        args.editor,
    );
    // Clean shutdown: the discovery file goes, so the add-on stops trying this server.
    state.editor.stop();
    code
}

fn serve_transport(
    state: &Arc<crate::safety::Served>,
    http: Option<std::net::SocketAddr>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    token: Option<String>,
    start_editor: bool,
) -> ExitCode {
    let state = state.clone();
    crate::say!(
        "godot-mcp serve: {}",
        state
            .safety
            .summary(state.registry.iter().map(|d| d.meta.toolset))
    );
    if let Some(addr) = http {
        if let Some(bridge) = state.state.editor.bridge()
            && let Err(e) = bridge.accept_on_thread()
        {
            crate::say!("godot-mcp serve: warning: the editor bridge cannot accept: {e}");
        }
        let options = crate::transport::http::HttpOptions {
            addr,
            allowed_hosts,
            allowed_origins,
            token,
            start_editor,
        };
        let code = crate::transport::http::serve(state.clone(), options);
        // A normal stop stops every session first (the HTTP runtime has ended).
        state.process.stop_all_blocking(&*state.state);
        return code;
    }
    crate::say!(
        "godot-mcp serve: speaking MCP on stdin/stdout; an MCP client starts this command \
         itself (see README.md: Connect a client)"
    );
    if std::io::stdin().is_terminal() {
        crate::say!(
            "godot-mcp serve: stdin is a terminal: this server waits for an MCP client's JSON-RPC; \
             press Ctrl-D or Ctrl-C to quit"
        );
    }
    let Some(runtime) =
        crate::transport::start_runtime(tokio::runtime::Builder::new_current_thread())
    else {
        return ExitCode::FAILURE;
    };
    let result = runtime.block_on(async move {
        if let Some(bridge) = state.state.editor.bridge() {
            tokio::spawn(bridge.accept());
        }
        if start_editor {
            crate::tools::runtime::start_managed_editor(&state.state).await;
        }
        let serve = async {
            let lists = Arc::new(crate::server::raw_tools::RawToolLists::default());
            let service = McpServer::new(state.clone())
                .with_raw_tools(lists.clone())
                .serve(crate::transport::stdio::transport(lists))
                .await;
            match service {
                Ok(service) => service.waiting().await.map(|_| ()).map_err(Into::into),
                // stdin closed before any client said initialize (Ctrl-D at a terminal, or a
                // client that gave up): nothing was served, nothing is wrong.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                    crate::say!(
                        "godot-mcp serve: stdin closed before a client initialized; exiting"
                    );
                    Ok(())
                }
                Err(e) => Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
            }
        };
        // Ctrl-C (SIGINT) and SIGTERM are a normal stop, like stdin closing: sessions
        // live in their own process groups, so the terminal's SIGINT never reaches
        // them; the server stops and records each one before it exits 0.
        let result = tokio::select! {
            r = serve => r,
            sig = crate::transport::stop_signal() => {
                crate::say!(
                    "godot-mcp serve: {} received: stopping sessions, then exiting",
                    sig.as_str()
                );
                Ok(())
            }
        };
        // A normal stop stops every session first.
        state.process.stop_all().await;
        result
    });
    // After a signal, stdin's reader thread is still blocked in a read nothing can
    // cancel; every session is already stopped and recorded, so do not wait for it.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::say!("godot-mcp serve: error: {e}");
            ExitCode::FAILURE
        }
    }
}
