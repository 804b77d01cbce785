//! `godot-mcp setup-client`: the real binary against real config files that already hold
//! other servers, comments and keys of their own.
//!
//! Every home-relative file is pointed into a temp dir through HOME, XDG_CONFIG_HOME and
//! CODEX_HOME, so nothing outside it is touched.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Env {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("my game");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&project).unwrap();
        fs::write(project.join("project.godot"), "config_version=5\n").unwrap();
        // Canonical, as the binary writes it (the temp dir may sit behind a symlink).
        let project = project.canonicalize().unwrap();
        Self {
            _tmp: tmp,
            home,
            project,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_godot-mcp"))
            .arg("setup-client")
            .args(args)
            .arg("--project")
            .arg(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("xdg"))
            .env("CODEX_HOME", self.home.join("codex"))
            .env_remove("GODOT_MCP_PROJECT")
            .output()
            .unwrap();
        eprintln!(
            "setup-client {args:?}: {}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn project_str(&self) -> &str {
        self.project.to_str().unwrap()
    }
}

fn exe() -> String {
    Path::new(env!("CARGO_BIN_EXE_godot-mcp"))
        .canonicalize()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The names in `dir`, sorted: to see that no backup or temp file appeared.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// Deliberately not serde_json's layout: unsorted keys, odd spacing, an escape, a nested
// array with a brace inside a string. All of it must survive byte for byte.
const OTHER_SERVER: &str = r#""filesystem" :{"command":"npx", "args":["-y","@mcp/fs","/srv/{x}"],"env":{"TOKEN":"a\"b\u00e9"}}"#;

fn json_with_other_server(servers_key: &str) -> String {
    format!(
        "{{\n    \"zzz_first\": true,\n    \"{servers_key}\": {{\n        {OTHER_SERVER}\n    }},\n    \"inputs\": [ {{\"id\": \"k\"}} ]\n}}\n"
    )
}

fn assert_json_entry(text: &str, servers_key: &str, env: &Env, typed: bool) {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    let entry = &v[servers_key]["godot"];
    assert_eq!(entry["command"], exe(), "{text}");
    assert_eq!(
        entry["args"],
        serde_json::json!(["serve", "--project", env.project_str()]),
        "{text}"
    );
    if typed {
        assert_eq!(entry["type"], "stdio", "{text}");
    } else {
        assert!(entry.get("type").is_none(), "{text}");
    }
}

/// Merge into an existing file with another server: that server and the other keys keep
/// their bytes, a backup of the old file is made, and a second run changes nothing.
fn merge_round_trip(client: &str, relative: &str, servers_key: &str, typed: bool) {
    let env = Env::new();
    let path = env.project.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = json_with_other_server(servers_key);
    fs::write(&path, &original).unwrap();

    let out = env.run(&[client]);
    assert!(out.status.success());
    let merged = fs::read_to_string(&path).unwrap();
    assert_json_entry(&merged, servers_key, &env, typed);
    assert!(
        merged.contains(OTHER_SERVER),
        "other server changed:\n{merged}"
    );
    assert!(
        merged.starts_with("{\n    \"zzz_first\": true,\n"),
        "{merged}"
    );
    assert!(
        merged.ends_with(",\n    \"inputs\": [ {\"id\": \"k\"} ]\n}\n"),
        "{merged}"
    );
    let v: Value = serde_json::from_str(&merged).unwrap();
    let o: Value = serde_json::from_str(&original).unwrap();
    assert_eq!(v[servers_key]["filesystem"], o[servers_key]["filesystem"]);
    let backup = PathBuf::from(format!("{}.bak", path.display()));
    assert_eq!(fs::read_to_string(&backup).unwrap(), original);
    assert!(stdout(&out).contains(&format!(
        "backup of the previous file: {}",
        backup.display()
    )));

    let before = listing(path.parent().unwrap());
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    let again = env.run(&[client]);
    assert!(again.status.success());
    assert!(stdout(&again).contains("unchanged"), "{}", stdout(&again));
    assert_eq!(fs::read_to_string(&path).unwrap(), merged);
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    assert_eq!(listing(path.parent().unwrap()), before, "no new backup");
}

#[test]
fn claude_code_merges_into_project_mcp_json_keeping_other_servers() {
    merge_round_trip("claude-code", ".mcp.json", "mcpServers", true);
}

#[test]
fn cursor_merges_into_project_cursor_mcp_json_keeping_other_servers() {
    merge_round_trip("cursor", ".cursor/mcp.json", "mcpServers", false);
}

#[test]
fn vscode_merges_servers_with_stdio_type_keeping_other_servers() {
    merge_round_trip("vscode", ".vscode/mcp.json", "servers", true);
}

#[test]
fn claude_desktop_creates_its_file_under_xdg_config_home_without_a_backup() {
    let env = Env::new();
    let path = env.home.join("xdg/Claude/claude_desktop_config.json");
    let out = env.run(&["claude-desktop"]);
    assert!(out.status.success());
    let text = fs::read_to_string(&path).unwrap();
    assert_json_entry(&text, "mcpServers", &env, false);
    assert_eq!(
        listing(path.parent().unwrap()),
        ["claude_desktop_config.json"]
    );
    assert!(stdout(&out).contains("created"));
}

#[test]
fn an_existing_godot_entry_is_updated_keeping_its_own_other_keys() {
    let env = Env::new();
    let path = env.project.join(".mcp.json");
    let original = r#"{"mcpServers": {"godot": {"command": "godot-mcp", "args": ["serve"], "env": {"GODOT_MCP_LOG": "debug"}}, "b": {"command": "b"}}}"#;
    fs::write(&path, original).unwrap();
    assert!(env.run(&["claude-code"]).status.success());
    let text = fs::read_to_string(&path).unwrap();
    assert_json_entry(&text, "mcpServers", &env, true);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["mcpServers"]["godot"]["env"]["GODOT_MCP_LOG"], "debug");
    assert!(text.ends_with(r#", "b": {"command": "b"}}}"#), "{text}");
    assert_eq!(
        fs::read_to_string(format!("{}.bak", path.display())).unwrap(),
        original
    );

    // A later change never overwrites the earlier backup.
    fs::write(&path, original).unwrap();
    assert!(env.run(&["claude-code"]).status.success());
    assert_eq!(
        fs::read_to_string(format!("{}.bak.1", path.display())).unwrap(),
        original
    );
}

const CODEX_CONFIG: &str = "\
# my codex settings
model = \"o3\" # inline comment

[mcp_servers.other]
command = \"other-mcp\"   # keep this spacing
args = [ \"--x\" ]

# profiles follow
[profiles.fast]
model = \"o4-mini\"
";

#[test]
fn codex_merges_into_config_toml_keeping_comments_and_other_tables() {
    let env = Env::new();
    let dir = env.home.join("codex");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    fs::write(&path, CODEX_CONFIG).unwrap();

    assert!(env.run(&["codex"]).status.success());
    let text = fs::read_to_string(&path).unwrap();
    // Our table is inserted beside the other server; every original byte stays around it.
    let start = text.find("[mcp_servers.godot]\n").expect("our table");
    let end = start + text[start..].find("\n\n").expect("a blank line after it") + 2;
    assert_eq!(
        format!("{}{}", &text[..start], &text[end..]),
        CODEX_CONFIG,
        "original text not kept:\n{text}"
    );
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    let godot = &doc["mcp_servers"]["godot"];
    assert_eq!(godot["command"].as_str(), Some(exe().as_str()));
    let args: Vec<&str> = godot["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(args, ["serve", "--project", env.project_str()]);
    assert!(text.contains("[mcp_servers.godot]"), "{text}");
    assert!(!text.contains("[mcp_servers]\n"), "{text}");
    assert_eq!(
        fs::read_to_string(dir.join("config.toml.bak")).unwrap(),
        CODEX_CONFIG
    );

    let before = listing(&dir);
    let again = env.run(&["codex"]);
    assert!(stdout(&again).contains("unchanged"));
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
    assert_eq!(listing(&dir), before);
}

#[test]
fn codex_creates_config_toml_that_parses() {
    let env = Env::new();
    assert!(env.run(&["codex"]).status.success());
    let text = fs::read_to_string(env.home.join("codex/config.toml")).unwrap();
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    assert_eq!(
        doc["mcp_servers"]["godot"]["command"].as_str(),
        Some(exe().as_str())
    );
}

#[test]
fn dry_run_shows_the_change_and_writes_nothing() {
    let env = Env::new();
    // An existing file: a diff adding our entry, the file and folder untouched.
    let path = env.project.join(".vscode/mcp.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = json_with_other_server("servers");
    fs::write(&path, &original).unwrap();
    let out = env.run(&["vscode", "--dry-run"]);
    assert!(out.status.success());
    let shown = stdout(&out);
    assert!(shown.contains("would update"), "{shown}");
    assert!(shown.contains("+        \"godot\": {"), "{shown}");
    assert!(shown.contains(&exe()), "{shown}");
    assert!(shown.contains("nothing was written"));
    assert_eq!(fs::read_to_string(&path).unwrap(), original);
    assert_eq!(listing(path.parent().unwrap()), ["mcp.json"]);

    // No file yet: nothing is created, not even its folder.
    let out = env.run(&["cursor", "--dry-run"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("would create"));
    assert!(!env.project.join(".cursor").exists());
    let out = env.run(&["codex", "--dry-run"]);
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("+[mcp_servers.godot]"),
        "{}",
        stdout(&out)
    );
    assert!(!env.home.join("codex").exists());
}

fn assert_refused(env: &Env, client: &str, path: &Path, broken: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, broken).unwrap();
    let before = listing(path.parent().unwrap());
    let out = env.run(&[client]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error PARSE_ERROR: "), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(fs::read_to_string(path).unwrap(), broken);
    assert_eq!(
        listing(path.parent().unwrap()),
        before,
        "no backup, no temp file"
    );
}

#[test]
fn a_file_that_does_not_parse_is_refused_and_left_unchanged() {
    let env = Env::new();
    assert_refused(
        &env,
        "claude-code",
        &env.project.join(".mcp.json"),
        "{\"mcpServers\": {\"a\": {}},\n",
    );
    assert_refused(
        &env,
        "vscode",
        &env.project.join(".vscode/mcp.json"),
        "// a comment\n{\"servers\": {}}\n",
    );
    assert_refused(
        &env,
        "codex",
        &env.home.join("codex/config.toml"),
        "[mcp_servers.other\ncommand = 1\n",
    );
    // Parses, but our table is not a table: refused too, never replaced.
    assert_refused(
        &env,
        "cursor",
        &env.project.join(".cursor/mcp.json"),
        "{\"mcpServers\": [\"other\"]}",
    );
    assert_refused(
        &env,
        "codex",
        &env.home.join("codex/config.toml"),
        "mcp_servers = 3\n",
    );
}

#[test]
fn a_folder_without_project_godot_is_refused() {
    let env = Env::new();
    fs::remove_file(env.project.join("project.godot")).unwrap();
    let out = env.run(&["claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("INVALID_PARAMS"));
    assert!(!env.project.join(".mcp.json").exists());
}

#[test]
fn help_names_every_client_and_its_file() {
    let out = Command::new(env!("CARGO_BIN_EXE_godot-mcp"))
        .args(["setup-client", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = stdout(&out);
    for needle in [
        "claude-code",
        "claude-desktop",
        "cursor",
        "vscode",
        "codex",
        ".mcp.json",
        ".cursor/mcp.json",
        ".vscode/mcp.json",
        "config.toml",
        "--dry-run",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
}
