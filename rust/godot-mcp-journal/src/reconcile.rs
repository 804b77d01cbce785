//! Startup reconciliation: every transaction a previous process left `open`
//! becomes `compensated`, `committed` or `quarantined` from a proof re-derived
//! from disk, before the first request is served.
//!
//! | on disk (target)            | leftover temp | outcome                          |
//! |-----------------------------|---------------|----------------------------------|
//! | post-state                  | removed       | committed (proof: post-state)    |
//! | pre-state                   | removed       | compensated (proof: pre-state)   |
//! | neither                     | kept          | quarantined (reason names both)  |
//! | unreadable                  | kept          | quarantined (reason: the error)  |
//! | row of another project/gen. | untouched     | quarantined (gating; repair)     |
//! | kind without a reconciler   | untouched     | quarantined                      |
//!
//! The order is derive all → remove temps → one `syncfs` → record every
//! terminal row in one SQLite transaction. A crash anywhere in it leaves rows
//! `open` and disk states that re-derive to the same outcomes.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::derive::{FileDerived, derive_file_linked};
use crate::durable;
use crate::failpoints::{self as fp, cross};
use crate::ids::{TxnId, TxnStatus};
pub use crate::journal::ReconcileError;
use crate::journal::{Journal, QuarantinedTxn, WriteGate, record_terminal, to_json};
use crate::proof::{Deriver, FileProof, Intent, Proof};
#[cfg(test)]
use crate::proof::{FileIntent, ProofBasis};

/// What one reconciliation did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    /// Transactions proven to be in their pre-state.
    pub compensated: usize,
    /// Transactions proven to be in their post-state.
    pub committed: usize,
    /// Transactions quarantined by this run, with reasons.
    pub quarantined: Vec<QuarantinedTxn>,
    /// The gate after this run (it also counts older quarantines).
    pub gate: WriteGate,
    /// Changes whose files were put back and whose editor part waits for an editor
    /// to connect (it is owed an undo), with why.
    pub editor_waiting: Vec<QuarantinedTxn>,
    /// The intent log of an earlier journal, set aside (not replayed) because the
    /// journal was made anew beside it ([`Journal::set_aside_intent_log`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_aside_log: Option<PathBuf>,
}

impl ReconcileReport {
    /// The stderr lines `godot-mcp serve` prints, exactly as the spec shows:
    /// one per outcome with a non-zero count (compensated, committed,
    /// quarantined), then the gate status.
    pub fn stderr_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (name, n) in [
            ("compensated", self.compensated),
            ("committed", self.committed),
            ("quarantined", self.quarantined.len()),
        ] {
            if n > 0 {
                lines.push(format!(
                    "godot-mcp serve: startup reconciliation {name}={n}"
                ));
            }
        }
        if let Some(log) = &self.set_aside_log {
            lines.push(format!(
                "godot-mcp serve: the journal was made anew beside an earlier journal's intent \
                 log; its records were not reconciled, the log is kept at {}",
                log.display()
            ));
        }
        for w in &self.editor_waiting {
            lines.push(format!(
                "godot-mcp serve: startup reconciliation change {}: {}",
                w.transaction_id, w.reason
            ));
        }
        lines.push(match &self.gate {
            WriteGate::Open => "godot-mcp serve: write gate open".to_owned(),
            WriteGate::Unreconciled => {
                "godot-mcp serve: write gate closed: journal not reconciled".to_owned()
            }
            WriteGate::Closed { quarantined } => format!(
                "godot-mcp serve: write gate closed: {} quarantined transaction(s): {}; \
                 resolve with `godot-mcp transaction repair`",
                quarantined.len(),
                quarantined
                    .iter()
                    .map(|q| format!("{} ({})", q.transaction_id, q.reason))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
        lines
    }
}

/// The outcome re-derived for one `file` intent.
#[derive(Debug)]
pub(crate) struct Derived {
    pub status: TxnStatus,
    pub proof: Option<FileProof>,
    /// The proof of a non-file kind (a launch), recorded instead of `proof`.
    pub other_proof: Option<Proof>,
    pub reason: Option<String>,
    /// A leftover temp file to remove before recording the outcome.
    pub remove_temp: Option<PathBuf>,
    /// The displaced file a Windows exchange cut short between its two steps
    /// left beside the temp (`godot_mcp_os::fs::exchange_backup`), to remove
    /// with it. Never present on Unix, whose exchange is one step.
    pub remove_displaced: Option<PathBuf>,
}

impl Derived {
    fn quarantined(reason: String) -> Self {
        Self {
            status: TxnStatus::Quarantined,
            proof: None,
            other_proof: None,
            reason: Some(reason),
            remove_temp: None,
            remove_displaced: None,
        }
    }
}

impl From<FileDerived> for Derived {
    fn from(d: FileDerived) -> Self {
        Self {
            status: d.status,
            proof: d.proof,
            other_proof: None,
            reason: d.reason,
            remove_temp: d.remove_temp,
            remove_displaced: d.remove_displaced,
        }
    }
}

/// Re-derives a `file` intent's outcome from disk. Pure apart from reads.
#[cfg(test)]
pub(crate) fn derive_file(root: &Path, intent: &FileIntent, by: Deriver) -> Derived {
    derive_file_linked(root, intent, by, None).into()
}

/// The directories holding the targets of the file rows about to be recorded
/// terminal (a temp lives beside its target), each once.
fn claimed_dirs(root: &Path, derived: &[(String, Derived)]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = derived
        .iter()
        .filter(|(_, d)| d.status != TxnStatus::Quarantined)
        .filter_map(|(_, d)| d.proof.as_ref())
        .map(|p| durable::parent_dir(&root.join(&p.path)).to_path_buf())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

struct OpenRow {
    id: String,
    object_id: String,
    generation: i64,
    kind: String,
    intent_json: String,
}

impl Journal {
    /// Reconciles every open transaction, then computes the write gate. Must run
    /// before the first write; safe to run again (it is idempotent).
    pub fn reconcile(&mut self) -> Result<ReconcileReport, ReconcileError> {
        self.reconcile_with(crate::process_table::os())
    }

    /// [`Journal::reconcile`] asking `procs` about processes (tests pass a
    /// [`crate::process_table::FakeTable`]).
    pub fn reconcile_with(
        &mut self,
        procs: &dyn crate::process_table::ProcessTable,
    ) -> Result<ReconcileReport, ReconcileError> {
        self.gate = WriteGate::Unreconciled;
        // A terminal row that could not be written is still `open` in the
        // table, so this run re-derives it like any other.
        self.clear_pending_failure();
        let rows = self.open_rows()?;
        // Changes (many files, one state) are settled first, each on its own
        // (see `change`); one of another project incarnation stays below and
        // is quarantined like any foreign row.
        let (rows, changes) = self.split_changes(rows);
        let settled_changes = self.reconcile_changes(&changes)?;

        let mut launches = self.derive_launch_rows(procs, &rows);
        let derived: Vec<(String, Derived)> = rows
            .into_iter()
            .map(|row| {
                let d = launches
                    .remove(&row.id)
                    .unwrap_or_else(|| self.derive_row(&row));
                (row.id, d)
            })
            .collect();
        cross(fp::RECONCILE_AFTER_DERIVE);

        self.clean_up(&derived)?;
        cross(fp::RECONCILE_AFTER_CLEANUP);

        let mut report = ReconcileReport {
            compensated: 0,
            committed: 0,
            quarantined: Vec::new(),
            gate: WriteGate::Unreconciled,
            editor_waiting: Vec::new(),
            set_aside_log: self.set_aside_intent_log().map(Path::to_path_buf),
        };
        for (txn, status, reason) in settled_changes {
            match status {
                TxnStatus::Compensated => report.compensated += 1,
                TxnStatus::Committed => report.committed += 1,
                TxnStatus::Open => report.editor_waiting.push(QuarantinedTxn {
                    transaction_id: txn,
                    reason: reason.unwrap_or_default(),
                }),
                _ => report.quarantined.push(QuarantinedTxn {
                    transaction_id: txn,
                    reason: reason.unwrap_or_default(),
                }),
            }
        }
        self.record_derived(&derived, &mut report)?;
        cross(fp::RECONCILE_AFTER_TERMINAL);

        self.gate = if self.sync_failed() {
            // Nothing written since a failed sync is proven durable; only the
            // next open folds the intent log afresh (see `Journal::sync_failed`).
            WriteGate::Unreconciled
        } else {
            self.compute_gate()?
        };
        report.gate = self.gate.clone();
        for line in report.stderr_lines() {
            // The server prints these lines itself (exactly, on stderr); this is for logs.
            tracing::debug!("{line}");
        }
        Ok(report)
    }

    /// The rows a previous process left `open`, but for the unresolved editor effects
    /// that stay open (they block nothing, and no proof of them exists on disk).
    fn open_rows(&self) -> rusqlite::Result<Vec<OpenRow>> {
        let rows: Vec<OpenRow> = {
            let mut st = self.conn().prepare_cached(
                "SELECT id, project_object_id, generation, effect_kind, intent_json
                 FROM transactions WHERE state = 'open' ORDER BY rowid",
            )?;
            st.query_map([], |r| {
                Ok(OpenRow {
                    id: r.get(0)?,
                    object_id: r.get(1)?,
                    generation: r.get(2)?,
                    kind: r.get(3)?,
                    intent_json: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?
        };
        // An unresolved editor effect that cannot have written a file stays open: it blocks
        // nothing, and no proof of it exists on disk (see `editor`).
        let rows: Vec<OpenRow> = rows
            .into_iter()
            .filter(|r| !crate::editor::stays_unresolved(&r.kind, &r.intent_json))
            .collect();
        Ok(rows)
    }

    /// The open launches derived together (one process snapshot per round, one
    /// bounded wait for all their boundaries), by row id.
    fn derive_launch_rows(
        &self,
        procs: &dyn crate::process_table::ProcessTable,
        rows: &[OpenRow],
    ) -> std::collections::HashMap<String, Derived> {
        // Launches are derived together (one /proc snapshot per round, one
        // bounded wait for all their boundaries). Those of another project
        // object or generation too: a process does not belong to a directory,
        // and its receipt identifies it exactly wherever the project went.
        let launch_rows: Vec<(TxnId, crate::launch::LaunchIntent)> = rows
            .iter()
            .filter(|r| r.kind == "process_launch")
            .filter_map(|r| match serde_json::from_str::<Intent>(&r.intent_json) {
                Ok(Intent::ProcessLaunch(i)) => Some((r.id.parse().ok()?, i)),
                _ => None,
            })
            .collect();
        // No open launch, nothing to ask the process table: a snapshot reads
        // /proc/<pid>/stat of every process on the machine, most of a start-up.
        let derived_launches = if launch_rows.is_empty() {
            Vec::new()
        } else {
            crate::launch::derive_launches(procs, &self.state_dir, &launch_rows)
        };
        derived_launches
            .into_iter()
            .zip(&launch_rows)
            .map(|((status, proof, reason), (txn, _))| {
                (
                    txn.to_string(),
                    Derived {
                        status,
                        proof: None,
                        other_proof: proof.map(Proof::ProcessLaunch),
                        reason,
                        remove_temp: None,
                        remove_displaced: None,
                    },
                )
            })
            .collect()
    }

    /// Removes every leftover a derivation claims gone, then makes the project's
    /// filesystem durable before any terminal row claims it.
    fn clean_up(&self, derived: &[(String, Derived)]) -> Result<(), ReconcileError> {
        for (_, d) in derived {
            for leftover in [&d.remove_temp, &d.remove_displaced].into_iter().flatten() {
                // A temp that vanished meanwhile is fine; any other failure is
                // not, since the proof claims it is gone.
                if let Err(e) = fs::remove_file(leftover)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    return Err(ReconcileError::Sync(e));
                }
            }
        }
        if derived
            .iter()
            .any(|(_, d)| d.status != TxnStatus::Quarantined)
        {
            // One syncfs (per OS: see godot_mcp_os::fs) makes every observed rename/unlink
            // durable before a terminal row claims it, at the cost of one call, not one per
            // row. Windows flushes a volume only with an administrator's handle: there each
            // directory whose entries (the target's rename, the temp's unlink) a terminal
            // file row claims is flushed instead.
            crate::storage::sync_tree(
                &*self.storage,
                &self.root,
                &claimed_dirs(&self.root, derived),
            )
            .map_err(ReconcileError::Sync)?;
        }
        Ok(())
    }

    /// Records every derived row terminal in one SQLite transaction, counted in `report`.
    fn record_derived(
        &mut self,
        derived: &[(String, Derived)],
        report: &mut ReconcileReport,
    ) -> Result<(), ReconcileError> {
        let tx = self.conn_mut().transaction()?;
        for (id, d) in derived {
            let Ok(txn) = id.parse::<TxnId>() else {
                // An id this build cannot parse cannot be recorded by id; the
                // row stays open as evidence and closes the gate (see
                // `compute_gate`).
                tracing::error!(id, "journal row with an unparsable id left open");
                continue;
            };
            let proof = d
                .other_proof
                .clone()
                .or_else(|| d.proof.clone().map(Proof::File))
                .as_ref()
                .map(to_json)
                .transpose()?;
            record_terminal(
                &tx,
                txn,
                TxnStatus::Open,
                d.status,
                proof,
                d.reason.as_deref(),
            )?;
            match d.status {
                TxnStatus::Compensated => report.compensated += 1,
                TxnStatus::Committed => report.committed += 1,
                TxnStatus::Quarantined => report.quarantined.push(QuarantinedTxn {
                    transaction_id: txn,
                    reason: d.reason.clone().unwrap_or_default(),
                }),
                TxnStatus::Open => {}
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Splits the open change rows of this project incarnation off `rows`.
    fn split_changes(
        &self,
        rows: Vec<OpenRow>,
    ) -> (Vec<OpenRow>, Vec<(TxnId, crate::change::ChangeIntent)>) {
        let mut changes = Vec::new();
        let mut rest = Vec::with_capacity(rows.len());
        for row in rows {
            let ours = row.kind == "file"
                && row.object_id == self.identity.object_id
                && row.generation == self.identity.generation as i64;
            let change = ours
                .then(|| serde_json::from_str::<Intent>(&row.intent_json).ok())
                .flatten()
                .and_then(|i| match i {
                    Intent::Change(c) => Some(c),
                    _ => None,
                });
            match (change, row.id.parse::<TxnId>()) {
                (Some(c), Ok(txn)) => changes.push((txn, c)),
                _ => rest.push(row),
            }
        }
        (rest, changes)
    }

    fn derive_row(&self, row: &OpenRow) -> Derived {
        if row.object_id != self.identity.object_id
            || row.generation != self.identity.generation as i64
        {
            return Derived::quarantined(format!(
                "recorded for project object {} generation {}, not this project \
                 (object {} generation {}); never applied here",
                row.object_id, row.generation, self.identity.object_id, self.identity.generation
            ));
        }
        if row.kind == "process_launch" {
            return Derived::quarantined("launch intent unreadable".into());
        }
        if row.kind != "file" {
            return Derived::quarantined(format!(
                "no reconciler for effect kind {} in this build",
                row.kind
            ));
        }
        match serde_json::from_str::<Intent>(&row.intent_json) {
            Ok(Intent::File(intent)) => {
                let link = intent.linked_launch.map(|l| self.linked_launch_verdict(l));
                derive_file_linked(&self.root, &intent, Deriver::Reconcile, link).into()
            }
            Ok(Intent::EditorRuntime(_)) => Derived::quarantined(
                "no reconciler for effect kind editor_runtime in this build".into(),
            ),
            Ok(_) => Derived::quarantined("intent of another effect kind on a file row".into()),
            Err(e) => Derived::quarantined(format!("intent unreadable: {e}")),
        }
    }
}

#[cfg(test)]
mod tests;
