//! Keeps a short headless editor session from crashing at exit on Godot 4.5+ when it is the
//! one that found the add-on (godotengine/godot#111048, an engine bug, open upstream).
//!
//! When an editor discovers a GDExtension during its first file-system scan (a fresh
//! checkout: no `.godot/extension_list.cfg` naming it yet), Godot 4.5+ regenerates its class
//! reference on a worker thread, and the worker ends by queueing a deferred call that
//! documents the extension's classes. A session that quits soon after (`--import`,
//! `--editor --quit`, `--export-*`) destroys the editor, and its class reference, before
//! that call runs; Main::cleanup then flushes the queue and the call dereferences the freed
//! reference: signal 11 after the import itself is done. Any extension that registers a
//! class triggers it (reproduced with a 25-line C extension registering one class); 4.4
//! does not queue that call.
//!
//! The cure from our side: in such a session, wait on the main thread for that worker when
//! the plugin enters the tree, so the queued call runs at the next frame's flush while the
//! class reference still exists. No API waits for the worker by name; the editor's
//! inspector does when it builds a property list (it reads the class reference for its
//! tooltips), so the plugin shows a bare Object in it and puts back what it showed before.
//! Measured: 1.1–1.6 s once, in the session that finds the add-on; no other session pays.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use godot::classes::{EditorInterface, Engine, Object};
use godot::prelude::*;

use crate::engine_version;

/// Whether the library was loaded into an editor that was already running (found by its
/// file-system scan) rather than at start-up.
static LOADED_LATE: AtomicBool = AtomicBool::new(false);

/// Called at the Scene init level: an editor already up has its `EditorInterface`
/// singleton; at start-up the library loads before the editor exists.
pub(crate) fn note_load() {
    let late = Engine::singleton().has_singleton("EditorInterface");
    LOADED_LATE.store(late, Ordering::SeqCst);
}

/// Whether the library was loaded by a running editor's scan (read before [`settle`]).
pub(crate) fn loaded_late() -> bool {
    LOADED_LATE.load(Ordering::SeqCst)
}

/// Whether this engine queues the class-reference call that can outlive the editor.
fn affected() -> bool {
    let v = engine_version::get();
    v.major > 4 || (v.major == 4 && v.minor >= 5)
}

/// In a session that loaded the library late on an affected engine, waits (once) for the
/// editor's class-reference worker; returns how long it took, or `None` when not needed.
pub(crate) fn settle() -> Option<Duration> {
    if !LOADED_LATE.swap(false, Ordering::SeqCst) || !affected() {
        return None;
    }
    let mut inspector = EditorInterface::singleton().get_inspector()?;
    let shown = inspector.get_edited_object();
    let start = Instant::now();
    let stand_in = Object::new_alloc();
    inspector.edit(&stand_in);
    inspector.edit(shown.as_ref());
    stand_in.free();
    Some(start.elapsed())
}
