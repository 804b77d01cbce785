//! The permission model, whole. An auditor reads this one file to know every rule a
//! tool call passes before it touches anything (spec: safety-model.md).
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
//!
//! # The order of checks for one call ([`run_call`])
//!
//! 1. The tool's toolset is enabled, else `TOOL_DISABLED`.
//! 2. `dry_run` / `confirm` are taken out of the arguments; each is accepted only by
//!    the classes that take it, and only as a boolean.
//! 3. A destructive call that is not a dry run needs `confirm=true`, else exactly
//!    `PRECONDITION_FAILED: This call discards unsaved changes. Set confirm=True to
//!    proceed. [required=confirm]`.
//! 4. Arguments are decoded: wrong types, unknown fields and path escapes are refused,
//!    naming the field. Every res:// path the arguments carry — each `ResPath`
//!    parameter wherever it is nested, and each res:// string inside a typed value
//!    (`{"$type": "Resource", "path": …}`) — is then resolved, symlinks included, and
//!    refused as `PATH_REFUSED` unless it lies inside the project
//!    ([`crate::respath::check_arg_paths`]). This is before every precondition, so a
//!    hostile path is refused even when no editor is connected.
//! 5. The tool plans: every precondition ([`Precondition`]) and every check of the
//!    write seam runs, nothing is changed. A dry run stops here and returns the plan,
//!    which is by construction what the real run reports.
//! 6. The approval gate ([`approve`]) for mutating and destructive calls, and runtime
//!    tools flagged `writes_disk` / `executes_code`: the webhook, then the
//!    elicitation guard, when configured. Dry runs change nothing and are not gated.
//! 7. The plan is applied.
//!
//! `run_commands` ([`run_batch`]) resolves each entry to the tool behind it and runs
//! steps 1–4 for *every* entry before any entry runs; the batch goes to the gate once,
//! as its most dangerous entry's class; a failure stops the batch and says where.
//!
//! The editor add-on holds no policy: every decision above is made here.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    JsonObject, ProtocolVersion, ToolAnnotations,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::honesty::BatchReport;
use crate::state::AppState;
use crate::tools::{CallFlags, Handler, ToolDef, ToolResult, decode_args, split_flags};

pub mod webhook;

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

/// Which kind of durable effect a tool makes; selects the journal's proof form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectKind {
    /// Reads only; no transaction.
    None,
    /// On-disk mutation under the project, proven by content hashes or tombstones.
    File,
    /// A supervised Godot process, proven by its launch receipt and terminal result.
    ProcessLaunch,
    /// An effect applied through the editor bridge.
    EditorRuntime,
}

impl EffectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::File => "file",
            Self::ProcessLaunch => "process_launch",
            Self::EditorRuntime => "editor_runtime",
        }
    }
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
}

impl Toolset {
    pub const ALL: [Toolset; 40] = [
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
    ];

    /// Enabled when the operator names none: the read-mostly core every session
    /// needs (inspect, read, the journal, undo/redo, discovery), small enough that
    /// the default `tools/list` stays within its token budget (`tests/budget.rs`).
    pub const DEFAULT: [Toolset; 7] = [
        Toolset::Project,
        Toolset::SceneRead,
        Toolset::ScriptRead,
        Toolset::ResourceRead,
        Toolset::Journal,
        Toolset::UndoRedo,
        Toolset::Toolsets,
    ];

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
                 of a running game or the editor, sampled over a window."
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
        };
        let code = match self {
            Self::NodeExists { .. } => ErrorCode::ResourceNotFound,
            _ => ErrorCode::PreconditionFailed,
        };
        let mut e = ToolError::new(code, message).hint(self.hint());
        if let Some(token) = self.token() {
            e = e.required(token);
        }
        e
    }
}

/// What the server knows about the editor bridge, from `planes::editor`.
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
    pub fn current(state: &AppState) -> Self {
        use crate::planes::editor::{Rejection, Status};
        match state.editor.status() {
            Status::Connected(peer) => Self::Connected {
                godot_version: peer.godot_version.to_string(),
            },
            Status::Disconnected {
                last_rejection:
                    Some(Rejection::ProtocolMismatch {
                        addon,
                        addon_version,
                    }),
            } => Self::AddonMismatch {
                found: format!("add-on {addon_version} (bridge protocol {addon})"),
            },
            Status::Disconnected {
                last_rejection: Some(Rejection::UnsupportedGodot(v)),
            } => Self::GodotUnsupported {
                found: v.to_string(),
            },
            Status::Disconnected { .. } | Status::NotListening => Self::Disconnected,
        }
    }

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

/// Environment variable names (spec).
pub const ENV_WEBHOOK: &str = "GODOT_MCP_APPROVAL_WEBHOOK";
pub const ENV_FAIL_OPEN: &str = "GODOT_MCP_APPROVAL_FAIL_OPEN";
pub const ENV_REQUIRE: &str = "GODOT_MCP_APPROVAL_REQUIRE";
/// How long the webhook may take to answer, in milliseconds (default 10000).
pub const ENV_WEBHOOK_TIMEOUT_MS: &str = "GODOT_MCP_APPROVAL_TIMEOUT_MS";
/// Enabled toolsets (same as `serve --toolsets`).
pub const ENV_TOOLSETS: &str = "GODOT_MCP_TOOLSETS";

/// The approval gate's configuration; fixed for the life of the server.
#[derive(Debug, Clone, Default)]
pub struct ApprovalConfig {
    /// Where to POST each gated call for a decision.
    pub webhook: Option<webhook::WebhookUrl>,
    /// Allow the call when the webhook cannot be reached or fails (never when it denies).
    pub fail_open: bool,
    pub webhook_timeout: Duration,
    /// Ask the human through the MCP client (elicitation) before each gated call.
    pub require_elicitation: bool,
}

impl ApprovalConfig {
    /// Read the spec's environment variables. An unusable webhook URL is an error:
    /// the server refuses to start rather than run ungated.
    pub fn from_env() -> Result<Self, String> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let flag = |name: &str| -> Result<bool, String> {
            match get(name).as_deref().map(str::trim) {
                None | Some("") => Ok(false),
                Some(v)
                    if ["1", "true", "yes", "on"].contains(&v.to_ascii_lowercase().as_str()) =>
                {
                    Ok(true)
                }
                Some(v)
                    if ["0", "false", "no", "off"].contains(&v.to_ascii_lowercase().as_str()) =>
                {
                    Ok(false)
                }
                Some(v) => Err(format!("{name}={v:?} is not a boolean (use true or false)")),
            }
        };
        let webhook = match get(ENV_WEBHOOK).filter(|v| !v.trim().is_empty()) {
            Some(url) => Some(
                webhook::WebhookUrl::parse(url.trim())
                    .map_err(|e| format!("{ENV_WEBHOOK}: {e}"))?,
            ),
            None => None,
        };
        let webhook_timeout = match get(ENV_WEBHOOK_TIMEOUT_MS) {
            Some(ms) => Duration::from_millis(ms.trim().parse::<u64>().map_err(|_| {
                format!("{ENV_WEBHOOK_TIMEOUT_MS}={ms:?} is not a number of milliseconds")
            })?),
            None => Duration::from_secs(10),
        };
        Ok(Self {
            webhook,
            fail_open: flag(ENV_FAIL_OPEN)?,
            webhook_timeout,
            require_elicitation: flag(ENV_REQUIRE)?,
        })
    }

    pub fn is_active(&self) -> bool {
        self.webhook.is_some() || self.require_elicitation
    }
}

/// A gated call waiting for the client's answer (protocol 2026-07-28 and later). The
/// call is kept here; the `requestState` the client echoes is only an opaque handle
/// to it, never trusted as data.
#[derive(Debug, Clone)]
struct PendingCall {
    tool: String,
    arguments: JsonObject,
    webhook_approved: bool,
    created: Instant,
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
    pub fn summary(&self, registry: &crate::tools::Registry) -> String {
        let enabled = self.enabled();
        let total = registry.iter().count();
        let listed = registry
            .iter()
            .filter(|d| enabled.contains(&d.meta.toolset))
            .count();
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

    fn park(&self, call: PendingCall) -> Result<String, ToolError> {
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
    fn unpark(&self, id: &str) -> Option<PendingCall> {
        let call = self.pending.lock().remove(id)?;
        (call.created.elapsed() < PENDING_TTL).then_some(call)
    }

    /// Whether the toolset of `def` is enabled, as a structured refusal: outside the
    /// operator's ceiling (naming it), or within it but not enabled.
    pub fn check_enabled(&self, def: &ToolDef) -> Result<(), ToolError> {
        let toolset = def.meta.toolset;
        if self.is_enabled(toolset) {
            return Ok(());
        }
        if !self.allows(toolset) {
            let mut e = self.outside_ceiling(toolset);
            e.message = format!(
                "{} is unreachable: its toolset `{}` is outside the operator's ceiling ({ENV_TOOLSETS}={})",
                def.meta.name,
                toolset.as_str(),
                self.ceiling_text()
            );
            return Err(e);
        }
        Err(ToolError::new(
            ErrorCode::ToolDisabled,
            format!(
                "{} is disabled: its toolset `{}` is not enabled in this server",
                def.meta.name,
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

// ---------------------------------------------------------------------------------
// The approval gate
// ---------------------------------------------------------------------------------

/// Who is calling, as far as the server knows; sent to the webhook and used by
/// idempotency. `id` and `session_id` come from the transport (`local` on stdio,
/// `http:<session>` on HTTP; see `transport::Principal`); the client fields are what
/// the client said about itself at initialize (informative, not authenticated).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Principal {
    pub id: String,
    pub session_id: Option<String>,
    pub transport: Option<String>,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub protocol_version: Option<String>,
}

/// How the elicitation guard can reach the human behind this call.
#[derive(Clone)]
pub enum ElicitChannel {
    /// Protocols before 2026-07-28: a server-to-client `elicitation/create` request.
    Request {
        peer: Peer<RoleServer>,
        supported: bool,
    },
    /// 2026-07-28 and later: answer with an input-required result; the retry carries
    /// the handle and the answers.
    InputRequired {
        supported: bool,
        request_state: Option<String>,
        responses: Option<InputResponses>,
    },
    /// No client to ask.
    None,
}

impl std::fmt::Debug for ElicitChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Request { supported, .. } => write!(f, "Request {{ supported: {supported} }}"),
            Self::InputRequired {
                supported,
                request_state,
                ..
            } => {
                write!(
                    f,
                    "InputRequired {{ supported: {supported}, request_state: {request_state:?} }}"
                )
            }
            Self::None => f.write_str("None"),
        }
    }
}

/// Everything about the caller the policy needs.
#[derive(Debug, Clone)]
pub struct CallContext {
    pub principal: Principal,
    pub elicit: ElicitChannel,
}

impl CallContext {
    /// No client to ask (unit tests, internal calls).
    pub fn detached() -> Self {
        Self {
            principal: Principal::default(),
            elicit: ElicitChannel::None,
        }
    }

    /// From an MCP request, on behalf of the transport's principal.
    pub fn from_request(
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
        caller: &crate::transport::Principal,
    ) -> Self {
        let version = ctx.protocol_version();
        let client = ctx.client_info();
        let principal = Principal {
            id: caller.id.clone(),
            session_id: caller.session_id.clone(),
            transport: Some(caller.transport.as_str().to_string()),
            client_name: client.as_ref().map(|c| c.name.clone()),
            client_version: client.as_ref().map(|c| c.version.clone()),
            protocol_version: version.as_ref().map(|v| v.as_str().to_string()),
        };
        let modern = version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let elicit = if modern {
            ElicitChannel::InputRequired {
                supported: ctx
                    .client_capabilities()
                    .is_some_and(|c| c.elicitation.is_some()),
                request_state: request.request_state.clone(),
                responses: request.input_responses.clone(),
            }
        } else {
            ElicitChannel::Request {
                peer: ctx.peer.clone(),
                supported: ctx
                    .peer
                    .supported_elicitation_modes()
                    .contains(&ElicitationMode::Form),
            }
        };
        Self { principal, elicit }
    }
}

/// One entry of a batch, as the approval gate sees it.
#[derive(Debug, Clone, Serialize)]
pub struct BatchEntryView {
    pub tool: String,
    pub class: SafetyClass,
    pub arguments: JsonObject,
}

/// The JSON description of a call POSTed to the webhook.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalRequest {
    pub tool: String,
    /// The class the call is judged as (for a batch, its most dangerous entry's).
    pub class: SafetyClass,
    pub arguments: JsonObject,
    /// The entries of a run_commands batch; `null` for a single call.
    pub batch: Option<Vec<BatchEntryView>>,
    pub principal: Principal,
}

/// The gate's answer when it does not deny.
#[derive(Debug)]
pub enum Approval {
    Granted,
    /// Ask the client (2026-07-28): return this result; the retry completes the call.
    InputRequired(InputRequiredResult),
}

fn denied(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::ApprovalDenied, message).hint(
        "The call was not run and nothing changed. Ask the human operator, or change the request.",
    )
}

/// The webhook's verdict on an HTTP answer: approve only on an explicit approval
/// (`{"approved": true}` or `{"decision": "approve"}`) in a 2xx answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookVerdict {
    Approve,
    /// The webhook answered and said no (or said nothing recognisable in a 2xx or 4xx).
    Deny(String),
    /// The webhook did not work: unreachable, timed out, 5xx, not HTTP. Denies unless
    /// fail-open is set.
    Failed(String),
}

pub fn webhook_verdict(answer: Result<(u16, Vec<u8>), String>) -> WebhookVerdict {
    let (status, body) = match answer {
        Ok(a) => a,
        Err(e) => return WebhookVerdict::Failed(e),
    };
    if status >= 500 {
        return WebhookVerdict::Failed(format!("the approval webhook answered HTTP {status}"));
    }
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let reason = json
        .as_ref()
        .and_then(|j| j.get("reason"))
        .and_then(Value::as_str)
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    if !(200..300).contains(&status) {
        return WebhookVerdict::Deny(format!(
            "the approval webhook answered HTTP {status}{reason}"
        ));
    }
    let explicit = json.as_ref().is_some_and(|j| {
        j.get("approved") == Some(&Value::Bool(true))
            || j.get("decision").and_then(Value::as_str) == Some("approve")
    });
    if explicit {
        WebhookVerdict::Approve
    } else {
        WebhookVerdict::Deny(format!(
            "the approval webhook did not approve the call{reason}"
        ))
    }
}

/// Ask the webhook; the decision rule (fail-closed unless fail-open) is here.
pub async fn ask_webhook(
    config: &ApprovalConfig,
    request: &ApprovalRequest,
) -> Result<(), ToolError> {
    let Some(url) = &config.webhook else {
        return Ok(());
    };
    let body = serde_json::to_vec(request).map_err(|e| ToolError::internal(e.to_string()))?;
    let answer = webhook::post_json(url, &body, config.webhook_timeout).await;
    match webhook_verdict(answer) {
        WebhookVerdict::Approve => Ok(()),
        WebhookVerdict::Deny(why) => Err(denied(format!("{} was denied: {why}", request.tool))),
        WebhookVerdict::Failed(why) if config.fail_open => {
            tracing::warn!(tool = %request.tool, "approval webhook failed ({why}); allowing because {ENV_FAIL_OPEN}=true");
            Ok(())
        }
        WebhookVerdict::Failed(why) => Err(denied(format!(
            "{} was denied: {why}, and the gate fails closed",
            request.tool
        ))
        .hint(format!(
            "Make the approval webhook reachable, or (accepting the risk) set {ENV_FAIL_OPEN}=true."
        ))),
    }
}

const ELICIT_KEY: &str = "approval";

fn elicit_params(request: &ApprovalRequest) -> ElicitRequestParams {
    let what = match &request.batch {
        Some(entries) => format!(
            "run_commands with {} entries ({})",
            entries.len(),
            entries
                .iter()
                .map(|e| format!("{} [{}]", e.tool, e.class.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => request.tool.clone(),
    };
    let args = serde_json::to_string(&request.arguments).unwrap_or_default();
    let args: String = args.chars().take(2000).collect();
    let schema = ElicitationSchema::builder()
        .required_bool("approve")
        .description("Set approve to true to let this call run; anything else refuses it.")
        .build()
        .unwrap_or_else(|_| ElicitationSchema::new(Default::default()));
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "godot-mcp asks to run {what} ({} call) with arguments {args}. Approve?",
            request.class.as_str()
        ),
        requested_schema: schema,
    }
}

/// Approve only an accept whose form says `approve: true`.
fn elicit_answer_approves(action: &ElicitationAction, content: Option<&Value>) -> bool {
    matches!(action, ElicitationAction::Accept)
        && content.and_then(|c| c.get("approve")) == Some(&Value::Bool(true))
}

/// The approval gate: the webhook (when configured), then the elicitation guard (when
/// required). Called only for real (not dry) runs of gated calls.
pub async fn approve(
    state: &AppState,
    ctx: &CallContext,
    request: &ApprovalRequest,
) -> Result<Approval, ToolError> {
    let config = &state.safety.approval;
    if !config.require_elicitation {
        ask_webhook(config, request).await?;
        return Ok(Approval::Granted);
    }
    let cannot_elicit = || {
        denied(format!(
            "{} needs the human's approval ({ENV_REQUIRE} is set), but this client cannot answer \
             elicitation requests",
            request.tool
        ))
        .hint("Use an MCP client that supports elicitation, or ask the operator to unset GODOT_MCP_APPROVAL_REQUIRE.")
    };
    match &ctx.elicit {
        ElicitChannel::None => Err(cannot_elicit()),
        ElicitChannel::Request {
            supported: false, ..
        }
        | ElicitChannel::InputRequired {
            supported: false, ..
        } => Err(cannot_elicit()),
        ElicitChannel::Request { peer, .. } => {
            ask_webhook(config, request).await?;
            let answer = peer
                .create_elicitation(elicit_params(request))
                .await
                .map_err(|e| {
                    denied(format!(
                        "{} was not approved: the elicitation failed ({e})",
                        request.tool
                    ))
                })?;
            if elicit_answer_approves(&answer.action, answer.content.as_ref()) {
                Ok(Approval::Granted)
            } else {
                Err(denied(format!("{} was declined by the user", request.tool)))
            }
        }
        ElicitChannel::InputRequired {
            request_state: None,
            ..
        } => {
            ask_webhook(config, request).await?;
            let handle = state.safety.park(PendingCall {
                tool: request.tool.clone(),
                arguments: request.arguments.clone(),
                webhook_approved: config.webhook.is_some(),
                created: Instant::now(),
            })?;
            let mut requests = InputRequests::new();
            requests.insert(
                ELICIT_KEY.to_string(),
                InputRequest::Elicitation(ElicitRequest::new(elicit_params(request))),
            );
            Ok(Approval::InputRequired(InputRequiredResult::new(
                Some(requests),
                Some(handle),
            )))
        }
        ElicitChannel::InputRequired {
            request_state: Some(handle),
            responses,
            ..
        } => {
            // The handle names a call parked server-side; the retry must be that very call.
            let Some(parked) = state.safety.unpark(handle) else {
                return Err(denied(format!(
                    "{} was not approved: the approval handle is unknown, expired or already used",
                    request.tool
                )));
            };
            if parked.tool != request.tool || parked.arguments != request.arguments {
                return Err(denied(format!(
                    "{} was not approved: the retried call differs from the call that was approved",
                    request.tool
                )));
            }
            if !parked.webhook_approved {
                ask_webhook(config, request).await?;
            }
            let answer = responses.as_ref().and_then(|r| r.get(ELICIT_KEY));
            let action = answer
                .and_then(|a| a.get("action"))
                .and_then(|a| serde_json::from_value::<ElicitationAction>(a.clone()).ok());
            let content = answer.and_then(|a| a.get("content"));
            match action {
                Some(action) if elicit_answer_approves(&action, content) => Ok(Approval::Granted),
                _ => Err(denied(format!("{} was declined by the user", request.tool))),
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// The call pipeline
// ---------------------------------------------------------------------------------

/// What a call produces: a result (or tool error), or a request for client input.
#[derive(Debug)]
pub enum CallOutcome {
    Done(ToolResult),
    InputRequired(InputRequiredResult),
}

/// Run one tool call through every gate, in the order the module docs give.
pub async fn run_call(
    state: &Arc<AppState>,
    def: &ToolDef,
    args: Option<JsonObject>,
    ctx: &CallContext,
) -> CallOutcome {
    let outcome = match run_call_inner(state, def, args.unwrap_or_default(), ctx).await {
        Ok(outcome) => outcome,
        Err(e) => CallOutcome::Done(Err(e)),
    };
    // Test builds prove every result against the tool's published outputSchema.
    #[cfg(feature = "output-check")]
    if let CallOutcome::Done(Ok(v)) = &outcome
        && let Err(e) = crate::output_check::check(def, v)
    {
        return CallOutcome::Done(Err(e));
    }
    outcome
}

async fn run_call_inner(
    state: &Arc<AppState>,
    def: &ToolDef,
    original: JsonObject,
    ctx: &CallContext,
) -> Result<CallOutcome, ToolError> {
    state.safety.check_enabled(def)?;
    if matches!(def.handler, Handler::Batch) {
        return run_batch(state, def, original, ctx).await;
    }
    let mut args = original.clone();
    let flags = split_flags(def.meta.class, &mut args)?;
    let idempotency_key = crate::tools::take_idempotency_key(def, &mut args)?;
    confirm_gate(def.meta.class, flags)?;
    (def.check_args)(&Value::Object(args.clone()))?;
    crate::respath::check_arg_paths(&state.project, &def.input_schema, &args)?;
    // An exact replay answers from the journal before anything is planned: its
    // preconditions (a compare-and-swap hash, say) held for the first run, not now.
    let idempotency = match idempotency_key {
        Some(id) if !flags.dry_run => {
            let key = godot_mcp_journal::IdempotencyKey {
                id,
                principal: ctx.principal.id.clone(),
                session: ctx.principal.session_id.clone().unwrap_or_default(),
                request_hash: godot_mcp_journal::canonical_request_hash(
                    &json!({ "tool": def.meta.name, "arguments": args }),
                ),
            };
            let found =
                state
                    .journal
                    .lock()
                    .lookup_replay(&key, def.meta.toolset.as_str(), def.meta.name);
            match found {
                Ok(Some(replay)) => {
                    return Ok(CallOutcome::Done(Ok(
                        serde_json::to_value(replay).unwrap_or_default()
                    )));
                }
                Ok(None) => Some(key),
                Err(godot_mcp_journal::ReplayLookupError::Conflict { id }) => {
                    return Err(ToolError::new(
                        ErrorCode::Conflict,
                        format!(
                            "idempotency_key {id:?} was already used in a different context \
                             (another tool, session, project generation or request); nothing was run"
                        ),
                    )
                    .param(crate::tools::IDEMPOTENCY_KEY)
                    .hint("Use a fresh idempotency_key for a different request."));
                }
                Err(e) => {
                    tracing::error!(error = %e, "idempotency lookup failed");
                    return Err(ToolError::internal("the journal could not be read"));
                }
            }
        }
        _ => None,
    };
    let journal_call = crate::planes::project::JournalCall {
        toolset: def.meta.toolset.as_str(),
        tool: def.meta.name,
        idempotency,
    };
    let gated = is_gated(def.meta.class, def.runtime) && !flags.dry_run;
    let request = || ApprovalRequest {
        tool: def.meta.name.to_string(),
        class: def.meta.class,
        arguments: original.clone(),
        batch: None,
        principal: ctx.principal.clone(),
    };
    match &def.handler {
        Handler::Direct(handler) => {
            if gated && let Approval::InputRequired(r) = approve(state, ctx, &request()).await? {
                return Ok(CallOutcome::InputRequired(r));
            }
            Ok(CallOutcome::Done(
                handler(state.clone(), Value::Object(args), flags).await,
            ))
        }
        Handler::Planned(planner) => {
            let plan = plan_blocking(planner, state, args).await?;
            if flags.dry_run {
                let effect = preview_effect(plan).await?;
                return Ok(CallOutcome::Done(Ok(preview(def, flags, effect))));
            }
            if gated && let Approval::InputRequired(r) = approve(state, ctx, &request()).await? {
                return Ok(CallOutcome::InputRequired(r));
            }
            Ok(CallOutcome::Done(
                apply_blocking(plan, Some(journal_call)).await,
            ))
        }
        Handler::Batch => Err(ToolError::internal(
            "batch handler reached the single-call path",
        )),
    }
}

/// A dry run's answer: the plan's effect, marked as not applied.
fn preview(def: &ToolDef, flags: CallFlags, effect: Map<String, Value>) -> Value {
    let mut out = effect;
    out.insert("dry_run".into(), json!(true));
    out.insert("applied".into(), json!(false));
    out.insert(
        "confirm_required".into(),
        json!(def.meta.class.requires_confirm() && !flags.confirm),
    );
    Value::Object(out)
}

/// A dry run's effect: the plan's, completed by its preview step where it has one.
async fn preview_effect(plan: crate::tools::ErasedPlan) -> Result<Map<String, Value>, ToolError> {
    let mut effect = plan.effect;
    if let Some(step) = plan.preview {
        let more = tokio::task::spawn_blocking(step)
            .await
            .map_err(|e| ToolError::internal(format!("preview task failed: {e}")))??;
        effect.extend(more);
    }
    Ok(effect)
}

/// Plans read files; run them off the async threads (the stdio server runs on one).
async fn plan_blocking(
    planner: &crate::tools::PlanFn,
    state: &Arc<AppState>,
    args: JsonObject,
) -> Result<crate::tools::ErasedPlan, ToolError> {
    let (planner, state) = (planner.clone(), state.clone());
    tokio::task::spawn_blocking(move || planner(state, Value::Object(args)))
        .await
        .map_err(|e| ToolError::internal(format!("planning task failed: {e}")))?
}

/// Applying fsyncs; run it off the async threads too. `call` names the call to the
/// journal (toolset, tool, idempotency key) for the writes the plan makes.
async fn apply_blocking(
    plan: crate::tools::ErasedPlan,
    call: Option<crate::planes::project::JournalCall>,
) -> ToolResult {
    tokio::task::spawn_blocking(move || match call {
        Some(call) => crate::planes::project::with_call(call, || apply(plan)),
        None => apply(plan),
    })
    .await
    .map_err(|e| ToolError::internal(format!("apply task failed: {e}")))?
}

fn apply(plan: crate::tools::ErasedPlan) -> ToolResult {
    let mut out = plan.effect;
    let applied = (plan.apply)()?;
    out.extend(applied);
    out.insert("dry_run".into(), json!(false));
    out.insert("applied".into(), json!(true));
    Ok(Value::Object(out))
}

/// Largest batch accepted.
pub const MAX_BATCH: usize = 100;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchArgs {
    /// Tool calls, in order (destructive ones carry their own confirm=true).
    pub commands: Vec<BatchEntry>,
}

#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchEntry {
    /// Tool name.
    pub tool: String,
    /// Its arguments.
    #[serde(default)]
    pub arguments: JsonObject,
}

/// run_commands' result (and, on a failure, its error's `details`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BatchResult {
    #[serde(flatten)]
    pub report: crate::honesty::BatchReport,
    /// The most dangerous entry's class: the batch's.
    pub class: SafetyClass,
    pub dry_run: bool,
    pub may_have_applied: bool,
    pub results: Vec<BatchEntryResult>,
}

/// One entry's outcome in a batch result.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct BatchEntryResult {
    pub index: usize,
    pub tool: String,
    pub ok: bool,
    /// The entry's own result (its tool's outputSchema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The entry's error, when `ok` is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// An entry that passed its tool's policy, ready to plan and run.
struct CheckedEntry<'a> {
    def: &'a ToolDef,
    args: JsonObject,
    flags: CallFlags,
}

fn entry_error(index: usize, tool: &str, e: ToolError) -> ToolError {
    let param = match &e.param {
        Some(p) if p == "." => format!("commands[{index}].arguments"),
        Some(p) => format!("commands[{index}].arguments.{p}"),
        None => format!("commands[{index}]"),
    };
    let mut e = e;
    e.param = Some(param);
    let mut details = e.details.take().map(|d| *d).unwrap_or_else(|| json!({}));
    if let Value::Object(d) = &mut details {
        d.insert("index".into(), json!(index));
        d.insert("tool".into(), json!(tool));
        d.insert("applied_count".into(), json!(0));
    }
    e.details = Some(Box::new(details));
    e
}

/// Every entry's own policy, checked before any entry runs: the tool exists, its
/// toolset is enabled, its flags are valid, a destructive entry carries confirm,
/// its arguments decode (path preflight included).
fn check_entries<'a>(
    state: &'a AppState,
    entries: &[BatchEntry],
    batch_dry_run: bool,
) -> Result<Vec<CheckedEntry<'a>>, ToolError> {
    let mut checked = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let tool = entry.tool.strip_prefix("cmd_").unwrap_or(&entry.tool);
        let Some(def) = state.registry.get(tool) else {
            return Err(ToolError::invalid_params(
                format!("commands[{i}].tool"),
                format!(
                    "commands[{i}]: unknown command {:?}; nothing was run",
                    entry.tool
                ),
            )
            .hint("Each command names a tool from tools/list."));
        };
        let fail = |e: ToolError| entry_error(i, def.meta.name, e);
        if matches!(def.handler, Handler::Batch) {
            return Err(ToolError::invalid_params(
                format!("commands[{i}].tool"),
                format!("commands[{i}]: run_commands cannot be nested; nothing was run"),
            ));
        }
        state.safety.check_enabled(def).map_err(|mut e| {
            e.param = Some(format!("commands[{i}].tool"));
            e.details = Some(Box::new(
                json!({"index": i, "tool": def.meta.name, "applied_count": 0}),
            ));
            e
        })?;
        let mut args = entry.arguments.clone();
        if args.contains_key("dry_run") {
            return Err(fail(ToolError::invalid_params(
                "dry_run",
                "dry_run is set on run_commands itself, not on its entries",
            )));
        }
        let flags = split_flags(def.meta.class, &mut args).map_err(fail)?;
        // As for a single call, a preview needs no confirm (it reports confirm_required).
        let as_run = CallFlags {
            dry_run: batch_dry_run,
            ..flags
        };
        confirm_gate(def.meta.class, as_run).map_err(fail)?;
        (def.check_args)(&Value::Object(args.clone())).map_err(fail)?;
        crate::respath::check_arg_paths(&state.project, &def.input_schema, &args).map_err(fail)?;
        checked.push(CheckedEntry { def, args, flags });
    }
    Ok(checked)
}

/// run_commands: per-entry policy for all entries first, one approval as the most
/// dangerous entry's class, then entries in order; a failure stops the batch and the
/// result says where, what ran, and what was skipped.
async fn run_batch(
    state: &Arc<AppState>,
    def: &ToolDef,
    original: JsonObject,
    ctx: &CallContext,
) -> Result<CallOutcome, ToolError> {
    let mut args = original.clone();
    let flags = split_flags(def.meta.class, &mut args)?;
    let batch: BatchArgs = decode_args(Value::Object(args))?;
    if batch.commands.is_empty() || batch.commands.len() > MAX_BATCH {
        return Err(ToolError::invalid_params(
            "commands",
            format!("commands must hold 1 to {MAX_BATCH} entries"),
        ));
    }
    let entries = check_entries(state, &batch.commands, flags.dry_run)?;
    let n = entries.len();
    let class = entries
        .iter()
        .map(|e| e.def.meta.class)
        .chain([def.meta.class])
        .max_by_key(|c| c.danger_rank())
        .unwrap_or(def.meta.class);
    let gated = entries
        .iter()
        .any(|e| is_gated(e.def.meta.class, e.def.runtime));
    if !flags.dry_run && gated {
        let request = ApprovalRequest {
            tool: def.meta.name.to_string(),
            class,
            arguments: original.clone(),
            batch: Some(
                entries
                    .iter()
                    .map(|e| BatchEntryView {
                        tool: e.def.meta.name.to_string(),
                        class: e.def.meta.class,
                        arguments: e.args.clone(),
                    })
                    .collect(),
            ),
            principal: ctx.principal.clone(),
        };
        if let Approval::InputRequired(r) = approve(state, ctx, &request).await? {
            return Ok(CallOutcome::InputRequired(r));
        }
    }
    let mut results = Vec::with_capacity(n);
    let mut failure: Option<(usize, ToolError)> = None;
    let mut touched_editor = false;
    for (i, entry) in entries.into_iter().enumerate() {
        let outcome = run_entry(state, entry.def, entry.args, entry.flags, flags.dry_run).await;
        match outcome {
            Ok(v) => {
                touched_editor |=
                    entry.def.meta.effect == EffectKind::EditorRuntime && !flags.dry_run;
                results.push(BatchEntryResult {
                    index: i,
                    tool: entry.def.meta.name.into(),
                    ok: true,
                    result: Some(v),
                    error: None,
                });
            }
            Err(e) => {
                results.push(BatchEntryResult {
                    index: i,
                    tool: entry.def.meta.name.into(),
                    ok: false,
                    result: None,
                    error: Some(serde_json::to_value(&e).unwrap_or_default()),
                });
                failure = Some((i, e));
                break;
            }
        }
    }
    let completed = failure.as_ref().map_or(n, |(i, _)| *i);
    let mut hints = Vec::new();
    // An entry that timed out was sent and may still apply (the editor drains its
    // commands serially; a game resumes): the batch must not read as "stopped
    // before commands[i]" only.
    let may_have_applied = failure.as_ref().is_some_and(|(_, e)| {
        e.details
            .as_ref()
            .is_some_and(|d| d["may_have_applied"] == json!(true))
    });
    if let Some((i, e)) = &failure
        && may_have_applied
    {
        hints.push(format!(
            "commands[{i}] ({}) timed out and may have been applied ({}: it was sent, and \
             no answer came); re-read what it touches before retrying it.",
            out_tool(&results, *i),
            e.code.as_str()
        ));
    }
    if let Some((i, _)) = &failure {
        if completed > 0 && !flags.dry_run {
            hints.push(format!(
                "commands[0..{i}] were applied and are not rolled back; re-read what they touched before retrying."
            ));
        }
        if i + 1 < n {
            hints.push(format!(
                "commands[{}..{n}] were skipped ({} entries); none of them ran.",
                i + 1,
                n - i - 1
            ));
        }
    }
    if touched_editor {
        hints.push("The open scene has unsaved changes from this batch; save it (save_scene) to persist them.".into());
    }
    let report = BatchReport {
        completed,
        aborted_at: failure.as_ref().map(|(i, _)| *i),
        skipped_count: failure.as_ref().map_or(0, |(i, _)| n - i - 1),
        hint: (!hints.is_empty()).then(|| hints.join(" ")),
    };
    let hint = report.hint.clone();
    let out = BatchResult {
        report,
        class,
        dry_run: flags.dry_run,
        may_have_applied,
        results,
    };
    let out = serde_json::to_value(&out).map_err(|e| ToolError::internal(e.to_string()))?;
    match failure {
        None => Ok(CallOutcome::Done(Ok(out))),
        // Half-done is never success: the batch is an error carrying the full report.
        Some((i, e)) => {
            let verb = if flags.dry_run {
                "would stop"
            } else {
                "stopped"
            };
            let mut err = ToolError::new(
                e.code,
                format!(
                    "run_commands {verb} at commands[{i}] ({}): {}",
                    out["results"][i]["tool"].as_str().unwrap_or("?"),
                    e.message
                ),
            )
            .param(format!(
                "commands[{i}].arguments{}",
                e.param
                    .as_deref()
                    .map(|p| format!(".{p}"))
                    .unwrap_or_default()
            ))
            .details(out);
            err.required = e.required.clone();
            err.hint = hint.or(e.hint.clone());
            Ok(CallOutcome::Done(Err(err)))
        }
    }
}

/// The tool name recorded for `results[i]`.
fn out_tool(results: &[BatchEntryResult], i: usize) -> String {
    results
        .get(i)
        .map_or_else(|| "?".into(), |r| r.tool.clone())
}

/// Run (or, in a dry run, preview) one checked entry.
async fn run_entry(
    state: &Arc<AppState>,
    def: &ToolDef,
    args: JsonObject,
    flags: CallFlags,
    dry_run: bool,
) -> ToolResult {
    let flags = CallFlags { dry_run, ..flags };
    match &def.handler {
        Handler::Planned(planner) => {
            let plan = plan_blocking(planner, state, args).await?;
            if dry_run {
                Ok(preview(def, flags, preview_effect(plan).await?))
            } else {
                let call = crate::planes::project::JournalCall {
                    toolset: def.meta.toolset.as_str(),
                    tool: def.meta.name,
                    idempotency: None,
                };
                apply_blocking(plan, Some(call)).await
            }
        }
        Handler::Direct(handler) => {
            if dry_run && def.meta.class != SafetyClass::ReadOnly {
                if def.meta.class.takes_dry_run() {
                    return handler(state.clone(), Value::Object(args), flags).await;
                }
                return Ok(
                    json!({"dry_run": true, "applied": false, "note": "would run; this tool has no preview"}),
                );
            }
            handler(state.clone(), Value::Object(args), flags).await
        }
        Handler::Batch => Err(ToolError::internal("nested batch")),
    }
}

#[cfg(test)]
mod tests;
