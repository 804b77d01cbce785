//! Deriving a change's files from disk, putting them back from their pre-images, and
//! recording what was proven: what the live change, reconciliation and repair share.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::params;

use crate::durable;
use crate::effect::{Deriver, FileProof, ProofBasis, proof_json};
use crate::failpoints::{self as fp, cross};
use crate::ids::{FileState, TxnId, TxnStatus};
use crate::journal::record_terminal;
use crate::storage::Storage;

use super::types::{ChangeEditorPart, ChangeFile, ChangeIntent, ChangeProof, EditorHook, PreImage};

/// The outcome [`settle`] derived (and, for a compensation, made true).
#[derive(Debug)]
pub(crate) struct Settled {
    pub status: TxnStatus,
    pub proof: Option<ChangeProof>,
    pub reason: Option<String>,
}

/// One file as found on disk.
enum Found {
    Post,
    Pre,
    Other,
}

pub(crate) fn undo_temp(temp: &Path) -> PathBuf {
    let mut s = temp.as_os_str().to_owned();
    s.push(".undo");
    PathBuf::from(s)
}

fn exists(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Removes `path` if it exists, durably (its directory fsynced).
pub(crate) fn remove_durably(storage: &dyn Storage, path: &Path) -> io::Result<()> {
    match storage.remove_file(path) {
        Ok(()) => storage.sync_dir(durable::parent_dir(path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Settles a change from disk: `committed` when every file is at its post-state
/// (leftover temps removed); otherwise compensates — every file at its
/// post-state put back from `preimages` (indexed like `files`), durably — and
/// `compensated` when every file is then proven at its pre-state. A file in
/// neither state, a temp holding bytes that are neither (someone else's, left
/// by an exchange cut short), or a pre-image missing: `quarantined`, every file
/// named and nothing more touched. `prefer_compensate`: a live failure puts the
/// change back even when every file reached its post-state.
///
/// Safe to run again after a crash anywhere inside it: each restore goes
/// through `<temp>.undo` and a rename, so every file is at all times at its
/// pre- or post-state, and the temps are the change's own.
/// After every file of a change was put back (`settled` compensated), its applied
/// editor part is undone through `hook`: the outcome joins the proof, or — when it
/// cannot be undone — the change is quarantined, saying so.
pub(super) fn undo_editor_part(
    settled: &mut Settled,
    part: &ChangeEditorPart,
    hook: &mut dyn EditorHook,
) {
    match hook.undo() {
        Ok(outcome) => {
            if let Some(p) = settled.proof.as_mut() {
                p.editor = Some(outcome);
            }
            if let Some(r) = settled.reason.as_mut() {
                r.push_str(" and the editor's action undone");
            }
        }
        Err(e) => {
            settled.status = TxnStatus::Quarantined;
            settled.proof = None;
            settled.reason = Some(format!(
                "every file was put back, but the editor part ({} on {}) could not be \
                 undone ({e})",
                part.action, part.scene
            ));
        }
    }
}

pub(crate) fn settle(
    root: &Path,
    storage: &dyn Storage,
    files: &[ChangeFile],
    preimages: &[Option<PreImage>],
    by: Deriver,
    prefer_compensate: bool,
) -> Settled {
    let quarantine = |reason: String| Settled {
        status: TxnStatus::Quarantined,
        proof: None,
        reason: Some(reason),
    };
    let found = match find(root, files) {
        Ok(found) => found,
        Err(reason) => return quarantine(reason),
    };
    if let Err(reason) = check_temps(root, files, &found) {
        return quarantine(reason);
    }
    let all_post = found.iter().all(|f| matches!(f, Found::Post));
    if all_post && !prefer_compensate {
        if let Err(e) = remove_temps(root, storage, files) {
            return quarantine(format!("cannot remove the change's temp files: {e}"));
        }
        return Settled {
            status: TxnStatus::Committed,
            proof: Some(proof(files, ProofBasis::PostState, by)),
            reason: None,
        };
    }
    // Compensate, last file first.
    for (i, (file, found)) in files.iter().zip(&found).enumerate().rev() {
        if !matches!(found, Found::Post) || file.pre == file.post {
            continue;
        }
        let target = root.join(&file.path);
        let temp = root.join(&file.temp);
        let image = match file.pre {
            FileState::Absent => None,
            FileState::Present { .. } => match preimages.get(i) {
                Some(Some(image)) => Some(image),
                _ => {
                    return quarantine(format!(
                        "{} is at its post-state and its pre-image is missing; the change \
                         cannot be put back: {}",
                        file.path,
                        names(files)
                    ));
                }
            },
        };
        match put_back(storage, &target, &temp, image, file.post) {
            Ok(PutBack::Done) => {}
            Ok(PutBack::Displaced { found, kept }) => {
                return quarantine(format!(
                    "{}; files: {}",
                    displaced_reason(&file.path, found, kept.as_deref()),
                    names(files)
                ));
            }
            Err(e) => {
                return quarantine(format!(
                    "putting {} back failed ({e}); files: {}",
                    file.path,
                    names(files)
                ));
            }
        }
        cross(fp::CHANGE_AFTER_UNDO);
    }
    if let Err(e) = remove_temps(root, storage, files) {
        return quarantine(format!("cannot remove the change's temp files: {e}"));
    }
    match find(root, files) {
        Ok(found) if found.iter().all(|f| matches!(f, Found::Pre)) => Settled {
            status: TxnStatus::Compensated,
            proof: Some(proof(files, ProofBasis::PreState, by)),
            reason: None,
        },
        Ok(_) => quarantine(format!(
            "after compensation not every file is at its pre-state: {}",
            names(files)
        )),
        Err(reason) => quarantine(reason),
    }
}

/// Every file's path, for a reason.
fn names(files: &[ChangeFile]) -> String {
    files
        .iter()
        .map(|f| f.path.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each file's state: at its post-state (checked first: a file the change does
/// not alter is both), at its pre-state, or the reason it is neither.
fn find(root: &Path, files: &[ChangeFile]) -> Result<Vec<Found>, String> {
    let mut found = Vec::with_capacity(files.len());
    let mut problems = Vec::new();
    for file in files {
        match durable::read_state(&root.join(&file.path)) {
            Ok(s) if s == file.post => found.push(Found::Post),
            Ok(s) if s == file.pre => found.push(Found::Pre),
            Ok(s) => {
                problems.push(format!(
                    "{} is {s}, neither its pre-state {} nor its post-state {}",
                    file.path, file.pre, file.post
                ));
                found.push(Found::Other);
            }
            Err(e) => {
                problems.push(format!("{}: cannot re-derive state: {e}", file.path));
                found.push(Found::Other);
            }
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(format!(
            "change of {} file(s) ({}): {}",
            files.len(),
            names(files),
            problems.join("; ")
        ))
    }
}

/// A leftover temp beside a file at its post-state holds what an exchange
/// displaced: ours when it is the pre- or post-state, someone else's otherwise
/// (kept as evidence, the change quarantined). Beside a file at its pre-state
/// nothing was exchanged: the temp is our own.
fn check_temps(root: &Path, files: &[ChangeFile], found: &[Found]) -> Result<(), String> {
    for (file, found) in files.iter().zip(found) {
        if !matches!(found, Found::Post) {
            continue;
        }
        let temp = root.join(&file.temp);
        match durable::read_state(&temp) {
            Ok(FileState::Absent) => {}
            Ok(held) if held == file.pre || held == file.post => {}
            Ok(held) => {
                return Err(format!(
                    "{} is at its post-state, but {} holds {held}, neither its pre-state nor its \
                     post-state: a file someone wrote during the exchange, kept there as evidence",
                    file.path, file.temp
                ));
            }
            Err(e) => return Err(format!("{}: cannot inspect its temp: {e}", file.path)),
        }
    }
    Ok(())
}

/// Removes every temp of the change (and its `.undo`), durably.
fn remove_temps(root: &Path, storage: &dyn Storage, files: &[ChangeFile]) -> io::Result<()> {
    for file in files {
        let temp = root.join(&file.temp);
        for path in [undo_temp(&temp), temp] {
            if exists(&path)? {
                remove_durably(storage, &path)?;
            }
        }
    }
    Ok(())
}

/// What [`put_back`] found at the target when it took it.
#[derive(Debug)]
pub(crate) enum PutBack {
    /// The target held the expected state and now holds the pre-state, durably.
    Done,
    /// The target held `found`, not the expected state (someone wrote it after it
    /// was proven): it was left holding that, and `kept` (when `Some`) holds the
    /// bytes that were to be put back.
    Displaced {
        found: FileState,
        kept: Option<PathBuf>,
    },
}

/// Puts a file of a change back at its pre-state — `image` written back, or
/// (`None`) the file the change created removed — taking the target only while it
/// holds `expect` (the state it was proven at). Through `<temp>.undo`: written and
/// fsynced, then **exchanged** with the target (`renameat2(RENAME_EXCHANGE)`; see
/// `godot_mcp_os::fs::exchange` for macOS and Windows), so whatever the target
/// held is displaced, not overwritten; what was displaced is checked against
/// `expect`, and anything else is swapped back (the user's bytes at the target,
/// ours kept at `.undo`) and reported. A created file is first renamed aside to
/// `.undo` and checked the same way. The directory is fsynced.
pub(crate) fn put_back(
    storage: &dyn Storage,
    target: &Path,
    temp: &Path,
    image: Option<&PreImage>,
    expect: FileState,
) -> io::Result<PutBack> {
    let undo = undo_temp(temp);
    if exists(&undo)? {
        storage.remove_file(&undo)?;
    }
    let dir = durable::parent_dir(target);
    match image {
        Some(image) => {
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent)?;
            }
            let file = storage.create_temp(&undo, &image.bytes, image.mode)?;
            storage.sync_file(&undo, &file)?;
            drop(file);
            if expect == FileState::Absent {
                // Nothing to displace: the target must still be absent.
                match storage.rename_noreplace(&undo, target) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        return Ok(PutBack::Displaced {
                            found: durable::read_state(target)?,
                            kept: Some(undo),
                        });
                    }
                    Err(e) => return Err(e),
                }
            } else {
                storage.exchange(&undo, target)?;
                let found = durable::read_state(&undo)?;
                if found != expect {
                    storage.exchange(&undo, target)?;
                    storage.sync_dir(dir)?;
                    return Ok(PutBack::Displaced {
                        found,
                        kept: Some(undo),
                    });
                }
                storage.remove_file(&undo)?;
            }
        }
        None => {
            storage.rename_noreplace(target, &undo)?;
            let found = durable::read_state(&undo)?;
            if found != expect {
                let kept = match storage.rename_noreplace(&undo, target) {
                    Ok(()) => None,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Some(undo),
                    Err(e) => return Err(e),
                };
                storage.sync_dir(dir)?;
                return Ok(PutBack::Displaced { found, kept });
            }
            storage.remove_file(&undo)?;
        }
    }
    storage.sync_dir(dir)?;
    Ok(PutBack::Done)
}

/// A [`PutBack::Displaced`] as a quarantine reason.
pub(crate) fn displaced_reason(path: &str, found: FileState, kept: Option<&Path>) -> String {
    let kept = match kept {
        Some(k) => format!("; the bytes of its pre-state are kept at {}", k.display()),
        None => String::new(),
    };
    format!(
        "{path} changed while it was being put back (it holds {found}): it was left as it \
         is{kept}"
    )
}

pub(super) fn proof(files: &[ChangeFile], basis: ProofBasis, by: Deriver) -> ChangeProof {
    ChangeProof {
        editor: None,
        files: files
            .iter()
            .map(|f| FileProof {
                path: f.path.clone(),
                observed: match basis {
                    ProofBasis::PostState => f.post,
                    _ => f.pre,
                },
                basis,
                temp_removed: false,
                derived_by: by,
            })
            .collect(),
    }
}

/// The first two entries of `ids` naming one file (device and inode), if any;
/// `None` entries (absent files) never match.
pub(crate) fn same_file(ids: &[Option<godot_mcp_os::fs::FileId>]) -> Option<(usize, usize)> {
    ids.iter().enumerate().find_map(|(j, b)| {
        let b = (*b)?;
        ids[..j].iter().position(|a| *a == Some(b)).map(|i| (i, j))
    })
}

/// Records on an open change that its files are proven back at their pre-state
/// (`proof`), and releases its pre-images: nothing will put them back again.
pub(super) fn record_files_put_back(
    conn: &rusqlite::Connection,
    txn: TxnId,
    proof: Option<&ChangeProof>,
) -> rusqlite::Result<()> {
    let Some(proof) = proof else {
        return Ok(());
    };
    let json = proof_json::<ChangeIntent>(proof)?;
    conn.prepare_cached(
        "UPDATE transactions SET proof_json = ?2 WHERE id = ?1 AND state = 'open'",
    )?
    .execute(params![txn.to_string(), json])?;
    conn.prepare_cached("DELETE FROM change_preimages WHERE txn_id = ?1")?
        .execute([txn.to_string()])?;
    Ok(())
}

/// Moves the change from `open` to its settled state; its pre-images go with a
/// proven state.
pub(super) fn record_change_terminal(
    conn: &rusqlite::Connection,
    txn: TxnId,
    settled: &Settled,
) -> rusqlite::Result<()> {
    record_terminal(
        conn,
        txn,
        TxnStatus::Open,
        settled.status,
        settled
            .proof
            .as_ref()
            .map(proof_json::<ChangeIntent>)
            .transpose()?,
        settled.reason.as_deref(),
    )?;
    if matches!(
        settled.status,
        TxnStatus::Committed | TxnStatus::Compensated
    ) {
        conn.prepare_cached("DELETE FROM change_preimages WHERE txn_id = ?1")?
            .execute([txn.to_string()])?;
    }
    Ok(())
}

/// The retained pre-images of `txn`, indexed like `files`; a row whose bytes do
/// not hash to the recorded pre-state is no pre-image.
pub(crate) fn load_preimages(
    conn: &rusqlite::Connection,
    txn: TxnId,
    files: &[ChangeFile],
) -> rusqlite::Result<Vec<Option<PreImage>>> {
    let mut out: Vec<Option<PreImage>> = vec![None; files.len()];
    let mut st =
        conn.prepare_cached("SELECT idx, mode, bytes FROM change_preimages WHERE txn_id = ?1")?;
    let rows = st.query_map([txn.to_string()], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, Vec<u8>>(2)?,
        ))
    })?;
    for row in rows {
        let (idx, mode, bytes) = row?;
        let Some(file) = usize::try_from(idx).ok().and_then(|i| files.get(i)) else {
            continue;
        };
        if FileState::of(&bytes) == file.pre {
            out[idx as usize] = Some(PreImage {
                bytes,
                mode: u32::try_from(mode).unwrap_or(0o644) & 0o7777,
            });
        }
    }
    Ok(out)
}
