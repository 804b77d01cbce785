//! The distributable add-on's files, checked without Godot: the manifest Godot reads to load
//! the library, the plugin.cfg it reads to list the plugin, and the Asset Library packaging.
//!
//! Lives in the protocol crate because it must not link `godot`; it reads files relative to
//! the repository root.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The library names cargo gives the `godot-mcp-editor` cdylib on each platform.
const LIB_LINUX: &str = "libgodot_mcp_editor.so";
const LIB_MACOS: &str = "libgodot_mcp_editor.dylib";
const LIB_WINDOWS: &str = "godot_mcp_editor.dll";
const BIN_DIR: &str = "res://addons/godot_mcp/bin/";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    let path = repo_root().join(relative);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `section -> key -> raw value` of a Godot ConfigFile (INI-like; `;` and `#` comments).
type Config = BTreeMap<String, BTreeMap<String, String>>;

fn parse_config(text: &str) -> Config {
    let mut config = Config::new();
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            config.entry(section.clone()).or_default();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("not `key = value`: {line:?}"));
        let previous = config
            .entry(section.clone())
            .or_default()
            .insert(key.trim().to_owned(), value.trim().to_owned());
        assert!(previous.is_none(), "duplicate key {key:?} in [{section}]");
    }
    config
}

/// A quoted ConfigFile string's contents, or `None` if `raw` is not a quoted string.
fn unquote(raw: &str) -> Option<&str> {
    raw.strip_prefix('"')?.strip_suffix('"')
}

fn value<'c>(config: &'c Config, section: &str, key: &str) -> &'c str {
    config
        .get(section)
        .and_then(|s| s.get(key))
        .unwrap_or_else(|| panic!("missing [{section}] {key}"))
}

#[test]
fn addon_manifest_is_an_identical_copy_of_the_root_manifest() {
    let root = fs::read(repo_root().join(".gdextension")).unwrap();
    let addon = fs::read(repo_root().join("addons/godot_mcp/godot_mcp.gdextension")).unwrap();
    assert!(
        root == addon,
        ".gdextension and addons/godot_mcp/godot_mcp.gdextension differ; copy the root one over"
    );
}

#[test]
fn manifest_configuration_loads_once_on_godot_4_4() {
    let config = parse_config(&read(".gdextension"));
    assert_eq!(
        unquote(value(&config, "configuration", "entry_symbol")),
        Some("gdext_rust_init"),
        "the symbol #[gdextension] exports"
    );
    let minimum = value(&config, "configuration", "compatibility_minimum");
    assert!(
        minimum == "4.4" || unquote(minimum) == Some("4.4"),
        "compatibility_minimum must be 4.4, got {minimum}"
    );
    assert_eq!(
        value(&config, "configuration", "reloadable"),
        "false",
        "the bridge thread cannot survive a hot reload"
    );
}

/// The `bin/<platform>/` folder each manifest tag must load from (scripts/package.sh and
/// scripts/install-addon.sh use the same names), and the library name cargo gives it there.
fn expected_library(tags: &str) -> (&'static str, &'static str) {
    let parts: Vec<&str> = tags.split('.').collect();
    match parts.as_slice() {
        ["linux", _, "x86_64"] => ("linux-x86_64", LIB_LINUX),
        ["linux", _, "arm64"] => ("linux-arm64", LIB_LINUX),
        ["windows", _, "x86_64"] => ("windows-x86_64", LIB_WINDOWS),
        // One universal (lipo-merged) library serves both Mac architectures.
        ["macos", _] => ("macos-universal", LIB_MACOS),
        _ => panic!("{tags}: unexpected platform tags"),
    }
}

#[test]
fn manifest_names_every_desktop_target_in_its_platform_folder_with_cargo_names() {
    let config = parse_config(&read(".gdextension"));
    let libraries = config.get("libraries").expect("missing [libraries]");
    for required in [
        "linux.debug.x86_64",
        "linux.release.x86_64",
        "linux.debug.arm64",
        "linux.release.arm64",
        "windows.debug.x86_64",
        "windows.release.x86_64",
        "macos.debug",
        "macos.release",
    ] {
        assert!(
            libraries.contains_key(required),
            "no library for {required}"
        );
    }
    for (tags, raw) in libraries {
        let path = unquote(raw).unwrap_or_else(|| panic!("{tags}: path must be quoted: {raw}"));
        let file = path
            .strip_prefix(BIN_DIR)
            .unwrap_or_else(|| panic!("{tags}: {path} is not under {BIN_DIR}"));
        let (folder, lib) = expected_library(tags);
        assert_eq!(file, format!("{folder}/{lib}"), "{tags}");
    }
}

#[test]
fn package_script_knows_every_platform_the_manifest_names() {
    let config = parse_config(&read(".gdextension"));
    let package = read("scripts/package.sh");
    let install = read("scripts/install-addon.sh");
    for tags in config["libraries"].keys() {
        let (folder, lib) = expected_library(tags);
        let case = package
            .lines()
            .find(|l| {
                l.trim_start()
                    .split(')')
                    .next()
                    .is_some_and(|p| p.split('|').any(|n| n.trim() == folder))
            })
            .unwrap_or_else(|| panic!("scripts/package.sh has no case for {folder}"));
        assert!(
            case.contains(lib),
            "package.sh packages {folder} without {lib}: {case}"
        );
        let os = folder.split('-').next().unwrap();
        assert!(
            install.contains(&format!("platform=\"{os}-$arch\""))
                || install.contains(&format!("platform={folder} ")),
            "install-addon.sh never installs into bin/{folder}/"
        );
    }
}

#[test]
fn library_names_match_the_editor_crate() {
    // Cargo names the cdylib after the package unless [lib] overrides it.
    let manifest = read("rust/godot-mcp-editor/Cargo.toml");
    assert!(manifest.contains("name = \"godot-mcp-editor\""));
    assert!(manifest.contains("crate-type = [\"cdylib\"]"));
    let lib_section = manifest.split("[lib]").nth(1).unwrap_or_default();
    let lib_section = lib_section.split("\n[").next().unwrap_or_default();
    assert!(
        !lib_section.contains("name"),
        "a [lib] name would rename the built library; update the manifest and install script"
    );
    let install = read("scripts/install-addon.sh");
    for lib in [LIB_LINUX, LIB_MACOS, LIB_WINDOWS] {
        assert!(
            install.contains(lib),
            "install-addon.sh does not know {lib}"
        );
    }
}

#[test]
fn plugin_cfg_lists_the_plugin_and_its_script_exists() {
    let config = parse_config(&read("addons/godot_mcp/plugin.cfg"));
    for key in ["name", "description", "author", "version", "script"] {
        let raw = value(&config, "plugin", key);
        let text = unquote(raw).unwrap_or_else(|| panic!("plugin/{key} must be quoted: {raw}"));
        assert!(!text.is_empty(), "plugin/{key} is empty");
    }
    assert_eq!(
        unquote(value(&config, "plugin", "version")),
        Some(env!("CARGO_PKG_VERSION")),
        "plugin.cfg version must follow the workspace version"
    );
    let script = unquote(value(&config, "plugin", "script")).unwrap();
    let script_path = repo_root().join("addons/godot_mcp").join(script);
    assert!(script_path.is_file(), "{} missing", script_path.display());
}

#[test]
fn plugin_script_calls_what_the_library_registers() {
    let script = read("addons/godot_mcp/plugin.gd");
    assert!(
        script.starts_with("@tool\n"),
        "an editor plugin must be @tool"
    );
    assert!(script.contains("extends EditorPlugin"));
    let api = read("rust/godot-mcp-editor/src/api.rs");
    assert!(script.contains("&\"GodotMcp\"") && api.contains("struct GodotMcp "));
    for func in ["set_enabled", "version", "godot_version"] {
        assert!(
            script.contains(&format!("&\"{func}\"")),
            "plugin.gd never calls {func}"
        );
        assert!(
            api.contains(&format!("fn {func}(")),
            "GodotMcp has no #[func] {func}"
        );
    }
}

#[test]
fn addon_ships_license_icon_and_bin_folder() {
    let license = read("addons/godot_mcp/LICENSE");
    assert!(license.starts_with("MIT License"));
    assert!(license.contains("godot-mcp contributors"));
    assert!(
        read("addons/godot_mcp/icon.svg")
            .trim_start()
            .starts_with("<svg")
    );
    assert!(repo_root().join("addons/godot_mcp/bin/.gitkeep").is_file());
}

#[test]
fn git_archive_exports_only_the_addon() {
    let lines: Vec<String> = read(".gitattributes")
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    for expected in [
        "/** export-ignore",
        "/addons !export-ignore",
        "/addons/** !export-ignore",
    ] {
        assert!(lines.iter().any(|l| l == expected), "missing {expected:?}");
    }
}
