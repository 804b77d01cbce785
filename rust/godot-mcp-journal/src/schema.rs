//! The SQLite schema and its migrations, versioned by `PRAGMA user_version`.
//!
//! One table, `transactions`, holds every transaction of every effect kind. Its
//! `intent_json` and `proof_json` are tagged by effect kind (`{"kind":"file",…}`)
//! so the process-launch and editor-runtime executors plug in without a second
//! journal; `parent_txn` links a composite's sub-transactions to it. Repairs are
//! appended to `repairs`, so the transition an operator recorded stays visible.

use rusqlite::Connection;

/// Each migration takes the schema from version `index` to `index + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1
    r#"
    CREATE TABLE transactions (
        id                TEXT PRIMARY KEY NOT NULL,
        project_object_id TEXT NOT NULL,
        generation        INTEGER NOT NULL,
        effect_kind       TEXT NOT NULL
            CHECK (effect_kind IN ('file', 'process_launch', 'editor_runtime')),
        operation         TEXT NOT NULL,
        tool_family       TEXT NOT NULL,
        state             TEXT NOT NULL
            CHECK (state IN ('open', 'compensated', 'committed', 'quarantined')),
        intent_json       TEXT NOT NULL,
        proof_json        TEXT,
        reason            TEXT,
        parent_txn        TEXT REFERENCES transactions(id),
        idem_id           TEXT UNIQUE,
        idem_principal    TEXT,
        idem_session      TEXT,
        idem_request_hash TEXT,
        created_at_ms     INTEGER NOT NULL,
        terminal_at_ms    INTEGER,
        -- a terminal row always has its proof or its reason
        CHECK (state = 'open' OR proof_json IS NOT NULL OR reason IS NOT NULL),
        CHECK (state <> 'quarantined' OR reason IS NOT NULL)
    ) STRICT;
    CREATE INDEX transactions_unresolved ON transactions(state)
        WHERE state IN ('open', 'quarantined');
    CREATE INDEX transactions_parent ON transactions(parent_txn)
        WHERE parent_txn IS NOT NULL;
    CREATE TABLE repairs (
        seq          INTEGER PRIMARY KEY,
        txn_id       TEXT NOT NULL REFERENCES transactions(id),
        operation    TEXT NOT NULL,
        from_state   TEXT NOT NULL,
        to_state     TEXT NOT NULL,
        proof_json   TEXT NOT NULL,
        at_ms        INTEGER NOT NULL
    ) STRICT;
    "#,
    // 1 -> 2: pre-images of overwrites and deletes (see `preimage`), bounded,
    // released once their transaction is terminal and proven.
    r#"
    CREATE TABLE preimages (
        txn_id  TEXT PRIMARY KEY NOT NULL REFERENCES transactions(id),
        size    INTEGER NOT NULL,
        mode    INTEGER NOT NULL,
        sha256  TEXT NOT NULL,
        -- NULL: larger than the bound, only its size is recorded
        bytes   BLOB
    ) STRICT;
    "#,
];

/// The schema version this build writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// The database could not be brought to the current schema.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// The journal was written by a newer build; refusing beats guessing.
    #[error("journal schema version {found} is newer than this build's {supported}")]
    TooNew {
        /// The version on disk.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// SQLite failed.
    #[error("journal migration failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Sets the durability pragmas and applies pending migrations, each in its own
/// transaction together with its `user_version` bump.
pub fn prepare(conn: &mut Connection) -> Result<(), MigrateError> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > CURRENT_VERSION {
        return Err(MigrateError::TooNew {
            found,
            supported: CURRENT_VERSION,
        });
    }
    for (version, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_idempotent_and_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        for _ in 0..2 {
            let mut conn = Connection::open(&path).unwrap();
            prepare(&mut conn).unwrap();
            let v: i64 = conn
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .unwrap();
            assert_eq!(v, CURRENT_VERSION);
            let mode: String = conn
                .pragma_query_value(None, "journal_mode", |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "wal");
        }
    }

    #[test]
    fn a_newer_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        let mut conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", CURRENT_VERSION + 1)
            .unwrap();
        assert!(matches!(
            prepare(&mut conn),
            Err(MigrateError::TooNew { .. })
        ));
    }
}
