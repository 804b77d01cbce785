use super::change::{ChangeNow, ChangeStep, act_on_change};
use super::*;
use std::fs;
use std::io;

use crate::ids::FileState;

#[test]
fn operations_parse_exactly_and_force_is_not_one() {
    for op in [
        RepairOperation::Reconcile,
        RepairOperation::Compensate,
        RepairOperation::Terminate,
        RepairOperation::AcknowledgeSafeState,
    ] {
        assert_eq!(op.as_str().parse::<RepairOperation>(), Ok(op));
    }
    assert!("force".parse::<RepairOperation>().is_err());
    assert!("--force".parse::<RepairOperation>().is_err());
}

/// Guards against: an I/O error in the middle of a change's repair leaving
/// some files put back and others not. The second step (the restore of
/// `a.txt`) fails at its exchange: `b.txt`, already removed, is written back,
/// the restore's `.undo` is removed, and every file holds what it held.
#[test]
fn a_change_repair_cut_short_returns_every_file_to_what_it_held() {
    use crate::change::{ChangeFile, PreImage};
    use crate::storage::{Injected, StorageOp};
    use std::sync::atomic::{AtomicU8, Ordering};

    // Once armed (1), its next exchange (a put-back's step) fails.
    let storage = std::sync::Arc::new(Injected {
        state: AtomicU8::new(0),
        hook: |armed, op| match op {
            StorageOp::Exchange(..)
                if armed
                    .compare_exchange(1, 2, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok() =>
            {
                Err(io::Error::other("injected rename failure"))
            }
            _ => Ok(()),
        },
        inner: crate::storage::RealStorage,
    });
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    fs::create_dir_all(&project).unwrap();
    fs::write(project.join("a.txt"), b"post a").unwrap();
    fs::write(project.join("b.txt"), b"post b").unwrap();
    let journal =
        Journal::open_with_storage(&dir.path().join("s"), &project, storage.clone()).unwrap();
    storage.state.store(1, Ordering::SeqCst);
    let file = |path: &str, pre: FileState, post: &[u8]| ChangeFile {
        path: path.into(),
        pre,
        post: FileState::of(post),
        temp: format!(".gmcp-{path}.tmp"),
    };
    let files = [
        file("a.txt", FileState::of(b"pre a"), b"post a"),
        file("b.txt", FileState::Absent, b"post b"),
    ];
    let now = [
        ChangeNow {
            state: FileState::of(b"post a"),
            temps: Vec::new(),
            step: Some(ChangeStep::Restore(PreImage {
                bytes: b"pre a".to_vec(),
                mode: 0o644,
            })),
        },
        ChangeNow {
            state: FileState::of(b"post b"),
            temps: Vec::new(),
            step: Some(ChangeStep::Unlink),
        },
    ];
    let err = act_on_change(&journal, &files, &now).unwrap_err();
    assert!(
        err.to_string().contains("putting a.txt back failed")
            && err.to_string().contains("every file was returned"),
        "{err}"
    );
    let mut left: Vec<_> = fs::read_dir(&project)
        .unwrap()
        .flatten()
        // Godot's cache folder holds the project lease.
        .filter(|e| e.file_name() != ".godot")
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            ("a.txt".to_string(), b"post a".to_vec()),
            ("b.txt".to_string(), b"post b".to_vec())
        ]
    );
}

#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../../../../docs/recovery.md");
    let start = doc
        .find("```json\n")
        .expect("docs/recovery.md has a json example")
        + 8;
    let end = start + doc[start..].find("```").unwrap();
    let proof: RepairProof = serde_json::from_str(&doc[start..end]).unwrap();
    assert_eq!(proof.schema, PROOF_SCHEMA);
    assert_eq!(proof.operation, RepairOperation::AcknowledgeSafeState);
}
