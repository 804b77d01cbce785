//! scripts/package.sh: the zip for this machine, unpacked into a fresh, empty Godot project
//! and served from there, as a user installs it.
//!
//! It packs this test run's own debug build (`--profile dev --no-build`: scripts/test.sh has
//! built it, so nothing is built twice); `GODOT_MCP_TEST_PACKAGE=1` builds and packs a
//! release build instead (minutes). The zip is unpacked with `unzip` (which, like the tools
//! users unpack with, restores the mode bits) and its Asset Library layout checked. With
//! `GODOT_BIN`, the headless editor then opens a project that held nothing but
//! project.godot, with the plugin enabled, and an MCP client talks to the server BUNDLED in
//! the zip: it creates a scene, creates a node and undoes it, and the saved scene is
//! checked before and after. No cargo runs after packaging. Without `GODOT_BIN` the layout
//! is still checked, and the real-editor part prints SKIPPED.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;
use support::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The target dir this test binary was built into (target/<profile>/godot-mcp → target).
fn target_dir() -> PathBuf {
    bin()
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

/// Runs scripts/package.sh into `out` and returns the zip it wrote.
fn package(out: &Path) -> PathBuf {
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("scripts/package.sh"))
        .arg("--out")
        .arg(out)
        .env("CARGO_TARGET_DIR", target_dir());
    if std::env::var("GODOT_MCP_TEST_PACKAGE").as_deref() != Ok("1") {
        // The debug build of this run: the server under test and the add-on library
        // (built here unless scripts/test.sh already did).
        editor_library();
        cmd.args(["--profile", "dev", "--no-build"]);
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "scripts/package.sh failed");
    let zip = out.join(format!(
        "godot_mcp-{}-{}.zip",
        env!("CARGO_PKG_VERSION"),
        host_platform()
    ));
    assert!(zip.is_file(), "{} missing", zip.display());
    zip
}

/// Checks the unpacked add-on in `project` against the zip's listing `entries`.
fn check_layout(project: &Path, entries: &[String]) {
    for entry in entries {
        assert!(
            entry.starts_with("addons/godot_mcp/"),
            "{entry} is outside addons/godot_mcp/"
        );
    }
    let addon = project.join("addons/godot_mcp");
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
    let platform = host_platform();
    let tag = format!(
        "linux.release.{} = \"res://",
        platform.trim_start_matches("linux-")
    );
    let line = manifest
        .lines()
        .find(|l| l.starts_with(&tag))
        .unwrap_or_else(|| panic!("no {tag} in the manifest"));
    let res = line[tag.len()..].trim_end_matches('"');
    let lib = project.join(res);
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
    let version_out = Command::new(bundled_server(project))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version_out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version_out.stdout).trim(),
        format!("godot-mcp {}", env!("CARGO_PKG_VERSION"))
    );
}

fn bundled_server(project: &Path) -> PathBuf {
    project
        .join("addons/godot_mcp/bin")
        .join(host_platform())
        .join("godot-mcp")
}

#[tokio::test(flavor = "multi_thread")]
async fn real_godot_package_zip_installs_into_an_empty_project_and_serves_it() {
    let started = Instant::now();
    let out = tempfile::tempdir().unwrap();
    let zip = package(out.path());
    let packaged = started.elapsed();

    let listing = Command::new("unzip").arg("-Z1").arg(&zip).output().unwrap();
    assert!(listing.status.success());
    let entries: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();

    // A fresh, empty Godot project: nothing but project.godot. The zip unpacks into it.
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    fs::write(
        p.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"zip\"\n",
    )
    .unwrap();
    let status = Command::new("unzip")
        .args(["-q"])
        .arg(&zip)
        .arg("-d")
        .arg(p)
        .status()
        .unwrap();
    assert!(status.success());
    check_layout(p, &entries);
    eprintln!(
        "zip layout checked ({:.1} s, of which package.sh {:.1} s)",
        started.elapsed().as_secs_f64(),
        packaged.as_secs_f64()
    );

    let Some(godot) = godot_bin("the unpacked zip in a real editor") else {
        return;
    };
    // Enabled as Project Settings > Plugins does it.
    let mut settings = fs::read_to_string(p.join("project.godot")).unwrap();
    settings.push_str(
        "\n[editor_plugins]\n\nenabled=PackedStringArray(\"res://addons/godot_mcp/plugin.cfg\")\n",
    );
    fs::write(p.join("project.godot"), settings).unwrap();
    run_godot(&godot, p, &["--import"]);

    // The server the zip bundles, started from inside the unpacked add-on.
    let client = connect_bin(&bundled_server(p), p, tempfile::tempdir().unwrap(), &[]).await;
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("editor.log");
    let mut editor = start_godot_editor(&godot, p, &log);
    let created = call_once_connected(
        &client,
        &mut editor,
        &log,
        "create_scene",
        json!({"path": "res://main.tscn", "root_type": "Node2D", "confirm": true}),
    )
    .await;
    assert_ne!(
        created.is_error,
        Some(true),
        "{:?}",
        created.structured_content
    );
    let scene = p.join("main.tscn");
    call_ok(&client, "save_scene", json!({"confirm": true})).await;
    let before = fs::read_to_string(&scene).unwrap();
    // Godot 4.6+ writes `unique_id=<n>` on every node header; 4.4 and 4.5 end it there.
    assert!(
        before.contains("[node name=\"Main\" type=\"Node2D\"]")
            || before.contains("[node name=\"Main\" type=\"Node2D\" unique_id="),
        "{before}"
    );

    let node = call_ok(
        &client,
        "create_node",
        json!({"parent": ".", "type": "Node2D", "name": "McpNode"}),
    )
    .await;
    call_ok(&client, "save_scene", json!({"confirm": true})).await;
    let edited = fs::read_to_string(&scene).unwrap();
    assert!(
        edited.contains("[node name=\"McpNode\" type=\"Node2D\" parent=\".\"]")
            || edited.contains("[node name=\"McpNode\" type=\"Node2D\" parent=\".\" unique_id="),
        "{edited}"
    );
    let undone = call_ok(&client, "editor_undo", json!({})).await;
    call_ok(&client, "save_scene", json!({"confirm": true})).await;
    assert_eq!(
        fs::read_to_string(&scene).unwrap(),
        before,
        "after undo the saved scene is byte-identical: {undone}"
    );
    let txns = call_ok(&client, "list_transactions", json!({"limit": 100})).await;
    let row = transaction_row(&txns, node["transaction_id"].as_str().unwrap());
    assert_eq!(row["operation"], "node.create", "{row}");
    assert_eq!(row["status"], "committed", "{row}");

    kill_godot_editor(&mut editor);
    client.cancel().await.unwrap();
    let log_text = fs::read_to_string(&log).unwrap_or_default();
    for line in [
        format!(
            "godot-mcp: extension loaded (add-on {}",
            env!("CARGO_PKG_VERSION")
        ),
        // plugin.gd: the plugin is enabled in Project Settings, not just the library loaded.
        "godot-mcp: plugin enabled; executor switch on".to_string(),
        "godot-mcp: executor enabled".to_string(),
    ] {
        assert!(
            log_text.contains(&line),
            "no {line:?} in the editor's log:\n{log_text}"
        );
    }
    assert!(!log_text.to_lowercase().contains("panic"), "{log_text}");
    eprintln!(
        "PASSED: the zip in an empty project, served by its bundled server ({:.1} s in all)",
        started.elapsed().as_secs_f64()
    );
}

/// `.gitattributes` export-ignores everything but the add-on, so a repository download
/// (what the Asset Library serves from a git host) holds only `addons/`.
#[test]
fn a_repository_download_holds_only_the_addon() {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(repo())
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let Some(files) = git(&["ls-files"]) else {
        eprintln!("SKIPPED: not a git checkout");
        return;
    };
    let files = String::from_utf8(files.stdout).unwrap();
    let files: Vec<&str> = files.lines().collect();
    let mut args = vec!["check-attr", "export-ignore", "--"];
    args.extend(&files);
    let attrs = String::from_utf8(git(&args).expect("git check-attr").stdout).unwrap();
    let mut kept = Vec::new();
    for line in attrs.lines() {
        let (path, value) = line.split_once(": export-ignore: ").expect(line);
        if value != "set" {
            kept.push(path);
        }
    }
    assert!(
        kept.iter().all(|p| p.starts_with("addons/godot_mcp/")),
        "a download would hold {kept:?}"
    );
    assert!(kept.contains(&"addons/godot_mcp/plugin.cfg"), "{kept:?}");
    assert!(
        files.len() > kept.len() + 100,
        "{} of {} files kept",
        kept.len(),
        files.len()
    );
}
