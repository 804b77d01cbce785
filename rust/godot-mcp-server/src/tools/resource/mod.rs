//! Resource files: materials from textures ([`material`]) and what the file-plane edits
//! of one typed text resource share (`tres_edit`).

pub mod material;
pub(crate) mod tres_edit;
