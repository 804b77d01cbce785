//! The shared kit below the domains: the pieces several tool domains build with, so that
//! no domain imports another (docs/architecture.md, "Layers"; `scripts/domain_imports.py`
//! in `scripts/check-layers.sh`). The kit imports no domain.
//!
//! - [`editor`]: editor edits: asking the editor over the bridge, a node edit's plan,
//!   applying a command as a journal transaction (`journaled.rs`), its staged form inside
//!   a change (`staged.rs`), the scene open/save wrapper (`around.rs`), and the shapes of
//!   an editor tool (`tool.rs`: meta, live read, scene-level authoring plan).
//! - [`file_write`]: file writes through the one write seam: a planned write, a script
//!   write and its parse check, telling the editor of the files written.
//! - [`tres_edit`]: what the file-plane edits of one typed `.tres` share (audio bus
//!   layouts, VisualShader graphs).
//! - [`ext_ref`]: a project file as an `[ext_resource]` of a scene or resource text (its
//!   type and uid, the edit that adds the section), and ids derived, not drawn.
//! - [`page`]: paging of list answers (a typed `Page`, or the paging fields of a list)
//!   and the blocking pool disk walks run on.
//! - [`scene_doc`]: scene documents: a .tscn or .tres read and parsed from disk, its
//!   references, nodes and values, and the parse error.
//! - [`steps`]: the recipe plumbing: a tool's list of `scene.steps`, applied as one undo
//!   action (physics, navigation, particles, spatial, tile cells, create_nodes).
//! - [`cells`]: a live read of a grid node's cells (GridMap, TileMapLayer).
//! - [`class_db`]: the class table, Godot's API description from the project's binary
//!   (`--doctool`), loaded once per engine and cached.
//! - [`common`]: small checks and the project walk that many tools share, worded once.
//! - [`godot_process`]: Godot as a child process (the binary, a supervised run,
//!   `--version`, `--doctool`, `--check-only`, `--import`).
//! - [`cs_script`]: C# scripts as Godot's source generators see them (the class bound
//!   to the file, its base, exports, signals), and attach_script's rule for a `.cs`.
//! - [`dotnet_build`]: .NET as a child process: the SDK, a supervised `dotnet build` and its
//!   diagnostics, and the `check: "build"` of the writes that take it.
//! - [`dotnet`]: the project's .NET side read from its files (`.csproj`, `[dotnet]`).
//! - [`project_godot`]: project.godot as a file the tools edit: read, a planned edit
//!   through the write seam, a key removed, and the shapes those edits answer with.
//! - [`game`]: the running game: a session looked up and how it ended, its probe, its
//!   held clock, headless or rendered, the shapes of a tool on it.

pub(crate) mod cells;
pub(crate) mod class_cache;
pub(crate) mod class_db;
pub(crate) mod common;
pub(crate) mod cs_script;
pub(crate) mod dotnet;
pub(crate) mod dotnet_build;
pub(crate) mod editor;
pub(crate) mod ext_ref;
pub(crate) mod file_write;
pub(crate) mod game;
pub(crate) mod godot_process;
pub(crate) mod page;
pub(crate) mod project_godot;
pub(crate) mod scene_doc;
pub(crate) mod steps;
pub(crate) mod tres_edit;
