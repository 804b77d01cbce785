//! Preconditions a tool can require (the editor bridge, a Godot binary, ...), each
//! with the token its error names and the way to recover.

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};

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
                "Editing tools start this server's own editor by themselves when Godot is \
                 found (GODOT_BIN) and the godot_mcp add-on is enabled in project.godot \
                 (Project > Project Settings > Plugins); else start_editor (toolset \
                 editor_process: manage_toolsets {\"enable\": [\"editor_process\"]}), or \
                 open the project in the Godot editor with the add-on enabled: it connects by \
                 itself."
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
pub(crate) fn find_godot_binary(
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

pub(super) fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && godot_mcp_os::fs::is_executable(&m))
}
