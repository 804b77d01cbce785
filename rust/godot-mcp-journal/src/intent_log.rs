//! The intent log: where a `file` transaction's intent and its live terminal
//! state are first recorded, and how they are folded into `transactions`.
//!
//! A journaled write must make its intent (with the pre-image of an
//! overwrite) durable before its effect. Recording it in SQLite on the
//! critical path — a row in `transactions` with its indexes, a pre-image in
//! `preimages`, a commit — was, profiled, the largest part of what the
//! journal added to a bare durable write. So the hot path appends a record
//! (the intent, and the previous write's terminal row) to `intents.log`, a
//! preallocated file in the project's state directory (created by the first
//! write, never by a start), with one write; the
//! journal's helper thread `fdatasync`s it while the temp file is written and
//! fsynced, and the effect waits for both. The file is preallocated and
//! zero-filled when created, so that `fdatasync` writes data only.
//!
//! Records are folded into `transactions` (and `preimages`) in one SQLite
//! transaction, together with `log_state.folded_seq`, the last sequence number
//! folded: every `FOLD_AT` records and whenever the next ones would not fit
//! (then durably, `synchronous=FULL`, and the log restarts at offset 0), before
//! any other use of the database (`Journal::conn`), and when the journal is
//! opened, before reconciliation.
//!
//! # Record format and recovery
//!
//! `b"GMJL"`, the sequence number (u64 LE), the payload length (u32 LE), the
//! first 16 bytes of the SHA-256 of the database's salt (`LogState`), those 12
//! bytes and the payload, then the
//! payload: a JSON head's length (u32 LE), the head (`Head`), and the
//! pre-image bytes when the head says so. Sequence numbers increase by one
//! from record to record. At open the file is read from offset 0 while each
//! record is whole (magic, length, hash) and numbered one more than the one
//! before; the records numbered above `folded_seq` are folded. A torn record
//! (a power loss during its write) ends the scan, and so does what is left of
//! the records before a restart (numbered at or below `folded_seq`, and never
//! one more than a newer record): the log restarts only after a durable fold,
//! so everything before the restart is already in `transactions`. Numbering
//! at open goes on above every record the file could hold, so a torn record
//! that hides whole ones never lets a new record share a stale one's number. A record
//! that is not whole never had its effect: the effect waits for its fsync.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::identity::ProjectIdentity;
use crate::ids::{EffectKind, FileState, IdempotencyKey, TxnId, TxnStatus, now_ms};

/// The log's file name inside the project state dir.
pub const LOG_FILE: &str = "intents.log";

/// Records folded at once on the hot path: a bound on the work one write does
/// for the others and on what a reader waits for.
pub(crate) const FOLD_AT: usize = 64;

/// The preallocated size of a new log (it grows when one write's records
/// need more).
const INITIAL_CAPACITY: u64 = 1 << 20;

const MAGIC: &[u8; 4] = b"GMJL";
const HEADER: usize = 32;

/// The schema step that adds the fold marker (see [`crate::schema`]).
pub(crate) const CREATE: &str = r#"
    CREATE TABLE log_state (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        folded_seq  INTEGER NOT NULL,
        -- hashed into every record: a log is read only with its own database
        salt        BLOB NOT NULL CHECK (length(salt) = 16)
    ) STRICT;
    INSERT INTO log_state (id, folded_seq, salt) VALUES (1, 0, randomblob(16));
"#;

/// A record's head: what the row needs, without the pre-image's bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub(crate) enum Head {
    /// A `file` intent, as its `transactions` row is written.
    Intent {
        txn: String,
        object_id: String,
        generation: i64,
        operation: String,
        tool_family: String,
        intent_json: String,
        idem: Option<[String; 4]>,
        created_at_ms: i64,
        /// The pre-image: size, mode, sha256, and whether its bytes follow.
        pre: Option<PreHead>,
    },
    /// The live terminal state of an earlier intent (never `open`).
    Terminal {
        txn: String,
        state: String,
        proof_json: Option<String>,
        reason: Option<String>,
        at_ms: i64,
    },
}

/// A pre-image's metadata (see [`crate::preimage`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PreHead {
    size: i64,
    mode: i64,
    sha256: String,
    /// Within the bound: the bytes follow the head.
    kept: bool,
}

/// A record read back: its head and, for a kept pre-image, its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub seq: u64,
    pub head: Head,
    pub pre_bytes: Option<Vec<u8>>,
}

/// A `file` intent as the hot path appends it.
pub(crate) struct LoggedIntent<'a> {
    pub txn: TxnId,
    pub operation: &'a str,
    pub tool_family: &'a str,
    pub intent_json: &'a str,
    pub idem: Option<&'a IdempotencyKey>,
    /// The bytes and mode of the read the pre-state `pre` was hashed from.
    pub pre_image: Option<(&'a [u8], u32)>,
    pub pre: FileState,
}

impl<'a> LoggedIntent<'a> {
    /// The head and the pre-image bytes to append.
    pub(crate) fn head(&self, identity: &ProjectIdentity) -> (Head, Option<&'a [u8]>) {
        let (pre, bytes) = match (self.pre_image, self.pre) {
            (Some((bytes, mode)), FileState::Present { sha256 }) => {
                let kept = bytes.len() as u64 <= crate::preimage::MAX_PREIMAGE_BYTES;
                (
                    Some(PreHead {
                        size: bytes.len() as i64,
                        mode: i64::from(mode & 0o7777),
                        sha256: sha256.to_string(),
                        kept,
                    }),
                    kept.then_some(bytes),
                )
            }
            _ => (None, None),
        };
        let head = Head::Intent {
            txn: self.txn.to_string(),
            object_id: identity.object_id.clone(),
            generation: identity.generation as i64,
            operation: self.operation.to_owned(),
            tool_family: self.tool_family.to_owned(),
            intent_json: self.intent_json.to_owned(),
            idem: self.idem.map(|k| {
                [
                    k.id.clone(),
                    k.principal.clone(),
                    k.session.clone(),
                    k.request_hash.to_string(),
                ]
            }),
            created_at_ms: now_ms(),
            pre,
        };
        (head, bytes)
    }
}

/// The head of a live terminal row.
pub(crate) fn terminal(txn: TxnId, to: TxnStatus, proof_json: Option<String>) -> Head {
    Head::Terminal {
        txn: txn.to_string(),
        state: to.as_str().to_owned(),
        proof_json,
        reason: None,
        at_ms: now_ms(),
    }
}

/// The open log file and where the next record goes.
#[derive(Debug)]
pub(crate) struct IntentLog {
    path: PathBuf,
    /// `None` until the first append creates it.
    file: Option<File>,
    /// The file's size (what a missing file will be created with).
    capacity: u64,
    /// Where the next record is written.
    tail: u64,
    /// The records appended and not yet folded, kept so a fold need not read
    /// them back (only the pre-images it keeps are read, from the file).
    pending: Vec<Pending>,
    /// The sequence number of the next record.
    next_seq: u64,
    /// The database's salt (see `LogState`).
    salt: [u8; 16],
}

/// An appended record not yet folded: its head, and where its pre-image's
/// bytes are in the file.
#[derive(Debug)]
struct Pending {
    seq: u64,
    head: Head,
    pre_at: Option<(u64, usize)>,
}

/// Records encoded for one write (see [`IntentLog::batch`]).
pub(crate) struct Batch {
    buf: Vec<u8>,
    first_seq: u64,
    /// As [`Pending`], with offsets into `buf`.
    entries: Vec<Pending>,
}

impl IntentLog {
    /// Opens the log in `state_dir` and returns it with the records numbered
    /// above `folded_seq`, oldest first. The caller folds them, durably, and
    /// then calls [`IntentLog::restart`]. A missing log is not created here:
    /// it holds no record, and it is created (preallocated, durably) by the
    /// first [`IntentLog::append`] — so a server that never writes never
    /// creates it. The file is read record by record, not whole: a scan ends
    /// at the first bytes that are not the next whole record (the zeros of
    /// the preallocation, usually at once).
    pub(crate) fn open(state_dir: &Path, state: LogState) -> io::Result<(Self, Vec<Record>)> {
        let LogState { folded_seq, salt } = state;
        let path = state_dir.join(LOG_FILE);
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let (len, scanned) = match &file {
            Some(f) => {
                let len = f.metadata()?.len();
                (len, read_records(f, len, &salt)?)
            }
            None => (0, Vec::new()),
        };
        let mut records = Vec::new();
        // Numbering goes on above every record the file can hold, not only
        // above the scanned prefix: a torn record may hide whole ones after
        // it, and a new record must never be numbered like one of them (a
        // stale record after it would then read as its successor). Every
        // record in the file was appended since the last durable fold —
        // which recorded `folded_seq` at least as high as the log's last
        // record then — or before it; each takes at least `HEADER` bytes.
        // The caller's fold records `last_seq()`, durably, before appending.
        // A missing log holds none.
        let room = len / HEADER as u64;
        let bound = folded_seq.saturating_add(room);
        let mut next_seq = bound.saturating_add(1);
        for record in scanned {
            next_seq = next_seq.max(record.seq + 1);
            if record.seq > folded_seq {
                records.push(record);
            }
        }
        let log = Self {
            path,
            capacity: if file.is_some() {
                len
            } else {
                INITIAL_CAPACITY
            },
            file,
            tail: 0,
            pending: Vec::new(),
            next_seq,
            salt,
        };
        Ok((log, records))
    }

    /// The log file, created (preallocated, durably) if it does not exist yet.
    fn file(&mut self) -> io::Result<&mut File> {
        if self.file.is_none() {
            self.file = Some(create(&self.path)?);
            self.capacity = self.capacity.max(INITIAL_CAPACITY);
        }
        Ok(self.file.as_mut().expect("created above"))
    }

    /// The log file's path (the helper thread syncs it).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes left after the tail before a restart (tests fill the log with it).
    #[cfg(test)]
    pub(crate) fn room(&self) -> u64 {
        self.capacity.saturating_sub(self.tail)
    }

    /// Records appended and not yet folded.
    pub(crate) fn unfolded(&self) -> usize {
        self.pending.len()
    }

    /// Encodes `heads` (with their pre-image bytes) as the next records.
    pub(crate) fn batch(&self, heads: &[(Head, Option<&[u8]>)]) -> io::Result<Batch> {
        let mut buf = Vec::new();
        let mut entries = Vec::with_capacity(heads.len());
        for (i, (head, bytes)) in heads.iter().enumerate() {
            let seq = self.next_seq + i as u64;
            let pre_at = encode(&mut buf, &self.salt, seq, head, *bytes)?;
            entries.push(Pending {
                seq,
                head: head.clone(),
                pre_at: pre_at.map(|at| (at as u64, bytes.map_or(0, <[u8]>::len))),
            });
        }
        Ok(Batch {
            buf,
            first_seq: self.next_seq,
            entries,
        })
    }

    /// Whether `batch` fits after the tail without a restart.
    pub(crate) fn fits(&self, batch: &Batch) -> bool {
        self.tail + batch.buf.len() as u64 <= self.capacity
    }

    /// Appends `batch` in one write, not synced. The caller has made room
    /// ([`IntentLog::fits`], else a durable fold and [`IntentLog::restart`]);
    /// a batch larger than the whole log grows it.
    pub(crate) fn append(&mut self, batch: Batch) -> io::Result<()> {
        if batch.first_seq != self.next_seq {
            return Err(io::Error::other("intent log: a batch out of sequence"));
        }
        let end = self.tail + batch.buf.len() as u64;
        if end > self.capacity {
            // Extended to a power of two, so later writes stay in place.
            let capacity = end.next_power_of_two();
            self.file()?.set_len(capacity)?;
            self.capacity = capacity;
        }
        let tail = self.tail;
        let file = self.file()?;
        file.seek(SeekFrom::Start(tail))?;
        file.write_all(&batch.buf)?;
        let at = self.tail;
        self.next_seq = batch.first_seq + batch.entries.len() as u64;
        self.pending.extend(batch.entries.into_iter().map(|mut e| {
            e.pre_at = e.pre_at.map(|(off, len)| (at + off, len));
            e
        }));
        self.tail = end;
        Ok(())
    }

    /// [`IntentLog::batch`] and [`IntentLog::append`].
    pub(crate) fn append_heads(&mut self, heads: &[(Head, Option<&[u8]>)]) -> io::Result<()> {
        let batch = self.batch(heads)?;
        self.append(batch)
    }

    /// The records appended and not yet folded. A pre-image's bytes are read
    /// back from the file only for an intent whose terminal record is not
    /// among them (the fold keeps only those).
    pub(crate) fn unfolded_records(&mut self) -> io::Result<Vec<Record>> {
        let terminals: std::collections::HashSet<&str> = self
            .pending
            .iter()
            .filter_map(|p| match &p.head {
                Head::Terminal { txn, .. } => Some(txn.as_str()),
                Head::Intent { .. } => None,
            })
            .collect();
        let mut wanted = Vec::new();
        for (i, p) in self.pending.iter().enumerate() {
            if let (Head::Intent { txn, .. }, Some(at)) = (&p.head, p.pre_at)
                && !terminals.contains(txn.as_str())
            {
                wanted.push((i, at));
            }
        }
        let mut bytes = std::collections::HashMap::new();
        for (i, (off, len)) in wanted {
            let mut b = vec![0u8; len];
            let file = self.file()?;
            file.seek(SeekFrom::Start(off))?;
            file.read_exact(&mut b)?;
            bytes.insert(i, b);
        }
        Ok(self
            .pending
            .iter()
            .enumerate()
            .map(|(i, p)| Record {
                seq: p.seq,
                head: p.head.clone(),
                pre_bytes: bytes.remove(&i),
            })
            .collect())
    }

    /// Everything appended is folded (not necessarily durably): the next fold
    /// starts at the tail.
    pub(crate) fn folded(&mut self) {
        self.pending.clear();
    }

    /// Everything appended is folded durably: the next record overwrites the
    /// log from its start.
    pub(crate) fn restart(&mut self) {
        self.tail = 0;
        self.pending.clear();
    }

    /// The sequence number of the last record appended (0: none yet).
    pub(crate) fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }
}

/// Creates the log zero-filled to [`INITIAL_CAPACITY`], durably (the file,
/// then its directory entry).
fn create(path: &Path) -> io::Result<File> {
    let mut file = godot_mcp_os::fs::create_mode(
        OpenOptions::new().read(true).write(true).create_new(true),
        0o600,
    )
    .open(path)?;
    file.write_all(&vec![0u8; INITIAL_CAPACITY as usize])?;
    file.sync_all()?;
    godot_mcp_os::fs::sync_dir(crate::durable::parent_dir(path))?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// Appends one record to `buf`; returns where its pre-image bytes start in
/// `buf`, if it has any.
fn encode(
    buf: &mut Vec<u8>,
    salt: &[u8; 16],
    seq: u64,
    head: &Head,
    bytes: Option<&[u8]>,
) -> io::Result<Option<usize>> {
    let json = serde_json::to_vec(head).map_err(io::Error::other)?;
    let payload_len = 4 + json.len() + bytes.map_or(0, <[u8]>::len);
    let payload_len =
        u32::try_from(payload_len).map_err(|_| io::Error::other("intent log record over 4 GiB"))?;
    let start = buf.len();
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&seq.to_le_bytes());
    buf.extend_from_slice(&payload_len.to_le_bytes());
    buf.extend_from_slice(&[0u8; 16]);
    buf.extend_from_slice(&(json.len() as u32).to_le_bytes());
    buf.extend_from_slice(&json);
    let pre_at = bytes.map(|bytes| {
        let at = buf.len();
        buf.extend_from_slice(bytes);
        at
    });
    let hash = record_hash(salt, &buf[start + 4..start + 16], &buf[start + HEADER..]);
    buf[start + 16..start + HEADER].copy_from_slice(&hash);
    Ok(pre_at)
}

fn record_hash(salt: &[u8; 16], seq_and_len: &[u8], payload: &[u8]) -> [u8; 16] {
    let mut h = Sha256::new();
    h.update(salt);
    h.update(seq_and_len);
    h.update(payload);
    let digest = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// The whole records at the start of `bytes`, each numbered one more than the
/// one before (see the module documentation).
/// The whole records at the start of `file` (`len` bytes), each numbered one
/// more than the one before, read one at a time: the scan stops at the first
/// one that is not whole, without reading what follows it.
fn read_records(mut file: &File, len: u64, salt: &[u8; 16]) -> io::Result<Vec<Record>> {
    file.seek(SeekFrom::Start(0))?;
    let mut records = Vec::new();
    let mut at = 0u64;
    let mut expect: Option<u64> = None;
    let mut buf = vec![0u8; HEADER];
    loop {
        if len.saturating_sub(at) < HEADER as u64 {
            break;
        }
        buf.resize(HEADER, 0);
        file.read_exact(&mut buf)?;
        if &buf[..4] != MAGIC {
            break;
        }
        let payload = u64::from(u32::from_le_bytes(buf[12..16].try_into().expect("4 bytes")));
        if payload > len - at - HEADER as u64 {
            break;
        }
        buf.resize(HEADER + payload as usize, 0);
        file.read_exact(&mut buf[HEADER..])?;
        let Some((record, used)) = decode(&buf, salt) else {
            break;
        };
        if expect.is_some_and(|e| e != record.seq) {
            break;
        }
        expect = Some(record.seq + 1);
        at += used as u64;
        records.push(record);
    }
    Ok(records)
}

/// One whole record at the start of `bytes`, and its length.
fn decode(bytes: &[u8], salt: &[u8; 16]) -> Option<(Record, usize)> {
    if bytes.len() < HEADER || &bytes[..4] != MAGIC {
        return None;
    }
    let seq = u64::from_le_bytes(bytes[4..12].try_into().ok()?);
    let len = u32::from_le_bytes(bytes[12..16].try_into().ok()?) as usize;
    let payload = bytes.get(HEADER..HEADER.checked_add(len)?)?;
    if record_hash(salt, &bytes[4..16], payload) != bytes[16..HEADER] {
        return None;
    }
    let json_len = u32::from_le_bytes(payload.get(..4)?.try_into().ok()?) as usize;
    let json = payload.get(4..4usize.checked_add(json_len)?)?;
    let head: Head = serde_json::from_slice(json).ok()?;
    let rest = &payload[4 + json_len..];
    let pre_bytes = match &head {
        Head::Intent {
            pre: Some(PreHead { kept: true, .. }),
            ..
        } => Some(rest.to_vec()),
        _ if rest.is_empty() => None,
        _ => return None,
    };
    Some((
        Record {
            seq,
            head,
            pre_bytes,
        },
        HEADER + len,
    ))
}

/// What the database knows of its log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LogState {
    /// The last sequence number folded.
    pub folded_seq: u64,
    /// Random, drawn with the database and hashed into every record, so a
    /// log is never read with another database (an operator who moves the
    /// database aside and starts afresh leaves the old log unreadable, not
    /// folded into the new journal).
    pub salt: [u8; 16],
}

/// The database's `LogState`.
pub(crate) fn log_state(conn: &Connection) -> rusqlite::Result<LogState> {
    conn.query_row(
        "SELECT folded_seq, salt FROM log_state WHERE id = 1",
        [],
        |r| {
            let salt: Vec<u8> = r.get(1)?;
            Ok(LogState {
                folded_seq: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                salt: salt.try_into().map_err(|_| rusqlite::Error::InvalidQuery)?,
            })
        },
    )
}

/// Folds `records` into `transactions` (and `preimages`) inside the caller's
/// SQLite transaction and records `last_seq` as folded.
///
/// - An intent with a terminal record among `records` becomes one terminal
///   `transactions` row; its pre-image is retained only if that state is not
///   proven (`quarantined`), as `record_terminal` would have left it.
/// - An intent without one becomes an `open` row with its pre-image retained.
/// - A terminal record whose intent was folded earlier (an `open` row) is
///   recorded on that row, releasing its pre-image when proven.
pub(crate) fn fold(conn: &Connection, records: &[Record], last_seq: u64) -> rusqlite::Result<()> {
    let mut terminals: std::collections::HashMap<&str, &Head> = Default::default();
    for r in records {
        if let Head::Terminal { txn, .. } = &r.head {
            terminals.insert(txn.as_str(), &r.head);
        }
    }
    for r in records {
        let Head::Intent {
            txn,
            object_id,
            generation,
            operation,
            tool_family,
            intent_json,
            idem,
            created_at_ms,
            pre,
        } = &r.head
        else {
            continue;
        };
        let (state, proof_json, reason, at_ms) = match terminals.remove(txn.as_str()) {
            Some(Head::Terminal {
                state,
                proof_json,
                reason,
                at_ms,
                ..
            }) => (
                state.as_str(),
                proof_json.as_deref(),
                reason.as_deref(),
                Some(*at_ms),
            ),
            _ => (TxnStatus::Open.as_str(), None, None, None),
        };
        let idem = idem.as_ref();
        conn.prepare_cached(
            "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                 operation, tool_family, state, intent_json, proof_json, reason, parent_txn,
                 idem_id, idem_principal, idem_session, idem_request_hash, created_at_ms,
                 terminal_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, NULL, ?11, ?12, ?13, ?14, ?15, ?16)",
        )?
        .execute(params![
            txn,
            object_id,
            generation,
            EffectKind::File.as_str(),
            operation,
            tool_family,
            state,
            intent_json,
            proof_json,
            reason,
            idem.map(|k| &k[0]),
            idem.map(|k| &k[1]),
            idem.map(|k| &k[2]),
            idem.map(|k| &k[3]),
            created_at_ms,
            at_ms,
        ])?;
        let proven = matches!(
            TxnStatus::parse(state),
            Some(TxnStatus::Committed | TxnStatus::Compensated)
        );
        if let (false, Some(pre)) = (proven, pre) {
            conn.prepare_cached(
                "INSERT INTO preimages (txn_id, size, mode, sha256, bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![txn, pre.size, pre.mode, pre.sha256, r.pre_bytes])?;
        }
    }
    // Terminal records of intents folded by an earlier fold.
    for (txn, head) in terminals {
        let Head::Terminal {
            state,
            proof_json,
            reason,
            at_ms,
            ..
        } = head
        else {
            continue;
        };
        let (Ok(id), Some(to)) = (txn.parse::<TxnId>(), TxnStatus::parse(state)) else {
            return Err(rusqlite::Error::InvalidQuery);
        };
        let changed = conn
            .prepare_cached(
                "UPDATE transactions SET state = ?2, proof_json = ?3, reason = ?4,
                     terminal_at_ms = ?5
                 WHERE id = ?1 AND state = 'open'",
            )?
            .execute(params![txn, state, proof_json, reason, at_ms])?;
        if changed != 1 {
            return Err(rusqlite::Error::QueryReturnedNoRows);
        }
        crate::preimage::release_if_proven(conn, id, to)?;
    }
    conn.prepare_cached("UPDATE log_state SET folded_seq = ?1 WHERE id = 1")?
        .execute([i64::try_from(last_seq).unwrap_or(i64::MAX)])?;
    Ok(())
}

#[cfg(test)]
mod tests;
