//! Theme and UI: Theme reads from disk ([`read`]) and theme and Control edits in the
//! live editor ([`edit`]).

pub(crate) mod edit;
pub(crate) mod read;
