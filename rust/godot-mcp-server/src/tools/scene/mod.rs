//! Scenes: reads of saved scenes from disk ([`read`], per node in [`nodes`]), live
//! edits in the editor ([`edit`]) and edits across saved scenes ([`composite`]);
//! a project file as an `[ext_resource]` of a scene or resource text (`ext_ref`).

pub mod composite;
pub mod edit;
pub(crate) mod ext_ref;
pub mod nodes;
pub mod read;
