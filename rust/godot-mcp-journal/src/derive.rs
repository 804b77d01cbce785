//! Re-deriving a `file` intent's outcome from disk: the one judgement the live write
//! (on a failed effect), startup reconciliation and repair share.

use std::fs;
use std::path::{Path, PathBuf};

use crate::durable;
use crate::effect::{Deriver, FileIntent, FileProof, ProofBasis};
use crate::ids::TxnStatus;

/// The outcome re-derived for one `file` intent.
#[derive(Debug)]
pub(crate) struct FileDerived {
    pub status: TxnStatus,
    pub proof: Option<FileProof>,
    pub reason: Option<String>,
    /// A leftover temp file to remove before recording the outcome.
    pub remove_temp: Option<PathBuf>,
    /// The displaced file a Windows exchange cut short between its two steps
    /// left beside the temp (`godot_mcp_os::fs::exchange_backup`), to remove
    /// with it. Never present on Unix, whose exchange is one step.
    pub remove_displaced: Option<PathBuf>,
}

impl FileDerived {
    pub(crate) fn quarantined(reason: String) -> Self {
        Self {
            status: TxnStatus::Quarantined,
            proof: None,
            reason: Some(reason),
            remove_temp: None,
            remove_displaced: None,
        }
    }
}

/// Re-derives a `file` intent's outcome from disk (pure apart from reads), for a
/// composite too: `link` is the verdict on the linked
/// `process_launch` sub-proof (`Ok` when it shows a clean terminal state). A
/// composite commits only if both hold; with an unclean launch it can still be
/// proven compensated (the target is in its pre-state), never committed.
pub(crate) fn derive_file_linked(
    root: &Path,
    intent: &FileIntent,
    by: Deriver,
    link: Option<Result<(), String>>,
) -> FileDerived {
    let link_problem = match (intent.linked_launch, link) {
        (None, _) => None,
        (Some(_), Some(Ok(()))) => None,
        (Some(l), Some(Err(why))) => Some(format!("composite: linked process_launch {l} {why}")),
        (Some(l), None) => Some(format!(
            "composite: linked process_launch {l} was not re-validated"
        )),
    };
    let target = root.join(&intent.path);
    let observed = match durable::read_state(&target) {
        Ok(s) => s,
        Err(e) => {
            return FileDerived::quarantined(format!(
                "{}: cannot re-derive state: {e}",
                intent.path
            ));
        }
    };
    let temp = intent.temp.as_ref().map(|t| root.join(t));
    let temp_exists = match &temp {
        Some(t) => match fs::symlink_metadata(t) {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return FileDerived::quarantined(format!(
                    "{}: cannot inspect temp: {e}",
                    intent.path
                ));
            }
        },
        None => false,
    };
    let basis = if observed == intent.post {
        ProofBasis::PostState
    } else if observed == intent.pre {
        ProofBasis::PreState
    } else {
        return FileDerived::quarantined(format!(
            "{} is {observed}, neither its pre-state {} nor its post-state {}",
            intent.path, intent.pre, intent.post
        ));
    };
    if let Some(problem) = link_problem
        && basis == ProofBasis::PostState
    {
        return FileDerived::quarantined(format!(
            "{} is in its post-state, but {problem}",
            intent.path
        ));
    }
    // Once the target holds our bytes, a leftover at the temp path (or, on
    // Windows, the displaced path) is what the exchange displaced: ours to
    // remove only when it holds the pre-state (or our bytes). Anything else is
    // a file someone wrote between the re-check and the exchange, which a
    // crash left there: kept as evidence. (With the target in its pre-state
    // nothing was exchanged: the temp is our own, perhaps torn by the crash.)
    let displaced = temp
        .as_deref()
        .map(godot_mcp_os::fs::exchange_backup)
        .filter(|d| fs::symlink_metadata(d).is_ok());
    let exchanged = basis == ProofBasis::PostState;
    let leftovers = temp.iter().filter(|_| temp_exists).chain(displaced.iter());
    for leftover in leftovers.filter(|_| exchanged) {
        match durable::read_state(leftover) {
            Ok(held) if held == intent.pre || held == intent.post => {}
            Ok(held) => {
                return FileDerived::quarantined(format!(
                    "{} is {observed}, but {} holds {held}, neither its pre-state {} nor its \
                     post-state {}: a file someone wrote during the exchange, kept there as \
                     evidence",
                    intent.path,
                    leftover.strip_prefix(root).unwrap_or(leftover).display(),
                    intent.pre,
                    intent.post
                ));
            }
            Err(e) => {
                return FileDerived::quarantined(format!(
                    "{}: cannot re-derive the state of {}: {e}",
                    intent.path,
                    leftover.display()
                ));
            }
        }
    }
    FileDerived {
        status: match basis {
            ProofBasis::PostState => TxnStatus::Committed,
            _ => TxnStatus::Compensated,
        },
        proof: Some(FileProof {
            path: intent.path.clone(),
            observed,
            basis,
            temp_removed: temp_exists,
            derived_by: by,
        }),
        reason: None,
        remove_displaced: displaced,
        remove_temp: temp.filter(|_| temp_exists),
    }
}
