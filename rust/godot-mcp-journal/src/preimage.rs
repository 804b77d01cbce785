//! Pre-images: the bytes a `file` transaction overwrote or deleted, retained in
//! the journal so `transaction repair … compensate` can restore them byte-exact.
//!
//! # Lifecycle and bound
//!
//! - Captured in the intent's own record (so it is durable before the effect,
//!   by the same fsync, at no extra fsync), for every overwrite and delete
//!   whose target exists: in the intent log first, moved here when the log is
//!   folded with the transaction still unresolved (see `intent_log`; a
//!   transaction folded already proven never needs it here).
//! - Bounded: a target of at most [`MAX_PREIMAGE_BYTES`] (4 MiB) is retained
//!   whole; a larger one is recorded by size only, and compensating that
//!   transaction is refused with that reason (the bytes must come from
//!   elsewhere, e.g. version control). The bytes are those of the
//!   transaction's one read of the target, the read its pre-state hash comes
//!   from, so the two always agree (no second read that could differ).
//! - Released (the row deleted) in the same SQLite transaction that records the
//!   transaction `committed` or `compensated` — terminal and proven. A
//!   `quarantined` transaction keeps its pre-image until repair resolves it.

use rusqlite::{Connection, OptionalExtension};

use crate::ids::{ContentHash, FileState, TxnId, TxnStatus};

/// The most bytes of pre-images one change retains in sum (each file's pre-image
/// is its bytes before the change: every file it overwrites or deletes). A
/// change past it is refused before anything is recorded or written
/// ([`crate::change::ChangeError::TooLarge`]); the journal holds them in one SQLite transaction
/// and in memory while the change runs. See docs/recovery.md.
pub const MAX_CHANGE_PREIMAGE_BYTES: u64 = 256 * 1024 * 1024;

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
