//! Editor commands for profiling and the file system: `editor.monitors` (the editor's
//! performance monitors, the same names as the game probe's, [`crate::perf`]),
//! `filesystem.scan` (starts `EditorFileSystem.scan()`), `filesystem.update` (the files
//! the server wrote, told to `EditorFileSystem.update_file`, which registers their
//! types, uids and `class_name`s at once) and `filesystem.status` (`{scanning, progress, scans_finished}`). The
//! server waits for a scan by asking `filesystem.status` on later editor frames: a scan
//! runs across frames, and this executor answers within one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use godot::classes::{EditorFileSystem, EditorInterface};
use godot::prelude::*;
use godot_mcp_editor_core::command::Command;
use godot_mcp_protocol::{BridgeError, ErrorCode, ErrorEffect};
use serde_json::{Value as Json, json};

/// How many scans have finished (`filesystem_changed` emissions) since the first
/// `filesystem.*` command. A threaded scan stops `is_scanning()` before the main thread
/// has applied it (reimports included); the signal comes after that, so "done" is: not
/// scanning, and this count moved past its value when the scan was started.
static SCANS_FINISHED: AtomicU64 = AtomicU64::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

fn count_scans(fs: &Gd<EditorFileSystem>) {
    if !COUNTING.swap(true, Ordering::SeqCst) {
        fs.signals().filesystem_changed().connect(|| {
            SCANS_FINISHED.fetch_add(1, Ordering::SeqCst);
        });
    }
}

pub(crate) fn run(cmd: &Command) -> Result<Json, BridgeError> {
    if matches!(cmd, Command::EditorMonitors) {
        return Ok(json!({"monitors": crate::perf::snapshot()}));
    }
    let Some(mut fs) = EditorInterface::singleton().get_resource_filesystem() else {
        return Err(
            BridgeError::new(ErrorCode::Internal, "the editor has no file system")
                .with_effect(ErrorEffect::Unchanged),
        );
    };
    count_scans(&fs);
    let finished = SCANS_FINISHED.load(Ordering::SeqCst);
    match cmd {
        Command::FilesystemScan => {
            // A scan already running picks up the change too: not started twice.
            let already = fs.is_scanning();
            if !already {
                fs.scan();
            }
            Ok(json!({"started": !already, "scanning": fs.is_scanning(),
                "scans_finished": finished}))
        }
        Command::FilesystemUpdate(update) => {
            // update_file skips a file whose folder the editor has not seen (it finds no
            // directory entry to add it to): such a file needs a scan.
            let mut updated = Vec::new();
            let mut unseen = false;
            for path in &update.paths {
                let dir = path.rsplit_once('/').map_or("res://", |(d, _)| d);
                let dir = if dir == "res:/" { "res://" } else { dir };
                if fs.get_filesystem_path(dir).is_some() {
                    fs.update_file(path.as_str());
                    updated.push(path.clone());
                } else {
                    unseen = true;
                }
            }
            let scan_started = unseen && !fs.is_scanning();
            if scan_started {
                fs.scan();
            }
            Ok(json!({"updated": updated, "scan_started": scan_started,
                "scanning": fs.is_scanning(), "scans_finished": finished}))
        }
        _ => Ok(
            json!({"scanning": fs.is_scanning(), "progress": fs.get_scanning_progress(),
            "scans_finished": finished}),
        ),
    }
}
