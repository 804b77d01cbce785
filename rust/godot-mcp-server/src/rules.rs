//! The permission model's rules: classes, toolsets, preconditions and the confirm gate,
//! pure and readable in one sitting (spec: safety-model.md), and the mutable half of the
//! model every session shares ([`SafetyState`]: the enabled toolsets, the calls parked
//! for approval). The call pipeline that applies them, in order, and the approval gate
//! are `crate::safety`, above the tools; the tools and the planes read these rules.
//! Nothing here reads a plane or a tool.
//!
//! # Classes
//!
//! Every tool declares a [`SafetyClass`]; there is no `Default`, so a tool without
//! one does not compile. The class follows the *effect*, not the verb:
//!
//! - reversible, additive editor edit that UndoRedo restores → `mutating`;
//! - removes/overwrites existing data, or writes disk/project state the undo stack
//!   does not cover → `destructive` (every project-plane file write is one, even a
//!   new file: no undo stack covers it);
//! - side-effecting observation or game execution → `runtime`;
//! - nothing changes → `read_only`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{JsonObject, ToolAnnotations};
use rmcp::service::Peer;
use serde::Serialize;
use serde_json::json;

use crate::error::{ErrorCode, ToolError};

// ---------------------------------------------------------------------------------
// Classes, effects, toolsets
// ---------------------------------------------------------------------------------

/// Risk class of a tool. Deliberately no `Default`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum SafetyClass {
    /// Changes nothing.
    ReadOnly,
    /// Reversible or additive change (the editor's UndoRedo restores it). Takes `dry_run`.
    Mutating,
    /// Removes or overwrites existing data, or an irreversible disk/project write.
    /// Takes `dry_run` and requires `confirm=true`.
    Destructive,
    /// Controls or side-effects game execution.
    Runtime,
}

impl SafetyClass {
    pub const ALL: [SafetyClass; 4] = [
        SafetyClass::ReadOnly,
        SafetyClass::Mutating,
        SafetyClass::Destructive,
        SafetyClass::Runtime,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::Mutating => "mutating",
            Self::Destructive => "destructive",
            Self::Runtime => "runtime",
        }
    }

    /// Whether calls of this class accept `dry_run`.
    pub fn takes_dry_run(self) -> bool {
        matches!(self, Self::Mutating | Self::Destructive)
    }

    /// Whether calls of this class must carry `confirm=true` to take effect.
    pub fn requires_confirm(self) -> bool {
        matches!(self, Self::Destructive)
    }

    /// How dangerous the class is, for presenting a batch to the approval gate as its
    /// most dangerous entry. Runtime ranks above mutating: game execution is not on
    /// any undo stack.
    pub fn danger_rank(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::Mutating => 1,
            Self::Runtime => 2,
            Self::Destructive => 3,
        }
    }

    /// MCP annotations derived from the class, so clients that honour hints see the
    /// same risk the server enforces.
    pub fn annotations(self, title: &str) -> ToolAnnotations {
        let (read_only, destructive, idempotent) = match self {
            Self::ReadOnly => (true, false, true),
            Self::Mutating => (false, false, false),
            Self::Destructive => (false, true, false),
            Self::Runtime => (false, false, false),
        };
        let mut a = ToolAnnotations::with_title(title);
        a.read_only_hint = Some(read_only);
        a.destructive_hint = Some(destructive);
        a.idempotent_hint = Some(idempotent);
        // Every tool acts on the one project this server serves: a closed world.
        a.open_world_hint = Some(false);
        a
    }
}

/// Which kind of durable effect a tool makes: the journal's effect kind (which selects
/// the proof form), or `None` for a tool that only reads. One enum for the server and
/// the journal.
pub use godot_mcp_journal::EffectKind;

/// How tools/list and the docs spell a tool's effect kind: the journal's name, or
/// `none` for a read.
pub fn effect_str(effect: Option<EffectKind>) -> &'static str {
    effect.map_or("none", EffectKind::as_str)
}

/// What a runtime tool does beyond running the game; either flag routes it to the
/// approval gate (export_project writes disk, evaluate_expression executes code).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RuntimeFlags {
    pub writes_disk: bool,
    pub executes_code: bool,
}

/// Whether a call of this tool goes to the approval gate (when one is configured).
pub fn is_gated(class: SafetyClass, flags: RuntimeFlags) -> bool {
    match class {
        SafetyClass::ReadOnly => false,
        SafetyClass::Mutating | SafetyClass::Destructive => true,
        SafetyClass::Runtime => flags.writes_disk || flags.executes_code,
    }
}

/// A family of tools, enabled or disabled together. The declaration order is the
/// order of `tools/list` and of `list_toolsets`: the default core first.
///
/// Toolsets are split by what an agent needs at once (reading a scene vs editing
/// one), so an agent enables a few tools rather than a whole plane; a new family of
/// tools is a new variant here, with its purpose line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Toolset {
    /// project.godot and the file listing.
    Project,
    /// Scene trees and node properties.
    SceneRead,
    /// Script and shader text.
    ScriptRead,
    /// Resource files (.tres).
    ResourceRead,
    /// The journal: transactions and the write gate.
    Journal,
    /// The editor's undo history.
    UndoRedo,
    /// Toolset discovery and switching; always enabled.
    Toolsets,
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
}

impl Toolset {
    pub const ALL: [Toolset; 41] = [
        Toolset::Project,
        Toolset::SceneRead,
        Toolset::ScriptRead,
        Toolset::ResourceRead,
        Toolset::Journal,
        Toolset::UndoRedo,
        Toolset::Toolsets,
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
    ];

    /// Enabled when the operator names none: the read-mostly core every session
    /// needs (inspect, read, the journal, undo/redo, discovery), small enough that
    /// the default `tools/list` stays within its token budget (`tests/budget.rs`).
    /// [`Toolset::ALL`] lists them first (Project through Toolsets).
    pub const DEFAULT: [Toolset; 7] = *Self::ALL.first_chunk().unwrap();

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::SceneRead => "scene_read",
            Self::ScriptRead => "script_read",
            Self::ResourceRead => "resource_read",
            Self::Journal => "journal",
            Self::UndoRedo => "undo_redo",
            Self::Toolsets => "toolsets",
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
            Self::Journal => "The journal: transactions, their proofs, the write gate.",
            Self::UndoRedo => "The editor's undo history; undo and redo.",
            Self::Toolsets => "List toolsets; enable or disable them.",
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

// ---------------------------------------------------------------------------------
// Preconditions
// ---------------------------------------------------------------------------------

/// A precondition a tool can require, with the token its error names and the way to
/// recover. Checked before any side effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// The editor add-on is connected to this server.
    BridgeConnected,
    /// A scene is open in the editor.
    ActiveScene,
    /// A node path exists in the edited scene (fails as RESOURCE_NOT_FOUND).
    NodeExists { path: String },
    /// A Godot binary is available (GODOT_BIN or PATH).
    GodotBinary,
    /// The connected editor is at least this version.
    GodotVersion {
        required: String,
        found: Option<String>,
    },
    /// The running game is not stopped at a breakpoint (input simulation).
    GameNotBreaked,
    /// The connected add-on speaks this server's bridge protocol.
    AddonVersion { required: String, found: String },
    /// An export that writes outside the project, or over an existing file inside it,
    /// was confirmed (`confirm=true`): `target` is what it would write.
    ExportConfirmed { target: String, outside: bool },
}

impl Precondition {
    /// The token a failure names in `required`; `None` for node existence, which
    /// fails as RESOURCE_NOT_FOUND instead.
    pub fn token(&self) -> Option<&'static str> {
        match self {
            Self::BridgeConnected => Some("bridge_connected"),
            Self::ActiveScene => Some("active_scene"),
            Self::NodeExists { .. } => None,
            Self::GodotBinary => Some("godot_binary"),
            Self::GodotVersion { .. } => Some("godot_version"),
            Self::GameNotBreaked => Some("game_not_breaked"),
            Self::AddonVersion { .. } => Some("addon_version"),
            Self::ExportConfirmed { .. } => Some("confirm"),
        }
    }

    /// How the caller recovers.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::BridgeConnected => {
                "Open the project in the Godot editor and enable the godot_mcp add-on \
                 (Project > Project Settings > Plugins); it connects by itself."
            }
            Self::ActiveScene => "Open a scene with open_scene, or create one with create_scene.",
            Self::NodeExists { .. } => "Call get_scene_tree to find the real node paths.",
            Self::GodotBinary => {
                "Install Godot 4 and put it on PATH as godot or godot4, or set GODOT_BIN to the \
                 path of its executable."
            }
            Self::GodotVersion { .. } => "Upgrade the Godot editor to the required version.",
            Self::GameNotBreaked => {
                "The game is stopped in the debugger (or hung). Resume it with \
                 continue_execution (debugger toolset), or stop it with stop_scene; then send \
                 the input again."
            }
            Self::AddonVersion { .. } => {
                "Install the add-on that matches this server (scripts/install-addon.sh) and restart the editor."
            }
            Self::ExportConfirmed { .. } => "Check the target, then call again with confirm=true.",
        }
    }

    /// The structured error for this precondition failing.
    pub fn error(&self) -> ToolError {
        let message = match self {
            Self::BridgeConnected => {
                "The Godot editor is not connected to this server.".to_string()
            }
            Self::ActiveScene => "No scene is open in the Godot editor.".to_string(),
            Self::NodeExists { path } => format!("Node {path} does not exist in the edited scene."),
            Self::GodotBinary => "No Godot binary was found.".to_string(),
            Self::GodotVersion { required, found } => format!(
                "This tool needs Godot {required} or newer; the editor is {}.",
                found.as_deref().unwrap_or("of an unknown version")
            ),
            Self::GameNotBreaked => {
                "The running game is paused at a breakpoint; simulated input would be lost."
                    .to_string()
            }
            Self::AddonVersion { required, found } => {
                format!("The editor's add-on is {found}; this server needs {required}.")
            }
            Self::ExportConfirmed {
                target,
                outside: true,
            } => format!("{target} is outside the project; set confirm=True to export there."),
            Self::ExportConfirmed {
                target,
                outside: false,
            } => format!(
                "{target} exists: exporting there overwrites it. Set confirm=True to proceed."
            ),
        };
        let code = match self {
            Self::NodeExists { .. } => ErrorCode::ResourceNotFound,
            _ => ErrorCode::PreconditionFailed,
        };
        let mut e = ToolError::new(code, message).hint(self.hint());
        if let Some(token) = self.token() {
            e = e.required(token);
        }
        if let Self::ExportConfirmed { .. } = self {
            e = e.param("confirm");
        }
        e
    }
}

/// What the server knows about the editor bridge (`planes::editor` reports it:
/// `EditorPlane::bridge_status`); the rules here only read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgeStatus {
    /// Nobody is connected (and the last hello, if any, was not a version mismatch).
    Disconnected,
    /// The last add-on to say hello speaks another bridge protocol version.
    AddonMismatch { found: String },
    /// The last add-on to say hello runs in an unsupported Godot.
    GodotUnsupported { found: String },
    /// An add-on is connected, in this Godot.
    Connected { godot_version: String },
}

impl BridgeStatus {
    /// Check a bridge-dependent precondition. Without a bridge nothing about the
    /// editor can be known, so the bridge itself (or the version that kept it from
    /// connecting) is what is reported missing. Connected, the scene and node
    /// preconditions are checked by the tool through the bridge.
    pub fn require(&self, precondition: &Precondition) -> Result<(), ToolError> {
        match (self, precondition) {
            (_, Precondition::GodotBinary) => Err(ToolError::internal(
                "godot_binary is not a bridge precondition; use find_godot_binary",
            )),
            (Self::Disconnected, _) => Err(Precondition::BridgeConnected.error()),
            (Self::AddonMismatch { found }, _) => Err(Precondition::AddonVersion {
                required: format!(
                    "bridge protocol {}",
                    godot_mcp_protocol::BRIDGE_PROTOCOL_VERSION
                ),
                found: found.clone(),
            }
            .error()),
            (Self::GodotUnsupported { found }, _) => Err(Precondition::GodotVersion {
                required: godot_mcp_protocol::MIN_GODOT_VERSION.to_string(),
                found: Some(found.clone()),
            }
            .error()),
            (Self::Connected { godot_version }, Precondition::GodotVersion { required, .. }) => {
                let ok = match (
                    godot_version.parse::<godot_mcp_protocol::GodotVersion>(),
                    required.parse::<godot_mcp_protocol::GodotVersion>(),
                ) {
                    (Ok(have), Ok(need)) => have.is_at_least(&need),
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(Precondition::GodotVersion {
                        required: required.clone(),
                        found: Some(godot_version.clone()),
                    }
                    .error())
                }
            }
            (Self::Connected { .. }, _) => Ok(()),
        }
    }
}

/// The godot_binary precondition: `GODOT_BIN` must name an executable file; without
/// it, `godot` or `godot4` is looked up on `PATH`.
pub fn find_godot_binary(
    godot_bin: Option<&std::ffi::OsStr>,
    path: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, ToolError> {
    if let Some(bin) = godot_bin.filter(|b| !b.is_empty()) {
        let p = Path::new(bin);
        if is_executable_file(p) {
            return Ok(p.to_path_buf());
        }
        let mut e = Precondition::GodotBinary.error();
        e.message = format!(
            "GODOT_BIN is set to {}, which is not an executable file.",
            p.display()
        );
        return Err(e);
    }
    if let Some(path) = path {
        for dir in std::env::split_paths(path) {
            for name in ["godot", "godot4"] {
                let candidate = dir.join(name);
                if is_executable_file(&candidate) {
                    return Ok(candidate);
                }
            }
        }
    }
    let mut e = Precondition::GodotBinary.error();
    e.message =
        "No Godot binary found: GODOT_BIN is not set and neither godot nor godot4 is on PATH."
            .into();
    Err(e)
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && godot_mcp_os::fs::is_executable(&m))
}

// ---------------------------------------------------------------------------------
// The confirm gate
// ---------------------------------------------------------------------------------

/// The class-derived flags of one call, taken out of the arguments by the registry
/// so that every mutating and destructive tool accepts them identically.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallFlags {
    /// Run preconditions and report what would happen; change nothing.
    pub dry_run: bool,
    /// The caller's deliberate opt-in to a destructive effect.
    pub confirm: bool,
}

/// The exact text of a destructive call made without confirm (spec).
pub const CONFIRM_MESSAGE: &str =
    "This call discards unsaved changes. Set confirm=True to proceed.";

/// A destructive call that is not a dry run must carry `confirm=true`. `confirm` is an
/// accident guard the agent sets itself, not human oversight (that is the approval gate).
pub fn confirm_gate(class: SafetyClass, flags: CallFlags) -> Result<(), ToolError> {
    if class.requires_confirm() && !flags.dry_run && !flags.confirm {
        return Err(
            ToolError::new(ErrorCode::PreconditionFailed, CONFIRM_MESSAGE)
                .param("confirm")
                .required("confirm")
                .hint(
                    "Check the effect first with dry_run=true, then call again with confirm=true.",
                ),
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// Safety state: configuration, enabled toolsets, pending approvals
// ---------------------------------------------------------------------------------

pub use crate::config::{
    ApprovalConfig, ENV_FAIL_OPEN, ENV_REQUIRE, ENV_TOOLSETS, ENV_WEBHOOK, ENV_WEBHOOK_TIMEOUT_MS,
};

/// A gated call waiting for the client's answer (protocol 2026-07-28 and later). The
/// call is kept here; the `requestState` the client echoes is only an opaque handle
/// to it, never trusted as data.
#[derive(Debug, Clone)]
pub(crate) struct PendingCall {
    pub(crate) tool: String,
    pub(crate) arguments: JsonObject,
    pub(crate) webhook_approved: bool,
    pub(crate) created: Instant,
}

const PENDING_TTL: Duration = Duration::from_secs(600);
const MAX_PENDING: usize = 256;

/// The mutable half of the safety model, shared by all sessions of a server.
#[derive(Debug)]
pub struct SafetyState {
    pub approval: ApprovalConfig,
    /// The operator's ceiling: toolsets outside it are unreachable, whatever an agent asks.
    ceiling: BTreeSet<Toolset>,
    toolsets: parking_lot::RwLock<BTreeSet<Toolset>>,
    /// Bumped on every toolset change, so the server knows to send tools/list_changed.
    generation: AtomicU64,
    pending: parking_lot::Mutex<HashMap<String, PendingCall>>,
    /// The sessions to tell when the toolsets change (the enabled set is shared by
    /// every session of this server), by the session's key.
    listeners: parking_lot::Mutex<Vec<(u64, Peer<RoleServer>)>>,
}

impl SafetyState {
    /// A state whose ceiling and start set are both `toolsets` (an operator who named them).
    pub fn new(approval: ApprovalConfig, toolsets: BTreeSet<Toolset>) -> Self {
        Self::with_selection(
            approval,
            ToolsetSelection {
                ceiling: toolsets.clone(),
                enabled: toolsets,
            },
        )
    }

    pub fn with_selection(approval: ApprovalConfig, selection: ToolsetSelection) -> Self {
        let ToolsetSelection {
            mut ceiling,
            enabled,
        } = selection;
        // Discovery is always reachable: it is how an agent finds the rest.
        ceiling.insert(Toolset::Toolsets);
        let mut enabled: BTreeSet<Toolset> = enabled.intersection(&ceiling).copied().collect();
        enabled.insert(Toolset::Toolsets);
        Self {
            approval,
            ceiling,
            toolsets: parking_lot::RwLock::new(enabled),
            generation: AtomicU64::new(0),
            pending: parking_lot::Mutex::new(HashMap::new()),
            listeners: parking_lot::Mutex::new(Vec::new()),
        }
    }

    pub fn is_enabled(&self, toolset: Toolset) -> bool {
        self.toolsets.read().contains(&toolset)
    }

    pub fn enabled(&self) -> BTreeSet<Toolset> {
        self.toolsets.read().clone()
    }

    /// One line for the operator at start: what is listed, and what may be enabled.
    /// `tools` is the toolset of every registered tool.
    pub fn summary(&self, tools: impl Iterator<Item = Toolset>) -> String {
        let enabled = self.enabled();
        let (mut total, mut listed) = (0, 0);
        for t in tools {
            total += 1;
            listed += usize::from(enabled.contains(&t));
        }
        let ceiling = if self.ceiling.len() == Toolset::ALL.len() {
            "all".to_string()
        } else {
            self.ceiling_text()
        };
        format!(
            "{listed} of {total} tools listed (toolsets {}); agents may enable: {ceiling}",
            enabled
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )
    }

    /// Whether the operator's ceiling lets an agent enable `toolset`.
    pub fn allows(&self, toolset: Toolset) -> bool {
        self.ceiling.contains(&toolset)
    }

    fn ceiling_text(&self) -> String {
        self.ceiling
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The refusal for a toolset outside the operator's ceiling; it names the ceiling.
    pub fn outside_ceiling(&self, toolset: Toolset) -> ToolError {
        ToolError::new(
            ErrorCode::ToolDisabled,
            format!(
                "toolset `{}` is outside the operator's ceiling ({ENV_TOOLSETS}={}): it cannot be enabled in this server",
                toolset.as_str(),
                self.ceiling_text()
            ),
        )
        .required(toolset.as_str())
        .details(json!({
            "toolset": toolset.as_str(),
            "ceiling": self.ceiling.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        }))
        .hint(format!(
            "Only the operator can widen it: restart the server with --toolsets (or {ENV_TOOLSETS}) naming {}.",
            toolset.as_str()
        ))
    }

    /// Enable and disable toolsets; returns whether anything changed. The
    /// `toolsets` family cannot be disabled (it is how one turns things back on), and
    /// nothing outside the operator's ceiling can be enabled. Checked whole before
    /// anything changes.
    pub fn set_toolsets(&self, enable: &[Toolset], disable: &[Toolset]) -> Result<bool, ToolError> {
        let mut current = self.toolsets.write();
        let set = self.toolsets_after(&current, enable, disable)?;
        let changed = set != *current;
        if changed {
            *current = set;
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        Ok(changed)
    }

    /// The enabled set after enabling and disabling; changes nothing (a dry run of
    /// [`Self::set_toolsets`]).
    pub fn preview_toolsets(
        &self,
        enable: &[Toolset],
        disable: &[Toolset],
    ) -> Result<BTreeSet<Toolset>, ToolError> {
        self.toolsets_after(&self.toolsets.read(), enable, disable)
    }

    fn toolsets_after(
        &self,
        current: &BTreeSet<Toolset>,
        enable: &[Toolset],
        disable: &[Toolset],
    ) -> Result<BTreeSet<Toolset>, ToolError> {
        if disable.contains(&Toolset::Toolsets) {
            return Err(ToolError::invalid_params(
                "disable",
                "the toolsets toolset cannot be disabled: it is how toolsets are turned back on",
            ));
        }
        if let Some(t) = enable.iter().find(|t| !self.allows(**t)) {
            return Err(self.outside_ceiling(*t).param("enable"));
        }
        let mut set = current.clone();
        set.extend(enable.iter().copied());
        for t in disable {
            set.remove(t);
        }
        Ok(set)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Tell session `key` (its peer) when the toolsets change.
    pub fn listen(&self, key: u64, peer: Peer<RoleServer>) {
        let mut listeners = self.listeners.lock();
        listeners.retain(|(_, p)| !p.is_transport_closed());
        listeners.push((key, peer));
    }

    /// The live sessions other than `key`, to tell of a toolset change `key` made.
    pub fn other_listeners(&self, key: u64) -> Vec<Peer<RoleServer>> {
        let mut listeners = self.listeners.lock();
        listeners.retain(|(_, p)| !p.is_transport_closed());
        listeners
            .iter()
            .filter(|(k, _)| *k != key)
            .map(|(_, p)| p.clone())
            .collect()
    }

    pub(crate) fn park(&self, call: PendingCall) -> Result<String, ToolError> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| ToolError::internal(format!("getrandom: {e}")))?;
        let id = hex::encode(id);
        let mut pending = self.pending.lock();
        pending.retain(|_, p| p.created.elapsed() < PENDING_TTL);
        while pending.len() >= MAX_PENDING {
            let oldest = pending
                .iter()
                .min_by_key(|(_, p)| p.created)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => pending.remove(&k),
                None => break,
            };
        }
        pending.insert(id.clone(), call);
        Ok(id)
    }

    /// Take (single use) a parked call that has not expired.
    pub(crate) fn unpark(&self, id: &str) -> Option<PendingCall> {
        let call = self.pending.lock().remove(id)?;
        (call.created.elapsed() < PENDING_TTL).then_some(call)
    }

    /// Whether the toolset of tool `name` is enabled, as a structured refusal: outside
    /// the operator's ceiling (naming it), or within it but not enabled.
    pub fn check_enabled(&self, name: &str, toolset: Toolset) -> Result<(), ToolError> {
        if self.is_enabled(toolset) {
            return Ok(());
        }
        if !self.allows(toolset) {
            let mut e = self.outside_ceiling(toolset);
            e.message = format!(
                "{} is unreachable: its toolset `{}` is outside the operator's ceiling ({ENV_TOOLSETS}={})",
                name,
                toolset.as_str(),
                self.ceiling_text()
            );
            return Err(e);
        }
        Err(ToolError::new(
            ErrorCode::ToolDisabled,
            format!(
                "{} is disabled: its toolset `{}` is not enabled in this server",
                name,
                toolset.as_str()
            ),
        )
        .required(toolset.as_str())
        .hint(format!(
            "Enable it with manage_toolsets (enable: [\"{}\"]); list_toolsets shows every toolset.",
            toolset.as_str()
        )))
    }
}
