//! Pre-images: the bytes a `file` transaction overwrote or deleted, retained in
//! the journal so `transaction repair … compensate` can restore them byte-exact.
//!
//! # Lifecycle and bound
//!
//! - Captured in the same SQLite transaction as the intent (so it is durable
//!   before the effect, by the same WAL fsync, at no extra fsync), for every
//!   overwrite and delete whose target exists.
//! - Bounded: a target of at most [`MAX_PREIMAGE_BYTES`] (4 MiB) is retained
//!   whole; a larger one is recorded by size only, and compensating that
//!   transaction is refused with that reason (the bytes must come from
//!   elsewhere, e.g. version control). A target that changed between the
//!   pre-state read and the capture is not retained either (the write will
//!   find it changed and settle as not applied).
//! - Released (the row deleted) in the same SQLite transaction that records the
//!   transaction `committed` or `compensated` — terminal and proven. A
//!   `quarantined` transaction keeps its pre-image until repair resolves it.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::ids::{ContentHash, FileState, TxnId, TxnStatus};

/// The largest pre-image retained whole, in bytes (4 MiB). Project text
/// resources and scenes are far below it; larger binaries are what version
/// control is for.
pub const MAX_PREIMAGE_BYTES: u64 = 4 * 1024 * 1024;

/// A retained pre-image, as repair reads it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retained {
    /// Nothing was retained (the target was absent, changed under the capture,
    /// or the transaction was written by a build without pre-images).
    None,
    /// The target was larger than [`MAX_PREIMAGE_BYTES`]: only its size is known.
    OverBound {
        /// Its size in bytes.
        size: u64,
    },
    /// The exact bytes and permission bits.
    Bytes {
        /// The bytes.
        bytes: Vec<u8>,
        /// The permission bits (`st_mode & 0o7777`).
        mode: u32,
    },
}

/// Captures the pre-image of `target` for `txn` (inside the intent's SQLite
/// transaction). `pre` is the state the transaction recorded; bytes that do not
/// hash to it are not retained.
pub(crate) fn retain(
    conn: &Connection,
    txn: TxnId,
    target: &Path,
    pre: FileState,
) -> rusqlite::Result<()> {
    let FileState::Present { sha256 } = pre else {
        return Ok(());
    };
    let Ok(mut file) = File::open(target) else {
        return Ok(());
    };
    let Ok(meta) = file.metadata() else {
        return Ok(());
    };
    let mode = meta.permissions().mode() & 0o7777;
    let bytes = if meta.len() > MAX_PREIMAGE_BYTES {
        None
    } else {
        let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        if (&mut file)
            .take(MAX_PREIMAGE_BYTES + 1)
            .read_to_end(&mut buf)
            .is_err()
            || buf.len() as u64 > MAX_PREIMAGE_BYTES
            || ContentHash::of(&buf) != sha256
        {
            return Ok(());
        }
        Some(buf)
    };
    conn.prepare_cached(
        "INSERT INTO preimages (txn_id, size, mode, sha256, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        txn.to_string(),
        meta.len() as i64,
        mode,
        sha256.to_string(),
        bytes
    ])?;
    Ok(())
}

/// Releases `txn`'s pre-image once it is recorded terminal and proven
/// (`committed` or `compensated`); called in the recording SQLite transaction.
pub(crate) fn release_if_proven(
    conn: &Connection,
    txn: TxnId,
    to: TxnStatus,
) -> rusqlite::Result<()> {
    if matches!(to, TxnStatus::Committed | TxnStatus::Compensated) {
        conn.prepare_cached("DELETE FROM preimages WHERE txn_id = ?1")?
            .execute([txn.to_string()])?;
    }
    Ok(())
}

/// Releases every pre-image whose row is already committed or compensated. The live
/// write records the terminal row and releases its pre-image as two autocommit
/// statements (neither with its own fsync), so a crash between them can leave the bytes
/// of a proven row behind; opening the journal drops them. Rows still open or
/// quarantined keep theirs: compensate may need them.
pub(crate) fn sweep_released(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM preimages WHERE txn_id IN
             (SELECT id FROM transactions WHERE state IN ('committed', 'compensated'))",
        [],
    )
}

/// The pre-image retained for `txn`, checked against the recorded `pre` hash.
pub(crate) fn load(conn: &Connection, txn: TxnId, pre: FileState) -> rusqlite::Result<Retained> {
    let row: Option<(i64, i64, String, Option<Vec<u8>>)> = conn
        .query_row(
            "SELECT size, mode, sha256, bytes FROM preimages WHERE txn_id = ?1",
            [txn.to_string()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((size, mode, sha, bytes)) = row else {
        return Ok(Retained::None);
    };
    let FileState::Present { sha256 } = pre else {
        return Ok(Retained::None);
    };
    match bytes {
        None => Ok(Retained::OverBound {
            size: u64::try_from(size).unwrap_or(0),
        }),
        // A row whose bytes do not hash to the recorded pre-state proves nothing.
        Some(b) if sha == sha256.to_string() && ContentHash::of(&b) == sha256 => {
            Ok(Retained::Bytes {
                bytes: b,
                mode: u32::try_from(mode).unwrap_or(0o644) & 0o7777,
            })
        }
        Some(_) => Ok(Retained::None),
    }
}

/// How many pre-images the journal holds, and their bytes (for tests and
/// status output).
pub fn retained_count(conn: &Connection) -> rusqlite::Result<(usize, u64)> {
    conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(bytes)), 0) FROM preimages",
        [],
        |r| {
            Ok((
                usize::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
            ))
        },
    )
}
