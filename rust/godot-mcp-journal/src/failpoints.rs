//! Names of every crash boundary in the journal.
//!
//! With the crate feature `failpoints`, each name is a live `fail` point; without
//! it they compile to nothing. The crash sweep (`tests/crash_sweep.rs`) kills a
//! child process at each of them and checks every one was reached.

/// The intent row (with the pre-state) is durable; nothing else happened yet.
pub const AFTER_INTENT: &str = "journal::after_intent";
/// The temp file holds the new bytes, not yet fsynced.
pub const AFTER_TEMP_WRITE: &str = "journal::after_temp_write";
/// The temp file is fsynced.
pub const AFTER_TEMP_FSYNC: &str = "journal::after_temp_fsync";
/// The target's identity (device, inode) and bytes were re-checked against
/// the pre-state, immediately before the effect.
pub const AFTER_PRE_HASH: &str = "journal::after_pre_hash";
/// The temp file was renamed over the target (not yet durable).
pub const AFTER_RENAME: &str = "journal::after_rename";
/// The target was unlinked (a delete's effect; not yet durable).
pub const AFTER_UNLINK: &str = "journal::after_unlink";
/// The directory holding the target is fsynced: the effect is durable.
pub const AFTER_DIR_FSYNC: &str = "journal::after_dir_fsync";
/// The post-state was re-derived from disk.
pub const AFTER_POST_HASH: &str = "journal::after_post_hash";
/// The terminal row is written (with the next intent, before any other use of
/// the journal, or when it closes; not fsynced on its own).
pub const AFTER_TERMINAL: &str = "journal::after_terminal";

/// A change's intent (every file's pre- and post-state, and the pre-images)
/// is durable; nothing else happened yet.
pub const CHANGE_AFTER_INTENT: &str = "journal::change::after_intent";
/// A change's editor part was applied by the editor (its answer is in); no file
/// was written yet.
pub const CHANGE_AFTER_EDITOR: &str = "journal::change::after_editor";
/// One file of a change is at its post-state, durably (crossed once per file;
/// inside, each file crosses the write or delete boundaries above).
pub const CHANGE_AFTER_EFFECT: &str = "journal::change::after_effect";
/// Every file of a change was re-derived from disk at its post-state.
pub const CHANGE_AFTER_POST_HASH: &str = "journal::change::after_post_hash";
/// A change's terminal row (and its files') is recorded.
pub const CHANGE_AFTER_TERMINAL: &str = "journal::change::after_terminal";
/// One file of a change was put back at its pre-state, durably (compensation,
/// live or at reconciliation; crossed once per file put back).
pub const CHANGE_AFTER_UNDO: &str = "journal::change::after_undo";

/// Boundaries only a change crosses (besides the write and delete ones of
/// each of its files). Not in [`ALL`]: the single-file sweeps reach none of them.
pub const CHANGE_POINTS: &[&str] = &[
    CHANGE_AFTER_INTENT,
    CHANGE_AFTER_EFFECT,
    CHANGE_AFTER_POST_HASH,
    CHANGE_AFTER_TERMINAL,
    CHANGE_AFTER_UNDO,
];

/// Reconciliation derived every outcome; nothing cleaned or recorded yet.
pub const RECONCILE_AFTER_DERIVE: &str = "journal::reconcile::after_derive";
/// Reconciliation removed leftover temp files; terminal rows not yet recorded.
pub const RECONCILE_AFTER_CLEANUP: &str = "journal::reconcile::after_cleanup";
/// Reconciliation recorded its terminal rows.
pub const RECONCILE_AFTER_TERMINAL: &str = "journal::reconcile::after_terminal";

/// A launch intent (nonce, endpoint, socket inode) is durable; nothing spawned.
pub const LAUNCH_AFTER_INTENT: &str = "launch::after_intent";
/// The gated process exists (it cannot run Godot yet); no receipt recorded.
pub const LAUNCH_AFTER_SPAWN: &str = "launch::after_spawn";
/// The receipt is durable; the gated process is not yet released.
pub const LAUNCH_AFTER_RECEIPT: &str = "launch::after_receipt";
/// The process was released and runs Godot; the start call has not answered.
pub const LAUNCH_AFTER_RELEASE: &str = "launch::after_release";

/// Boundaries of a supervised launch, in the order they are crossed.
pub const LAUNCH_POINTS: &[&str] = &[
    LAUNCH_AFTER_INTENT,
    LAUNCH_AFTER_SPAWN,
    LAUNCH_AFTER_RECEIPT,
    LAUNCH_AFTER_RELEASE,
];

/// Boundaries of a file write, in the order they are crossed.
pub const WRITE_POINTS: &[&str] = &[
    AFTER_INTENT,
    AFTER_TEMP_WRITE,
    AFTER_TEMP_FSYNC,
    AFTER_PRE_HASH,
    AFTER_RENAME,
    AFTER_DIR_FSYNC,
    AFTER_POST_HASH,
    AFTER_TERMINAL,
];

/// Boundaries of a file delete, in the order they are crossed.
pub const DELETE_POINTS: &[&str] = &[
    AFTER_INTENT,
    AFTER_PRE_HASH,
    AFTER_UNLINK,
    AFTER_DIR_FSYNC,
    AFTER_POST_HASH,
    AFTER_TERMINAL,
];

/// Boundaries of startup reconciliation, in the order they are crossed.
pub const RECONCILE_POINTS: &[&str] = &[
    RECONCILE_AFTER_DERIVE,
    RECONCILE_AFTER_CLEANUP,
    RECONCILE_AFTER_TERMINAL,
];

/// Every failpoint in the crate.
pub const ALL: &[&str] = &[
    AFTER_INTENT,
    AFTER_TEMP_WRITE,
    AFTER_TEMP_FSYNC,
    AFTER_PRE_HASH,
    AFTER_RENAME,
    AFTER_UNLINK,
    AFTER_DIR_FSYNC,
    AFTER_POST_HASH,
    AFTER_TERMINAL,
    RECONCILE_AFTER_DERIVE,
    RECONCILE_AFTER_CLEANUP,
    RECONCILE_AFTER_TERMINAL,
];

/// Arms every failpoint named in the environment variable `var` (comma
/// separated) to SIGKILL this process the moment it is crossed, printing
/// `FAILPOINT_REACHED <name>` on stderr first. `name@n` waits for the n-th
/// crossing (1-based; a change crosses a file boundary once per file) and
/// prints `FAILPOINT_REACHED name@n`. Only with the `failpoints` feature (test
/// builds); a no-op otherwise.
pub fn arm_sigkill_from_env(var: &str) {
    #[cfg(feature = "failpoints")]
    if let Ok(list) = std::env::var(var) {
        for entry in list.split(',').filter(|p| !p.is_empty()) {
            let (point, nth) = match entry.split_once('@') {
                Some((p, n)) => (p, n.parse::<usize>().unwrap_or(1).max(1)),
                None => (entry, 1),
            };
            let name = entry.to_owned();
            let crossed = std::sync::atomic::AtomicUsize::new(0);
            let _ = fail::cfg_callback(point, move || {
                if crossed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 < nth {
                    return;
                }
                eprintln!("FAILPOINT_REACHED {name}");
                godot_mcp_os::fs::kill_self();
            });
        }
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = var;
}

/// `cross` for the other crates of the workspace (the process plane).
#[inline]
pub fn cross_pub(name: &'static str) {
    cross(name);
}

/// Crosses the boundary `name`: a live `fail` point with the `failpoints`
/// feature, nothing without it.
#[inline]
pub(crate) fn cross(name: &'static str) {
    #[cfg(feature = "failpoints")]
    fail::fail_point!(name);
    #[cfg(not(feature = "failpoints"))]
    let _ = name;
}
