//! Project files: the file-plane writes of scripts and resources ([`write`](mod@write)) and
//! organizing files and folders with every reference rewritten ([`organize`]), the
//! editor's file system and asset imports ([`import`]).

pub(crate) mod import;
pub(crate) mod organize;
pub(crate) mod write;
