//! Animation: reads of saved libraries from disk ([`read`]) and live edits of an
//! AnimationPlayer's animations, tracks and keys in the editor ([`edit`]).

pub(crate) mod edit;
pub(crate) mod read;
pub(crate) mod tree;
