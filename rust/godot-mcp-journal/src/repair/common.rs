//! What every kind's repair shares: reading the proof file, checking a claim against
//! disk, restoring bytes, recording the transition with its `repairs` log row.

use std::fs;
use std::io;
use std::path::Path;

use rusqlite::params;

use crate::durable;
use crate::ids::{FileState, TxnId, TxnStatus};
use crate::journal::{Journal, now_ms, record_terminal};
use crate::proof::Proof;

use super::request::{
    FileClaim, PROOF_SCHEMA, RepairOperation, RepairProof, RepairRefusal, RepairReport,
    RepairRequest,
};

pub(super) struct Row {
    pub(super) object_id: String,
    pub(super) generation: i64,
    pub(super) kind: String,
    pub(super) state: String,
    pub(super) intent_json: String,
    pub(super) reason: Option<String>,
}

pub(super) fn read_proof(path: &Path) -> Result<RepairProof, RepairRefusal> {
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

pub(super) fn mismatch(
    field: &'static str,
    claimed: impl ToString,
    derived: impl ToString,
) -> RepairRefusal {
    RepairRefusal::ProofMismatch {
        field,
        claimed: claimed.to_string(),
        derived: derived.to_string(),
    }
}

/// The state of `target` now, which must be the state the proof claims.
pub(super) fn observe_claimed(
    target: &Path,
    claim: &FileClaim,
) -> Result<FileState, RepairRefusal> {
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
pub(super) fn report(
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

/// Writes `bytes` back over `target` the durable way (temp file in the same
/// directory, fsync, rename); the caller fsyncs the directory.
pub(super) fn restore_bytes(target: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let temp = durable::temp_path_for(target, TxnId::random()?);
    crate::storage::stage_and_rename(&crate::storage::RealStorage, &temp, target, bytes, mode)
}

/// The `repairs` log row of a recorded repair (same SQLite transaction as the transition).
/// Records a repair in one transaction: the quarantined row's move to `to` with
/// `row_proof` and `why`, and the `repairs` log entry carrying `logged`.
pub(super) fn record_repair(
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
