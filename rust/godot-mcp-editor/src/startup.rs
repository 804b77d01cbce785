//! Whether the editor's start-up is over, so that no request races it.
//!
//! When its first file-system scan ends, the editor restores the scenes it had open and
//! its main scene (`EditorNode::_sources_changed`), switching the edited scene. Godot 4.6
//! ends that scan some frames after the plugin's first `process()`: measured, a scene the
//! server had just opened or created was switched back to the restored one, and the next
//! request answered `scene_mismatch` (tests/recipes.rs, one run in two). So requests wait,
//! queued, until that scan has ended (the editor's `sources_changed` signal, which the
//! editor's own restore is connected to first) and a frame has passed (the scene switch
//! finishes in a deferred call). A plugin that enters an editor already past its first
//! frames (enabled later), or whose library that scan found (loaded late), is settled at
//! once. The wait is bounded by [`SCAN_WAIT`], below the server's default request timeout
//! (10 s), so a queued request is never given up on for it: a longer first scan (a large
//! import) lets requests run then, with a line in the log, as before this wait existed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use godot::classes::{EditorInterface, Engine};
use godot::prelude::*;

/// The longest requests wait for the first scan to end.
const SCAN_WAIT: Duration = Duration::from_secs(8);

/// Frames that pass after the scan's end before requests run.
const AFTER_SCAN_FRAMES: u8 = 2;

pub(crate) enum Startup {
    /// The first scan has not ended (`ended` is set by the editor's signal).
    Scanning {
        ended: Arc<AtomicBool>,
        since: Instant,
    },
    /// It ended; this many more frames before requests run.
    Settling(u8),
    Settled,
}

impl Startup {
    /// At the plugin's `enter_tree`: waiting for the first scan when the editor is still
    /// starting (its main loop has not run yet) and loaded the library itself (not
    /// `loaded_late`, found by that scan), settled otherwise.
    pub(crate) fn begin(loaded_late: bool) -> Self {
        if loaded_late || Engine::singleton().get_process_frames() > 1 {
            return Self::Settled;
        }
        let Some(fs) = EditorInterface::singleton().get_resource_filesystem() else {
            return Self::Settled;
        };
        let ended = Arc::new(AtomicBool::new(false));
        let flag = ended.clone();
        fs.signals().sources_changed().connect(move |_exist| {
            flag.store(true, Ordering::SeqCst);
        });
        Self::Scanning {
            ended,
            since: Instant::now(),
        }
    }

    /// Once a frame: whether requests may run now.
    pub(crate) fn settled(&mut self) -> bool {
        match self {
            Self::Settled => return true,
            Self::Scanning { ended, since } => {
                if ended.load(Ordering::SeqCst) {
                    *self = Self::Settling(AFTER_SCAN_FRAMES);
                } else if since.elapsed() > SCAN_WAIT {
                    godot_print!(
                        "godot-mcp: the editor's first file-system scan has not ended after {} s; requests run now",
                        SCAN_WAIT.as_secs()
                    );
                    *self = Self::Settled;
                    return true;
                }
            }
            Self::Settling(0) => {
                godot_print!("godot-mcp: editor start-up over (first scan ended); requests run");
                *self = Self::Settled;
                return true;
            }
            Self::Settling(n) => *n -= 1,
        }
        false
    }
}
