//! Tile maps: cells and tile sets read from disk ([`read`]) and cell edits in the
//! live editor ([`edit`]).

pub(crate) mod edit;
pub(crate) mod read;
