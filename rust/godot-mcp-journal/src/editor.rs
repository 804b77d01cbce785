//! `editor_runtime` transactions: an effect applied through the editor bridge.
//!
//! The intent (command, request id, whether the command may write a file) is durable
//! before the request is sent. The editor's reply is the only evidence the journal gets,
//! so the terminal state follows it:
//!
//! | reply | state | why |
//! |---|---|---|
//! | `ok` | `committed` | the editor reports the effect applied; the proof records the reply |
//! | an error the editor answered before running anything | `compensated` | not applied; nothing to undo |
//! | none (timeout, connection lost), command may write a file | `quarantined` | the disk may have changed; writes are blocked until an operator resolves it |
//! | none, command cannot write a file | stays `open` (unresolved) | the request is never resent; the edit, if it ran, is in the editor's memory only, where its undo history covers it; it blocks nothing; a reply that still arrives settles it ([`Journal::unresolved_editor_txn`]) |
//!
//! Startup reconciliation quarantines an open `editor_runtime` row whose command may have
//! written a file and leaves the others unresolved (see [`stays_unresolved`]).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::ids::{EffectKind, TxnId, TxnStatus};
use crate::journal::{Journal, WriteGate, now_ms};
use crate::proof::{Intent, Proof};

/// What an editor transaction intends, durable before the request is sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditorIntent {
    /// The bridge command, e.g. `node.set_property`.
    pub cmd: String,
    /// The bridge request id it was (or will be) sent with; never reused, never resent.
    pub request_id: u64,
    /// The command may write a file (save_scene…): a lost answer quarantines it.
    pub may_save_file: bool,
    /// The scene the command acts on, when known (`res://…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// SHA-256 of the canonical request parameters.
    pub params_sha256: String,
}

/// How the editor answered, as recorded in a terminal row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditorProof {
    /// The bridge request id of the reply.
    pub request_id: u64,
    /// `ok`, or the bridge error code the editor answered with.
    pub reply: String,
    /// Whether the editor put the effect on its undo history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoable: Option<bool>,
}

/// How a sent editor request ended, from the server's side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorSettle {
    /// The editor answered `ok`.
    Applied(EditorProof),
    /// The editor answered an error before changing anything.
    NotApplied(EditorProof),
    /// No answer (timeout, lost connection): it may or may not have run.
    Lost {
        /// Why there is no answer.
        reason: String,
    },
}

/// An editor transaction could not be recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditorTxnError {
    /// Startup reconciliation has not run.
    #[error("write refused: the journal is not reconciled; restart the server")]
    NotReconciled,
    /// Quarantined transactions close the write gate.
    #[error("write gate closed: quarantined transaction(s) {}; resolve with `godot-mcp transaction repair`", .quarantined.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    GateClosed {
        /// The quarantined transactions.
        quarantined: Vec<TxnId>,
    },
    /// No transaction id could be drawn.
    #[error("cannot draw a transaction id: {0}")]
    Random(std::io::Error),
    /// The journal database failed.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
}

/// Whether an open row is an unresolved editor effect that reconciliation leaves open:
/// an `editor_runtime` row whose command cannot have written a file.
pub(crate) fn stays_unresolved(kind: &str, intent_json: &str) -> bool {
    kind == EffectKind::EditorRuntime.as_str()
        && matches!(
            serde_json::from_str::<Intent>(intent_json),
            Ok(Intent::EditorRuntime(EditorIntent {
                may_save_file: false,
                ..
            }))
        )
}

/// `synchronous=NORMAL` for the statements of an editor command that cannot write a
/// file, restored to `FULL` when dropped (see [`Journal::begin_editor`]).
struct SyncLevel<'c> {
    conn: &'c rusqlite::Connection,
}

impl<'c> SyncLevel<'c> {
    fn for_intent(
        conn: &'c rusqlite::Connection,
        intent: &EditorIntent,
    ) -> Result<Option<Self>, rusqlite::Error> {
        if intent.may_save_file {
            return Ok(None);
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(Some(Self { conn }))
    }
}

impl Drop for SyncLevel<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.conn.pragma_update(None, "synchronous", "FULL") {
            tracing::error!(error = %e, "could not restore synchronous=FULL");
        }
    }
}

impl Journal {
    /// Records an editor transaction's intent before the request is sent. Refused while
    /// the write gate is not open.
    ///
    /// Durability follows the effect. A command that may write a file (`may_save_file`)
    /// is recorded with `synchronous=FULL`: its row must survive a power loss, because
    /// the file it may have written does. Any other editor command changes only the
    /// editor's memory, which a power loss loses too; its rows are written to the WAL
    /// without an fsync (`synchronous=NORMAL`) — they survive a killed server (the page
    /// cache is the kernel's) and cost no disk flush on the editor's hot path.
    pub fn begin_editor(
        &mut self,
        intent: &EditorIntent,
        tool_family: &str,
        operation: &str,
    ) -> Result<TxnId, EditorTxnError> {
        match &self.gate {
            WriteGate::Open => {}
            WriteGate::Unreconciled => return Err(EditorTxnError::NotReconciled),
            WriteGate::Closed { quarantined } => {
                return Err(EditorTxnError::GateClosed {
                    quarantined: quarantined.iter().map(|q| q.transaction_id).collect(),
                });
            }
        }
        let txn = TxnId::random().map_err(EditorTxnError::Random)?;
        let intent_json = serde_json::to_string(&Intent::EditorRuntime(intent.clone()))
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let _sync = SyncLevel::for_intent(&self.conn, intent)?;
        self.conn
            .prepare_cached(
                "INSERT INTO transactions (id, project_object_id, generation, effect_kind, operation,
                     tool_family, state, intent_json, created_at_ms)
                 VALUES (?1, ?2, ?3, 'editor_runtime', ?4, ?5, 'open', ?6, ?7)",
            )?
            .execute(params![
                txn.to_string(),
                self.identity.object_id,
                self.identity.generation as i64,
                operation,
                tool_family,
                intent_json,
                now_ms(),
            ])?;
        Ok(txn)
    }

    /// The unresolved (open) editor transaction that sent `request_id`, if any: a reply
    /// that arrives after its request gave up settles it from that reply.
    pub fn unresolved_editor_txn(
        &self,
        request_id: u64,
    ) -> Result<Option<(TxnId, EditorIntent)>, EditorTxnError> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, intent_json FROM transactions
             WHERE state = 'open' AND effect_kind = 'editor_runtime'
               AND project_object_id = ?1 AND generation = ?2",
        )?;
        let rows = st.query_map(
            params![self.identity.object_id, self.identity.generation as i64],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        )?;
        for row in rows {
            let (id, intent) = row?;
            if let (Ok(txn), Ok(Intent::EditorRuntime(i))) =
                (id.parse::<TxnId>(), serde_json::from_str::<Intent>(&intent))
                && i.request_id == request_id
            {
                return Ok(Some((txn, i)));
            }
        }
        Ok(None)
    }

    /// Records how an editor transaction ended and returns its state. A lost answer to
    /// a command that may have written a file quarantines it and closes the write gate.
    pub fn settle_editor(
        &mut self,
        txn: TxnId,
        intent: &EditorIntent,
        settle: EditorSettle,
    ) -> Result<TxnStatus, EditorTxnError> {
        let (to, proof, reason) = match settle {
            EditorSettle::Applied(p) => (TxnStatus::Committed, Some(p), None),
            EditorSettle::NotApplied(p) => {
                let why = format!("not applied: the editor answered {}", p.reply);
                (TxnStatus::Compensated, Some(p), Some(why))
            }
            EditorSettle::Lost { reason } if intent.may_save_file => (
                TxnStatus::Quarantined,
                None,
                Some(format!(
                    "{}: {reason}; never resent; it may have written {} — re-read the file, then \
                     resolve with `godot-mcp transaction repair`",
                    intent.cmd,
                    intent.scene.as_deref().unwrap_or("a project file")
                )),
            ),
            EditorSettle::Lost { reason } => {
                // Stays open (unresolved); the reason says why, for the listing.
                self.conn
                    .prepare_cached(
                        "UPDATE transactions SET reason = ?2 WHERE id = ?1 AND state = 'open'",
                    )?
                    .execute(params![
                        txn.to_string(),
                        format!(
                            "unresolved: {}: {reason}; never resent; re-read the editor's state",
                            intent.cmd
                        )
                    ])?;
                return Ok(TxnStatus::Open);
            }
        };
        let proof_json = proof
            .map(|p| serde_json::to_string(&Proof::EditorRuntime(p)))
            .transpose()
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        // A quarantine closes the gate: always durable. Otherwise as the intent was.
        let _sync = if to == TxnStatus::Quarantined {
            None
        } else {
            SyncLevel::for_intent(&self.conn, intent)?
        };
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE transactions SET state = ?2, proof_json = ?3, reason = ?4, terminal_at_ms = ?5
                 WHERE id = ?1 AND state = 'open'",
            )?
            .execute(params![txn.to_string(), to.as_str(), proof_json, reason, now_ms()])?;
        if changed != 1 {
            return Err(EditorTxnError::Journal(
                rusqlite::Error::QueryReturnedNoRows,
            ));
        }
        if to == TxnStatus::Quarantined {
            self.gate = self.compute_gate()?;
        }
        Ok(to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TxnFilter;

    fn journal() -> (tempfile::TempDir, Journal) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("project.godot"), "").unwrap();
        let mut j = Journal::open(&dir.path().join("state"), &project).unwrap();
        j.reconcile().unwrap();
        (dir, j)
    }

    fn intent(cmd: &str, may_save_file: bool) -> EditorIntent {
        EditorIntent {
            cmd: cmd.into(),
            request_id: 1,
            may_save_file,
            scene: Some("res://main.tscn".into()),
            params_sha256: "00".into(),
        }
    }

    #[test]
    fn replies_settle_and_lost_answers_follow_the_file_rule() {
        let (_d, mut j) = journal();
        let ok = intent("node.set_property", false);
        let t = j.begin_editor(&ok, "editor", "set").unwrap();
        let proof = EditorProof {
            request_id: 1,
            reply: "ok".into(),
            undoable: Some(true),
        };
        assert_eq!(
            j.settle_editor(t, &ok, EditorSettle::Applied(proof))
                .unwrap(),
            TxnStatus::Committed
        );

        let lost = intent("node.set_property", false);
        let t = j.begin_editor(&lost, "editor", "set").unwrap();
        let s = j
            .settle_editor(
                t,
                &lost,
                EditorSettle::Lost {
                    reason: "timeout".into(),
                },
            )
            .unwrap();
        assert_eq!(s, TxnStatus::Open);
        assert_eq!(
            j.gate(),
            &WriteGate::Open,
            "an unresolved in-memory edit blocks nothing"
        );
        // Reconciliation leaves it unresolved, still not blocking.
        j.reconcile().unwrap();
        assert_eq!(j.gate(), &WriteGate::Open);
        let open = j
            .list_transactions(&TxnFilter {
                status: Some(TxnStatus::Open),
                limit: 0,
            })
            .unwrap();
        assert_eq!(open.len(), 1);
        assert!(open[0].reason.as_deref().unwrap().contains("never resent"));

        let save = intent("scene.save", true);
        let t = j.begin_editor(&save, "editor", "save").unwrap();
        let s = j
            .settle_editor(
                t,
                &save,
                EditorSettle::Lost {
                    reason: "connection lost".into(),
                },
            )
            .unwrap();
        assert_eq!(s, TxnStatus::Quarantined);
        assert!(matches!(j.gate(), WriteGate::Closed { .. }));
        assert!(matches!(
            j.begin_editor(&ok, "editor", "set"),
            Err(EditorTxnError::GateClosed { .. })
        ));
    }

    #[test]
    fn an_open_saving_row_is_quarantined_at_reconcile() {
        let (_d, mut j) = journal();
        let save = intent("scene.save", true);
        j.begin_editor(&save, "editor", "save").unwrap();
        let report = j.reconcile().unwrap();
        assert_eq!(report.quarantined.len(), 1);
        assert!(matches!(j.gate(), WriteGate::Closed { .. }));
    }
}
