use super::*;
use crate::ids::ContentHash;
use rusqlite::OptionalExtension;

fn identity(dir: &Path) -> ProjectIdentity {
    ProjectIdentity {
        object_id: "obj".into(),
        generation: 3,
        canonical_path: dir.to_path_buf(),
        dev: 0,
        ino: 0,
    }
}

fn intent<'a>(txn: TxnId, pre: &'a [u8]) -> LoggedIntent<'a> {
    LoggedIntent {
        txn,
        operation: "write",
        tool_family: "test",
        intent_json: r#"{"kind":"file"}"#,
        idem: None,
        pre_image: Some((pre, 0o640)),
        pre: FileState::of(pre),
    }
}

fn txns<const N: usize>() -> [TxnId; N] {
    [(); N].map(|()| TxnId::random().unwrap())
}

const SALT: [u8; 16] = [5; 16];

fn at(folded_seq: u64) -> LogState {
    LogState {
        folded_seq,
        salt: SALT,
    }
}

fn reopen(dir: &Path, folded: u64) -> Vec<Record> {
    IntentLog::open(dir, at(folded)).unwrap().1
}

/// Flips a byte of the record at `offset` in the log of `dir`: torn.
fn tear(dir: &Path, offset: u64) {
    let path = dir.join(LOG_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset as usize + HEADER + 6] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
}

/// A new, empty log in a temp dir, and the identity its intents are for.
fn new_log() -> (tempfile::TempDir, ProjectIdentity, IntentLog) {
    let dir = tempfile::tempdir().unwrap();
    let id = identity(dir.path());
    let (log, none) = IntentLog::open(dir.path(), at(0)).unwrap();
    assert!(none.is_empty());
    (dir, id, log)
}

/// Guards against: a record that does not read back as written (head,
/// pre-image bytes, sequence), or a log that forgets its records at open.
#[test]
fn records_read_back_as_appended_after_a_reopen() {
    let (dir, id, mut log) = new_log();
    let [a, b] = txns();
    let first = intent(a, b"old bytes").head(&id);
    let second = (terminal(a, TxnStatus::Committed, Some("{}".into())), None);
    let third = intent(b, b"").head(&id);
    log.append_heads(std::slice::from_ref(&first)).unwrap();
    log.append_heads(&[second.clone(), third.clone()]).unwrap();
    assert_eq!(log.unfolded(), 3);
    assert_eq!(log.last_seq(), 3);
    let read = log.unfolded_records().unwrap();
    drop(log);
    let reopened = reopen(dir.path(), 0);
    let seq_heads = |rs: &[Record]| -> Vec<(u64, Head)> {
        rs.iter().map(|r| (r.seq, r.head.clone())).collect()
    };
    assert_eq!(seq_heads(&read), seq_heads(&reopened));
    // Read back for a fold: a pre-image only where the fold keeps it
    // (the intent without its terminal record).
    assert_eq!(read[0].pre_bytes, None);
    assert_eq!(read[2].pre_bytes.as_deref(), Some(&b""[..]));
    let heads = seq_heads(&reopened);
    assert_eq!(heads, [(1, first.0), (2, second.0), (3, third.0)]);
    assert_eq!(reopened[0].pre_bytes.as_deref(), Some(&b"old bytes"[..]));
    assert_eq!(reopened[1].pre_bytes, None);
    assert_eq!(
        reopen(dir.path(), 2).len(),
        1,
        "only those above folded_seq"
    );
    let other = LogState {
        folded_seq: 0,
        salt: [6; 16],
    };
    assert!(
        IntentLog::open(dir.path(), other).unwrap().1.is_empty(),
        "never read with another database"
    );
}

/// Guards against: a torn record (a power loss mid-write) read as whole,
/// or the records after it read at all.
#[test]
fn a_torn_record_ends_the_log() {
    let (dir, id, mut log) = new_log();
    let [a, b] = txns();
    log.append_heads(&[intent(a, b"pre a").head(&id)]).unwrap();
    let second_at = log.tail;
    log.append_heads(&[intent(b, b"pre b").head(&id)]).unwrap();
    log.append_heads(&[(terminal(b, TxnStatus::Committed, None), None)])
        .unwrap();
    drop(log);
    tear(dir.path(), second_at);
    let read = reopen(dir.path(), 0);
    assert_eq!(read.len(), 1, "the first record only");
    assert_eq!(read[0].seq, 1);
}

/// Guards against: what is left of the records before a restart read as
/// new ones — the log restarts at offset 0 and numbering goes on.
#[test]
fn records_before_a_restart_are_not_read_again() {
    let (dir, id, mut log) = new_log();
    let [a, b, c] = txns();
    // Long first records, a short one after the restart: the old ones'
    // bytes stay behind it.
    log.append_heads(&[intent(a, &[7u8; 3000]).head(&id)])
        .unwrap();
    log.append_heads(&[intent(b, &[8u8; 3000]).head(&id)])
        .unwrap();
    log.restart();
    log.append_heads(&[(terminal(b, TxnStatus::Committed, None), None)])
        .unwrap();
    assert_eq!(log.last_seq(), 3);
    drop(log);
    let read = reopen(dir.path(), 2);
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].seq, 3);
    // Numbering continues above anything the file could hold, never
    // from 1.
    let (mut log, _) = IntentLog::open(dir.path(), at(3)).unwrap();
    log.restart();
    log.append_heads(&[intent(c, b"").head(&id)]).unwrap();
    assert_eq!(log.last_seq(), 3 + INITIAL_CAPACITY / HEADER as u64 + 1);
}

/// Guards against: a sequence number used again after a torn record hid
/// the records after it (issue 26, item 4). Records 1, 2, 3; record 2
/// torn; the open's scan stops at 1 and the log restarts; a new record
/// whose length ends exactly where record 3 starts must not make the stale
/// record 3 read as the next one — it would be folded as a live intent.
#[test]
fn a_torn_record_never_lets_a_stale_one_read_as_current() {
    let (dir, id, mut log) = new_log();
    let [a, b, c, d] = txns();
    log.append_heads(&[intent(a, &[1u8; 100]).head(&id)])
        .unwrap();
    let second_at = log.tail;
    log.append_heads(&[intent(b, &[2u8; 100]).head(&id)])
        .unwrap();
    let third_at = log.tail;
    log.append_heads(&[intent(c, &[3u8; 100]).head(&id)])
        .unwrap();
    drop(log);
    tear(dir.path(), second_at);

    // The open: the scan stops at record 1, the open's fold records the
    // last sequence number as folded, the log restarts.
    let (mut log, read) = IntentLog::open(dir.path(), at(0)).unwrap();
    assert_eq!(read.iter().map(|r| r.seq).collect::<Vec<_>>(), [1]);
    let folded = log.last_seq();
    log.restart();
    // One record whose length ends exactly at record 3's offset.
    let len_with = |n: usize| {
        let pre = vec![4u8; n];
        log.batch(&[intent(d, &pre).head(&id)]).unwrap().buf.len()
    };
    let mut n = third_at as usize - len_with(0);
    while len_with(n) as u64 != third_at {
        n = n + third_at as usize - len_with(n);
    }
    let pre = vec![4u8; n];
    let batch = log.batch(&[intent(d, &pre).head(&id)]).unwrap();
    assert_eq!(batch.buf.len() as u64, third_at);
    log.append(batch).unwrap();
    drop(log);

    let read = reopen(dir.path(), folded);
    let txns: Vec<String> = read
        .iter()
        .map(|r| match &r.head {
            Head::Intent { txn, .. } | Head::Terminal { txn, .. } => txn.clone(),
        })
        .collect();
    assert_eq!(txns, [d.to_string()], "only the record after the restart");
}

/// Whether `txn` has an `open` row (tests).
fn is_open(conn: &Connection, txn: TxnId) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT 1 FROM transactions WHERE id = ?1 AND state = 'open'",
        [txn.to_string()],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

fn db() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = Connection::open(dir.path().join("j.sqlite3")).unwrap();
    crate::schema::prepare(&mut conn).unwrap();
    (dir, conn)
}

fn row(conn: &Connection, txn: TxnId) -> (String, Option<String>, Option<i64>) {
    conn.query_row(
        "SELECT state, proof_json, terminal_at_ms FROM transactions WHERE id = ?1",
        [txn.to_string()],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

fn preimage(conn: &Connection, txn: TxnId) -> Option<Vec<u8>> {
    conn.query_row(
        "SELECT bytes FROM preimages WHERE txn_id = ?1",
        [txn.to_string()],
        |r| r.get(0),
    )
    .optional()
    .unwrap()
}

fn record(seq: u64, (head, bytes): (Head, Option<&[u8]>)) -> Record {
    Record {
        seq,
        head,
        pre_bytes: bytes.map(<[u8]>::to_vec),
    }
}

/// Guards against: a fold that loses or mislabels any of its three
/// kinds of entry — an intent with its terminal record (one proven row, no
/// pre-image kept), an intent alone (an `open` row with its pre-image,
/// what reconciliation and compensate read), a terminal record whose
/// intent an earlier fold left `open` (recorded on that row, pre-image
/// released) — or that does not advance `folded_seq`.
#[test]
fn a_fold_moves_each_kind_of_record() {
    let (dir, conn) = db();
    let id = identity(dir.path());
    let [paired, alone, earlier] = txns();
    fold(
        &conn,
        &[record(1, intent(earlier, b"earlier pre").head(&id))],
        1,
    )
    .unwrap();
    assert!(is_open(&conn, earlier).unwrap());
    assert_eq!(
        preimage(&conn, earlier).as_deref(),
        Some(&b"earlier pre"[..])
    );
    assert_eq!(log_state(&conn).unwrap().folded_seq, 1);

    let records = [
        record(2, intent(paired, b"paired pre").head(&id)),
        record(
            3,
            (
                terminal(paired, TxnStatus::Committed, Some("{\"p\":1}".into())),
                None,
            ),
        ),
        record(4, intent(alone, b"alone pre").head(&id)),
        record(
            5,
            (
                terminal(earlier, TxnStatus::Committed, Some("{\"p\":2}".into())),
                None,
            ),
        ),
    ];
    fold(&conn, &records, 5).unwrap();
    assert_eq!(log_state(&conn).unwrap().folded_seq, 5);

    let (state, proof, at) = row(&conn, paired);
    assert_eq!(
        (state.as_str(), proof.as_deref()),
        ("committed", Some("{\"p\":1}"))
    );
    assert!(at.is_some());
    assert_eq!(preimage(&conn, paired), None, "proven: never retained");
    assert!(is_open(&conn, alone).unwrap());
    assert_eq!(preimage(&conn, alone).as_deref(), Some(&b"alone pre"[..]));
    let (state, proof, _) = row(&conn, earlier);
    assert_eq!(
        (state.as_str(), proof.as_deref()),
        ("committed", Some("{\"p\":2}"))
    );
    assert_eq!(preimage(&conn, earlier), None, "released once proven");
    let (object, generation, mode, sha): (String, i64, i64, String) = conn
        .query_row(
            "SELECT t.project_object_id, t.generation, p.mode, p.sha256
                 FROM transactions t JOIN preimages p ON p.txn_id = t.id WHERE t.id = ?1",
            [alone.to_string()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((object.as_str(), generation, mode), ("obj", 3, 0o640));
    assert_eq!(sha, ContentHash::of(b"alone pre").to_string());
}

/// Guards against: a terminal record for an intent that is nowhere
/// (neither among the records nor `open`) folded as if it were recorded.
#[test]
fn a_terminal_record_without_its_intent_fails_the_fold() {
    let (_dir, conn) = db();
    let [txn] = txns();
    let orphan = record(
        1,
        (terminal(txn, TxnStatus::Committed, Some("{}".into())), None),
    );
    assert!(fold(&conn, &[orphan], 1).is_err());
}
