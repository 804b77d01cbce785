//! The repair of a change: every file of it proven, put back or acknowledged together.

use std::path::{Path, PathBuf};

use crate::change::{ChangeFile, ChangeIntent, ChangeProof};
use crate::durable;
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::Journal;
use crate::proof::{Deriver, FileProof, Proof, ProofBasis};

use super::common::{mismatch, record_repair, report};
use super::request::{RepairOperation, RepairProof, RepairRefusal, RepairReport, RepairRequest};

/// What a change's repair needs from the row beyond its intent.
pub(super) struct ChangeCtx<'a> {
    pub(super) req: &'a RepairRequest,
    pub(super) txn: TxnId,
    /// The row was recorded for another incarnation of the project.
    pub(super) foreign: bool,
    pub(super) recorded_for: &'a str,
    pub(super) reason: &'a str,
}

/// One file of a change, as its repair re-derived it.
pub(super) struct ChangeNow {
    pub(super) state: FileState,
    /// Its leftover temp and `.undo` files (the change's own) and what each holds.
    pub(super) temps: Vec<(PathBuf, FileState)>,
    /// What a compensation does to it.
    pub(super) step: Option<ChangeStep>,
}

pub(super) enum ChangeStep {
    /// A created file: removed.
    Unlink,
    /// An overwritten or deleted file: its pre-image written back.
    Restore(crate::change::PreImage),
}

/// A quarantined change: many files, one state (`crate::change`). Every file is
/// re-derived from disk and must be at its pre- or post-state, a leftover temp
/// beside a file at its post-state holding one of the two (else it is someone
/// else's, kept as evidence):
///
/// - `acknowledge-safe-state` records `committed` when EVERY file is at its
///   post-state (the change's leftover temps removed);
/// - `compensate` puts every file at its post-state back — a created file
///   removed, an overwritten or deleted one written back from the change's
///   pre-image (`change_preimages`) — and records `compensated` once every file
///   is proven at its pre-state;
/// - `reconcile` and `--dry-run` report that and record nothing; `terminate` is
///   refused.
///
/// Anything not provable for every file (a file in neither state, a pre-image
/// missing, someone's temp, a row of another incarnation that would need the
/// disk changed) is refused before anything is touched. An I/O error while
/// acting puts back what was done (each file to the bytes it held) and records
/// nothing. The proof file's `file` claim names one of the change's files as
/// the disk shows it.
pub(super) fn repair_change(
    journal: &mut Journal,
    ctx: &ChangeCtx<'_>,
    proof: &RepairProof,
    intent: &crate::change::ChangeIntent,
) -> Result<RepairReport, RepairRefusal> {
    let (req, txn) = (ctx.req, ctx.txn);
    if req.operation == RepairOperation::Terminate {
        return Err(RepairRefusal::NotApplicable {
            operation: req.operation,
            kind: EffectKind::File,
        });
    }
    let files = &intent.files;
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let claim = proof
        .file
        .as_ref()
        .ok_or_else(|| mismatch("file", "missing", format!("one of {}", paths.join(", "))))?;
    if !paths.contains(&claim.path.as_str()) {
        return Err(mismatch("file.path", &claim.path, paths.join(" | ")));
    }
    let root = journal.root.clone();

    // Every file re-derived, and every temp of the change.
    let (mut now, problems) = find_change(&root, files)?;
    if let Some(i) = paths.iter().position(|p| *p == claim.path)
        && now[i].state != claim.observed
    {
        return Err(mismatch("file.observed", claim.observed, now[i].state));
    }
    if !problems.is_empty() {
        return Err(RepairRefusal::Unproven(format!(
            "change of {} file(s) ({}): {}; nothing was done",
            files.len(),
            paths.join(", "),
            problems.join("; ")
        )));
    }
    let (to, basis) = target_state(req.operation, &now, files)?;
    if to == TxnStatus::Compensated {
        plan_put_back(journal, txn, files, &mut now)?;
    }
    let acts = now.iter().any(|n| n.step.is_some() || !n.temps.is_empty());
    if ctx.foreign && acts {
        return Err(RepairRefusal::Unproven(format!(
            "{} would change files of the change ({}), but it was recorded for another \
             incarnation of the project{}: nothing of it is applied to this one; bring every \
             file to the state you want yourself, then acknowledge-safe-state or compensate",
            req.operation,
            paths.join(", "),
            ctx.recorded_for
        )));
    }
    let actions = change_actions(&root, intent, &now);
    let proof_out = Proof::Change(change_proof(files, &now, to, basis));
    let record = !(req.dry_run || req.operation == RepairOperation::Reconcile);
    if record {
        act_and_verify(journal, &root, files, &now, to)?;
        let why = format!(
            "repaired by {}: every file of the change at its {} (was quarantined: {})",
            req.operation,
            if to == TxnStatus::Committed {
                "post-state"
            } else {
                "pre-state"
            },
            ctx.reason
        );
        record_repair(
            journal,
            txn,
            req.operation,
            to,
            &proof_out,
            proof_out.clone(),
            &why,
        )?;
    }
    Ok(report(req, to, record, proof_out, actions))
}

/// Every file of the change and its temps re-derived from disk, with the problems that
/// make the change unprovable (a file in neither state, someone else's temp).
fn find_change(
    root: &Path,
    files: &[ChangeFile],
) -> Result<(Vec<ChangeNow>, Vec<String>), RepairRefusal> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RepairRefusal::Io { path, source }
    };
    let mut now = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for f in files {
        crate::durable::validate_relative(Path::new(&f.path))
            .map_err(|e| RepairRefusal::Unproven(format!("recorded path refused: {e}")))?;
        // A temp is the change's own only beside its file, named as the journal names it.
        let (temp_rel, path_rel) = (Path::new(&f.temp), Path::new(&f.path));
        if temp_rel.parent() != path_rel.parent()
            || !temp_rel
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".gmcp-"))
        {
            return Err(RepairRefusal::Unproven(format!(
                "recorded temp path {} is not a journal temp beside {}",
                f.temp, f.path
            )));
        }
        let target = root.join(&f.path);
        let state = durable::read_state(&target).map_err(io_err(&target))?;
        if state != f.post && state != f.pre {
            problems.push(format!(
                "{} is {state}, neither its pre-state {} nor its post-state {}",
                f.path, f.pre, f.post
            ));
        }
        let temp = root.join(&f.temp);
        let mut temps = Vec::new();
        for (t, undo) in [(crate::change::undo_temp(&temp), true), (temp, false)] {
            let held = durable::read_state(&t).map_err(io_err(&t))?;
            if held == FileState::Absent {
                continue;
            }
            // Beside a file at its post-state a temp is what the exchange
            // displaced; beside one at its pre-state nothing was exchanged.
            // An `.undo` holds a compensation's bytes, cut short.
            if state == f.post && held != f.pre && held != f.post && !undo {
                problems.push(format!(
                    "{} holds {held}, neither the pre-state nor the post-state of {}: a file \
                     someone wrote during the exchange, kept there as evidence; move it aside \
                     once you have looked at it",
                    f.temp, f.path
                ));
            }
            temps.push((t, held));
        }
        now.push(ChangeNow {
            state,
            temps,
            step: None,
        });
    }
    Ok((now, problems))
}

/// The state `op` records: `committed` when every file is at its post-state and the
/// operation may acknowledge it, else `compensated` (refused for acknowledge-safe-state).
fn target_state(
    op: RepairOperation,
    now: &[ChangeNow],
    files: &[ChangeFile],
) -> Result<(TxnStatus, ProofBasis), RepairRefusal> {
    let all_post = now.iter().zip(files).all(|(n, f)| n.state == f.post);
    Ok(match op {
        RepairOperation::AcknowledgeSafeState | RepairOperation::Reconcile if all_post => {
            (TxnStatus::Committed, ProofBasis::PostState)
        }
        RepairOperation::AcknowledgeSafeState => {
            let behind: Vec<String> = now
                .iter()
                .zip(files)
                .filter(|(n, f)| n.state != f.post)
                .map(|(n, f)| format!("{} is {} (post-state {})", f.path, n.state, f.post))
                .collect();
            return Err(RepairRefusal::Unproven(format!(
                "acknowledge-safe-state needs every file of the change at its post-state: {}; \
                 compensate puts every file back instead",
                behind.join(", ")
            )));
        }
        _ => (TxnStatus::Compensated, ProofBasis::PreState),
    })
}

/// Each file a compensation changes gets its step: a created file removed, an
/// overwritten or deleted one written back from its retained pre-image (refused when
/// one is missing).
fn plan_put_back(
    journal: &Journal,
    txn: TxnId,
    files: &[ChangeFile],
    now: &mut [ChangeNow],
) -> Result<(), RepairRefusal> {
    let preimages = crate::change::load_preimages(journal.conn(), txn, files)?;
    let mut missing = Vec::new();
    for ((n, f), image) in now.iter_mut().zip(files).zip(preimages) {
        if n.state != f.post || f.pre == f.post {
            continue;
        }
        n.step = match (f.pre, image) {
            (FileState::Absent, _) => Some(ChangeStep::Unlink),
            (_, Some(image)) => Some(ChangeStep::Restore(image)),
            (_, None) => {
                missing.push(f.path.as_str());
                None
            }
        };
    }
    if !missing.is_empty() {
        return Err(RepairRefusal::Unproven(format!(
            "{} at its post-state and no pre-image of it was retained, so the change \
             cannot be put back by proof: restore the pre-state yourself (e.g. from version \
             control) and retry; nothing was done",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// The steps acting will take, for the report.
fn change_actions(root: &Path, intent: &ChangeIntent, now: &[ChangeNow]) -> Vec<String> {
    let files = &intent.files;
    let mut actions = Vec::new();
    for (n, f) in now.iter().zip(files) {
        for (t, _) in &n.temps {
            let rel = t.strip_prefix(root).unwrap_or(t);
            actions.push(format!("remove leftover temp {}", rel.display()));
        }
        match &n.step {
            Some(ChangeStep::Unlink) => {
                actions.push(format!("remove {} (created by this change)", f.path));
            }
            Some(ChangeStep::Restore(image)) => actions.push(format!(
                "restore {} to its pre-state {} from the change's pre-image ({} bytes)",
                f.path,
                f.pre,
                image.bytes.len()
            )),
            None => {}
        }
    }
    // An editor part lives in the editor's undo history, not on disk: repair proves the
    // files only, records no outcome for it, and says so.
    if let Some(part) = &intent.editor {
        actions.push(format!(
            "leave the editor part ({} on {}) as the editor holds it: repair proves files \
             only; undo that action in the editor if it is still applied",
            part.action, part.scene
        ));
    }
    actions
}

/// The proof a change's repair records: every file at the state `to` proves.
fn change_proof(
    files: &[ChangeFile],
    now: &[ChangeNow],
    to: TxnStatus,
    basis: ProofBasis,
) -> ChangeProof {
    ChangeProof {
        editor: None,
        files: files
            .iter()
            .zip(now)
            .map(|(f, n)| FileProof {
                path: f.path.clone(),
                observed: if to == TxnStatus::Committed {
                    f.post
                } else {
                    f.pre
                },
                basis,
                temp_removed: !n.temps.is_empty(),
                derived_by: Deriver::Repair,
            })
            .collect(),
    }
}

/// Acts (see `act_on_change`), then re-derives every file once more: the recorded
/// proof is what is on disk now.
fn act_and_verify(
    journal: &Journal,
    root: &Path,
    files: &[ChangeFile],
    now: &[ChangeNow],
    to: TxnStatus,
) -> Result<(), RepairRefusal> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RepairRefusal::Io { path, source }
    };
    act_on_change(journal, files, now)?;
    for f in files {
        let target = root.join(&f.path);
        let after = durable::read_state(&target).map_err(io_err(&target))?;
        let want = if to == TxnStatus::Committed {
            f.post
        } else {
            f.pre
        };
        if after != want {
            return Err(RepairRefusal::Unproven(format!(
                "{} changed while repairing: now {after}",
                f.path
            )));
        }
    }
    Ok(())
}

/// Carries out a change's repair: the last check (every file and temp still as
/// re-derived), then each file put back, last first, then the leftover temps
/// removed. An I/O error returns every file already put back to the bytes it
/// held (captured by the last check) and refuses.
pub(super) fn act_on_change(
    journal: &Journal,
    files: &[crate::change::ChangeFile],
    now: &[ChangeNow],
) -> Result<(), RepairRefusal> {
    use crate::change::{PreImage, PutBack, displaced_reason, put_back, remove_durably};
    let root = &journal.root;
    let storage = journal.storage.clone();
    let mut held: Vec<Option<PreImage>> = Vec::with_capacity(files.len());
    for (f, n) in files.iter().zip(now) {
        let target = root.join(&f.path);
        let (seen, bytes) =
            durable::observe_bytes(&target).map_err(|source| RepairRefusal::Io {
                path: target.clone(),
                source,
            })?;
        let temps_moved = n
            .temps
            .iter()
            .any(|(t, h)| durable::read_state(t).map_or(true, |s| s != *h));
        if seen.state != n.state || temps_moved {
            return Err(RepairRefusal::Unproven(format!(
                "{} changed while repairing, nothing was done",
                f.path
            )));
        }
        held.push(bytes.map(|bytes| PreImage {
            bytes,
            mode: seen.mode.unwrap_or(0o644),
        }));
    }
    let mut done: Vec<usize> = Vec::new();
    let mut failure = None;
    for (i, (f, n)) in files.iter().zip(now).enumerate().rev() {
        let target = root.join(&f.path);
        let temp = root.join(&f.temp);
        let result = match &n.step {
            Some(ChangeStep::Unlink) => put_back(&*storage, &target, &temp, None, n.state),
            Some(ChangeStep::Restore(image)) => {
                put_back(&*storage, &target, &temp, Some(image), n.state)
            }
            None => continue,
        };
        match result {
            Ok(PutBack::Done) => done.push(i),
            // Someone wrote the file after the last check: theirs is left in place
            // (and whatever is kept at `.undo` stays).
            Ok(PutBack::Displaced { found, kept }) => {
                failure = Some(displaced_reason(&f.path, found, kept.as_deref()));
                break;
            }
            Err(e) => {
                failure = Some(format!("putting {} back failed ({e})", f.path));
                // A restore cut short may leave its `.undo`; one the change left stays.
                let undo = crate::change::undo_temp(&temp);
                if !n.temps.iter().any(|(t, _)| *t == undo) {
                    let _ = remove_durably(&*storage, &undo);
                }
                break;
            }
        }
    }
    if failure.is_none() {
        'temps: for n in now {
            for (t, _) in &n.temps {
                if let Err(e) = remove_durably(&*storage, t) {
                    failure = Some(format!("removing {} failed ({e})", t.display()));
                    break 'temps;
                }
            }
        }
    }
    let Some(failure) = failure else {
        return Ok(());
    };
    // Every file already put back returns to the bytes it held.
    let mut undone = Vec::new();
    for i in done {
        let f = &files[i];
        let target = root.join(&f.path);
        match put_back(
            &*storage,
            &target,
            &root.join(&f.temp),
            held[i].as_ref(),
            f.pre,
        ) {
            Ok(PutBack::Done) => {}
            Ok(PutBack::Displaced { found, kept }) => {
                undone.push(displaced_reason(&f.path, found, kept.as_deref()));
            }
            Err(e) => undone.push(format!("returning {} failed ({e})", f.path)),
        }
    }
    Err(RepairRefusal::Unproven(if undone.is_empty() {
        format!("{failure}; every file was returned to what it held, nothing was recorded")
    } else {
        format!(
            "{failure}; {}: each file is at its pre- or post-state, nothing was recorded; \
             run the repair again",
            undone.join(", ")
        )
    }))
}
