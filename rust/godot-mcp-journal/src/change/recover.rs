//! A change after the fact: the editor parts a previous process left owed, and the
//! changes reconciliation settles at startup.

use std::path::PathBuf;

use rusqlite::OptionalExtension;

use crate::durable;
use crate::effect::{Deriver, parse_intent, parse_proof};
use crate::ids::{TxnId, TxnStatus};
use crate::journal::{Journal, QuarantinedTxn, WriteGate, in_txn};

use super::settle::{
    Settled, load_preimages, record_change_terminal, record_files_put_back, settle,
};
use super::types::{ChangeEditorPart, ChangeIntent, ChangeProof, EditorPartOutcome};

impl Journal {
    /// The changes whose editor part is owed an undo: open, with an editor part, as a
    /// previous process left them (reconciliation put their files back). A change in
    /// flight holds the journal's lock for its whole commit, so none is seen here.
    pub fn owed_editor_parts(&self) -> rusqlite::Result<Vec<(TxnId, ChangeEditorPart)>> {
        let mut st = self.conn().prepare_cached(
            "SELECT id, intent_json, proof_json IS NOT NULL FROM transactions
             WHERE state = 'open' AND effect_kind = 'file' ORDER BY rowid",
        )?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, intent, put_back)| {
                let Some(ChangeIntent {
                    editor: Some(part),
                    check,
                    ..
                }) = parse_intent::<ChangeIntent>(&intent)
                else {
                    return None;
                };
                // A change held for its check in this process (no put-back proof
                // yet) is its caller's to settle.
                if check.is_some() && !put_back {
                    return None;
                }
                Some((id.parse().ok()?, part))
            })
            .collect())
    }

    /// Settles an owed editor part ([`Journal::owed_editor_parts`]): `Ok(outcome)`
    /// (undone, or never applied) with every file proven at its pre-state →
    /// `compensated`; `Err(reason)` (the editor's history shows the action under
    /// later ones: it cannot be taken back) → `quarantined`. Returns the state
    /// recorded (`open`: the row was no longer owed).
    pub fn settle_owed_editor(
        &mut self,
        txn: TxnId,
        outcome: Result<EditorPartOutcome, String>,
    ) -> rusqlite::Result<TxnStatus> {
        let Some(part) = self
            .owed_editor_parts()?
            .into_iter()
            .find(|(t, _)| *t == txn)
            .map(|(_, p)| p)
        else {
            return Ok(TxnStatus::Open);
        };
        let intent: Option<ChangeIntent> = self
            .conn()
            .query_row(
                "SELECT intent_json FROM transactions WHERE id = ?1",
                [txn.to_string()],
                |r| r.get::<_, String>(0),
            )
            .ok()
            .and_then(|j| parse_intent::<ChangeIntent>(&j));
        let Some(intent) = intent else {
            return Ok(TxnStatus::Open);
        };
        // Files reconciliation proved back are never re-derived (someone may have
        // written them since, through a later committed write).
        let mut settled = match self.files_put_back(txn)? {
            Some(proof) => Settled {
                status: TxnStatus::Compensated,
                proof: Some(proof),
                reason: None,
            },
            None => self.settle_recorded(txn, &intent, true)?,
        };
        match outcome {
            Ok(outcome) if settled.status == TxnStatus::Compensated => {
                if let Some(p) = settled.proof.as_mut() {
                    p.editor = Some(outcome);
                }
                settled.reason = Some(format!(
                    "the server stopped before the change completed; every file was put back \
                     and its editor part ({}) {}",
                    part.action,
                    match outcome {
                        EditorPartOutcome::NotApplied => "was never applied",
                        _ => "undone",
                    }
                ));
            }
            Ok(_) => {}
            Err(why) => {
                settled.status = TxnStatus::Quarantined;
                settled.proof = None;
                settled.reason = Some(format!(
                    "its editor part ({} on {}) cannot be taken back: {why}",
                    part.action, part.scene
                ));
            }
        }
        let recorded = in_txn(self.conn(), |conn| {
            record_change_terminal(conn, txn, &settled)
        });
        if recorded.is_err() {
            self.gate = WriteGate::Unreconciled;
        }
        recorded?;
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, settled.reason.clone().unwrap_or_default());
        }
        Ok(settled.status)
    }

    /// How many pre-images of changes the journal retains (open or
    /// quarantined changes keep theirs).
    pub fn retained_change_preimages(&self) -> rusqlite::Result<usize> {
        self.conn()
            .query_row("SELECT COUNT(*) FROM change_preimages", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| usize::try_from(n).unwrap_or(0))
    }

    pub(super) fn close_gate(&mut self, txn: TxnId, reason: String) {
        let q = QuarantinedTxn {
            transaction_id: txn,
            reason,
        };
        match &mut self.gate {
            WriteGate::Closed { quarantined } => quarantined.push(q),
            gate => {
                *gate = WriteGate::Closed {
                    quarantined: vec![q],
                }
            }
        }
    }

    /// A recorded change's files re-derived from disk by reconciliation, with its
    /// retained pre-images (`prefer_compensate`: put back what is not at its pre-state).
    fn settle_recorded(
        &self,
        txn: TxnId,
        intent: &ChangeIntent,
        prefer_compensate: bool,
    ) -> rusqlite::Result<Settled> {
        let preimages = load_preimages(self.conn(), txn, &intent.files)?;
        Ok(settle(
            &self.root,
            &*self.storage,
            &intent.files,
            &preimages,
            Deriver::Reconcile,
            prefer_compensate,
        ))
    }

    /// The proof recorded on an open change whose files reconciliation already
    /// proved back at their pre-state (its editor part still owed): those files are
    /// never re-derived or touched again. `None`: not recorded.
    fn files_put_back(&self, txn: TxnId) -> rusqlite::Result<Option<ChangeProof>> {
        let json: Option<Option<String>> = self
            .conn()
            .query_row(
                "SELECT proof_json FROM transactions WHERE id = ?1 AND state = 'open'",
                [txn.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        Ok(json.flatten().and_then(|j| parse_proof::<ChangeIntent>(&j)))
    }

    /// Settles every change a previous process left open (of this project
    /// object and generation; others are quarantined like any foreign row):
    /// committed, compensated (put back from the retained pre-images) or
    /// quarantined. Every outcome is derived first, then the project's file
    /// system is synced once (`syncfs`: the last rename or unlink a change made
    /// may not be durable yet), then each is recorded in its own SQLite
    /// transaction, so a crash in here leaves the rest open for the next run,
    /// which derives the same outcome. A change whose editor part is owed an undo
    /// stays open with its files' put-back proof recorded (and its pre-images
    /// released): a later run never re-derives those files. Returns what it recorded.
    pub(crate) fn reconcile_changes(
        &mut self,
        rows: &[(TxnId, ChangeIntent)],
    ) -> Result<Vec<(TxnId, TxnStatus, Option<String>)>, crate::journal::ReconcileError> {
        let mut out = Vec::with_capacity(rows.len());
        // (txn, settled, whether the row stays open with the files' proof).
        let mut to_record: Vec<(TxnId, Settled, bool)> = Vec::new();
        for (txn, intent) in rows {
            if let Some(part) = &intent.editor
                && self.files_put_back(*txn)?.is_some()
            {
                out.push((
                    *txn,
                    TxnStatus::Open,
                    Some(format!(
                        "every file was put back; its editor part ({} on {}) waits for the \
                         editor to connect",
                        part.action, part.scene
                    )),
                ));
                continue;
            }
            // A held change's check never passed: it is put back.
            let mut settled = self.settle_recorded(*txn, intent, intent.check.is_some())?;
            if settled.status == TxnStatus::Compensated {
                settled.reason = Some(match &intent.check {
                    Some(check) => format!(
                        "the server stopped before the change's {check} check passed; every \
                         file was put back"
                    ),
                    None => "the server stopped before the change completed; every file was \
                             put back"
                        .into(),
                });
            }
            let mut owed = false;
            if let Some(part) = &intent.editor {
                match settled.status {
                    // A file is written only after the editor applied its part.
                    TxnStatus::Committed if !intent.files.is_empty() => {
                        if let Some(p) = settled.proof.as_mut() {
                            p.editor = Some(EditorPartOutcome::Applied);
                        }
                    }
                    TxnStatus::Quarantined => {
                        let r = settled.reason.get_or_insert_with(String::new);
                        r.push_str(&format!(
                            "; its editor part ({} on {}) may be applied",
                            part.action, part.scene
                        ));
                    }
                    // Files back at their pre-state (or none): the editor part may have
                    // been applied; it is owed an undo, settled when an editor connects
                    // ([`Journal::owed_editor_parts`]). The row stays open, the files'
                    // proof recorded on it.
                    _ => {
                        owed = true;
                        settled.reason = Some(format!(
                            "every file was put back; its editor part ({} on {}) waits \
                             for the editor to connect",
                            part.action, part.scene
                        ));
                    }
                }
            }
            to_record.push((*txn, settled, owed));
        }
        // Durable before any row claims it: the files a row proves (a committed
        // change's last unlink, say) may still be only in the page cache.
        if to_record
            .iter()
            .any(|(_, s, _)| s.status != TxnStatus::Quarantined)
        {
            let mut dirs: Vec<PathBuf> = rows
                .iter()
                .flat_map(|(_, i)| &i.files)
                .map(|f| durable::parent_dir(&self.root.join(&f.path)).to_path_buf())
                .collect();
            dirs.sort();
            dirs.dedup();
            crate::storage::sync_tree(&*self.storage, &self.root, &dirs)
                .map_err(crate::journal::ReconcileError::Sync)?;
        }
        for (txn, settled, owed) in to_record {
            if owed {
                in_txn(self.conn(), |conn| {
                    record_files_put_back(conn, txn, settled.proof.as_ref())
                })?;
                out.push((txn, TxnStatus::Open, settled.reason));
                continue;
            }
            in_txn(self.conn(), |conn| {
                record_change_terminal(conn, txn, &settled)
            })?;
            out.push((txn, settled.status, settled.reason));
        }
        Ok(out)
    }
}
