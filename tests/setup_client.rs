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
    // VS Code reads mcp.json with comments: a comment is kept (below), a broken file is not.
    assert_refused(
        &env,
        "vscode",
        &env.project.join(".vscode/mcp.json"),
        "// a comment\n{\"servers\": {}\n",
    );
    assert_refused(
        &env,
        "zed",
        &env.home.join("xdg/zed/settings.json"),
        "/* never closed\n{\"context_servers\": {}}\n",
    );
    assert_refused(
        &env,
        "goose",
        &env.home.join("xdg/goose/config.yaml"),
        "extensions: [1, 2\n",
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

/// VS Code, Gemini CLI, Zed and OpenCode read JSON with comments: a commented file is
/// merged, its comments kept, instead of refused.
#[test]
fn a_vscode_mcp_json_with_comments_is_merged_keeping_them() {
    let env = Env::new();
    let path = env.project.join(".vscode/mcp.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let old = "// servers for this workspace\n{\n  \"servers\": {\n    \"fs\": {\"command\": \"npx\"}, // keep\n  },\n}\n";
    fs::write(&path, old).unwrap();
    let out = env.run(&["vscode"]);
    assert!(out.status.success());
    let new = fs::read_to_string(&path).unwrap();
    assert!(
        new.contains("// servers for this workspace") && new.contains("// keep"),
        "{new}"
    );
    let v = read_jsonc(&new);
    assert_eq!(v["servers"]["fs"]["command"], "npx");
    assert_json_entry(&serde_json::to_string(&v).unwrap(), "servers", &env, true);
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
        "gemini-cli",
        "windsurf",
        "zed",
        "opencode",
        "cline",
        "goose",
        ".gemini/settings.json",
        "mcp_config.json",
        "zed/settings.json",
        "opencode.json",
        "cline_mcp_settings.json",
        "goose/config.yaml",
        ".mcp.json",
        ".cursor/mcp.json",
        ".vscode/mcp.json",
        "config.toml",
        "--dry-run",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
}

/// A JSONC file as the clients that take comments read it (comments and trailing commas;
/// nothing else of JSON5), with a parser that is not ours.
fn read_jsonc(text: &str) -> Value {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        ..Default::default()
    };
    jsonc_parser::parse_to_serde_value(text, &options).unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

fn read_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

/// Goose's YAML as JSON (strings, numbers, booleans, sequences, string-keyed mappings).
fn read_yaml(text: &str) -> Value {
    use saphyr::{LoadableYamlNode, Yaml};
    fn json(y: &Yaml<'_>) -> Value {
        if let Some(m) = y.as_mapping() {
            return Value::Object(
                m.iter()
                    .map(|(k, v)| (k.as_str().expect("string key").to_owned(), json(v)))
                    .collect(),
            );
        }
        if let Some(s) = y.as_vec() {
            return Value::Array(s.iter().map(json).collect());
        }
        if let Some(s) = y.as_str() {
            return Value::from(s);
        }
        if let Some(b) = y.as_bool() {
            return Value::from(b);
        }
        if let Some(i) = y.as_integer() {
            return Value::from(i);
        }
        if let Some(f) = y.as_floating_point() {
            return Value::from(f);
        }
        Value::Null
    }
    let docs = Yaml::load_from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    json(&docs[0])
}

/// Merge into the client's documented file (tests/fixtures/clients): our entry is what
/// `expected` says, everything else reads as before, every comment stays, a `.bak` holds
/// the old bytes, and a second run changes nothing.
fn fixture_round_trip(
    client: &str,
    path: impl Fn(&Env) -> PathBuf,
    fixture: &str,
    read: fn(&str) -> Value,
    servers: &str,
    expected: impl Fn(&Env) -> Value,
) {
    let env = Env::new();
    let path = path(&env);
    let original = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/clients")
            .join(fixture),
    )
    .unwrap();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, &original).unwrap();

    let out = env.run(&[client]);
    assert!(out.status.success(), "{client}");
    let merged = fs::read_to_string(&path).unwrap();
    let mut after = read(&merged);
    assert_eq!(
        after[servers]["godot"],
        expected(&env),
        "{client}:\n{merged}"
    );
    after[servers].as_object_mut().unwrap().remove("godot");
    assert_eq!(
        after,
        read(&original),
        "{client}: something else changed:\n{merged}"
    );
    for line in original.lines() {
        let t = line.trim_start();
        if t.starts_with("//") || t.starts_with('#') || t.starts_with("/*") {
            assert!(
                merged.contains(t),
                "{client}: comment {t:?} lost:\n{merged}"
            );
        }
    }
    let backup = PathBuf::from(format!("{}.bak", path.display()));
    assert_eq!(fs::read_to_string(&backup).unwrap(), original);

    let again = env.run(&[client]);
    assert!(again.status.success());
    assert!(stdout(&again).contains("unchanged"), "{}", stdout(&again));
    assert_eq!(fs::read_to_string(&path).unwrap(), merged);
}

fn command_args(env: &Env) -> Value {
    serde_json::json!({"command": exe(), "args": ["serve", "--project", env.project_str()]})
}

#[test]
fn gemini_cli_merges_into_project_gemini_settings_keeping_comments() {
    fixture_round_trip(
        "gemini-cli",
        |e| e.project.join(".gemini/settings.json"),
        "gemini-cli.settings.json",
        read_jsonc,
        "mcpServers",
        command_args,
    );
}

#[test]
fn windsurf_merges_into_its_mcp_config() {
    fixture_round_trip(
        "windsurf",
        |e| e.home.join(".codeium/windsurf/mcp_config.json"),
        "windsurf.mcp_config.json",
        read_json,
        "mcpServers",
        command_args,
    );
}

#[test]
fn zed_merges_context_servers_into_user_settings_keeping_comments() {
    fixture_round_trip(
        "zed",
        |e| e.home.join("xdg/zed/settings.json"),
        "zed.settings.json",
        read_jsonc,
        "context_servers",
        command_args,
    );
}

#[test]
fn opencode_merges_a_local_server_with_one_command_array() {
    fixture_round_trip(
        "opencode",
        |e| e.project.join("opencode.json"),
        "opencode.json",
        read_jsonc,
        "mcp",
        |env| {
            serde_json::json!({
                "type": "local",
                "command": [exe(), "serve", "--project", env.project_str()],
                "enabled": true
            })
        },
    );
}

#[test]
fn cline_merges_into_vs_code_global_storage() {
    fixture_round_trip(
        "cline",
        |e| {
            e.home.join(
                "xdg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            )
        },
        "cline_mcp_settings.json",
        read_json,
        "mcpServers",
        command_args,
    );
}

#[test]
fn goose_merges_a_stdio_extension_into_config_yaml_keeping_comments() {
    fixture_round_trip(
        "goose",
        |e| e.home.join("xdg/goose/config.yaml"),
        "goose.config.yaml",
        read_yaml,
        "extensions",
        |env| {
            serde_json::json!({
                "name": "godot",
                "type": "stdio",
                "enabled": true,
                "cmd": exe(),
                "args": ["serve", "--project", env.project_str()],
                "timeout": 300
            })
        },
    );
}

/// Each new client's file from nothing: created where the client reads it, and readable
/// by the client's own format.
#[test]
fn every_new_client_creates_its_file_from_nothing() {
    let env = Env::new();
    // (client, its file, its reader, its servers key)
    type Case = (&'static str, PathBuf, fn(&str) -> Value, &'static str);
    let cases: [Case; 6] = [
        ("gemini-cli", env.project.join(".gemini/settings.json"), read_jsonc, "mcpServers"),
        ("windsurf", env.home.join(".codeium/windsurf/mcp_config.json"), read_json, "mcpServers"),
        ("zed", env.home.join("xdg/zed/settings.json"), read_jsonc, "context_servers"),
        ("opencode", env.project.join("opencode.json"), read_jsonc, "mcp"),
        (
            "cline",
            env.home.join(
                "xdg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
            ),
            read_json,
            "mcpServers",
        ),
        ("goose", env.home.join("xdg/goose/config.yaml"), read_yaml, "extensions"),
    ];
    for (client, path, read, key) in cases {
        let out = env.run(&[client]);
        assert!(out.status.success(), "{client}");
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{client}: {e}"));
        let v = read(&text);
        assert!(v[key]["godot"].is_object(), "{client}:\n{text}");
        assert!(stdout(&out).contains("created"), "{client}");
    }
}
