//! Godot 4's binary Variant encoding (`core/io/marshalls.cpp`: `encode_variant` /
//! `decode_variant`), the body of every packet of the engine's remote-debug protocol.
//!
//! Little-endian throughout. A value is a 32-bit header (byte 0 the `Variant::Type`,
//! bits 16–19 flags: 64-bit numbers, object-as-id, typed-container kinds) and a body
//! padded to 4 bytes. Objects travel as instance ids (`full_objects = false`, what the
//! debugger sends); a full object body is refused, never guessed at.
//!
//! Encoding follows the engine's choices so a decoded packet re-encodes to the same
//! bytes: an int or float takes 32 bits when it fits exactly, math types are written
//! single-precision (`real_t` is `float` in standard builds), colors are always
//! single-precision. Decoding accepts either width.

use serde_json::{Map, Number, Value as Json, json};

/// Deepest nesting decoded (the engine's own limit is 1024; a debugger value is shallow).
pub const MAX_DEPTH: usize = 128;

const TYPE_MASK: u32 = 0xFF;
const FLAG_64: u32 = 1 << 16;
const FLAG_OBJECT_AS_ID: u32 = 1 << 16;
const TYPED_ARRAY_SHIFT: u32 = 16;
const TYPED_DICT_KEY_SHIFT: u32 = 16;
const TYPED_DICT_VALUE_SHIFT: u32 = 18;

/// `Variant::Type` numbers of Godot 4.
mod ty {
    pub const NIL: u32 = 0;
    pub const BOOL: u32 = 1;
    pub const INT: u32 = 2;
    pub const FLOAT: u32 = 3;
    pub const STRING: u32 = 4;
    pub const VECTOR2: u32 = 5;
    pub const VECTOR2I: u32 = 6;
    pub const RECT2: u32 = 7;
    pub const RECT2I: u32 = 8;
    pub const VECTOR3: u32 = 9;
    pub const VECTOR3I: u32 = 10;
    pub const TRANSFORM2D: u32 = 11;
    pub const VECTOR4: u32 = 12;
    pub const VECTOR4I: u32 = 13;
    pub const PLANE: u32 = 14;
    pub const QUATERNION: u32 = 15;
    pub const AABB: u32 = 16;
    pub const BASIS: u32 = 17;
    pub const TRANSFORM3D: u32 = 18;
    pub const PROJECTION: u32 = 19;
    pub const COLOR: u32 = 20;
    pub const STRING_NAME: u32 = 21;
    pub const NODE_PATH: u32 = 22;
    pub const RID: u32 = 23;
    pub const OBJECT: u32 = 24;
    pub const CALLABLE: u32 = 25;
    pub const SIGNAL: u32 = 26;
    pub const DICTIONARY: u32 = 27;
    pub const ARRAY: u32 = 28;
    pub const PACKED_BYTE_ARRAY: u32 = 29;
    pub const PACKED_INT32_ARRAY: u32 = 30;
    pub const PACKED_INT64_ARRAY: u32 = 31;
    pub const PACKED_FLOAT32_ARRAY: u32 = 32;
    pub const PACKED_FLOAT64_ARRAY: u32 = 33;
    pub const PACKED_STRING_ARRAY: u32 = 34;
    pub const PACKED_VECTOR2_ARRAY: u32 = 35;
    pub const PACKED_VECTOR3_ARRAY: u32 = 36;
    pub const PACKED_COLOR_ARRAY: u32 = 37;
    pub const PACKED_VECTOR4_ARRAY: u32 = 38;
}

/// The element type of a typed Array or Dictionary (`ContainerTypeKind`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ContainerType {
    /// Untyped.
    #[default]
    None,
    /// A built-in `Variant::Type`.
    Builtin(u32),
    /// An object class (the debugger writes `EncodedObjectAsID`).
    ClassName(String),
    /// A script path (full-object encoding only).
    Script(String),
}

impl ContainerType {
    fn kind(&self) -> u32 {
        match self {
            Self::None => 0,
            Self::Builtin(_) => 1,
            Self::ClassName(_) => 2,
            Self::Script(_) => 3,
        }
    }
}

godot_mcp_formats::godot_value_enum! {
/// One Godot value as the engine's binary encoding carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum Variant {
    NodePath {
        names: Vec<String>,
        subnames: Vec<String>,
        absolute: bool,
    },
    Vector2([f64; 2]),
    Vector2i([i32; 2]),
    Rect2([f64; 4]),
    Rect2i([i32; 4]),
    Vector3([f64; 3]),
    Vector3i([i32; 3]),
    Transform2D([f64; 6]),
    Vector4([f64; 4]),
    Vector4i([i32; 4]),
    Plane([f64; 4]),
    Quaternion([f64; 4]),
    Aabb([f64; 6]),
    Basis([f64; 9]),
    Transform3D([f64; 12]),
    Projection([f64; 16]),
    Color([f32; 4]),
    Rid(u64),
    /// An object by instance id (0: null). The debugger never sends object bodies.
    Object(u64),
    /// A Callable: the engine encodes none of it.
    Callable,
    Signal {
        name: String,
        object: u64,
    },
    Dictionary {
        key_type: ContainerType,
        value_type: ContainerType,
        entries: Vec<(Variant, Variant)>,
    },
    Array {
        element_type: ContainerType,
        items: Vec<Variant>,
    },
    PackedByteArray(Vec<u8>),
    PackedInt32Array(Vec<i32>),
    PackedInt64Array(Vec<i64>),
    PackedFloat32Array(Vec<f32>),
    PackedFloat64Array(Vec<f64>),
    PackedStringArray(Vec<String>),
    PackedVector2Array(Vec<[f64; 2]>),
    PackedVector3Array(Vec<[f64; 3]>),
    PackedColorArray(Vec<[f32; 4]>),
    PackedVector4Array(Vec<[f64; 4]>),
}
}

/// Why bytes are not a Variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end inside a value.
    Truncated,
    /// A header names a type Godot 4.4 does not have.
    UnknownType(u32),
    /// A string is not UTF-8.
    BadUtf8,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A full object body (only ids are accepted).
    FullObject,
    /// A NodePath in the pre-4.0 string form, or a bad container-type kind.
    Malformed(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated => f.write_str("the bytes end inside a value"),
            Self::UnknownType(t) => write!(f, "unknown Variant type {t}"),
            Self::BadUtf8 => f.write_str("a string is not UTF-8"),
            Self::TooDeep => write!(f, "nested deeper than {MAX_DEPTH} levels"),
            Self::FullObject => f.write_str("a full object body (only instance ids are accepted)"),
            Self::Malformed(what) => write!(f, "malformed {what}"),
        }
    }
}

impl std::error::Error for DecodeError {}

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

/// Encodes one Variant as the engine does (see the module doc).
pub fn encode(v: &Variant) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(v, &mut out);
    out
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
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

fn put_string(out: &mut Vec<u8>, s: &str) {
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
    let header = |t: u32| t;
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
    }
}

fn num(f: f64) -> Json {
    Number::from_f64(f).map_or(Json::Null, Json::Number)
}

fn reals(a: &[f64]) -> Json {
    Json::Array(a.iter().map(|v| num(*v)).collect())
}

impl Variant {
    /// An untyped Array.
    pub fn array(items: Vec<Variant>) -> Self {
        Self::Array {
            element_type: ContainerType::None,
            items,
        }
    }

    /// The items of an Array, typed or not.
    pub fn as_array(&self) -> Option<&[Variant]> {
        match self {
            Self::Array { items, .. } => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) | Self::StringName(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The engine's type name (`Variant::get_type_name`).
    pub fn type_name(&self) -> &'static str {
        type_name(self.type_id())
    }

    /// The `Variant::Type` number.
    pub fn type_id(&self) -> u32 {
        match self {
            Self::Nil => ty::NIL,
            Self::Bool(_) => ty::BOOL,
            Self::Int(_) => ty::INT,
            Self::Float(_) => ty::FLOAT,
            Self::String(_) => ty::STRING,
            Self::StringName(_) => ty::STRING_NAME,
            Self::NodePath { .. } => ty::NODE_PATH,
            Self::Vector2(_) => ty::VECTOR2,
            Self::Vector2i(_) => ty::VECTOR2I,
            Self::Rect2(_) => ty::RECT2,
            Self::Rect2i(_) => ty::RECT2I,
            Self::Vector3(_) => ty::VECTOR3,
            Self::Vector3i(_) => ty::VECTOR3I,
            Self::Transform2D(_) => ty::TRANSFORM2D,
            Self::Vector4(_) => ty::VECTOR4,
            Self::Vector4i(_) => ty::VECTOR4I,
            Self::Plane(_) => ty::PLANE,
            Self::Quaternion(_) => ty::QUATERNION,
            Self::Aabb(_) => ty::AABB,
            Self::Basis(_) => ty::BASIS,
            Self::Transform3D(_) => ty::TRANSFORM3D,
            Self::Projection(_) => ty::PROJECTION,
            Self::Color(_) => ty::COLOR,
            Self::Rid(_) => ty::RID,
            Self::Object(_) => ty::OBJECT,
            Self::Callable => ty::CALLABLE,
            Self::Signal { .. } => ty::SIGNAL,
            Self::Dictionary { .. } => ty::DICTIONARY,
            Self::Array { .. } => ty::ARRAY,
            Self::PackedByteArray(_) => ty::PACKED_BYTE_ARRAY,
            Self::PackedInt32Array(_) => ty::PACKED_INT32_ARRAY,
            Self::PackedInt64Array(_) => ty::PACKED_INT64_ARRAY,
            Self::PackedFloat32Array(_) => ty::PACKED_FLOAT32_ARRAY,
            Self::PackedFloat64Array(_) => ty::PACKED_FLOAT64_ARRAY,
            Self::PackedStringArray(_) => ty::PACKED_STRING_ARRAY,
            Self::PackedVector2Array(_) => ty::PACKED_VECTOR2_ARRAY,
            Self::PackedVector3Array(_) => ty::PACKED_VECTOR3_ARRAY,
            Self::PackedColorArray(_) => ty::PACKED_COLOR_ARRAY,
            Self::PackedVector4Array(_) => ty::PACKED_VECTOR4_ARRAY,
        }
    }

    /// The JSON form the bridge uses for values (scalars as themselves, arrays as
    /// arrays, string-keyed dictionaries as objects, everything else tagged by
    /// `"$type"`), extended to every type the debugger carries. An object is
    /// `{"$type": "Object", "id": …}`: its instance id in the game.
    pub fn to_json(&self) -> Json {
        match self {
            Self::Nil => Json::Null,
            Self::Bool(b) => json!(b),
            Self::Int(i) => json!(i),
            Self::Float(f) => num(*f),
            Self::String(s) => json!(s),
            Self::StringName(s) => json!({"$type": "StringName", "name": s}),
            Self::NodePath {
                names,
                subnames,
                absolute,
            } => {
                let mut p = if *absolute {
                    "/".to_string()
                } else {
                    String::new()
                };
                p.push_str(&names.join("/"));
                for s in subnames {
                    p.push(':');
                    p.push_str(s);
                }
                json!({"$type": "NodePath", "path": p})
            }
            Self::Vector2([x, y]) => json!({"$type": "Vector2", "x": num(*x), "y": num(*y)}),
            Self::Vector2i([x, y]) => json!({"$type": "Vector2i", "x": x, "y": y}),
            Self::Vector3([x, y, z]) => {
                json!({"$type": "Vector3", "x": num(*x), "y": num(*y), "z": num(*z)})
            }
            Self::Vector3i([x, y, z]) => json!({"$type": "Vector3i", "x": x, "y": y, "z": z}),
            Self::Color([r, g, b, a]) => json!({"$type": "Color", "r": num(f64::from(*r)),
                "g": num(f64::from(*g)), "b": num(f64::from(*b)), "a": num(f64::from(*a))}),
            Self::Transform2D(a) => json!({"$type": "Transform2D", "x": reals(&a[0..2]),
                "y": reals(&a[2..4]), "origin": reals(&a[4..6])}),
            Self::Transform3D(a) => json!({"$type": "Transform3D",
                "basis": [reals(&a[0..3]), reals(&a[3..6]), reals(&a[6..9])],
                "origin": reals(&a[9..12])}),
            Self::Rect2(a) => json!({"$type": "Rect2", "components": reals(a)}),
            Self::Rect2i(a) => json!({"$type": "Rect2i", "components": a}),
            Self::Vector4(a) => json!({"$type": "Vector4", "components": reals(a)}),
            Self::Vector4i(a) => json!({"$type": "Vector4i", "components": a}),
            Self::Plane(a) => json!({"$type": "Plane", "components": reals(a)}),
            Self::Quaternion(a) => json!({"$type": "Quaternion", "components": reals(a)}),
            Self::Aabb(a) => json!({"$type": "AABB", "components": reals(a)}),
            Self::Basis(a) => json!({"$type": "Basis", "components": reals(a)}),
            Self::Projection(a) => json!({"$type": "Projection", "components": reals(a)}),
            Self::Rid(id) => json!({"$type": "RID", "id": id}),
            Self::Object(id) => json!({"$type": "Object", "id": id}),
            Self::Callable => json!({"$type": "Callable"}),
            Self::Signal { name, object } => {
                json!({"$type": "Signal", "name": name, "object_id": object})
            }
            Self::Dictionary { entries, .. } => {
                if entries.iter().all(|(k, _)| matches!(k, Self::String(_))) {
                    Json::Object(
                        entries
                            .iter()
                            .map(|(k, v)| (k.as_str().unwrap_or("").to_string(), v.to_json()))
                            .collect::<Map<_, _>>(),
                    )
                } else {
                    json!({"$type": "Dictionary", "entries": entries.iter()
                        .map(|(k, v)| json!([k.to_json(), v.to_json()])).collect::<Vec<_>>()})
                }
            }
            Self::Array { items, .. } => Json::Array(items.iter().map(Self::to_json).collect()),
            Self::PackedByteArray(b) => json!({"$type": "PackedByteArray", "items": b}),
            Self::PackedInt32Array(a) => json!({"$type": "PackedInt32Array", "items": a}),
            Self::PackedInt64Array(a) => json!({"$type": "PackedInt64Array", "items": a}),
            Self::PackedFloat32Array(a) => json!({"$type": "PackedFloat32Array",
                "items": a.iter().map(|v| num(f64::from(*v))).collect::<Vec<_>>()}),
            Self::PackedFloat64Array(a) => {
                json!({"$type": "PackedFloat64Array", "items": reals(a)})
            }
            Self::PackedStringArray(a) => json!({"$type": "PackedStringArray", "items": a}),
            Self::PackedVector2Array(a) => json!({"$type": "PackedVector2Array",
                "items": a.iter().map(|v| reals(v)).collect::<Vec<_>>()}),
            Self::PackedVector3Array(a) => json!({"$type": "PackedVector3Array",
                "items": a.iter().map(|v| reals(v)).collect::<Vec<_>>()}),
            Self::PackedColorArray(a) => json!({"$type": "PackedColorArray",
                "items": a.iter().map(|c| c.iter().map(|v| num(f64::from(*v))).collect::<Vec<_>>())
                    .collect::<Vec<_>>()}),
            Self::PackedVector4Array(a) => json!({"$type": "PackedVector4Array",
                "items": a.iter().map(|v| reals(v)).collect::<Vec<_>>()}),
        }
    }
}

/// `Variant::get_type_name` for a type number (the debugger sends the number).
pub fn type_name(t: u32) -> &'static str {
    godot_mcp_formats::variant::TYPE_NAMES
        .get(t as usize)
        .copied()
        .unwrap_or("unknown")
}

#[cfg(test)]
mod tests {
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
}
