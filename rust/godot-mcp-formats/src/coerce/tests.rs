use super::*;
use serde_json::{Value as Json, json};

use super::colors::NAMED_COLORS;
use crate::variant::real;

fn none(_: &str) -> Option<i64> {
    None
}

fn c(json: Json, ty: &str) -> Result<Value, CoerceError> {
    coerce(&Value::from_json(&json).unwrap(), &Declared::of(ty), &none)
}

fn ok(json: Json, ty: &str) -> Value {
    c(json.clone(), ty).unwrap_or_else(|e| panic!("{json} as {ty}: {e}"))
}

#[test]
fn vectors_from_arrays_objects_and_godot_text() {
    let v2 = Value::Vector2([10.0, 20.0]);
    assert_eq!(ok(json!([10, 20]), "Vector2"), v2);
    assert_eq!(ok(json!([10.0, 20]), "Vector2"), v2);
    assert_eq!(ok(json!("Vector2(10, 20)"), "Vector2"), v2);
    assert_eq!(ok(json!({"x": 10, "y": 20}), "Vector2"), v2);
    assert_eq!(
        ok(json!({"$type": "Vector2", "x": 10, "y": 20}), "Vector2"),
        v2
    );
    assert_eq!(ok(json!("Vector2i(10, 20)"), "Vector2"), v2);
    assert_eq!(ok(json!([10, 20.0]), "Vector2i"), Value::Vector2i([10, 20]));
    assert_eq!(
        ok(json!([1, 2, 3]), "Vector3"),
        Value::Vector3([1.0, 2.0, 3.0])
    );
    assert_eq!(
        ok(json!("Vector3(1, 2, 3)"), "Vector3"),
        Value::Vector3([1.0, 2.0, 3.0])
    );
    assert_eq!(ok(json!([1, 2, 3]), "Vector3i"), Value::Vector3i([1, 2, 3]));
    assert_eq!(
        ok(json!([1, 2, 3, 4]), "Vector4"),
        Value::Vector4([1.0, 2.0, 3.0, 4.0])
    );
    assert_eq!(
        ok(json!([1, 2, 3, 4]), "Vector4i"),
        Value::Vector4i([1, 2, 3, 4])
    );
    assert_eq!(
        ok(json!([0, 0, 0, 1]), "Quaternion"),
        Value::Quaternion([0.0, 0.0, 0.0, 1.0])
    );
    assert!(c(json!([1.5, 2]), "Vector2i").is_err());
    assert!(c(json!([1, 2, 3]), "Vector2").is_err());
}

#[test]
fn rects_boxes_planes_transforms_and_bases() {
    let r = Value::Rect2 {
        position: [0.0, 0.0],
        size: [16.0, 16.0],
    };
    assert_eq!(ok(json!([0, 0, 16, 16]), "Rect2"), r);
    assert_eq!(ok(json!([[0, 0], [16, 16]]), "Rect2"), r);
    assert_eq!(ok(json!("Rect2(0, 0, 16, 16)"), "Rect2"), r);
    assert_eq!(
        ok(json!({"position": [0, 0], "size": [16, 16]}), "Rect2"),
        r
    );
    assert_eq!(
        ok(
            json!({"$type": "Rect2", "position": [0, 0], "size": [16, 16]}),
            "Rect2"
        ),
        r
    );
    assert_eq!(
        ok(json!([0, 0, 16, 16]), "Rect2i"),
        Value::Rect2i {
            position: [0, 0],
            size: [16, 16]
        }
    );
    assert_eq!(
        ok(json!("Rect2i(0, 0, 16, 16)"), "Rect2i"),
        Value::Rect2i {
            position: [0, 0],
            size: [16, 16]
        }
    );
    assert_eq!(
        ok(json!([0, 1, 0, 2]), "Plane"),
        Value::Plane {
            normal: [0.0, 1.0, 0.0],
            d: 2.0
        }
    );
    let aabb = Value::Aabb {
        position: [0.0, 0.0, 0.0],
        size: [1.0, 2.0, 3.0],
    };
    assert_eq!(ok(json!([0, 0, 0, 1, 2, 3]), "AABB"), aabb);
    assert_eq!(ok(json!([[0, 0, 0], [1, 2, 3]]), "AABB"), aabb);
    assert_eq!(ok(json!("AABB(0, 0, 0, 1, 2, 3)"), "AABB"), aabb);
    let id = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    assert_eq!(
        ok(json!([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), "Basis"),
        Value::Basis(id)
    );
    let t2 = Value::Transform2D {
        x: [1.0, 0.0],
        y: [0.0, 1.0],
        origin: [10.0, 20.0],
    };
    assert_eq!(ok(json!([[1, 0], [0, 1], [10, 20]]), "Transform2D"), t2);
    assert_eq!(ok(json!([1, 0, 0, 1, 10, 20]), "Transform2D"), t2);
    assert_eq!(
        ok(json!("Transform2D(1, 0, 0, 1, 10, 20)"), "Transform2D"),
        t2
    );
    assert_eq!(
        ok(
            json!([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 2, 0]]),
            "Transform3D"
        ),
        Value::Transform3D {
            basis: id,
            origin: [0.0, 2.0, 0.0]
        }
    );
    assert_eq!(
        ok(
            json!([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
            "Projection"
        ),
        Value::Projection([
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0]
        ])
    );
}

#[test]
fn colours_from_hex_names_arrays_and_text() {
    let red = Value::Color([1.0, 0.0, 0.0, 1.0]);
    assert_eq!(ok(json!("#ff0000"), "Color"), red);
    assert_eq!(ok(json!("#FF0000FF"), "Color"), red);
    assert_eq!(ok(json!("#f00"), "Color"), red);
    assert_eq!(ok(json!("ff0000"), "Color"), red);
    assert_eq!(ok(json!("red"), "Color"), red);
    assert_eq!(ok(json!("RED"), "Color"), red);
    assert_eq!(ok(json!([1, 0, 0]), "Color"), red);
    assert_eq!(ok(json!([1, 0, 0, 1]), "Color"), red);
    assert_eq!(ok(json!("Color(1, 0, 0)"), "Color"), red);
    assert_eq!(ok(json!({"r": 1, "g": 0, "b": 0}), "Color"), red);
    assert_eq!(
        ok(json!("#ff000080"), "Color"),
        Value::Color([1.0, 0.0, 0.0, real(128.0 / 255.0)])
    );
    assert_eq!(
        ok(json!("cornflower_blue"), "Color"),
        Value::Color([real(0.39), real(0.58), real(0.93), 1.0])
    );
    assert_eq!(
        ok(json!("Cornflower Blue"), "Color"),
        ok(json!("CORNFLOWER_BLUE"), "Color")
    );
    assert_eq!(
        ok(json!("transparent"), "Color"),
        Value::Color([1.0, 1.0, 1.0, 0.0])
    );
    assert_eq!(NAMED_COLORS.len(), 146);
    assert!(c(json!("#ff00"), "Color").is_ok(), "#rgba");
    assert!(c(json!("#ff00f"), "Color").is_err());
    assert!(c(json!("reddish"), "Color").is_err());
    assert_eq!(
        ok(json!(["#ff0000", [0, 0, 1]]), "PackedColorArray"),
        Value::PackedColorArray(vec![[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
    );
    // Godot's text for each colour (run 10: refused inside a Gradient's colors).
    assert_eq!(
        ok(
            json!(["Color(1, 1, 1, 1)", "Color(1, 1, 1, 0)"]),
            "PackedColorArray"
        ),
        Value::PackedColorArray(vec![[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
    );
}

#[test]
fn packed_arrays_from_arrays_of_rows() {
    assert_eq!(
        ok(json!([[0, 0], [16, 0]]), "PackedVector2Array"),
        Value::PackedVector2Array(vec![[0.0, 0.0], [16.0, 0.0]])
    );
    assert_eq!(
        ok(json!([[0, 0, 1]]), "PackedVector3Array"),
        Value::PackedVector3Array(vec![[0.0, 0.0, 1.0]])
    );
    assert_eq!(
        ok(json!([[0, 0, 1, 2]]), "PackedVector4Array"),
        Value::PackedVector4Array(vec![[0.0, 0.0, 1.0, 2.0]])
    );
    assert_eq!(
        ok(json!([1, 2.5]), "PackedFloat32Array"),
        Value::PackedFloat32Array(vec![1.0, 2.5])
    );
    assert_eq!(
        ok(json!([1, 2.5]), "PackedFloat64Array"),
        Value::PackedFloat64Array(vec![1.0, 2.5])
    );
    assert_eq!(
        ok(json!([1, 2]), "PackedInt32Array"),
        Value::PackedInt32Array(vec![1, 2])
    );
    assert_eq!(
        ok(json!([1, 2]), "PackedInt64Array"),
        Value::PackedInt64Array(vec![1, 2])
    );
    assert_eq!(
        ok(json!([0, 255]), "PackedByteArray"),
        Value::PackedByteArray(vec![0, 255])
    );
    assert_eq!(
        ok(json!(["a", "b"]), "PackedStringArray"),
        Value::PackedStringArray(vec!["a".into(), "b".into()])
    );
    assert_eq!(
        ok(
            json!("PackedVector2Array(0, 0, 1, 1)"),
            "PackedVector2Array"
        ),
        Value::PackedVector2Array(vec![[0.0, 0.0], [1.0, 1.0]])
    );
    assert!(c(json!([256]), "PackedByteArray").is_err());
    assert!(c(json!([4294967296i64]), "PackedInt32Array").is_err());
    assert!(c(json!([[0, 0], [1]]), "PackedVector2Array").is_err());
}

#[test]
fn scalars_paths_and_names() {
    assert_eq!(ok(json!(2), "float"), Value::Float(2.0));
    assert_eq!(ok(json!(2.0), "int"), Value::Int(2));
    assert_eq!(ok(json!("2.5"), "float"), Value::Float(2.5));
    assert_eq!(ok(json!("true"), "bool"), Value::Bool(true));
    assert!(c(json!(2.5), "int").is_err());
    assert!(c(json!(1), "bool").is_err());
    assert!(c(json!(1), "String").is_err());
    assert_eq!(
        ok(json!("Vector2(1, 2)"), "String"),
        Value::String("Vector2(1, 2)".into())
    );
    assert_eq!(
        ok(json!("idle"), "StringName"),
        Value::StringName("idle".into())
    );
    assert_eq!(
        ok(json!("../Player"), "NodePath"),
        Value::NodePath("../Player".into())
    );
    assert_eq!(
        ok(json!({"$type": "NodePath", "path": "A"}), "NodePath"),
        Value::NodePath("A".into())
    );
    // A property of any type takes the value as sent.
    assert_eq!(
        ok(json!("res://a.png"), "Nil"),
        Value::String("res://a.png".into())
    );
    assert_eq!(
        ok(json!([1, 2]), "Array"),
        Value::Array(vec![Value::Int(1), Value::Int(2)])
    );
    assert_eq!(
        ok(json!({"a": 1}), "Dictionary"),
        Value::Dictionary(vec![("a".into(), Value::Int(1))])
    );
    // Raw text is Godot's to read, whatever the type.
    assert_eq!(
        ok(json!({"$type": "Raw", "text": "Vector2(1, 2)"}), "Vector2"),
        Value::Raw("Vector2(1, 2)".into())
    );
}

#[test]
fn resources_from_res_paths() {
    let icon = Value::Resource("res://icon.svg".into());
    assert_eq!(ok(json!("res://icon.svg"), "Object"), icon);
    assert_eq!(ok(json!("load(\"res://icon.svg\")"), "Object"), icon);
    assert_eq!(ok(json!("preload('res://icon.svg')"), "Object"), icon);
    assert_eq!(ok(json!("Resource(\"res://icon.svg\")"), "Object"), icon);
    assert_eq!(
        ok(
            json!({"$type": "Resource", "path": "res://icon.svg"}),
            "Object"
        ),
        icon
    );
    assert_eq!(ok(json!(null), "Object"), Value::Nil);
    assert!(matches!(
        ok(
            json!({"$type": "Resource", "class": "CircleShape2D", "properties": {}}),
            "Object"
        ),
        Value::NewResource { .. }
    ));
    assert!(c(json!("icon.svg"), "Object").is_err());
    assert!(c(json!(3), "Object").is_err());
    // A res:// string is a resource only where an Object is declared.
    assert_eq!(
        ok(json!("res://icon.svg"), "String"),
        Value::String("res://icon.svg".into())
    );
}

#[test]
fn enum_and_flag_constants_by_name() {
    let d = Declared::from_property(2, HINT_ENUM, "Left,Center,Right,Fill", "");
    assert_eq!(d.names[1], ("Center".into(), 1));
    let by = |s: &str| coerce(&Value::String(s.into()), &d, &none);
    assert_eq!(by("Center"), Ok(Value::Int(1)));
    assert_eq!(by("center"), Ok(Value::Int(1)));
    assert_eq!(by("HORIZONTAL_ALIGNMENT_FILL"), Ok(Value::Int(3)));
    assert_eq!(by("2"), Ok(Value::Int(2)));
    // Names the hint does not list: the class's constants (ClassDB in the add-on).
    let class = |n: &str| (n == "FILL_MODE_COUNTER_CLOCKWISE").then_some(1);
    let plain = Declared::of("int");
    assert_eq!(
        coerce(
            &Value::String("FILL_MODE_COUNTER_CLOCKWISE".into()),
            &plain,
            &class
        ),
        Ok(Value::Int(1))
    );
    let e = coerce(&Value::String("Middle".into()), &d, &none).unwrap_err();
    assert!(e.0.contains("its names: Left, Center, Right, Fill"), "{e}");
    let flags = Declared::from_property(2, HINT_FLAGS, "A,B,C:16", "");
    assert_eq!(
        flags.names,
        vec![("A".into(), 1), ("B".into(), 2), ("C".into(), 16)]
    );
    assert_eq!(
        coerce(&Value::String("A|C".into()), &flags, &none),
        Ok(Value::Int(17))
    );
    assert_eq!(hint_names("Off,On:2,Auto", false)[2], ("Auto".into(), 3));
    let res = Declared::from_property(24, HINT_RESOURCE_TYPE, "Texture2D", "");
    assert_eq!(res.classes, vec!["Texture2D".to_string()]);
    assert_eq!(Declared::from_property(5, 0, "", "").ty, "Vector2");
}

#[test]
fn every_refusal_names_the_accepted_forms_with_an_example() {
    for (ty, bad) in [
        ("Vector2", json!([1])),
        ("Vector2i", json!("x")),
        ("Vector3", json!("Vector2(1, 2)")),
        ("Vector3i", json!([1.5, 2, 3])),
        ("Vector4", json!([1])),
        ("Vector4i", json!([1])),
        ("Rect2", json!([1, 2])),
        ("Rect2i", json!([0.5, 0, 1, 1])),
        ("Color", json!("#ff00f")),
        ("Quaternion", json!([1])),
        ("Plane", json!([1])),
        ("AABB", json!([1])),
        ("Basis", json!([1])),
        ("Transform2D", json!([1])),
        ("Transform3D", json!([1])),
        ("Projection", json!([1])),
        ("PackedVector2Array", json!([1])),
        ("PackedVector3Array", json!([1])),
        ("PackedVector4Array", json!([1])),
        ("PackedColorArray", json!([1])),
        ("PackedFloat32Array", json!(["a"])),
        ("PackedFloat64Array", json!(["a"])),
        ("PackedInt32Array", json!([0.5])),
        ("PackedInt64Array", json!([0.5])),
        ("PackedByteArray", json!([-1])),
        ("PackedStringArray", json!([1])),
        ("Object", json!("icon.svg")),
        ("int", json!("NOT_A_CONSTANT")),
        ("float", json!("fast")),
        ("bool", json!(1)),
        ("String", json!(1)),
        ("StringName", json!(1)),
        ("NodePath", json!(1)),
        ("Array", json!("a")),
        ("Dictionary", json!("a")),
    ] {
        let e = c(bad.clone(), ty).expect_err(&format!("{bad} as {ty} was accepted"));
        assert!(
            e.0.contains(&format!("a {ty} property")) && e.0.contains(forms(ty)),
            "{ty}: {e}"
        );
        assert!(e.0.contains("Accepted: "), "{ty}: {e}");
        assert!(forms(ty).contains("e.g."), "{ty}'s forms show no example");
    }
    let e = c(json!([1]), "Vector2").unwrap_err();
    assert!(
        e.0.contains("[10, 20]") && e.0.contains("Vector2(10, 20)"),
        "{e}"
    );
    let obj = Declared::from_property(24, HINT_RESOURCE_TYPE, "Texture2D", "");
    let e = coerce(&Value::Int(3), &obj, &none).unwrap_err();
    assert!(
        e.0.contains("an Object property (Texture2D)") && e.0.contains("res://icon.svg"),
        "{e}"
    );
}

#[test]
fn reals_compare_as_godot_stores_them() {
    assert!(same(&Value::Float(0.1), &Value::Float(f64::from(0.1f32))));
    assert!(!same(&Value::Float(0.1), &Value::Float(0.2)));
    assert!(same(
        &Value::Vector2([1.0, 0.5]),
        &Value::Vector2([1.000_000_1, 0.5])
    ));
    assert!(!same(
        &Value::Vector2([1.0, 0.5]),
        &Value::Vector2([1.0, 0.6])
    ));
    assert!(same(
        &Value::Resource("res://icon.svg".into()),
        &Value::Resource("res://icon.svg".into())
    ));
    assert!(!same(
        &Value::Resource("res://icon.svg".into()),
        &Value::Nil
    ));
    assert!(!same(&Value::String("res://icon.svg".into()), &Value::Nil));
    // An untyped array set on a typed-array property is held as that typed array.
    let outline = Value::PackedVector2Array(vec![[0.0, 0.0], [256.0, 0.0]]);
    let typed = Value::TypedArray {
        of: "PackedVector2Array".into(),
        items: vec![outline.clone()],
    };
    assert!(same(&Value::Array(vec![outline.clone()]), &typed));
    assert!(!same(&Value::Array(vec![outline.clone(), outline]), &typed));
    // AnimationPlayer.autoplay set from a StringName holds a String: the same name.
    let name = |s: &str| Value::StringName(s.into());
    assert!(same(&name("bounce"), &Value::String("bounce".into())));
    assert!(!same(&name("bounce"), &Value::String("idle".into())));
    let frames = |n: Value| Value::Array(vec![Value::Dictionary(vec![("name".into(), n)])]);
    assert!(same(
        &frames(name("walk")),
        &frames(Value::String("walk".into()))
    ));
    // SpriteFrames gives its animations back in its own order: the same named set.
    let anim = |n: &str, fps: f64| {
        Value::Dictionary(vec![
            ("name".into(), name(n)),
            ("speed".into(), Value::Float(fps)),
        ])
    };
    let asked = Value::Array(vec![anim("walk", 5.0), anim("up", 5.0)]);
    assert!(same(
        &asked,
        &Value::Array(vec![anim("up", 5.0), anim("walk", 5.0)])
    ));
    assert!(!same(
        &asked,
        &Value::Array(vec![anim("up", 5.0), anim("walk", 4.0)])
    ));
    // SpriteFrames' frame textures as res:// strings are resources; nothing else is.
    let anims = |t: Value| {
        Value::Array(vec![Value::Dictionary(vec![
            ("name".into(), Value::String("walk".into())),
            (
                "frames".into(),
                Value::Array(vec![Value::Dictionary(vec![
                    ("texture".into(), t),
                    ("duration".into(), Value::Float(1.0)),
                ])]),
            ),
        ])])
    };
    let text = anims(Value::String("res://art/walk1.svg".into()));
    let loaded = anims(Value::Resource("res://art/walk1.svg".into()));
    assert_eq!(
        nested_resources("SpriteFrames", "animations", &text),
        loaded
    );
    assert_eq!(nested_resources("Node2D", "animations", &text), text);
    let unnamed = |x: i64| Value::Array(vec![Value::Int(x), Value::Int(1 - x)]);
    assert!(
        !same(&unnamed(0), &unnamed(1)),
        "plain arrays keep their order"
    );
    assert!(!same(&Value::Int(1), &Value::Int(2)));
    assert!(same(&Value::Int(3), &Value::Int(3)));
}

/// A Dictionary's entries are read by the types the property holds at the same keys:
/// Godot's text and arrays of points under `points`; other keys taken as sent; an entry
/// that is no form of its type refused by its key.
#[test]
fn dictionary_entries_by_the_types_held_at_their_keys() {
    let held = [("points".to_owned(), "PackedVector2Array".to_owned())];
    let value = |points: Json| Value::from_json(&json!({"points": points, "extra": "x"})).unwrap();
    let want = Value::Dictionary(vec![
        ("extra".into(), Value::String("x".into())),
        (
            "points".into(),
            Value::PackedVector2Array(vec![[0.0, 0.0], [480.0, 0.0]]),
        ),
    ]);
    let text = value(json!("PackedVector2Array(0, 0, 480, 0)"));
    assert_eq!(coerce_entries(&text, &held, &none).unwrap(), want);
    let rows = value(json!([[0, 0], [480, 0]]));
    assert_eq!(coerce_entries(&rows, &held, &none).unwrap(), want);
    // Nothing held at a key: as sent (the text stays text).
    assert_eq!(coerce_entries(&text, &[], &none).unwrap(), text);
    let e = coerce_entries(&value(json!(true)), &held, &none).unwrap_err();
    assert!(e.0.starts_with("points: "), "{e}");
}
