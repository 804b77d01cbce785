//! `godot-mcp setup-client <client>`: write or merge one MCP client's configuration file so
//! it starts this binary for one project.
//!
//! The entry names the absolute path of the running binary and the absolute project path,
//! so the client needs no PATH and no cargo. The edit is conservative:
//!
//! - only our own entry (`godot` unless `--name`) is added or updated; every other server,
//!   every other key, and (for TOML) every comment is left as it was. JSON files are edited
//!   by splicing text at the spans of the two objects we touch, so the rest of the file keeps
//!   its bytes; TOML goes through `toml_edit`, which keeps comments and layout;
//! - a file that does not parse, or whose server table is not a table, is refused with a
//!   structured error (exit 2) and nothing is written;
//! - a run that would change nothing says `unchanged` and writes nothing (no backup either);
//! - before an existing file is modified its bytes are copied to `<file>.bak` (or the first
//!   free `<file>.bak.N`: an earlier backup is never overwritten);
//! - the new file is written to a temporary file beside it and renamed over it, so a client
//!   never reads half a file; a symlinked config is written through to its target.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use godot_mcp_protocol::clients::{Format, McpClient, json_entry};
use serde_json::Value;

use crate::error::ErrorCode;
use crate::project_root::Project;

mod entry;
mod json_text;
mod yaml;

use entry::shape;
pub(crate) use entry::{Entry, SetupError};
use json_text::{
    Raw, insert_member, line_indent, reindent, render_object, scan_object, skip_ws, string_end,
};

const SETUP_HELP: &str = "\
Where each client's file is (HOME, XDG_CONFIG_HOME, APPDATA and CODEX_HOME are honoured):
  claude-code     <project>/.mcp.json                      (\"mcpServers\", project scope)
  claude-desktop  Linux:   $XDG_CONFIG_HOME/Claude/claude_desktop_config.json
                           (default ~/.config/Claude/claude_desktop_config.json)
                  macOS:   ~/Library/Application Support/Claude/claude_desktop_config.json
                  Windows: %APPDATA%\\Claude\\claude_desktop_config.json
  cursor          <project>/.cursor/mcp.json               (\"mcpServers\")
  vscode          <project>/.vscode/mcp.json               (\"servers\", type stdio)
  codex           $CODEX_HOME/config.toml (default ~/.codex/config.toml), [mcp_servers.godot]
  gemini-cli      <project>/.gemini/settings.json          (\"mcpServers\", project scope)
  windsurf        ~/.codeium/windsurf/mcp_config.json      (\"mcpServers\")
  zed             $XDG_CONFIG_HOME/zed/settings.json (default ~/.config/zed/settings.json;
                  Windows: %APPDATA%\\Zed\\settings.json)   (\"context_servers\")
  opencode        <project>/opencode.json (or an existing opencode.jsonc)   (\"mcp\", type local)
  cline           VS Code's globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json
                  (Linux: $XDG_CONFIG_HOME/Code/User/..., macOS: ~/Library/Application
                  Support/Code/User/..., Windows: %APPDATA%\\Code\\User\\...)   (\"mcpServers\")
  goose           $XDG_CONFIG_HOME/goose/config.yaml (default ~/.config/goose/config.yaml;
                  Windows: %APPDATA%\\Block\\goose\\config\\config.yaml)   (extensions.godot)

Files of gemini-cli, vscode, zed and opencode may hold comments and trailing commas
(those clients read JSONC); they are kept.

The entry runs: <this godot-mcp binary, absolute> serve --project <project, absolute>.

Exit status: 0 written, unchanged, or shown (--dry-run); 1 an I/O error; 2 refused (bad
arguments, not a Godot project, or a config file that does not parse or has an unexpected
shape). A refusal writes nothing.

Examples:
  godot-mcp setup-client claude-code --project /path/to/your/game --dry-run
  godot-mcp setup-client codex --project /path/to/your/game";

/// Arguments of `godot-mcp setup-client`.
#[derive(Debug, clap::Args)]
#[command(after_help = SETUP_HELP)]
pub(crate) struct SetupClientArgs {
    /// The MCP client to configure.
    #[arg(value_enum)]
    pub client: Client,
    /// The Godot project folder (default: the current folder or a parent holding
    /// project.godot).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Show the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The server's name in the client's configuration.
    #[arg(long, value_name = "NAME", default_value = "godot")]
    pub name: String,
}

/// The clients `setup-client` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Client {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    Vscode,
    Codex,
    GeminiCli,
    Windsurf,
    Zed,
    #[value(name = "opencode")]
    OpenCode,
    Cline,
    Goose,
}

impl Client {
    /// The shared definition of the client (its entry's shape; the dock uses it too).
    pub(crate) fn mcp(self) -> McpClient {
        match self {
            Self::ClaudeCode => McpClient::ClaudeCode,
            Self::ClaudeDesktop => McpClient::ClaudeDesktop,
            Self::Cursor => McpClient::Cursor,
            Self::Vscode => McpClient::Vscode,
            Self::Codex => McpClient::Codex,
            Self::GeminiCli => McpClient::GeminiCli,
            Self::Windsurf => McpClient::Windsurf,
            Self::Zed => McpClient::Zed,
            Self::OpenCode => McpClient::OpenCode,
            Self::Cline => McpClient::Cline,
            Self::Goose => McpClient::Goose,
        }
    }

    fn id(self) -> &'static str {
        self.mcp().id()
    }

    /// What the person does next for the client to pick the entry up.
    fn next_step(self) -> &'static str {
        match self {
            Self::ClaudeCode => {
                "run `claude` in the project folder and approve the project server when asked"
            }
            Self::ClaudeDesktop => "restart Claude Desktop",
            Self::Cursor => {
                "open the project folder in Cursor and enable the server in its MCP settings"
            }
            Self::Vscode => {
                "open the project folder in VS Code; the server is listed under MCP: List Servers"
            }
            Self::Codex => "start a new Codex session",
            Self::GeminiCli => "run `gemini` in the project folder; `/mcp` lists the server",
            Self::Windsurf => "open Windsurf's MCP settings (Cascade → MCP servers) and refresh",
            Self::Zed => "the Agent Panel's settings list the server (Zed reloads settings.json)",
            Self::OpenCode => "run `opencode` in the project folder; `opencode mcp list` shows it",
            Self::Cline => "open Cline's MCP Servers view; the server starts on its own",
            Self::Goose => "start a new goose session (`goose session`)",
        }
    }
}

/// Entry point of `godot-mcp setup-client`.
pub(crate) fn run(args: SetupClientArgs) -> ExitCode {
    match setup(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::say!("godot-mcp setup-client: error {e}");
            crate::say!("godot-mcp setup-client: nothing was written");
            ExitCode::from(e.exit_code())
        }
    }
}

fn setup(args: &SetupClientArgs) -> Result<(), SetupError> {
    if args.name.is_empty() {
        return Err(SetupError::new(
            ErrorCode::InvalidParams,
            "--name must not be empty",
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| SetupError::new(ErrorCode::Io, format!("current folder: {e}")))?;
    let project = Project::discover(args.project.as_deref(), &cwd)
        .map_err(|e| SetupError::new(ErrorCode::InvalidParams, e.to_string()))?;
    let exe = std::env::current_exe()
        .and_then(fs::canonicalize)
        .map_err(|e| SetupError::new(ErrorCode::Io, format!("this binary's path: {e}")))?;
    let entry = Entry {
        name: args.name.clone(),
        command: utf8(&exe)?,
        args: vec![
            "serve".to_owned(),
            "--project".to_owned(),
            utf8(project.root())?,
        ],
    };
    let path = config_path(args.client, project.root())?;
    // Write through a symlink (dotfiles are often links into a repository) rather than
    // replacing the link with a file.
    let target = match fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(&path)
            .map_err(|e| SetupError::new(ErrorCode::Io, format!("{}: {e}", path.display())))?,
        _ => path.clone(),
    };
    let old = match fs::read(&target) {
        Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| {
            SetupError::new(
                ErrorCode::ParseError,
                format!("{}: not UTF-8 text", target.display()),
            )
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(SetupError::new(
                ErrorCode::Io,
                format!("{}: {e}", target.display()),
            ));
        }
    };
    let new = merge(args.client, old.as_deref(), &entry)
        .map_err(|e| SetupError::new(e.code, format!("{}: {}", target.display(), e.message)))?;
    let client = args.client.id();
    let shown = format!("{} {}", entry.command, entry.args.join(" "));
    if old.as_deref() == Some(new.as_str()) {
        println!(
            "{client}: unchanged {} (server \"{}\" already runs {shown})",
            target.display(),
            entry.name
        );
        return Ok(());
    }
    if args.dry_run {
        let verb = if old.is_some() { "update" } else { "create" };
        println!("{client}: would {verb} {}", target.display());
        let before = old.as_deref().unwrap_or("");
        let diff = similar::TextDiff::from_lines(before, &new);
        let a = if old.is_some() {
            target.display().to_string()
        } else {
            "/dev/null".to_owned()
        };
        print!(
            "{}",
            diff.unified_diff()
                .context_radius(3)
                .header(&a, &target.display().to_string())
        );
        println!("{client}: dry run: nothing was written");
        return Ok(());
    }
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| SetupError::new(ErrorCode::Io, format!("{}: {e}", parent.display())))?;
    }
    let permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    let backup = match &old {
        Some(old) => Some(write_backup(&target, old.as_bytes(), permissions.as_ref())?),
        None => None,
    };
    write_atomically(&target, new.as_bytes(), permissions.as_ref())?;
    match backup {
        Some(backup) => println!(
            "{client}: updated {} (server \"{}\" runs {shown}); backup of the previous file: {}",
            target.display(),
            entry.name,
            backup.display()
        ),
        None => println!(
            "{client}: created {} (server \"{}\" runs {shown})",
            target.display(),
            entry.name
        ),
    }
    println!("{client}: next, {}", args.client.next_step());
    Ok(())
}

fn utf8(path: &Path) -> Result<String, SetupError> {
    let text = path.to_str().ok_or_else(|| {
        SetupError::new(
            ErrorCode::InvalidParams,
            format!(
                "{} is not valid UTF-8; client configs cannot name it",
                path.display()
            ),
        )
    })?;
    // Windows' canonical form is a verbatim path (\\?\C:\...), which clients do not expect.
    Ok(text.strip_prefix(r"\\?\").unwrap_or(text).to_owned())
}

fn home() -> Result<PathBuf, SetupError> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(std::env::home_dir)
        .ok_or_else(|| SetupError::new(ErrorCode::InvalidParams, "no home folder: set HOME"))
}

/// An absolute path from an environment variable, as the XDG spec reads them.
fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// The user's configuration folder as each OS names it: `~/Library/Application Support`
/// on macOS, `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` (default `~/.config`) elsewhere.
fn app_config_dir() -> Result<PathBuf, SetupError> {
    Ok(if cfg!(target_os = "macos") {
        home()?.join("Library").join("Application Support")
    } else if cfg!(windows) {
        appdata()?
    } else {
        xdg_config()?
    })
}

fn appdata() -> Result<PathBuf, SetupError> {
    Ok(match env_dir("APPDATA") {
        Some(dir) => dir,
        None => home()?.join("AppData").join("Roaming"),
    })
}

fn xdg_config() -> Result<PathBuf, SetupError> {
    Ok(match env_dir("XDG_CONFIG_HOME") {
        Some(dir) => dir,
        None => home()?.join(".config"),
    })
}

/// The configuration file `client` reads, for `project`. Each is the client's documented
/// location (docs/clients.md cites the page).
pub(crate) fn config_path(client: Client, project: &Path) -> Result<PathBuf, SetupError> {
    Ok(match client {
        Client::ClaudeCode => project.join(".mcp.json"),
        Client::Cursor => project.join(".cursor").join("mcp.json"),
        Client::Vscode => project.join(".vscode").join("mcp.json"),
        Client::Codex => match env_dir("CODEX_HOME") {
            Some(dir) => dir,
            None => home()?.join(".codex"),
        }
        .join("config.toml"),
        Client::ClaudeDesktop => app_config_dir()?
            .join("Claude")
            .join("claude_desktop_config.json"),
        Client::GeminiCli => project.join(".gemini").join("settings.json"),
        Client::Windsurf => home()?
            .join(".codeium")
            .join("windsurf")
            .join("mcp_config.json"),
        // Zed keeps its settings in ~/.config/zed on macOS too.
        Client::Zed if cfg!(windows) => appdata()?.join("Zed").join("settings.json"),
        Client::Zed => xdg_config()?.join("zed").join("settings.json"),
        Client::OpenCode => {
            let jsonc = project.join("opencode.jsonc");
            let json = project.join("opencode.json");
            if jsonc.exists() && !json.exists() {
                jsonc
            } else {
                json
            }
        }
        Client::Cline => app_config_dir()?
            .join("Code")
            .join("User")
            .join("globalStorage")
            .join("saoudrizwan.claude-dev")
            .join("settings")
            .join("cline_mcp_settings.json"),
        Client::Goose if cfg!(windows) => appdata()?
            .join("Block")
            .join("goose")
            .join("config")
            .join("config.yaml"),
        Client::Goose => xdg_config()?.join("goose").join("config.yaml"),
    })
}

/// The file's new text with `entry` merged in (equal to `old` when nothing changes).
pub(crate) fn merge(
    client: Client,
    old: Option<&str>,
    entry: &Entry,
) -> Result<String, SetupError> {
    match client.mcp().format() {
        Format::Toml => merge_toml(old.unwrap_or(""), entry),
        Format::Yaml => yaml::merge_goose(old.unwrap_or(""), entry),
        Format::Json {
            servers_key,
            comments,
        } => merge_json(old, servers_key, comments, client.mcp(), entry),
    }
}

fn merge_toml(old: &str, entry: &Entry) -> Result<String, SetupError> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};

    let mut doc: DocumentMut = old
        .parse()
        .map_err(|e: toml_edit::TomlError| shape(format!("does not parse as TOML: {e}")))?;
    let args: Array = entry.args.iter().map(String::as_str).collect();
    let root = doc.as_table_mut();
    if !root.contains_key("mcp_servers") {
        // Implicit: the file gains `[mcp_servers.godot]`, not an empty `[mcp_servers]`.
        let mut servers = Table::new();
        servers.set_implicit(true);
        root.insert("mcp_servers", Item::Table(servers));
    }
    let servers = root
        .get_mut("mcp_servers")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| shape("`mcp_servers` is not a table".to_owned()))?;
    let same = |server: &dyn toml_edit::TableLike| {
        server.get("command").and_then(Item::as_str) == Some(entry.command.as_str())
            && server
                .get("args")
                .and_then(Item::as_array)
                .is_some_and(|a| {
                    a.iter()
                        .map(|v| v.as_str())
                        .eq(entry.args.iter().map(|s| Some(s.as_str())))
                })
    };
    match servers.get_mut(&entry.name) {
        None => {
            let mut server = Table::new();
            server.insert("command", value(entry.command.as_str()));
            server.insert("args", value(args));
            // Into an inline `mcp_servers = { ... }`, toml_edit inlines the table too.
            servers.insert(&entry.name, Item::Table(server));
        }
        Some(item) => {
            let server = item
                .as_table_like_mut()
                .ok_or_else(|| shape(format!("`mcp_servers.{}` is not a table", entry.name)))?;
            if !same(&*server) {
                // Only our two keys change; env, timeouts and the like stay as written.
                server.insert("command", value(entry.command.as_str()));
                server.insert("args", value(args));
            }
        }
    }
    let new = doc.to_string();
    // toml_edit re-renders a document it did not change identically; keep the original
    // bytes regardless, so "unchanged" means exactly that.
    Ok(if toml_eq(old, &new) {
        old.to_owned()
    } else {
        new
    })
}

fn toml_eq(old: &str, new: &str) -> bool {
    match (
        old.parse::<toml_edit::DocumentMut>(),
        new.parse::<toml_edit::DocumentMut>(),
    ) {
        (Ok(a), Ok(b)) => a.to_string() == b.to_string(),
        _ => false,
    }
}

/// JSON: the file is validated with serde_json, then edited as text at the spans of the
/// objects we touch, so every other byte (key order, spacing, escapes) stays as it was.
/// serde_json reports no spans, and its `preserve_order` feature would change every map in
/// the workspace, so a small scanner finds the spans; it only walks text serde_json has
/// already accepted, and decodes keys with serde_json itself.
fn merge_json(
    old: Option<&str>,
    servers_key: &str,
    comments: bool,
    client: McpClient,
    entry: &Entry,
) -> Result<String, SetupError> {
    let args: Vec<&str> = entry.args.iter().map(String::as_str).collect();
    let wanted: Vec<(String, Value)> = json_entry(client, &entry.command, &args)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();

    let old = old.unwrap_or("");
    let (bom, body) = match old.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", old),
    };
    if body.trim().is_empty() {
        let server = render_object(&wanted, "  ");
        let servers = render_object(&[(entry.name.clone(), Raw(server))], "  ");
        let doc = render_object(&[(servers_key.to_owned(), Raw(servers))], "");
        return Ok(format!("{bom}{doc}\n"));
    }
    // A JSONC file is read through a copy with its comments and trailing commas blanked
    // out byte for byte: the spans found in it are the spans of the file itself, and the
    // comments stay where they were.
    let plain = if comments {
        blank_jsonc(body)?
    } else {
        body.to_owned()
    };
    if plain.trim().is_empty() {
        // Only comments: the document follows them.
        let server = render_object(&wanted, "  ");
        let servers = render_object(&[(entry.name.clone(), Raw(server))], "  ");
        let doc = render_object(&[(servers_key.to_owned(), Raw(servers))], "");
        let sep = if body.ends_with('\n') { "" } else { "\n" };
        return Ok(format!("{bom}{body}{sep}{doc}\n"));
    }
    let what = if comments {
        "JSON (with comments)"
    } else {
        "JSON"
    };
    let parsed: Value = serde_json::from_str(&plain)
        .map_err(|e| shape(format!("does not parse as {what}: {e}")))?;
    let Value::Object(top) = &parsed else {
        return Err(shape("the top level is not a JSON object".to_owned()));
    };
    let b = plain.as_bytes();
    let top_open = skip_ws(b, 0);
    let top_obj = scan_object(b, top_open);
    let spliced = match top.get(servers_key) {
        None => {
            let server = render_object(&wanted, "  ");
            let servers = render_object(&[(entry.name.clone(), Raw(server))], "  ");
            insert_member(body, &top_obj, servers_key, &servers)
        }
        Some(Value::Object(servers)) => {
            let member = top_obj
                .members
                .iter()
                .rev() // serde_json keeps the last of duplicate keys
                .find(|m| m.key == servers_key)
                .expect("serde_json saw this key");
            let servers_obj = scan_object(b, member.value_start);
            match servers.get(&entry.name) {
                None => {
                    let server = render_object(&wanted, "  ");
                    insert_member(body, &servers_obj, &entry.name, &server)
                }
                Some(Value::Object(existing)) => {
                    if wanted.iter().all(|(k, v)| existing.get(k) == Some(v)) {
                        return Ok(old.to_owned());
                    }
                    let mut pairs: Vec<(String, Value)> = wanted.clone();
                    for (k, v) in existing {
                        if !wanted.iter().any(|(w, _)| w == k) {
                            pairs.push((k.clone(), v.clone()));
                        }
                    }
                    let m = servers_obj
                        .members
                        .iter()
                        .rev()
                        .find(|m| m.key == entry.name)
                        .expect("serde_json saw this key");
                    let indent = line_indent(body, m.key_start);
                    let server = render_object(&pairs, "  ");
                    format!(
                        "{}{}{}",
                        &body[..m.value_start],
                        reindent(&server, &indent),
                        &body[m.value_end..]
                    )
                }
                Some(_) => {
                    return Err(shape(format!(
                        "`{servers_key}.{}` is not a JSON object",
                        entry.name
                    )));
                }
            }
        }
        Some(_) => return Err(shape(format!("`{servers_key}` is not a JSON object"))),
    };
    Ok(format!("{bom}{spliced}"))
}

/// `text` with every comment (`// …`, `/* … */`) and every trailing comma (one followed
/// only by white space before `}` or `]`) replaced by spaces, newlines kept: the same
/// length, so byte offsets carry over to the original.
fn blank_jsonc(text: &str) -> Result<String, SetupError> {
    let mut b = text.as_bytes().to_vec();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = string_end(&b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    b[i] = b' ';
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map(|e| i + 2 + e + 2)
                    .ok_or_else(|| shape("a /* comment is never closed".to_owned()))?;
                while i < end {
                    if b[i] != b'\n' {
                        b[i] = b' ';
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    // Trailing commas, now that no comment hides what follows them.
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => i = string_end(&b, i),
            b',' => {
                let next = skip_ws(&b, i + 1);
                if matches!(b.get(next), Some(b'}' | b']')) {
                    b[i] = b' ';
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    // Whole comments were replaced byte for byte by ASCII: still UTF-8.
    String::from_utf8(b).map_err(|_| shape("not UTF-8 text".to_owned()))
}

fn write_backup(
    target: &Path,
    bytes: &[u8],
    permissions: Option<&fs::Permissions>,
) -> Result<PathBuf, SetupError> {
    let io = |p: &Path, e: std::io::Error| {
        SetupError::new(ErrorCode::Io, format!("{}: {e}", p.display()))
    };
    for n in 0..1000 {
        let mut name = target.as_os_str().to_owned();
        name.push(if n == 0 {
            ".bak".to_owned()
        } else {
            format!(".bak.{n}")
        });
        let path = PathBuf::from(name);
        // create_new: an existing backup (ours or anyone's) is never overwritten.
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                if let Some(p) = permissions {
                    file.set_permissions(p.clone()).map_err(|e| io(&path, e))?;
                }
                file.write_all(bytes).map_err(|e| io(&path, e))?;
                file.sync_all().map_err(|e| io(&path, e))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&path, e)),
        }
    }
    Err(SetupError::new(
        ErrorCode::Io,
        format!(
            "{}: no free backup name (.bak to .bak.999)",
            target.display()
        ),
    ))
}

/// Temp file beside `target`, then rename: readers see the old file or the new one.
fn write_atomically(
    target: &Path,
    bytes: &[u8],
    permissions: Option<&fs::Permissions>,
) -> Result<(), SetupError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.godot-mcp-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        // Keep the old file's mode: a config holding tokens may be private (0600).
        if let Some(p) = permissions {
            file.set_permissions(p.clone())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, target)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        SetupError::new(ErrorCode::Io, format!("{}: {e}", target.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            name: "godot".into(),
            command: "/opt/godot-mcp".into(),
            args: vec!["serve".into(), "--project".into(), "/games/a".into()],
        }
    }

    #[test]
    fn json_insert_keeps_other_bytes() {
        let old = "{\n    \"z\": 1,\n    \"mcpServers\": {\"other\":{\"command\":\"x\"}}\n}\n";
        let new = merge(Client::Cursor, Some(old), &entry()).unwrap();
        assert!(
            new.starts_with("{\n    \"z\": 1,\n    \"mcpServers\": {\"other\":{\"command\":\"x\"}")
        );
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["mcpServers"]["godot"]["command"], "/opt/godot-mcp");
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(merge(Client::Cursor, Some(&new), &entry()).unwrap(), new);
    }

    #[test]
    fn json_empty_objects_and_missing_key() {
        for old in ["{}", "{ }\n", "{\"a\": [1, {\"b\": \"}\"}]}"] {
            let new = merge(Client::Vscode, Some(old), &entry()).unwrap();
            let v: Value = serde_json::from_str(&new).unwrap_or_else(|e| panic!("{new}: {e}"));
            assert_eq!(v["servers"]["godot"]["type"], "stdio", "{new}");
        }
    }

    /// A JSONC file keeps its comments and trailing commas, and a comment holding braces,
    /// quotes or the servers key misleads nothing.
    #[test]
    fn jsonc_comments_and_trailing_commas_are_kept() {
        let old = "// Zed settings\n{\n  /* \"context_servers\": { */\n  \"theme\": \"One Dark\", // \"}\n  \"context_servers\": {\n    \"other\": { \"command\": \"x\", }, // theirs\n  },\n}\n";
        let new = merge(Client::Zed, Some(old), &entry()).unwrap();
        for kept in [
            "// Zed settings",
            "/* \"context_servers\": { */",
            "// \"}",
            "// theirs",
        ] {
            assert!(new.contains(kept), "{kept} lost:\n{new}");
        }
        let v: Value = serde_json::from_str(&blank_jsonc(&new).unwrap()).unwrap();
        assert_eq!(v["context_servers"]["godot"]["command"], "/opt/godot-mcp");
        assert_eq!(v["context_servers"]["other"]["command"], "x");
        assert_eq!(v["theme"], "One Dark");
        assert_eq!(merge(Client::Zed, Some(&new), &entry()).unwrap(), new);
        // A client that reads strict JSON refuses the same file rather than guess.
        assert!(merge(Client::Cursor, Some(old), &entry()).is_err());
    }

    /// Guards "the dock shows what setup-client writes": for every client, the file
    /// setup-client creates from nothing and the dock's snippet (protocol `clients`) parse
    /// to the same document.
    #[test]
    fn a_created_file_equals_the_docks_snippet() {
        use clap::ValueEnum;
        for client in Client::value_variants() {
            let new = merge(*client, None, &entry()).unwrap();
            let shown =
                godot_mcp_protocol::clients::snippet(client.mcp(), "/opt/godot-mcp", "/games/a");
            if client.mcp().is_toml() {
                let a: toml_edit::DocumentMut = new.parse().unwrap();
                let b: toml_edit::DocumentMut = shown.parse().unwrap();
                let server = |d: &toml_edit::DocumentMut| {
                    let s = &d["mcp_servers"]["godot"];
                    (
                        s["command"].as_str().map(str::to_owned),
                        s["args"].as_array().map(|a| {
                            a.iter()
                                .map(|v| v.as_str().unwrap().to_owned())
                                .collect::<Vec<_>>()
                        }),
                    )
                };
                assert_eq!(server(&a), server(&b), "{client:?}:\n{new}\n{shown}");
                assert!(server(&a).0.is_some());
            } else if client.mcp().format() == Format::Yaml {
                use saphyr::{LoadableYamlNode, Yaml};
                let a = Yaml::load_from_str(&new).unwrap();
                let b = Yaml::load_from_str(&shown).unwrap();
                assert_eq!(a, b, "{client:?}:\n{new}\n{shown}");
            } else {
                let a: Value = serde_json::from_str(&new).unwrap();
                let b: Value = serde_json::from_str(&shown).unwrap();
                assert_eq!(a, b, "{client:?}");
            }
        }
    }
}
