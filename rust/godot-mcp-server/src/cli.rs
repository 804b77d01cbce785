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
use crate::server::McpServer;
use crate::state::AppState;

const AFTER_HELP: &str = "\
Environment:
  GODOT_MCP_PROJECT   the project folder to serve (same as serve --project)
  GODOT_MCP_LOG       log level on stderr: error, warn, info (default), debug, trace
  GODOT_MCP_HTTP      serve over streamable HTTP at this address (same as serve --http)
  GODOT_MCP_AUTH_TOKEN
                      bearer token HTTP clients must send (Authorization: Bearer ...);
                      required to listen on a non-loopback address, enforced whenever set
  GODOT_MCP_ALLOWED_HOSTS, GODOT_MCP_ALLOWED_ORIGINS
                      comma-separated, same as --allowed-host / --allowed-origin

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
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve one Godot project to an MCP client over stdio (or to many over HTTP).
    ///
    /// The MCP client starts this command and speaks JSON-RPC on its stdin/stdout;
    /// logs go to stderr. With --http, agents connect to http://ADDR/mcp instead.
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

    /// Serve MCP over streamable HTTP at ADDR (an IP:port, e.g. 127.0.0.1:8765; port 0
    /// picks a free one) instead of stdio; the endpoint is http://ADDR/mcp. Loopback
    /// only unless GODOT_MCP_AUTH_TOKEN is set. Requests whose Host is not this
    /// server's, or that come from a browser page of another Origin, are refused (403).
    #[arg(long, env = "GODOT_MCP_HTTP", value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,

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
    let state = Arc::new(AppState::new(project));
    eprintln!(
        "godot-mcp serve: project \"{}\" at {}",
        state.project.name(),
        state.project.root().display()
    );
    if let Some(addr) = args.http {
        let options = crate::transport::http::HttpOptions {
            addr,
            allowed_hosts: args.allowed_hosts,
            allowed_origins: args.allowed_origins,
            token: crate::transport::http::HttpOptions::token_from_env(),
        };
        return crate::transport::http::serve(state, options);
    }
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
