//! The SQLite schema and its migrations, versioned by `PRAGMA user_version`.
//!
//! One table, `transactions`, holds every transaction of every effect kind. Its
//! `intent_json` and `proof_json` are tagged by effect kind (`{"kind":"file",…}`)
//! so the process-launch and editor-runtime executors plug in without a second
//! journal; `parent_txn` links a composite's sub-transactions to it. Repairs are
//! appended to `repairs`, so the transition an operator recorded stays visible.

use rusqlite::Connection;

/// One schema step.
enum Migration {
    /// SQL run as one batch.
    Sql(&'static str),
    /// Rewrites the `CHECK` constraints of `transactions` in place (see
    /// [`CHECKS_AS_COMPARISONS`]).
    ChecksAsComparisons,
}

/// The `transactions` table's `CHECK (x IN (…))` constraints, each with an
/// equivalent chain of comparisons. SQLite evaluates a constant `IN` list of
/// three or more values through an ephemeral index it builds and frees on every
/// INSERT and UPDATE (a pager, its page cache, and the allocator returning the
/// memory to the system each time); profiled, that was the largest single
/// cost of a journaled write's SQLite work. Equality chains accept exactly the
/// same rows and need no such index. Existing rows already satisfy them, so the
/// stored definition is rewritten in place (SQLite's documented procedure for
/// constraint changes that do not touch the stored rows) instead of rebuilding
/// the table.
const CHECKS_AS_COMPARISONS: [(&str, &str); 2] = [
    (
        "CHECK (effect_kind IN ('file', 'process_launch', 'editor_runtime'))",
        "CHECK (effect_kind = 'file' OR effect_kind = 'process_launch' OR effect_kind = 'editor_runtime')",
    ),
    (
        "CHECK (state IN ('open', 'compensated', 'committed', 'quarantined'))",
        "CHECK (state = 'open' OR state = 'compensated' OR state = 'committed' OR state = 'quarantined')",
    ),
];

/// Each migration takes the schema from version `index` to `index + 1`.
const MIGRATIONS: &[Migration] = &[
    // 0 -> 1
    Migration::Sql(
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
    ),
    // 1 -> 2: pre-images of overwrites and deletes (see `preimage`), bounded,
    // released once their transaction is terminal and proven.
    Migration::Sql(
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
    ),
    // 2 -> 3: the same constraints, as comparisons (see CHECKS_AS_COMPARISONS).
    Migration::ChecksAsComparisons,
    // 3 -> 4: the intent log's fold marker (see `intent_log`).
    Migration::Sql(crate::intent_log::CREATE),
    // 4 -> 5: the pre-images of a change's files (see `change`).
    Migration::Sql(CHANGE_PREIMAGES),
];

/// The table of a change's pre-images (one row per file that existed), created
/// by the schema migration 4 -> 5. Released with the change once it is
/// terminal and proven; kept while it is open or quarantined.
const CHANGE_PREIMAGES: &str = r#"
    CREATE TABLE change_preimages (
        txn_id  TEXT NOT NULL REFERENCES transactions(id),
        idx     INTEGER NOT NULL,
        mode    INTEGER NOT NULL,
        sha256  TEXT NOT NULL,
        bytes   BLOB NOT NULL,
        PRIMARY KEY (txn_id, idx)
    ) STRICT;
"#;

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
    /// Creating the journal's file failed.
    #[error("journal creation failed: {0}")]
    Io(std::io::Error),
    /// The journal's schema is not the one this build's migrations expect.
    #[error("journal migration failed: unexpected schema: {detail}")]
    UnexpectedSchema {
        /// What did not match.
        detail: String,
    },
}

/// Sets the durability pragmas and applies the pending migrations, all in one
/// transaction together with the `user_version` bump.
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
    migrate(conn, found)
}

/// Applies the migrations after version `found`, all in one transaction
/// together with the `user_version` bump: an upgrade is all or nothing.
fn migrate(conn: &mut Connection, found: i64) -> Result<(), MigrateError> {
    if found == CURRENT_VERSION {
        return Ok(());
    }
    let tx = conn.transaction()?;
    for step in MIGRATIONS.iter().skip(found.max(0) as usize) {
        match step {
            Migration::Sql(sql) => tx.execute_batch(sql)?,
            Migration::ChecksAsComparisons => rewrite_checks(&tx)?,
        }
    }
    tx.pragma_update(None, "user_version", CURRENT_VERSION)?;
    tx.commit()?;
    Ok(())
}

/// A new journal as [`create`] builds it (WAL mode, every migration, the
/// whole database in the one file), with the intent log's salt
/// [`SALT_PLACEHOLDER`]: what a new journal is written from
/// ([`new_journal`]), so a first start runs no SQL to build one. SQLite
/// building it took 2.2 million instructions, nearly half of a first start's
/// (callgrind). `the_bundled_new_journal_is_what_create_builds` fails when it
/// differs from what [`create`] builds with this build's SQLite and
/// migrations, and `INSTA_UPDATE=always cargo test -p godot-mcp-journal --lib
/// the_bundled_new_journal` rewrites it.
const NEW_JOURNAL: &[u8] = include_bytes!("new_journal.sqlite3");

/// The salt [`NEW_JOURNAL`] holds in its `log_state` row, once in the file.
const SALT_PLACEHOLDER: [u8; 16] = *b"godot-mcp salt \0";

/// The bytes of a new journal: [`NEW_JOURNAL`] with a random salt in its
/// `log_state` row (the bytes of a blob are stored as they are, and SQLite
/// keeps no checksum of a page).
pub(crate) fn new_journal() -> std::io::Result<Vec<u8>> {
    let mut bytes = NEW_JOURNAL.to_vec();
    // From the end: the row is in the last pages (SQLite fills a page from its
    // end), and the scan from the start cost 0.3 million instructions.
    let at = bytes
        .windows(SALT_PLACEHOLDER.len())
        .rposition(|w| w == SALT_PLACEHOLDER)
        .ok_or_else(|| std::io::Error::other("the bundled new journal holds no salt"))?;
    bytes[at..at + SALT_PLACEHOLDER.len()].copy_from_slice(&crate::ids::random_bytes::<16>()?);
    Ok(bytes)
}

/// Builds a new journal at `path` (which must not exist): WAL mode, every
/// migration, no SQLite sync (`synchronous=OFF`, no rollback journal), then
/// closed, so the whole database is in the one file (no WAL left). What
/// [`NEW_JOURNAL`] was built by.
#[cfg(test)]
pub(crate) fn create(path: &std::path::Path) -> Result<(), MigrateError> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "journal_mode", "OFF")?;
    migrate(&mut conn, 0)?;
    // Last: the header's WAL flag, written in place (no journal).
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
    debug_assert_eq!(mode, "off");
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| {
        let mode: String = r.get(0)?;
        if mode == "wal" {
            Ok(())
        } else {
            Err(rusqlite::Error::InvalidQuery)
        }
    })?;
    conn.close().map_err(|(_, e)| e)?;
    let wal = path.with_file_name(format!(
        "{}-wal",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    ));
    match std::fs::metadata(&wal) {
        Ok(m) if m.len() > 0 => Err(MigrateError::UnexpectedSchema {
            detail: format!("{} left after the journal was built", wal.display()),
        }),
        _ => Ok(()),
    }
}

/// Replaces each `CHECK … IN (…)` of `transactions` by its comparison chain in
/// the stored definition (inside the caller's transaction), then bumps the
/// schema version so every connection re-reads it. A definition that does not
/// hold exactly the expected constraints is an error: nothing is changed.
fn rewrite_checks(tx: &rusqlite::Transaction<'_>) -> Result<(), MigrateError> {
    let sql: String = tx.query_row(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'transactions'",
        [],
        |r| r.get(0),
    )?;
    let mut rewritten = sql.clone();
    for (from, to) in CHECKS_AS_COMPARISONS {
        if rewritten.matches(from).count() != 1 {
            return Err(MigrateError::UnexpectedSchema {
                detail: format!("transactions does not hold exactly one {from}"),
            });
        }
        rewritten = rewritten.replacen(from, to, 1);
    }
    let schema_version: i64 = tx.pragma_query_value(None, "schema_version", |r| r.get(0))?;
    tx.pragma_update(None, "writable_schema", true)?;
    let updated = tx.execute(
        "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = 'transactions'",
        [&rewritten],
    );
    let bumped = tx.pragma_update(None, "schema_version", schema_version + 1);
    let off = tx.pragma_update(None, "writable_schema", false);
    if updated? != 1 {
        return Err(MigrateError::UnexpectedSchema {
            detail: "transactions definition not updated".into(),
        });
    }
    bumped?;
    off?;
    let check: String = tx.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(MigrateError::UnexpectedSchema {
            detail: format!("integrity_check after the rewrite: {check}"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_version(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn migrations_are_idempotent_and_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        for _ in 0..2 {
            let mut conn = Connection::open(&path).unwrap();
            prepare(&mut conn).unwrap();
            assert_eq!(user_version(&conn), CURRENT_VERSION);
            let mode: String = conn
                .pragma_query_value(None, "journal_mode", |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "wal");
        }
    }

    fn opcodes(conn: &Connection, sql: &str) -> Vec<String> {
        let mut st = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
        st.query_map([], |r| r.get::<_, String>(1))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Guards against: the `CHECK … IN (…)` constraints coming back (migration
    /// 2 -> 3 removed), which makes every intent INSERT and terminal UPDATE
    /// build and free an ephemeral index — the largest SQLite cost of a write.
    #[test]
    fn the_write_statements_build_no_ephemeral_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("j.sqlite3")).unwrap();
        prepare(&mut conn).unwrap();
        let insert = "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                          operation, tool_family, state, intent_json, created_at_ms)
                      VALUES ('t', 'o', 1, 'file', 'write', 'f', 'open', '{}', 0)";
        let update = "UPDATE transactions SET state = 'committed', proof_json = '{}'
                      WHERE id = 't' AND state = 'open'";
        for sql in [insert, update] {
            let ops = opcodes(&conn, sql);
            assert!(!ops.is_empty());
            assert!(
                !ops.iter().any(|op| op == "OpenEphemeral"),
                "{sql}: {ops:?}"
            );
        }
    }

    /// Guards against: the in-place rewrite losing rows or constraints when a
    /// version-2 journal (written by the previous build) is opened.
    #[test]
    fn a_version_2_journal_keeps_its_rows_and_constraints() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            for step in &MIGRATIONS[..2] {
                let Migration::Sql(sql) = step else {
                    panic!("the first two migrations are SQL")
                };
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 2).unwrap();
            conn.execute(
                "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                     operation, tool_family, state, intent_json, created_at_ms)
                 VALUES ('t', 'o', 1, 'file', 'write', 'f', 'open', '{}', 0)",
                [],
            )
            .unwrap();
        }
        let mut conn = Connection::open(&path).unwrap();
        prepare(&mut conn).unwrap();
        assert_eq!(user_version(&conn), CURRENT_VERSION);
        let state: String = conn
            .query_row("SELECT state FROM transactions WHERE id = 't'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(state, "open");
        let bad_state = conn.execute("UPDATE transactions SET state = 'done' WHERE id = 't'", []);
        assert!(
            bad_state.is_err_and(|e| e.to_string().contains("CHECK constraint failed")),
            "state is still constrained"
        );
        let bad_kind = conn.execute(
            "INSERT INTO transactions (id, project_object_id, generation, effect_kind,
                 operation, tool_family, state, intent_json, created_at_ms)
             VALUES ('u', 'o', 1, 'socket', 'write', 'f', 'open', '{}', 0)",
            [],
        );
        assert!(
            bad_kind.is_err_and(|e| e.to_string().contains("CHECK constraint failed")),
            "effect_kind is still constrained"
        );
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE name = 'transactions'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!sql.contains(" IN ("), "{sql}");
    }

    /// Guards against: a bundled new journal that is not what `create` builds
    /// with this build's SQLite and migrations (a migration added, SQLite
    /// updated): the file `create` leaves, its random salt replaced by the
    /// placeholder, byte for byte. `INSTA_UPDATE=always` rewrites it.
    #[test]
    fn the_bundled_new_journal_is_what_create_builds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.sqlite3");
        create(&path).unwrap();
        let mut built = std::fs::read(&path).unwrap();
        let salt: Vec<u8> = Connection::open(&path)
            .unwrap()
            .query_row("SELECT salt FROM log_state", [], |r| r.get(0))
            .unwrap();
        let found: Vec<usize> = built
            .windows(salt.len())
            .enumerate()
            .filter(|(_, w)| *w == salt.as_slice())
            .map(|(i, _)| i)
            .collect();
        assert_eq!(found.len(), 1, "the salt is in the file once");
        built[found[0]..found[0] + salt.len()].copy_from_slice(&SALT_PLACEHOLDER);
        let placeholders = built
            .windows(SALT_PLACEHOLDER.len())
            .filter(|w| *w == SALT_PLACEHOLDER)
            .count();
        assert_eq!(placeholders, 1);
        if built == NEW_JOURNAL {
            return;
        }
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/new_journal.sqlite3");
        if matches!(
            std::env::var("INSTA_UPDATE").as_deref(),
            Ok("always" | "force")
        ) {
            std::fs::write(&file, &built).unwrap();
            return;
        }
        panic!(
            "{} is not what this build's create() builds; regenerate it with \
             INSTA_UPDATE=always cargo test -p godot-mcp-journal --lib the_bundled_new_journal",
            file.display()
        );
    }

    /// Guards against: a new journal (the bundled one with its salt drawn, and
    /// what `create` builds) differing from one migrated step by step: same
    /// schema, same version, WAL mode, its `log_state` row there with a salt of
    /// its own; and a salt drawn once for every new journal.
    #[test]
    fn a_new_journal_is_the_migrated_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut salts = Vec::new();
        for (i, bytes) in [new_journal().unwrap(), new_journal().unwrap()]
            .into_iter()
            .enumerate()
        {
            let path = dir.path().join(format!("n{i}.sqlite3"));
            std::fs::write(&path, bytes).unwrap();
            let conn = Connection::open(&path).unwrap();
            let check: String = conn
                .pragma_query_value(None, "integrity_check", |r| r.get(0))
                .unwrap();
            assert_eq!(check, "ok");
            a_journal_is_the_migrated_one(dir.path(), &path);
            let salt: Vec<u8> = conn
                .query_row("SELECT salt FROM log_state", [], |r| r.get(0))
                .unwrap();
            assert_ne!(salt, SALT_PLACEHOLDER);
            salts.push(salt);
        }
        assert_ne!(salts[0], salts[1], "each new journal draws its salt");
        let path = dir.path().join("c.sqlite3");
        create(&path).unwrap();
        a_journal_is_the_migrated_one(dir.path(), &path);
    }

    /// Asserts the journal at `path`, opened as it is (no `prepare`, which
    /// would migrate it), has the schema, version, mode and `log_state` row of
    /// one migrated step by step (built in `dir`).
    fn a_journal_is_the_migrated_one(dir: &std::path::Path, path: &std::path::Path) {
        let schema_of = |conn: &Connection| -> Vec<String> {
            let mut st = conn
                .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        let migrated_path = dir.join("m.sqlite3");
        let _ = std::fs::remove_file(&migrated_path);
        let mut migrated = Connection::open(&migrated_path).unwrap();
        prepare(&mut migrated).unwrap();
        let created = Connection::open(path).unwrap();
        assert_eq!(schema_of(&created), schema_of(&migrated));
        assert_eq!(user_version(&created), CURRENT_VERSION);
        let mode: String = created
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let rows: i64 = created
            .query_row("SELECT COUNT(*) FROM log_state", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1);
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
