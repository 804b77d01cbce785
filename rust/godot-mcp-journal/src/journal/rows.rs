//! The `transactions` rows every effect kind records: one SQLite transaction, a new row,
//! a terminal transition.

use rusqlite::{Connection, params};

use crate::identity::ProjectIdentity;
use crate::ids::IdempotencyKey;
use crate::ids::now_ms;
use crate::ids::{EffectKind, TxnId, TxnStatus};

/// Runs `f` in one SQLite transaction (cached `BEGIN`/`COMMIT` statements: this
/// runs on every write), rolled back if `f` fails.
pub(crate) fn in_txn<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached("BEGIN")?.execute([])?;
    let result = f(conn).and_then(|v| {
        conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(v)
    });
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// A new `transactions` row. A row born terminal (an artifact recorded after
/// the fact) gets its terminal time at creation.
pub(crate) struct NewTxn<'a> {
    pub txn: TxnId,
    pub kind: EffectKind,
    pub operation: &'a str,
    pub tool_family: &'a str,
    pub state: TxnStatus,
    pub intent_json: &'a str,
    pub proof_json: Option<&'a str>,
    pub parent: Option<TxnId>,
    pub idem: Option<&'a IdempotencyKey>,
}

/// Inserts `row` for the project `identity`: the one statement every effect
/// kind records its intent with.
pub(crate) fn insert_txn(
    conn: &Connection,
    identity: &ProjectIdentity,
    row: &NewTxn<'_>,
) -> rusqlite::Result<()> {
    let now = now_ms();
    let terminal_at = (row.state != TxnStatus::Open).then_some(now);
    conn.prepare_cached(
        "INSERT INTO transactions (id, project_object_id, generation, effect_kind, operation,
             tool_family, state, intent_json, proof_json, parent_txn, idem_id, idem_principal,
             idem_session, idem_request_hash, created_at_ms, terminal_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        row.txn.to_string(),
        identity.object_id,
        identity.generation as i64,
        row.kind.as_str(),
        row.operation,
        row.tool_family,
        row.state.as_str(),
        row.intent_json,
        row.proof_json,
        row.parent.map(|p| p.to_string()),
        row.idem.map(|k| &k.id),
        row.idem.map(|k| &k.principal),
        row.idem.map(|k| &k.session),
        row.idem.map(|k| k.request_hash.to_string()),
        now,
        terminal_at,
    ])
    .map(|_| ())
}

/// Moves `txn` from `from` to `to` with its proof and reason; exactly one row
/// must change, so a transition never applies to a row in another state.
pub(crate) fn record_terminal(
    conn: &Connection,
    txn: TxnId,
    from: TxnStatus,
    to: TxnStatus,
    proof_json: Option<String>,
    reason: Option<&str>,
) -> rusqlite::Result<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE transactions SET state = ?2, proof_json = ?3, reason = ?4, terminal_at_ms = ?5
             WHERE id = ?1 AND state = ?6",
        )?
        .execute(params![
            txn.to_string(),
            to.as_str(),
            proof_json,
            reason,
            now_ms(),
            from.as_str()
        ])?;
    if changed == 1 {
        crate::preimage::release_if_proven(conn, txn, to)
    } else {
        Err(rusqlite::Error::QueryReturnedNoRows)
    }
}
