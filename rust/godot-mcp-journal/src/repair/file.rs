//! The repair of a `file` transaction: what each operation makes of the state found
//! on disk.

use crate::ids::{EffectKind, FileState, TxnStatus};
use crate::proof::{FileIntent, ProofBasis};

use super::request::RepairOperation;
use super::request::RepairRefusal;

pub(super) struct Plan {
    pub(super) to: TxnStatus,
    pub(super) basis: ProofBasis,
    /// Compensating a create: remove the file this transaction created.
    pub(super) unlink_target: bool,
    /// Compensating an overwrite or a delete: write the retained pre-image back.
    pub(super) restore: bool,
}

/// The transition `op` may journal given the re-derived `observed` state.
pub(super) fn plan(
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
