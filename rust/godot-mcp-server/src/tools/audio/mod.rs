//! The audio bus layout: read from disk ([`read`]) and edited on the file plane ([`edit`]).

pub mod edit;
pub mod read;
