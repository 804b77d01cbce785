//! Animation: reads of saved libraries from disk ([`read`]) and live edits of an
//! AnimationPlayer's animations, tracks and keys in the editor ([`edit`]).

pub mod edit;
pub mod read;
