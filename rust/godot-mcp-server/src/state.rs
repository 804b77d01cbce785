//! What every request handler shares: the project, its journal and the tool registry.

use godot_mcp_journal::Journal;
use parking_lot::Mutex;

use crate::config::Config;
use crate::planes::editor::EditorPlane;
use crate::project_root::Project;
use crate::rules::SafetyState;

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
    pub limits: Limits,
    /// The project's journal. The mutex is the per-project write serialization: one
    /// durable mutation at a time, whichever agent or transport asks.
    pub journal: Mutex<Journal>,
    /// Approval configuration, enabled toolsets, calls awaiting approval.
    pub safety: SafetyState,
    /// The process plane: supervised Godot launches of this server.
    pub process: crate::planes::process::Supervisor,
    /// The bridge to the editor add-on; started by `serve`, absent in tests that do not
    /// start it (every editor tool then fails `bridge_connected`).
    pub editor: EditorPlane,
    /// The operator's configuration, read once at start (`serve`); the documented
    /// defaults for a state built without one (tests).
    pub config: Config,
    /// Where log lines go to the clients that asked for them (`logging/setLevel`).
    pub log: std::sync::Arc<crate::logging::LogHub>,
    /// The sessions watching the journal's resources (`resources/subscribe`).
    pub subscriptions: crate::subscriptions::Subscriptions,
    /// The agents' open changes (begin_change … commit_change), by session.
    pub changes: crate::planes::project::Changes,
    /// The images this server's tools answered with, by capture id.
    pub captures: crate::captures::Captures,
    /// The class reference of the Godot binary, once loaded. A lock held across the
    /// load: a second caller waits for the first doctool run, not a second one.
    pub class_reference: tokio::sync::Mutex<Option<LoadedClassDb>>,
}

/// The class reference in memory, with the binary it came from (path, size, modified
/// time): a different binary reloads.
#[derive(Debug)]
pub struct LoadedClassDb {
    pub binary: (std::path::PathBuf, u64, Option<std::time::SystemTime>),
    pub db: std::sync::Arc<godot_mcp_formats::classdoc::ClassDb>,
}

impl crate::planes::project::Store for AppState {
    fn project(&self) -> &Project {
        &self.project
    }
    fn journal(&self) -> &Mutex<Journal> {
        &self.journal
    }
}

impl crate::planes::process::Records for AppState {
    fn journal(&self) -> &Mutex<Journal> {
        &self.journal
    }
    fn journal_changed(&self) {
        self.subscriptions.journal_changed(&self.journal);
    }
}

#[cfg(test)]
impl AppState {
    /// A state for unit tests: the project at `root` (its project.godot must exist), a
    /// reconciled journal in `root/.state`, every toolset enabled.
    pub(crate) fn for_tests(root: &std::path::Path) -> Self {
        let p = Project::discover(Some(root), std::path::Path::new("/")).unwrap();
        let mut journal = Journal::open(&root.join(".state"), p.root()).unwrap();
        journal.reconcile().unwrap();
        let safety = SafetyState::new(
            crate::rules::ApprovalConfig::default(),
            crate::rules::Toolset::ALL.into_iter().collect(),
        );
        Self::new(p, journal, safety)
    }
}

impl AppState {
    /// Every transport builds its state here, with the operator's safety
    /// configuration: there is deliberately no constructor without one, so no
    /// transport can come up without the approval gate it was configured with.
    pub fn new(project: Project, journal: Journal, safety: SafetyState) -> Self {
        Self {
            project,
            limits: Limits::default(),
            journal: Mutex::new(journal),
            safety,
            process: Default::default(),
            editor: EditorPlane::default(),
            config: Config::default(),
            log: Default::default(),
            subscriptions: Default::default(),
            changes: Default::default(),
            captures: Default::default(),
            class_reference: Default::default(),
        }
    }

    /// The same state with the operator's configuration.
    pub fn with_config(self, config: Config) -> Self {
        Self { config, ..self }
    }

    /// The same state with the log hub `serve`'s tracing layer feeds.
    pub fn with_log(self, log: std::sync::Arc<crate::logging::LogHub>) -> Self {
        Self { log, ..self }
    }
}
