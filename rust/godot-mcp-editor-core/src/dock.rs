//! The editor dock's view model: what each of its labels says, derived from the bridge
//! thread's [`Feed`] and the add-on's own facts ([`DockContext`]). Pure, so every label
//! is tested here; the add-on only copies these strings into its Label nodes, and only
//! when [`Feed::version`] moved.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use godot_mcp_protocol::{ErrorCode, GateState, ServerStatus};

use godot_mcp_protocol::clients::{McpClient, snippet};

/// The `bin/` folder name of this build's platform, as `scripts/package.sh` lays the
/// release zip out (the library and the `godot-mcp` server live there side by side).
pub const PLATFORM_DIR: &str = if cfg!(target_os = "windows") {
    "windows-x86_64"
} else if cfg!(target_os = "macos") {
    "macos-universal"
} else if cfg!(target_arch = "aarch64") {
    "linux-arm64"
} else {
    "linux-x86_64"
};

/// The server binary's file name on this platform.
pub const SERVER_FILE: &str = if cfg!(target_os = "windows") {
    "godot-mcp.exe"
} else {
    "godot-mcp"
};

/// Which server the dock's client set-up names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerBinary {
    /// The release zip's own server, by absolute path: no PATH or cargo needed.
    Bundled(PathBuf),
    /// No bundled server (a source checkout): `godot-mcp` from PATH, and where the
    /// bundled one was looked for.
    FromPath { looked_at: PathBuf },
}

impl ServerBinary {
    /// Find the bundled server of the add-on in the project at `project_root`.
    pub fn find(project_root: &Path) -> Self {
        let bundled = project_root
            .join("addons")
            .join("godot_mcp")
            .join("bin")
            .join(PLATFORM_DIR)
            .join(SERVER_FILE);
        if bundled.is_file() {
            ServerBinary::Bundled(bundled)
        } else {
            ServerBinary::FromPath { looked_at: bundled }
        }
    }

    /// The command a client config names.
    pub fn command(&self) -> String {
        match self {
            ServerBinary::Bundled(p) => p.display().to_string(),
            ServerBinary::FromPath { .. } => "godot-mcp".into(),
        }
    }

    /// One line for the dock.
    pub fn describe(&self) -> String {
        match self {
            ServerBinary::Bundled(p) => format!("Server: {} (bundled)", p.display()),
            ServerBinary::FromPath { looked_at } => format!(
                "Server: no bundled server at {} (a source checkout?); the set-up below uses \
                 `godot-mcp` from PATH (install it with `cargo install --path rust/godot-mcp-server`)",
                looked_at.display()
            ),
        }
    }
}

/// The add-on's own facts, fixed while the editor runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockContext {
    pub addon_version: String,
    /// This project's folder, absolute, without a trailing separator.
    pub project_root: String,
    pub server: ServerBinary,
}

/// The bridge connection, as the socket thread last saw it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Link {
    /// The executor is off (the plugin is disabled in Project Settings).
    #[default]
    Off,
    /// No server: no discovery file, or nothing listening where it points.
    Waiting,
    /// Connected and accepted by a server of this version.
    Connected { server_version: String },
    /// The server refused the hello.
    Refused { code: ErrorCode, message: String },
}

/// What the socket thread shares with the main thread.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeedData {
    pub link: Link,
    /// The newest status frame of the current connection.
    pub status: Option<ServerStatus>,
}

/// The socket thread writes, the main thread reads; [`Feed::version`] moves only when
/// the data changed, so the dock compares one integer per frame and reads (and
/// allocates) nothing while nothing changes.
#[derive(Debug, Default)]
pub struct Feed {
    version: AtomicU64,
    data: Mutex<FeedData>,
}

impl Feed {
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    pub fn get(&self) -> FeedData {
        match self.data.lock() {
            Ok(d) => d.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Change the data with `f`; the version moves only if it changed.
    pub fn update(&self, f: impl FnOnce(&mut FeedData)) {
        let mut guard = match self.data.lock() {
            Ok(d) => d,
            Err(poisoned) => poisoned.into_inner(),
        };
        let before = guard.clone();
        f(&mut guard);
        if *guard != before {
            self.version.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// A client's snippet as the dock shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnippetView {
    pub client: McpClient,
    /// "Claude Code — `<project>`/.mcp.json".
    pub heading: String,
    pub text: String,
    /// The `setup-client` run that merges the entry into the client's file, as a shell
    /// line (shown) and as the program and arguments the dock's button runs.
    pub setup: String,
    pub setup_argv: (String, Vec<String>),
}

/// Every text the dock shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockView {
    pub connection: String,
    /// Whether the connection line is a problem (refused, version mismatch).
    pub connection_alarm: bool,
    pub server: String,
    pub gate: String,
    /// Whether the gate line is an alarm (quarantined transactions).
    pub gate_alarm: bool,
    /// The exact repair command to start with, empty when nothing is quarantined.
    pub repair: String,
    /// One line per recent journal row, newest first.
    pub actions: Vec<String>,
    pub snippets: Vec<SnippetView>,
}

/// The dock's texts for `data`.
pub fn view(data: &FeedData, ctx: &DockContext) -> DockView {
    let (connection, connection_alarm) = connection_line(&data.link, &ctx.addon_version);
    let status = match data.link {
        Link::Connected { .. } => data.status.as_ref(),
        _ => None,
    };
    let (gate, gate_alarm, repair) = match status.map(|s| &s.write_gate) {
        None => (
            "Write gate: unknown (no server)".to_owned(),
            false,
            String::new(),
        ),
        Some(GateState::Open) => ("Write gate: open".to_owned(), false, String::new()),
        Some(GateState::Unreconciled) => (
            "Write gate: closed: start-up reconciliation has not finished".to_owned(),
            false,
            String::new(),
        ),
        Some(GateState::Closed { quarantined }) => {
            let mut line = format!(
                "ALARM: write gate closed: {} quarantined transaction(s); every write is refused until an operator repairs them",
                quarantined.len()
            );
            for q in quarantined {
                line.push_str(&format!("\n  {}: {}", q.transaction_id, q.reason));
            }
            let repair = quarantined.first().map_or_else(String::new, |q| {
                repair_command(&ctx.server, &ctx.project_root, &q.transaction_id)
            });
            (line, true, repair)
        }
    };
    let actions = status.map_or_else(Vec::new, |s| {
        s.recent
            .iter()
            .map(|a| {
                let mut line = format!(
                    "{}  {}  {}  undoable: {}  {}",
                    a.status,
                    a.tool,
                    a.class,
                    match a.undoable {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "-",
                    },
                    a.transaction_id
                );
                // A change is one line with its files.
                if !a.files.is_empty() {
                    line.push_str(&format!("  files: {}", a.files.join(", ")));
                }
                line
            })
            .collect()
    });
    let command = ctx.server.command();
    let snippets = McpClient::ALL
        .iter()
        .map(|&client| {
            let args = vec![
                "setup-client".to_owned(),
                client.id().to_owned(),
                "--project".to_owned(),
                ctx.project_root.clone(),
            ];
            let setup = std::iter::once(&command)
                .chain(&args)
                .map(|w| shell_word(w))
                .collect::<Vec<_>>()
                .join(" ");
            SnippetView {
                client,
                heading: format!("{} — {}", client.title(), client.file()),
                text: snippet(client, &command, &ctx.project_root),
                setup,
                setup_argv: (command.clone(), args),
            }
        })
        .collect();
    DockView {
        connection,
        connection_alarm,
        server: ctx.server.describe(),
        gate,
        gate_alarm,
        repair,
        actions,
        snippets,
    }
}

fn connection_line(link: &Link, addon_version: &str) -> (String, bool) {
    match link {
        Link::Off => (
            "Off: enable \"Godot MCP\" in Project Settings → Plugins".to_owned(),
            false,
        ),
        Link::Waiting => (
            "Waiting for the godot-mcp server of this project".to_owned(),
            false,
        ),
        Link::Connected { server_version } if server_version != addon_version => (
            format!(
                "Version mismatch: connected to server {server_version}, but this add-on is {addon_version}; install the add-on and server of one release"
            ),
            true,
        ),
        Link::Connected { server_version } => {
            (format!("Connected to server {server_version}"), false)
        }
        Link::Refused {
            code: ErrorCode::ProtocolMismatch,
            message,
        } => (
            format!(
                "Version mismatch: the server refused add-on {addon_version}: {message}; install the add-on and server of one release"
            ),
            true,
        ),
        Link::Refused { message, .. } => (format!("Refused by the server: {message}"), true),
    }
}

/// What the dock says after its button ran `setup-client`: the tool's own lines
/// (created / updated with its backup / unchanged, or its refusal).
pub fn setup_outcome(ran: Result<(bool, &[u8], &[u8]), String>) -> String {
    match ran {
        Ok((true, stdout, _)) => String::from_utf8_lossy(stdout).trim().to_owned(),
        Ok((false, stdout, stderr)) => format!(
            "setup-client failed: {}",
            [stdout, stderr]
                .iter()
                .map(|b| String::from_utf8_lossy(b).trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Err(e) => format!("setup-client could not run: {e}"),
    }
}

/// The operator's first repair step for `txn` (docs/recovery.md): `reconcile` re-derives
/// and reports, recording nothing. It needs the server stopped (the project's lease) and
/// a proof file in the repair-proof schema.
pub fn repair_command(server: &ServerBinary, project_root: &str, txn: &str) -> String {
    format!(
        "{} transaction repair --project {} --transaction-id {} --operation reconcile --proof-file proof.json",
        shell_word(&server.command()),
        shell_word(project_root),
        shell_word(txn)
    )
}

/// `s` as one shell word: as is when it needs no quoting, else in single quotes (POSIX),
/// or double quotes on Windows.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || "/._-:+=@%,".contains(c) || (cfg!(windows) && c == '\\')
        });
    if plain {
        s.to_owned()
    } else if cfg!(windows) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use godot_mcp_protocol::{QuarantinedRow, RecentAction};

    use super::*;

    fn ctx() -> DockContext {
        DockContext {
            addon_version: "0.1.0".into(),
            project_root: "/home/ana/My Game".into(),
            server: ServerBinary::Bundled(
                "/home/ana/My Game/addons/godot_mcp/bin/linux-x86_64/godot-mcp".into(),
            ),
        }
    }

    fn connected(status: ServerStatus) -> FeedData {
        FeedData {
            link: Link::Connected {
                server_version: "0.1.0".into(),
            },
            status: Some(status),
        }
    }

    fn status(gate: GateState, recent: Vec<RecentAction>) -> ServerStatus {
        ServerStatus {
            server_version: "0.1.0".into(),
            project_root: "/home/ana/My Game".into(),
            write_gate: gate,
            recent,
        }
    }

    #[test]
    fn connection_states() {
        let line = |link: Link| {
            let v = view(&FeedData { link, status: None }, &ctx());
            (v.connection, v.connection_alarm)
        };
        assert!(line(Link::Off).0.starts_with("Off: enable"));
        assert_eq!(
            line(Link::Waiting),
            (
                "Waiting for the godot-mcp server of this project".into(),
                false
            )
        );
        assert_eq!(
            line(Link::Connected {
                server_version: "0.1.0".into()
            }),
            ("Connected to server 0.1.0".into(), false)
        );
        let (text, alarm) = line(Link::Connected {
            server_version: "0.2.0".into(),
        });
        assert!(alarm);
        assert!(
            text.starts_with(
                "Version mismatch: connected to server 0.2.0, but this add-on is 0.1.0"
            ),
            "{text}"
        );
        let (text, alarm) = line(Link::Refused {
            code: ErrorCode::ProtocolMismatch,
            message: "the add-on speaks bridge protocol 1, this server 2".into(),
        });
        assert!(
            alarm && text.starts_with("Version mismatch: the server refused add-on 0.1.0"),
            "{text}"
        );
        let (text, alarm) = line(Link::Refused {
            code: ErrorCode::Unauthorized,
            message: "wrong or missing token".into(),
        });
        assert_eq!(
            (text.as_str(), alarm),
            ("Refused by the server: wrong or missing token", true)
        );
    }

    #[test]
    fn an_open_gate_and_the_recent_actions() {
        let v = view(
            &connected(status(
                GateState::Open,
                vec![
                    RecentAction {
                        transaction_id: "t2".into(),
                        tool: "node.create".into(),
                        class: "editor_runtime".into(),
                        status: "committed".into(),
                        undoable: Some(true),
                        files: Vec::new(),
                    },
                    RecentAction {
                        transaction_id: "t1".into(),
                        tool: "move_file".into(),
                        class: "destructive".into(),
                        status: "committed".into(),
                        undoable: None,
                        files: vec!["actors/e.tscn".into(), "enemies/e.tscn".into()],
                    },
                ],
            )),
            &ctx(),
        );
        assert_eq!(v.gate, "Write gate: open");
        assert!(!v.gate_alarm);
        assert_eq!(v.repair, "");
        assert_eq!(
            v.actions,
            [
                "committed  node.create  editor_runtime  undoable: yes  t2",
                "committed  move_file  destructive  undoable: -  t1  files: actors/e.tscn, enemies/e.tscn"
            ]
        );
    }

    #[test]
    fn a_closed_gate_is_an_alarm_with_the_repair_command() {
        let v = view(
            &connected(status(
                GateState::Closed {
                    quarantined: vec![QuarantinedRow {
                        transaction_id: "0f6b-1".into(),
                        reason: "scripts/a.gd is neither".into(),
                    }],
                },
                vec![],
            )),
            &ctx(),
        );
        assert!(v.gate_alarm);
        assert_eq!(
            v.gate,
            "ALARM: write gate closed: 1 quarantined transaction(s); every write is refused until an operator repairs them\n  0f6b-1: scripts/a.gd is neither"
        );
        assert_eq!(
            v.repair,
            "'/home/ana/My Game/addons/godot_mcp/bin/linux-x86_64/godot-mcp' transaction repair \
             --project '/home/ana/My Game' --transaction-id 0f6b-1 --operation reconcile --proof-file proof.json"
        );
    }

    #[test]
    fn a_status_of_a_lost_connection_is_not_shown() {
        let mut data = connected(status(GateState::Open, vec![]));
        data.link = Link::Waiting;
        let v = view(&data, &ctx());
        assert_eq!(v.gate, "Write gate: unknown (no server)");
        assert!(v.actions.is_empty());
    }

    #[test]
    fn snippets_name_the_bundled_server_or_fall_back_to_path() {
        let v = view(&FeedData::default(), &ctx());
        assert_eq!(v.snippets.len(), McpClient::ALL.len());
        let claude: serde_json::Value = serde_json::from_str(&v.snippets[0].text).unwrap();
        assert_eq!(
            claude["mcpServers"]["godot"]["command"],
            "/home/ana/My Game/addons/godot_mcp/bin/linux-x86_64/godot-mcp"
        );
        assert!(v.server.ends_with("(bundled)"), "{}", v.server);

        let dir = tempfile::tempdir().unwrap();
        let missing = ServerBinary::find(dir.path());
        let ServerBinary::FromPath { looked_at } = &missing else {
            panic!("{missing:?}")
        };
        assert_eq!(
            looked_at,
            &dir.path()
                .join(format!("addons/godot_mcp/bin/{PLATFORM_DIR}/{SERVER_FILE}"))
        );
        assert_eq!(missing.command(), "godot-mcp");
        assert!(
            missing.describe().contains("from PATH"),
            "{}",
            missing.describe()
        );

        std::fs::create_dir_all(looked_at.parent().unwrap()).unwrap();
        std::fs::write(looked_at, b"").unwrap();
        assert_eq!(
            ServerBinary::find(dir.path()),
            ServerBinary::Bundled(looked_at.clone())
        );
    }

    #[test]
    fn each_client_has_its_setup_client_line() {
        let v = view(&FeedData::default(), &ctx());
        let bin = "/home/ana/My Game/addons/godot_mcp/bin/linux-x86_64/godot-mcp";
        assert_eq!(
            v.snippets[3].setup,
            format!("'{bin}' setup-client vscode --project '/home/ana/My Game'")
        );
        assert_eq!(
            v.snippets[3].setup_argv,
            (
                bin.to_owned(),
                vec![
                    "setup-client".to_owned(),
                    "vscode".to_owned(),
                    "--project".to_owned(),
                    "/home/ana/My Game".to_owned()
                ]
            )
        );
        assert_eq!(
            setup_outcome(Ok((true, b"vscode: created x\n", b""))),
            "vscode: created x"
        );
        assert_eq!(
            setup_outcome(Ok((
                false,
                b"",
                b"error PARSE_ERROR: x\nnothing was written\n"
            ))),
            "setup-client failed: error PARSE_ERROR: x\nnothing was written"
        );
        assert!(setup_outcome(Err("No such file".into())).contains("could not run"));
    }

    #[test]
    fn the_feed_version_moves_only_on_change() {
        let feed = Feed::default();
        let v0 = feed.version();
        feed.update(|d| d.link = Link::Off);
        assert_eq!(feed.version(), v0, "unchanged data, same version");
        feed.update(|d| d.link = Link::Waiting);
        let v1 = feed.version();
        assert!(v1 > v0);
        feed.update(|d| d.link = Link::Waiting);
        assert_eq!(feed.version(), v1);
        assert_eq!(feed.get().link, Link::Waiting);
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("/a/b-c_d.e"), "/a/b-c_d.e");
        if !cfg!(windows) {
            assert_eq!(shell_word("/a b"), "'/a b'");
            assert_eq!(shell_word("it's"), "'it'\\''s'");
            assert_eq!(shell_word(""), "''");
        }
    }
}
