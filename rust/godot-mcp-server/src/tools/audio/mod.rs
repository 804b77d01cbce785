//! The audio bus layout: read from disk ([`read`]) and edited on the file plane ([`edit`]).

pub(crate) mod edit;
pub(crate) mod read;
