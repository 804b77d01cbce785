//! scripts/package.sh: the per-platform zip, unpacked into a fresh, empty Godot project as a
//! user unpacks it by hand, and the Asset Library package (`--asset-library`), installed by
//! the Godot editor's own installer rule (`package/asset_installer.rs`, written from the
//! engine's source) into another, and served from there.
//!
//! It packs this test run's own debug build (`--profile dev --no-build`: scripts/test.sh has
//! built it, so nothing is built twice); `GODOT_MCP_TEST_PACKAGE=1` builds and packs a
//! release build instead (minutes). The zip is unpacked with `unzip` (which, like the tools
//! users unpack with, restores the mode bits) and its layout checked. The Asset Library
//! package is made from that zip (`--partial`: only this machine's platform can be built
//! here) and checked against the installer's rule with "Ignore asset root" on and off. With
//! `GODOT_BIN`, the headless editor then opens the project the rule installed it into (which
//! held nothing but project.godot), with the plugin enabled, and an MCP client talks to the
//! server BUNDLED in the package: it creates a scene, creates a node and undoes it, and the
//! saved scene is checked before and after. No cargo runs after packaging. Without
//! `GODOT_BIN` the layouts are still checked, and the real-editor parts print SKIPPED.

mod support;

#[path = "package/asset_installer.rs"]
mod asset_installer;

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

/// Runs `scripts/package.sh --asset-library --partial` on the per-platform `zip` into `out`
/// and returns the Asset Library package it wrote.
fn asset_library_package(out: &Path, zip: &Path) -> PathBuf {
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("scripts/package.sh"))
        .args(["--asset-library", "--partial", "--out"])
        .arg(out);
    if std::env::var("GODOT_MCP_TEST_PACKAGE").as_deref() != Ok("1") {
        cmd.args(["--profile", "dev"]); // deflate the debug binaries at level 1
    }
    let status = cmd.arg(zip).status().unwrap();
    assert!(
        status.success(),
        "scripts/package.sh --asset-library failed"
    );
    let package = out.join(format!(
        "godot_mcp-{}-asset-library.zip",
        env!("CARGO_PKG_VERSION")
    ));
    assert!(package.is_file(), "{} missing", package.display());
    package
}

/// The zip's entries in central-directory order (the order Godot's unzip walks them).
fn zip_entries(zip: &Path) -> Vec<String> {
    let listing = Command::new("unzip").arg("-Z1").arg(zip).output().unwrap();
    assert!(listing.status.success(), "unzip -Z1 {}", zip.display());
    String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The zip's `.gdextension` (under whatever root folder it has).
fn zip_manifest(zip: &Path) -> String {
    let entry = zip_entries(zip)
        .into_iter()
        .find(|e| e.ends_with("addons/godot_mcp/godot_mcp.gdextension"))
        .expect("a .gdextension in the zip");
    let out = Command::new("unzip")
        .arg("-p")
        .arg(zip)
        .arg(&entry)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// Installs `zip` into `project` as the editor's asset installer does (see
/// `asset_installer`): fails unless the install passes [`asset_installer::check`], then
/// writes it ([`write_install`]). Returns the `res://` paths written.
fn install_by_rule(zip: &Path, project: &Path, skip_toplevel: bool) -> Vec<String> {
    let install = asset_installer::install(&zip_entries(zip), skip_toplevel);
    asset_installer::check(&install, &zip_manifest(zip))
        .unwrap_or_else(|e| panic!("{}: {e}", zip.display()));
    write_install(zip, project, &install)
}

/// Writes every file of `install` (from `zip`) to the path its `res://` target resolves to
/// in `project`, with its bytes only: no mode bits, as `FileAccess` writes it.
fn write_install(zip: &Path, project: &Path, install: &asset_installer::Install) -> Vec<String> {
    let stage = tempfile::tempdir().unwrap();
    let status = Command::new("unzip")
        .arg("-q")
        .arg(zip)
        .arg("-d")
        .arg(stage.path())
        .status()
        .unwrap();
    assert!(status.success());
    let mut landed = Vec::new();
    for (entry, target) in &install.files {
        let res = asset_installer::resolve(target).expect(target);
        let dest = project.join(res.strip_prefix("res://").unwrap());
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::write(&dest, fs::read(stage.path().join(entry)).unwrap()).unwrap();
        landed.push(res);
    }
    landed
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

/// An empty Godot project: nothing but project.godot.
fn empty_project() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    fs::write(
        project.path().join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"zip\"\n",
    )
    .unwrap();
    project
}

/// Enables the plugin as Project Settings > Plugins does.
fn enable_plugin(project: &Path) {
    let mut settings = fs::read_to_string(project.join("project.godot")).unwrap();
    settings.push_str(
        "\n[editor_plugins]\n\nenabled=PackedStringArray(\"res://addons/godot_mcp/plugin.cfg\")\n",
    );
    fs::write(project.join("project.godot"), settings).unwrap();
}

/// The Asset Library package, put through the editor installer's rule (see
/// `package/asset_installer.rs`) with "Ignore asset root" on (the Asset Library's download)
/// and off (AssetLib > Import): both times every file lands in res://addons/godot_mcp/, the
/// same files at the same paths as the per-platform zip's, with the library and server the
/// .gdextension names. Today's per-platform zip (entries starting `addons/`) is the negative
/// case: with the root skipped its files land in res://godot_mcp/.
#[test]
fn the_asset_library_package_lands_in_the_addon_folder_by_the_installers_rule() {
    let out = tempfile::tempdir().unwrap();
    let zip = package(out.path());
    let package = asset_library_package(out.path(), &zip);
    let manifest = zip_manifest(&package);
    assert_eq!(
        manifest,
        fs::read_to_string(repo().join(".gdextension")).unwrap()
    );
    let mut expected: Vec<String> = zip_entries(&zip)
        .iter()
        .map(|e| format!("res://{e}"))
        .collect();
    expected.sort();
    for skip in [true, false] {
        let install = asset_installer::install(&zip_entries(&package), skip);
        let mut landed = asset_installer::check(&install, &manifest)
            .unwrap_or_else(|e| panic!("ignore asset root {skip}: {e}"));
        landed.sort();
        assert_eq!(landed, expected, "ignore asset root {skip}");
        eprintln!(
            "asset-library package, ignore asset root {skip}: {} files in res://addons/godot_mcp/",
            landed.len()
        );
    }
    // Its one root: "./" (dropped, or resolved to the project's own folder).
    let install = asset_installer::install(&zip_entries(&package), true);
    assert_eq!(install.toplevel.as_deref(), Some("./"), "{install:?}");

    // The per-platform zip (for unpacking by hand) is not an Asset Library package: its one
    // root is addons/, which the Asset Library's install strips.
    let install = asset_installer::install(&zip_entries(&zip), true);
    assert_eq!(install.toplevel.as_deref(), Some("addons/"));
    let err = asset_installer::check(&install, &manifest).unwrap_err();
    assert!(
        err.contains("lands at res://godot_mcp/"),
        "per-platform zip, ignore asset root on: {err}"
    );
    eprintln!("per-platform zip, ignore asset root true: {err}");
    asset_installer::check(
        &asset_installer::install(&zip_entries(&zip), false),
        &manifest,
    )
    .expect("per-platform zip, ignore asset root off");

    // A release's package carries every platform: without --partial one zip is refused.
    let refused = Command::new("bash")
        .arg(repo().join("scripts/package.sh"))
        .args(["--asset-library", "--out"])
        .arg(out.path().join("refused"))
        .arg(&zip)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("no zip for linux-arm64, windows-x86_64, macos-universal"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn real_godot_package_zip_installs_into_an_empty_project_and_serves_it() {
    let started = Instant::now();
    let out = tempfile::tempdir().unwrap();
    let zip = package(out.path());
    let packaged = started.elapsed();
    let entries = zip_entries(&zip);

    // By hand: the per-platform zip unpacked into an empty project.
    let by_hand = empty_project();
    let status = Command::new("unzip")
        .args(["-q"])
        .arg(&zip)
        .arg("-d")
        .arg(by_hand.path())
        .status()
        .unwrap();
    assert!(status.success());
    check_layout(by_hand.path(), &entries);
    drop(by_hand);

    // Today's per-platform zip through AssetLib > Import with the root ignored lands in
    // res://godot_mcp/; enabled there, the plugin says where the add-on must be.
    let stripped = empty_project();
    let install = asset_installer::install(&entries, true);
    assert!(asset_installer::check(&install, &zip_manifest(&zip)).is_err());
    write_install(&zip, stripped.path(), &install);
    let misplaced = godot_bin("a misplaced add-on in a real editor").map(|godot| {
        let settings = stripped.path().join("project.godot");
        let mut text = fs::read_to_string(&settings).unwrap();
        text.push_str(
            "\n[editor_plugins]\n\nenabled=PackedStringArray(\"res://godot_mcp/plugin.cfg\")\n",
        );
        fs::write(&settings, text).unwrap();
        run_godot(&godot, stripped.path(), &["--import"])
    });
    if let Some(output) = misplaced {
        let expected = "godot-mcp: res://addons/godot_mcp/godot_mcp.gdextension is missing: the add-on must be in res://addons/godot_mcp/, not res://godot_mcp/";
        assert!(output.contains(expected), "no {expected:?} in:\n{output}");
    }
    drop(stripped);

    // From the Asset Library: the package, installed by the editor's rule with the root
    // skipped (as the Asset Library's download is) into another empty project.
    let package = asset_library_package(out.path(), &zip);
    let project = empty_project();
    let p = project.path();
    let landed = install_by_rule(&package, p, true);
    drop(out);
    assert!(
        landed.contains(&format!(
            "res://addons/godot_mcp/bin/{}/godot-mcp",
            host_platform()
        )),
        "{landed:?}"
    );
    eprintln!(
        "zip layout checked, package installed by the installer's rule ({:.1} s, of which package.sh {:.1} s)",
        started.elapsed().as_secs_f64(),
        packaged.as_secs_f64()
    );

    let Some(godot) = godot_bin("the installed package in a real editor") else {
        return;
    };
    enable_plugin(p);
    // The installer wrote the server without its mode bits; the plugin sets them.
    let import = run_godot(&godot, p, &["--import"]);
    assert!(
        import.contains(&format!(
            "godot-mcp: made res://addons/godot_mcp/bin/{}/godot-mcp executable",
            host_platform()
        )),
        "{import}"
    );

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
    assert!(
        !log_text.contains("library for this platform is missing"),
        "{log_text}"
    );
    eprintln!(
        "PASSED: the package installed by the installer's rule, served by its bundled server ({:.1} s in all)",
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

/// What an Asset Library entry pointing at a commit would serve: the repository's archive
/// (GitHub's: one `<repo>-<sha>/` root; `.gitattributes` keeps only addons/), made here with
/// `git archive` of the working tree's tracked files. The installer's rule puts its files in
/// res://addons/godot_mcp/, but it holds no library, so the check fails; with `GODOT_BIN`
/// the installed add-on, enabled in the real editor, names the missing file in the Output
/// (plugin.gd) rather than loading nothing silently.
#[test]
fn real_godot_a_repository_download_names_the_missing_library() {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(repo())
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "HEAD"]) else {
        eprintln!("SKIPPED: not a git checkout");
        return;
    };
    // `git stash create`: a commit of the working tree's tracked changes (empty if none),
    // touching nothing.
    let tree = git(&["stash", "create"])
        .filter(|t| !t.is_empty())
        .unwrap_or(head.clone());
    let out = tempfile::tempdir().unwrap();
    let zip = out.path().join("repository.zip");
    let prefix = format!("--prefix=godot-mcp-{head}/");
    git(&[
        "archive",
        "--format=zip",
        &prefix,
        "-o",
        zip.to_str().unwrap(),
        &tree,
    ])
    .expect("git archive");

    let install = asset_installer::install(&zip_entries(&zip), true);
    assert_eq!(
        install.toplevel.as_deref(),
        Some(format!("godot-mcp-{head}/").as_str())
    );
    let err = asset_installer::check(&install, &zip_manifest(&zip)).unwrap_err();
    assert!(
        err.contains("no library named by the .gdextension is installed"),
        "{err}"
    );
    let project = empty_project();
    let p = project.path();
    let landed = write_install(&zip, p, &install);
    assert!(
        landed
            .iter()
            .all(|l| l.starts_with("res://addons/godot_mcp/")),
        "{landed:?}"
    );

    let Some(godot) = godot_bin("the library-less add-on in a real editor") else {
        return;
    };
    enable_plugin(p);
    let output = run_godot(&godot, p, &["--import"]);
    let expected = format!(
        "godot-mcp: the add-on's library for this platform is missing: res://addons/godot_mcp/bin/{}/libgodot_mcp_editor.so",
        host_platform()
    );
    assert!(output.contains(&expected), "no {expected:?} in:\n{output}");
    eprintln!("PASSED: the editor's Output names the missing library: {expected}");
}
