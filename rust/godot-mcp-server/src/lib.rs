//! godot-mcp: an MCP server that reads and edits a Godot 4 project safely and provably.
//!
//! # Layout
//!
//! - [`cli`]: the `godot-mcp` command line (clap): `serve`, and its flags and env vars.
//! - [`config`]: the operator's `GODOT_MCP_*` settings, read once into one `Config`.
//! - [`project_root`]: finding the project and resolving `res://` paths inside it.
//! - [`respath`]: `ResPath`, the contained path type every file parameter uses.
//! - [`rules`]: the permission model's rules — classes, toolsets, preconditions, the
//!   confirm gate — and the safety state every session shares.
//! - [`safety`]: the call pipeline that applies those rules to every call, in order, and
//!   the approval gate.
//! - [`caller`]: who makes a call: its transport, how it was admitted, its `Principal`.
//! - [`planes`]: where effects happen; `planes::project` is the one write seam.
//! - [`honesty`]: the result fields that keep a half-done effect from reading as success.
//! - [`tools`]: the tool registry and one module per tool domain, above the shared kit
//!   (`tools::kit`); no domain imports another.
//! - [`server`]: the rmcp `ServerHandler` over the registry.
//! - [`setup_client`]: `godot-mcp setup-client`, which writes an MCP client's config entry.
//! - [`error`]: `ToolError`, the one structured shape of every user-facing failure.
//! - [`state`]: what request handlers share.
//! - [`call_scope`]: the running call's cancellation and `notifications/progress` steps.
//! - [`completion`]: `completion/complete` values, by argument name, from the project.
//! - [`subscriptions`]: `resources/subscribe`; a resource update when a transaction ends.
//! - [`captures`]: the images a server's tools answered with, kept by capture id.
//! - [`logging`]: log lines as MCP `notifications/message`, at each session's level.
//! - [`trace`]: `serve --trace FILE`, one JSON line per tool call.
//! - [`counters`]: counts of what crossed each boundary of the HTTP transport (for tests).
//! - `output_check` (feature `output-check`, test builds): every result checked against
//!   its tool's `outputSchema`.
//! - [`transport`]: stdio and streamable HTTP, the Host/Origin/token guard, and the
//!   [`caller::Principal`] of every call (passed to the call pipeline in its `CallContext`).
#![forbid(unsafe_code)]
#![warn(unreachable_pub)]
// The map above is for the people who work on the server: its modules are private (the
// library exports only what its tests, benches and binary use, below), and the map links
// them all.
#![allow(rustdoc::private_intra_doc_links)]

/// A line for the person at the terminal, on stderr. Unlike `eprintln!` it never
/// panics: a client that closed our stderr must not take the server down with it.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::stderr_line(format_args!($($arg)*));
    }};
}

/// Writes one whole line to stderr in one system call (stderr is unbuffered: a
/// formatted `writeln!` costs a write per piece). Errors are ignored, as in [`say!`].
pub fn stderr_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut line = Vec::with_capacity(128);
    let _ = line.write_fmt(args);
    line.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&line);
}

/// The tracing writer: each event is gathered whole and written to stderr in one
/// system call when the event ends, so log lines and [`say!`] lines stay whole and in
/// the order they happened, and each is on stderr as soon as it is complete.
#[derive(Debug, Default)]
pub struct StderrLines(Vec<u8>);

impl std::io::Write for StderrLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.0.is_empty() {
            let r = std::io::stderr().lock().write_all(&self.0);
            self.0.clear();
            r?;
        }
        Ok(())
    }
}

impl Drop for StderrLines {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

mod call_scope;
mod caller;
mod captures;
mod cli;
mod completion;
mod config;
mod counters;
mod error;
mod honesty;
mod logging;
#[cfg(feature = "output-check")]
mod output_check;
mod overview;
mod planes;
mod project_root;
mod respath;
mod rules;
mod safety;
mod server;
mod setup_client;
mod state;
mod subscriptions;
mod tools;
mod trace;
mod transport;

// What the crate's tests, benches and binary use: the only public surface (issue 43: the
// library exports what its tests use; everything else is crate-private).
pub use cli::main;
pub use config::ApprovalConfig;
pub use error::ToolError;
pub use planes::editor::{Bridge, Status};
pub use planes::process::LaunchSpec;
pub use project_root::Project;
pub use rules::{SafetyState, Toolset};
pub use server::TOOLS_LIST_TTL_MS;
pub use state::AppState;
pub use tools::classref::{MemberKind, SearchKind, lookup_class, search_classes};
pub use tools::kit::class_db::{ClassDb, DumpClass, merge_descriptions, read_doctool_dir};
pub use tools::kit::cs_script::{CsIndex, cs_script};
pub use tools::kit::dotnet_build::find_dotnet;
pub use tools::settings::declared::DECLARED_SETTING_TYPES;
