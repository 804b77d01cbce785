//! A table of malformed inputs: each must be refused with the right error kind
//! at the right 1-based line and column — never a partial result.

use godot_mcp_formats::{ErrorKind, parse_project, parse_resource, parse_scene};

const HEAD: &str = "[gd_scene load_steps=2 format=3 uid=\"uid://abc\"]\n\n[ext_resource type=\"Script\" path=\"res://a.gd\" id=\"1_a\"]\n\n";

struct Case {
    name: &'static str,
    text: String,
    kind: ErrorKind,
    line: u32,
    column: u32,
}

fn case(
    name: &'static str,
    text: impl Into<String>,
    kind: ErrorKind,
    line: u32,
    column: u32,
) -> Case {
    Case {
        name,
        text: text.into(),
        kind,
        line,
        column,
    }
}

fn with_head(body: &str) -> String {
    format!("{HEAD}{body}")
}

#[test]
fn malformed_scenes_are_refused_with_kind_and_position() {
    use ErrorKind::*;
    let cases = [
        case("empty file", "", Truncated, 1, 1),
        case(
            "truncated header",
            "[gd_scene load_steps=2 format=",
            Truncated,
            1,
            1,
        ),
        case(
            "truncated inside a node header",
            with_head("[node name=\"Root\" type="),
            Truncated,
            5,
            1,
        ),
        case(
            "truncated after '='",
            with_head("[node name=\"Root\" type=\"Node\"]\nposition = "),
            Truncated,
            6,
            12,
        ),
        case(
            "unterminated string",
            with_head("[node name=\"Root\" type=\"Node\"]\ntext = \"never closed\n"),
            UnterminatedString,
            6,
            8,
        ),
        case(
            "unterminated string in header",
            "[gd_scene format=3 uid=\"uid://x]\n",
            UnterminatedString,
            1,
            24,
        ),
        case(
            "unterminated array",
            with_head("[node name=\"Root\" type=\"Node\"]\nitems = [1, 2,\n"),
            Truncated,
            6,
            9,
        ),
        case(
            "unterminated dictionary",
            with_head("[node name=\"Root\" type=\"Node\"]\nmeta = {\n\"a\": 1\n"),
            Truncated,
            6,
            8,
        ),
        case(
            "unterminated constructor",
            with_head("[node name=\"Root\" type=\"Node2D\"]\nposition = Vector2(1, 2\n"),
            Truncated,
            6,
            12,
        ),
        case(
            "single quotes",
            with_head("[node name='Root' type=\"Node\"]\n"),
            Syntax,
            5,
            12,
        ),
        case(
            "stray quote after a string",
            with_head("[node name=\"Root\"\" type=\"Node\"]\n"),
            Syntax,
            5,
            18,
        ),
        case(
            "garbage after a value",
            with_head("[node name=\"Root\" type=\"Node\"]\nvisible = true false\n"),
            Syntax,
            6,
            16,
        ),
        case(
            "missing '=' in a property",
            with_head("[node name=\"Root\" type=\"Node\"]\nvisible true\n"),
            Syntax,
            6,
            9,
        ),
        case(
            "array missing a comma",
            with_head("[node name=\"Root\" type=\"Node\"]\nitems = [1 2]\n"),
            Syntax,
            6,
            12,
        ),
        case(
            "unknown section",
            with_head("[resource]\n"),
            UnknownSection,
            5,
            1,
        ),
        case(
            "unknown section after nodes",
            with_head("[node name=\"Root\" type=\"Node\"]\n\n[bogus a=1]\n"),
            UnknownSection,
            7,
            1,
        ),
        case(
            "duplicate ext_resource id",
            with_head("[ext_resource type=\"Script\" path=\"res://b.gd\" id=\"1_a\"]\n"),
            DuplicateResourceId,
            5,
            1,
        ),
        case(
            "duplicate sub_resource id",
            with_head(
                "[sub_resource type=\"BoxMesh\" id=\"m\"]\n\n[sub_resource type=\"BoxMesh\" id=\"m\"]\n",
            ),
            DuplicateResourceId,
            7,
            1,
        ),
        case(
            "unknown ExtResource id",
            with_head("[node name=\"Root\" type=\"Node\"]\nscript = ExtResource(\"9_zz\")\n"),
            UnknownResourceReference,
            6,
            10,
        ),
        case(
            "unknown SubResource id in a header",
            with_head(
                "[node name=\"Root\" type=\"Node\"]\n\n[node name=\"A\" parent=\".\" instance=SubResource(\"x\")]\n",
            ),
            UnknownResourceReference,
            7,
            36,
        ),
        case(
            "sub_resource using a later sub_resource",
            with_head(
                "[sub_resource type=\"PlaneMesh\" id=\"a\"]\nmaterial = SubResource(\"b\")\n\n[sub_resource type=\"StandardMaterial3D\" id=\"b\"]\n",
            ),
            UnknownResourceReference,
            6,
            12,
        ),
        case(
            "missing parent",
            with_head(
                "[node name=\"Root\" type=\"Node\"]\n\n[node name=\"A\" type=\"Node\" parent=\"Nope\"]\n",
            ),
            UnknownNode,
            7,
            35,
        ),
        case(
            "child before root",
            with_head("[node name=\"A\" type=\"Node\" parent=\".\"]\n"),
            UnknownNode,
            5,
            35,
        ),
        case(
            "duplicate node",
            with_head(
                "[node name=\"Root\" type=\"Node\"]\n\n[node name=\"A\" type=\"Node\" parent=\".\"]\n\n[node name=\"A\" type=\"Node2D\" parent=\".\"]\n",
            ),
            DuplicateNode,
            9,
            1,
        ),
        case(
            "second root",
            with_head(
                "[node name=\"Root\" type=\"Node\"]\n\n[node name=\"Other\" type=\"Node\"]\n",
            ),
            Structure,
            7,
            1,
        ),
        case(
            "connection to a missing node",
            with_head(
                "[node name=\"Root\" type=\"Node\"]\n\n[connection signal=\"ready\" from=\"Ghost\" to=\".\" method=\"_on\"]\n",
            ),
            UnknownNode,
            7,
            33,
        ),
        // Godot 4's loader refuses only a format above its own (4).
        case(
            "a newer format",
            "[gd_scene load_steps=1 format=5]\n\n[node name=\"R\" type=\"Node\"]\n",
            UnsupportedFormat,
            1,
            31,
        ),
        case(
            "not a scene header",
            "[gd_resource type=\"Theme\" format=3]\n\n[resource]\n",
            UnsupportedFormat,
            1,
            1,
        ),
        case(
            "ext_resource after nodes",
            with_head(
                "[node name=\"Root\" type=\"Node\"]\n\n[ext_resource type=\"Script\" path=\"res://b.gd\" id=\"2_b\"]\n",
            ),
            Structure,
            7,
            1,
        ),
        case(
            "node without a name",
            with_head("[node type=\"Node\"]\n"),
            Structure,
            5,
            1,
        ),
        case("no nodes", HEAD, Truncated, 1, 1),
        case(
            "wrong constructor arity",
            with_head("[node name=\"Root\" type=\"Node2D\"]\nposition = Vector2(1, 2, 3)\n"),
            Syntax,
            6,
            12,
        ),
        case(
            "columns count characters, not bytes",
            with_head("[node name=\"Root\" type=\"Node\"]\ntext = \"héllo\" ?\n"),
            Syntax,
            6,
            16,
        ),
    ];
    let mut failures = Vec::new();
    for c in &cases {
        match parse_scene(&c.text) {
            Ok(_) => failures.push(format!("{}: parsed, expected {:?}", c.name, c.kind)),
            Err(e) => {
                if (e.kind(), e.line(), e.column()) != (c.kind, c.line, c.column) {
                    failures.push(format!(
                        "{}: expected {:?} at {}:{}, got {:?} at {}:{} ({e})",
                        c.name,
                        c.kind,
                        c.line,
                        c.column,
                        e.kind(),
                        e.line(),
                        e.column()
                    ));
                }
                assert!(!e.message().is_empty(), "{}", c.name);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn malformed_resources_and_projects_are_refused() {
    use ErrorKind::*;
    let tres = |body: &str| format!("[gd_resource type=\"Resource\" format=3]\n\n{body}");
    let cases = [
        (
            "node in a tres",
            tres("[node name=\"A\" type=\"Node\"]\n"),
            UnknownSection,
            3,
            1,
        ),
        ("no [resource]", tres(""), Truncated, 1, 1),
        (
            "section after [resource]",
            tres("[resource]\na = 1\n\n[sub_resource type=\"X\" id=\"x\"]\n"),
            Structure,
            6,
            1,
        ),
        (
            "unknown ExtResource in [resource]",
            tres("[resource]\nscript = ExtResource(\"1\")\n"),
            UnknownResourceReference,
            4,
            10,
        ),
        (
            "bad escape",
            tres("[resource]\nname = \"\\u12G4\"\n"),
            Syntax,
            4,
            9,
        ),
    ];
    for (name, text, kind, line, column) in cases {
        let e = parse_resource(&text).expect_err(name);
        assert_eq!(
            (e.kind(), e.line(), e.column()),
            (kind, line, column),
            "{name}: {e}"
        );
    }

    let project_cases = [
        (
            "no config_version",
            "[application]\nconfig/name=\"X\"\n",
            UnsupportedFormat,
            1,
            1,
        ),
        (
            "Godot 3 config",
            "config_version=4\n",
            UnsupportedFormat,
            1,
            16,
        ),
        (
            "section never closed",
            "config_version=5\n\n[application\nconfig/name=\"X\"\n",
            Syntax,
            3,
            13,
        ),
        (
            "name is not a string",
            "config_version=5\n[application]\nconfig/name=3\n",
            Structure,
            3,
            13,
        ),
        (
            "truncated input dictionary",
            "config_version=5\n[input]\njump={\n\"deadzone\": 0.5,\n\"events\": [Object(InputEventKey,\"keycode\":",
            Truncated,
            5,
            12,
        ),
    ];
    for (name, text, kind, line, column) in project_cases {
        let e = parse_project(text).expect_err(name);
        assert_eq!(
            (e.kind(), e.line(), e.column()),
            (kind, line, column),
            "{name}: {e}"
        );
    }
}

#[test]
fn nodes_under_an_instanced_scene_need_not_be_declared() {
    // Editable children: a node added under a node that comes from player.tscn.
    let text = with_head(
        "[ext_resource type=\"PackedScene\" path=\"res://p.tscn\" id=\"2_p\"]\n\n\
         [node name=\"Root\" type=\"Node\"]\n\n\
         [node name=\"Player\" parent=\".\" instance=ExtResource(\"2_p\")]\n\n\
         [node name=\"Hat\" type=\"Sprite2D\" parent=\"Player/Sprite2D\"]\n\n\
         [connection signal=\"hit\" from=\"Player/Sprite2D/Hat\" to=\".\" method=\"_on\"]\n\n\
         [editable path=\"Player\"]\n",
    );
    let scene = parse_scene(&text).unwrap();
    assert_eq!(scene.nodes[2].path, "Player/Sprite2D/Hat");
    // …but the same under a plain node is refused.
    let bad = text.replace("instance=ExtResource(\"2_p\")", "type=\"Node2D\"");
    assert_eq!(
        parse_scene(&bad).unwrap_err().kind(),
        ErrorKind::UnknownNode
    );
}

/// The text of each error the list, colon, header and string scanners share: what
/// an agent reads in a PARSE_ERROR, so it stays word for word.
#[test]
fn shared_scanners_keep_their_messages() {
    let msg = |src: &str| godot_mcp_formats::parse_value(src).unwrap_err().to_string();
    for (src, want) in [
        (
            "[1 2]",
            "1:4: syntax error: expected ',' or ']' in array, found '2'",
        ),
        (
            "{\"a\": 1 \"b\"}",
            "1:9: syntax error: expected ',' or '}' in dictionary, found '\"'",
        ),
        (
            "{\"a\" 1}",
            "1:6: syntax error: expected ':' after a dictionary key, found '1'",
        ),
        (
            "Object(Node,\"a\" 1)",
            "1:17: syntax error: expected ':' after \"a\" in Object(…), found '1'",
        ),
        (
            "[1,",
            "1:1: truncated input: '[' opened here is never closed",
        ),
        (
            "{\"a\":",
            "1:1: truncated input: '{' opened here is never closed",
        ),
        (
            "Object(Node,\"a\":",
            "1:1: truncated input: 'Object(' opened here is never closed",
        ),
        (
            "\"abc",
            "1:1: unterminated string: string is never closed with '\"'",
        ),
        (
            "\"a\\",
            "1:1: unterminated string: string is never closed with '\"'",
        ),
    ] {
        assert_eq!(msg(src), want, "{src}");
    }
    let header = parse_resource("[gd_resource type=\"Resource\" format=3").unwrap_err();
    assert_eq!(
        header.to_string(),
        "1:1: truncated input: section header is never closed with ']'"
    );
}
