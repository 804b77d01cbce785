use super::encode::{put_string, put_u32};
use super::value::ty;
use super::*;

/// The shared name table lines up with the type numbers the codec writes.
#[test]
fn type_numbers_name_their_types() {
    for (t, name) in [
        (ty::NIL, "Nil"),
        (ty::FLOAT, "float"),
        (ty::VECTOR2I, "Vector2i"),
        (ty::TRANSFORM3D, "Transform3D"),
        (ty::STRING_NAME, "StringName"),
        (ty::OBJECT, "Object"),
        (ty::DICTIONARY, "Dictionary"),
        (ty::ARRAY, "Array"),
        (ty::PACKED_COLOR_ARRAY, "PackedColorArray"),
        (ty::PACKED_VECTOR4_ARRAY, "PackedVector4Array"),
    ] {
        assert_eq!(type_name(t), name);
    }
    assert_eq!(type_name(ty::PACKED_VECTOR4_ARRAY + 1), "unknown");
}

fn round_trip(v: Variant) {
    let bytes = encode(&v);
    assert_eq!(bytes.len() % 4, 0, "{v:?} is not padded");
    let (back, used) = decode(&bytes).unwrap();
    assert_eq!(used, bytes.len());
    assert_eq!(back, v);
}

#[test]
fn every_kind_round_trips() {
    for v in [
        Variant::Nil,
        Variant::Bool(true),
        Variant::Int(-7),
        Variant::Int(1 << 40),
        Variant::Float(0.5),
        Variant::Float(0.1),
        Variant::String("héllo".into()),
        Variant::StringName("ready".into()),
        Variant::NodePath {
            names: vec!["root".into(), "Main".into()],
            subnames: vec!["position".into()],
            absolute: true,
        },
        Variant::Vector2([1.0, 2.5]),
        Variant::Vector3i([1, -2, 3]),
        Variant::Color([0.5, 0.25, 1.0, 1.0]),
        Variant::Object(1234),
        Variant::PackedByteArray(vec![1, 2, 3]),
        Variant::PackedStringArray(vec!["a".into(), "bcd".into()]),
        Variant::PackedVector2Array(vec![[1.0, 2.0]]),
        Variant::Dictionary {
            key_type: ContainerType::Builtin(4),
            value_type: ContainerType::None,
            entries: vec![(Variant::String("k".into()), Variant::Int(1))],
        },
        Variant::Array {
            element_type: ContainerType::ClassName("Node".into()),
            items: vec![Variant::Object(9)],
        },
    ] {
        round_trip(v);
    }
}

#[test]
fn a_hostile_count_is_truncation_not_an_allocation() {
    let mut b = Vec::new();
    put_u32(&mut b, ty::ARRAY);
    put_u32(&mut b, 0x7FFF_FFFF);
    assert_eq!(decode(&b), Err(DecodeError::Truncated));
    assert_eq!(decode(&[200, 0, 0, 0]), Err(DecodeError::UnknownType(200)));
    let mut full = Vec::new();
    put_u32(&mut full, ty::OBJECT);
    put_string(&mut full, "Node");
    assert_eq!(decode(&full), Err(DecodeError::FullObject));
}
