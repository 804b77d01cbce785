//! Bytes to a [`Variant`] (`decode_variant`).

use super::value::{
    ContainerType, DecodeError, FLAG_64, FLAG_OBJECT_AS_ID, MAX_DEPTH, TYPE_MASK,
    TYPED_ARRAY_SHIFT, TYPED_DICT_KEY_SHIFT, TYPED_DICT_VALUE_SHIFT, Variant, ty,
};

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated)?;
        let s = self.buf.get(self.pos..end).ok_or(DecodeError::Truncated)?;
        self.pos = end;
        Ok(s)
    }
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(self.u32()? as i32)
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn f32(&mut self) -> Result<f32, DecodeError> {
        Ok(f32::from_bits(self.u32()?))
    }
    fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A real: 64-bit when the header says so.
    fn real(&mut self, wide: bool) -> Result<f64, DecodeError> {
        if wide {
            self.f64()
        } else {
            Ok(f64::from(self.f32()?))
        }
    }
    fn reals<const N: usize>(&mut self, wide: bool) -> Result<[f64; N], DecodeError> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.real(wide)?;
        }
        Ok(out)
    }
    fn i32s<const N: usize>(&mut self) -> Result<[i32; N], DecodeError> {
        let mut out = [0; N];
        for v in &mut out {
            *v = self.i32()?;
        }
        Ok(out)
    }
    fn color(&mut self) -> Result<[f32; 4], DecodeError> {
        Ok([self.f32()?, self.f32()?, self.f32()?, self.f32()?])
    }
    /// A length-prefixed UTF-8 string padded to 4 bytes.
    fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        self.take((4 - len % 4) % 4)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::BadUtf8)
    }
    /// A count whose elements take at least `min_size` bytes each: bounded by what is
    /// left, so a hostile count cannot make the decoder allocate.
    fn count(&mut self, min_size: usize) -> Result<usize, DecodeError> {
        let n = (self.u32()? & 0x7FFF_FFFF) as usize;
        if n.saturating_mul(min_size.max(1)) > self.left() {
            return Err(DecodeError::Truncated);
        }
        Ok(n)
    }
    fn container_type(&mut self, kind: u32) -> Result<ContainerType, DecodeError> {
        Ok(match kind {
            0 => ContainerType::None,
            1 => {
                let t = self.u32()?;
                if t > ty::PACKED_VECTOR4_ARRAY {
                    return Err(DecodeError::UnknownType(t));
                }
                ContainerType::Builtin(t)
            }
            2 => ContainerType::ClassName(self.string()?),
            _ => ContainerType::Script(self.string()?),
        })
    }
}

/// Decodes one Variant from the start of `buf`; returns it and the bytes it took.
pub fn decode(buf: &[u8]) -> Result<(Variant, usize), DecodeError> {
    let mut r = Reader { buf, pos: 0 };
    let v = decode_one(&mut r, 0)?;
    Ok((v, r.pos))
}

fn decode_one(r: &mut Reader<'_>, depth: usize) -> Result<Variant, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::TooDeep);
    }
    let header = r.u32()?;
    let wide = header & FLAG_64 != 0;
    Ok(match header & TYPE_MASK {
        ty::NIL => Variant::Nil,
        ty::BOOL => Variant::Bool(r.u32()? != 0),
        ty::INT => Variant::Int(if wide {
            r.u64()? as i64
        } else {
            i64::from(r.i32()?)
        }),
        ty::FLOAT => Variant::Float(r.real(wide)?),
        ty::STRING => Variant::String(r.string()?),
        ty::STRING_NAME => Variant::StringName(r.string()?),
        ty::VECTOR2 => Variant::Vector2(r.reals(wide)?),
        ty::VECTOR2I => Variant::Vector2i(r.i32s()?),
        ty::RECT2 => Variant::Rect2(r.reals(wide)?),
        ty::RECT2I => Variant::Rect2i(r.i32s()?),
        ty::VECTOR3 => Variant::Vector3(r.reals(wide)?),
        ty::VECTOR3I => Variant::Vector3i(r.i32s()?),
        ty::TRANSFORM2D => Variant::Transform2D(r.reals(wide)?),
        ty::VECTOR4 => Variant::Vector4(r.reals(wide)?),
        ty::VECTOR4I => Variant::Vector4i(r.i32s()?),
        ty::PLANE => Variant::Plane(r.reals(wide)?),
        ty::QUATERNION => Variant::Quaternion(r.reals(wide)?),
        ty::AABB => Variant::Aabb(r.reals(wide)?),
        ty::BASIS => Variant::Basis(r.reals(wide)?),
        ty::TRANSFORM3D => Variant::Transform3D(r.reals(wide)?),
        ty::PROJECTION => Variant::Projection(r.reals(wide)?),
        ty::COLOR => Variant::Color(r.color()?),
        ty::NODE_PATH => {
            let first = r.u32()?;
            if first & 0x8000_0000 == 0 {
                return Err(DecodeError::Malformed("NodePath (old string form)"));
            }
            let names = (first & 0x7FFF_FFFF) as usize;
            let mut subnames = r.u32()? as usize;
            let flags = r.u32()?;
            if flags & 2 != 0 {
                subnames += 1;
            }
            if (names + subnames).saturating_mul(4) > r.left() {
                return Err(DecodeError::Truncated);
            }
            let mut all = Vec::with_capacity(names + subnames);
            for _ in 0..names + subnames {
                all.push(r.string()?);
            }
            let subnames = all.split_off(names);
            Variant::NodePath {
                names: all,
                subnames,
                absolute: flags & 1 != 0,
            }
        }
        ty::RID => Variant::Rid(r.u64()?),
        ty::OBJECT => {
            if header & FLAG_OBJECT_AS_ID == 0 {
                return Err(DecodeError::FullObject);
            }
            Variant::Object(r.u64()?)
        }
        ty::CALLABLE => Variant::Callable,
        ty::SIGNAL => Variant::Signal {
            name: r.string()?,
            object: r.u64()?,
        },
        ty::DICTIONARY => {
            let key_type = r.container_type((header >> TYPED_DICT_KEY_SHIFT) & 0b11)?;
            let value_type = r.container_type((header >> TYPED_DICT_VALUE_SHIFT) & 0b11)?;
            let n = r.count(8)?;
            let mut entries = Vec::with_capacity(n);
            for _ in 0..n {
                let k = decode_one(r, depth + 1)?;
                let v = decode_one(r, depth + 1)?;
                entries.push((k, v));
            }
            Variant::Dictionary {
                key_type,
                value_type,
                entries,
            }
        }
        ty::ARRAY => {
            let element_type = r.container_type((header >> TYPED_ARRAY_SHIFT) & 0b11)?;
            let n = r.count(4)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(decode_one(r, depth + 1)?);
            }
            Variant::Array {
                element_type,
                items,
            }
        }
        other => decode_packed(r, other, wide)?,
    })
}

/// The packed arrays (and an unknown type number, an error), after their header.
fn decode_packed(r: &mut Reader<'_>, t: u32, wide: bool) -> Result<Variant, DecodeError> {
    Ok(match t {
        ty::PACKED_BYTE_ARRAY => {
            let n = r.count(1)?;
            let v = r.take(n)?.to_vec();
            r.take((4 - n % 4) % 4)?;
            Variant::PackedByteArray(v)
        }
        ty::PACKED_INT32_ARRAY => {
            let n = r.count(4)?;
            Variant::PackedInt32Array((0..n).map(|_| r.i32()).collect::<Result<_, _>>()?)
        }
        ty::PACKED_INT64_ARRAY => {
            let n = r.count(8)?;
            Variant::PackedInt64Array(
                (0..n)
                    .map(|_| r.u64().map(|v| v as i64))
                    .collect::<Result<_, _>>()?,
            )
        }
        ty::PACKED_FLOAT32_ARRAY => {
            let n = r.count(4)?;
            Variant::PackedFloat32Array((0..n).map(|_| r.f32()).collect::<Result<_, _>>()?)
        }
        ty::PACKED_FLOAT64_ARRAY => {
            let n = r.count(8)?;
            Variant::PackedFloat64Array((0..n).map(|_| r.f64()).collect::<Result<_, _>>()?)
        }
        ty::PACKED_STRING_ARRAY => {
            let n = r.count(4)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                // Each element is written with its NUL terminator counted in.
                let mut s = r.string()?;
                if s.ends_with('\0') {
                    s.pop();
                }
                v.push(s);
            }
            Variant::PackedStringArray(v)
        }
        ty::PACKED_VECTOR2_ARRAY => {
            let n = r.count(if wide { 16 } else { 8 })?;
            Variant::PackedVector2Array((0..n).map(|_| r.reals(wide)).collect::<Result<_, _>>()?)
        }
        ty::PACKED_VECTOR3_ARRAY => {
            let n = r.count(if wide { 24 } else { 12 })?;
            Variant::PackedVector3Array((0..n).map(|_| r.reals(wide)).collect::<Result<_, _>>()?)
        }
        ty::PACKED_COLOR_ARRAY => {
            let n = r.count(16)?;
            Variant::PackedColorArray((0..n).map(|_| r.color()).collect::<Result<_, _>>()?)
        }
        ty::PACKED_VECTOR4_ARRAY => {
            let n = r.count(if wide { 32 } else { 16 })?;
            Variant::PackedVector4Array((0..n).map(|_| r.reals(wide)).collect::<Result<_, _>>()?)
        }
        other => return Err(DecodeError::UnknownType(other)),
    })
}
