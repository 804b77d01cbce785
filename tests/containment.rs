//! Path containment at the schema boundary, end to end: hostile paths sent by a real
//! MCP client to the real binary are refused before any I/O, with an error naming the
//! parameter, and nothing outside the project is ever returned.

mod support;

use std::path::Path;

use serde_json::json;
use support::{call, connect};

const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-PROJECT";

/// A project beside a secret file, with symlinks pointing out of it.
fn hostile_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("game");
    std::fs::create_dir_all(project.join("scripts")).unwrap();
    std::fs::write(
        project.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"Hostile\"\n",
    )
    .unwrap();
    std::fs::write(project.join("scripts/ok.gd"), "extends Node\n").unwrap();
    std::fs::write(dir.path().join("secret.gd"), SECRET).unwrap();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("outside/secret.gd"), SECRET).unwrap();
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, project.join(name)).unwrap();
    link(Path::new("/etc"), "etc_link");
    link(&dir.path().join("secret.gd"), "secret_link.gd");
    link(&dir.path().join("outside"), "outside_dir");
    link(Path::new("/nonexistent/dangling"), "dangling.gd");
    dir
}

/// Each of these must be refused for every path parameter.
const HOSTILE: &[&str] = &[
    // no scheme / other schemes
    "scripts/ok.gd",
    "ok.gd",
    "",
    "user://save.gd",
    "file:///etc/passwd",
    "http://example.com/x.gd",
    "RES://scripts/ok.gd",
    "res:/scripts/ok.gd",
    "res:scripts/ok.gd",
    // absolute filesystem paths
    "/etc/passwd",
    "/",
    "//server/share/x.gd",
    "C:/Windows/win.ini",
    "C:\\Windows\\win.ini",
    "res:///etc/passwd",
    "res://C:/x.gd",
    // dot-dot escapes
    "res://..",
    "res://../secret.gd",
    "res://../../../../etc/passwd",
    "res://scripts/../../secret.gd",
    "res://./../secret.gd",
    "res://scripts/./../../outside/secret.gd",
    // backslashes
    "res://..\\secret.gd",
    "res://scripts\\..\\..\\secret.gd",
    // NUL and control characters
    "res://scripts/ok.gd\u{0}.png",
    "res://\u{0}",
    "res://scripts/ok\n.gd",
    // percent-encoded escapes
    "res://%2e%2e/secret.gd",
    "res://%2E%2E%2Fsecret.gd",
    "res://scripts/%2e%2e/%2e%2e/secret.gd",
    "res://..%2fsecret.gd",
    "res://%00.gd",
    "res://..%5csecret.gd",
    // dot-only segments that some platforms treat specially
    "res://.../secret.gd",
    // symlinks resolving outside the project
    "res://etc_link/passwd",
    "res://secret_link.gd",
    "res://outside_dir/secret.gd",
    "res://dangling.gd",
];

/// Every file-path parameter of every tool.
const PATH_PARAMS: &[(&str, &str)] = &[
    ("scripts_read", "path"),
    ("list_files", "dir"),
    ("get_scene_tree", "path"),
    ("read_resource", "path"),
];

#[tokio::test]
async fn hostile_paths_are_refused_and_nothing_outside_is_read() {
    assert!(HOSTILE.len() >= 30);
    let fixture = hostile_fixture();
    let client = connect(&fixture.path().join("game")).await;
    let mut checked = 0;
    for path in HOSTILE {
        for (tool, param) in PATH_PARAMS {
            let r = call(&client, tool, json!({ *param: path })).await;
            let text = serde_json::to_string(&r).unwrap();
            assert!(
                !text.contains(SECRET),
                "{tool}({path:?}) leaked the secret: {text}"
            );
            assert!(
                !text.contains("root:x:0:0"),
                "{tool}({path:?}) leaked /etc/passwd"
            );
            assert_eq!(
                r.is_error,
                Some(true),
                "{tool}({path:?}) was not refused: {text}"
            );
            let err = &r.structured_content.as_ref().unwrap()["error"];
            assert_eq!(err["code"], "PATH_REFUSED", "{tool}({path:?}): {err}");
            assert_eq!(err["param"], *param, "{tool}({path:?}): {err}");
            checked += 1;
        }
    }
    assert_eq!(checked, HOSTILE.len() * PATH_PARAMS.len());
    // The listing of the whole project never follows a link outside.
    let listing = support::call_ok(&client, "list_files", json!({})).await;
    let text = listing.to_string();
    assert!(
        !text.contains("passwd") && !text.contains("outside_dir"),
        "{text}"
    );
    assert!(text.contains("res://scripts/ok.gd"), "{text}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn contained_paths_still_work() {
    let fixture = hostile_fixture();
    let client = connect(&fixture.path().join("game")).await;
    for path in [
        "res://scripts/ok.gd",
        "res://scripts/../scripts/./ok.gd",
        "res://scripts//ok.gd",
    ] {
        let v = support::call_ok(&client, "scripts_read", json!({ "path": path })).await;
        assert_eq!(v["content"], "extends Node\n");
        assert_eq!(v["path"], "res://scripts/ok.gd");
    }
    client.cancel().await.unwrap();
}
