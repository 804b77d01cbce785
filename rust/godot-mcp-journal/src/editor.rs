//! `editor_runtime` transactions: an effect applied through the editor bridge.
//!
//! The intent (command, request id, whether the command may write a file) is durable
//! before the request is sent. The editor's reply is the only evidence the journal gets,
//! so the terminal state follows it:
//!
//! A command that may write a file (`may_save_file`: `scene.save`, `scene.create`,
//! `resource.set_property`) also records the file's pre-state (absent, or its hash) in the
//! intent before the request is sent, and the file's post-state in the proof after the
//! reply. The terminal state is derived from that evidence ([`derive_refusal`]):
//!
//! | reply | state | why |
//! |---|---|---|
//! | `ok` | `committed` | the editor reports the effect applied; the proof records the reply (and, for a file writer, the post-state; an unreadable post-state is `quarantined`) |
//! | an error that says the editor is `unchanged` or `rolled_back`, command cannot write a file | `compensated` | not applied, or undone by the editor |
//! | the same, command may write a file, and the file's post-state equals its recorded pre-state | `compensated` | the pre-state is proven: in the editor (its report) and on disk (the hash) |
//! | any other error to a file writer (the editor still changed, no report, the file differs from its pre-state or could not be read) | `quarantined` | the pre-state is not proven; writes are blocked until an operator resolves it |
//! | any other error to a command that cannot write a file | stays `open` (unresolved) | the edit may be in the editor's memory; it blocks nothing |
//! | nothing was sent (no editor connected) | `compensated` | nothing left the server |
//! | none (timeout, connection lost), command may write a file | `quarantined` | the disk may have changed; writes are blocked until an operator resolves it |
//! | none, command cannot write a file | stays `open` (unresolved) | the request is never resent; the edit, if it ran, is in the editor's memory only, where its undo history covers it; it blocks nothing; a reply that still arrives settles it ([`Journal::unresolved_editor_txn`]) |
//!
//! Startup reconciliation quarantines an open `editor_runtime` row whose command may have
//! written a file and leaves the others unresolved (see `stays_unresolved`).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::effect::{Effect, intent_json, parse_intent, proof_json, read_proof};
use crate::ids::{EffectKind, FileState, TxnId, TxnStatus};
use crate::journal::{Journal, NewTxn, WriteGate, insert_txn, now_ms};

/// What an editor transaction intends, durable before the request is sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditorIntent {
    /// The bridge command, e.g. `node.set_property`.
    pub cmd: String,
    /// The bridge request id it was (or will be) sent with; never reused, never resent.
    pub request_id: u64,
    /// The command may write a file (save_scene…): a lost answer quarantines it.
    pub may_save_file: bool,
    /// The file the command acts on, when known (`res://…`): the scene, or the resource
    /// of `resource.set_property`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scene: Option<String>,
    /// SHA-256 of the canonical request parameters.
    pub params_sha256: String,
    /// For a command that may write a file: that file's state, read before the request
    /// was sent. Without it an error reply cannot prove the pre-state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_state: Option<FileState>,
    /// For a command that may write several files (`scene.save_all`): every one of them,
    /// each with its state before the request was sent. Each is proven from disk
    /// afterwards ([`derive_files`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<NamedFile>,
}

/// A file an editor command may write, named in its intent before the request is sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedFile {
    /// The file, `res://…`.
    pub path: String,
    /// Its state before the request was sent.
    pub pre_state: FileState,
    /// Which file the path named then, and its modification time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stamp: Option<crate::durable::FileStamp>,
}

/// One file named in the intent, as the disk shows it after the reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedFile {
    /// The file, `res://…`.
    pub path: String,
    /// Its recorded pre-state (copied from the intent).
    pub pre_state: FileState,
    /// Its state read after the reply; `None` when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_state: Option<FileState>,
    /// The disk shows it written since the intent: its bytes, its identity (a rename
    /// over it) or its modification time changed.
    pub written: bool,
    /// The editor reported it among the files it writes.
    pub expected: bool,
}

/// What the add-on reported an error reply left in the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditorLeft {
    /// Refused before anything changed.
    Unchanged,
    /// Changed, then undone by the editor (the value read back is the old one).
    RolledBack,
    /// Changed, and still changed.
    Changed,
    /// The reply did not say.
    Unreported,
}

impl EditorLeft {
    /// The editor reports being where it was before the command.
    pub fn is_pre_state(self) -> bool {
        matches!(self, Self::Unchanged | Self::RolledBack)
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Unchanged => "none made",
            Self::RolledBack => "rolled back",
            Self::Changed => "still applied",
            Self::Unreported => "not reported",
        }
    }
}

impl Effect for EditorIntent {
    const TAG: &'static str = "editor_runtime";
    type Proof = EditorProof;
    fn summary(p: &EditorProof) -> String {
        format!(
            "editor replied {} to request {}{}{}{}{}",
            p.reply,
            p.request_id,
            match p.undoable {
                Some(true) => " (on the editor's undo history)",
                Some(false) => " (not undoable)",
                None => "",
            },
            match p.editor_left {
                Some(left) => format!(
                    "; editor {}",
                    serde_json::to_value(left)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                ),
                None => String::new(),
            },
            match (&p.pre_state, &p.post_state) {
                (Some(pre), Some(post)) => format!("; file {pre} before, {post} after"),
                (Some(pre), None) => format!("; file {pre} before, unreadable after"),
                (None, Some(post)) => format!("; file {post} after"),
                (None, None) => String::new(),
            },
            p.files
                .iter()
                .map(|f| match &f.post_state {
                    Some(post) => format!(
                        "; {} {} ({} before, {post} after)",
                        f.path,
                        if f.written { "written" } else { "not written" },
                        f.pre_state
                    ),
                    None => format!("; {} unreadable after ({} before)", f.path, f.pre_state),
                })
                .collect::<String>()
        )
    }
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
    /// For an error reply: what the add-on said it left in the editor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_left: Option<EditorLeft>,
    /// For a command that may write a file: the file's recorded pre-state (copied from
    /// the intent when the row is settled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_state: Option<FileState>,
    /// For a command that may write a file: the file's state read after the reply;
    /// `None` when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_state: Option<FileState>,
    /// For a command that names several files: each one as the disk shows it after the
    /// reply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SavedFile>,
}

impl EditorProof {
    /// A proof of `reply` to request `request_id`, with no further evidence.
    pub fn reply(request_id: u64, reply: impl Into<String>) -> Self {
        Self {
            request_id,
            reply: reply.into(),
            undoable: None,
            editor_left: None,
            pre_state: None,
            post_state: None,
            files: Vec::new(),
        }
    }
}

/// The paths of `files`, for a reason.
fn paths<'a>(files: impl Iterator<Item = &'a SavedFile>) -> String {
    files
        .map(|f| f.path.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The state a reply settles a command that names several files in (`intent.files`), and
/// why, from the disk alone: `committed` when every file the editor said it writes was
/// written and every file reads back; `compensated` when none was written and each is at
/// its recorded pre-state (the editor's report, `left`, must not say it still holds a
/// change for an error reply); otherwise `quarantined`, naming the files that did not
/// land. `None` for the reason of a committed row.
pub fn derive_files(
    intent: &EditorIntent,
    proof: &EditorProof,
    left: Option<EditorLeft>,
) -> (TxnStatus, Option<String>) {
    let answered = format!("the editor answered {}", proof.reply);
    let unread: Vec<&SavedFile> = proof
        .files
        .iter()
        .filter(|f| f.post_state.is_none())
        .collect();
    if !unread.is_empty() {
        return (
            TxnStatus::Quarantined,
            Some(format!(
                "{}: {answered}, but {} could not be read after it: the state on disk is \
                 not proven — re-read it, then resolve with `godot-mcp transaction repair`",
                intent.cmd,
                paths(unread.into_iter())
            )),
        );
    }
    let missing: Vec<&SavedFile> = proof
        .files
        .iter()
        .filter(|f| f.expected && !f.written)
        .collect();
    let written: Vec<&SavedFile> = proof.files.iter().filter(|f| f.written).collect();
    let unchanged = left.is_none_or(EditorLeft::is_pre_state)
        && proof
            .files
            .iter()
            .all(|f| !f.written && f.post_state == Some(f.pre_state));
    if left.is_none() && missing.is_empty() {
        return (TxnStatus::Committed, None);
    }
    if unchanged {
        let which = if missing.is_empty() {
            paths(proof.files.iter())
        } else {
            paths(missing.into_iter())
        };
        return (
            TxnStatus::Compensated,
            Some(format!(
                "not applied: {answered}, but {which} not written; every file is at its \
                 recorded pre-state"
            )),
        );
    }
    let landed = if written.is_empty() {
        "none was written".to_string()
    } else {
        format!("{} written", paths(written.into_iter()))
    };
    let not_landed = if missing.is_empty() {
        String::new()
    } else {
        format!(
            ", {} not written (still at its pre-state)",
            paths(missing.into_iter())
        )
    };
    (
        TxnStatus::Quarantined,
        Some(format!(
            "{}: {answered}; {landed}{not_landed}: the save did not land whole — the editor \
             still holds the unsaved changes; check the files (restore or save them again), \
             then resolve with `godot-mcp transaction repair`",
            intent.cmd
        )),
    )
}

/// How a sent editor request ended, from the server's side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorSettle {
    /// The editor answered `ok`.
    Applied(EditorProof),
    /// The editor answered an error; `editor_left` (and, for a file writer,
    /// `post_state`) is the evidence [`derive_refusal`] judges.
    Refused(EditorProof),
    /// Nothing was sent (no editor connected): nothing left the server.
    NotSent(EditorProof),
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
    /// The request id was recorded before (by this server, or at or below the
    /// last one an earlier server recorded): a late reply to it could settle
    /// the wrong row.
    #[error("editor request id {request_id} was used before; the bridge must number above {last}")]
    RequestIdUsed {
        /// The id refused.
        request_id: u64,
        /// The largest id an earlier server recorded.
        last: u64,
    },
}

/// The state an error reply settles `intent` in, and why, from the evidence alone:
/// `compensated` only when the pre-state is proven — the editor reports itself unchanged
/// or rolled back, and, for a command that may write a file, the file's post-state equals
/// the pre-state recorded before the request was sent. Otherwise a file writer is
/// `quarantined` and any other command stays `open` (unresolved). The reason says what
/// is known: the editor's report and the file's state, and what to do.
pub fn derive_refusal(intent: &EditorIntent, proof: &EditorProof) -> (TxnStatus, String) {
    let left = proof.editor_left.unwrap_or(EditorLeft::Unreported);
    let answered = format!("the editor answered {}", proof.reply);
    if !intent.may_save_file {
        return if left.is_pre_state() {
            (
                TxnStatus::Compensated,
                format!(
                    "not applied: {answered}; the editor's change: {}",
                    left.as_str()
                ),
            )
        } else {
            (
                TxnStatus::Open,
                format!(
                    "unresolved: {answered}; the editor's change: {}; re-read the \
                     editor's state (get_scene_tree, get_node_property, editor_history)",
                    left.as_str()
                ),
            )
        };
    }
    let file = intent.scene.as_deref().unwrap_or("the file");
    let disk = match (&intent.pre_state, &proof.post_state) {
        (None, _) => Err(format!("no pre-state of {file} was recorded")),
        (Some(_), None) => Err(format!("{file} could not be read after the reply")),
        (Some(pre), Some(post)) if pre == post => Ok(format!("{file} is unchanged ({post})")),
        (Some(pre), Some(post)) => Err(format!("{file} changed from {pre} to {post}")),
    };
    match disk {
        Ok(disk) if left.is_pre_state() => (
            TxnStatus::Compensated,
            format!(
                "not applied: {answered}; the editor's change: {}; {disk}",
                left.as_str()
            ),
        ),
        Ok(disk) => (
            TxnStatus::Quarantined,
            format!(
                "{}: {answered}; {disk}, but the editor's change: {}, so its state is not proven \
                 — check the editor (undo if needed) and the file, then resolve with \
                 `godot-mcp transaction repair`",
                intent.cmd,
                left.as_str()
            ),
        ),
        Err(disk) => (
            TxnStatus::Quarantined,
            format!(
                "{}: {answered}; {disk}; the editor's change: {}; the pre-state is not \
                 proven — re-read {file} (restore it if needed), then resolve with \
                 `godot-mcp transaction repair`",
                intent.cmd,
                left.as_str()
            ),
        ),
    }
}

/// Whether an editor row's pre-state is proven now: the editor reported itself unchanged
/// or rolled back (`left`), a pre-state was recorded, and `observed` (the file read now)
/// equals it. Repair uses it to turn an editor row's acknowledgment into a proof.
pub fn pre_state_proven(
    intent: &EditorIntent,
    left: Option<EditorLeft>,
    observed: &FileState,
) -> bool {
    left.is_some_and(EditorLeft::is_pre_state) && intent.pre_state.as_ref() == Some(observed)
}

/// Whether an open row is an unresolved editor effect that reconciliation leaves open:
/// an `editor_runtime` row whose command cannot have written a file.
pub(crate) fn stays_unresolved(kind: &str, intent_json: &str) -> bool {
    kind == EffectKind::EditorRuntime.as_str()
        && matches!(
            parse_intent::<EditorIntent>(intent_json),
            Some(EditorIntent {
                may_save_file: false,
                ..
            })
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

/// An `editor_runtime` row as recorded: what repair and tests re-derive from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorRecord {
    /// Its state.
    pub status: TxnStatus,
    /// The intent, with the file's pre-state when the command may write one.
    pub intent: EditorIntent,
    /// The proof, when the row was settled from a reply (with the editor's report and the
    /// file's pre- and post-state).
    pub proof: Option<EditorProof>,
    /// Why, for quarantine, compensation and unresolved rows.
    pub reason: Option<String>,
}

impl Journal {
    /// The `editor_runtime` row `txn`, if there is one.
    pub fn editor_record(&self, txn: TxnId) -> Result<Option<EditorRecord>, EditorTxnError> {
        let row = self
            .conn()
            .prepare_cached(
                "SELECT state, intent_json, proof_json, reason FROM transactions
                 WHERE id = ?1 AND effect_kind = 'editor_runtime'",
            )?
            .query_map(params![txn.to_string()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })?
            .next()
            .transpose()?;
        let Some((state, intent, proof, reason)) = row else {
            return Ok(None);
        };
        let bad = |what: &str| {
            EditorTxnError::Journal(rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Text,
                format!("bad {what} in editor row {txn}").into(),
            ))
        };
        let status = TxnStatus::parse(&state).ok_or_else(|| bad("state"))?;
        let Some(intent) = parse_intent::<EditorIntent>(&intent) else {
            return Err(bad("intent"));
        };
        let proof = match proof.as_deref().map(read_proof::<EditorIntent>) {
            None => None,
            Some(Ok(p)) => p, // a repaired row carries a file proof: not the editor's
            Some(Err(_)) => return Err(bad("proof")),
        };
        Ok(Some(EditorRecord {
            status,
            intent,
            proof,
            reason,
        }))
    }

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
        // A request id names one row across servers: a late reply is matched
        // by it (`unresolved_editor_txn`).
        let last = self.earlier_editor_request_id()?;
        let used = self
            .editor_ids
            .as_ref()
            .is_some_and(|(_, since)| since.contains(&intent.request_id));
        if intent.request_id <= last || used {
            return Err(EditorTxnError::RequestIdUsed {
                request_id: intent.request_id,
                last,
            });
        }
        let txn = TxnId::random().map_err(EditorTxnError::Random)?;
        let intent_json = intent_json(intent)?;
        {
            let _sync = SyncLevel::for_intent(self.conn(), intent)?;
            insert_txn(
                self.conn(),
                &self.identity,
                &NewTxn {
                    txn,
                    kind: EffectKind::EditorRuntime,
                    operation,
                    tool_family,
                    state: TxnStatus::Open,
                    intent_json: &intent_json,
                    proof_json: None,
                    parent: None,
                    idem: None,
                },
            )?;
        }
        if let Some((_, since)) = &mut self.editor_ids {
            since.insert(intent.request_id);
        }
        Ok(txn)
    }

    /// The largest request id any editor row recorded (of any project object
    /// or generation); 0 when none. A server's bridge numbers its requests
    /// above it, so a request id names one row across servers, and
    /// [`Journal::begin_editor`] refuses an id recorded before.
    pub fn last_editor_request_id(&mut self) -> Result<u64, EditorTxnError> {
        let earlier = self.earlier_editor_request_id()?;
        let since = self
            .editor_ids
            .as_ref()
            .and_then(|(_, s)| s.iter().max().copied());
        Ok(since.map_or(earlier, |s| s.max(earlier)))
    }

    /// The largest request id recorded when this process first asked: every id
    /// at or below it may be an earlier server's (this one's are recorded in
    /// `editor_ids` since; they may arrive out of order).
    fn earlier_editor_request_id(&mut self) -> Result<u64, EditorTxnError> {
        if let Some((last, _)) = &self.editor_ids {
            return Ok(*last);
        }
        let last: Option<i64> = self.conn().query_row(
            "SELECT MAX(json_extract(intent_json, '$.request_id')) FROM transactions
             WHERE effect_kind = 'editor_runtime'",
            [],
            |r| r.get(0),
        )?;
        let last = last.map_or(0, |l| u64::try_from(l).unwrap_or(0));
        self.editor_ids = Some((last, Default::default()));
        Ok(last)
    }

    /// The unresolved (open) editor transaction that sent `request_id`, if any: a reply
    /// that arrives after its request gave up settles it from that reply.
    pub fn unresolved_editor_txn(
        &self,
        request_id: u64,
    ) -> Result<Option<(TxnId, EditorIntent)>, EditorTxnError> {
        let mut st = self.conn().prepare_cached(
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
            if let (Ok(txn), Some(i)) = (id.parse::<TxnId>(), parse_intent::<EditorIntent>(&intent))
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
            EditorSettle::Applied(p) if !intent.files.is_empty() => {
                let (to, why) = derive_files(intent, &p, None);
                (to, Some(p), why)
            }
            EditorSettle::Refused(p) if !intent.files.is_empty() => {
                let left = Some(p.editor_left.unwrap_or(EditorLeft::Unreported));
                let (to, why) = derive_files(intent, &p, left);
                (to, Some(p), why)
            }
            EditorSettle::Applied(mut p) if intent.may_save_file => {
                p.pre_state = intent.pre_state;
                if p.post_state.is_some() {
                    (TxnStatus::Committed, Some(p), None)
                } else {
                    let why = format!(
                        "{}: the editor answered ok, but {} could not be read after it: its \
                         post-state is not proven — re-read it, then resolve with \
                         `godot-mcp transaction repair`",
                        intent.cmd,
                        intent.scene.as_deref().unwrap_or("the file")
                    );
                    (TxnStatus::Quarantined, Some(p), Some(why))
                }
            }
            EditorSettle::Applied(p) => (TxnStatus::Committed, Some(p), None),
            EditorSettle::Refused(mut p) => {
                p.pre_state = intent.pre_state;
                let (to, why) = derive_refusal(intent, &p);
                if to == TxnStatus::Open {
                    self.conn()
                        .prepare_cached(
                            "UPDATE transactions SET reason = ?2 WHERE id = ?1 AND state = 'open'",
                        )?
                        .execute(params![txn.to_string(), why])?;
                    return Ok(TxnStatus::Open);
                }
                (to, Some(p), Some(why))
            }
            EditorSettle::NotSent(p) => {
                let why = format!("not applied: {} (nothing was sent)", p.reply);
                (TxnStatus::Compensated, Some(p), Some(why))
            }
            EditorSettle::Lost { reason } if intent.may_save_file => (
                TxnStatus::Quarantined,
                None,
                Some(format!(
                    "{}: {reason}; never resent; it may have written {} — re-read the file, then \
                     resolve with `godot-mcp transaction repair`",
                    intent.cmd,
                    if intent.files.is_empty() {
                        intent
                            .scene
                            .clone()
                            .unwrap_or_else(|| "a project file".into())
                    } else {
                        intent
                            .files
                            .iter()
                            .map(|f| f.path.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                )),
            ),
            EditorSettle::Lost { reason } => {
                // Stays open (unresolved); the reason says why, for the listing.
                self.conn()
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
        let proof_json = proof.map(|p| proof_json::<EditorIntent>(&p)).transpose()?;
        // A quarantine closes the gate: always durable. Otherwise as the intent was.
        let _sync = if to == TxnStatus::Quarantined {
            None
        } else {
            SyncLevel::for_intent(self.conn(), intent)?
        };
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE transactions SET state = ?2, proof_json = ?3, reason = ?4, terminal_at_ms = ?5
                 WHERE id = ?1 AND state = 'open'",
            )?
            .execute(params![txn.to_string(), to.as_str(), proof_json, reason, now_ms()])?;
        // Back at synchronous=FULL before anything else uses the connection.
        drop(_sync);
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
mod tests;
