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

mod decode;
mod encode;
#[cfg(test)]
mod tests;
mod value;

pub use decode::decode;
pub use encode::encode;
pub use value::{ContainerType, DecodeError, MAX_DEPTH, Variant, type_name};
