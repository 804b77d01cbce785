//! Listing transactions for the read-only tool and resource: each row's intent and
//! proof read back through the stored [`Intent`] and [`Proof`], above every effect kind.

use rusqlite::{Connection, params};
use serde::Serialize;

use crate::ids::{EffectKind, TxnId, TxnStatus};
use crate::journal::Journal;
use crate::proof::{Intent, Proof};

/// Listing transactions failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The journal database failed.
    #[error("journal: {0}")]
    Journal(#[from] rusqlite::Error),
}

/// Which transactions to list.
#[derive(Clone, Debug, Default)]
pub struct TxnFilter {
    /// Only this state.
    pub status: Option<TxnStatus>,
    /// At most this many, newest first (0 means 100).
    pub limit: usize,
}

/// One transaction, as the read-only tool and resource show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TxnRecord {
    /// Its id.
    pub transaction_id: TxnId,
    /// Its state.
    pub status: TxnStatus,
    /// Its effect kind.
    pub effect_kind: EffectKind,
    /// The operation, e.g. `write`.
    pub operation: String,
    /// The tool family.
    pub tool_family: String,
    /// The target path for `file` effects (a change lists `files` instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// One line describing the proof, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof_summary: Option<String>,
    /// Why, for quarantine (and some compensations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The change (or composite) this transaction belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_txn: Option<TxnId>,
    /// A change's files, in the order it applies them (see [`crate::change`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: i64,
    /// Milliseconds since the Unix epoch, once terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal_at_ms: Option<i64>,
    /// For an editor row: whether the editor put the effect on its undo history, as its
    /// reply said. Typed for the add-on's dock; listings already say it in
    /// `proof_summary`, so it is not serialized twice.
    #[serde(skip)]
    pub undoable: Option<bool>,
}

impl Journal {
    /// Lists transactions, newest first.
    pub fn list_transactions(&self, filter: &TxnFilter) -> Result<Vec<TxnRecord>, ListError> {
        list(self.conn(), filter)
    }
}

pub(crate) fn list(conn: &Connection, filter: &TxnFilter) -> Result<Vec<TxnRecord>, ListError> {
    let limit = if filter.limit == 0 { 100 } else { filter.limit };
    let mut st = conn.prepare_cached(
        "SELECT id, state, effect_kind, operation, tool_family, intent_json, proof_json, reason,
                parent_txn, created_at_ms, terminal_at_ms
         FROM transactions WHERE (?1 IS NULL OR state = ?1)
         ORDER BY created_at_ms DESC, rowid DESC LIMIT ?2",
    )?;
    let rows = st.query_map(
        params![filter.status.map(TxnStatus::as_str), limit as i64],
        |r| {
            let id: String = r.get(0)?;
            let state: String = r.get(1)?;
            let kind: String = r.get(2)?;
            let intent: String = r.get(5)?;
            let proof: Option<String> = r.get(6)?;
            let parent: Option<String> = r.get(8)?;
            let bad = |what: &str| {
                rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    format!("bad {what} in journal row").into(),
                )
            };
            let proof = proof.and_then(|p| serde_json::from_str::<Proof>(&p).ok());
            Ok(TxnRecord {
                transaction_id: id.parse().map_err(|_| bad("id"))?,
                status: TxnStatus::parse(&state).ok_or_else(|| bad("state"))?,
                effect_kind: EffectKind::parse(&kind).ok_or_else(|| bad("effect kind"))?,
                operation: r.get(3)?,
                tool_family: r.get(4)?,
                files: match serde_json::from_str::<Intent>(&intent) {
                    Ok(Intent::Change(c)) => c.files.into_iter().map(|f| f.path).collect(),
                    _ => Vec::new(),
                },
                path: match serde_json::from_str::<Intent>(&intent) {
                    Ok(Intent::File(f)) => Some(f.path),
                    Ok(Intent::ProcessLaunch(l)) => Some(l.purpose),
                    Ok(Intent::EditorRuntime(e)) => e.scene,
                    Ok(Intent::Change(_)) => None,
                    Err(_) => None,
                },
                proof_summary: proof.as_ref().map(Proof::summary),
                undoable: match &proof {
                    Some(Proof::EditorRuntime(p)) => p.undoable,
                    _ => None,
                },
                reason: r.get(7)?,
                parent_txn: parent.and_then(|p| p.parse().ok()),
                created_at_ms: r.get(9)?,
                terminal_at_ms: r.get(10)?,
            })
        },
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}
