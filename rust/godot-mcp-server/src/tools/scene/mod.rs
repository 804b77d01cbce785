//! Scenes: reads of saved scenes from disk ([`read`], per node in [`nodes`]), live
//! edits in the editor ([`edit`]) and edits across saved scenes ([`composite`]). A
//! project file as an `[ext_resource]` of a scene or resource text is the kit's
//! (`tools/kit/ext_ref.rs`).

pub(crate) mod composite;
pub(crate) mod edit;
pub(crate) mod nodes;
pub(crate) mod read;
