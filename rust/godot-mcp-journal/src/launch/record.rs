//! The journal side of a launch: its intent, receipt and terminal result recorded, its
//! proof read back, and the composite write that links to it.

use std::io;

use rusqlite::params;

use crate::effect::{parse_proof, proof_json};
use crate::ids::{EffectKind, TxnId, TxnStatus};
use crate::journal::{Journal, NewTxn, QuarantinedTxn, WriteGate, insert_txn, record_terminal};

use super::types::{LaunchEnd, LaunchError, LaunchIntent, LaunchProof, LaunchReceipt};

impl Journal {
    /// Records a launch intent before the caller spawns (written to the WAL; made
    /// durable on disk together with the receipt, before the gate is released).
    /// `needs_open_gate`: the launch writes disk (export, helper) and is refused
    /// while anything is quarantined; every launch is refused before reconciliation.
    pub fn begin_launch(
        &mut self,
        intent: &LaunchIntent,
        tool_family: &str,
        operation: &str,
        parent: Option<TxnId>,
        needs_open_gate: bool,
    ) -> Result<TxnId, LaunchError> {
        match &self.gate {
            WriteGate::Unreconciled => return Err(LaunchError::NotReconciled),
            WriteGate::Closed { quarantined } if needs_open_gate => {
                return Err(LaunchError::GateClosed {
                    quarantined: quarantined.iter().map(|q| q.transaction_id).collect(),
                });
            }
            _ => {}
        }
        let txn = TxnId::random()?;
        let json = intent_json(intent)?;
        // Committed without its own fsync: its WAL frames survive the death of
        // this process, and nothing of the launch can run before the receipt
        // (which *is* fsynced, and commits this row with it) releases the gate.
        // A machine crash before that kills the gated process as well.
        self.conn().pragma_update(None, "synchronous", "NORMAL")?;
        let inserted = insert_txn(
            self.conn(),
            &self.identity,
            &NewTxn {
                txn,
                kind: EffectKind::ProcessLaunch,
                operation,
                tool_family,
                state: TxnStatus::Open,
                intent_json: &json,
                proof_json: None,
                parent,
                idem: None,
            },
        );
        let restored = self.conn().pragma_update(None, "synchronous", "FULL");
        inserted?;
        restored?;
        Ok(txn)
    }

    /// Makes the receipt durable (full sync) in the open launch's intent.
    pub fn record_receipt(
        &mut self,
        txn: TxnId,
        intent: &LaunchIntent,
        receipt: &LaunchReceipt,
    ) -> Result<(), LaunchError> {
        let mut with = intent.clone();
        with.receipt = Some(receipt.clone());
        let json = intent_json(&with)?;
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE transactions SET intent_json = ?2 WHERE id = ?1 AND state = 'open'",
            )?
            .execute(params![txn.to_string(), json])?;
        if changed == 1 {
            Ok(())
        } else {
            Err(LaunchError::Journal(rusqlite::Error::QueryReturnedNoRows))
        }
    }

    /// Records a launch's terminal state; `committed` with a proof whose boundary
    /// is empty, else `quarantined` (which closes the gate).
    pub fn finish_launch(
        &mut self,
        txn: TxnId,
        proof: &LaunchProof,
    ) -> Result<TxnStatus, LaunchError> {
        let (status, reason) = if proof.boundary_empty {
            (TxnStatus::Committed, None)
        } else {
            (
                TxnStatus::Quarantined,
                Some(if proof.unaccounted.is_empty() {
                    "the launch's boundary could not be proven empty after it ended".to_owned()
                } else {
                    format!(
                        "the launch's boundary could not be proven empty after it ended: it \
                         holds {} process(es) that cannot be identified as the launch's or not \
                         (pids {:?}), left running",
                        proof.unaccounted.len(),
                        proof.unaccounted
                    )
                }),
            )
        };
        record_terminal(
            self.conn(),
            txn,
            TxnStatus::Open,
            status,
            Some(proof_json::<LaunchIntent>(proof)?),
            reason.as_deref(),
        )?;
        if status == TxnStatus::Quarantined {
            let q = QuarantinedTxn {
                transaction_id: txn,
                reason: reason.unwrap_or_default(),
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
        Ok(status)
    }

    /// The recorded proof of a terminal transaction (for composites).
    pub fn launch_proof(
        &self,
        txn: TxnId,
    ) -> Result<Option<(TxnStatus, LaunchProof)>, LaunchError> {
        let row: Option<(String, Option<String>)> = self
            .conn()
            .prepare_cached("SELECT state, proof_json FROM transactions WHERE id = ?1")?
            .query_row([txn.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        Ok(row.and_then(|(state, proof)| {
            let status = TxnStatus::parse(&state)?;
            parse_proof::<LaunchIntent>(proof.as_deref()?).map(|p| (status, p))
        }))
    }
}

impl Journal {
    /// The verdict on a composite's linked launch: `Ok` when it is committed
    /// with a clean terminal state (exit 0, boundary proven empty), re-read
    /// from the journal every time.
    pub fn linked_launch_verdict(&self, link: TxnId) -> Result<(), String> {
        match self.launch_proof(link) {
            Ok(Some((TxnStatus::Committed, p))) => match (&p.end, p.boundary_empty) {
                (LaunchEnd::Exit { code: 0 }, true) => Ok(()),
                (_, false) => Err("did not prove its boundary empty".into()),
                (end, true) => Err(format!("did not end cleanly ({end:?})")),
            },
            Ok(Some((status, _))) => Err(format!("is {status}, not committed")),
            Ok(None) => Err("has no launch proof".into()),
            Err(e) => Err(format!("could not be read: {e}")),
        }
    }

    /// A composite canonical write: `req` lands only if the linked helper
    /// launch's proof is clean now, and the file transaction records the link
    /// so reconciliation and repair re-validate it.
    pub fn write_file_linked(
        &mut self,
        req: crate::journal::FileWrite,
        link: TxnId,
    ) -> Result<crate::journal::TxnOutcome, crate::journal::WriteError> {
        if let Err(why) = self.linked_launch_verdict(link) {
            return Err(crate::journal::WriteError::Io {
                path: req.rel_path.clone(),
                source: io::Error::other(format!(
                    "composite refused: linked process_launch {link} {why}; nothing was written"
                )),
            });
        }
        self.write_file_with_link(req, Some((link, Journal::linked_launch_verdict)))
    }
}

fn intent_json(intent: &LaunchIntent) -> rusqlite::Result<String> {
    crate::effect::intent_json(intent)
}
