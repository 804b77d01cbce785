//! The operating-system seam of godot-mcp: everything that differs between
//! Linux, macOS and Windows, kept small and behind one interface each, so that
//! what the Linux tests cover is most of the code.
//!
//! - [`process_table`]: process identity (pid + start time), liveness, the
//!   members of a boundary, and pinned kills, behind the [`ProcessTable`]
//!   trait: `/proc` on Linux, libproc on macOS, process handles on Windows.
//!   What an OS cannot observe is reported unobservable, and the journal then
//!   quarantines instead of guessing (a proof is derived, never assumed).
//! - `process_seam`: the types and trait of [`process_table`] (re-exported there),
//!   below the per-OS tables and the module that chooses among them.
//! - `linux`, `macos`, `windows`: the per-OS process tables (`/proc`, libproc,
//!   process handles).
//! - `group` (Unix): signalling a process group, the weak-locator boundary.
//! - [`fs`]: durability, file identity, permission bits and atomic renames.
//! - `job` (Windows): the Job Object, the boundary there.
//! - `win_handle` (Windows): the owned handle and creation time `job` and the
//!   Windows process table share.
//! - [`paths`]: host path rules (drive letters, `\`, UNC and verbatim
//!   prefixes, case-insensitive file systems) as pure logic, so every OS's
//!   rules are tested on any host.
//!
//! This crate builds no C and depends only on the OS bindings, so it is
//! compile-checked for macOS and Windows targets on a Linux machine
//! (`scripts/cross-check.sh`).

#![warn(unreachable_pub)]
pub mod paths;
mod process_seam;
pub mod process_table;

pub mod fs;
#[cfg(unix)]
pub mod group;

#[cfg(windows)]
pub mod job;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(windows)]
mod win_handle;
#[cfg(windows)]
mod windows;

pub use process_table::{
    FakeProcess, FakeTable, JobState, NONCE_ENV, PinnedSignal, ProcStat, ProcessTable, Unobservable,
};
