//! The MCP clients godot-mcp configures, and the entry each one needs: one definition for
//! both `godot-mcp setup-client` (which merges [`json_entry`] into a client's file) and the
//! add-on's dock (which shows [`snippet`], a whole file's worth, with a copy button).
//!
//! `mcpServers` for Claude Code (typed `stdio`), Claude Desktop and Cursor; `servers`
//! (typed `stdio`) for VS Code; `[mcp_servers.godot]` in TOML for Codex. JSON goes
//! through serde_json; the TOML is two keys, written with TOML's basic-string escapes
//! (the tests parse it with `toml_edit`; `setup-client` edits TOML files with `toml_edit`).

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
}

impl McpClient {
    pub const ALL: [McpClient; 5] = [
        McpClient::ClaudeCode,
        McpClient::ClaudeDesktop,
        McpClient::Cursor,
        McpClient::Vscode,
        McpClient::Codex,
    ];

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::Vscode => "VS Code",
            Self::Codex => "Codex",
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
        }
    }

    /// Whether the client's file is TOML (else JSON).
    pub fn is_toml(self) -> bool {
        self == Self::Codex
    }

    /// The JSON key of the server table; `None` for a TOML client.
    pub fn servers_key(self) -> Option<&'static str> {
        match self {
            Self::ClaudeCode | Self::ClaudeDesktop | Self::Cursor => Some("mcpServers"),
            Self::Vscode => Some("servers"),
            Self::Codex => None,
        }
    }

    /// Whether the entry says `"type": "stdio"` (the clients that also take HTTP servers
    /// in the same table want it).
    pub fn typed(self) -> bool {
        matches!(self, Self::ClaudeCode | Self::Vscode)
    }
}

/// The server entry of a JSON client, as ordered key/value pairs (`type` first when the
/// client wants it, then `command`, `args`).
pub fn json_entry(client: McpClient, command: &str, args: &[&str]) -> Vec<(&'static str, Value)> {
    let mut entry = Vec::with_capacity(3);
    if client.typed() {
        entry.push(("type", json!("stdio")));
    }
    entry.push(("command", json!(command)));
    entry.push(("args", json!(args)));
    entry
}

/// The snippet for `client`: a whole file's worth of configuration naming `command`
/// (the server binary, absolute when bundled) with `serve --project <project>`.
pub fn snippet(client: McpClient, command: &str, project: &str) -> String {
    let args = ["serve", "--project", project];
    match client.servers_key() {
        Some(key) => {
            let entry: Map<String, Value> = json_entry(client, command, &args)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            let file = json!({ key: { SERVER_NAME: entry } });
            // Serializing a `Value` of strings cannot fail.
            serde_json::to_string_pretty(&file).unwrap_or_default()
                + "
"
        }
        None => {
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
            if client.is_toml() {
                return;
            }
            let text = snippet(client, command, project);
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            // Spelled out here, not read from `servers_key`/`typed`: the clients' formats.
            let (key, typed) = match client {
                McpClient::Vscode => ("servers", true),
                McpClient::ClaudeCode => ("mcpServers", true),
                _ => ("mcpServers", false),
            };
            let entry = &v[key][SERVER_NAME];
            assert_eq!(entry["command"], command, "{text}");
            assert_eq!(
                entry["args"],
                json!(["serve", "--project", project]),
                "{text}"
            );
            assert_eq!(entry.get("type").is_some(), typed, "{text}");
            if typed {
                assert_eq!(entry["type"], "stdio");
            }
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

    #[test]
    fn every_client_has_its_own_name_and_file() {
        let ids: std::collections::BTreeSet<_> = McpClient::ALL.iter().map(|c| c.id()).collect();
        assert_eq!(ids.len(), 5);
        for c in McpClient::ALL {
            assert!(!c.title().is_empty() && !c.file().is_empty());
        }
    }
}
