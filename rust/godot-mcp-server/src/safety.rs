//! The permission model, whole: safety classes and what each requires of a call.
//!
//! Every tool declares a [`SafetyClass`]; there is no `Default`, so a tool without
//! one does not compile. The class follows the *effect*, not the verb
//! (spec: safety-model.md, "Classification rule"):
//!
//! - reversible, additive editor edit that UndoRedo restores → `mutating`;
//! - removes/overwrites existing data, or writes disk/project state the undo stack
//!   does not cover → `destructive`;
//! - side-effecting observation or game execution → `runtime`;
//! - nothing changes → `read_only`.
//!
//! This module is meant to be read alone by an auditor: the class of a tool, the
//! extra parameters it takes, the MCP annotations derived from it, and the gate
//! checks applied to every call are all here.

use rmcp::model::ToolAnnotations;
use serde::Serialize;

/// Risk class of a tool. Deliberately no `Default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
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

/// A family of tools, enabled or disabled together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Toolset {
    /// Project metadata and file listing.
    Project,
    /// Scene files and the scene tree.
    Scenes,
    /// Scripts.
    Scripts,
    /// Resource files (.tres).
    Resources,
    /// The journal: transactions and the write gate.
    Transactions,
}

impl Toolset {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::Scenes => "scenes",
            Self::Scripts => "scripts",
            Self::Resources => "resources",
            Self::Transactions => "transactions",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_follow_class() {
        let ro = SafetyClass::ReadOnly.annotations("t");
        assert_eq!(ro.read_only_hint, Some(true));
        assert_eq!(ro.destructive_hint, Some(false));
        let d = SafetyClass::Destructive.annotations("t");
        assert_eq!(d.read_only_hint, Some(false));
        assert_eq!(d.destructive_hint, Some(true));
        let m = SafetyClass::Mutating.annotations("t");
        assert_eq!(m.destructive_hint, Some(false));
        assert_eq!(m.idempotent_hint, Some(false));
    }

    #[test]
    fn only_destructive_requires_confirm() {
        for c in SafetyClass::ALL {
            assert_eq!(c.requires_confirm(), c == SafetyClass::Destructive);
        }
        assert!(SafetyClass::Mutating.takes_dry_run());
        assert!(!SafetyClass::ReadOnly.takes_dry_run());
        assert!(!SafetyClass::Runtime.takes_dry_run());
    }
}
