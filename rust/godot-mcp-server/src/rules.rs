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

mod preconditions;
mod state;
mod toolsets;

pub(crate) use preconditions::*;
pub use state::*;
pub use toolsets::*;

use rmcp::model::ToolAnnotations;
use serde::Serialize;

use crate::error::{ErrorCode, ToolError};

// ---------------------------------------------------------------------------------
// Classes, effects, toolsets
// ---------------------------------------------------------------------------------

/// Risk class of a tool. Deliberately no `Default`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SafetyClass {
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
    #[cfg(test)]
    pub(crate) const ALL: [SafetyClass; 4] = [
        SafetyClass::ReadOnly,
        SafetyClass::Mutating,
        SafetyClass::Destructive,
        SafetyClass::Runtime,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::Mutating => "mutating",
            Self::Destructive => "destructive",
            Self::Runtime => "runtime",
        }
    }

    /// Whether calls of this class accept `dry_run`.
    pub(crate) fn takes_dry_run(self) -> bool {
        matches!(self, Self::Mutating | Self::Destructive)
    }

    /// Whether calls of this class must carry `confirm=true` to take effect.
    pub(crate) fn requires_confirm(self) -> bool {
        matches!(self, Self::Destructive)
    }

    /// How dangerous the class is, for presenting a batch to the approval gate as its
    /// most dangerous entry. Runtime ranks above mutating: game execution is not on
    /// any undo stack.
    pub(crate) fn danger_rank(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::Mutating => 1,
            Self::Runtime => 2,
            Self::Destructive => 3,
        }
    }

    /// MCP annotations derived from the class, so clients that honour hints see the
    /// same risk the server enforces. A hint equal to the protocol's default is left out
    /// (readOnlyHint false, idempotentHint false; destructive and idempotent of a
    /// read-only tool, which the protocol says are meaningless there): every byte of the
    /// list is paid on every turn. destructiveHint defaults to true, so it is always
    /// sent for a tool that changes something.
    pub(crate) fn annotations(self, title: &str) -> ToolAnnotations {
        let mut a = ToolAnnotations::with_title(title);
        match self {
            Self::ReadOnly => a.read_only_hint = Some(true),
            Self::Destructive => a.destructive_hint = Some(true),
            Self::Mutating | Self::Runtime => a.destructive_hint = Some(false),
        }
        // Every tool acts on the one project this server serves: a closed world.
        a.open_world_hint = Some(false);
        a
    }
}

/// The safety classes as types, so that which handler a tool may have is checked by the
/// compiler: a tool of a [`OneStep`] class (read-only, runtime) runs in one step
/// (`ToolDef::new`), a tool of a [`Plans`] class (mutating, destructive) is planned
/// first (`ToolDef::planned`), and neither compiles with the other's class.
pub(crate) mod class {
    use super::SafetyClass;

    /// A safety class as a type: its [`SafetyClass`].
    pub(crate) trait Class: Copy {
        const CLASS: SafetyClass;
    }

    /// A class whose tools run in one step: no plan, so no dry run and no confirm.
    pub(crate) trait OneStep: Class {}

    /// A class whose tools plan first (a dry run answers with the plan's effect).
    pub(crate) trait Plans: Class {}

    macro_rules! classes {
        ($($(#[$doc:meta])* $name:ident: $kind:ident;)*) => {$(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy)]
            pub(crate) struct $name;
            impl Class for $name {
                const CLASS: SafetyClass = SafetyClass::$name;
            }
            impl $kind for $name {}
        )*};
    }

    classes! {
        /// [`SafetyClass::ReadOnly`].
        ReadOnly: OneStep;
        /// [`SafetyClass::Runtime`].
        Runtime: OneStep;
        /// [`SafetyClass::Mutating`].
        Mutating: Plans;
        /// [`SafetyClass::Destructive`].
        Destructive: Plans;
    }
}

/// Which kind of durable effect a tool makes: the journal's effect kind (which selects
/// the proof form), or `None` for a tool that only reads. One enum for the server and
/// the journal.
pub(crate) use godot_mcp_journal::EffectKind;

/// How tools/list and the docs spell a tool's effect kind: the journal's name, or
/// `none` for a read.
pub(crate) fn effect_str(effect: Option<EffectKind>) -> &'static str {
    effect.map_or("none", EffectKind::as_str)
}

/// What a runtime tool does beyond running the game; either flag routes it to the
/// approval gate (export_project writes disk, evaluate_expression executes code).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct RuntimeFlags {
    pub writes_disk: bool,
    pub executes_code: bool,
}

/// Whether a call of this tool goes to the approval gate (when one is configured).
pub(crate) fn is_gated(class: SafetyClass, flags: RuntimeFlags) -> bool {
    match class {
        SafetyClass::ReadOnly => false,
        SafetyClass::Mutating | SafetyClass::Destructive => true,
        SafetyClass::Runtime => flags.writes_disk || flags.executes_code,
    }
}

// ---------------------------------------------------------------------------------
// The confirm gate
// ---------------------------------------------------------------------------------

/// The class-derived flags of one call, taken out of the arguments by the registry
/// so that every mutating and destructive tool accepts them identically.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CallFlags {
    /// Run preconditions and report what would happen; change nothing.
    pub dry_run: bool,
    /// The caller's deliberate opt-in to a destructive effect.
    pub confirm: bool,
}

/// The exact text of a destructive call made without confirm (spec).
pub(crate) const CONFIRM_MESSAGE: &str =
    "This call discards unsaved changes. Set confirm=True to proceed.";

/// The confirm refusal of a save: a save discards nothing unsaved, it replaces the
/// file on disk with the editor's scene, which no undo brings back (issue 40).
pub(crate) const SAVE_CONFIRM_MESSAGE: &str = "This call overwrites the scene's file on disk; undo cannot restore it. Set confirm=True \
     to proceed.";

/// The confirm refusal of a call that writes, creates or removes project files or
/// settings: it discards no unsaved changes either (issue 40: in agent run 7 five agents
/// creating a script, a bus layout or a setting called the spec's text a wrong refusal).
pub(crate) const FILE_CONFIRM_MESSAGE: &str = "This call changes project files (or settings) on disk, which undo does not restore. \
     Set confirm=True to proceed.";

/// The confirm refusal's message for `tool`: the spec's text, except where its reason
/// is not the tool's (a save or a file write discards no unsaved changes).
pub(crate) fn confirm_message(tool: &str, effect: Option<EffectKind>) -> &'static str {
    match (tool, effect) {
        ("save_scene" | "save_all_scenes", _) => SAVE_CONFIRM_MESSAGE,
        (_, Some(EffectKind::File)) => FILE_CONFIRM_MESSAGE,
        _ => CONFIRM_MESSAGE,
    }
}

/// A destructive call that is not a dry run must carry `confirm=true`. `confirm` is an
/// accident guard the agent sets itself, not human oversight (that is the approval gate).
pub(crate) fn confirm_gate(
    tool: &str,
    class: SafetyClass,
    effect: Option<EffectKind>,
    flags: CallFlags,
) -> Result<(), ToolError> {
    if class.requires_confirm() && !flags.dry_run && !flags.confirm {
        return Err(
            ToolError::new(ErrorCode::PreconditionFailed, confirm_message(tool, effect))
                .param("confirm")
                .required("confirm")
                .hint(confirm_hint(effect)),
        );
    }
    Ok(())
}

/// The confirm refusal's hint: what the call really does (the spec's message speaks of
/// unsaved changes, which a call creating a new file discards none of: agents read it
/// as a wrong refusal), then the way through.
pub(crate) fn confirm_hint(effect: Option<EffectKind>) -> &'static str {
    match effect {
        Some(EffectKind::File) => {
            "The journal records each file it changes. Check it with dry_run=true, then \
             call again with confirm=true."
        }
        _ => "Check the effect first with dry_run=true, then call again with confirm=true.",
    }
}
