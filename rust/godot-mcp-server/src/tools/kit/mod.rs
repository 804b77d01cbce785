//! The shared kit below the domains: the pieces several tool domains build with, so that
//! no domain imports another (docs/architecture.md, "Layers"; `scripts/domain_imports.py`
//! in `scripts/check-layers.sh`). The kit imports no domain.
//!
//! - [`editor`]: editor edits: asking the editor over the bridge, a node edit's plan,
//!   applying a command as a journal transaction (`journaled.rs`), its staged form inside
//!   a change (`staged.rs`), the scene open/save wrapper (`around.rs`), and the shapes of
//!   an editor tool (`tool.rs`: meta, live read, scene-level authoring plan).
//! - [`common`]: small checks and the project walk that many tools share, worded once.
//! - [`godot_process`]: Godot as a child process (the binary, a supervised run,
//!   `--version`, `--doctool`, `--check-only`, `--import`).
//! - [`dotnet`]: the project's .NET side read from its files (`.csproj`, `[dotnet]`).

pub mod common;
pub mod dotnet;
pub mod editor;
pub mod godot_process;
