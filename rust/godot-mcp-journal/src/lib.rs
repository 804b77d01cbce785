//! The durable journal.
#![forbid(unsafe_code)]
