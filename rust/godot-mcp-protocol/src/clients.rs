//! The MCP clients godot-mcp configures, and the entry each one needs: one definition for
//! both `godot-mcp setup-client` (which merges [`json_entry`] into a client's file) and the
//! add-on's dock (which shows [`snippet`], a whole file's worth, with a copy button).
//!
//! `mcpServers` for Claude Code (typed `stdio`), Claude Desktop, Cursor, Gemini CLI,
//! Windsurf and Cline; `servers` (typed `stdio`) for VS Code; `context_servers` for Zed;
//! `mcp` (typed `local`, the command line as one array) for OpenCode; `[mcp_servers.godot]`
//! in TOML for Codex; `extensions.godot` (type `stdio`, `cmd`, `args`) in YAML for Goose.
//! JSON goes through serde_json; the TOML is two keys, written with TOML's basic-string
//! escapes (the tests parse it with `toml_edit`; `setup-client` edits TOML files with
//! `toml_edit`); the YAML's strings are JSON strings, which YAML's double-quoted scalars
//! read as the same text (the tests parse it with saphyr). docs/clients.md cites each
//! client's documentation of its file.

use serde_json::{Map, Value, json};

/// The server's name in every snippet (`setup-client`'s default `--name`).
pub const SERVER_NAME: &str = "godot";

/// The clients the dock fills in, in the order it shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpClient {
    ClaudeCode,
    ClaudeDesktop,
    Cursor,
    Vscode,
    Codex,
    GeminiCli,
    Windsurf,
    Zed,
    OpenCode,
    Cline,
    Goose,
}

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A JSON object whose member `servers_key` holds one object per server. `comments`:
    /// the client reads JSON with comments and trailing commas (JSONC), so a file may hold
    /// them.
    Json {
        servers_key: &'static str,
        comments: bool,
    },
    /// Codex's `config.toml`: `[mcp_servers.<name>]`.
    Toml,
    /// Goose's `config.yaml`: `extensions: <name>: {...}`.
    Yaml,
}

impl McpClient {
    pub const ALL: [McpClient; 11] = [
        McpClient::ClaudeCode,
        McpClient::ClaudeDesktop,
        McpClient::Cursor,
        McpClient::Vscode,
        McpClient::Codex,
        McpClient::GeminiCli,
        McpClient::Windsurf,
        McpClient::Zed,
        McpClient::OpenCode,
        McpClient::Cline,
        McpClient::Goose,
    ];

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::Vscode => "VS Code",
            Self::Codex => "Codex",
            Self::GeminiCli => "Gemini CLI",
            Self::Windsurf => "Windsurf",
            Self::Zed => "Zed",
            Self::OpenCode => "OpenCode",
            Self::Cline => "Cline",
            Self::Goose => "Goose",
        }
    }

    /// `godot-mcp setup-client`'s name for it.
    pub fn id(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::ClaudeDesktop => "claude-desktop",
            Self::Cursor => "cursor",
            Self::Vscode => "vscode",
            Self::Codex => "codex",
            Self::GeminiCli => "gemini-cli",
            Self::Windsurf => "windsurf",
            Self::Zed => "zed",
            Self::OpenCode => "opencode",
            Self::Cline => "cline",
            Self::Goose => "goose",
        }
    }

    /// Where the snippet goes, as `setup-client --help` says it.
    pub fn file(self) -> &'static str {
        match self {
            Self::ClaudeCode => "<project>/.mcp.json",
            Self::ClaudeDesktop => {
                "claude_desktop_config.json (Settings → Developer → Edit Config)"
            }
            Self::Cursor => "<project>/.cursor/mcp.json",
            Self::Vscode => "<project>/.vscode/mcp.json",
            Self::Codex => "~/.codex/config.toml",
            Self::GeminiCli => "<project>/.gemini/settings.json",
            Self::Windsurf => "~/.codeium/windsurf/mcp_config.json",
            Self::Zed => "~/.config/zed/settings.json",
            Self::OpenCode => "<project>/opencode.json",
            Self::Cline => "cline_mcp_settings.json (Cline → MCP Servers → Configure)",
            Self::Goose => "~/.config/goose/config.yaml",
        }
    }

    /// How the client's file is written.
    pub fn format(self) -> Format {
        let json = |servers_key, comments| Format::Json {
            servers_key,
            comments,
        };
        match self {
            Self::ClaudeCode
            | Self::ClaudeDesktop
            | Self::Cursor
            | Self::Windsurf
            | Self::Cline => json("mcpServers", false),
            Self::GeminiCli => json("mcpServers", true),
            Self::Vscode => json("servers", true),
            Self::Zed => json("context_servers", true),
            Self::OpenCode => json("mcp", true),
            Self::Codex => Format::Toml,
            Self::Goose => Format::Yaml,
        }
    }

    /// Whether the client's file is TOML.
    pub fn is_toml(self) -> bool {
        self.format() == Format::Toml
    }

    /// The JSON key of the server table; `None` for a TOML or YAML client.
    pub fn servers_key(self) -> Option<&'static str> {
        match self.format() {
            Format::Json { servers_key, .. } => Some(servers_key),
            Format::Toml | Format::Yaml => None,
        }
    }

    /// Whether the entry says `"type": "stdio"` (the clients that also take HTTP servers
    /// in the same table want it).
    pub fn typed(self) -> bool {
        matches!(self, Self::ClaudeCode | Self::Vscode)
    }
}

/// The server entry of a JSON client, as ordered key/value pairs: `type` first when the
/// client wants it, then `command`, `args`. OpenCode's own shape: `type: "local"`, the
/// command and its arguments in one array, `enabled`.
pub fn json_entry(client: McpClient, command: &str, args: &[&str]) -> Vec<(&'static str, Value)> {
    if client == McpClient::OpenCode {
        let argv: Vec<&str> = std::iter::once(command)
            .chain(args.iter().copied())
            .collect();
        return vec![
            ("type", json!("local")),
            ("command", json!(argv)),
            ("enabled", json!(true)),
        ];
    }
    let mut entry = Vec::with_capacity(3);
    if client.typed() {
        entry.push(("type", json!("stdio")));
    }
    entry.push(("command", json!(command)));
    entry.push(("args", json!(args)));
    entry
}

/// Goose's extension entry (`extensions.<name>` in config.yaml), as ordered pairs: the
/// stdio shape of Goose's configuration guide.
pub fn goose_entry(name: &str, command: &str, args: &[&str]) -> Vec<(&'static str, Value)> {
    vec![
        ("name", json!(name)),
        ("type", json!("stdio")),
        ("enabled", json!(true)),
        ("cmd", json!(command)),
        ("args", json!(args)),
        ("timeout", json!(300)),
    ]
}

/// The YAML block of one Goose extension, its keys indented by `indent` (the name's own
/// line not included). Strings are JSON strings: YAML's double-quoted scalars take every
/// JSON escape, so the text reads back as the same strings.
pub fn goose_block(name: &str, command: &str, args: &[&str], indent: &str) -> String {
    let mut out = String::new();
    for (k, v) in goose_entry(name, command, args) {
        out.push_str(&format!("{indent}{k}: {v}\n"));
    }
    out
}

/// The snippet for `client`: a whole file's worth of configuration naming `command`
/// (the server binary, absolute when bundled) with `serve --project <project>`.
pub fn snippet(client: McpClient, command: &str, project: &str) -> String {
    let args = ["serve", "--project", project];
    match client.format() {
        Format::Json { servers_key, .. } => {
            let entry: Map<String, Value> = json_entry(client, command, &args)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            let file = json!({ servers_key: { SERVER_NAME: entry } });
            // Serializing a `Value` of strings cannot fail.
            serde_json::to_string_pretty(&file).unwrap_or_default()
                + "
"
        }
        Format::Toml => {
            let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
            format!(
                "[mcp_servers.{SERVER_NAME}]
command = {}
args = [{}]
",
                toml_string(command),
                args.join(", ")
            )
        }
        Format::Yaml => format!(
            "extensions:\n  {SERVER_NAME}:\n{}",
            goose_block(SERVER_NAME, command, &args, "    ")
        ),
    }
}

/// A TOML basic string. Godot's string-literal escapes are exactly TOML's basic-string
/// escapes (`\"`, `\\`, `\n`, `\r`, `\t`, and `\uXXXX` for every other control
/// character; TOML reads hex digits of either case), so the value model's writer serves.
fn toml_string(s: &str) -> String {
    godot_mcp_formats::variant::quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths a real machine has: spaces, quotes, backslashes (Windows), non-ASCII, and
    /// control characters a file name may legally hold on Linux.
    const COMMANDS: [&str; 5] = [
        "/home/ana/My Game/addons/godot_mcp/bin/linux-x86_64/godot-mcp",
        r"C:\Users\Zoë\Game\addons\godot_mcp\bin\windows-x86_64\godot-mcp.exe",
        "/tmp/we\"ird/god\\ot-mcp",
        "/tmp/ctl\u{1}\u{7f}\t\n/godot-mcp",
        "godot-mcp",
    ];

    fn each(f: impl Fn(McpClient, &str, &str)) {
        for client in McpClient::ALL {
            for command in COMMANDS {
                for project in ["/home/ana/My Game", r"C:\Game", "/p\"q"] {
                    f(client, command, project);
                }
            }
        }
    }

    #[test]
    fn json_snippets_parse_as_the_clients_read_them() {
        each(|client, command, project| {
            if client.servers_key().is_none() {
                return;
            }
            let text = snippet(client, command, project);
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            // Spelled out here, not read from `servers_key`/`typed`: the clients' formats.
            let (key, kind) = match client {
                McpClient::Vscode => ("servers", Some("stdio")),
                McpClient::ClaudeCode => ("mcpServers", Some("stdio")),
                McpClient::Zed => ("context_servers", None),
                McpClient::OpenCode => ("mcp", Some("local")),
                _ => ("mcpServers", None),
            };
            let entry = &v[key][SERVER_NAME];
            if client == McpClient::OpenCode {
                // OpenCode: the command and its arguments in one array.
                assert_eq!(
                    entry["command"],
                    json!([command, "serve", "--project", project]),
                    "{text}"
                );
                assert_eq!(entry["enabled"], true, "{text}");
            } else {
                assert_eq!(entry["command"], command, "{text}");
                assert_eq!(
                    entry["args"],
                    json!(["serve", "--project", project]),
                    "{text}"
                );
            }
            assert_eq!(entry.get("type").and_then(Value::as_str), kind, "{text}");
            assert_eq!(v.as_object().unwrap().len(), 1, "{text}");
        });
    }

    #[test]
    fn the_codex_snippet_parses_as_toml() {
        each(|client, command, project| {
            if !client.is_toml() {
                return;
            }
            let text = snippet(client, command, project);
            let doc: toml_edit::DocumentMut =
                text.parse().unwrap_or_else(|e| panic!("{e}: {text}"));
            let server = &doc["mcp_servers"][SERVER_NAME];
            assert_eq!(server["command"].as_str(), Some(command), "{text}");
            let args: Vec<&str> = server["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(args, ["serve", "--project", project], "{text}");
        });
    }

    /// Goose reads YAML 1.2: every command and project path (quotes, backslashes, control
    /// characters) reads back as written.
    #[test]
    fn the_goose_snippet_parses_as_yaml() {
        use saphyr::{LoadableYamlNode, Yaml};
        each(|client, command, project| {
            if client.format() != Format::Yaml {
                return;
            }
            let text = snippet(client, command, project);
            let docs = Yaml::load_from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            let server = &docs[0]["extensions"][SERVER_NAME];
            assert_eq!(server["cmd"].as_str(), Some(command), "{text}");
            assert_eq!(server["type"].as_str(), Some("stdio"), "{text}");
            assert_eq!(server["enabled"].as_bool(), Some(true), "{text}");
            let args: Vec<&str> = server["args"]
                .as_vec()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(args, ["serve", "--project", project], "{text}");
        });
    }

    #[test]
    fn every_client_has_its_own_name_and_file() {
        let ids: std::collections::BTreeSet<_> = McpClient::ALL.iter().map(|c| c.id()).collect();
        assert_eq!(ids.len(), McpClient::ALL.len());
        for c in McpClient::ALL {
            assert!(!c.title().is_empty() && !c.file().is_empty());
        }
    }
}
