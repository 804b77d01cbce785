//! Scenes: reads of saved scenes from disk ([`read`], per node in [`nodes`]), live
//! edits in the editor ([`edit`]) and edits across saved scenes ([`composite`]).

pub mod composite;
pub mod edit;
pub mod nodes;
pub mod read;
