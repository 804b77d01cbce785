//! The shared kit below the domains: the pieces several tool domains build with, so that
//! no domain imports another (docs/architecture.md, "Layers"; `scripts/domain_imports.py`
//! in `scripts/check-layers.sh`). The kit imports no domain.
//!
//! - [`editor`]: editor edits: asking the editor over the bridge, a node edit's plan,
//!   applying a command as a journal transaction (`journaled.rs`), its staged form inside
//!   a change (`staged.rs`), the scene open/save wrapper (`around.rs`), and the shapes of
//!   an editor tool (`tool.rs`: meta, live read, scene-level authoring plan).
//! - [`scene_doc`]: scene documents: a .tscn or .tres read and parsed from disk, its
//!   references, nodes and values, and the parse error.
//! - [`steps`]: the recipe plumbing: a tool's list of `scene.steps`, applied as one undo
//!   action (physics, navigation, particles, spatial, tile cells, create_nodes).
//! - [`common`]: small checks and the project walk that many tools share, worded once.
//! - [`godot_process`]: Godot as a child process (the binary, a supervised run,
//!   `--version`, `--doctool`, `--check-only`, `--import`).
//! - [`dotnet`]: the project's .NET side read from its files (`.csproj`, `[dotnet]`).

pub mod common;
pub mod dotnet;
pub mod editor;
pub mod godot_process;
pub mod scene_doc;
pub mod steps;
