//! C# projects: the mono demos of godot-demo-projects read as Godot's source generators
//! read them (against a table written by reading each file), the script tools and
//! project_info on them, create_script's C# template, and build_csharp.
//!
//! What needs the .NET SDK (`real_dotnet_*`: a build that passes, an edit that breaks
//! it, the engine's own reading of every demo's built assembly against our reader and the
//! table) prints `SKIPPED: no .NET SDK` without one; the public workflow's C# job runs it
//! (docs/csharp.md).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use godot_mcp_server::{CsIndex, cs_script};
use serde_json::{Value, json};

fn corpus(snapshot: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/corpus")
        .join(snapshot)
        .join("mono")
}

/// One file as read by hand: its class (`None`: no class is named as the file), base,
/// `[Tool]`, exports (name, Godot type), signals, and the generator rules it breaks.
struct Expect {
    class: Option<&'static str>,
    base: Option<&'static str>,
    tool: bool,
    exports: &'static [(&'static str, &'static str)],
    signals: &'static [&'static str],
    problems: &'static [&'static str],
}

const fn class(name: &'static str, base: &'static str) -> Expect {
    Expect {
        class: Some(name),
        base: Some(base),
        tool: false,
        exports: &[],
        signals: &[],
        problems: &[],
    }
}

const fn tool(name: &'static str, base: &'static str) -> Expect {
    Expect {
        tool: true,
        ..class(name, base)
    }
}

/// A file that declares no class named as itself (a struct).
const NO_CLASS: Expect = Expect {
    class: None,
    base: None,
    tool: false,
    exports: &[],
    signals: &[],
    problems: &["class_name_mismatch"],
};

/// Every `.cs` file of the five mono demos, read by hand, at `snapshot`.
fn table(snapshot: &str) -> BTreeMap<&'static str, Expect> {
    let head = snapshot == "mono-demo-head";
    let mut t = BTreeMap::from([
        // dodge_the_creeps (the same at both snapshots)
        (
            "dodge_the_creeps/HUD.cs",
            Expect {
                signals: &["StartGame"],
                ..class("HUD", "CanvasLayer")
            },
        ),
        (
            "dodge_the_creeps/Main.cs",
            Expect {
                exports: &[("MobScene", "PackedScene")],
                ..class("Main", "Node")
            },
        ),
        ("dodge_the_creeps/Mob.cs", class("Mob", "RigidBody2D")),
        (
            "dodge_the_creeps/Player.cs",
            Expect {
                exports: &[("Speed", "int")],
                signals: &["Hit"],
                ..class("Player", "Area2D")
            },
        ),
        // pong
        ("pong/Logic/Ball.cs", class("Ball", "Area2D")),
        (
            "pong/Logic/CeilingFloor.cs",
            Expect {
                exports: &[("_bounceDirection", "int")],
                ..class("CeilingFloor", "Area2D")
            },
        ),
        ("pong/Logic/Paddle.cs", class("Paddle", "Area2D")),
        ("pong/Logic/Wall.cs", class("Wall", "Area2D")),
        // multiplayer_pong
        ("multiplayer_pong/logic/Ball.cs", class("Ball", "Area2D")),
        ("multiplayer_pong/logic/Lobby.cs", class("Lobby", "Control")),
        (
            "multiplayer_pong/logic/Paddle.cs",
            Expect {
                exports: &[("_left", "bool")],
                ..class("Paddle", "Area2D")
            },
        ),
        (
            "multiplayer_pong/logic/Pong.cs",
            if head {
                Expect {
                    signals: &["GameFinished"],
                    ..class("Pong", "Node2D")
                }
            } else {
                // `[Signal] private delegate void GameFinished(string withError);`: no
                // EventHandler suffix, so no signal (Godot's generator reports GD0201).
                Expect {
                    problems: &["GD0201"],
                    ..class("Pong", "Node2D")
                }
            },
        ),
        // 2.5d
        ("2.5d/addons/node25d-cs/Basis25D.cs", NO_CLASS),
        ("2.5d/addons/node25d-cs/Transform25D.cs", NO_CLASS),
        (
            "2.5d/addons/node25d-cs/Node25D.cs",
            Expect {
                exports: &[("spatialPosition", "Vector3")],
                ..tool("Node25D", "Node2D")
            },
        ),
        (
            "2.5d/addons/node25d-cs/ShadowMath25D.cs",
            tool("ShadowMath25D", "CharacterBody3D"),
        ),
        (
            "2.5d/addons/node25d-cs/YSort25D.cs",
            Expect {
                exports: &[("sortEnabled", "bool")],
                ..tool("YSort25D", "Node")
            },
        ),
        (
            "2.5d/addons/node25d-cs/main_screen/Gizmo25D.cs",
            tool("Gizmo25D", "Node2D"),
        ),
        (
            "2.5d/addons/node25d-cs/main_screen/.broken-cs-files/Viewport25D.cs",
            tool("Viewport25D", "Control"),
        ),
        ("2.5d/assets/cube/CubeMath.cs", class("CubeMath", "Node3D")),
        (
            "2.5d/assets/player/PlayerMath25D.cs",
            class("PlayerMath25D", "CharacterBody3D"),
        ),
        (
            "2.5d/assets/player/PlayerSprite.cs",
            tool("PlayerSprite", "Sprite2D"),
        ),
    ]);
    if head {
        // squash_the_creeps is in mono/ at head only.
        t.extend([
            (
                "squash_the_creeps/Main.cs",
                Expect {
                    exports: &[("MobScene", "PackedScene")],
                    ..class("Main", "Node")
                },
            ),
            (
                "squash_the_creeps/Mob.cs",
                Expect {
                    exports: &[("MinSpeed", "int"), ("MaxSpeed", "int")],
                    signals: &["Squashed"],
                    ..class("Mob", "CharacterBody3D")
                },
            ),
            (
                "squash_the_creeps/Player.cs",
                Expect {
                    exports: &[
                        ("Speed", "int"),
                        ("FallAcceleration", "int"),
                        ("JumpImpulse", "int"),
                        ("BounceImpulse", "int"),
                    ],
                    signals: &["Hit"],
                    ..class("Player", "CharacterBody3D")
                },
            ),
            (
                "squash_the_creeps/ScoreLabel.cs",
                class("ScoreLabel", "Label"),
            ),
        ]);
    }
    t
}

/// Every `.cs` under `dir` (hidden folders included: the table names them), relative.
fn cs_files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if e.file_type().unwrap().is_dir() {
            cs_files(&e.path(), &r, out);
        } else if name.ends_with(".cs") {
            out.push(r);
        }
    }
}

#[test]
fn every_cs_file_of_the_mono_demos_reads_as_the_table_says() {
    let mut checked = 0;
    for snapshot in ["mono-demo-4.4", "mono-demo-head"] {
        let root = corpus(snapshot);
        let mut files = Vec::new();
        cs_files(&root, "", &mut files);
        files.sort();
        let table = table(snapshot);
        let listed: Vec<&str> = table.keys().copied().collect();
        assert_eq!(files, listed, "{snapshot}: the table names every .cs file");
        for (file, want) in &table {
            // Bases resolve through the classes of the file's own demo project.
            let demo = file.split('/').next().unwrap();
            let mut index = CsIndex::default();
            let mut all = Vec::new();
            cs_files(&root.join(demo), "", &mut all);
            for f in &all {
                let text = std::fs::read_to_string(root.join(demo).join(f)).unwrap();
                index.add(&godot_mcp_csharp::read_cs(&text));
            }
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let got = cs_script(&format!("res://{file}"), &text, Some(&index));
            let at = format!("{snapshot}/{file}");
            assert_eq!(got.class_name.as_deref(), want.class, "{at}: class");
            assert_eq!(got.extends.as_deref(), want.base, "{at}: base");
            assert_eq!(got.tool, want.tool, "{at}: [Tool]");
            let exports: Vec<(&str, &str)> = got
                .exports
                .iter()
                .map(|e| {
                    let ty = e.godot.class_name.as_deref().unwrap_or(&e.godot.variant);
                    (e.name.as_str(), ty)
                })
                .collect();
            assert_eq!(exports, want.exports, "{at}: exports");
            let signals: Vec<&str> = got.signals.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(signals, want.signals, "{at}: signals");
            let problems: Vec<&str> = got.problems.iter().map(|p| p.code).collect();
            assert_eq!(problems, want.problems, "{at}: problems");
            checked += 1;
        }
    }
    // 22 files at the 4.4 snapshot, 26 at head (squash_the_creeps joined mono/).
    assert_eq!(checked, 48);
}

/// A copy of one mono demo at head.
fn demo(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    support::copy_dir(&corpus("mono-demo-head").join(name), dir.path());
    dir
}

#[tokio::test]
async fn the_script_tools_and_project_info_speak_of_csharp() {
    let dir = demo("squash_the_creeps");
    let client = support::connect(dir.path()).await;

    let page = support::call_ok(&client, "list_scripts", json!({})).await;
    let player = page["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == "res://Player.cs")
        .cloned()
        .unwrap_or_else(|| panic!("{page}"));
    assert_eq!(player["language"], "csharp");
    assert_eq!(player["class_name"], "Player");
    assert_eq!(player["extends"], "CharacterBody3D");
    assert_eq!(
        player["exports"],
        json!(["Speed", "FallAcceleration", "JumpImpulse", "BounceImpulse"])
    );
    assert_eq!(player["signals"], json!(["Hit"]));

    // The root of Mob.tscn has Mob.cs: its class, exports with types, signals.
    let r = support::call_ok(
        &client,
        "get_node_script",
        json!({"scene": "res://Mob.tscn"}),
    )
    .await;
    assert_eq!(r["script"]["path"], "res://Mob.cs", "{r}");
    let cs = &r["csharp"];
    assert_eq!(cs["class_name"], "Mob", "{r}");
    assert_eq!(cs["native_base"], "CharacterBody3D");
    assert_eq!(cs["exports"][0]["name"], "MinSpeed");
    assert_eq!(cs["exports"][0]["type"], "int");
    assert_eq!(cs["exports"][0]["cs_type"], "int");
    assert_eq!(cs["signals"][0]["name"], "Squashed");
    assert_eq!(cs["signals"][0]["delegate"], "SquashedEventHandler");

    // project_info: the .csproj (a name with spaces and parentheses), the .sln, [dotnet].
    let info = support::call_ok(&client, "project_info", json!({})).await;
    let dn = &info["dotnet"];
    assert_eq!(dn["assembly_name"], "Squash the Creeps (3D)", "{info}");
    assert_eq!(
        dn["projects"][0]["path"],
        "res://Squash the Creeps (3D).csproj"
    );
    assert_eq!(dn["projects"][0]["sdk"], "Godot.NET.Sdk/4.7.0");
    assert_eq!(dn["projects"][0]["godot_sdk_version"], "4.7.0");
    assert_eq!(dn["projects"][0]["target_frameworks"], json!(["net8.0"]));
    assert_eq!(
        dn["solutions"][0]["projects"],
        json!(["Squash the Creeps (3D).csproj"])
    );
    assert!(dn.get("hint").is_none(), "{dn}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cs_script_in_a_project_without_csproj_is_told_how_godot_makes_one() {
    let dir = support::tiny_project("NoDotnet");
    let client = support::connect(dir.path()).await;
    // No trace of C# yet: project_info says nothing of .NET.
    let info = support::call_ok(&client, "project_info", json!({})).await;
    assert!(info.get("dotnet").is_none(), "{info}");

    let r = support::call_ok(
        &client,
        "create_script",
        json!({"path": "res://actors/Hero.cs", "extends": "CharacterBody2D", "confirm": true}),
    )
    .await;
    assert!(
        r["hint"]
            .as_str()
            .is_some_and(|h| h.contains("Create C# solution")),
        "{r}"
    );
    let text = std::fs::read_to_string(dir.path().join("actors/Hero.cs")).unwrap();
    assert!(
        text.contains("public partial class Hero : CharacterBody2D"),
        "{text}"
    );
    // The new script reads back as a C# script named as its file.
    let page = support::call_ok(&client, "list_scripts", json!({})).await;
    assert_eq!(page["scripts"][0]["class_name"], "Hero", "{page}");
    assert!(page["scripts"][0].get("problems").is_none(), "{page}");

    // A file name that is no C# class name is refused, nothing written.
    let e = support::call_err(
        &client,
        "create_script",
        json!({"path": "res://my hero.cs", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert!(!dir.path().join("my hero.cs").exists());
    client.cancel().await.unwrap();
}

/// The server's PATH without any `dotnet`, and no DOTNET_ROOT.
fn no_dotnet_env() -> Vec<(&'static str, &'static str)> {
    vec![("PATH", "/usr/bin:/bin"), ("DOTNET_ROOT", "")]
}

#[tokio::test]
async fn build_csharp_without_an_sdk_says_what_to_install_and_changes_nothing() {
    if Path::new("/usr/bin/dotnet").exists() || Path::new("/bin/dotnet").exists() {
        println!("SKIPPED: a dotnet is installed system-wide");
        return;
    }
    let dir = demo("dodge_the_creeps");
    let before = support::files_under(dir.path(), &[]);
    let client = support::connect_with(dir.path(), &no_dotnet_env()).await;
    let e = support::call_err(&client, "build_csharp", json!({})).await;
    assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
    assert_eq!(e["required"], "dotnet_sdk", "{e}");
    assert!(
        e["hint"]
            .as_str()
            .is_some_and(|h| h.contains(".NET SDK 8.0")),
        "{e}"
    );
    // A project argument that is no .NET project is refused first.
    let e = support::call_err(
        &client,
        "build_csharp",
        json!({"project": "res://project.godot"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert_eq!(support::files_under(dir.path(), &[]), before);
    client.cancel().await.unwrap();
}

/// build_csharp through the supervisor with a stand-in `dotnet` (DOTNET_ROOT) that
/// prints MSBuild's canonical lines as dotnet does (each diagnostic again in the summary)
/// and fails: the launch gives dotnet its own arguments only, and the answer is the
/// diagnostics as data, each once, errors first.
#[cfg(unix)] // a shell-script dotnet, made executable
#[tokio::test]
async fn build_csharp_runs_dotnet_supervised_and_returns_its_diagnostics() {
    use std::os::unix::fs::PermissionsExt;
    let dir = demo("dodge_the_creeps");
    let sdk = tempfile::tempdir().unwrap();
    let fake = sdk.path().join("dotnet");
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\n\
         echo '  Determining projects to restore...'\n\
         echo \"$PWD/Mob.cs(3,1): warning CS0105: The using directive for 'Godot' appeared previously [$2]\"\n\
         echo \"$PWD/Mob.cs(15,20): error CS1002: ; expected [$2]\"\n\
         echo 'Build FAILED.'\n\
         echo \"$PWD/Mob.cs(3,1): warning CS0105: The using directive for 'Godot' appeared previously [$2]\"\n\
         echo \"$PWD/Mob.cs(15,20): error CS1002: ; expected [$2]\"\n\
         exit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = sdk.path().display().to_string();
    let client = support::connect_with(dir.path(), &[("DOTNET_ROOT", root.as_str())]).await;
    let r = support::call_ok(&client, "build_csharp", json!({})).await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["exit_code"], 1, "{r}");
    assert_eq!(r["project"], "res://Dodge the Creeps with C#.csproj", "{r}");
    assert_eq!(
        (r["error_count"].clone(), r["warning_count"].clone()),
        (json!(1), json!(1)),
        "{r}"
    );
    let d = diagnostics(&r);
    assert_eq!(d.len(), 2, "{r}");
    assert_eq!(d[0]["severity"], "error", "errors first: {r}");
    assert_eq!(d[0]["code"], "CS1002");
    assert_eq!(
        (d[0]["line"].clone(), d[0]["column"].clone()),
        (json!(15), json!(20))
    );
    assert!(
        d[0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("/Mob.cs")),
        "{r}"
    );
    assert!(
        d[0]["project"]
            .as_str()
            .is_some_and(|p| p.ends_with("/Dodge the Creeps with C#.csproj")),
        "{r}"
    );
    assert_eq!(d[1]["code"], "CS0105");
    assert!(r["transaction_id"].is_string(), "{r}");
    // dotnet got its own arguments, none of the supervisor's.
    let args = std::fs::read_to_string(sdk.path().join("args")).unwrap();
    let project = dir.path().join("Dodge the Creeps with C#.csproj");
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "build",
            project.to_str().unwrap(),
            "-nologo",
            "-p:GenerateFullPaths=true"
        ],
    );
    client.cancel().await.unwrap();
}

/// The `dotnet` the real tier uses: `DOTNET_ROOT`, else `PATH`. Without one the test
/// prints `SKIPPED: no .NET SDK`, or fails under `GODOT_MCP_REQUIRE_DOTNET=1` (the public
/// workflow's C# job).
fn dotnet() -> Option<PathBuf> {
    let root = std::env::var("DOTNET_ROOT").ok();
    let path = std::env::var("PATH").ok();
    let found = godot_mcp_server::find_dotnet(root.as_deref(), path.as_deref());
    if found.is_none() {
        assert!(
            !std::env::var("GODOT_MCP_REQUIRE_DOTNET").is_ok_and(|v| v == "1"),
            "GODOT_MCP_REQUIRE_DOTNET=1 and no .NET SDK was found (DOTNET_ROOT, PATH)"
        );
        println!("SKIPPED: no .NET SDK");
    }
    found
}

/// A Godot .NET editor (GODOT_BIN's `--version` says `mono`) and the SDK, else `None`
/// after saying why (a failure under `GODOT_MCP_REQUIRE_DOTNET=1`).
fn godot_dotnet() -> Option<PathBuf> {
    dotnet()?;
    let require = std::env::var("GODOT_MCP_REQUIRE_DOTNET").is_ok_and(|v| v == "1");
    let Some(bin) = std::env::var_os("GODOT_BIN").map(PathBuf::from) else {
        assert!(
            !require,
            "GODOT_MCP_REQUIRE_DOTNET=1 and GODOT_BIN is not set"
        );
        println!("SKIPPED: no Godot .NET editor (GODOT_BIN)");
        return None;
    };
    let version = support::engine_version(&bin);
    if !version.contains("mono") {
        assert!(
            !require,
            "GODOT_MCP_REQUIRE_DOTNET=1 and GODOT_BIN is no .NET build: {version}"
        );
        println!("SKIPPED: GODOT_BIN is no Godot .NET build ({version})");
        return None;
    }
    Some(bin)
}

fn diagnostics(r: &Value) -> Vec<Value> {
    r["diagnostics"].as_array().cloned().unwrap_or_default()
}

/// A build that passes, then an edit that breaks it: the error comes back as data
/// (file, line, column, code), and fixing it builds again. Needs the .NET SDK (and
/// network for the first restore of Godot.NET.Sdk).
#[tokio::test]
async fn real_dotnet_build_passes_then_an_edit_breaks_it_with_diagnostics() {
    if dotnet().is_none() {
        return;
    }
    let dir = demo("dodge_the_creeps");
    let client = support::connect(dir.path()).await;
    let ok = support::call_ok(&client, "build_csharp", json!({})).await;
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["error_count"], 0, "{ok}");
    assert!(ok["transaction_id"].is_string());

    let path = dir.path().join("Mob.cs");
    let good = std::fs::read_to_string(&path).unwrap();
    let sha =
        support::call_ok(&client, "scripts_read", json!({"path": "res://Mob.cs"})).await["sha256"]
            .clone();
    // Line 15 is `QueueFree();`: drop its semicolon.
    let broken = good.replacen("QueueFree();", "QueueFree()", 1);
    support::call_ok(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": broken, "expected_sha256": sha, "confirm": true}),
    )
    .await;
    let bad = support::call_ok(&client, "build_csharp", json!({})).await;
    assert_eq!(bad["ok"], false, "{bad}");
    let errs = diagnostics(&bad);
    let cs1002 = errs
        .iter()
        .find(|d| d["code"] == "CS1002")
        .unwrap_or_else(|| panic!("no CS1002 in {bad}"));
    assert_eq!(cs1002["severity"], "error");
    assert!(
        cs1002["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("Mob.cs")),
        "{cs1002}"
    );
    assert_eq!(cs1002["line"], 15, "{cs1002}");
    assert!(cs1002["column"].as_u64().is_some(), "{cs1002}");
    assert!(
        cs1002["project"]
            .as_str()
            .is_some_and(|p| p.ends_with(".csproj")),
        "{cs1002}"
    );
    client.cancel().await.unwrap();
}

/// write_script with `check: "build"` on the real SDK: an edit that breaks the build
/// is put back (the transaction compensated, the file byte-identical, the compiler's
/// CS1002 in the answer); one that builds is committed. Needs the .NET SDK (and
/// network for the first restore of Godot.NET.Sdk).
#[tokio::test]
async fn real_dotnet_check_build_puts_a_breaking_write_back() {
    if dotnet().is_none() {
        return;
    }
    let dir = demo("dodge_the_creeps");
    let client = support::connect(dir.path()).await;
    let path = dir.path().join("Mob.cs");
    let before = std::fs::read(&path).unwrap();
    let good = String::from_utf8(before.clone()).unwrap();
    let sha =
        support::call_ok(&client, "scripts_read", json!({"path": "res://Mob.cs"})).await["sha256"]
            .clone();
    let e = support::call_err(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": good.replacen("QueueFree();", "QueueFree()", 1),
               "expected_sha256": sha, "check": "build", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PARSE_ERROR", "{e}");
    assert_eq!(e["details"]["status"], "compensated", "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let txn = e["details"]["transaction_id"].as_str().unwrap();
    assert_eq!(txn_status(&client, txn).await, "compensated");
    let errs = e["details"]["build"]["diagnostics"].as_array().unwrap();
    let cs1002 = errs
        .iter()
        .find(|d| d["code"] == "CS1002")
        .unwrap_or_else(|| panic!("no CS1002 in {e}"));
    assert_eq!(cs1002["line"], 15, "{cs1002}");

    let next = good.replacen("QueueFree();", "QueueFree(); // off screen", 1);
    let r = support::call_ok(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": next, "expected_sha256": sha,
               "check": "build", "confirm": true}),
    )
    .await;
    assert_eq!(
        txn_status(&client, r["transaction_id"].as_str().unwrap()).await,
        "committed"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), next);
    client.cancel().await.unwrap();
}

/// attach_script on a mono demo in a live Godot .NET editor: a script of the node's
/// class attaches; one whose class does not fit the node, or is not named as its file,
/// is refused with nothing changed.
#[tokio::test(flavor = "multi_thread")]
async fn real_godot_dotnet_attach_script_on_a_mono_demo() {
    let Some(godot) = godot_dotnet() else {
        return;
    };
    let dir = demo("dodge_the_creeps");
    let p = dir.path();
    support::install_addon(p);
    let mut project = std::fs::read_to_string(p.join("project.godot")).unwrap();
    project.push_str(
        "\n[editor_plugins]\n\nenabled=PackedStringArray(\"res://addons/godot_mcp/plugin.cfg\")\n",
    );
    std::fs::write(p.join("project.godot"), project).unwrap();
    std::fs::write(
        p.join("Wrong.cs"),
        "using Godot;\n\npublic partial class NotWrong : Area2D\n{\n}\n",
    )
    .unwrap();
    let client = support::connect(p).await;
    // The assembly the editor loads the scripts from.
    let built = support::call_ok(&client, "build_csharp", json!({})).await;
    assert_eq!(built["ok"], true, "{built}");
    support::run_godot(&godot, p, &["--import"]);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("editor.log");
    let mut editor = support::start_godot_editor(&godot, p, &log);
    let r = support::call_once_connected(
        &client,
        &mut editor,
        &log,
        "create_scene",
        json!({"path": "res://Probe.tscn", "root_type": "Area2D", "confirm": true}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{:?}", r.structured_content);

    // Mob.cs derives from RigidBody2D: an Area2D cannot take it.
    let e = support::call_err(
        &client,
        "attach_script",
        json!({"node": ".", "script": "res://Mob.cs"}),
    )
    .await;
    assert_eq!(e["code"], "INVALID_PARAMS", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("RigidBody2D")),
        "{e}"
    );
    // Wrong.cs's class is NotWrong.
    let e = support::call_err(
        &client,
        "attach_script",
        json!({"node": ".", "script": "res://Wrong.cs"}),
    )
    .await;
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("'Wrong'")),
        "{e}"
    );
    // Player.cs derives from Area2D: attached, and the live tree says so.
    let ok = support::call_ok(
        &client,
        "attach_script",
        json!({"node": ".", "script": "res://Player.cs"}),
    )
    .await;
    assert_eq!(ok["applied"], true, "{ok}");
    support::call_ok(&client, "save_scene", json!({"confirm": true})).await;
    let saved = std::fs::read_to_string(p.join("Probe.tscn")).unwrap();
    assert!(saved.contains("res://Player.cs"), "{saved}");
    assert!(!saved.contains("res://Mob.cs"), "{saved}");
    let r = support::call_ok(
        &client,
        "get_node_script",
        json!({"scene": "res://Probe.tscn"}),
    )
    .await;
    assert_eq!(r["csharp"]["class_name"], "Player", "{r}");
    support::kill_godot_editor(&mut editor);
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------------
// check: "build" — a write or a change kept only if the project builds
// ---------------------------------------------------------------------------------

/// A stand-in `dotnet` that judges the sources as `dotnet build` does on this one
/// point: every `.cs` file under the project's folder (not `obj/`, `bin/`, hidden
/// folders) is read from disk when it runs, and a file whose braces do not close
/// fails the build with the C# compiler's own error (CS1513 `} expected` at the end
/// of the file; CS1022 at a `}` too many), printed in MSBuild's canonical form with
/// the project suffix, each error again in the summary, exit code 1. A project whose
/// files all close builds: `Build succeeded.`, exit code 0. Each run appends the
/// bytes it built of every file to `<sdk>/built` (so a test can see what the build
/// saw).
#[cfg(unix)]
fn standin_dotnet() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let sdk = tempfile::tempdir().unwrap();
    let fake = sdk.path().join("dotnet");
    std::fs::write(
        &fake,
        r#"#!/bin/sh
# dotnet build <project> -nologo -p:GenerateFullPaths=true
[ "$1" = build ] || { echo "stand-in dotnet: only build" >&2; exit 1; }
proj="$2"; dir=$(dirname "$proj"); sdk=$(dirname "$0")
cd "$dir" || exit 1
out=$(find . \( -name obj -o -name bin -o -name '.?*' \) -prune -o -name '*.cs' -type f -print | sort | while IFS= read -r f; do
  f="$PWD/${f#./}"
  cat "$f" >> "$sdk/built"
  awk -v f="$f" -v p="$proj" '
    { for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
        if (c == "{") d++
        if (c == "}") { d--; if (d < 0 && !bad) { printf "%s(%d,%d): error CS1022: Type or namespace definition, or end-of-file expected [%s]\n", f, NR, i, p; bad = 1 } } }
      last = NR; len = length($0) }
    END { if (d > 0 && !bad) printf "%s(%d,%d): error CS1513: } expected [%s]\n", f, last, len + 1, p }' "$f"
done)
echo "  Determining projects to restore..."
if [ -n "$out" ]; then
  printf '%s\n' "$out"
  echo ""
  echo "Build FAILED."
  echo ""
  printf '%s\n' "$out"
  echo "    0 Warning(s)"
  echo "    $(printf '%s\n' "$out" | wc -l | tr -d ' ') Error(s)"
  exit 1
fi
echo "  $(basename "$proj" .csproj) -> $dir/.godot/mono/temp/bin/Debug/out.dll"
echo ""
echo "Build succeeded."
echo "    0 Warning(s)"
echo "    0 Error(s)"
exit 0
"#,
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    sdk
}

/// The status list_transactions gives transaction `id`.
async fn txn_status(client: &support::Client, id: &str) -> Value {
    let listed = support::call_ok(client, "list_transactions", json!({})).await;
    support::transaction_row(&listed, id)["status"].clone()
}

/// Mob.cs with its class's closing brace gone: C# reports CS1513 at its end.
#[cfg(unix)]
fn broken_mob(good: &str) -> String {
    let end = good.trim_end().strip_suffix('}').unwrap();
    format!("{end}\n")
}

/// Guards against: a write kept although the project no longer builds, a put-back
/// that is assumed rather than derived, and an answer without the diagnostics.
#[cfg(unix)]
#[tokio::test]
async fn a_cs_write_whose_build_fails_is_put_back_compensated_with_its_diagnostics() {
    let dir = demo("dodge_the_creeps");
    let sdk = standin_dotnet();
    let root = sdk.path().display().to_string();
    let client = support::connect_with(dir.path(), &[("DOTNET_ROOT", root.as_str())]).await;
    let path = dir.path().join("Mob.cs");
    let before = std::fs::read(&path).unwrap();
    let sha =
        support::call_ok(&client, "scripts_read", json!({"path": "res://Mob.cs"})).await["sha256"]
            .clone();
    let broken = broken_mob(&String::from_utf8_lossy(&before));
    let e = support::call_err(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": broken, "expected_sha256": sha,
               "check": "build", "confirm": true}),
    )
    .await;
    assert_eq!(e["code"], "PARSE_ERROR", "{e}");
    // The build ran on the broken file in place (the stand-in read it from disk).
    let built = std::fs::read_to_string(sdk.path().join("built")).unwrap();
    assert!(built.contains(&broken), "the build saw the write: {built}");
    // Put back, byte for byte.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // The journal's verdict, derived from disk: compensated.
    let d = &e["details"];
    assert_eq!(d["status"], "compensated", "{e}");
    let txn = d["transaction_id"].as_str().unwrap();
    assert_eq!(txn_status(&client, txn).await, "compensated");
    // The diagnostics as data.
    let diag = &d["build"]["diagnostics"][0];
    assert_eq!(diag["code"], "CS1513", "{e}");
    assert_eq!(diag["severity"], "error");
    // The end of the file, where the class should have closed (line 16).
    assert_eq!(diag["line"], 16, "{e}");
    assert!(
        diag["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("/Mob.cs")),
        "{e}"
    );
    assert_eq!(d["build"]["ok"], false);
    assert_eq!(d["build"]["exit_code"], 1);
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("CS1513")),
        "{e}"
    );
    client.cancel().await.unwrap();
}

/// Guards against: a build check that throws away a write that builds.
#[cfg(unix)]
#[tokio::test]
async fn a_cs_write_whose_build_passes_is_committed() {
    let dir = demo("dodge_the_creeps");
    let sdk = standin_dotnet();
    let root = sdk.path().display().to_string();
    let client = support::connect_with(dir.path(), &[("DOTNET_ROOT", root.as_str())]).await;
    let path = dir.path().join("Mob.cs");
    let good = std::fs::read_to_string(&path).unwrap();
    let sha =
        support::call_ok(&client, "scripts_read", json!({"path": "res://Mob.cs"})).await["sha256"]
            .clone();
    let next = good.replacen("QueueFree();", "QueueFree(); // gone", 1);
    let r = support::call_ok(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": next, "expected_sha256": sha,
               "check": "build", "confirm": true}),
    )
    .await;
    assert_eq!(r["applied"], true, "{r}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), next);
    let txn = r["transaction_id"].as_str().unwrap();
    assert_eq!(txn_status(&client, txn).await, "committed");
    // create_script takes the check too: a new class that closes builds.
    let r = support::call_ok(
        &client,
        "create_script",
        json!({"path": "res://Gem.cs", "extends": "Area2D", "check": "build", "confirm": true}),
    )
    .await;
    assert_eq!(
        txn_status(&client, r["transaction_id"].as_str().unwrap()).await,
        "committed"
    );
    assert!(dir.path().join("Gem.cs").is_file());
    client.cancel().await.unwrap();
}

/// Guards against: a change kept although it breaks the build, and a change put back
/// in part. Two files, one new and one overwritten: both as before.
#[cfg(unix)]
#[tokio::test]
async fn an_agent_change_whose_build_fails_puts_every_file_back() {
    let dir = demo("dodge_the_creeps");
    let sdk = standin_dotnet();
    let root = sdk.path().display().to_string();
    let client = support::connect_with(dir.path(), &[("DOTNET_ROOT", root.as_str())]).await;
    let before = support::files_under(dir.path(), &[".godot"]);
    let good = std::fs::read_to_string(dir.path().join("Mob.cs")).unwrap();
    let sha =
        support::call_ok(&client, "scripts_read", json!({"path": "res://Mob.cs"})).await["sha256"]
            .clone();
    let begun = support::call_ok(&client, "begin_change", json!({})).await;
    let id = begun["change_id"].as_str().unwrap().to_owned();
    support::call_ok(
        &client,
        "create_script",
        json!({"path": "res://Gem.cs", "extends": "Area2D", "confirm": true}),
    )
    .await;
    support::call_ok(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": broken_mob(&good), "expected_sha256": sha,
               "confirm": true}),
    )
    .await;
    let e = support::call_err(&client, "commit_change", json!({"check": "build"})).await;
    assert_eq!(e["code"], "PARSE_ERROR", "{e}");
    assert_eq!(e["details"]["change_id"], id.as_str());
    assert_eq!(e["details"]["status"], "compensated", "{e}");
    assert_eq!(e["details"]["build"]["diagnostics"][0]["code"], "CS1513");
    assert_eq!(txn_status(&client, &id).await, "compensated");
    assert_eq!(support::files_under(dir.path(), &[".godot"]), before);

    // The same change that builds is committed.
    let begun = support::call_ok(&client, "begin_change", json!({})).await;
    let id = begun["change_id"].as_str().unwrap().to_owned();
    support::call_ok(
        &client,
        "create_script",
        json!({"path": "res://Gem.cs", "extends": "Area2D", "confirm": true}),
    )
    .await;
    let done = support::call_ok(&client, "commit_change", json!({"check": "build"})).await;
    assert_eq!(done["status"], "committed", "{done}");
    assert_eq!(txn_status(&client, &id).await, "committed");
    assert!(dir.path().join("Gem.cs").is_file());
    client.cancel().await.unwrap();
}

/// Guards against: a check that cannot run found out only after the write.
#[tokio::test]
async fn check_build_without_an_sdk_is_refused_before_anything_is_written() {
    if Path::new("/usr/bin/dotnet").exists() || Path::new("/bin/dotnet").exists() {
        println!("SKIPPED: a dotnet is installed system-wide");
        return;
    }
    let dir = demo("dodge_the_creeps");
    let before = support::files_under(dir.path(), &[".godot"]);
    let client = support::connect_with(dir.path(), &no_dotnet_env()).await;
    let teach = |e: &Value| {
        assert_eq!(e["code"], "PRECONDITION_FAILED", "{e}");
        assert_eq!(e["required"], "dotnet_sdk", "{e}");
        assert!(
            e["hint"]
                .as_str()
                .is_some_and(|h| h.contains(".NET SDK 8.0")),
            "{e}"
        );
    };
    let e = support::call_err(
        &client,
        "write_script",
        json!({"path": "res://Mob.cs", "content": "x", "check": "build", "confirm": true}),
    )
    .await;
    teach(&e);
    let e = support::call_err(
        &client,
        "create_script",
        json!({"path": "res://Gem.cs", "check": "build", "confirm": true}),
    )
    .await;
    teach(&e);
    // A change: refused at commit, still open, nothing written.
    support::call_ok(&client, "begin_change", json!({})).await;
    support::call_ok(
        &client,
        "create_script",
        json!({"path": "res://Gem.cs", "confirm": true}),
    )
    .await;
    let e = support::call_err(&client, "commit_change", json!({"check": "build"})).await;
    teach(&e);
    assert_eq!(support::files_under(dir.path(), &[".godot"]), before);
    support::call_ok(&client, "abandon_change", json!({})).await;
    assert_eq!(support::files_under(dir.path(), &[".godot"]), before);
    client.cancel().await.unwrap();
}

/// Guards against: get_parse_errors refusing .cs, or saying nothing when it could not
/// check them. Through the stand-in's build: the broken file's error with line and
/// column, the other file clean; without an SDK each .cs is marked not checked, why.
#[cfg(unix)]
#[tokio::test]
async fn get_parse_errors_checks_cs_through_a_build_or_says_why_not() {
    let dir = demo("dodge_the_creeps");
    let path = dir.path().join("Mob.cs");
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, broken_mob(&good)).unwrap();
    let sdk = standin_dotnet();
    let root = sdk.path().display().to_string();
    let client = support::connect_with(dir.path(), &[("DOTNET_ROOT", root.as_str())]).await;
    let paths = json!({"paths": ["res://Mob.cs", "res://Main.cs"]});
    let r = support::call_ok(&client, "get_parse_errors", paths.clone()).await;
    assert_eq!(r["error_count"], 1, "{r}");
    let mob = &r["files"][0];
    assert_eq!(mob["path"], "res://Mob.cs");
    assert_eq!(mob["ok"], false);
    assert_eq!(mob["errors"][0]["line"], 16, "{r}");
    assert_eq!(mob["errors"][0]["column"], 1, "{r}");
    assert_eq!(mob["errors"][0]["message"], "CS1513: } expected", "{r}");
    assert_eq!(r["files"][1]["ok"], true, "{r}");
    assert_eq!(r["column_reported"], true);
    client.cancel().await.unwrap();

    // Behind an approval gate a read-only call runs no project code: not checked, and
    // build_csharp (gated) named.
    let gated_sdk = standin_dotnet();
    let root = gated_sdk.path().display().to_string();
    let client = support::connect_with(
        dir.path(),
        &[
            ("DOTNET_ROOT", root.as_str()),
            ("GODOT_MCP_APPROVAL_REQUIRE", "true"),
        ],
    )
    .await;
    let r = support::call_ok(&client, "get_parse_errors", paths.clone()).await;
    assert!(
        r["files"][0]["not_checked"]
            .as_str()
            .is_some_and(|w| w.contains("approval") && w.contains("build_csharp")),
        "{r}"
    );
    assert!(!gated_sdk.path().join("built").exists(), "no build ran");
    client.cancel().await.unwrap();

    if Path::new("/usr/bin/dotnet").exists() || Path::new("/bin/dotnet").exists() {
        println!("SKIPPED (no-SDK half): a dotnet is installed system-wide");
        return;
    }
    let client = support::connect_with(dir.path(), &no_dotnet_env()).await;
    let r = support::call_ok(&client, "get_parse_errors", paths).await;
    for f in r["files"].as_array().unwrap() {
        assert_eq!(f["ok"], false, "{r}");
        assert!(
            f["not_checked"]
                .as_str()
                .is_some_and(|w| w.contains("no .NET SDK") && w.contains(".NET SDK 8.0")),
            "{r}"
        );
    }
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------------
// The engine's own reading of the built assemblies (public workflow's C# job)
// ---------------------------------------------------------------------------------

/// The `Godot.NET.Sdk` version of a Godot .NET editor, from its `--version`
/// (`4.4.1.stable.mono.official.49a5bc7b6` → `4.4.1`, `4.5.stable.mono…` → `4.5.0`,
/// `4.6.beta2.mono…` → `4.6.0-beta.2`): the version the editor itself writes into a
/// project's `.csproj` when it opens it (GodotTools' `EnsureGodotSdkIsUpToDate`).
fn godot_sdk_version(version: &str) -> String {
    let mut numbers = Vec::new();
    let mut status = "stable";
    for p in version.split('.') {
        if p.chars().all(|c| c.is_ascii_digit()) && !p.is_empty() {
            numbers.push(p);
        } else {
            status = p;
            break;
        }
    }
    while numbers.len() < 3 {
        numbers.push("0");
    }
    let base = numbers[..3].join(".");
    if status == "stable" {
        return base;
    }
    let digits = status.find(|c: char| c.is_ascii_digit());
    match digits {
        Some(at) => format!("{base}-{}.{}", &status[..at], &status[at..]),
        None => format!("{base}-{status}"),
    }
}

#[test]
fn the_sdk_version_of_a_godot_dotnet_editor() {
    assert_eq!(
        godot_sdk_version("4.4.1.stable.mono.official.49a5bc7b6"),
        "4.4.1"
    );
    assert_eq!(godot_sdk_version("4.5.stable.mono.official.x"), "4.5.0");
    assert_eq!(godot_sdk_version("4.6.beta2.mono.official"), "4.6.0-beta.2");
}

/// The `.csproj` as the editor leaves it when it opens the project: its
/// `Godot.NET.Sdk` is the editor's own, and a framework below the SDK's minimum
/// (`net472` at the 4.4 snapshot, `net6.0`) is raised to `net8.0` (the SDK of the
/// public workflow's C# job).
fn upgrade_csproj(text: &str, sdk: &str) -> String {
    let start = text
        .find("Godot.NET.Sdk/")
        .expect("a Godot.NET.Sdk project")
        + 14;
    let end = start + text[start..].find('"').unwrap();
    let mut out = format!("{}{sdk}{}", &text[..start], &text[end..]);
    for old in ["net472", "net6.0", "net7.0"] {
        out = out.replace(
            &format!("<TargetFramework>{old}</TargetFramework>"),
            "<TargetFramework>net8.0</TargetFramework>",
        );
    }
    out
}

/// What the engine says of one `.cs` file once its project's assembly is loaded.
#[derive(Debug, serde::Deserialize)]
struct EngineScript {
    file: String,
    loaded: bool,
    global_name: String,
    base: String,
    /// Exported properties of this script (not of its base script): name, Variant
    /// type name (`type_string`), hint string.
    exports: Vec<(String, String, String)>,
    signals: Vec<String>,
}

/// The engine's own dump: a SceneTree script that loads every `.cs` file and prints
/// one `CLASSDB {json}` line per file, with what `CSharpScript` reports
/// (modules/mono/csharp_script.cpp): `get_global_name()` (the class only when
/// `[GlobalClass]`), `get_instance_base_type()` (the native base; empty when the
/// assembly has no class for the file), `get_script_property_list()` (in an editor
/// build, a category entry then the `[Export]` members, usage Default|ScriptVariable,
/// with the base script's after them: those are taken out), `get_script_signal_list()`
/// (names without `EventHandler`; the base script's taken out).
fn dump_script(files: &[String]) -> String {
    let list: Vec<String> = files
        .iter()
        .map(|f| serde_json::to_string(&format!("res://{f}")).unwrap())
        .collect();
    format!(
        r#"extends SceneTree

const FILES = [{}]

func _initialize():
	for f in FILES:
		var line = {{"file": f, "loaded": false, "global_name": "", "base": "", "exports": [], "signals": []}}
		var s = load(f)
		if s != null:
			line["loaded"] = true
			line["global_name"] = String(s.get_global_name())
			line["base"] = String(s.get_instance_base_type())
			var base_props = {{}}
			var base_signals = {{}}
			var b = s.get_base_script()
			if b != null:
				for p in b.get_script_property_list():
					base_props[p["name"]] = true
				for g in b.get_script_signal_list():
					base_signals[g["name"]] = true
			for p in s.get_script_property_list():
				var u = p["usage"]
				if base_props.has(p["name"]):
					continue
				if u & PROPERTY_USAGE_SCRIPT_VARIABLE and u & (PROPERTY_USAGE_EDITOR | PROPERTY_USAGE_STORAGE):
					line["exports"].append([p["name"], type_string(p["type"]), p["hint_string"]])
			for g in s.get_script_signal_list():
				if not base_signals.has(g["name"]):
					line["signals"].append(g["name"])
		print("CLASSDB " + JSON.stringify(line))
	quit()
"#,
        list.join(", ")
    )
}

/// Every `.cs` file of every mono demo at both snapshots, as the engine reads it from
/// the assembly `dotnet build` made (the project's `.csproj` upgraded to the editor's
/// `Godot.NET.Sdk` as the editor itself does), compared file by file with what our
/// reader says (the same `cs_script` as the table test): the native base, the global
/// class, the exports by name and Variant type (and class, for an object the engine
/// names), the signals by name. Where our reader finds no class named as the file (a
/// struct) or the file is in a hidden folder (`**/.*/**`, left out of every .NET build),
/// the engine must have no class for it either. A project where our reader reports a
/// generator error (GD0201 at the 4.4 snapshot) must fail its build with that code on
/// that file, and is not loaded. Needs the .NET SDK, a Godot .NET editor (GODOT_BIN),
/// and network for the restore of Godot.NET.Sdk.
#[test]
fn real_dotnet_the_engine_reads_every_mono_demo_class_as_the_table_says() {
    let Some(godot) = godot_dotnet() else {
        return;
    };
    let dotnet = dotnet().unwrap();
    let sdk = godot_sdk_version(&support::engine_version(&godot));
    let mut checked = 0;
    let mut failed_builds = 0;
    for snapshot in ["mono-demo-4.4", "mono-demo-head"] {
        let root = corpus(snapshot);
        let mut demos: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        demos.sort();
        let table = table(snapshot);
        for demo in &demos {
            let at = format!("{snapshot}/{demo}");
            let copy = tempfile::tempdir().unwrap();
            let p = copy.path();
            support::copy_dir(&root.join(demo), p);
            let csproj = std::fs::read_dir(p)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|f| f.extension().is_some_and(|x| x == "csproj"))
                .unwrap_or_else(|| panic!("{at}: no .csproj"));
            let text = std::fs::read_to_string(&csproj).unwrap();
            std::fs::write(&csproj, upgrade_csproj(&text, &sdk)).unwrap();

            // Our reader, every file, bases resolved through the project's classes.
            let mut files = Vec::new();
            cs_files(p, "", &mut files);
            files.sort();
            let mut index = CsIndex::default();
            for f in &files {
                index.add(&godot_mcp_csharp::read_cs(
                    &std::fs::read_to_string(p.join(f)).unwrap(),
                ));
            }
            let ours: Vec<_> = files
                .iter()
                .map(|f| {
                    let text = std::fs::read_to_string(p.join(f)).unwrap();
                    cs_script(&format!("res://{f}"), &text, Some(&index))
                })
                .collect();

            let out = std::process::Command::new(&dotnet)
                .arg("build")
                .arg(&csproj)
                .args(["-nologo", "-p:GenerateFullPaths=true"])
                .current_dir(p)
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run dotnet build");
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let errors: Vec<_> = godot_mcp_csharp::parse_diagnostics(&log)
                .into_iter()
                .filter(|d| d.severity == "error")
                .collect();
            let generator: Vec<(&str, &str)> = files
                .iter()
                .zip(&ours)
                .flat_map(|(f, s)| {
                    s.problems
                        .iter()
                        .filter(|d| d.code.starts_with("GD"))
                        .map(move |d| (f.as_str(), d.code))
                })
                .collect();
            if !generator.is_empty() {
                // Our reader says Godot's generator refuses this project: so must the build.
                assert!(
                    !out.status.success(),
                    "{at}: built, but we read {generator:?}"
                );
                for (f, code) in &generator {
                    assert!(
                        errors.iter().any(|d| d.code.as_deref() == Some(*code)
                            && d.file.as_deref().is_some_and(|x| x.ends_with(*f))),
                        "{at}/{f}: we read {code}; the build's errors: {errors:#?}"
                    );
                }
                failed_builds += 1;
                continue;
            }
            assert!(out.status.success(), "{at}: dotnet build failed:\n{log}");

            // Imported as a real project is before it runs (the autoloads' resources).
            support::run_godot(&godot, p, &["--import"]);
            std::fs::write(p.join("classdb_dump.gd"), dump_script(&files)).unwrap();
            let dump = support::run_godot(&godot, p, &["-s", "res://classdb_dump.gd"]);
            let engine: BTreeMap<String, EngineScript> = dump
                .lines()
                .filter_map(|l| l.strip_prefix("CLASSDB "))
                .map(|j| {
                    let e: EngineScript =
                        serde_json::from_str(j).unwrap_or_else(|err| panic!("{at}: {err}: {j}"));
                    (e.file.trim_start_matches("res://").to_owned(), e)
                })
                .collect();
            for (f, s) in files.iter().zip(&ours) {
                let at = format!("{at}/{f}");
                let e = engine
                    .get(f)
                    .unwrap_or_else(|| panic!("{at}: the engine printed nothing:\n{dump}"));
                let hidden = f.split('/').any(|c| c.starts_with('.'));
                if s.class_name.is_none() || hidden {
                    // Loaded as a script without a class, or not loaded at all.
                    assert_eq!(e.base, "", "{at}: base (no class in the assembly)");
                    checked += 1;
                    continue;
                }
                assert!(e.loaded, "{at}: the engine could not load it:\n{dump}");
                assert_eq!(
                    Some(e.base.as_str()),
                    s.native_base.as_deref(),
                    "{at}: base"
                );
                let global = if s.global_class {
                    s.class_name.as_deref().unwrap_or_default()
                } else {
                    ""
                };
                assert_eq!(e.global_name, global, "{at}: global class");
                // By name: the generator's order of members is not the file's.
                let mut theirs: Vec<&(String, String, String)> = e.exports.iter().collect();
                theirs.sort_by(|a, b| a.0.cmp(&b.0));
                let mut mine: Vec<&godot_mcp_csharp::CsExport> = s.exports.iter().collect();
                mine.sort_by(|a, b| a.name.cmp(&b.name));
                let names: Vec<&str> = theirs.iter().map(|x| x.0.as_str()).collect();
                let our_names: Vec<&str> = mine.iter().map(|x| x.name.as_str()).collect();
                assert_eq!(names, our_names, "{at}: exports");
                for (x, ours) in theirs.iter().zip(&mine) {
                    if ours.godot.variant != "Variant" {
                        assert_eq!(x.1, ours.godot.variant, "{at}: type of export {}", x.0);
                    }
                    if let Some(class) = ours.godot.class_name.as_deref()
                        && x.1 == "Object"
                        && !x.2.is_empty()
                    {
                        assert_eq!(x.2, class, "{at}: class of export {}", x.0);
                    }
                }
                let our_signals: Vec<&str> = s.signals.iter().map(|x| x.name.as_str()).collect();
                let mut signals: Vec<&str> = e.signals.iter().map(String::as_str).collect();
                let mut want = our_signals.clone();
                signals.sort_unstable();
                want.sort_unstable();
                assert_eq!(signals, want, "{at}: signals");
                // And the hand-written table says the same (the table test ties our
                // reader to it; this ties the engine to it directly).
                let row = &table[format!("{demo}/{f}").as_str()];
                assert_eq!(Some(e.base.as_str()), row.base, "{at}: base (table)");
                let mut rows: Vec<&str> = row.exports.iter().map(|x| x.0).collect();
                rows.sort_unstable();
                assert_eq!(names, rows, "{at}: exports (table)");
                let mut rows = row.signals.to_vec();
                rows.sort_unstable();
                assert_eq!(signals, rows, "{at}: signals (table)");
                checked += 1;
            }
        }
    }
    // 48 files (22 at the 4.4 snapshot, 26 at head), less the 4 of multiplayer_pong at
    // 4.4, whose build fails with GD0201 as our reader says.
    assert_eq!((checked, failed_builds), (44, 1));
}
