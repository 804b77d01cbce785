//! Path containment at the schema boundary, end to end: hostile paths sent by a real
//! MCP client to the real binary are refused before any I/O, with an error naming the
//! parameter, and nothing outside the project is ever returned.

mod support;

use std::path::Path;

use serde_json::{Value, json};
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
        |target: &Path, name: &str| godot_mcp_os::fs::symlink(target, project.join(name)).unwrap();
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

/// One step into a tool's arguments.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    /// The first element of an array.
    First,
}

/// Where a value sits, as the server names it in `param` (`sets[0].value`).
fn param_name(steps: &[Step]) -> String {
    let mut out = String::new();
    for s in steps {
        match s {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::First => out.push_str("[0]"),
        }
    }
    out
}

/// A JSON value carrying nothing more than a schema needs: no type, no
/// alternatives, no structure. That is where a typed Godot value goes.
fn is_any(schema: &Value) -> bool {
    let Some(m) = schema.as_object() else {
        return false;
    };
    ![
        "type",
        "anyOf",
        "oneOf",
        "allOf",
        "properties",
        "items",
        "pattern",
        "enum",
        "const",
        "$ref",
    ]
    .iter()
    .any(|k| m.contains_key(*k))
}

/// Every location in a schema of a `^res://` parameter, and of a free JSON value
/// (where typed values go), wherever it is nested.
fn slots(schema: &Value, at: Vec<Step>, res: &mut Vec<Vec<Step>>, any: &mut Vec<Vec<Step>>) {
    if schema.get("pattern").and_then(Value::as_str) == Some("^res://") {
        res.push(at.clone());
    }
    if !at.is_empty() && is_any(schema) {
        any.push(at.clone());
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            let mut next = at.clone();
            next.push(Step::Key(k.clone()));
            slots(v, next, res, any);
        }
    }
    if let Some(items) = schema.get("items") {
        let mut next = at.clone();
        next.push(Step::First);
        slots(items, next, res, any);
    }
}

/// The smallest value a schema accepts (required fields only).
fn sample(schema: &Value) -> Value {
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return sample(first);
        }
    }
    if schema.get("pattern").and_then(Value::as_str) == Some("^res://") {
        return json!("res://scripts/ok.gd");
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts.iter().find_map(Value::as_str).unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "null",
    };
    match ty {
        "object" => {
            let mut m = serde_json::Map::new();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for k in required {
                m.insert(k.into(), sample(&schema["properties"][k]));
            }
            Value::Object(m)
        }
        // As many items as the schema requires (a fixed-size [x, y] needs two).
        "array" => {
            let n = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            Value::Array((0..n).map(|_| sample(&schema["items"])).collect())
        }
        "string" => json!("x"),
        "integer" | "number" => json!(schema.get("minimum").cloned().unwrap_or(json!(1))),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

/// `args` (a sample of `schema`) with `value` put at `steps`, creating what lies on the way.
fn place(args: &mut Value, schema: &Value, steps: &[Step], value: Value) {
    let Some((step, rest)) = steps.split_first() else {
        *args = value;
        return;
    };
    match step {
        Step::Key(k) => {
            let sub = &schema["properties"][k.as_str()];
            let map = args.as_object_mut().expect("an object on the way");
            let slot = map.entry(k.clone()).or_insert_with(|| sample(sub));
            if slot.is_null() && !rest.is_empty() {
                *slot = sample(
                    &json!({"type": if matches!(rest[0], Step::First) { "array" } else { "object" }}),
                );
            }
            place(slot, sub, rest, value);
        }
        Step::First => {
            let items = &schema["items"];
            let arr = args.as_array_mut().expect("an array on the way");
            if arr.is_empty() {
                arr.push(sample(items));
            }
            place(&mut arr[0], items, rest, value);
        }
    }
}

/// A call as a tool takes it directly, and the same call as a run_commands entry.
struct Probe {
    tool: String,
    args: Value,
    param: String,
}

/// Every hostile placement: each `^res://` parameter of every tool (all toolsets,
/// read from the server's own tools/list), and a Resource typed value in every
/// free value slot (as itself, inside an array and inside a dictionary).
fn probes(tools: &[rmcp::model::Tool], hostile: &str) -> (Vec<Probe>, usize) {
    let mut out = Vec::new();
    let mut res_params = 0;
    for t in tools {
        let schema = Value::Object((*t.input_schema).clone());
        let (mut res, mut any) = (Vec::new(), Vec::new());
        slots(&schema, Vec::new(), &mut res, &mut any);
        res_params += res.len();
        let base = {
            let mut b = sample(&schema);
            if schema["properties"].get("confirm").is_some() {
                b["confirm"] = json!(true);
            }
            b
        };
        for steps in &res {
            let mut args = base.clone();
            place(&mut args, &schema, steps, json!(hostile));
            out.push(Probe {
                tool: t.name.to_string(),
                args,
                param: param_name(steps),
            });
        }
        let typed = json!({"$type": "Resource", "path": hostile});
        for steps in &any {
            let name = param_name(steps);
            for (v, p) in [
                (typed.clone(), format!("{name}.path")),
                (json!([1, typed.clone()]), format!("{name}[1].path")),
                (json!({"tex": typed.clone()}), format!("{name}.tex.path")),
            ] {
                let mut args = base.clone();
                place(&mut args, &schema, steps, v);
                out.push(Probe {
                    tool: t.name.to_string(),
                    args,
                    param: p,
                });
            }
        }
    }
    (out, res_params)
}

fn assert_refused(r: &rmcp::model::CallToolResult, what: &str, param: &str) {
    let text = serde_json::to_string(r).unwrap();
    assert!(!text.contains(SECRET), "{what} leaked the secret: {text}");
    assert!(!text.contains("root:x:0:0"), "{what} leaked /etc/passwd");
    assert_eq!(r.is_error, Some(true), "{what} was not refused: {text}");
    let err = &r.structured_content.as_ref().unwrap()["error"];
    assert_eq!(err["code"], "PATH_REFUSED", "{what}: {err}");
    assert_eq!(err["param"], param, "{what}: {err}");
}

/// Every `^res://` parameter of every tool, in every toolset, wherever it sits in the
/// arguments, and every res:// path inside a typed value, is refused for every hostile
/// path — called directly and as a run_commands entry — before any precondition (no
/// editor is connected here: a refusal that waited for the bridge would say
/// bridge_connected instead).
#[tokio::test]
async fn hostile_paths_are_refused_and_nothing_outside_is_read() {
    assert!(HOSTILE.len() >= 30);
    let fixture = hostile_fixture();
    let client = support::connect_with(
        &fixture.path().join("game"),
        &[
            ("GODOT_MCP_TOOLSETS", "all"),
            ("GODOT_BIN", "/nonexistent/godot"),
        ],
    )
    .await;
    let tools = client.list_all_tools().await.unwrap();
    let (_, res_params) = probes(&tools, "res://x");
    // 19 when this test was written; a new tool only adds to it.
    assert!(
        res_params >= 19,
        "only {res_params} res:// parameters found"
    );
    let mut checked = 0;
    let mut typed = 0;
    for path in HOSTILE {
        let (list, _) = probes(&tools, path);
        for p in list {
            typed += usize::from(p.param.ends_with(".path") && p.param != "path");
            let what = format!("{}({})", p.tool, p.args);
            let r = call(&client, &p.tool, p.args.clone()).await;
            assert_refused(&r, &what, &p.param);
            let batch = json!({"commands": [{"tool": p.tool, "arguments": p.args}]});
            let r = call(&client, "run_commands", batch).await;
            assert_refused(
                &r,
                &format!("run_commands[{what}]"),
                &format!("commands[0].arguments.{}", p.param),
            );
            checked += 1;
        }
    }
    assert!(checked >= HOSTILE.len() * res_params, "{checked}");
    assert!(typed > 0, "no typed-value slot was found");
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

/// A Resource value naming a contained path is not refused by the walk: without an
/// editor the call goes on to its precondition, bridge_connected.
#[tokio::test]
async fn a_contained_resource_value_reaches_the_bridge_precondition() {
    let fixture = hostile_fixture();
    let client = connect(&fixture.path().join("game")).await;
    let e = support::call_err(
        &client,
        "set_node_property",
        json!({"node": "A", "property": "texture",
               "value": {"$type": "Resource", "path": "res://scripts/ok.gd"}}),
    )
    .await;
    assert_eq!(e["required"], "bridge_connected", "{e}");
    client.cancel().await.unwrap();
}

/// Guards against (issue 26, item 10): a `Raw` value bypassed the embedded-path
/// check. Its text reaches Godot's `str_to_var` in the add-on, where
/// `Resource("…")` loads the file it names, so the server reads the text with the
/// formats crate's reader and checks every path in it, at any depth; text it
/// cannot read cannot be checked and is refused. A contained one goes on to the
/// bridge precondition.
#[tokio::test]
async fn a_raw_value_is_read_and_every_path_in_it_checked() {
    let fixture = hostile_fixture();
    let client = connect(&fixture.path().join("game")).await;
    let raw = |text: &str| json!({"node": "A", "property": "texture", "value": {"$type": "Raw", "text": text}});
    for text in [
        r#"Resource("res://../../x.tres")"#,
        r#"Resource("/etc/passwd")"#,
        r#"Resource("user://save.tres")"#,
        r#"Resource("res://secret_link.gd")"#,
        r#"[1, {"k": Resource("res://outside_dir/secret.gd")}]"#,
        r#"Object(Node, "script": Resource("/tmp/x.gd"))"#,
        r#"Resource(1)"#,
        // Unreadable: cannot be checked.
        r#"Resource("res://scripts/ok.gd""#,
        "Resource(\"res://scripts/ok.gd\") trailing",
    ] {
        let r = call(&client, "set_node_property", raw(text)).await;
        assert_refused(&r, text, "value.text");
    }
    for text in [
        r#"Resource("res://scripts/ok.gd")"#,
        r#"PackedStringArray("res://scripts/ok.gd", "a")"#,
    ] {
        let e = support::call_err(&client, "set_node_property", raw(text)).await;
        assert_eq!(e["required"], "bridge_connected", "{text}: {e}");
    }
    client.cancel().await.unwrap();
}

/// Guards against (issue 40): a bare `"res://…"` string in a value now loads that
/// resource for an Object property (and `load("res://…")` too), so the walk checks it
/// as a path: in every free value slot of every tool, as itself, in an array, in a
/// dictionary and inside `load("…")`, every hostile res:// path is refused; a
/// contained one goes on to the bridge precondition.
#[tokio::test]
async fn a_bare_res_string_in_a_value_is_checked_as_a_path() {
    let fixture = hostile_fixture();
    let client = support::connect_with(
        &fixture.path().join("game"),
        &[
            ("GODOT_MCP_TOOLSETS", "all"),
            ("GODOT_BIN", "/nonexistent/godot"),
        ],
    )
    .await;
    let tools = client.list_all_tools().await.unwrap();
    let mut checked = 0;
    for t in &tools {
        let schema = Value::Object((*t.input_schema).clone());
        let (mut res, mut any) = (Vec::new(), Vec::new());
        slots(&schema, Vec::new(), &mut res, &mut any);
        let mut base = sample(&schema);
        if schema["properties"].get("confirm").is_some() {
            base["confirm"] = json!(true);
        }
        for steps in &any {
            let name = param_name(steps);
            for hostile in HOSTILE.iter().filter(|h| h.starts_with("res://")) {
                for (v, p) in [
                    (json!(hostile), name.clone()),
                    (json!([1, hostile]), format!("{name}[1]")),
                    (json!({"tex": hostile}), format!("{name}.tex")),
                    (json!(format!("load(\"{hostile}\")")), name.clone()),
                ] {
                    let mut args = base.clone();
                    place(&mut args, &schema, steps, v);
                    let r = call(&client, &t.name, args.clone()).await;
                    assert_refused(&r, &format!("{}({args})", t.name), &p);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0, "no free value slot was found");
    for value in [
        json!("res://scripts/ok.gd"),
        json!("load(\"res://scripts/ok.gd\")"),
    ] {
        let e = support::call_err(
            &client,
            "set_node_property",
            json!({"node": "A", "property": "texture", "value": value}),
        )
        .await;
        assert_eq!(e["required"], "bridge_connected", "{value}: {e}");
    }
    client.cancel().await.unwrap();
}

/// Guards against (issue 26, item 11): the project was walked four ways, so
/// list_files and list_scripts disagreed about what is inside it (list_scripts
/// never followed a symlink, list_files follows one to a file inside). One walker:
/// they list the same scripts — a link to a file inside the project, never one
/// leading out, never a `.gdignore`d folder's.
#[tokio::test]
async fn list_files_and_list_scripts_walk_the_project_the_same_way() {
    let fixture = hostile_fixture();
    let game = fixture.path().join("game");
    godot_mcp_os::fs::symlink(game.join("scripts/ok.gd"), game.join("inner_link.gd")).unwrap();
    std::fs::create_dir_all(game.join("ignored")).unwrap();
    std::fs::write(game.join("ignored/.gdignore"), "").unwrap();
    std::fs::write(game.join("ignored/skip.gd"), "extends Node\n").unwrap();
    let client = connect(&game).await;
    let paths = |v: &Value, list: &str| -> Vec<String> {
        v[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_owned())
            .filter(|p| p.ends_with(".gd"))
            .collect()
    };
    let files = support::call_ok(&client, "list_files", json!({})).await;
    let scripts = support::call_ok(&client, "list_scripts", json!({})).await;
    assert_eq!(paths(&scripts, "scripts"), paths(&files, "files"));
    assert_eq!(
        paths(&scripts, "scripts"),
        ["res://inner_link.gd", "res://scripts/ok.gd"]
    );
    client.cancel().await.unwrap();
}

/// export_project's output_path: res:// targets are contained ResPaths (a symlink out
/// or into .godot/ is refused), and an absolute path is resolved before it is judged:
/// `<project>/../x` and a path through a symlink out of the project are outside and
/// need confirm. Nothing is exported by any of these calls.
#[tokio::test]
async fn export_targets_are_decided_at_the_schema_boundary() {
    let fixture = hostile_fixture();
    let game = fixture.path().join("game");
    std::fs::create_dir_all(game.join(".godot")).unwrap();
    godot_mcp_os::fs::symlink(game.join(".godot"), game.join("cache_link")).unwrap();
    let log = fixture.path().join("standin.log");
    let client = support::connect_with(
        &game,
        &[
            ("GODOT_BIN", support::standin().to_str().unwrap()),
            ("GODOT_STANDIN_LOG", log.to_str().unwrap()),
        ],
    )
    .await;
    let export = |out: Value, confirm: bool| json!({"preset": "Linux", "output_path": out, "confirm": confirm});
    for path in HOSTILE.iter().filter(|p| !p.starts_with('/')) {
        for confirm in [false, true] {
            let r = call(&client, "export_project", export(json!(path), confirm)).await;
            assert_refused(&r, &format!("export_project({path:?})"), "output_path");
        }
    }
    for path in [
        "res://.godot/game.pck",
        "res://cache_link/game.pck",
        "res://",
        "res://scripts",
    ] {
        let r = call(&client, "export_project", export(json!(path), true)).await;
        assert_refused(&r, &format!("export_project({path:?})"), "output_path");
    }
    // Absolute paths that only look inside: outside, so confirm is required.
    for path in [
        format!("{}/../elsewhere.bin", game.display()),
        format!("{}/scripts/../../elsewhere.bin", game.display()),
        format!("{}/outside_dir/game.bin", game.display()),
    ] {
        let e = support::call_err(&client, "export_project", export(json!(path), false)).await;
        assert_eq!(e["code"], "PRECONDITION_FAILED", "{path}: {e}");
        assert_eq!(e["required"], "confirm", "{path}: {e}");
    }
    // An absolute path into .godot/ is refused like its res:// spelling.
    let r = call(
        &client,
        "export_project",
        export(json!(format!("{}/.godot/x.pck", game.display())), true),
    )
    .await;
    assert_refused(&r, "export_project(<project>/.godot/x.pck)", "output_path");
    assert!(
        !log.exists(),
        "no export may have run: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(!fixture.path().join("elsewhere.bin").exists());
    assert!(!fixture.path().join("outside/game.bin").exists());
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
