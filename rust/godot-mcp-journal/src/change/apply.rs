//! Applying a change: read and check every file, record the intent with the
//! pre-images, apply each effect, derive the outcome (see [`super`]).

use std::io;
use std::path::{Path, PathBuf};

use rusqlite::params;

use crate::durable;
use crate::durable::PathError;
use crate::effect::{Deriver, intent_json};
use crate::failpoints::{self as fp, cross};
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::{
    FileEffect, Journal, NewTxn, WriteGate, apply_effect, ensure_parent, in_txn, insert_txn,
};
use crate::storage::Storage;

use super::settle::{Settled, record_change_terminal, same_file, settle, undo_editor_part};
use super::types::{
    Applied, ChangeEditorPart, ChangeError, ChangeFile, ChangeIntent, ChangeOp, ChangeOutcome,
    EditorHook, EditorPartOutcome, EditorSent, FileChange, HeldChange, HeldEnd, PreImage,
};

/// A file of a change, read and checked before the intent.
struct Planned<'a> {
    target: PathBuf,
    rel: String,
    effect: FileEffect<'a>,
    seen: durable::Observed,
    pre_bytes: Option<Vec<u8>>,
    post: FileState,
    temp: PathBuf,
}

impl Journal {
    /// Applies `req` as one change: every file at its post-state (committed),
    /// or, when anything fails after the intent, every file put back before
    /// this returns (see the module docs).
    pub fn apply_change(&mut self, req: FileChange) -> Result<ChangeOutcome, ChangeError> {
        self.apply_change_as(req, None)
    }

    /// [`Journal::apply_change`] recorded under `id` when given (an agent's change
    /// draws its id when it begins, so every answer inside it names the transaction
    /// its commit will be); a fresh id otherwise. The server draws `id` at random
    /// and uses it for one commit only.
    pub fn apply_change_as(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
    ) -> Result<ChangeOutcome, ChangeError> {
        self.apply_change_with(req, id, None)
    }

    /// [`Journal::apply_change_as`] with an editor part: recorded in the intent,
    /// sent through `hook` after the intent is durable and before any file, and
    /// taken back through `hook` when the files fail and are put back.
    pub fn apply_change_with(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
        editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>,
    ) -> Result<ChangeOutcome, ChangeError> {
        match self.apply_change_inner(req, id, editor, None)? {
            Applied::Done(outcome) => Ok(outcome),
            Applied::Held(_) => unreachable!("a change without a check is never held"),
        }
    }

    /// [`Journal::apply_change_with`] that, when every file is proven at its
    /// post-state, leaves the change `open` (its intent naming `check`) instead of
    /// recording it: the caller runs its check on the files in place (the journal's
    /// lock released: a check may itself be journaled, a launch) and then settles it
    /// with [`Journal::finish_held`], which derives the outcome from disk. A failure
    /// before the check settles as [`Journal::apply_change_with`] does. Should the
    /// process end while the change is held, reconciliation puts every file back.
    pub fn apply_change_held(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
        editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>,
        check: &str,
    ) -> Result<Applied, ChangeError> {
        self.apply_change_inner(req, id, editor, Some(check))
    }

    /// Settles a held change from disk: `keep`, every file re-derived at its
    /// post-state: `committed`; not `keep` (its check failed, `why`): every file put
    /// back from its pre-image and proven at its pre-state, `compensated`, the
    /// editor part undone through `editor` when it was applied. Anything else (a
    /// file someone changed during the check) is `quarantined`, as any change.
    pub fn finish_held(
        &mut self,
        held: HeldChange,
        keep: bool,
        why: &str,
        editor: Option<&mut dyn EditorHook>,
    ) -> HeldEnd {
        let HeldChange {
            transaction_id: txn,
            intent,
            preimages,
            editor_outcome,
        } = held;
        let mut settled = settle(
            &self.root,
            &*self.storage,
            &intent.files,
            &preimages,
            Deriver::Live,
            !keep,
        );
        if settled.status == TxnStatus::Compensated {
            settled.reason = Some(format!("{why}; every file was put back"));
        }
        if let (Some(part), Some(applied)) = (&intent.editor, editor_outcome) {
            match (settled.status, editor) {
                (TxnStatus::Committed, _) => {
                    if let Some(p) = settled.proof.as_mut() {
                        p.editor = Some(applied);
                    }
                }
                (TxnStatus::Compensated, Some(hook)) => undo_editor_part(&mut settled, part, hook),
                _ => {
                    let r = settled.reason.get_or_insert_with(String::new);
                    r.push_str(&format!(
                        "; the editor part ({} on {}) is left applied",
                        part.action, part.scene
                    ));
                    if settled.status == TxnStatus::Compensated {
                        settled.status = TxnStatus::Quarantined;
                        settled.proof = None;
                    }
                }
            }
        }
        let recorded = self.record_change(txn, &settled);
        cross(fp::CHANGE_AFTER_TERMINAL);
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, settled.reason.clone().unwrap_or_default());
        }
        HeldEnd {
            transaction_id: txn,
            status: if recorded.is_ok() {
                settled.status
            } else {
                TxnStatus::Open
            },
            proof: settled.proof,
            reason: settled.reason,
        }
    }

    fn apply_change_inner(
        &mut self,
        req: FileChange,
        id: Option<TxnId>,
        mut editor: Option<(ChangeEditorPart, &mut dyn EditorHook)>,
        check: Option<&str>,
    ) -> Result<Applied, ChangeError> {
        let rels = names(&req, editor.is_some())?;
        self.check_gate()?;
        if let Some(key) = &req.idempotency
            && let Some(replay) = self.replay_lookup(key, &req.tool_family, &req.operation)?
        {
            return Ok(Applied::Done(ChangeOutcome::Replayed(replay)));
        }
        let txn = match id {
            Some(id) => id,
            None => TxnId::random().map_err(|source| ChangeError::Io {
                path: PathBuf::new(),
                source,
            })?,
        };

        let mut planned = self.plan_files(&req, rels)?;
        let (files, preimages) = files_and_preimages(&self.root, &mut planned);
        // 2. The intent and the pre-images, durable before any effect.
        let intent = ChangeIntent {
            files,
            editor: editor.as_ref().map(|(part, _)| part.clone()),
            check: check.map(str::to_owned),
        };
        self.insert_change(txn, &intent, &preimages, &req)?;
        cross(fp::CHANGE_AFTER_INTENT);

        // 2b. The editor part, before any file: one request, one undo action.
        let storage = self.storage.clone();
        // Every file re-derived from disk; `put_back`: compensating what is not at its
        // pre-state.
        let settle_live = |put_back: bool| {
            settle(
                &self.root,
                &*storage,
                &intent.files,
                &preimages,
                Deriver::Live,
                put_back,
            )
        };
        let mut editor_outcome = None;
        if let Some((part, hook)) = editor.as_mut() {
            let refused = match hook.apply() {
                EditorSent::Applied => {
                    cross(fp::CHANGE_AFTER_EDITOR);
                    editor_outcome = Some(EditorPartOutcome::Applied);
                    None
                }
                EditorSent::NotApplied(why) => Some((Ok(EditorPartOutcome::NotApplied), why)),
                EditorSent::Unknown(why) => Some((hook.undo(), why)),
            };
            if let Some((taken_back, why)) = refused {
                // No file was written: every one is proven at its pre-state.
                let settled = settle_live(true);
                return Err(self.editor_refused(txn, part, taken_back, why, settled));
            }
        }

        // 3. Temps written and fsynced, then each effect in order.
        let failed = apply_files(&*storage, &planned);

        // 4. Every file re-derived from disk.
        let settled = match &failed {
            None => {
                let s = settle_live(false);
                cross(fp::CHANGE_AFTER_POST_HASH);
                s
            }
            // 5. A failure puts every file back.
            Some(_) => settle_live(true),
        };
        if check.is_some() && failed.is_none() && settled.status == TxnStatus::Committed {
            // Every file proven in place: held open for the check.
            return Ok(Applied::Held(HeldChange {
                transaction_id: txn,
                intent,
                preimages,
                editor_outcome,
            }));
        }
        self.finish(
            txn,
            &intent,
            settled,
            failed,
            editor.as_mut(),
            editor_outcome,
        )
    }

    /// Step 2b refused: the editor did not apply the change's edits (or may have and
    /// could not be taken back); `settled` proves no file was written. Recorded.
    fn editor_refused(
        &mut self,
        txn: TxnId,
        part: &ChangeEditorPart,
        taken_back: Result<EditorPartOutcome, String>,
        why: String,
        mut settled: Settled,
    ) -> ChangeError {
        let reason = match taken_back {
            Ok(outcome) if settled.status == TxnStatus::Compensated => {
                if let Some(p) = settled.proof.as_mut() {
                    p.editor = Some(outcome);
                }
                format!(
                    "the editor did not apply the change's edits ({why}); no file was \
                     written"
                )
            }
            Ok(_) => settled.reason.clone().unwrap_or_default(),
            Err(e) => {
                settled.status = TxnStatus::Quarantined;
                settled.proof = None;
                format!(
                    "the editor part ({} on {}) may be applied and could not be undone \
                     ({why}; {e}); no file was written",
                    part.action, part.scene
                )
            }
        };
        settled.reason = Some(reason.clone());
        let recorded = self.record_change(txn, &settled);
        cross(fp::CHANGE_AFTER_TERMINAL);
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, reason.clone());
        }
        ChangeError::Editor {
            transaction_id: txn,
            status: if recorded.is_ok() {
                settled.status
            } else {
                TxnStatus::Open
            },
            reason,
        }
    }

    /// Step 1: every file read once (pre-state, compare-and-swap, pre-image), one file
    /// named twice refused, the pre-images' bound checked, the parents of writes made.
    fn plan_files<'r>(
        &self,
        req: &'r FileChange,
        rels: Vec<String>,
    ) -> Result<Vec<Planned<'r>>, ChangeError> {
        let mut planned = Vec::with_capacity(req.effects.len());
        for (e, rel) in req.effects.iter().zip(rels) {
            let target = self.root.join(&e.rel_path);
            let io = |source| ChangeError::Io {
                path: e.rel_path.clone(),
                source,
            };
            let (seen, pre_bytes) = durable::observe_bytes(&target).map_err(io)?;
            if let Some(expected) = e.expected
                && expected != seen.state
            {
                return Err(ChangeError::Stale {
                    path: e.rel_path.clone(),
                    expected,
                    current: seen.state,
                });
            }
            let (effect, post) = match &e.op {
                ChangeOp::Write(bytes) => (FileEffect::Write { bytes }, FileState::of(bytes)),
                ChangeOp::Delete if seen.state == FileState::Absent => {
                    return Err(ChangeError::Absent {
                        path: e.rel_path.clone(),
                    });
                }
                ChangeOp::Delete => (FileEffect::Delete, FileState::Absent),
            };
            let temp = durable::temp_path_for(&target, TxnId::random().map_err(io)?);
            planned.push(Planned {
                target,
                rel,
                effect,
                seen,
                pre_bytes,
                post,
                temp,
            });
        }
        // One file named twice by two paths (a case variant on a case-insensitive
        // file system, a hard link) would be applied twice and then found at neither
        // state: refused before anything is recorded.
        let ids: Vec<_> = planned.iter().map(|p| p.seen.id).collect();
        if let Some((a, b)) = same_file(&ids) {
            return Err(ChangeError::Invalid(format!(
                "{} and {} are one file (the same device and inode: two spellings of one \
                 path on a case-insensitive file system, or hard links); name it once",
                planned[a].rel, planned[b].rel
            )));
        }
        let total: u64 = planned
            .iter()
            .map(|p| p.pre_bytes.as_ref().map_or(0, |b| b.len() as u64))
            .sum();
        if total > self.change_preimage_limit {
            return Err(ChangeError::TooLarge {
                total,
                limit: self.change_preimage_limit,
            });
        }
        for (p, e) in planned.iter().zip(&req.effects) {
            if let FileEffect::Write { .. } = p.effect {
                ensure_parent(&*self.storage, &self.root, &e.rel_path).map_err(|source| {
                    ChangeError::Io {
                        path: e.rel_path.clone(),
                        source,
                    }
                })?;
            }
        }
        Ok(planned)
    }

    /// Steps 4 and 5 settled: the reason of a put-back, the editor part taken back with
    /// the files (or left applied, said so), the terminal row recorded, the answer.
    fn finish(
        &mut self,
        txn: TxnId,
        intent: &ChangeIntent,
        mut settled: Settled,
        failed: Option<Failed>,
        editor: Option<&mut (ChangeEditorPart, &mut dyn EditorHook)>,
        editor_outcome: Option<EditorPartOutcome>,
    ) -> Result<Applied, ChangeError> {
        if let (Some((i, _, cause)), TxnStatus::Compensated) = (&failed, settled.status) {
            settled.reason = Some(format!(
                "{} failed ({cause}); every file was put back",
                intent.files[*i].path
            ));
        }
        // The files did not all land: the editor part is taken back too.
        if let (Some((part, hook)), Some(_)) = (editor, editor_outcome) {
            if settled.status == TxnStatus::Committed {
                if let Some(p) = settled.proof.as_mut() {
                    p.editor = editor_outcome;
                }
            } else if settled.status == TxnStatus::Compensated {
                undo_editor_part(&mut settled, part, *hook);
            } else {
                let r = settled.reason.get_or_insert_with(String::new);
                r.push_str(&format!(
                    "; the editor part ({} on {}) is left applied",
                    part.action, part.scene
                ));
            }
        }
        let recorded = self.record_change(txn, &settled);
        cross(fp::CHANGE_AFTER_TERMINAL);
        if settled.status == TxnStatus::Quarantined {
            self.close_gate(txn, settled.reason.clone().unwrap_or_default());
        }
        match (failed, settled.status) {
            (None, TxnStatus::Committed) => {
                recorded?;
                Ok(Applied::Done(ChangeOutcome::Committed {
                    transaction_id: txn,
                    proof: settled.proof.expect("a committed settle has its proof"),
                }))
            }
            (failed, status) => {
                let (i, changed_to, source) = failed.unwrap_or_else(|| {
                    (
                        0,
                        None,
                        io::Error::other(
                            settled
                                .reason
                                .clone()
                                .unwrap_or_else(|| "not every file reached its post-state".into()),
                        ),
                    )
                });
                Err(ChangeError::Failed {
                    transaction_id: txn,
                    status: if recorded.is_ok() {
                        status
                    } else {
                        TxnStatus::Open
                    },
                    path: intent.files[i].path.clone(),
                    changed_to,
                    source,
                    reason: settled.reason,
                })
            }
        }
    }

    /// Records the change's intent row and its pre-images in one SQLite
    /// transaction at `synchronous=FULL` (after any pending terminal row).
    fn insert_change(
        &mut self,
        txn: TxnId,
        intent: &ChangeIntent,
        preimages: &[Option<PreImage>],
        req: &FileChange,
    ) -> Result<(), ChangeError> {
        let intent_json = intent_json(intent)?;
        let identity = self.identity.clone();
        // Any pending terminal row is written first; when that fails (a failed WAL
        // sync, a fold) the gate is closed and nothing of this change is recorded
        // or touched.
        self.conn_mut();
        self.check_gate()?;
        let conn = self.conn_mut();
        let result = in_txn(conn, |conn| {
            insert_txn(
                conn,
                &identity,
                &NewTxn {
                    txn,
                    kind: EffectKind::File,
                    operation: &req.operation,
                    tool_family: &req.tool_family,
                    state: TxnStatus::Open,
                    intent_json: &intent_json,
                    proof_json: None,
                    parent: None,
                    idem: req.idempotency.as_ref(),
                },
            )?;
            let mut st = conn.prepare_cached(
                "INSERT INTO change_preimages (txn_id, idx, mode, sha256, bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (i, (image, file)) in preimages.iter().zip(&intent.files).enumerate() {
                if let (Some(image), FileState::Present { sha256 }) = (image, file.pre) {
                    st.execute(params![
                        txn.to_string(),
                        i as i64,
                        i64::from(image.mode),
                        sha256.to_string(),
                        image.bytes,
                    ])?;
                }
            }
            Ok(())
        });
        result.map_err(|e| {
            self.gate = WriteGate::Unreconciled;
            ChangeError::Journal(e)
        })
    }

    /// Records a settled change terminal (its pre-images released when proven);
    /// on failure the gate falls back to `Unreconciled`.
    fn record_change(&mut self, txn: TxnId, settled: &Settled) -> rusqlite::Result<()> {
        let result = in_txn(self.conn(), |conn| {
            record_change_terminal(conn, txn, settled)
        });
        if result.is_err() {
            self.gate = WriteGate::Unreconciled;
        }
        result
    }
}

/// The change's paths, each valid, named once, and none the folder of another.
fn names(req: &FileChange, has_editor: bool) -> Result<Vec<String>, ChangeError> {
    if req.effects.is_empty() && !has_editor {
        return Err(ChangeError::Invalid(
            "a change names at least one file".into(),
        ));
    }
    let mut rels = Vec::with_capacity(req.effects.len());
    for e in &req.effects {
        durable::validate_relative(&e.rel_path)?;
        let rel = e
            .rel_path
            .to_str()
            .ok_or_else(|| PathError::NotRelative {
                path: e.rel_path.clone(),
            })?
            .to_owned();
        if rels.contains(&rel) {
            return Err(ChangeError::Invalid(format!("{rel} is named twice")));
        }
        rels.push(rel);
    }
    for a in &rels {
        if let Some(b) = rels.iter().find(|b| b.starts_with(&format!("{a}/"))) {
            return Err(ChangeError::Invalid(format!(
                "{a} is a file of the change and the folder of {b}"
            )));
        }
    }
    Ok(rels)
}

/// The stored form of the planned files, and their pre-images (taken out of the plan).
fn files_and_preimages(
    root: &Path,
    planned: &mut [Planned<'_>],
) -> (Vec<ChangeFile>, Vec<Option<PreImage>>) {
    let files: Vec<ChangeFile> = planned
        .iter()
        .map(|p| ChangeFile {
            path: p.rel.clone(),
            pre: p.seen.state,
            post: p.post,
            temp: p
                .temp
                .strip_prefix(root)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or_default()
                .to_owned(),
        })
        .collect();
    let preimages: Vec<Option<PreImage>> = planned
        .iter_mut()
        .map(|p| {
            p.pre_bytes.take().map(|bytes| PreImage {
                bytes,
                mode: p.seen.mode.unwrap_or(0o644),
            })
        })
        .collect();
    (files, preimages)
}

/// The file that failed, what it was found changed to (if it was), and why.
type Failed = (usize, Option<FileState>, io::Error);

/// Step 3: every write's temp written and fsynced, then each effect in order; the
/// first failure stops it.
fn apply_files(storage: &dyn Storage, planned: &[Planned<'_>]) -> Option<Failed> {
    let mut failed: Option<Failed> = None;
    for (i, p) in planned.iter().enumerate() {
        if let FileEffect::Write { bytes } = p.effect {
            let mode = p.seen.mode.unwrap_or(0o644);
            let made = storage.create_temp(&p.temp, bytes, mode).and_then(|f| {
                cross(fp::AFTER_TEMP_WRITE);
                storage.sync_file(&p.temp, &f)
            });
            if let Err(e) = made {
                failed = Some((i, None, e));
                break;
            }
            cross(fp::AFTER_TEMP_FSYNC);
        }
    }
    if failed.is_none() {
        for (i, p) in planned.iter().enumerate() {
            let temp = matches!(p.effect, FileEffect::Write { .. }).then_some(p.temp.as_path());
            match apply_effect(storage, &p.target, temp, p.effect, &p.seen) {
                Ok(None) => cross(fp::CHANGE_AFTER_EFFECT),
                Ok(Some(now)) => {
                    failed = Some((
                        i,
                        Some(now),
                        io::Error::other(format!("{} changed under the change (now {now})", p.rel)),
                    ));
                    break;
                }
                Err(e) => {
                    failed = Some((i, None, e));
                    break;
                }
            }
        }
    }
    failed
}
