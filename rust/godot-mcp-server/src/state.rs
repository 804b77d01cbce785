//! What every request handler shares: the project and the tool registry.

use crate::project::Project;
use crate::safety::{ApprovalConfig, SafetyState, Toolset};
use crate::tools::Registry;

/// Limits on what a single call may ask for or return. Bounded so that a huge or
/// hostile request gets a structured error instead of exhausting memory.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest file a read tool returns or parses, in bytes.
    pub max_read_bytes: u64,
    /// Largest page a listing returns.
    pub max_page: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_read_bytes: 16 * 1024 * 1024,
            max_page: 1000,
        }
    }
}

/// Shared server state.
#[derive(Debug)]
pub struct AppState {
    pub project: Project,
    pub registry: Registry,
    pub limits: Limits,
    /// Approval configuration, enabled toolsets, calls awaiting approval.
    pub safety: SafetyState,
}

impl AppState {
    /// Default toolsets and no approval gate; `serve` uses [`AppState::with_safety`]
    /// with the operator's configuration.
    pub fn new(project: Project) -> Self {
        Self::with_safety(
            project,
            SafetyState::new(
                ApprovalConfig::default(),
                Toolset::DEFAULT.into_iter().collect(),
            ),
        )
    }

    pub fn with_safety(project: Project, safety: SafetyState) -> Self {
        Self {
            project,
            registry: Registry::builtin(),
            limits: Limits::default(),
            safety,
        }
    }
}
