//! The process-table seam, as the journal uses it: the trait and every OS's
//! implementation live in `godot_mcp_os::process_table` (a crate of its own, so
//! that the per-OS code is compile-checked for macOS and Windows without
//! building this crate's C), and are re-exported here unchanged.
//!
//! Reconciliation ([`crate::launch`]) decides from the table's answers alone;
//! a table that cannot observe process identity
//! ([`ProcessTable::observable`] is `false`: Windows, where process groups do
//! not exist, and any other OS without an implementation) makes it quarantine
//! every open launch instead of guessing it gone.

pub use godot_mcp_os::process_table::{
    ArgsAndEnv, FakeProcess, FakeTable, JobState, PinnedSignal, ProcStat, ProcessTable,
    Unobservable, os, parse_procargs2, parse_stat,
};
