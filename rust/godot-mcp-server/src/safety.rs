//! The call pipeline: every tool call passes the rules of `crate::rules` here, in
//! the order below ([`pipeline`]), and the approval gate ([`approval`], with its
//! webhook client [`webhook`]). The server calls [`run_call`]; the tools never call
//! back up into it.
//!
//! # The order of checks for one call ([`run_call`])
//!
//! 1. The tool's toolset is enabled, else `TOOL_DISABLED`.
//! 2. `dry_run` / `confirm` are taken out of the arguments; each is accepted only by
//!    the classes that take it, and only as a boolean.
//! 3. Every res:// path the arguments carry — each `ResPath` parameter wherever it is
//!    nested, and each res:// string inside a typed value (`{"$type": "Resource",
//!    "path": …}`) — is resolved, symlinks included, and refused as `PATH_REFUSED`
//!    unless it lies inside the project (`project_root::check_arg_paths`). Then the
//!    arguments are decoded: wrong types, missing and unknown fields are refused, naming
//!    the field. Both are before every precondition, so a hostile path is refused even
//!    when no editor is connected.
//! 4. A destructive call that is not a dry run needs `confirm=true`, else exactly
//!    `PRECONDITION_FAILED: This call discards unsaved changes. Set confirm=True to
//!    proceed. [required=confirm]` (a save, or a tool whose effect is a file write, says
//!    what it does instead: [`crate::rules::confirm_message`]) — after the arguments, so
//!    a call with a wrong field is told that first.
//! 5. The tool plans: every precondition ([`crate::rules::Precondition`]) and every check of the
//!    write seam runs, nothing is changed. A dry run stops here and returns the plan,
//!    which is by construction what the real run reports.
//! 6. The approval gate ([`approve`]) for mutating and destructive calls, and runtime
//!    tools flagged `writes_disk` / `executes_code`: the webhook, then the
//!    elicitation guard, when configured. Dry runs change nothing and are not gated.
//! 7. The plan is applied.
//!
//! `run_commands` (`pipeline::run_batch`) resolves each entry to the tool behind it and runs
//! steps 1–4 for *every* entry before any entry runs; the batch goes to the gate once,
//! as its most dangerous entry's class; a failure stops the batch and says where.
//!
//! The editor add-on holds no policy: every decision above is made here.

pub(crate) mod approval;
pub(crate) mod pipeline;
pub(crate) mod webhook;

pub(crate) use approval::*;
pub(crate) use pipeline::*;

#[cfg(test)]
mod tests;
