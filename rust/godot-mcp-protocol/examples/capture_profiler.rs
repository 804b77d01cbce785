//! Records what a real Godot game says on the remote-debug protocol while its script
//! profiler runs, as raw packets, for the decoder's tests
//! (`tests/remote_debug_profiler_samples.rs`).
//!
//! ```text
//! GODOT_BIN=/path/to/godot-4.4.1 cargo run -p godot-mcp-protocol --example capture_profiler -- OUT_DIR
//! ```
//!
//! It writes a one-scene project (`tests/samples/profile_game.gd`: `_process` calls
//! `crunch` 20 times a frame) into a temp dir, listens on a loopback port, starts the
//! game with `--remote-debug`, and drives it as the editor's profiler does
//! (`ScriptEditorDebugger::_profiler_activate`): `profiler:servers [true, [512, false]]`,
//! then, after `FRAMES` profile frames, `profiler:servers [false]`. Every packet the
//! game sends from the first `servers:` message on is written to
//! `OUT_DIR/NNN_<message>.bin` exactly as it arrived (length prefix included).

#[path = "common/capture.rs"]
mod capture;

use godot_mcp_protocol::remote_debug::command;

pub const SCRIPT: &str = include_str!("../tests/samples/profile_game.gd");
/// Profile frames kept: enough to show the signature table is sent once.
const FRAMES: usize = 3;

fn main() {
    // Before the profiler: only the game's greeting is of no use here.
    let mut profiling = false;
    let keep = move |m: &godot_mcp_protocol::remote_debug::Message, seq: usize| {
        profiling |= m.name.starts_with("servers:");
        profiling && seq < 40
    };
    let mut c = capture::Capture::start("capture_profiler", "profile_game.gd", SCRIPT, &[], keep);
    // The game runs: its first performance frame says its loop turns.
    c.expect("performance:profile_frame");
    c.send(command::profiler("servers", true, Some((512, false))));
    for _ in 0..FRAMES {
        c.expect("servers:profile_frame");
    }
    c.send(command::profiler("servers", false, None));
    c.expect("servers:profile_total");
    // One more loop turn: nothing of the profiler follows the disable.
    c.expect("performance:profile_frame");
    c.finish();
}
