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

use crate::project::Project;
use crate::safety::{ApprovalConfig, SafetyState, Toolset};
use crate::server::McpServer;
use crate::state::AppState;

const AFTER_HELP: &str = "\
Environment:
  GODOT_MCP_PROJECT   the project folder to serve (same as serve --project)
  GODOT_MCP_LOG       log level on stderr: error, warn, info (default), debug, trace
  GODOT_MCP_TOOLSETS  enabled toolsets (same as serve --toolsets)
  GODOT_MCP_APPROVAL_WEBHOOK     http:// URL asked to approve each mutating/destructive call
  GODOT_MCP_APPROVAL_FAIL_OPEN   true: allow calls when the webhook is unreachable (default: deny)
  GODOT_MCP_APPROVAL_TIMEOUT_MS  how long the webhook may take (default 10000)
  GODOT_MCP_APPROVAL_REQUIRE     true: ask the human through the MCP client (elicitation)

Connect a client (example for Claude Code):
  claude mcp add godot -- godot-mcp serve --project /path/to/your/game";

/// godot-mcp: let AI agents edit a Godot 4 project safely and provably.
///
/// An MCP server for one Godot project. Read tools work on the project's files
/// alone (no editor, no Godot binary needed); every tool declares a safety class.
#[derive(Debug, Parser)]
#[command(name = "godot-mcp", version, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve one Godot project to an MCP client over stdio.
    ///
    /// The MCP client starts this command and speaks JSON-RPC on its stdin/stdout;
    /// logs go to stderr.
    #[command(after_help = AFTER_HELP)]
    Serve(ServeArgs),
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Folder of the Godot project (the one holding project.godot). Default: the
    /// nearest folder at or above the working directory that holds project.godot.
    #[arg(long, env = "GODOT_MCP_PROJECT", value_name = "PATH")]
    pub project: Option<PathBuf>,

    /// Log level on stderr.
    #[arg(long, env = "GODOT_MCP_LOG", value_name = "LEVEL", default_value = "info",
          value_parser = ["error", "warn", "info", "debug", "trace"])]
    pub log_level: String,

    /// Enabled tool families: `default`, `all`, or names separated by commas; `-name`
    /// removes one (e.g. `default,input_map`).
    #[arg(
        long,
        env = "GODOT_MCP_TOOLSETS",
        value_name = "LIST",
        default_value = "default"
    )]
    pub toolsets: String,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
    }
}

fn init_logging(level: &str) {
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
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_target(false),
        )
        .with(filter)
        .init();
}

fn serve(args: ServeArgs) -> ExitCode {
    init_logging(&args.log_level);
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let project = match Project::discover(args.project.as_deref(), &cwd) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("godot-mcp serve: error: {e}");
            return ExitCode::from(2);
        }
    };
    let safety = match (
        Toolset::parse_list(&args.toolsets),
        ApprovalConfig::from_env(),
    ) {
        (Ok(toolsets), Ok(approval)) => SafetyState::new(approval, toolsets),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("godot-mcp serve: error: {e}");
            return ExitCode::from(2);
        }
    };
    let state = Arc::new(AppState::with_safety(project, safety));
    eprintln!(
        "godot-mcp serve: project \"{}\" at {}",
        state.project.name(),
        state.project.root().display()
    );
    eprintln!(
        "godot-mcp serve: speaking MCP on stdin/stdout ({} tools); an MCP client starts this \
         command itself (see README.md: Connect a client)",
        state.registry.iter().count()
    );
    if std::io::stdin().is_terminal() {
        eprintln!(
            "godot-mcp serve: stdin is a terminal: this server waits for an MCP client's JSON-RPC; \
             press Ctrl-D or Ctrl-C to quit"
        );
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("godot-mcp serve: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let service = McpServer::new(state)
            .serve(rmcp::transport::stdio())
            .await?;
        service.waiting().await?;
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("godot-mcp serve: error: {e}");
            ExitCode::FAILURE
        }
    }
}
