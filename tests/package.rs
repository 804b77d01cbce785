//! scripts/package.sh: the release zip for this machine, unpacked and checked.
//!
//! A release build takes minutes, so this runs only when asked: GODOT_MCP_TEST_PACKAGE=1
//! (otherwise it prints SKIPPED and passes). It packages into a temp dir, unpacks with
//! `unzip` (which, like the tools users unpack with, restores the mode bits), and checks
//! the Asset Library layout and that the bundled server runs. With GODOT_BIN set, the
//! headless editor then opens a fresh project holding nothing but project.godot and the
//! unpacked add-on, with the plugin enabled, and must load the packaged release library.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The target dir this test binary was built into (target/<profile>/godot-mcp → target).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_godot-mcp"))
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/godot-mcp")
        .to_path_buf()
}

fn host_platform() -> String {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        other => other,
    };
    format!("linux-{arch}")
}

#[test]
fn package_zip_has_the_asset_library_layout_and_a_running_server() {
    if std::env::var("GODOT_MCP_TEST_PACKAGE").as_deref() != Ok("1") {
        eprintln!("SKIPPED: set GODOT_MCP_TEST_PACKAGE=1 to build and check the release zip");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let status = Command::new("bash")
        .arg(repo().join("scripts/package.sh"))
        .arg("--out")
        .arg(out.path())
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .unwrap();
    assert!(status.success(), "scripts/package.sh failed");

    let version = env!("CARGO_PKG_VERSION");
    let platform = host_platform();
    let zip = out
        .path()
        .join(format!("godot_mcp-{version}-{platform}.zip"));
    assert!(zip.is_file(), "{} missing", zip.display());

    let listing = Command::new("unzip").arg("-Z1").arg(&zip).output().unwrap();
    assert!(listing.status.success());
    let entries: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    for entry in &entries {
        assert!(
            entry.starts_with("addons/godot_mcp/"),
            "{entry} is outside addons/godot_mcp/"
        );
    }

    let project = tempfile::tempdir().unwrap();
    let status = Command::new("unzip")
        .args(["-q"])
        .arg(&zip)
        .arg("-d")
        .arg(project.path())
        .status()
        .unwrap();
    assert!(status.success());
    let addon = project.path().join("addons/godot_mcp");

    for file in ["plugin.cfg", "plugin.gd", "icon.svg", "LICENSE"] {
        assert!(addon.join(file).is_file(), "{file} missing from the zip");
    }
    let license = fs::read_to_string(addon.join("LICENSE")).unwrap();
    assert!(license.starts_with("MIT License"));
    assert!(license.contains("Copyright (c) 2026"), "{license}");
    let manifest = fs::read_to_string(addon.join("godot_mcp.gdextension")).unwrap();
    assert_eq!(
        manifest,
        fs::read_to_string(repo().join(".gdextension")).unwrap()
    );

    // The library sits where the manifest tells Godot to load it on this machine.
    let tag = format!(
        "linux.release.{} = \"res://",
        platform.trim_start_matches("linux-")
    );
    let line = manifest
        .lines()
        .find(|l| l.starts_with(&tag))
        .unwrap_or_else(|| panic!("no {tag} in the manifest"));
    let res = line[tag.len()..].trim_end_matches('"');
    let lib = project.path().join(res);
    assert!(
        lib.is_file(),
        "{} (named by the manifest) missing",
        lib.display()
    );
    assert!(
        entries
            .iter()
            .filter(|e| e.ends_with(".so") || e.ends_with(".dll") || e.ends_with(".dylib"))
            .count()
            == 1,
        "exactly one library per platform zip: {entries:?}"
    );

    // The bundled server runs from where the add-on will look for it.
    let server = addon.join("bin").join(&platform).join("godot-mcp");
    let version_out = Command::new(&server).arg("--version").output().unwrap();
    assert!(version_out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version_out.stdout).trim(),
        format!("godot-mcp {version}")
    );

    open_in_real_godot(project.path());
}

/// Opens the unpacked project in the real headless editor: the library the manifest names
/// must load and the plugin must switch the executor on. SKIPPED without GODOT_BIN (a
/// failure with GODOT_MCP_REQUIRE_GODOT=1).
fn open_in_real_godot(project: &Path) {
    let Some(godot) = std::env::var_os("GODOT_BIN") else {
        assert!(
            std::env::var("GODOT_MCP_REQUIRE_GODOT").as_deref() != Ok("1"),
            "GODOT_MCP_REQUIRE_GODOT=1 but GODOT_BIN is not set"
        );
        eprintln!("SKIPPED: the zip in a real editor (set GODOT_BIN)");
        return;
    };
    fs::write(
        project.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"zip\"\n\n\
         [editor_plugins]\n\nenabled=PackedStringArray(\"res://addons/godot_mcp/plugin.cfg\")\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(&godot)
            .args(["--headless", "--path"])
            .arg(project)
            .args(args)
            .output()
            .unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "godot {args:?} failed:\n{log}");
        log
    };
    run(&["--import"]);
    let log = run(&["--editor", "--quit-after", "300"]);
    for line in [
        "godot-mcp: extension loaded (add-on",
        "godot-mcp: executor enabled",
    ] {
        assert!(
            log.contains(line),
            "no {line:?} in the editor's log:\n{log}"
        );
    }
    assert!(!log.to_lowercase().contains("panic"), "{log}");
}
