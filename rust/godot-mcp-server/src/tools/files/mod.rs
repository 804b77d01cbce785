//! Project files: the file-plane writes of scripts and resources ([`write`]) and
//! organizing files and folders with every reference rewritten ([`organize`]).

pub mod organize;
pub mod write;
