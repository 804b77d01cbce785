//! Resource files: materials from textures ([`material`]), every property of one
//! ([`properties`]), and what the file-plane edits
//! of one typed text resource share (`tres_edit`).

pub mod material;
pub mod properties;
pub(crate) mod tres_edit;
