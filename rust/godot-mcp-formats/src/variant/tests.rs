use proptest::prelude::*;
use serde_json::{Value as Json, json};

use super::*;

#[test]
fn json_converts_to_variant_text() {
    assert_eq!(
        plain_json_text(&json!("a\"b\\c\nd"), "v").unwrap(),
        r#""a\"b\\c\nd""#
    );
    assert_eq!(plain_json_text(&json!(true), "v").unwrap(), "true");
    assert_eq!(plain_json_text(&json!(-3), "v").unwrap(), "-3");
    assert_eq!(plain_json_text(&json!(1.0), "v").unwrap(), "1.0");
    assert_eq!(plain_json_text(&json!(0.25), "v").unwrap(), "0.25");
    assert_eq!(
        plain_json_text(&json!([1, "x", null]), "v").unwrap(),
        r#"[1, "x", null]"#
    );
    assert_eq!(
        plain_json_text(&json!({"a": 1}), "v").unwrap(),
        "{\n\"a\": 1\n}"
    );
    let e = plain_json_text(&json!(u64::MAX), "value").unwrap_err();
    assert_eq!(e.param, "value");
}

/// Every type docs/values.md types: Godot's text → the model (never Raw) →
/// the same text, and the model → JSON → the same model.
#[test]
fn typed_values_round_trip_through_text_and_json() {
    for text in [
        "PackedStringArray(\"dash\", \"double_jump\")",
        "PackedStringArray()",
        "PackedByteArray(0, 1, 255)",
        "PackedInt64Array(1, -9007199254740993)",
        "PackedFloat64Array(0.1, 2, -3.25)",
        "PackedVector4Array(1, 2, 3, 4, 5, 6, 7, 8)",
        "Vector4(1, 2.5, 3, 4)",
        "Vector4i(1, -2, 3, 4)",
        "Plane(0, 1, 0, 2.5)",
        "AABB(0, 0, 0, 1, 2, 3)",
        "Basis(1, 2, 3, 4, 5, 6, 7, 8, 9)",
        "Projection(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)",
        "Array[int]([1, 2, 3])",
        "Array[StringName]([])",
        "&\"idle\"",
        "Array[StringName]([&\"a\", &\"b\"])",
        "{\n&\"\": 1\n}",
        "Array[ExtResource(\"1_ab\")]([])",
        "Dictionary[String, int]({\n\"a\": 1\n})",
        "{\n1: \"one\",\nVector2(1, 2): null\n}",
        "inf",
        "inf_neg",
        "nan",
    ] {
        let parsed = crate::parse_value(text).unwrap();
        let v = from_text(&parsed, &Refs::default());
        assert!(!matches!(v, Value::Raw(_)), "{text}: Raw");
        assert_eq!(to_text(&v).as_deref(), Some(text), "{text}");
        let back = Value::from_json(&v.to_json()).unwrap();
        assert_eq!(to_text(&back), to_text(&v), "{text}: {}", v.to_json());
    }
    // Godot 4.3+'s base64 form is the same value as the list form.
    let b64 = crate::parse_value("PackedByteArray(\"AAH/\")").unwrap();
    assert_eq!(
        from_text(&b64, &Refs::default()),
        Value::PackedByteArray(vec![0, 1, 255])
    );
    // Basis is written row by row; the model holds columns.
    let basis = crate::parse_value("Basis(1, 2, 3, 4, 5, 6, 7, 8, 9)").unwrap();
    assert_eq!(
        from_text(&basis, &Refs::default()).to_json()["x"],
        json!([1.0, 4.0, 7.0])
    );
    // A StringName is typed, apart from a String; a key of one is a non-string key.
    let name = crate::parse_value("&\"idle\"").unwrap();
    assert_eq!(
        from_text(&name, &Refs::default()).to_json(),
        json!({"$type": "StringName", "value": "idle"})
    );
    let keyed = crate::parse_value("{\n&\"run\": 1\n}").unwrap();
    assert_eq!(
        from_text(&keyed, &Refs::default()).to_json(),
        json!({"$type": "Dictionary", "entries": [[{"$type": "StringName", "value": "run"}, 1]]})
    );
    assert!(Value::from_json(&json!({"$type": "StringName", "value": 3})).is_err());
    assert_eq!(
        Value::Float(f64::NEG_INFINITY).to_json(),
        json!({"$type": "float", "value": "-inf"})
    );
    assert_eq!(
        Value::from_json(&json!({"$type": "Dictionary", "entries": [[1, "one"]]})).unwrap(),
        Value::Map {
            key: None,
            value: None,
            entries: vec![(Value::Int(1), Value::String("one".into()))],
        }
    );
    assert!(Value::from_json(&json!({"$type": "Array", "of": "in t", "values": []})).is_err());
}

#[test]
fn first_raw_finds_an_untyped_value_at_any_depth() {
    let read = |t: &str| from_text(&crate::parse_value(t).unwrap(), &Refs::default());
    assert_eq!(read("Vector2(1, 2)").first_raw(), None);
    assert_eq!(
        read("[1, {\n\"k\": Object(InputEventKey,\"keycode\":4)\n}]").first_raw(),
        Some("Object(InputEventKey,\"keycode\":4)")
    );
    assert_eq!(read("{\n1: Callable()\n}").first_raw(), Some("Callable()"));
}

#[test]
fn variant_text_must_be_one_balanced_line() {
    for ok in [
        "Vector2(1, 2)",
        "\"a ) b\"",
        "[1, [2]]",
        "{\"a\": \"]\"}",
        "Color(1, 0, 0, 1)",
    ] {
        check_text(ok, "value_text").unwrap();
    }
    for bad in [
        "",
        "Vector2(1, 2",
        "1)\n[autoload]",
        "\"open",
        "a\nb=1",
        "][",
    ] {
        let e = check_text(bad, "value_text").unwrap_err();
        assert_eq!(e.param, "value_text", "{bad:?}");
    }
}

#[test]
fn every_kind_round_trips() {
    let values = [
        Value::Nil,
        Value::Bool(true),
        Value::Int(-7),
        Value::Int(i64::MAX),
        Value::Float(1.0),
        Value::Float(-0.25),
        Value::String("héllo \"x\"".into()),
        Value::Vector2([1.5, -2.0]),
        Value::Vector3([0.0, 1.0, 2.0]),
        Value::Color([1.0, 0.5, 0.25, 0.75]),
        Value::NodePath("../Player:position".into()),
        Value::Transform2D {
            x: [1.0, 0.0],
            y: [0.0, 1.0],
            origin: [10.0, 20.0],
        },
        Value::Transform3D {
            basis: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            origin: [1.0, 2.0, 3.0],
        },
        Value::Resource("res://icon.svg".into()),
        Value::NewResource {
            class: "RectangleShape2D".into(),
            properties: vec![("size".into(), Value::Vector2([32.0, 16.0]))],
        },
        Value::NewResource {
            class: "Gradient".into(),
            properties: vec![],
        },
        Value::Vector2i([-3, 4]),
        Value::Vector3i([1, -2, 3]),
        Value::Rect2 {
            position: [0.5, 1.0],
            size: [16.0, 8.0],
        },
        Value::Rect2i {
            position: [0, -1],
            size: [16, 16],
        },
        Value::Quaternion([0.0, 0.0, 0.0, 1.0]),
        Value::PackedVector2Array(vec![[0.0, 0.0], [1.5, 2.0]]),
        Value::PackedVector3Array(vec![[0.0, 1.0, 2.0]]),
        Value::PackedFloat32Array(vec![0.0, 0.5]),
        Value::PackedInt32Array(vec![1, -2, i32::MAX as i64]),
        Value::PackedColorArray(vec![[1.0, 0.0, 0.0, 1.0]]),
        Value::Array(vec![Value::Int(1), Value::Vector2([0.0, 0.0])]),
        Value::Dictionary(vec![("hp".into(), Value::Int(3))]),
    ];
    for v in values {
        let wire = serde_json::to_string(&v.to_json()).unwrap();
        let back = Value::from_json(&serde_json::from_str(&wire).unwrap()).unwrap();
        assert_eq!(back, v, "{wire}");
    }
}

/// Finite floats that are exact in f32 too (what Godot stores), so the comparison is
/// about the wire form, not about decimal printing.
fn finite() -> impl Strategy<Value = f64> {
    (-1_000_000i32..1_000_000).prop_map(|i| f64::from(i) / 64.0)
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        finite().prop_map(Value::Float),
        "[a-z]{0,8}".prop_map(Value::String),
        "[a-z]{0,8}".prop_map(Value::StringName),
        [finite(), finite()].prop_map(Value::Vector2),
        [any::<i64>(), any::<i64>()].prop_map(Value::Vector2i),
        [any::<i64>(), any::<i64>(), any::<i64>()].prop_map(Value::Vector3i),
        ([finite(), finite()], [finite(), finite()])
            .prop_map(|(position, size)| Value::Rect2 { position, size }),
        ([any::<i64>(), any::<i64>()], [any::<i64>(), any::<i64>()])
            .prop_map(|(position, size)| Value::Rect2i { position, size }),
        [finite(), finite(), finite(), finite()].prop_map(Value::Quaternion),
        prop::collection::vec([finite(), finite()], 0..4).prop_map(Value::PackedVector2Array),
        prop::collection::vec([finite(), finite(), finite()], 0..4)
            .prop_map(Value::PackedVector3Array),
        prop::collection::vec(finite(), 0..4).prop_map(Value::PackedFloat32Array),
        prop::collection::vec(any::<i32>().prop_map(i64::from), 0..4)
            .prop_map(Value::PackedInt32Array),
        prop::collection::vec([finite(), finite(), finite(), finite()], 0..4)
            .prop_map(Value::PackedColorArray),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            (
                "[A-Z][A-Za-z0-9]{0,12}",
                prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
            )
                .prop_map(|(class, props)| Value::NewResource {
                    class,
                    properties: props.into_iter().collect(),
                }),
        ]
    })
}

proptest! {
    #[test]
    fn random_values_round_trip_through_the_wire(v in any_value()) {
        let wire = serde_json::to_string(&v.to_json()).unwrap();
        let back = Value::from_json(&serde_json::from_str(&wire).unwrap()).unwrap();
        prop_assert_eq!(back, v, "{}", wire);
    }
}

proptest! {
    /// JSON → value → Godot text → value: the text writer and the reader agree
    /// (a new sub-resource has no text of its own and is left out).
    #[test]
    fn random_values_round_trip_through_godot_text(v in any_value()) {
        if let Some(text) = to_text(&v) {
            let parsed = crate::text::parse_value(&text).unwrap();
            prop_assert_eq!(from_text(&parsed, &Refs::default()), reals(v), "{}", text);
        }
    }
}

/// Plain JSON an agent sends to a settings or property write: scalars (any finite
/// float, any string), arrays and objects.
fn plain_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Json::from),
        ".{0,8}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..4)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Plain JSON → Godot text → value → JSON: what a write stores reads back as
    /// the JSON the agent sent, through the parser Godot's files go through.
    #[test]
    fn plain_json_round_trips_through_godot_text(json in plain_json()) {
        let text = plain_json_text(&json, "value").unwrap();
        let parsed = crate::text::parse_value(&text).unwrap();
        prop_assert_eq!(from_text(&parsed, &Refs::default()).to_json(), json, "{}", text);
    }
}

/// `v` with every 32-bit (`real_t`) component as Godot holds it ([`real`]): what
/// a value reads back as once it went through a file, the editor or the game.
fn reals(v: Value) -> Value {
    let a = |x: &mut [f64]| x.iter_mut().for_each(|f| *f = real(*f));
    match v {
        Value::Vector2(mut x) => {
            a(&mut x);
            Value::Vector2(x)
        }
        Value::Vector3(mut x) => {
            a(&mut x);
            Value::Vector3(x)
        }
        Value::Color(mut x) => {
            a(&mut x);
            Value::Color(x)
        }
        Value::Quaternion(mut x) => {
            a(&mut x);
            Value::Quaternion(x)
        }
        Value::Rect2 {
            mut position,
            mut size,
        } => {
            a(&mut position);
            a(&mut size);
            Value::Rect2 { position, size }
        }
        Value::PackedVector2Array(mut v) => {
            v.iter_mut().for_each(|x| a(x));
            Value::PackedVector2Array(v)
        }
        Value::PackedVector3Array(mut v) => {
            v.iter_mut().for_each(|x| a(x));
            Value::PackedVector3Array(v)
        }
        Value::PackedColorArray(mut v) => {
            v.iter_mut().for_each(|x| a(x));
            Value::PackedColorArray(v)
        }
        Value::PackedFloat32Array(mut v) => {
            a(&mut v);
            Value::PackedFloat32Array(v)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(reals).collect()),
        other => other,
    }
}

/// Godot 4.4.1's own `var_to_str` output (captured from the engine), read into the
/// model: the row order of Transform3D, the default alpha, reals as Godot holds
/// them, and untyped values kept as their text.
#[test]
fn the_engines_text_reads_as_the_model() {
    let read = |t: &str| from_text(&crate::text::parse_value(t).unwrap(), &Refs::default());
    assert_eq!(
        read("Transform3D(1, 4, 7, 2, 5, 8, 3, 6, 9, 10, 11, 12)"),
        Value::Transform3D {
            basis: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
            origin: [10.0, 11.0, 12.0],
        }
    );
    assert_eq!(
        read("Transform2D(1, 2, 3, 4, 5, 6)"),
        Value::Transform2D {
            x: [1.0, 2.0],
            y: [3.0, 4.0],
            origin: [5.0, 6.0]
        }
    );
    assert_eq!(read("Vector2(0.1, 0.2)"), Value::Vector2([0.1, 0.2]));
    assert_eq!(
        read("Color(0.784314, 0.392157, 0.196078, 1)"),
        Value::Color([0.784314, 0.392157, 0.196078, 1.0])
    );
    assert_eq!(read("0.1"), Value::Float(0.1));
    assert_eq!(read("1.0"), Value::Float(1.0));
    assert_eq!(read("&\"sn\""), Value::StringName("sn".into()));
    assert_eq!(read("NodePath(\"A/B\")"), Value::NodePath("A/B".into()));
    assert_eq!(
        read("PackedVector2Array(1, 2, 3.5, 4)"),
        Value::PackedVector2Array(vec![[1.0, 2.0], [3.5, 4.0]])
    );
    assert_eq!(
        read("Vector2(1e-07, 1.23457e+08)"),
        Value::Vector2([1e-7, 123457000.0])
    );
    assert_eq!(
        read("PackedStringArray(\"dash\", \"b\")"),
        Value::PackedStringArray(vec!["dash".into(), "b".into()])
    );
    assert_eq!(
        read("{\n\"a\": 1,\n\"b\": [1, 2.5]\n}"),
        Value::Dictionary(vec![
            ("a".into(), Value::Int(1)),
            (
                "b".into(),
                Value::Array(vec![Value::Int(1), Value::Float(2.5)])
            ),
        ])
    );
    // The writer gives the engine's text back for these.
    for t in [
        "Transform3D(1, 4, 7, 2, 5, 8, 3, 6, 9, 10, 11, 12)",
        "Transform2D(1, 2, 3, 4, 5, 6)",
        "Vector2(0.1, 0.2)",
        "PackedVector2Array(1, 2, 3.5, 4)",
        "Rect2(1, 2, 3, 4)",
        "{\n\"a\": 1,\n\"b\": [1, 2.5]\n}",
        "PackedStringArray(\"dash\", \"b\")",
    ] {
        assert_eq!(to_text(&read(t)).as_deref(), Some(t));
    }
}

/// References resolve through the file: an ext_resource to its path, a
/// sub_resource to its class and properties; an unknown id stays raw text.
#[test]
fn references_resolve_through_the_file() {
    let scene = crate::parse_scene(
        "[gd_scene load_steps=3 format=3]\n\n\
         [ext_resource type=\"Texture2D\" path=\"res://icon.svg\" id=\"1_a\"]\n\n\
         [sub_resource type=\"RectangleShape2D\" id=\"R\"]\nsize = Vector2(32, 16)\n\n\
         [node name=\"Main\" type=\"Node2D\"]\n",
    )
    .unwrap();
    let refs = Refs::of_scene(&scene);
    let read = |t: &str| from_text(&crate::text::parse_value(t).unwrap(), &refs);
    assert_eq!(
        read("ExtResource(\"1_a\")"),
        Value::Resource("res://icon.svg".into())
    );
    assert_eq!(
        read("SubResource(\"R\")"),
        Value::NewResource {
            class: "RectangleShape2D".into(),
            properties: vec![("size".into(), Value::Vector2([32.0, 16.0]))],
        }
    );
    assert_eq!(
        read("ExtResource(\"nope\")"),
        Value::Raw("ExtResource(\"nope\")".into())
    );
}

#[test]
fn ints_and_floats_stay_apart() {
    assert_eq!(Value::from_json(&json!(1)).unwrap(), Value::Int(1));
    assert_eq!(
        Value::from_json(&serde_json::from_str("1.0").unwrap()).unwrap(),
        Value::Float(1.0)
    );
    assert_eq!(
        serde_json::to_string(&Value::Float(1.0).to_json()).unwrap(),
        "1.0"
    );
}

#[test]
fn color_alpha_defaults_to_one() {
    let v = Value::from_json(&json!({"$type": "Color", "r": 1, "g": 0, "b": 0})).unwrap();
    assert_eq!(v, Value::Color([1.0, 0.0, 0.0, 1.0]));
}

/// A packed colour array takes each colour as a person types it (run 9: `"#ffffffff"`
/// inside `values` was refused).
#[test]
fn packed_colours_take_colour_text() {
    let v = Value::from_json(&json!({"$type": "PackedColorArray",
        "values": ["#ffffffff", "#ff000080", "red", [0, 0, 1, 1], "Color(0, 1, 0, 1)"]}))
    .unwrap();
    let Value::PackedColorArray(c) = v else {
        panic!("{v:?}")
    };
    assert_eq!(c[0], [1.0, 1.0, 1.0, 1.0]);
    assert_eq!(c[1][0], 1.0);
    assert!((c[1][3] - 128.0 / 255.0).abs() < 1e-6, "{:?}", c[1]);
    assert_eq!(c[2], [1.0, 0.0, 0.0, 1.0]);
    assert_eq!(c[3], [0.0, 0.0, 1.0, 1.0]);
    assert_eq!(c[4], [0.0, 1.0, 0.0, 1.0]);
    let e =
        Value::from_json(&json!({"$type": "PackedColorArray", "values": ["#ffzz00"]})).unwrap_err();
    assert!(e.to_string().contains("is not a colour"), "{e}");
}

#[test]
fn bad_values_are_refused_with_a_reason() {
    for (bad, says) in [
        (json!({"$type": "Vector2", "x": 1}), "y must be a number"),
        (
            json!({"$type": "Vector2", "x": 1, "y": 2, "z": 3}),
            "no field \"z\"",
        ),
        (json!({"$type": "Basis2"}), "unsupported $type"),
        (json!({"$type": "Basis"}), "x must be an array of 3 numbers"),
        (
            json!({"$type": "Vector2i", "x": 1.5, "y": 2}),
            "x must be an integer",
        ),
        (
            json!({"$type": "PackedInt32Array", "values": [1, 4294967296_i64]}),
            "32-bit",
        ),
        (
            json!({"$type": "PackedVector2Array", "values": [[1, 2], [3]]}),
            "values[1] must be an array of 2",
        ),
        (
            json!({"$type": "Resource", "class": "Box Shape", "properties": {}}),
            "Godot class name",
        ),
        (
            json!({"$type": "Resource", "class": "BoxShape3D", "path": "res://a.tres"}),
            "no field \"path\"",
        ),
        (
            json!({"$type": "Resource", "class": "BoxShape3D", "properties": [1]}),
            "properties must be an object",
        ),
        (
            json!({"$type": "Resource", "class": "ShaderMaterial", "properties":
                {"shader": {"$type": "Resource", "path": "/etc/passwd"}}}),
            "res:// path",
        ),
        (json!({"$type": 3}), "must be a string"),
        (
            json!({"$type": "Resource", "path": "/etc/passwd"}),
            "res:// path",
        ),
        (
            json!({"$type": "Resource", "path": "res://../x"}),
            "res:// path",
        ),
        (
            json!({"$type": "Transform2D", "x": [1], "y": [0, 1], "origin": [0, 0]}),
            "x must be an array of 2",
        ),
        (json!(u64::MAX), "64-bit"),
    ] {
        let e = Value::from_json(&bad).unwrap_err();
        assert!(e.0.contains(says), "{bad}: {e}");
    }
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!([deep]);
    }
    assert!(Value::from_json(&deep).is_err());
}
