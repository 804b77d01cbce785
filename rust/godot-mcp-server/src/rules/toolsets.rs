//! Toolsets: the families of tools enabled or disabled together, and the operator's
//! selection of them.

use std::collections::BTreeSet;

use serde::Serialize;

/// A family of tools, enabled or disabled together. The declaration order is the
/// order of `tools/list` and of `list_toolsets`: the default core first.
///
/// Toolsets are split by what an agent needs at once (reading a scene vs editing
/// one), so an agent enables a few tools rather than a whole plane; a new family of
/// tools is a new variant here, with its purpose line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Toolset {
    /// Scene trees and node properties.
    SceneRead,
    /// Script and shader text.
    ScriptRead,
    /// Toolset discovery and switching; always enabled.
    Toolsets,
    /// One-call edits: create_nodes opens (or creates), edits and saves a scene;
    /// write_script writes a script (parse-checked); set_setting sets project.godot.
    Build,
    /// project.godot and the file listing.
    Project,
    /// Resource files (.tres).
    ResourceRead,
    /// Undo and redo in the edited scene.
    UndoRedo,
    /// What happened: the journal (transactions, the write gate) and the editor's undo
    /// history.
    Journal,
    /// Open, create, save, close and reload scenes in the editor.
    SceneFiles,
    /// Node edits in the edited scene.
    SceneEdit,
    /// Script files and attaching them.
    ScriptEdit,
    /// Resource file writes.
    ResourceEdit,
    /// project.godot settings and autoloads.
    Settings,
    /// The input map (actions and their events).
    InputMap,
    /// run_commands.
    Batch,
    /// Running games and observing or driving them (the process plane).
    Runtime,
    /// A supervised Godot editor process.
    EditorProcess,
    /// Exporting builds.
    Export,
    /// Project analysis from disk: references, cycles, unused files, integrity, search.
    Analysis,
    /// Per-node reads of saved scenes: groups, connections, stored properties.
    SceneInspect,
    /// Animation libraries, animations, tracks and keys.
    Animation,
    /// The audio bus layout.
    Audio,
    /// Theme resources.
    Theme,
    /// TileMapLayer cells and tile sets.
    Tilemap,
    /// The engine's class reference (--doctool).
    ClassRef,
    /// The engine's parse check, the script listing, a node's script.
    ScriptCheck,
    /// GDScript test runs (GUT, gdUnit4) and assertions on a running game.
    Tests,
    /// Physics bodies, collision shapes, layers and masks, raycasts (live editor).
    Physics,
    /// Navigation regions, agents, layers, baking (live editor).
    Navigation,
    /// GPU and CPU particles, process materials, colour ramps, presets (live editor).
    Particles,
    /// 3D: meshes, cameras, lights, environment, GridMap cells (live editor).
    Spatial,
    /// Controls in the edited scene: theme overrides, anchors, containers.
    Ui,
    /// Breakpoints, steps, the stack and variables of a running game (remote debug).
    Debugger,
    /// Performance monitors of a running game or the editor.
    Profiling,
    /// A running game's scene tree, UI elements and per-frame property samples.
    GameInspect,
    /// The editor's file system: rescans, import status, importing assets.
    Filesystem,
    /// Shader files, their compile check, and shader materials in the edited scene.
    Shaders,
    /// One edit or query across many saved scenes.
    Composite,
    /// A new project's skeleton.
    Scaffold,
    /// Material resources built from textures.
    Materials,
    /// Moving, copying and organizing project files and folders.
    Files,
    /// VisualShader graphs: nodes, connections, node properties.
    VisualShader,
    /// C# projects: `dotnet build` with MSBuild's diagnostics.
    Csharp,
}

impl Toolset {
    pub const ALL: [Toolset; 43] = [
        Toolset::SceneRead,
        Toolset::ScriptRead,
        Toolset::Toolsets,
        Toolset::Build,
        Toolset::Project,
        Toolset::ResourceRead,
        Toolset::UndoRedo,
        Toolset::Journal,
        Toolset::SceneFiles,
        Toolset::SceneEdit,
        Toolset::ScriptEdit,
        Toolset::ResourceEdit,
        Toolset::Settings,
        Toolset::InputMap,
        Toolset::Batch,
        Toolset::Runtime,
        Toolset::EditorProcess,
        Toolset::Export,
        Toolset::Analysis,
        Toolset::SceneInspect,
        Toolset::Animation,
        Toolset::Audio,
        Toolset::Theme,
        Toolset::Tilemap,
        Toolset::ClassRef,
        Toolset::ScriptCheck,
        Toolset::Tests,
        Toolset::Physics,
        Toolset::Navigation,
        Toolset::Particles,
        Toolset::Spatial,
        Toolset::Ui,
        Toolset::Debugger,
        Toolset::Profiling,
        Toolset::GameInspect,
        Toolset::Filesystem,
        Toolset::Shaders,
        Toolset::Composite,
        Toolset::Scaffold,
        Toolset::Materials,
        Toolset::Files,
        Toolset::VisualShader,
        Toolset::Csharp,
    ];

    /// Enabled when the operator names none: what agents were measured to call
    /// (docs/performance.md, 114 task runs): reading scenes and scripts, discovery, and
    /// the one-call edits (create_nodes, write_script, set_setting), small enough that the
    /// default `tools/list` stays within its token budget (`tests/contract.rs`). The
    /// project listing, resource reads, undo and the journal's view are one
    /// manage_toolsets away: agents called them once in those runs (they read files with
    /// their own shell). [`Toolset::ALL`] lists them first (SceneRead through Build).
    pub const DEFAULT: [Toolset; 4] = *Self::ALL.first_chunk().unwrap();

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::SceneRead => "scene_read",
            Self::ScriptRead => "script_read",
            Self::ResourceRead => "resource_read",
            Self::Journal => "journal",
            Self::UndoRedo => "undo_redo",
            Self::Toolsets => "toolsets",
            Self::Build => "build",
            Self::SceneFiles => "scene_files",
            Self::SceneEdit => "scene_edit",
            Self::ScriptEdit => "script_edit",
            Self::ResourceEdit => "resource_edit",
            Self::Settings => "settings",
            Self::InputMap => "input_map",
            Self::Batch => "batch",
            Self::Runtime => "runtime",
            Self::EditorProcess => "editor_process",
            Self::Export => "export",
            Self::Analysis => "analysis",
            Self::SceneInspect => "scene_inspect",
            Self::Animation => "animation",
            Self::Audio => "audio",
            Self::Theme => "theme",
            Self::Tilemap => "tilemap",
            Self::ClassRef => "class_ref",
            Self::ScriptCheck => "script_check",
            Self::Tests => "tests",
            Self::Physics => "physics",
            Self::Navigation => "navigation",
            Self::Particles => "particles",
            Self::Spatial => "spatial",
            Self::Ui => "ui",
            Self::Debugger => "debugger",
            Self::Profiling => "profiling",
            Self::GameInspect => "game_inspect",
            Self::Filesystem => "filesystem",
            Self::Shaders => "shaders",
            Self::Composite => "composite",
            Self::Scaffold => "scaffold",
            Self::Materials => "materials",
            Self::Files => "files",
            Self::VisualShader => "visual_shader",
            Self::Csharp => "csharp",
        }
    }

    /// One line for `list_toolsets`: what an agent enables this toolset for.
    pub fn purpose(self) -> &'static str {
        match self {
            Self::Project => "Project info (project.godot) and file listing.",
            Self::SceneRead => {
                "Read scene trees (from disk or the live editor) and node properties."
            }
            Self::ScriptRead => "Read script and shader text with its sha256.",
            Self::ResourceRead => "Read .tres resources: type, properties, sub-resources.",
            Self::Journal => {
                "What happened: the journal's transactions, proofs and write gate; the edited \
                 scene's undo history."
            }
            Self::UndoRedo => "Undo and redo in the edited scene.",
            Self::Toolsets => "List toolsets; enable or disable them.",
            Self::Build => {
                "create_nodes: open or create a scene, create and set nodes, save: one call."
            }
            Self::SceneFiles => {
                "Open, create, save, close and reload scenes in the editor; save all; list open \
                 scenes."
            }
            Self::SceneEdit => {
                "Edit nodes of the edited scene: create, delete, rename, move, duplicate, \
                 instance scenes, groups, editable children, set properties, signals, batches; \
                 live reads of properties, property lists, connections; the selection."
            }
            Self::ScriptEdit => "Create, write and patch scripts; attach or detach them.",
            Self::ResourceEdit => "Create, edit, canonicalize and delete .tres resources.",
            Self::Settings => "Project settings, autoloads and layer names in project.godot.",
            Self::InputMap => "Input-map actions and their key, mouse and joypad events.",
            Self::Batch => "run_commands: many tool calls in one, each under its own policy.",
            Self::Runtime => {
                "Run and stop games; capture output, screenshots, properties; simulate input; \
                 evaluate expressions."
            }
            Self::EditorProcess => "Start or stop a supervised headless Godot editor.",
            Self::Export => "Export builds with Godot's export presets.",
            Self::Analysis => {
                "Analyze the project from disk: dependency graph, references, cycles, unused \
                 files, scene integrity, signal flow, stats, uid lookup, text search."
            }
            Self::SceneInspect => {
                "One node of a saved scene: its groups, signal connections, stored properties."
            }
            Self::Animation => {
                "Animations: read libraries, tracks and keys from disk; add and remove \
                 animations, tracks and keys in the editor; read them back live."
            }
            Self::Audio => {
                "The audio bus layout file: read it as Godot loads it; add, remove, route, \
                 mute buses; add or remove effects."
            }
            Self::Theme => {
                "Theme resources: read, and set colors, constants, fonts, font sizes, icons, \
                 styleboxes by type."
            }
            Self::Tilemap => {
                "TileMapLayer cells and TileSet sources from disk; in the live editor, set, fill, \
                 clear and read cells, add TileSet atlas sources, physics layers, terrain sets."
            }
            Self::ClassRef => {
                "Godot's class reference from the engine: classes, methods, properties, \
                 signals, constants; search."
            }
            Self::ScriptCheck => {
                "GDScript parse errors from Godot's own parser; list scripts; a node's script."
            }
            Self::Tests => {
                "Run GUT or gdUnit4 tests headless (per-test results); assert a running game's \
                 node properties."
            }
            Self::Physics => {
                "Add physics bodies with collision shapes (sized or fitted to a sprite or mesh), \
                 raycasts; set collision layers and masks by name."
            }
            Self::Navigation => {
                "Add navigation regions and agents, set navigation layers by name, bake a \
                 navigation mesh (undoable)."
            }
            Self::Particles => {
                "Add GPU/CPU particles with a process material, set colour ramps, apply presets \
                 (fire, smoke, sparks, rain)."
            }
            Self::Spatial => {
                "3D scenes: mesh instances, cameras, lights, WorldEnvironment settings, GridMap \
                 cells, MeshLibrary items."
            }
            Self::Ui => {
                "Controls in the edited scene: theme overrides, anchors presets, containers."
            }
            Self::Debugger => {
                "Debug a running game: breakpoints, break, step, continue, stack, variables, \
                 evaluate in a frame."
            }
            Self::Profiling => {
                "Performance monitors (FPS, frame times, draw calls, memory, objects, physics) \
                 of a running game or the editor, sampled over a window; per-function GDScript \
                 profile of a running game."
            }
            Self::GameInspect => {
                "A running game's scene tree, UI elements by text or type, property samples \
                 over frames."
            }
            Self::Filesystem => {
                "Rescan the editor's file system, import status from disk, import external \
                 assets through the journal."
            }
            Self::Shaders => {
                "Create and edit .gdshader files, compile-check them with the engine; \
                 ShaderMaterials and their uniforms in the edited scene."
            }
            Self::Composite => {
                "Across saved scenes: find nodes by type, set one property on many scenes."
            }
            Self::Scaffold => "Lay out a new project: folders, project.godot, main scene.",
            Self::Materials => {
                "Create StandardMaterial3D / ORMMaterial3D .tres from texture files."
            }
            Self::Files => {
                "Move or rename files rewriting every res:// reference, duplicate files, create \
                 and delete folders, list resources by type."
            }
            Self::VisualShader => {
                "VisualShader .tres graphs on disk: create, read, add/remove nodes, connect \
                 ports, set node properties."
            }
            Self::Csharp => {
                "Build a C# project with the .NET SDK (dotnet build): MSBuild's errors and \
                 warnings with file, line, column and code."
            }
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Parse an operator's list: `default`, `all`, or comma-separated names, where a
    /// `-name` removes one (`default,input_map,-batch`).
    pub fn parse_list(list: &str) -> Result<BTreeSet<Toolset>, String> {
        let mut set = BTreeSet::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (remove, name) = match item.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, item),
            };
            let named: Vec<Toolset> = match name {
                "default" => Self::DEFAULT.to_vec(),
                "all" => Self::ALL.to_vec(),
                n => vec![Self::parse(n).ok_or_else(|| {
                    format!(
                        "unknown toolset {n:?}; toolsets are: default, all, {}",
                        Self::ALL.map(Self::as_str).join(", ")
                    )
                })?],
            };
            for t in named {
                if remove {
                    set.remove(&t);
                } else {
                    set.insert(t);
                }
            }
        }
        set.insert(Toolset::Toolsets);
        Ok(set)
    }
}

/// Which toolsets a server may offer (the operator's ceiling) and which it offers at
/// start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsetSelection {
    /// What an agent may enable; fixed for the life of the server.
    pub ceiling: BTreeSet<Toolset>,
    /// What is enabled at start.
    pub enabled: BTreeSet<Toolset>,
}

impl ToolsetSelection {
    /// From the operator's `--toolsets` / `GODOT_MCP_TOOLSETS`. Unset: every toolset
    /// is within reach and the default core is enabled. Set: the named toolsets are
    /// both the ceiling and what is enabled at start (`all` lists every tool, for
    /// clients that search tools themselves).
    pub fn from_operator(list: Option<&str>) -> Result<Self, String> {
        match list.map(str::trim).filter(|l| !l.is_empty()) {
            None => Ok(Self {
                ceiling: Toolset::ALL.into_iter().collect(),
                enabled: Toolset::DEFAULT.into_iter().collect(),
            }),
            Some(list) => {
                let set = Toolset::parse_list(list)?;
                Ok(Self {
                    ceiling: set.clone(),
                    enabled: set,
                })
            }
        }
    }
}
