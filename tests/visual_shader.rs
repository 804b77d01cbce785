//! Issue #12, VisualShader graphs, end to end through the real server and a real MCP
//! client. Without Godot: the tools build the graph Godot 4.4.1 saved for the same
//! calls (tests/fixtures/visual_shader), through the journal, with dry runs that write
//! nothing, compare-and-swap, and bad input refused with nothing changed. With Godot:
//! the engine loads what the tools wrote, reports the same nodes and connections, and
//! the shader it generates compiles.

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{call_err, call_ok, connect, normalize_sub_ids, sha256_hex};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/visual_shader"
);

/// `args` with `confirm` and the shader's path.
fn with(path: &str, args: Value) -> Value {
    let mut a = json!({"path": path, "confirm": true});
    a.as_object_mut()
        .unwrap()
        .extend(args.as_object().unwrap().clone());
    a
}

/// The calls make.gd made through Godot's VisualShader API, made through the tools.
async fn build_fixture_graph(client: &support::Client, path: &str) {
    call_ok(client, "create_visual_shader", with(path, json!({}))).await;
    let added = call_ok(
        client,
        "add_visual_shader_node",
        with(
            path,
            json!({"class": "VisualShaderNodeColorConstant", "position": [100, 150],
                   "properties": {"constant": [1, 0, 0, 1]}}),
        ),
    )
    .await;
    assert_eq!(
        added["change"]["id"], 2,
        "the editor's first id is 2: {added}"
    );
    call_ok(
        client,
        "add_visual_shader_node",
        with(
            path,
            json!({"class": "VisualShaderNodeFloatConstant", "position": [-100, 50.5],
                   "properties": {"constant": 0.5}}),
        ),
    )
    .await;
    for (from, port) in [(2, 0), (3, 2)] {
        call_ok(
            client,
            "connect_visual_shader_nodes",
            with(
                path,
                json!({"from_node": from, "from_port": 0, "to_node": 0, "to_port": port}),
            ),
        )
        .await;
    }
    call_ok(
        client,
        "add_visual_shader_node",
        with(
            path,
            json!({"function": "vertex", "class": "VisualShaderNodeVectorOp",
                   "position": [10, 20], "id": 5}),
        ),
    )
    .await;
}

#[tokio::test]
async fn visual_shader_tools_write_the_graph_godot_saves_through_the_journal() {
    let project = support::tiny_project("vshader");
    let file = project.path().join("fx/red.tres");
    let path = "res://fx/red.tres";
    let client = connect(project.path()).await;

    // A dry run plans the new file and writes nothing; without confirm nothing is written.
    let dry = call_ok(
        &client,
        "create_visual_shader",
        json!({"path": path, "mode": "sky", "dry_run": true}),
    )
    .await;
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(dry["action"], "create", "{dry}");
    assert_eq!(dry["change"]["functions"], json!(["sky"]), "{dry}");
    assert!(!file.exists(), "a dry run wrote the shader");
    let e = call_err(&client, "create_visual_shader", json!({"path": path})).await;
    assert!(e["message"].as_str().unwrap().contains("confirm"), "{e}");
    assert!(!file.exists());

    build_fixture_graph(&client, path).await;
    let written = std::fs::read_to_string(&file).unwrap();
    let godot = std::fs::read_to_string(Path::new(FIXTURES).join("godot_saved.tres")).unwrap();
    assert_eq!(
        normalize_sub_ids(&written),
        normalize_sub_ids(&godot),
        "the tools' file is not the file Godot saved for the same graph"
    );

    // The read tool reports the graph from disk.
    let graph = call_ok(&client, "get_visual_shader_graph", json!({"path": path})).await;
    assert_eq!(graph["mode"], "spatial", "{graph}");
    assert_eq!(graph["sha256"], sha256_hex(written.as_bytes()), "{graph}");
    let nodes: Vec<(String, i64, String)> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["function"].as_str().unwrap().to_string(),
                n["id"].as_i64().unwrap(),
                n["class"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, i64, String)> = [
        ("vertex", 0, "VisualShaderNodeOutput"),
        ("vertex", 5, "VisualShaderNodeVectorOp"),
        ("fragment", 0, "VisualShaderNodeOutput"),
        ("fragment", 2, "VisualShaderNodeColorConstant"),
        ("fragment", 3, "VisualShaderNodeFloatConstant"),
        ("light", 0, "VisualShaderNodeOutput"),
    ]
    .iter()
    .map(|(f, i, c)| (f.to_string(), *i, c.to_string()))
    .collect();
    assert_eq!(nodes, want, "{graph}");
    assert_eq!(
        graph["nodes"][3]["properties"]["constant"],
        "Color(1, 0, 0, 1)"
    );
    assert_eq!(graph["nodes"][4]["position"], json!([-100.0, 50.5]));
    assert_eq!(
        graph["connections"],
        json!([
            {"function": "fragment", "from_node": 2, "from_port": 0, "to_node": 0, "to_port": 0},
            {"function": "fragment", "from_node": 3, "from_port": 0, "to_node": 0, "to_port": 2},
        ])
    );

    // Every write is a committed journal transaction on the shader file.
    let txns = call_ok(&client, "list_transactions", json!({})).await;
    let rows: Vec<&Value> = txns["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "fx/red.tres")
        .collect();
    assert_eq!(rows.len(), 6, "{txns}");
    assert!(rows.iter().all(|r| r["status"] == "committed"), "{txns}");

    // A dry run of an edit writes nothing and agrees with the real run.
    let before = std::fs::read(&file).unwrap();
    let set = json!({"id": 3, "property": "constant", "value": 0.25});
    let mut dry_args = with(path, set.clone());
    dry_args["dry_run"] = json!(true);
    let dry = call_ok(&client, "set_visual_shader_node_property", dry_args).await;
    assert_eq!(std::fs::read(&file).unwrap(), before, "a dry run wrote");
    // CAS: a stale expected_sha256 is refused and the file is untouched.
    let mut stale = with(path, set.clone());
    stale["expected_sha256"] = json!("0".repeat(64));
    let e = call_err(&client, "set_visual_shader_node_property", stale).await;
    assert_eq!(e["code"], "STALE", "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let mut right = with(path, set);
    right["expected_sha256"] = json!(sha256_hex(&before));
    let real = call_ok(&client, "set_visual_shader_node_property", right).await;
    assert_eq!(real["change"]["previous"], "0.5", "{real}");
    assert_eq!(real["change"]["value"], "0.25", "{real}");
    for k in ["change", "sha256_before", "sha256_after", "mode"] {
        assert_eq!(dry[k], real[k], "{k}: dry run {dry} vs real run {real}");
    }
    support::assert_preview_verdict(&dry, &real, "set_visual_shader_node_property");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("constant = 0.25\n")
    );

    // Bad input is refused, naming the parameter, and changes nothing.
    let before = std::fs::read(&file).unwrap();
    for (tool, args, param) in [
        (
            "add_visual_shader_node",
            json!({"class": "Node2D"}),
            "class",
        ),
        (
            "add_visual_shader_node",
            json!({"class": "VisualShaderNodeFloatConstant", "properties": {"nope": 1}}),
            "properties.nope",
        ),
        (
            "add_visual_shader_node",
            json!({"class": "VisualShaderNodeColorConstant", "properties": {"constant": "red"}}),
            "properties.constant",
        ),
        (
            "add_visual_shader_node",
            json!({"class": "VisualShaderNodeFloatConstant", "function": "sky"}),
            "function",
        ),
        (
            "add_visual_shader_node",
            json!({"class": "VisualShaderNodeFloatConstant", "id": 3}),
            "id",
        ),
        (
            "connect_visual_shader_nodes",
            json!({"from_node": 3, "from_port": 0, "to_node": 0, "to_port": 0}),
            "to_port",
        ),
        (
            "connect_visual_shader_nodes",
            json!({"from_node": 9, "from_port": 0, "to_node": 0, "to_port": 1}),
            "from_node",
        ),
        (
            "connect_visual_shader_nodes",
            json!({"from_node": 3, "from_port": 0, "to_node": 0, "to_port": 24}),
            "to_port",
        ),
        (
            "connect_visual_shader_nodes",
            json!({"from_node": 3, "from_port": 0, "to_node": 3, "to_port": 0}),
            "to_node",
        ),
        (
            "disconnect_visual_shader_nodes",
            json!({"from_node": 3, "from_port": 0, "to_node": 0, "to_port": 0}),
            "from_node",
        ),
        ("remove_visual_shader_node", json!({"id": 0}), "id"),
        ("remove_visual_shader_node", json!({"id": 7}), "id"),
        (
            "set_visual_shader_node_property",
            json!({"id": 0, "property": "constant", "value": 1}),
            "property",
        ),
        (
            "set_visual_shader_node_property",
            json!({"id": 2, "property": "constant", "value": 1}),
            "value",
        ),
    ] {
        let e = call_err(&client, tool, with(path, args.clone())).await;
        assert_eq!(e["param"], param, "{tool}({args}): {e}");
    }
    let e = call_err(
        &client,
        "get_visual_shader_graph",
        json!({"path": "res://project.godot"}),
    )
    .await;
    assert_eq!(e["param"], "path", "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // A loop is refused: 5 -> 6 then 6 -> 5 in vertex.
    call_ok(
        &client,
        "add_visual_shader_node",
        with(
            path,
            json!({"function": "vertex", "class": "VisualShaderNodeVectorOp"}),
        ),
    )
    .await;
    call_ok(
        &client,
        "connect_visual_shader_nodes",
        with(
            path,
            json!({"function": "vertex", "from_node": 5, "from_port": 0, "to_node": 6, "to_port": 0}),
        ),
    )
    .await;
    let e = call_err(
        &client,
        "connect_visual_shader_nodes",
        with(
            path,
            json!({"function": "vertex", "from_node": 6, "from_port": 0, "to_node": 5, "to_port": 1}),
        ),
    )
    .await;
    assert_eq!(e["param"], "to_node", "{e}");

    // Disconnect, then removing a node takes its connections and its resource with it.
    let d = call_ok(
        &client,
        "disconnect_visual_shader_nodes",
        with(
            path,
            json!({"function": "vertex", "from_node": 5, "from_port": 0, "to_node": 6, "to_port": 0}),
        ),
    )
    .await;
    assert_eq!(d["change"]["to_node"], 6, "{d}");
    let r = call_ok(
        &client,
        "remove_visual_shader_node",
        with(path, json!({"id": 2})),
    )
    .await;
    assert_eq!(r["change"]["class"], "VisualShaderNodeColorConstant", "{r}");
    assert_eq!(
        r["change"]["connections_removed"],
        json!([{"function": "fragment", "from_node": 2, "from_port": 0, "to_node": 0, "to_port": 0}]),
        "{r}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("ColorConstant")
            && text.contains("nodes/fragment/connections = PackedInt32Array(3, 0, 0, 2)\n"),
        "{text}"
    );
    // The output node moves; its position is stored only once moved.
    call_ok(
        &client,
        "set_visual_shader_node_property",
        with(
            path,
            json!({"id": 0, "property": "position", "value": [700, 100]}),
        ),
    )
    .await;
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("nodes/fragment/0/position = Vector2(700, 100)\n")
    );
    client.cancel().await.unwrap();
}

/// What the engine makes of the shaders: per function, its node ids, each node's class
/// and position, its connections; the code it generates; and every VisualShaderNode
/// class it can add, with the properties each stores.
const LOAD_GRAPH_GD: &str = r#"extends SceneTree

const SKIP = ["resource_local_to_scene", "resource_name", "resource_path", "resource_scene_unique_id", "script", "output_port_for_preview", "default_input_values", "expanded_output_ports", "linked_parent_graph_frame"]
const FUNCS = ["vertex", "fragment", "light", "start", "process", "collide", "start_custom", "process_custom", "sky", "fog"]

func _graph(path):
	var vs = ResourceLoader.load(path, "", ResourceLoader.CACHE_MODE_IGNORE)
	var nodes = []
	var conns = []
	for t in FUNCS.size():
		for id in vs.get_node_list(t):
			var n = vs.get_node(t, id)
			var p = vs.get_node_position(t, id)
			nodes.append({"function": FUNCS[t], "id": id, "class": n.get_class(), "position": [p.x, p.y]})
		for c in vs.get_node_connections(t):
			c["function"] = FUNCS[t]
			conns.append(c)
	return {"mode": vs.get_mode(), "nodes": nodes, "connections": conns, "code": vs.get_code()}

func _init():
	print("GRAPH " + JSON.stringify(_graph("res://fx/lit.tres")))
	print("PARTICLES " + JSON.stringify(_graph("res://fx/p.tres")))
	var names = Array(ClassDB.get_inheriters_from_class("VisualShaderNode"))
	names.sort()
	var out = []
	for c in names:
		if not ClassDB.can_instantiate(c) or c == "VisualShaderNodeOutput" or c == "VisualShaderNodeCustom":
			continue
		var inst = ClassDB.instantiate(c)
		var props = []
		for p in inst.get_property_list():
			if p.usage & PROPERTY_USAGE_STORAGE and not (p.name in SKIP):
				props.append([p.name, type_string(p.type)])
		out.append([c, props])
	print("CLASSES " + JSON.stringify(out))
	# Per mode and function, how many input ports of the output node accept a
	# connection from a float, a vec3 or a transform.
	var ports = []
	for m in 5:
		for t in FUNCS.size():
			var n = 0
			for p in 48:
				var vs = VisualShader.new()
				vs.set_mode(m)
				vs.add_node(t, VisualShaderNodeFloatConstant.new(), Vector2(), 2)
				vs.add_node(t, VisualShaderNodeTransformConstant.new(), Vector2(), 3)
				vs.add_node(t, VisualShaderNodeVec3Constant.new(), Vector2(), 4)
				if vs.can_connect_nodes(t, 2, 0, 0, p) or vs.can_connect_nodes(t, 3, 0, 0, p) or vs.can_connect_nodes(t, 4, 0, 0, p):
					n = p + 1
			ports.append([m, FUNCS[t], n])
	print("PORTS " + JSON.stringify(ports))
	quit()
"#;

#[tokio::test]
async fn real_godot_loads_the_graph_the_tools_wrote_and_compiles_it() {
    let Some(godot) = support::godot_bin("the engine loads the written VisualShader") else {
        return;
    };
    let project = support::tiny_project("vshader_real");
    let client = connect(project.path()).await;
    let lit = "res://fx/lit.tres";
    build_fixture_graph(&client, lit).await;
    // A parameter (a uniform) into metallic's neighbour roughness, a vertex op with
    // its operator set, and a moved output node.
    call_ok(
        &client,
        "add_visual_shader_node",
        with(
            lit,
            json!({"class": "VisualShaderNodeFloatParameter", "position": [-300, 300],
                   "properties": {"parameter_name": "amount", "default_value_enabled": true,
                                  "default_value": 0.75}}),
        ),
    )
    .await;
    call_ok(
        &client,
        "connect_visual_shader_nodes",
        with(
            lit,
            json!({"from_node": 4, "from_port": 0, "to_node": 0, "to_port": 3}),
        ),
    )
    .await;
    call_ok(
        &client,
        "set_visual_shader_node_property",
        with(
            lit,
            json!({"function": "vertex", "id": 5, "property": "operator", "value": 2}),
        ),
    )
    .await;
    call_ok(
        &client,
        "set_visual_shader_node_property",
        with(
            lit,
            json!({"id": 0, "property": "position", "value": [640, 80.5]}),
        ),
    )
    .await;
    // A particles shader: its functions are not spatial's.
    let p = "res://fx/p.tres";
    call_ok(
        &client,
        "create_visual_shader",
        with(p, json!({"mode": "particles"})),
    )
    .await;
    call_ok(
        &client,
        "add_visual_shader_node",
        with(
            p,
            json!({"function": "process", "class": "VisualShaderNodeVec3Constant",
                   "properties": {"constant": [0, 1, 0]}}),
        ),
    )
    .await;
    let ours = call_ok(&client, "get_visual_shader_graph", json!({"path": lit})).await;
    let ours_p = call_ok(&client, "get_visual_shader_graph", json!({"path": p})).await;

    std::fs::write(project.path().join("load_graph.gd"), LOAD_GRAPH_GD).unwrap();
    let log = support::run_godot(&godot, project.path(), &["--script", "res://load_graph.gd"]);
    let line = |prefix: &str| -> Value {
        let l = log
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line:\n{log}"));
        serde_json::from_str(l).unwrap()
    };
    for (engine, ours) in [(line("GRAPH "), &ours), (line("PARTICLES "), &ours_p)] {
        // The engine lists every function's output node; the tool lists the mode's
        // functions (and any other holding nodes).
        let functions: Vec<&str> = ours["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let engine_nodes: Vec<&Value> = engine["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| functions.contains(&n["function"].as_str().unwrap()))
            .collect();
        let our_nodes: Vec<Value> = ours["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                json!({"function": n["function"], "id": n["id"], "class": n["class"],
                       "position": n["position"]})
            })
            .collect();
        assert_eq!(
            serde_json::to_value(&engine_nodes).unwrap(),
            json!(our_nodes),
            "engine {engine}\nours {ours}"
        );
        assert_eq!(
            engine["connections"], ours["connections"],
            "{engine}\n{ours}"
        );
        // No node of another function is lost: outside the listed functions the
        // engine has output nodes only.
        assert!(
            engine["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| functions.contains(&n["function"].as_str().unwrap()) || n["id"] == 0),
            "{engine}"
        );
    }
    let code = line("GRAPH ")["code"].as_str().unwrap().to_string();
    assert!(code.contains("ALBEDO = vec3(n_out2p0.xyz);"), "{code}");
    assert!(code.contains("uniform float amount = 0.75"), "{code}");
    assert!(code.contains("ROUGHNESS = n_out4p0;"), "{code}");
    assert_eq!(line("PARTICLES ")["mode"], 2);

    // The table the tools check classes and properties against is the engine's.
    let classes = line("CLASSES ");
    let table: Vec<Value> = godot_mcp_formats::visual_shader::NODE_CLASSES
        .iter()
        .map(|(c, props)| {
            json!([
                c,
                props.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>()
            ])
        })
        .collect();
    // On 4.4 (the engine the table was read from) exactly; on a later engine every
    // class and property the table names still exists with its type (4.6 adds
    // properties, e.g. a parameter's instance_index, which a 4.4 project cannot hold).
    let classes = if support::engine_version(&godot).starts_with("4.4") {
        classes
    } else {
        let engine: std::collections::BTreeMap<String, Vec<Value>> = classes
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c[0].as_str().unwrap().to_owned(),
                    c[1].as_array().unwrap().clone(),
                )
            })
            .collect();
        json!(
            table
                .iter()
                .map(|c| {
                    let held = engine.get(c[0].as_str().unwrap());
                    let props: Vec<Value> = c[1]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|p| held.is_some_and(|h| h.contains(p)))
                        .cloned()
                        .collect();
                    json!([c[0], props])
                })
                .collect::<Vec<_>>()
        )
    };
    assert_eq!(
        classes,
        json!(table),
        "NODE_CLASSES differs from the engine's ClassDB"
    );

    // The engine's generated shader compiles with its own compiler.
    std::fs::write(project.path().join("fx/lit_code.gdshader"), &code).unwrap();
    let checked = call_ok(
        &client,
        "shader_validate",
        json!({"path": "res://fx/lit_code.gdshader"}),
    )
    .await;
    assert_eq!(checked["ok"], true, "{checked}");
    let uniforms: Vec<&str> = checked["uniforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(uniforms, ["amount"], "{checked}");
    client.cancel().await.unwrap();
}
