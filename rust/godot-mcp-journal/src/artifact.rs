//! Export artifacts written outside the project. An artifact that lands inside the
//! project is an ordinary composite `file` transaction ([`Journal::write_file_linked`]);
//! one outside it is not under the project's write seam (the server writes it
//! atomically and durably itself), but it is still recorded: a terminal `file` row,
//! linked to the launch that produced it, carrying the absolute path and the
//! post-state hash re-read from disk after the write. Like a composite canonical
//! write, the link is the intent's `linked_launch`.

use std::path::Path;

use crate::effect::{Deriver, FileIntent, FileProof, ProofBasis, intent_json, proof_json};
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::{Journal, NewTxn, insert_txn};
use crate::launch::LaunchError;

impl Journal {
    /// Records an artifact written outside the project by the launch `link`
    /// (committed: `observed` was re-read from disk after the write). Refused unless
    /// the launch's own proof is clean, as for a composite write.
    pub fn record_external_artifact(
        &mut self,
        link: TxnId,
        path: &Path,
        pre: FileState,
        observed: FileState,
        tool_family: &str,
        operation: &str,
    ) -> Result<TxnId, LaunchError> {
        if let Err(why) = self.linked_launch_verdict(link) {
            return Err(LaunchError::Io(std::io::Error::other(format!(
                "linked process_launch {link} {why}; the artifact is not recorded"
            ))));
        }
        let txn = TxnId::random()?;
        let shown = path.display().to_string();
        let intent = FileIntent {
            path: shown.clone(),
            pre,
            post: observed,
            temp: None,
            linked_launch: Some(link),
        };
        let proof = FileProof {
            path: shown,
            observed,
            basis: ProofBasis::PostState,
            temp_removed: false,
            derived_by: Deriver::Live,
        };
        insert_txn(
            self.conn(),
            &self.identity,
            &NewTxn {
                txn,
                kind: EffectKind::File,
                operation,
                tool_family,
                state: TxnStatus::Committed,
                intent_json: &intent_json(&intent)?,
                proof_json: Some(&proof_json::<FileIntent>(&proof)?),
                parent: None,
                idem: None,
            },
        )?;
        Ok(txn)
    }
}
