//! `file` transactions: intent (with pre-state) durable before the effect, an atomic
//! durable effect, a terminal row carrying a proof re-derived from disk.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::derive::derive_file_linked;
use crate::durable::{self, PathError, apply_effect, ensure_parent};
use crate::effect::{Deriver, FileIntent, FileProof, ProofBasis, intent_json, proof_json};
use crate::failpoints::{self as fp, cross};
use crate::ids::IdempotencyKey;
use crate::ids::{FileState, TxnId, TxnStatus};
use crate::storage::BackgroundSync;

use super::handle::PendingTerminal;
use super::handle::{Journal, log_error};
use super::rows::record_terminal;
use super::types::{DeleteError, WriteError};
use super::types::{
    FileDelete, FileEffect, FileWrite, QuarantinedTxn, TxnFailure, TxnOutcome, WriteGate,
};

macro_rules! map_failure {
    ($err:ident, $f:expr, $absent:expr) => {
        match $f {
            TxnFailure::Path(e) => $err::Path(e),
            TxnFailure::NotReconciled => $err::NotReconciled,
            TxnFailure::GateClosed(quarantined) => $err::GateClosed { quarantined },
            TxnFailure::Stale {
                path,
                expected,
                current,
                transaction_id,
            } => $err::Stale {
                path,
                expected,
                current,
                transaction_id,
            },
            TxnFailure::Conflict(id) => $err::Conflict { id },
            TxnFailure::Absent(path) => $absent(path),
            TxnFailure::Io(path, source) => $err::Io { path, source },
            TxnFailure::EffectFailed(transaction_id, status, source) => $err::EffectFailed {
                transaction_id,
                status,
                source,
            },
            TxnFailure::Journal(e) => $err::Journal(e),
        }
    };
}

impl Journal {
    /// Writes `req.bytes` to `req.rel_path` as one journaled transaction.
    pub fn write_file(&mut self, req: FileWrite) -> Result<TxnOutcome, WriteError> {
        self.write_file_with_link(req, None)
    }

    /// [`Journal::write_file`] for a composite: `link` is the linked `process_launch`
    /// and the verdict on its proof, which a failed effect's settling re-reads (the
    /// launch kind owns it, so this module does not know launches).
    pub(crate) fn write_file_with_link(
        &mut self,
        req: FileWrite,
        link: Option<(TxnId, LinkVerdict)>,
    ) -> Result<TxnOutcome, WriteError> {
        let ctx = Ctx {
            linked_launch: link.map(|(txn, _)| txn),
            link_verdict: link.map(|(_, verdict)| verdict),
            rel: &req.rel_path,
            expected: req.expected,
            idem: req.idempotency.as_ref(),
            tool_family: &req.tool_family,
            operation: &req.operation,
        };
        self.run_file_txn(ctx, FileEffect::Write { bytes: &req.bytes })
            .map_err(|f| {
                map_failure!(WriteError, f, |path: PathBuf| WriteError::Io {
                    source: io::Error::from(io::ErrorKind::NotFound),
                    path,
                })
            })
    }

    /// Deletes `req.rel_path` as one journaled transaction; the post-state
    /// `absent` is the tombstone.
    pub fn delete_file(&mut self, req: FileDelete) -> Result<TxnOutcome, DeleteError> {
        let ctx = Ctx {
            linked_launch: None,
            link_verdict: None,
            rel: &req.rel_path,
            expected: req.expected,
            idem: req.idempotency.as_ref(),
            tool_family: &req.tool_family,
            operation: &req.operation,
        };
        self.run_file_txn(ctx, FileEffect::Delete)
            .map_err(|f| map_failure!(DeleteError, f, |path| DeleteError::Absent { path }))
    }
}

impl Journal {
    fn run_file_txn(
        &mut self,
        ctx: Ctx<'_>,
        effect: FileEffect<'_>,
    ) -> Result<TxnOutcome, TxnFailure> {
        durable::validate_relative(ctx.rel).map_err(TxnFailure::Path)?;
        let rel_str = ctx
            .rel
            .to_str()
            .ok_or_else(|| {
                TxnFailure::Path(PathError::NotRelative {
                    path: ctx.rel.to_path_buf(),
                })
            })?
            .to_owned();
        self.check_gate()?;
        if let Some(key) = ctx.idem
            && let Some(replay) = self.replay_lookup(key, ctx.tool_family, ctx.operation)?
        {
            return Ok(TxnOutcome::Replayed(replay));
        }
        let target = self.root.join(ctx.rel);
        let io = |e| TxnFailure::Io(target.clone(), e);

        // Pre-state and compare-and-swap, before anything is recorded.
        let (seen, pre_bytes, post) = self.pre_state(&ctx, &target, effect)?;
        let (pre, mode) = (seen.state, seen.mode.unwrap_or(0o644));
        // Intent, durable before the effect.
        let txn = TxnId::random().map_err(io)?;
        let temp = match effect {
            FileEffect::Write { .. } => Some(durable::temp_path_for(&target, txn)),
            FileEffect::Delete => None,
        };
        let intent = FileIntent {
            path: rel_str.clone(),
            pre,
            post,
            temp: temp
                .as_ref()
                .and_then(|t| t.strip_prefix(&self.root).ok())
                .and_then(Path::to_str)
                .map(str::to_owned),
            linked_launch: ctx.linked_launch,
        };
        let pre_image = pre_bytes.as_deref().map(|b| (b, mode));
        self.insert_intent(txn, &intent, pre_image, &ctx)
            .map_err(TxnFailure::Journal)?;
        cross(fp::AFTER_INTENT);

        // From here on every exit records a terminal state.
        //
        // The intent was appended without its fsync (`insert_intent`): its
        // record is written, so it survives the death of this process, and the
        // fsync that makes it survive the machine runs on a second thread while
        // this one writes and fsyncs the temp file. Both are joined before the
        // effect: the intent is durable before it, and the journal costs one
        // fsync less on the critical path.
        if let Err(e) = self.start_log_sync() {
            return Err(self.settle(txn, &intent, ctx.link_verdict, e));
        }
        let effect_result = self.run_effect(&target, temp.as_deref(), effect, mode, &seen);
        self.conclude(txn, &ctx, &intent, effect_result)
    }

    /// The target's pre-state (and bytes) and the effect's post-state, the
    /// compare-and-swap checked, before anything is recorded. The identity (device,
    /// inode) read here is compared again right before the effect, with the bytes.
    fn pre_state(
        &self,
        ctx: &Ctx<'_>,
        target: &Path,
        effect: FileEffect<'_>,
    ) -> Result<(durable::Observed, Option<Vec<u8>>, FileState), TxnFailure> {
        let io = |e| TxnFailure::Io(target.to_path_buf(), e);
        let (seen, pre_bytes) = durable::observe_bytes(target).map_err(io)?;
        let pre = seen.state;
        if let Some(expected) = ctx.expected
            && expected != pre
        {
            return Err(TxnFailure::Stale {
                path: ctx.rel.to_path_buf(),
                expected,
                current: pre,
                transaction_id: None,
            });
        }
        let post = match effect {
            FileEffect::Write { bytes } => FileState::of(bytes),
            FileEffect::Delete if pre == FileState::Absent => {
                return Err(TxnFailure::Absent(ctx.rel.to_path_buf()));
            }
            FileEffect::Delete => FileState::Absent,
        };
        if let FileEffect::Write { .. } = effect {
            ensure_parent(&*self.storage, &self.root, ctx.rel).map_err(io)?;
        }

        Ok((seen, pre_bytes, post))
    }

    /// The intent log's fsync thread, started once (see `run_file_txn`).
    fn start_log_sync(&mut self) -> io::Result<()> {
        if self.log_sync.is_none() {
            let log = self
                .log
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .path()
                .to_path_buf();
            self.log_sync = Some(BackgroundSync::start(self.storage.clone(), log)?);
        }
        Ok(())
    }

    /// The temp written and fsynced while the intent log's fsync runs, both joined, then
    /// the effect: `Some((found, temp_removed))` when the target changed under it and
    /// nothing was written.
    fn run_effect(
        &self,
        target: &Path,
        temp: Option<&Path>,
        effect: FileEffect<'_>,
        mode: u32,
        seen: &durable::Observed,
    ) -> io::Result<Option<(FileState, bool)>> {
        let storage = &*self.storage;
        let applied = (|| -> io::Result<Option<FileState>> {
            let log_sync = self.log_sync.as_ref().expect("started above");
            log_sync.begin()?;
            let prepared = (|| -> io::Result<()> {
                if let (FileEffect::Write { bytes }, Some(temp)) = (effect, temp) {
                    let file = storage.create_temp(temp, bytes, mode)?;
                    cross(fp::AFTER_TEMP_WRITE);
                    storage.sync_file(temp, &file)?;
                    cross(fp::AFTER_TEMP_FSYNC);
                }
                Ok(())
            })();
            let synced = log_sync.wait();
            if synced.is_err() {
                self.sync_failed
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            prepared?;
            synced?;
            apply_effect(storage, target, temp, effect, seen)
        })();
        match applied {
            Ok(Some(changed)) => {
                // Not applied: drop our temp (if any) and make that durable.
                let temp_removed = match temp {
                    Some(t) => storage.remove_file(t).is_ok(),
                    None => false,
                };
                if temp_removed {
                    let _ = storage.sync_dir(durable::parent_dir(target));
                }
                Ok(Some((changed, temp_removed)))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The terminal state of a transaction whose intent is recorded, from its effect's
    /// result: stale (not applied), committed (post-state re-derived), or settled.
    fn conclude(
        &mut self,
        txn: TxnId,
        ctx: &Ctx<'_>,
        intent: &FileIntent,
        effect_result: io::Result<Option<(FileState, bool)>>,
    ) -> Result<TxnOutcome, TxnFailure> {
        let (rel_str, pre, post) = (intent.path.clone(), intent.pre, intent.post);
        let target = self.root.join(ctx.rel);
        match effect_result {
            Ok(Some((changed, temp_removed))) => {
                // Someone changed the target between our read and our effect:
                // nothing was written, say so with a proof, answer stale.
                let proof = FileProof {
                    path: rel_str,
                    observed: changed,
                    basis: ProofBasis::NotApplied,
                    temp_removed,
                    derived_by: Deriver::Live,
                };
                self.record_live(txn, TxnStatus::Compensated, Some(&proof), None)?;
                Err(TxnFailure::Stale {
                    path: ctx.rel.to_path_buf(),
                    expected: pre,
                    current: changed,
                    transaction_id: Some(txn),
                })
            }
            Ok(None) => {
                let observed = durable::read_state(&target);
                cross(fp::AFTER_POST_HASH);
                match observed {
                    Ok(observed) if observed == post => {
                        let proof = FileProof {
                            path: rel_str,
                            observed,
                            basis: ProofBasis::PostState,
                            temp_removed: false,
                            derived_by: Deriver::Live,
                        };
                        self.defer_terminal(txn, proof.clone());
                        Ok(TxnOutcome::Committed {
                            transaction_id: txn,
                            proof,
                        })
                    }
                    Ok(other) => Err(self.settle(
                        txn,
                        intent,
                        ctx.link_verdict,
                        io::Error::other(format!(
                            "post-state re-derived as {other}, expected {post}"
                        )),
                    )),
                    Err(e) => Err(self.settle(txn, intent, ctx.link_verdict, e)),
                }
            }
            Err(e) => Err(self.settle(txn, intent, ctx.link_verdict, e)),
        }
    }

    /// Settles a transaction whose effect failed: re-derive from disk exactly
    /// as reconciliation would, record that, and report it.
    fn settle(
        &mut self,
        txn: TxnId,
        intent: &FileIntent,
        verdict: Option<LinkVerdict>,
        cause: io::Error,
    ) -> TxnFailure {
        let link = intent
            .linked_launch
            .zip(verdict)
            .map(|(l, verdict)| verdict(self, l));
        let derived = derive_file_linked(&self.root, intent, Deriver::Live, link);
        if let Some(temp) = &derived.remove_temp {
            let _ = fs::remove_file(temp);
        }
        let result = self.record_live(
            txn,
            derived.status,
            derived.proof.as_ref(),
            derived.reason.as_deref(),
        );
        if derived.status == TxnStatus::Quarantined {
            let reason = derived.reason.clone().unwrap_or_default();
            match &mut self.gate {
                WriteGate::Closed { quarantined } => quarantined.push(QuarantinedTxn {
                    transaction_id: txn,
                    reason,
                }),
                gate => {
                    *gate = WriteGate::Closed {
                        quarantined: vec![QuarantinedTxn {
                            transaction_id: txn,
                            reason,
                        }],
                    }
                }
            }
        }
        match result {
            Ok(()) => TxnFailure::EffectFailed(txn, derived.status, cause),
            Err(_) => TxnFailure::EffectFailed(txn, TxnStatus::Open, cause),
        }
    }

    /// Appends the intent, with `pre_image` (the bytes and mode of the read
    /// its pre-state was hashed from, when the target exists), and the previous
    /// write's terminal row to the intent log in one write, not synced (see
    /// [`crate::intent_log`]); the caller fsyncs the log before the effect. A
    /// full log is folded first.
    fn insert_intent(
        &mut self,
        txn: TxnId,
        intent: &FileIntent,
        pre_image: Option<(&[u8], u32)>,
        ctx: &Ctx<'_>,
    ) -> rusqlite::Result<()> {
        let intent_json = intent_json(intent)?;
        let previous = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let result = (|| {
            let mut heads = Vec::with_capacity(2);
            if let Some(p) = &previous {
                let proof = proof_json::<FileIntent>(&p.proof)?;
                heads.push((
                    crate::intent_log::terminal(p.txn, TxnStatus::Committed, Some(proof)),
                    None,
                ));
            }
            heads.push(
                crate::intent_log::LoggedIntent {
                    txn,
                    operation: ctx.operation,
                    tool_family: ctx.tool_family,
                    intent_json: &intent_json,
                    idem: ctx.idem,
                    pre_image,
                    pre: intent.pre,
                }
                .head(&self.identity),
            );
            let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
            let full = log.unfolded() + heads.len() > crate::intent_log::FOLD_AT;
            let batch = log.batch(&heads).map_err(|e| log_error(&log, e))?;
            if !full && log.fits(&batch) {
                return log.append(batch).map_err(|e| log_error(&log, e));
            }
            // The previous terminal row goes into the fold, so that write is
            // folded proven (its pre-image never copied to `preimages`).
            if heads.len() == 2 {
                let terminal = heads.remove(0);
                self.append_to_log(&mut log, std::slice::from_ref(&terminal))?;
            }
            self.fold_log(&mut log, true)?;
            log.append_heads(&heads).map_err(|e| log_error(&log, e))
        })();
        if previous.is_some() {
            match &result {
                // The previous row is written; its boundary is crossed now.
                Ok(()) => cross(fp::AFTER_TERMINAL),
                // The previous row stays open; it is re-derived from disk when
                // reconciliation runs again, which the closed gate demands.
                Err(_) => self.gate = WriteGate::Unreconciled,
            }
        }
        result
    }

    /// Leaves the terminal row of a committed write pending: written with the
    /// next intent, before any other use of the database, or on drop. The
    /// effect is durable and the proof derived from disk already; the row was
    /// never fsynced on its own (see [`Journal::record_live`]), and a row not
    /// written when the process dies is `open` at the next start and re-derived
    /// from disk, exactly like a crash after the post-hash.
    fn defer_terminal(&mut self, txn: TxnId, proof: FileProof) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        debug_assert!(pending.is_none(), "flushed by this write's intent");
        *pending = Some(PendingTerminal { txn, proof });
    }

    /// Records the live terminal state; on failure the gate falls back to
    /// `Unreconciled` so nothing more is written until reconciliation runs.
    fn record_live(
        &mut self,
        txn: TxnId,
        status: TxnStatus,
        proof: Option<&FileProof>,
        reason: Option<&str>,
    ) -> Result<(), TxnFailure> {
        // Committed without its own fsync: the effect is already durable and
        // the proof derived from disk, and a row lost with the power is open
        // again and re-derived from disk at the next start, exactly like a
        // crash after the post-hash (the power-loss sweep pins that). A later
        // restart fold's WAL fsync, a checkpoint or the close makes it durable.
        // This keeps a third fsync off the critical path of every write.
        // One statement: in autocommit it is its own transaction.
        let result = self.flush_pending().and_then(|()| {
            self.set_unsynced(true)?;
            let proof = proof.map(proof_json::<FileIntent>).transpose()?;
            record_terminal(&self.db, txn, TxnStatus::Open, status, proof, reason)
        });
        result.map_err(|e| {
            self.gate = WriteGate::Unreconciled;
            TxnFailure::Journal(e)
        })
    }
}

/// The verdict on a composite's linked `process_launch` proof: `Ok` when it shows a
/// clean terminal state (`Journal::linked_launch_verdict`, in `launch`).
pub(crate) type LinkVerdict = fn(&Journal, TxnId) -> Result<(), String>;

struct Ctx<'a> {
    /// A composite's linked `process_launch` (the canonical-write helper).
    linked_launch: Option<TxnId>,
    /// The verdict on its proof, re-read when a failed effect is settled.
    link_verdict: Option<LinkVerdict>,
    rel: &'a Path,
    expected: Option<FileState>,
    idem: Option<&'a IdempotencyKey>,
    tool_family: &'a str,
    operation: &'a str,
}
