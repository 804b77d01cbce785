//! A [`Variant`] to bytes (`encode_variant`), as the engine writes it.

use super::value::{
    ContainerType, FLAG_64, FLAG_OBJECT_AS_ID, TYPED_ARRAY_SHIFT, TYPED_DICT_KEY_SHIFT,
    TYPED_DICT_VALUE_SHIFT, Variant, ty,
};

/// Encodes one Variant as the engine does (see the module doc).
pub fn encode(v: &Variant) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(v, &mut out);
    out
}

pub(super) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_f32(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&(v as f32).to_le_bytes());
}

fn put_reals(out: &mut Vec<u8>, vs: &[f64]) {
    for v in vs {
        put_f32(out, *v);
    }
}

pub(super) fn put_string(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
    pad(out);
}

fn pad(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

fn put_container_type(out: &mut Vec<u8>, t: &ContainerType) {
    match t {
        ContainerType::None => {}
        ContainerType::Builtin(b) => put_u32(out, *b),
        ContainerType::ClassName(s) | ContainerType::Script(s) => put_string(out, s),
    }
}

fn encode_into(v: &Variant, out: &mut Vec<u8>) {
    // Bodies are appended after a 4-aligned header, so `pad` aligns relative to the
    // packet start as the engine's relative padding does.
    match v {
        Variant::Nil => put_u32(out, ty::NIL),
        Variant::Bool(b) => {
            put_u32(out, ty::BOOL);
            put_u32(out, u32::from(*b));
        }
        Variant::Int(i) => {
            if let Ok(small) = i32::try_from(*i) {
                put_u32(out, ty::INT);
                put_u32(out, small as u32);
            } else {
                put_u32(out, ty::INT | FLAG_64);
                out.extend_from_slice(&i.to_le_bytes());
            }
        }
        Variant::Float(f) => {
            let narrow = *f as f32;
            if f64::from(narrow) == *f || f.is_nan() && narrow.is_nan() {
                put_u32(out, ty::FLOAT);
                out.extend_from_slice(&narrow.to_le_bytes());
            } else {
                put_u32(out, ty::FLOAT | FLAG_64);
                out.extend_from_slice(&f.to_le_bytes());
            }
        }
        Variant::String(s) => {
            put_u32(out, ty::STRING);
            put_string(out, s);
        }
        Variant::StringName(s) => {
            put_u32(out, ty::STRING_NAME);
            put_string(out, s);
        }
        Variant::NodePath {
            names,
            subnames,
            absolute,
        } => {
            put_u32(out, ty::NODE_PATH);
            put_u32(out, names.len() as u32 | 0x8000_0000);
            put_u32(out, subnames.len() as u32);
            put_u32(out, u32::from(*absolute));
            for s in names.iter().chain(subnames) {
                put_string(out, s);
            }
        }
        Variant::Rid(id) => {
            put_u32(out, ty::RID);
            out.extend_from_slice(&id.to_le_bytes());
        }
        Variant::Object(0) => {
            // The engine writes an invalid or null object as nil.
            put_u32(out, ty::NIL);
        }
        Variant::Object(id) => {
            put_u32(out, ty::OBJECT | FLAG_OBJECT_AS_ID);
            out.extend_from_slice(&id.to_le_bytes());
        }
        Variant::Callable => put_u32(out, ty::CALLABLE),
        Variant::Signal { name, object } => {
            put_u32(out, ty::SIGNAL);
            put_string(out, name);
            out.extend_from_slice(&object.to_le_bytes());
        }
        Variant::Dictionary {
            key_type,
            value_type,
            entries,
        } => {
            put_u32(
                out,
                ty::DICTIONARY
                    | key_type.kind() << TYPED_DICT_KEY_SHIFT
                    | value_type.kind() << TYPED_DICT_VALUE_SHIFT,
            );
            put_container_type(out, key_type);
            put_container_type(out, value_type);
            put_u32(out, entries.len() as u32);
            for (k, v) in entries {
                encode_into(k, out);
                encode_into(v, out);
            }
        }
        Variant::Array {
            element_type,
            items,
        } => {
            put_u32(out, ty::ARRAY | element_type.kind() << TYPED_ARRAY_SHIFT);
            put_container_type(out, element_type);
            put_u32(out, items.len() as u32);
            for item in items {
                encode_into(item, out);
            }
        }
        Variant::Vector2(_)
        | Variant::Vector2i(_)
        | Variant::Rect2(_)
        | Variant::Rect2i(_)
        | Variant::Vector3(_)
        | Variant::Vector3i(_)
        | Variant::Transform2D(_)
        | Variant::Vector4(_)
        | Variant::Vector4i(_)
        | Variant::Plane(_)
        | Variant::Quaternion(_)
        | Variant::Aabb(_)
        | Variant::Basis(_)
        | Variant::Transform3D(_)
        | Variant::Projection(_)
        | Variant::Color(_) => encode_math(v, out),
        Variant::PackedByteArray(_)
        | Variant::PackedInt32Array(_)
        | Variant::PackedInt64Array(_)
        | Variant::PackedFloat32Array(_)
        | Variant::PackedFloat64Array(_)
        | Variant::PackedStringArray(_)
        | Variant::PackedVector2Array(_)
        | Variant::PackedVector3Array(_)
        | Variant::PackedColorArray(_)
        | Variant::PackedVector4Array(_) => encode_packed(v, out),
    }
}

/// The math types and Color, header and body.
fn encode_math(v: &Variant, out: &mut Vec<u8>) {
    let header = |t: u32| t;
    match v {
        Variant::Vector2(a) => {
            put_u32(out, header(ty::VECTOR2));
            put_reals(out, a);
        }
        Variant::Vector2i(a) => {
            put_u32(out, ty::VECTOR2I);
            a.iter().for_each(|v| put_u32(out, *v as u32));
        }
        Variant::Rect2(a) => {
            put_u32(out, ty::RECT2);
            put_reals(out, a);
        }
        Variant::Rect2i(a) => {
            put_u32(out, ty::RECT2I);
            a.iter().for_each(|v| put_u32(out, *v as u32));
        }
        Variant::Vector3(a) => {
            put_u32(out, ty::VECTOR3);
            put_reals(out, a);
        }
        Variant::Vector3i(a) => {
            put_u32(out, ty::VECTOR3I);
            a.iter().for_each(|v| put_u32(out, *v as u32));
        }
        Variant::Transform2D(a) => {
            put_u32(out, ty::TRANSFORM2D);
            put_reals(out, a);
        }
        Variant::Vector4(a) => {
            put_u32(out, ty::VECTOR4);
            put_reals(out, a);
        }
        Variant::Vector4i(a) => {
            put_u32(out, ty::VECTOR4I);
            a.iter().for_each(|v| put_u32(out, *v as u32));
        }
        Variant::Plane(a) => {
            put_u32(out, ty::PLANE);
            put_reals(out, a);
        }
        Variant::Quaternion(a) => {
            put_u32(out, ty::QUATERNION);
            put_reals(out, a);
        }
        Variant::Aabb(a) => {
            put_u32(out, ty::AABB);
            put_reals(out, a);
        }
        Variant::Basis(a) => {
            put_u32(out, ty::BASIS);
            put_reals(out, a);
        }
        Variant::Transform3D(a) => {
            put_u32(out, ty::TRANSFORM3D);
            put_reals(out, a);
        }
        Variant::Projection(a) => {
            put_u32(out, ty::PROJECTION);
            put_reals(out, a);
        }
        Variant::Color(c) => {
            put_u32(out, ty::COLOR);
            c.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        _ => unreachable!("encode_into passes only the math types here"),
    }
}

/// The packed arrays, header and body.
fn encode_packed(v: &Variant, out: &mut Vec<u8>) {
    match v {
        Variant::PackedByteArray(b) => {
            put_u32(out, ty::PACKED_BYTE_ARRAY);
            put_u32(out, b.len() as u32);
            out.extend_from_slice(b);
            pad(out);
        }
        Variant::PackedInt32Array(a) => {
            put_u32(out, ty::PACKED_INT32_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter().for_each(|v| put_u32(out, *v as u32));
        }
        Variant::PackedInt64Array(a) => {
            put_u32(out, ty::PACKED_INT64_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        Variant::PackedFloat32Array(a) => {
            put_u32(out, ty::PACKED_FLOAT32_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        Variant::PackedFloat64Array(a) => {
            put_u32(out, ty::PACKED_FLOAT64_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        Variant::PackedStringArray(a) => {
            put_u32(out, ty::PACKED_STRING_ARRAY);
            put_u32(out, a.len() as u32);
            for s in a {
                put_u32(out, s.len() as u32 + 1);
                out.extend_from_slice(s.as_bytes());
                out.push(0);
                pad(out);
            }
        }
        Variant::PackedVector2Array(a) => {
            put_u32(out, ty::PACKED_VECTOR2_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter().for_each(|v| put_reals(out, v));
        }
        Variant::PackedVector3Array(a) => {
            put_u32(out, ty::PACKED_VECTOR3_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter().for_each(|v| put_reals(out, v));
        }
        Variant::PackedColorArray(a) => {
            put_u32(out, ty::PACKED_COLOR_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter()
                .flatten()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        Variant::PackedVector4Array(a) => {
            put_u32(out, ty::PACKED_VECTOR4_ARRAY);
            put_u32(out, a.len() as u32);
            a.iter().for_each(|v| put_reals(out, v));
        }
        _ => unreachable!("encode_into passes only the packed arrays here"),
    }
}
