//! `godot-mcp transaction repair`: the operator's only way to resolve a
//! quarantined transaction. It re-derives every proof field itself, against
//! the current project object and generation, and journals exactly one
//! proof-backed transition — or refuses and changes nothing.
//!
//! Nothing here is reachable from a tool or transport; the server's CLI calls
//! [`run`]. There is no force option by construction: [`RepairRequest`] has no
//! field that could skip a check.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::durable;
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::{Journal, OpenError, now_ms, record_terminal};
use crate::process_table::ProcessTable;
use crate::proof::{Deriver, FileIntent, FileProof, Intent, Proof, ProofBasis};

/// The `schema` value of a repair-proof file this build accepts.
pub const PROOF_SCHEMA: &str = "godot-mcp.repair-proof/1";

/// The four repair operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepairOperation {
    /// Re-derive and report the would-be transition; records nothing.
    Reconcile,
    /// Undo the effect from a proven pre-state; records `compensated`.
    Compensate,
    /// Terminate a proven, still-contained survivor (`process_launch` only).
    Terminate,
    /// Record a proven post-state as `committed`.
    AcknowledgeSafeState,
}

impl RepairOperation {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reconcile => "reconcile",
            Self::Compensate => "compensate",
            Self::Terminate => "terminate",
            Self::AcknowledgeSafeState => "acknowledge-safe-state",
        }
    }
}

impl fmt::Display for RepairOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Not one of the four operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown repair operation {0:?} (expected reconcile, compensate, terminate or acknowledge-safe-state)"
)]
pub struct ParseOperationError(pub String);

impl FromStr for RepairOperation {
    type Err = ParseOperationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "reconcile" => Self::Reconcile,
            "compensate" => Self::Compensate,
            "terminate" => Self::Terminate,
            "acknowledge-safe-state" => Self::AcknowledgeSafeState,
            other => return Err(ParseOperationError(other.to_owned())),
        })
    }
}

/// The canonical repair-proof file (`--proof-file`). Every field is checked
/// against what the command re-derives; unknown fields are refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepairProof {
    /// Always [`PROOF_SCHEMA`].
    pub schema: String,
    /// The transaction being repaired.
    pub transaction_id: TxnId,
    /// The project's object id, from `project.json` (32 hex digits).
    pub project_object_id: String,
    /// The project's generation, from `project.json`.
    pub generation: u64,
    /// The operation this proof is for.
    pub operation: RepairOperation,
    /// The transaction's recorded effect kind.
    pub effect_kind: EffectKind,
    /// For `file`: what the operator observed on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileClaim>,
}

/// The operator's claim about a `file` target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileClaim {
    /// The project-relative target path, as the journal recorded it.
    pub path: String,
    /// Its state now: `{"state":"absent"}` or `{"state":"present","sha256":"…"}`.
    pub observed: FileState,
}

/// One repair invocation.
#[derive(Clone, Debug)]
pub struct RepairRequest {
    /// The project directory.
    pub project: PathBuf,
    /// The transaction to repair.
    pub transaction_id: TxnId,
    /// What to do.
    pub operation: RepairOperation,
    /// The proof file.
    pub proof_file: PathBuf,
    /// Re-derive and report, record and change nothing.
    pub dry_run: bool,
}

/// What a successful repair did (or, for `reconcile` and `--dry-run`, would do).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairReport {
    /// The transaction.
    pub transaction_id: TxnId,
    /// The operation.
    pub operation: RepairOperation,
    /// Its state before.
    pub from: TxnStatus,
    /// The proven state it moves (or would move) to.
    pub to: TxnStatus,
    /// Whether the transition was journaled.
    pub recorded: bool,
    /// The re-derived proof.
    pub proof: Proof,
    /// Filesystem actions taken (or, when not recorded, that would be taken).
    pub actions: Vec<String>,
}

impl RepairReport {
    /// One line for the terminal.
    pub fn summary(&self) -> String {
        let verb = if self.recorded {
            "recorded"
        } else {
            "would record"
        };
        let mut s = format!(
            "transaction {} {}: {verb} {} -> {} ({})",
            self.transaction_id,
            self.operation,
            self.from,
            self.to,
            self.proof.summary()
        );
        for a in &self.actions {
            s.push_str("; ");
            s.push_str(a);
        }
        s
    }
}

/// Why a repair was refused. Every refusal leaves the transaction exactly as
/// it was and exits non-zero ([`RepairRefusal::exit_code`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RepairRefusal {
    /// The proof file is missing or unreadable.
    #[error("no proof: cannot read proof file {path}: {source}")]
    NoProof {
        /// The proof file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The proof file is not a valid repair proof.
    #[error("proof file {path} is not a valid {PROOF_SCHEMA} document: {reason}")]
    InvalidProof {
        /// The proof file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The journal could not be opened (e.g. a server holds the lease).
    #[error("cannot open the journal: {0}")]
    Open(#[from] OpenError),
    /// No such transaction in this project's journal.
    #[error("no transaction {0} in this project's journal")]
    UnknownTransaction(TxnId),
    /// The transaction or proof belongs to another project object or generation.
    #[error(
        "wrong project: {what} names project object {found} generation {found_generation}, \
         this project is object {current} generation {current_generation}"
    )]
    WrongProject {
        /// `transaction` or `proof`.
        what: &'static str,
        /// The object id found.
        found: String,
        /// The generation found.
        found_generation: u64,
        /// The current object id.
        current: String,
        /// The current generation.
        current_generation: u64,
    },
    /// A proof field disagrees with the request or with what was re-derived.
    #[error("wrong proof: {field} is {claimed} in the proof file, re-derived {derived}")]
    ProofMismatch {
        /// The field.
        field: &'static str,
        /// The proof file's value.
        claimed: String,
        /// The re-derived value.
        derived: String,
    },
    /// Only quarantined transactions are repaired.
    #[error("transaction {transaction_id} is {status}, not quarantined; nothing to repair")]
    NotQuarantined {
        /// The transaction.
        transaction_id: TxnId,
        /// Its state.
        status: TxnStatus,
    },
    /// The operation does not apply to the transaction's effect kind.
    #[error("{operation} does not apply to a {kind} transaction")]
    NotApplicable {
        /// The operation.
        operation: RepairOperation,
        /// The effect kind.
        kind: EffectKind,
    },
    /// The state the operation needs could not be proven.
    #[error("unproven: {0}")]
    Unproven(String),
    /// Re-deriving failed with an I/O error.
    #[error("I/O error while re-deriving {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The journal database failed; nothing was recorded.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
}

impl RepairRefusal {
    /// The process exit status: 3 when the journal is unavailable (a server
    /// holds the lease), 1 for every other refusal. (2 is the CLI's usage error.)
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Open(_) => 3,
            _ => 1,
        }
    }
}

struct Row {
    object_id: String,
    generation: i64,
    kind: String,
    state: String,
    intent_json: String,
    reason: Option<String>,
}

/// Runs one repair of `req.project`'s journal under the state root `state_root`.
pub fn run(state_root: &Path, req: &RepairRequest) -> Result<RepairReport, RepairRefusal> {
    run_with(state_root, req, crate::process_table::os())
}

/// [`run`], asking `procs` every question about processes (a launch's
/// identity, its boundary's members, the boot id, the signals): the seam
/// reconciliation has too ([`Journal::reconcile_with`]), so the rules are
/// tested against an in-memory table.
pub fn run_with(
    state_root: &Path,
    req: &RepairRequest,
    procs: &dyn ProcessTable,
) -> Result<RepairReport, RepairRefusal> {
    let proof = read_proof(&req.proof_file)?;
    let journal = Journal::open(state_root, &req.project)?;
    repair(journal, req, &proof, procs)
}

fn read_proof(path: &Path) -> Result<RepairProof, RepairRefusal> {
    let bytes = fs::read(path).map_err(|source| RepairRefusal::NoProof {
        path: path.to_path_buf(),
        source,
    })?;
    let proof: RepairProof =
        serde_json::from_slice(&bytes).map_err(|e| RepairRefusal::InvalidProof {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    if proof.schema != PROOF_SCHEMA {
        return Err(RepairRefusal::InvalidProof {
            path: path.to_path_buf(),
            reason: format!("schema is {:?}, expected {PROOF_SCHEMA:?}", proof.schema),
        });
    }
    Ok(proof)
}

fn mismatch(field: &'static str, claimed: impl ToString, derived: impl ToString) -> RepairRefusal {
    RepairRefusal::ProofMismatch {
        field,
        claimed: claimed.to_string(),
        derived: derived.to_string(),
    }
}

/// The state of `target` now, which must be the state the proof claims.
fn observe_claimed(target: &Path, claim: &FileClaim) -> Result<FileState, RepairRefusal> {
    let observed = durable::read_state(target).map_err(|source| RepairRefusal::Io {
        path: target.to_path_buf(),
        source,
    })?;
    if claim.observed != observed {
        return Err(mismatch("file.observed", claim.observed, observed));
    }
    Ok(observed)
}

/// The report of a repair of the quarantined transaction `req` names.
fn report(
    req: &RepairRequest,
    to: TxnStatus,
    recorded: bool,
    proof: Proof,
    actions: Vec<String>,
) -> RepairReport {
    RepairReport {
        transaction_id: req.transaction_id,
        operation: req.operation,
        from: TxnStatus::Quarantined,
        to,
        recorded,
        proof,
        actions,
    }
}

fn repair(
    mut journal: Journal,
    req: &RepairRequest,
    proof: &RepairProof,
    procs: &dyn ProcessTable,
) -> Result<RepairReport, RepairRefusal> {
    let txn = req.transaction_id;
    let identity = journal.identity.clone();
    let row = journal
        .conn()
        .query_row(
            "SELECT project_object_id, generation, effect_kind, state, intent_json, reason
             FROM transactions WHERE id = ?1",
            [txn.to_string()],
            |r| {
                Ok(Row {
                    object_id: r.get(0)?,
                    generation: r.get(1)?,
                    kind: r.get(2)?,
                    state: r.get(3)?,
                    intent_json: r.get(4)?,
                    reason: r.get(5)?,
                })
            },
        )
        .optional()?
        .ok_or(RepairRefusal::UnknownTransaction(txn))?;

    // Identity: the transaction's and the proof's, against the current project.
    let wrong = |what, found: &str, found_generation: u64| RepairRefusal::WrongProject {
        what,
        found: found.to_owned(),
        found_generation,
        current: identity.object_id.clone(),
        current_generation: identity.generation,
    };
    // The proof names the project as it is now (`project.json`), whatever
    // incarnation the row was recorded for: every field is re-derived against
    // the current object and generation — the directory at the path now —
    // never against an identity the operator copied from the row. A row of
    // another incarnation (the directory was replaced since) is resolved the
    // same way; its recorded identity goes into the recorded reason.
    if proof.project_object_id != identity.object_id || proof.generation != identity.generation {
        return Err(wrong("proof", &proof.project_object_id, proof.generation));
    }
    let row_generation = u64::try_from(row.generation).unwrap_or(u64::MAX);
    let foreign = row.object_id != identity.object_id || row_generation != identity.generation;
    let recorded_for = if foreign {
        format!(
            "; recorded for project object {} generation {row_generation}, re-derived \
             against object {} generation {}",
            row.object_id, identity.object_id, identity.generation
        )
    } else {
        String::new()
    };
    let reason_with_identity = format!(
        "{}{recorded_for}",
        row.reason.as_deref().unwrap_or("no reason recorded")
    );
    if proof.transaction_id != txn {
        return Err(mismatch("transaction_id", proof.transaction_id, txn));
    }
    if proof.operation != req.operation {
        return Err(mismatch("operation", proof.operation, req.operation));
    }
    let kind = EffectKind::parse(&row.kind)
        .ok_or_else(|| RepairRefusal::Unproven(format!("unknown effect kind {}", row.kind)))?;
    if proof.effect_kind != kind {
        return Err(mismatch("effect_kind", proof.effect_kind, kind));
    }
    let status = TxnStatus::parse(&row.state)
        .ok_or_else(|| RepairRefusal::Unproven(format!("unknown state {}", row.state)))?;
    if status != TxnStatus::Quarantined {
        return Err(RepairRefusal::NotQuarantined {
            transaction_id: txn,
            status,
        });
    }
    // The intent, parsed once; each effect kind re-derives its own proof form.
    let parsed = serde_json::from_str::<Intent>(&row.intent_json)
        .map_err(|e| RepairRefusal::Unproven(format!("intent unreadable: {e}")))?;
    let reason = Some(reason_with_identity.as_str());
    let intent = match (kind, parsed) {
        (EffectKind::File, Intent::File(intent)) => intent,
        (EffectKind::ProcessLaunch, Intent::ProcessLaunch(intent)) => {
            return repair_launch(&mut journal, req, txn, intent, reason, procs);
        }
        (EffectKind::EditorRuntime, Intent::EditorRuntime(intent)) => {
            return repair_editor(&mut journal, req, proof, txn, intent, reason);
        }
        (EffectKind::File, Intent::Change(intent)) => {
            let ctx = ChangeCtx {
                req,
                txn,
                foreign,
                recorded_for: &recorded_for,
                reason: &reason_with_identity,
            };
            return repair_change(&mut journal, &ctx, proof, &intent);
        }
        (other, _) => {
            return Err(RepairRefusal::Unproven(format!(
                "the recorded intent is not a {other} intent"
            )));
        }
    };
    if req.operation == RepairOperation::Terminate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind,
        });
    }
    let claim = proof
        .file
        .as_ref()
        .ok_or_else(|| mismatch("file", "missing", format!("path {}", intent.path)))?;
    if claim.path != intent.path {
        return Err(mismatch("file.path", &claim.path, &intent.path));
    }
    if let Some(link) = intent.linked_launch {
        // A composite commits only with its launch sub-proof, the full verdict
        // (committed, exit 0, boundary proven empty), re-read from the journal;
        // the proof file cannot suppress this check. Compensating one needs
        // less — nothing of the composite stays — but still a launch whose
        // boundary is proven empty: a helper that may still run may still write.
        let verdict = journal.linked_launch_verdict(link);
        let boundary_empty = matches!(
            journal.launch_proof(link),
            Ok(Some((TxnStatus::Committed | TxnStatus::Compensated, ref p))) if p.boundary_empty
        );
        match verdict {
            Ok(()) => {}
            Err(_) if req.operation == RepairOperation::Compensate && boundary_empty => {}
            Err(why) => {
                return Err(RepairRefusal::Unproven(format!(
                    "composite: linked process_launch {link} {why}"
                )));
            }
        }
    }

    let root = journal.root.clone();
    let target = root.join(&intent.path);
    let observed = observe_claimed(&target, claim)?;
    let temp = intent.temp.as_ref().map(|t| root.join(t));
    let temp_exists = match &temp {
        Some(t) => match fs::symlink_metadata(t) {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(source) => {
                return Err(RepairRefusal::Io {
                    path: t.clone(),
                    source,
                });
            }
        },
        None => false,
    };

    // Once the target holds the post-state, a leftover temp is what the
    // exchange displaced: removable only when it holds the pre-state (or our
    // bytes). Anything else is someone else's file, kept as evidence; refused
    // here, before anything on disk is touched (see `reconcile`).
    let temp_held = match (temp_exists, &temp) {
        (true, Some(t)) => Some(durable::read_state(t).map_err(|source| RepairRefusal::Io {
            path: t.clone(),
            source,
        })?),
        _ => None,
    };
    if let Some(held) = temp_held.filter(|_| observed == intent.post)
        && held != intent.pre
        && held != intent.post
    {
        return Err(RepairRefusal::Unproven(format!(
            "{} holds {held}, neither the pre-state {} nor the post-state {} of {}: a file \
             someone wrote during the exchange, kept there as evidence; move it aside once \
             you have looked at it, then retry",
            intent.temp.as_deref().unwrap_or(""),
            intent.pre,
            intent.post,
            intent.path
        )));
    }
    let plan = plan(req.operation, &intent, observed)?;
    // A row of another incarnation is resolved by what the disk shows now, but
    // its bytes, its pre-image and its temp belong to a directory that is no
    // longer at the path: they are never applied to this one.
    if foreign && (temp_exists || plan.unlink_target || plan.restore) {
        return Err(RepairRefusal::Unproven(format!(
            "{} is {observed}, and {} would change it ({}), but the transaction was \
             recorded for another incarnation of the project{recorded_for}: nothing of it is \
             applied to this one; bring the file to a state you want yourself, then \
             acknowledge-safe-state (post-state {}) or compensate (pre-state {})",
            intent.path,
            req.operation,
            if temp_exists {
                "remove its leftover temp"
            } else if plan.unlink_target {
                "remove the created file"
            } else {
                "write its pre-image back"
            },
            intent.post,
            intent.pre
        )));
    }
    let restore = if plan.restore {
        match crate::preimage::load(journal.conn(), txn, intent.pre)? {
            crate::preimage::Retained::Bytes { bytes, mode } => Some((bytes, mode)),
            crate::preimage::Retained::OverBound { size } => {
                return Err(RepairRefusal::Unproven(format!(
                    "{} is in its post-state {observed}; its pre-image ({size} bytes) is larger \
                     than the {} byte bound the journal retains, so it cannot be restored by \
                     proof: restore the pre-state {} yourself (e.g. from version control) and \
                     retry",
                    intent.path,
                    crate::preimage::MAX_PREIMAGE_BYTES,
                    intent.pre
                )));
            }
            crate::preimage::Retained::None => {
                return Err(RepairRefusal::Unproven(format!(
                    "{} is in its post-state {observed}; no pre-image of it was retained, so \
                     it cannot be restored by proof: restore the pre-state {} yourself (e.g. \
                     from version control) and retry",
                    intent.path, intent.pre
                )));
            }
        }
    } else {
        None
    };
    let mut actions = Vec::new();
    if temp_exists {
        actions.push(format!(
            "remove leftover temp {}",
            intent.temp.as_deref().unwrap_or("")
        ));
    }
    if plan.unlink_target {
        actions.push(format!(
            "remove {} (created by this transaction)",
            intent.path
        ));
    }
    if let Some((bytes, _)) = &restore {
        actions.push(format!(
            "restore {} to its pre-state {} from the retained pre-image ({} bytes)",
            intent.path,
            intent.pre,
            bytes.len()
        ));
    }
    let mut proof_out = FileProof {
        path: intent.path.clone(),
        observed,
        basis: plan.basis,
        temp_removed: temp_exists,
        derived_by: Deriver::Repair,
    };
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RepairRefusal::Io { path, source }
        };
        // The last check before acting: the target is still what was proven.
        let now = durable::read_state(&target).map_err(io_err(&target))?;
        if now != observed {
            return Err(RepairRefusal::Unproven(format!(
                "{} changed while repairing: now {now}, nothing was done",
                intent.path
            )));
        }
        if let (Some(held), Some(t)) = (temp_held, &temp) {
            let now = durable::read_state(t).map_err(io_err(t))?;
            if now != held {
                return Err(RepairRefusal::Unproven(format!(
                    "{} changed while repairing: now {now}, nothing was done",
                    intent.temp.as_deref().unwrap_or("")
                )));
            }
        }
        if let (true, Some(t)) = (temp_exists, &temp) {
            fs::remove_file(t).map_err(io_err(t))?;
        }
        if plan.unlink_target {
            fs::remove_file(&target).map_err(io_err(&target))?;
        }
        if let Some((bytes, mode)) = &restore {
            restore_bytes(&target, bytes, *mode).map_err(io_err(&target))?;
        }
        if temp_exists || plan.unlink_target || restore.is_some() {
            durable::fsync_dir(durable::parent_dir(&target)).map_err(io_err(&target))?;
        }
        // Re-derive once more after acting: the recorded proof is what is on
        // disk now, not what was planned.
        let after = durable::read_state(&target).map_err(io_err(&target))?;
        let expected_after = if plan.unlink_target {
            FileState::Absent
        } else if restore.is_some() {
            intent.pre
        } else {
            observed
        };
        if after != expected_after {
            return Err(RepairRefusal::Unproven(format!(
                "{} changed while repairing: now {after}",
                intent.path
            )));
        }
        proof_out.observed = after;
        let reason = format!(
            "repaired by {} (was quarantined: {reason_with_identity})",
            req.operation,
        );
        let proof = Proof::File(proof_out.clone());
        record_repair(
            &mut journal,
            txn,
            req.operation,
            plan.to,
            &proof,
            proof.clone(),
            &reason,
        )?;
    }
    Ok(report(
        req,
        plan.to,
        record,
        Proof::File(proof_out),
        actions,
    ))
}

/// An `editor_runtime` transaction quarantined because a command that may have written
/// a file (scene or resource) lost its answer, or answered an error whose pre-state was not
/// proven. The journal keeps the file's pre-state hash (not its bytes) and, for an error
/// reply, the editor's report of what it left. What can be proven is the file's state now:
/// `reconcile` reports it. When the editor reported its change undone (or never made) and
/// the file is back at the recorded pre-state (`crate::editor::pre_state_proven`),
/// `compensate` and `acknowledge-safe-state` record `compensated` with a pre-state proof,
/// and so they do once the operator has restored the file to its recorded pre-state.
/// Otherwise both are refused: an editor command records no post-state, so nothing
/// proves `committed`, and no bytes are kept to restore. `terminate` is refused.
fn repair_editor(
    journal: &mut Journal,
    req: &RepairRequest,
    proof: &RepairProof,
    txn: TxnId,
    intent: crate::editor::EditorIntent,
    reason: Option<&str>,
) -> Result<RepairReport, RepairRefusal> {
    match req.operation {
        RepairOperation::Reconcile
        | RepairOperation::AcknowledgeSafeState
        | RepairOperation::Compensate => {}
        RepairOperation::Terminate => {
            return Err(RepairRefusal::NotApplicable {
                operation: req.operation,
                kind: EffectKind::EditorRuntime,
            });
        }
    }
    if !intent.files.is_empty() {
        return repair_editor_files(journal, proof.file.as_ref(), req, txn, intent, reason);
    }
    let rel = intent
        .scene
        .as_deref()
        .and_then(|s| s.strip_prefix("res://"))
        .filter(|r| !r.is_empty())
        .ok_or_else(|| {
            RepairRefusal::Unproven(format!(
                "{} named no scene file, so nothing on disk can prove what it did",
                intent.cmd
            ))
        })?
        .to_string();
    crate::state_dir::validate_relative(Path::new(&rel))
        .map_err(|e| RepairRefusal::Unproven(format!("recorded scene path refused: {e}")))?;
    let claim = proof
        .file
        .as_ref()
        .ok_or_else(|| mismatch("file", "missing", format!("path {rel}")))?;
    if claim.path != rel {
        return Err(mismatch("file.path", &claim.path, &rel));
    }
    let observed = observe_claimed(&journal.root.join(&rel), claim)?;
    // The pre-state is proven when the editor reported its change undone (or never made)
    // and the file is at the pre-state recorded before the request was sent: then the
    // row is compensated by proof. Otherwise the operator's acknowledgment commits it.
    let left = journal
        .editor_record(txn)
        .map_err(|e| RepairRefusal::Unproven(e.to_string()))?
        .and_then(|r| r.proof)
        .and_then(|p| p.editor_left);
    // An editor command records no post-state, so nothing on disk can prove
    // one: `committed` is never recorded here. What the disk can prove is the
    // recorded pre-state — the editor reported its change undone, or the
    // operator restored the file — and that is recorded `compensated`.
    let at_pre = crate::editor::pre_state_proven(&intent, left, &observed)
        || intent.pre_state == Some(observed);
    let (to, basis) = if at_pre {
        (TxnStatus::Compensated, ProofBasis::PreState)
    } else if req.operation == RepairOperation::Reconcile {
        (TxnStatus::Quarantined, ProofBasis::PostState)
    } else {
        return Err(RepairRefusal::Unproven(format!(
            "{} was an editor command: it records no post-state, so nothing proves what it \
             wrote, and its pre-state is not on disk ({}; the editor's report: {}); no \
             pre-image bytes are kept: restore the file yourself (e.g. from version \
             control), then run acknowledge-safe-state",
            intent.cmd,
            match intent.pre_state {
                Some(pre) => format!("{rel} is {observed}, recorded before as {pre}"),
                None => "no pre-state was recorded".into(),
            },
            left.map_or("none".into(), |l| format!("{l:?}"))
        )));
    };
    finish_editor(
        journal,
        req,
        txn,
        to,
        FileProof::repaired(rel.clone(), observed, basis),
        || {
            let why = format!(
                "repaired by {}: {rel} acknowledged at {observed} (was quarantined: {})",
                req.operation,
                reason.unwrap_or("no reason recorded")
            );
            let editor_proof = crate::editor::EditorProof {
                editor_left: left,
                pre_state: intent.pre_state,
                post_state: Some(observed),
                ..crate::editor::EditorProof::reply(
                    intent.request_id,
                    format!("repaired; {rel} at {observed}"),
                )
            };
            (editor_proof, why)
        },
    )
}

/// Records an editor row's repair as `to` (unless a dry run or `reconcile`), with the
/// file proof `proof_out` logged and the row's editor proof and reason from `row`; and
/// reports it.
fn finish_editor(
    journal: &mut Journal,
    req: &RepairRequest,
    txn: TxnId,
    to: TxnStatus,
    proof_out: FileProof,
    row: impl FnOnce() -> (crate::editor::EditorProof, String),
) -> Result<RepairReport, RepairRefusal> {
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        let (editor_proof, why) = row();
        let logged = Proof::File(proof_out.clone());
        let row_proof = Proof::EditorRuntime(editor_proof);
        record_repair(journal, txn, req.operation, to, &logged, row_proof, &why)?;
    }
    Ok(report(req, to, record, Proof::File(proof_out), Vec::new()))
}

/// An `editor_runtime` row of a command that names several files (`scene.save_all`):
/// every named file is re-derived from disk (state, identity and modification time
/// against those recorded before the request). All at their recorded pre-state:
/// `compensate` and `acknowledge-safe-state` record `compensated`. Every file the editor
/// said it writes (all of them when its answer was lost) written since the intent — the
/// operator saved again once the cause was fixed — `acknowledge-safe-state` records
/// `committed` by that proof. Anything else is refused; `reconcile` reports it. The proof
/// file's `file` claim names one of the files, as the disk shows it.
fn repair_editor_files(
    journal: &mut Journal,
    claim: Option<&FileClaim>,
    req: &RepairRequest,
    txn: TxnId,
    intent: crate::editor::EditorIntent,
    reason: Option<&str>,
) -> Result<RepairReport, RepairRefusal> {
    let rel_of = |p: &str| p.strip_prefix("res://").unwrap_or(p).to_string();
    let names: Vec<String> = intent.files.iter().map(|f| rel_of(&f.path)).collect();
    let claim =
        claim.ok_or_else(|| mismatch("file", "missing", format!("one of {}", names.join(", "))))?;
    if !names.contains(&claim.path) {
        return Err(mismatch("file.path", &claim.path, names.join(" | ")));
    }
    let recorded = journal
        .editor_record(txn)
        .map_err(|e| RepairRefusal::Unproven(e.to_string()))?
        .and_then(|r| r.proof);
    let mut now = Vec::new();
    for (f, rel) in intent.files.iter().zip(&names) {
        crate::state_dir::validate_relative(Path::new(rel))
            .map_err(|e| RepairRefusal::Unproven(format!("recorded path refused: {e}")))?;
        let target = journal.root.join(rel);
        let io = |source| RepairRefusal::Io {
            path: target.clone(),
            source,
        };
        let stamp = durable::FileStamp::read(&target).map_err(io)?;
        let state = durable::read_state(&target).map_err(io)?;
        let written = state != f.pre_state || stamp != f.pre_stamp;
        let expected = recorded
            .as_ref()
            .is_none_or(|p| p.files.iter().any(|s| s.path == f.path && s.expected));
        now.push((rel.clone(), f.pre_state, state, written, expected));
    }
    let claimed = now.iter().find(|n| n.0 == claim.path).map(|n| n.2);
    if let Some(observed) = claimed
        && observed != claim.observed
    {
        return Err(mismatch("file.observed", claim.observed, observed));
    }
    let all_pre = now.iter().all(|n| !n.3 && n.2 == n.1);
    let all_landed = now.iter().all(|n| !n.4 || n.3);
    let (to, basis) = if all_pre {
        (TxnStatus::Compensated, ProofBasis::PreState)
    } else if all_landed && req.operation != RepairOperation::Compensate {
        (TxnStatus::Committed, ProofBasis::PostState)
    } else if req.operation == RepairOperation::Reconcile {
        (TxnStatus::Quarantined, ProofBasis::PostState)
    } else {
        let missing: Vec<&str> = now
            .iter()
            .filter(|n| n.4 && !n.3)
            .map(|n| n.0.as_str())
            .collect();
        return Err(RepairRefusal::Unproven(format!(
            "{} named {}: not every file is at its recorded pre-state, and {} not \
             written since; save them again in the editor (acknowledge-safe-state then \
             proves them written), or restore every file to its recorded pre-state",
            intent.cmd,
            names.join(", "),
            if missing.is_empty() {
                "some were".to_string()
            } else {
                missing.join(", ")
            }
        )));
    };
    let observed = claimed.unwrap_or(claim.observed);
    let proof_out = FileProof::repaired(claim.path.clone(), observed, basis);
    finish_editor(journal, req, txn, to, proof_out, || {
        let state_of = |n: &(String, FileState, FileState, bool, bool)| format!("{} {}", n.0, n.2);
        let why = format!(
            "repaired by {}: {} (was quarantined: {})",
            req.operation,
            now.iter().map(state_of).collect::<Vec<_>>().join(", "),
            reason.unwrap_or("no reason recorded")
        );
        let files = intent.files.iter().zip(&now);
        let editor_proof = crate::editor::EditorProof {
            files: files
                .map(|(f, n)| crate::editor::SavedFile {
                    path: f.path.clone(),
                    pre_state: f.pre_state,
                    post_state: Some(n.2),
                    written: n.3,
                    expected: n.4,
                })
                .collect(),
            ..crate::editor::EditorProof::reply(intent.request_id, "repaired")
        };
        (editor_proof, why)
    })
}

/// A quarantined `process_launch`: a survivor whose boundary could not be proven empty.
/// Every proof field is re-derived from live process identity (pid, start time, process
/// group, nonce on the command line, control-socket inode) and the boundary's members
/// (the group's, and the launch's processes that left it: `launch::identify_escaped`):
///
/// - `terminate` kills the recorded process group — only when its leader is the
///   recorded process by exact identity, or gone (a reused pid leading its own group is
///   never touched) — waits, and records `compensated` once the boundary is proven empty;
/// - `acknowledge-safe-state` records `committed` when the boundary is already empty
///   (the launch ended on its own; no process outside the group carries, or may hide,
///   the nonce);
/// - `reconcile` and `--dry-run` report what the boundary holds and record nothing;
/// - `compensate` is refused: a process cannot be un-run.
fn repair_launch(
    journal: &mut Journal,
    req: &RepairRequest,
    txn: TxnId,
    intent: crate::launch::LaunchIntent,
    reason: Option<&str>,
    procs: &dyn ProcessTable,
) -> Result<RepairReport, RepairRefusal> {
    use crate::launch::{self, LaunchEnd, LaunchProof, LeaderMatch};
    if req.operation == RepairOperation::Compensate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind: EffectKind::ProcessLaunch,
        });
    }
    // Only the weak locator keeps its members in a form this command can
    // enumerate on its own (docs/recovery.md): a Job Object is reconciled by the
    // next server through the job itself, never approximated here.
    if let Some(r) = &intent.receipt
        && let launch::Boundary::JobObject { name } = &r.boundary
    {
        return Err(RepairRefusal::Unproven(format!(
            "the launch's boundary is the Windows Job Object {name}, which this command does \
             not enumerate on its own; the next server for the project reconciles it at its \
             start, through the job itself"
        )));
    }
    if !procs.observable() {
        return Err(RepairRefusal::Unproven(
            "this build cannot observe process identity on this operating system, so no \
             launch can be proven terminated or safe here"
                .into(),
        ));
    }
    // What the boundary holds now, without touching it. The same identity rules
    // as reconciliation: a partial match (same pid and start time, another field
    // differs) is the launched process alive, never "gone", and nothing here can
    // prove it safe or kill it.
    let unlisted = || {
        RepairRefusal::Unproven(
            "the live processes cannot be listed, so the launch's boundary cannot be proven \
             empty or its members identified"
                .into(),
        )
    };
    let this_boot = procs.boot_id();
    let live_members: Vec<i32> = match &intent.receipt {
        Some(launch::LaunchReceipt {
            boot_id: Some(recorded),
            ..
        }) if this_boot.is_none() => {
            return Err(RepairRefusal::Unproven(format!(
                "this boot's id cannot be read, so the receipt's boot {recorded} cannot be told \
                 apart from this one"
            )));
        }
        Some(r)
            if r.boot_id
                .as_ref()
                .is_some_and(|b| this_boot.as_ref() != Some(b)) =>
        {
            // Another boot: every process of the receipt's boot has ended.
            Vec::new()
        }
        Some(r) => match &r.boundary {
            // Refused above.
            launch::Boundary::JobObject { .. } => Vec::new(),
            &launch::Boundary::ProcessGroup { pgid } => {
                let group = match launch::match_leader(
                    procs,
                    r,
                    &intent.nonce,
                    &intent.endpoint,
                    intent.socket_inode,
                ) {
                    LeaderMatch::Partial { mismatched } => {
                        return Err(RepairRefusal::Unproven(format!(
                            "partial identity: pid {} is the launched process (same pid and \
                             start time) but its {} no longer match the receipt, so it can \
                             neither be terminated by proof nor acknowledged; stop it yourself \
                             once you have checked what it is (kill -9 {}), then run \
                             acknowledge-safe-state",
                            r.pid,
                            mismatched.join(", "),
                            r.pid
                        )));
                    }
                    // The pid leads another group with our number: ours is empty.
                    LeaderMatch::Other {
                        leads_recorded_group: true,
                    } => None,
                    _ => Some(pgid),
                };
                // Every live member counts, identified or not: the boundary
                // is empty only when the group has no member at all, and no
                // process that left it carries (or may hide) the nonce.
                let live = procs.live().ok_or_else(unlisted)?;
                let mut members: Vec<i32> = live
                    .iter()
                    .filter(|(_, s)| Some(s.pgrp) == group)
                    .map(|(pid, _)| *pid)
                    .collect();
                let escaped = launch::identify_escaped(procs, r, &intent.nonce, group, &live);
                members.extend(escaped.proven.iter().map(|(pid, _)| *pid));
                members.extend(escaped.unaccounted);
                members
            }
        },
        None => procs.nonce_holders(&intent.nonce).ok_or_else(unlisted)?,
    };
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    let (to, proof) = match req.operation {
        RepairOperation::Terminate if record => {
            if intent.receipt.is_none() {
                return Err(RepairRefusal::Unproven(
                    "the launch has no receipt: there is no recorded identity to terminate by"
                        .into(),
                ));
            }
            let state_dir = journal.state_dir.clone();
            let derived = launch::derive_launches(procs, &state_dir, &[(txn, intent.clone())]);
            match derived.into_iter().next() {
                Some((TxnStatus::Compensated, Some(mut proof), _)) => {
                    proof.derived_by = Deriver::Repair;
                    (TxnStatus::Compensated, proof)
                }
                Some((_, _, why)) => {
                    return Err(RepairRefusal::Unproven(why.unwrap_or_else(|| {
                        "the boundary could not be proven empty".into()
                    })));
                }
                None => return Err(RepairRefusal::Unproven("nothing was derived".into())),
            }
        }
        RepairOperation::AcknowledgeSafeState if !live_members.is_empty() => {
            return Err(RepairRefusal::Unproven(format!(
                "the launch's boundary still holds {} live process(es); terminate it first",
                live_members.len()
            )));
        }
        op => {
            let to = if op == RepairOperation::Terminate || !live_members.is_empty() {
                TxnStatus::Compensated
            } else {
                TxnStatus::Committed
            };
            let proof = LaunchProof {
                receipt: intent.receipt.clone(),
                end: if live_members.is_empty() {
                    LaunchEnd::GoneBeforeReconcile
                } else {
                    LaunchEnd::TerminatedByReconcile {
                        survivors: live_members.len(),
                    }
                },
                boundary_empty: live_members.is_empty(),
                archived_to: None,
                derived_by: Deriver::Repair,
                unaccounted: Vec::new(),
            };
            (to, proof)
        }
    };
    let proof = Proof::ProcessLaunch(proof);
    if record {
        let why = format!(
            "repaired by {} (was quarantined: {})",
            req.operation,
            reason.unwrap_or("no reason recorded")
        );
        record_repair(journal, txn, req.operation, to, &proof, proof.clone(), &why)?;
    }
    let actions = if req.operation == RepairOperation::Terminate && !live_members.is_empty() {
        vec![format!(
            "SIGKILL the recorded process group ({} live member(s))",
            live_members.len()
        )]
    } else {
        Vec::new()
    };
    Ok(report(req, to, record, proof, actions))
}

/// What a change's repair needs from the row beyond its intent.
struct ChangeCtx<'a> {
    req: &'a RepairRequest,
    txn: TxnId,
    /// The row was recorded for another incarnation of the project.
    foreign: bool,
    recorded_for: &'a str,
    reason: &'a str,
}

/// One file of a change, as its repair re-derived it.
struct ChangeNow {
    state: FileState,
    /// Its leftover temp and `.undo` files (the change's own) and what each holds.
    temps: Vec<(PathBuf, FileState)>,
    /// What a compensation does to it.
    step: Option<ChangeStep>,
}

enum ChangeStep {
    /// A created file: removed.
    Unlink,
    /// An overwritten or deleted file: its pre-image written back.
    Restore(crate::change::PreImage),
}

/// A quarantined change: many files, one state (`crate::change`). Every file is
/// re-derived from disk and must be at its pre- or post-state, a leftover temp
/// beside a file at its post-state holding one of the two (else it is someone
/// else's, kept as evidence):
///
/// - `acknowledge-safe-state` records `committed` when EVERY file is at its
///   post-state (the change's leftover temps removed);
/// - `compensate` puts every file at its post-state back — a created file
///   removed, an overwritten or deleted one written back from the change's
///   pre-image (`change_preimages`) — and records `compensated` once every file
///   is proven at its pre-state;
/// - `reconcile` and `--dry-run` report that and record nothing; `terminate` is
///   refused.
///
/// Anything not provable for every file (a file in neither state, a pre-image
/// missing, someone's temp, a row of another incarnation that would need the
/// disk changed) is refused before anything is touched. An I/O error while
/// acting puts back what was done (each file to the bytes it held) and records
/// nothing. The proof file's `file` claim names one of the change's files as
/// the disk shows it.
fn repair_change(
    journal: &mut Journal,
    ctx: &ChangeCtx<'_>,
    proof: &RepairProof,
    intent: &crate::change::ChangeIntent,
) -> Result<RepairReport, RepairRefusal> {
    let (req, txn) = (ctx.req, ctx.txn);
    if req.operation == RepairOperation::Terminate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind: EffectKind::File,
        });
    }
    let files = &intent.files;
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let claim = proof
        .file
        .as_ref()
        .ok_or_else(|| mismatch("file", "missing", format!("one of {}", paths.join(", "))))?;
    if !paths.contains(&claim.path.as_str()) {
        return Err(mismatch("file.path", &claim.path, paths.join(" | ")));
    }
    let root = journal.root.clone();
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RepairRefusal::Io { path, source }
    };

    // Every file re-derived, and every temp of the change.
    let mut now = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for f in files {
        crate::state_dir::validate_relative(Path::new(&f.path))
            .map_err(|e| RepairRefusal::Unproven(format!("recorded path refused: {e}")))?;
        // A temp is the change's own only beside its file, named as the journal names it.
        let (temp_rel, path_rel) = (Path::new(&f.temp), Path::new(&f.path));
        if temp_rel.parent() != path_rel.parent()
            || !temp_rel
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".gmcp-"))
        {
            return Err(RepairRefusal::Unproven(format!(
                "recorded temp path {} is not a journal temp beside {}",
                f.temp, f.path
            )));
        }
        let target = root.join(&f.path);
        let state = durable::read_state(&target).map_err(io_err(&target))?;
        if state != f.post && state != f.pre {
            problems.push(format!(
                "{} is {state}, neither its pre-state {} nor its post-state {}",
                f.path, f.pre, f.post
            ));
        }
        let temp = root.join(&f.temp);
        let mut temps = Vec::new();
        for (t, undo) in [(crate::change::undo_temp(&temp), true), (temp, false)] {
            let held = durable::read_state(&t).map_err(io_err(&t))?;
            if held == FileState::Absent {
                continue;
            }
            // Beside a file at its post-state a temp is what the exchange
            // displaced; beside one at its pre-state nothing was exchanged.
            // An `.undo` holds a compensation's bytes, cut short.
            if state == f.post && held != f.pre && held != f.post && !undo {
                problems.push(format!(
                    "{} holds {held}, neither the pre-state nor the post-state of {}: a file \
                     someone wrote during the exchange, kept there as evidence; move it aside \
                     once you have looked at it",
                    f.temp, f.path
                ));
            }
            temps.push((t, held));
        }
        now.push(ChangeNow {
            state,
            temps,
            step: None,
        });
    }
    if let Some(i) = paths.iter().position(|p| *p == claim.path)
        && now[i].state != claim.observed
    {
        return Err(mismatch("file.observed", claim.observed, now[i].state));
    }
    if !problems.is_empty() {
        return Err(RepairRefusal::Unproven(format!(
            "change of {} file(s) ({}): {}; nothing was done",
            files.len(),
            paths.join(", "),
            problems.join("; ")
        )));
    }
    let all_post = now.iter().zip(files).all(|(n, f)| n.state == f.post);
    let (to, basis) = match req.operation {
        RepairOperation::AcknowledgeSafeState | RepairOperation::Reconcile if all_post => {
            (TxnStatus::Committed, ProofBasis::PostState)
        }
        RepairOperation::AcknowledgeSafeState => {
            let behind: Vec<String> = now
                .iter()
                .zip(files)
                .filter(|(n, f)| n.state != f.post)
                .map(|(n, f)| format!("{} is {} (post-state {})", f.path, n.state, f.post))
                .collect();
            return Err(RepairRefusal::Unproven(format!(
                "acknowledge-safe-state needs every file of the change at its post-state: {}; \
                 compensate puts every file back instead",
                behind.join(", ")
            )));
        }
        _ => (TxnStatus::Compensated, ProofBasis::PreState),
    };
    if to == TxnStatus::Compensated {
        let preimages = crate::change::load_preimages(journal.conn(), txn, files)?;
        let mut missing = Vec::new();
        for ((n, f), image) in now.iter_mut().zip(files).zip(preimages) {
            if n.state != f.post || f.pre == f.post {
                continue;
            }
            n.step = match (f.pre, image) {
                (FileState::Absent, _) => Some(ChangeStep::Unlink),
                (_, Some(image)) => Some(ChangeStep::Restore(image)),
                (_, None) => {
                    missing.push(f.path.as_str());
                    None
                }
            };
        }
        if !missing.is_empty() {
            return Err(RepairRefusal::Unproven(format!(
                "{} at its post-state and no pre-image of it was retained, so the change \
                 cannot be put back by proof: restore the pre-state yourself (e.g. from version \
                 control) and retry; nothing was done",
                missing.join(", ")
            )));
        }
    }
    let acts = now.iter().any(|n| n.step.is_some() || !n.temps.is_empty());
    if ctx.foreign && acts {
        return Err(RepairRefusal::Unproven(format!(
            "{} would change files of the change ({}), but it was recorded for another \
             incarnation of the project{}: nothing of it is applied to this one; bring every \
             file to the state you want yourself, then acknowledge-safe-state or compensate",
            req.operation,
            paths.join(", "),
            ctx.recorded_for
        )));
    }
    let mut actions = Vec::new();
    for (n, f) in now.iter().zip(files) {
        for (t, _) in &n.temps {
            let rel = t.strip_prefix(&root).unwrap_or(t);
            actions.push(format!("remove leftover temp {}", rel.display()));
        }
        match &n.step {
            Some(ChangeStep::Unlink) => {
                actions.push(format!("remove {} (created by this change)", f.path));
            }
            Some(ChangeStep::Restore(image)) => actions.push(format!(
                "restore {} to its pre-state {} from the change's pre-image ({} bytes)",
                f.path,
                f.pre,
                image.bytes.len()
            )),
            None => {}
        }
    }
    // An editor part lives in the editor's undo history, not on disk: repair proves the
    // files only, records no outcome for it, and says so.
    if let Some(part) = &intent.editor {
        actions.push(format!(
            "leave the editor part ({} on {}) as the editor holds it: repair proves files \
             only; undo that action in the editor if it is still applied",
            part.action, part.scene
        ));
    }
    let change_proof = crate::change::ChangeProof {
        editor: None,
        files: files
            .iter()
            .zip(&now)
            .map(|(f, n)| FileProof {
                path: f.path.clone(),
                observed: if to == TxnStatus::Committed {
                    f.post
                } else {
                    f.pre
                },
                basis,
                temp_removed: !n.temps.is_empty(),
                derived_by: Deriver::Repair,
            })
            .collect(),
    };
    let proof_out = Proof::Change(change_proof);
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        act_on_change(journal, files, &now)?;
        // Re-derive once more: the recorded proof is what is on disk now.
        for f in files {
            let target = root.join(&f.path);
            let after = durable::read_state(&target).map_err(io_err(&target))?;
            let want = if to == TxnStatus::Committed {
                f.post
            } else {
                f.pre
            };
            if after != want {
                return Err(RepairRefusal::Unproven(format!(
                    "{} changed while repairing: now {after}",
                    f.path
                )));
            }
        }
        let why = format!(
            "repaired by {}: every file of the change at its {} (was quarantined: {})",
            req.operation,
            if to == TxnStatus::Committed {
                "post-state"
            } else {
                "pre-state"
            },
            ctx.reason
        );
        record_repair(
            journal,
            txn,
            req.operation,
            to,
            &proof_out,
            proof_out.clone(),
            &why,
        )?;
    }
    Ok(report(req, to, record, proof_out, actions))
}

/// Carries out a change's repair: the last check (every file and temp still as
/// re-derived), then each file put back, last first, then the leftover temps
/// removed. An I/O error returns every file already put back to the bytes it
/// held (captured by the last check) and refuses.
fn act_on_change(
    journal: &Journal,
    files: &[crate::change::ChangeFile],
    now: &[ChangeNow],
) -> Result<(), RepairRefusal> {
    use crate::change::{PreImage, PutBack, displaced_reason, put_back, remove_durably};
    let root = &journal.root;
    let storage = journal.storage.clone();
    let mut held: Vec<Option<PreImage>> = Vec::with_capacity(files.len());
    for (f, n) in files.iter().zip(now) {
        let target = root.join(&f.path);
        let (seen, bytes) =
            durable::observe_bytes(&target).map_err(|source| RepairRefusal::Io {
                path: target.clone(),
                source,
            })?;
        let temps_moved = n
            .temps
            .iter()
            .any(|(t, h)| durable::read_state(t).map_or(true, |s| s != *h));
        if seen.state != n.state || temps_moved {
            return Err(RepairRefusal::Unproven(format!(
                "{} changed while repairing, nothing was done",
                f.path
            )));
        }
        held.push(bytes.map(|bytes| PreImage {
            bytes,
            mode: seen.mode.unwrap_or(0o644),
        }));
    }
    let mut done: Vec<usize> = Vec::new();
    let mut failure = None;
    for (i, (f, n)) in files.iter().zip(now).enumerate().rev() {
        let target = root.join(&f.path);
        let temp = root.join(&f.temp);
        let result = match &n.step {
            Some(ChangeStep::Unlink) => put_back(&*storage, &target, &temp, None, n.state),
            Some(ChangeStep::Restore(image)) => {
                put_back(&*storage, &target, &temp, Some(image), n.state)
            }
            None => continue,
        };
        match result {
            Ok(PutBack::Done) => done.push(i),
            // Someone wrote the file after the last check: theirs is left in place
            // (and whatever is kept at `.undo` stays).
            Ok(PutBack::Displaced { found, kept }) => {
                failure = Some(displaced_reason(&f.path, found, kept.as_deref()));
                break;
            }
            Err(e) => {
                failure = Some(format!("putting {} back failed ({e})", f.path));
                // A restore cut short may leave its `.undo`; one the change left stays.
                let undo = crate::change::undo_temp(&temp);
                if !n.temps.iter().any(|(t, _)| *t == undo) {
                    let _ = remove_durably(&*storage, &undo);
                }
                break;
            }
        }
    }
    if failure.is_none() {
        'temps: for n in now {
            for (t, _) in &n.temps {
                if let Err(e) = remove_durably(&*storage, t) {
                    failure = Some(format!("removing {} failed ({e})", t.display()));
                    break 'temps;
                }
            }
        }
    }
    let Some(failure) = failure else {
        return Ok(());
    };
    // Every file already put back returns to the bytes it held.
    let mut undone = Vec::new();
    for i in done {
        let f = &files[i];
        let target = root.join(&f.path);
        match put_back(
            &*storage,
            &target,
            &root.join(&f.temp),
            held[i].as_ref(),
            f.pre,
        ) {
            Ok(PutBack::Done) => {}
            Ok(PutBack::Displaced { found, kept }) => {
                undone.push(displaced_reason(&f.path, found, kept.as_deref()));
            }
            Err(e) => undone.push(format!("returning {} failed ({e})", f.path)),
        }
    }
    Err(RepairRefusal::Unproven(if undone.is_empty() {
        format!("{failure}; every file was returned to what it held, nothing was recorded")
    } else {
        format!(
            "{failure}; {}: each file is at its pre- or post-state, nothing was recorded; \
             run the repair again",
            undone.join(", ")
        )
    }))
}

/// Writes `bytes` back over `target` the durable way (temp file in the same
/// directory, fsync, rename); the caller fsyncs the directory.
fn restore_bytes(target: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let temp = durable::temp_path_for(target, TxnId::random()?);
    crate::storage::stage_and_rename(&crate::storage::RealStorage, &temp, target, bytes, mode)
}

/// The `repairs` log row of a recorded repair (same SQLite transaction as the transition).
/// Records a repair in one transaction: the quarantined row's move to `to` with
/// `row_proof` and `why`, and the `repairs` log entry carrying `logged`.
fn record_repair(
    journal: &mut Journal,
    txn: TxnId,
    operation: RepairOperation,
    to: TxnStatus,
    logged: &Proof,
    row_proof: Proof,
    why: &str,
) -> Result<(), RepairRefusal> {
    let proof_json =
        serde_json::to_string(logged).map_err(|e| RepairRefusal::Unproven(e.to_string()))?;
    let tx = journal.conn_mut().transaction()?;
    record_terminal(
        &tx,
        txn,
        TxnStatus::Quarantined,
        to,
        Some(crate::effect::to_json(&row_proof)?),
        Some(why),
    )?;
    // A change's pre-images go with its proven state (none for other rows).
    if matches!(to, TxnStatus::Committed | TxnStatus::Compensated) {
        tx.execute(
            "DELETE FROM change_preimages WHERE txn_id = ?1",
            [txn.to_string()],
        )?;
    }
    tx.execute(
        "INSERT INTO repairs (txn_id, operation, from_state, to_state, proof_json, at_ms)
         VALUES (?1, ?2, 'quarantined', ?3, ?4, ?5)",
        params![
            txn.to_string(),
            operation.as_str(),
            to.as_str(),
            proof_json,
            now_ms()
        ],
    )?;
    tx.commit()?;
    Ok(())
}

struct Plan {
    to: TxnStatus,
    basis: ProofBasis,
    /// Compensating a create: remove the file this transaction created.
    unlink_target: bool,
    /// Compensating an overwrite or a delete: write the retained pre-image back.
    restore: bool,
}

/// The transition `op` may journal given the re-derived `observed` state.
fn plan(
    op: RepairOperation,
    intent: &FileIntent,
    observed: FileState,
) -> Result<Plan, RepairRefusal> {
    let committed = Plan {
        to: TxnStatus::Committed,
        basis: ProofBasis::PostState,
        unlink_target: false,
        restore: false,
    };
    let compensated = Plan {
        to: TxnStatus::Compensated,
        basis: ProofBasis::PreState,
        unlink_target: false,
        restore: false,
    };
    match op {
        RepairOperation::Reconcile if observed == intent.post => Ok(committed),
        RepairOperation::Reconcile if observed == intent.pre => Ok(compensated),
        RepairOperation::AcknowledgeSafeState if observed == intent.post => Ok(committed),
        RepairOperation::Compensate if observed == intent.pre => Ok(compensated),
        RepairOperation::Compensate
            if intent.pre == FileState::Absent && observed == intent.post =>
        {
            Ok(Plan {
                unlink_target: true,
                ..compensated
            })
        }
        // An overwrite or a delete in its post-state: the pre-image, if the
        // journal retained it, is written back (checked by the caller).
        RepairOperation::Compensate if observed == intent.post => Ok(Plan {
            restore: true,
            ..compensated
        }),
        RepairOperation::Terminate => Err(RepairRefusal::NotApplicable {
            operation: op,
            kind: EffectKind::File,
        }),
        _ => Err(RepairRefusal::Unproven(format!(
            "{} is {observed}; {op} needs {}",
            intent.path,
            match op {
                RepairOperation::AcknowledgeSafeState => format!("its post-state {}", intent.post),
                RepairOperation::Compensate => format!(
                    "its pre-state {} (restore those bytes, e.g. from version control, and retry)",
                    intent.pre
                ),
                _ => format!("its pre-state {} or post-state {}", intent.pre, intent.post),
            }
        ))),
    }
}

#[cfg(test)]
mod tests;
