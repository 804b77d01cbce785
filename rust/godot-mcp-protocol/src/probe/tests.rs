//! Every probe message round-trips serde, and its JSON equals the wire form the untyped
//! code wrote before these types existed: each `WIRE` string below is the text the old
//! `json!` literal (server, add-on probe or stand-in, named beside it) serialized to,
//! so a probe built from an older add-on still talks to this server and back.

use super::*;
use serde_json::json;

/// (what, the old wire text, the typed value).
fn requests() -> Vec<(&'static str, &'static str, ProbeFrame)> {
    let f = |id, request| ProbeFrame { id, request };
    vec![
        // runtime.rs ensure_not_breaked: json!({"cmd": "status"}) + id
        (
            "status",
            r#"{"cmd":"status","id":1}"#,
            f(1, ProbeRequest::Status {}),
        ),
        // runtime.rs simulate_input: json!({"cmd": "input", "event": event, "hold_ms": hold})
        (
            "input key",
            r#"{"cmd":"input","event":{"key":"Space","type":"key"},"hold_ms":0,"id":2}"#,
            f(
                2,
                ProbeRequest::Input {
                    event: ProbeEvent::Key {
                        key: "Space".into(),
                    },
                    hold_ms: 0,
                    at_frame: None,
                    hold_frames: None,
                },
            ),
        ),
        // InputEvent::wire of a MouseButton without a position: x and y are null.
        (
            "input mouse",
            r#"{"cmd":"input","event":{"button":1,"type":"mouse_button","x":null,"y":null},"hold_ms":250,"id":3}"#,
            f(
                3,
                ProbeRequest::Input {
                    event: ProbeEvent::MouseButton {
                        button: 1,
                        x: None,
                        y: None,
                    },
                    hold_ms: 250,
                    at_frame: None,
                    hold_frames: None,
                },
            ),
        ),
        (
            "input mouse at",
            r#"{"cmd":"input","event":{"button":2,"type":"mouse_button","x":10.5,"y":20.0},"hold_ms":0,"id":4}"#,
            f(
                4,
                ProbeRequest::Input {
                    event: ProbeEvent::MouseButton {
                        button: 2,
                        x: Some(10.5),
                        y: Some(20.0),
                    },
                    hold_ms: 0,
                    at_frame: None,
                    hold_frames: None,
                },
            ),
        ),
        (
            "input action",
            r#"{"cmd":"input","event":{"action":"jump","type":"action"},"hold_ms":0,"id":5}"#,
            f(
                5,
                ProbeRequest::Input {
                    event: ProbeEvent::Action {
                        action: "jump".into(),
                    },
                    hold_ms: 0,
                    at_frame: None,
                    hold_frames: None,
                },
            ),
        ),
        // stop_scene / release_all: json!({"cmd": "release_all"})
        (
            "release_all",
            r#"{"cmd":"release_all","id":6}"#,
            f(6, ProbeRequest::ReleaseAll {}),
        ),
        // game_screenshot: json!({"cmd": "screenshot", "frames", "max_bytes"}) (+ max_edge)
        (
            "screenshot",
            r#"{"cmd":"screenshot","frames":3,"id":7,"max_bytes":4194304}"#,
            f(
                7,
                ProbeRequest::Screenshot {
                    frames: 3,
                    max_bytes: Some(4_194_304),
                    max_edge: None,
                },
            ),
        ),
        (
            "screenshot max_edge",
            r#"{"cmd":"screenshot","frames":0,"id":8,"max_bytes":100,"max_edge":64}"#,
            f(
                8,
                ProbeRequest::Screenshot {
                    frames: 0,
                    max_bytes: Some(100),
                    max_edge: Some(64),
                },
            ),
        ),
        (
            "get_property",
            r#"{"cmd":"get_property","id":9,"node":"/root/Main/Player","property":"position"}"#,
            f(
                9,
                ProbeRequest::GetProperty {
                    node: "/root/Main/Player".into(),
                    property: "position".into(),
                },
            ),
        ),
        (
            "evaluate",
            r#"{"cmd":"evaluate","expression":"1 + 2","id":10}"#,
            f(
                10,
                ProbeRequest::Evaluate {
                    expression: "1 + 2".into(),
                },
            ),
        ),
        (
            "quit",
            r#"{"cmd":"quit","id":11}"#,
            f(11, ProbeRequest::Quit {}),
        ),
        (
            "monitors",
            r#"{"cmd":"monitors","id":12}"#,
            f(12, ProbeRequest::Monitors {}),
        ),
        // get_game_scene_tree: json!({"cmd": "tree", "root", "offset", "limit"}) (+ max_depth)
        (
            "tree",
            r#"{"cmd":"tree","id":13,"limit":100,"offset":0,"root":"/root"}"#,
            f(
                13,
                ProbeRequest::Tree {
                    root: "/root".into(),
                    max_depth: None,
                    offset: 0,
                    limit: 100,
                },
            ),
        ),
        (
            "tree max_depth",
            r#"{"cmd":"tree","id":14,"limit":5,"max_depth":2,"offset":10,"root":"/root/Main"}"#,
            f(
                14,
                ProbeRequest::Tree {
                    root: "/root/Main".into(),
                    max_depth: Some(2),
                    offset: 10,
                    limit: 5,
                },
            ),
        ),
        // find_ui_elements: json!({"cmd": "find_ui", "type", "limit"}) (+ text)
        (
            "find_ui",
            r#"{"cmd":"find_ui","id":15,"limit":50,"type":"Control"}"#,
            f(
                15,
                ProbeRequest::FindUi {
                    text: None,
                    class: "Control".into(),
                    limit: 50,
                },
            ),
        ),
        (
            "find_ui text",
            r#"{"cmd":"find_ui","id":16,"limit":3,"text":"start","type":"Button"}"#,
            f(
                16,
                ProbeRequest::FindUi {
                    text: Some("start".into()),
                    class: "Button".into(),
                    limit: 3,
                },
            ),
        ),
        (
            "sample",
            r#"{"cmd":"sample","frames":30,"id":17,"node":"/root/Main","property":"ticks"}"#,
            f(
                17,
                ProbeRequest::Sample {
                    node: "/root/Main".into(),
                    property: "ticks".into(),
                    frames: 30,
                },
            ),
        ),
        (
            "record_start",
            r#"{"cmd":"record_start","id":18}"#,
            f(18, ProbeRequest::RecordStart {}),
        ),
        (
            "record_stop",
            r#"{"cmd":"record_stop","id":19}"#,
            f(19, ProbeRequest::RecordStop {}),
        ),
        // The clock (new with this wire: no older form).
        (
            "input on a frame",
            r#"{"cmd":"input","event":{"action":"jump","type":"action"},"hold_ms":0,"at_frame":12,"hold_frames":3,"id":20}"#,
            f(
                20,
                ProbeRequest::Input {
                    event: ProbeEvent::Action {
                        action: "jump".into(),
                    },
                    hold_ms: 0,
                    at_frame: Some(12),
                    hold_frames: Some(3),
                },
            ),
        ),
        (
            "clock_pause",
            r#"{"cmd":"clock_pause","id":21}"#,
            f(21, ProbeRequest::ClockPause {}),
        ),
        (
            "clock_resume",
            r#"{"cmd":"clock_resume","id":22}"#,
            f(22, ProbeRequest::ClockResume {}),
        ),
        (
            "clock_step",
            r#"{"cmd":"clock_step","frames":5,"unit":"physics","id":23}"#,
            f(
                23,
                ProbeRequest::ClockStep(ClockStep {
                    frames: 5,
                    unit: ClockUnit::Physics,
                    until: None,
                    watch: vec![],
                    every: None,
                    at: vec![],
                }),
            ),
        ),
        (
            "clock_step until, watching",
            r#"{"cmd":"clock_step","frames":600,"unit":"process","until":"n >= 3","watch":[{"node":"/root/Main","property":"n"},{"expression":"n * 2"}],"every":2,"at":[1],"id":24}"#,
            f(
                24,
                ProbeRequest::ClockStep(ClockStep {
                    frames: 600,
                    unit: ClockUnit::Process,
                    until: Some("n >= 3".into()),
                    watch: vec![
                        Watch::Property {
                            node: "/root/Main".into(),
                            property: "n".into(),
                        },
                        Watch::Expression {
                            expression: "n * 2".into(),
                        },
                    ],
                    every: Some(2),
                    at: vec![1],
                }),
            ),
        ),
    ]
}

#[test]
fn every_request_round_trips_in_its_old_wire_form() {
    let all = requests();
    // One case at least for every command the probe knows.
    for cmd in PROBE_COMMANDS {
        assert!(
            all.iter().any(|(_, _, f)| f.request.cmd() == cmd),
            "no case for {cmd}"
        );
    }
    for (what, wire, typed) in all {
        let old: Json = serde_json::from_str(wire).unwrap();
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            old,
            "{what}: typed → JSON"
        );
        let back: ProbeFrame = serde_json::from_str(wire).unwrap();
        assert_eq!(back, typed, "{what}: JSON → typed");
        assert_eq!(
            decode_request(wire.as_bytes()).unwrap(),
            typed,
            "{what}: decode_request"
        );
        let text = serde_json::to_string(&typed).unwrap();
        assert_eq!(
            serde_json::from_str::<ProbeFrame>(&text).unwrap(),
            typed,
            "{what}: round trip"
        );
    }
}

/// Asserts `typed` writes `wire` and `wire` decodes back to `typed`.
fn reply_case<T>(what: &str, wire: &str, typed: ProbeReply<T>)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let old: Json = serde_json::from_str(wire).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        old,
        "{what}: typed → JSON"
    );
    let back: ProbeReply<T> = serde_json::from_str(wire).unwrap();
    assert_eq!(back, typed, "{what}: JSON → typed");
    let raw: RawReply = serde_json::from_str(wire).unwrap();
    assert_eq!(
        raw.decode::<T>().unwrap(),
        typed,
        "{what}: RawReply::decode"
    );
}

#[test]
fn every_reply_round_trips_in_its_old_wire_form() {
    // probe.rs "status": json!({"id", "ok": true, "breaked": false, "held": n})
    reply_case(
        "status",
        r#"{"breaked":false,"held":0,"id":1,"ok":true}"#,
        ProbeReply::ok(
            1,
            StatusReply {
                breaked: false,
                held: 0,
            },
        ),
    );
    reply_case(
        "input",
        r#"{"held":1,"id":2,"ok":true}"#,
        ProbeReply::ok(2, HeldReply { held: 1 }),
    );
    reply_case(
        "release_all",
        r#"{"id":3,"ok":true,"released":2}"#,
        ProbeReply::ok(3, ReleasedReply { released: 2 }),
    );
    // probe.rs capture(): capture::encode's {png_base64, width, height, bytes} + id, ok
    reply_case(
        "screenshot",
        r#"{"bytes":68,"height":1,"id":4,"ok":true,"png_base64":"iVBORw0K","width":1}"#,
        ProbeReply::ok(
            4,
            ScreenshotReply {
                png_base64: "iVBORw0K".into(),
                width: Some(1),
                height: Some(1),
                bytes: Some(68),
            },
        ),
    );
    // the stand-in's screenshot(): only png_base64
    reply_case(
        "screenshot (stand-in)",
        r#"{"id":5,"ok":true,"png_base64":"iVBORw0K"}"#,
        ProbeReply::ok(
            5,
            ScreenshotReply {
                png_base64: "iVBORw0K".into(),
                width: None,
                height: None,
                bytes: None,
            },
        ),
    );
    // probe.rs get_property: from_variant(&v).to_json()
    reply_case(
        "get_property",
        r#"{"id":6,"ok":true,"value":{"$type":"Vector2","x":1.5,"y":-2.0}}"#,
        ProbeReply::ok(
            6,
            ValueReply {
                value: Value::Vector2([1.5, -2.0]),
            },
        ),
    );
    // the stand-in's get_property of `ticks` (an integer) and of anything else (a string)
    reply_case(
        "ticks",
        r#"{"id":7,"ok":true,"value":1234}"#,
        ProbeReply::ok(
            7,
            ValueReply {
                value: Value::Int(1234),
            },
        ),
    );
    reply_case(
        "evaluate",
        r#"{"id":8,"ok":true,"value":"standin:/root/Main:name"}"#,
        ProbeReply::ok(
            8,
            ValueReply {
                value: Value::String("standin:/root/Main:name".into()),
            },
        ),
    );
    reply_case("quit", r#"{"id":9,"ok":true}"#, ProbeReply::ok(9, Empty {}));
    reply_case(
        "monitors",
        r#"{"id":10,"monitors":{"fps":60.0,"objects":900.0},"ok":true}"#,
        ProbeReply::ok(
            10,
            MonitorsReply {
                monitors: BTreeMap::from([
                    ("fps".into(), Some(60.0)),
                    ("objects".into(), Some(900.0)),
                ]),
            },
        ),
    );
    reply_case(
        "tree",
        r#"{"capped":false,"id":11,"nodes":[{"children":1,"class":"Window","depth":0,"name":"root","path":"/root"}],"ok":true,"total":6}"#,
        ProbeReply::ok(
            11,
            TreeReply {
                nodes: vec![TreeNode {
                    path: "/root".into(),
                    name: "root".into(),
                    class: "Window".into(),
                    depth: 0,
                    children: 1,
                }],
                total: 6,
                capped: false,
            },
        ),
    );
    reply_case(
        "find_ui",
        r#"{"capped":false,"elements":[{"class":"Button","path":"/root/Main/HUD/StartButton","rect":{"h":32.0,"w":120.0,"x":10.0,"y":210.0},"text":"Start","visible":true}],"id":12,"matched":1,"ok":true}"#,
        ProbeReply::ok(
            12,
            FindUiReply {
                elements: vec![UiElement {
                    path: "/root/Main/HUD/StartButton".into(),
                    class: "Button".into(),
                    text: "Start".into(),
                    rect: UiRect {
                        x: 10.0,
                        y: 210.0,
                        w: 120.0,
                        h: 32.0,
                    },
                    visible: true,
                }],
                matched: 1,
                capped: false,
            },
        ),
    );
    reply_case(
        "sample",
        r#"{"id":13,"ok":true,"values":["16","33"]}"#,
        ProbeReply::ok(
            13,
            SampleReply {
                values: vec!["16".into(), "33".into()],
            },
        ),
    );
    reply_case(
        "record_start",
        r#"{"id":14,"ok":true,"recording":true}"#,
        ProbeReply::ok(14, RecordingReply { recording: true }),
    );
    reply_case(
        "record_stop",
        r#"{"duration_ms":900,"events":[{"event":{"key":"Space","type":"key"},"pressed":true,"t_ms":100},{"event":{"button":1,"type":"mouse_button","x":3.5,"y":4.0},"pressed":false,"t_ms":150}],"id":15,"ok":true,"skipped":{"InputEventMouseMotion":3}}"#,
        ProbeReply::ok(
            15,
            RecordedReply {
                events: vec![
                    RecordedEvent {
                        t_ms: 100,
                        frame: None,
                        event: ProbeEvent::Key {
                            key: "Space".into(),
                        },
                        pressed: true,
                    },
                    RecordedEvent {
                        t_ms: 150,
                        frame: None,
                        event: ProbeEvent::MouseButton {
                            button: 1,
                            x: Some(3.5),
                            y: Some(4.0),
                        },
                        pressed: false,
                    },
                ],
                skipped: BTreeMap::from([("InputEventMouseMotion".into(), 3)]),
                duration_ms: 900,
            },
        ),
    );
    reply_case(
        "clock_pause",
        r#"{"frame":42,"id":30,"ok":true,"paused":true}"#,
        ProbeReply::ok(
            30,
            ClockReply {
                frame: 42,
                paused: true,
            },
        ),
    );
    reply_case(
        "clock_step",
        r#"{"advanced":3,"frame":45,"id":31,"met":true,"ok":true,"rows":[{"frame":44,"values":[1.5,null]}]}"#,
        ProbeReply::ok(
            31,
            StepReply {
                frame: 45,
                advanced: 3,
                met: Some(true),
                rows: vec![WatchRow {
                    frame: 44,
                    values: vec![json!(1.5), Json::Null],
                }],
            },
        ),
    );
    // Refusals: probe.rs node_not_found, and capture()'s too_large with its size.
    reply_case(
        "refusal",
        r#"{"error":"node_not_found","id":16,"message":"no node \"/root/X\"","ok":false}"#,
        ProbeReply::<ValueReply>::refused(
            16,
            ProbeRefusal::new("node_not_found", "no node \"/root/X\""),
        ),
    );
    reply_case(
        "too_large",
        r#"{"bytes":9000,"error":"too_large","height":30,"id":17,"message":"the 40x30 PNG is 9000 bytes","ok":false,"width":40}"#,
        ProbeReply::<ScreenshotReply>::refused(
            17,
            ProbeRefusal {
                error: "too_large".into(),
                message: "the 40x30 PNG is 9000 bytes".into(),
                bytes: Some(9000),
                width: Some(40),
                height: Some(30),
            },
        ),
    );
}

#[test]
fn the_hello_round_trips_in_its_old_wire_form() {
    // probe.rs initialize: json!({"hello": {"nonce", "pid", "renderer"}})
    let wire = r#"{"hello":{"nonce":"n0nce","pid":4242,"renderer":true}}"#;
    let typed = ProbeHelloFrame {
        hello: ProbeHello {
            nonce: "n0nce".into(),
            pid: 4242,
            renderer: true,
        },
    };
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        serde_json::from_str::<Json>(wire).unwrap()
    );
    assert_eq!(
        serde_json::from_str::<ProbeHelloFrame>(wire).unwrap(),
        typed
    );
}

#[test]
fn a_field_of_the_wrong_type_is_a_structured_refusal_not_a_panic() {
    // hold_ms a string: bad_request, under the request's id.
    let (id, refusal) = decode_request(
        br#"{"id":7,"cmd":"input","event":{"type":"key","key":"A"},"hold_ms":"long"}"#,
    )
    .unwrap_err();
    assert_eq!(id, Some(7));
    assert_eq!(refusal.error, "bad_request");
    assert!(
        refusal.message.contains("invalid type"),
        "{}",
        refusal.message
    );
    // A cmd the probe does not know keeps its old refusal.
    let (id, refusal) = decode_request(br#"{"id":8,"cmd":"fly"}"#).unwrap_err();
    assert_eq!(
        (id, refusal),
        (Some(8), ProbeRefusal::new("unknown_command", "fly"))
    );
    // Not JSON at all: no id to answer under.
    let (id, refusal) = decode_request(b"{nope").unwrap_err();
    assert_eq!((id, refusal.error.as_str()), (None, "bad_request"));
}

#[test]
fn a_reply_body_of_the_wrong_shape_is_malformed_not_a_panic() {
    // `held` a string: the id still matches, the body does not decode.
    let raw: RawReply = serde_json::from_str(r#"{"id":3,"ok":true,"held":"two"}"#).unwrap();
    let err = raw.decode::<HeldReply>().unwrap_err();
    assert!(err.0.contains("answer to request 3"), "{err}");
    // A value the value model refuses (a Vector2 without y) is malformed too.
    let raw: RawReply =
        serde_json::from_value(json!({"id": 4, "ok": true, "value": {"$type": "Vector2", "x": 1}}))
            .unwrap();
    assert!(raw.decode::<ValueReply>().is_err());
    // A refusal without its message.
    let raw: RawReply = serde_json::from_str(r#"{"id":5,"ok":false,"error":"x"}"#).unwrap();
    assert!(
        raw.decode::<Empty>()
            .unwrap_err()
            .0
            .contains("refusal of request 5")
    );
}

/// The rows the server hands an agent as they are (get_game_tree, find_ui_elements)
/// carry only their declared fields: an undeclared one is a malformed answer, never
/// passed through into a result whose outputSchema does not name it.
#[test]
fn an_answer_row_with_an_undeclared_field_is_refused() {
    let node = json!({"path": "/root/Main", "name": "Main", "class": "Node2D",
                      "depth": 1, "children": 0});
    assert!(serde_json::from_value::<TreeNode>(node.clone()).is_ok());
    let mut extra = node;
    extra["secret"] = json!(1);
    assert!(serde_json::from_value::<TreeNode>(extra).is_err());
    let rect = json!({"x": 0.0, "y": 0.0, "w": 1.0, "h": 1.0, "z": 0.0});
    assert!(serde_json::from_value::<UiRect>(rect).is_err());
    let el = json!({"path": "/root/B", "class": "Button", "text": "Go", "visible": true,
                    "rect": {"x": 0.0, "y": 0.0, "w": 1.0, "h": 1.0}, "theme": "x"});
    assert!(serde_json::from_value::<UiElement>(el).is_err());
}
