//! The shared kit below the domains: the pieces several tool domains build with, so that
//! no domain imports another (docs/architecture.md, "Layers"; `scripts/domain_imports.py`
//! in `scripts/check-layers.sh`). The kit imports no domain.
//!
//! - [`common`]: small checks and the project walk that many tools share, worded once.
//! - [`godot_process`]: Godot as a child process (the binary, a supervised run,
//!   `--version`, `--doctool`, `--check-only`, `--import`).
//! - [`dotnet`]: the project's .NET side read from its files (`.csproj`, `[dotnet]`).

pub mod common;
pub mod dotnet;
pub mod godot_process;
