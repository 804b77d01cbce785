//! Resource files: materials from textures ([`material`]) and every property of one
//! ([`properties`]). What the file-plane edits of one typed text resource share is the
//! kit's (`tools/kit/tres_edit.rs`).

pub(crate) mod material;
pub(crate) mod properties;
