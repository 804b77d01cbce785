//! Records what a real Godot game says on the remote-debug protocol, as raw packets,
//! for the decoder's tests (`tests/remote_debug_samples.rs`).
//!
//! ```text
//! GODOT_BIN=/path/to/godot-4.4.1 cargo run -p godot-mcp-protocol --example capture_remote_debug -- OUT_DIR
//! ```
//!
//! It writes a one-scene project (the script below) into a temp dir, listens on a
//! loopback port, starts the game with `--remote-debug` and `--breakpoints` on the line
//! that calls `tick`, and drives it as a debugger would: at the breakpoint it asks for
//! the stack, the frame's variables and an evaluation, steps into `tick`, tries a
//! step-out (which 4.4 does not have), continues,
//! forces a break and continues again. Every packet the game sends is written to
//! `OUT_DIR/NNN_<message>.bin` exactly as it arrived (length prefix included).

#[path = "common/capture.rs"]
mod capture;

use godot_mcp_protocol::remote_debug::command;

/// The game's script; line 14 calls `tick`.
pub const SCRIPT: &str = include_str!("../tests/samples/debug_game.gd");
const BREAK_LINE: u32 = 14;

fn main() {
    let breakpoint = format!("res://debug_game.gd:{BREAK_LINE}");
    // Performance frames arrive every second and say nothing the tests need beyond
    // the first.
    let keep = |m: &godot_mcp_protocol::remote_debug::Message, seq: usize| {
        m.name != "performance:profile_frame" || seq < 2
    };
    let mut c = capture::Capture::start(
        "capture_remote_debug",
        "debug_game.gd",
        SCRIPT,
        &["--breakpoints".into(), breakpoint],
        keep,
    );
    let enter = c.expect("debug_enter");
    let thread = enter.thread;
    c.send(command::plain("get_stack_dump", thread));
    c.expect("stack_dump");
    c.send(command::get_stack_frame_vars(0, thread));
    let n = c.expect("stack_frame_vars");
    let count = n.data[0].as_int().unwrap();
    for _ in 0..count {
        c.expect("stack_frame_var");
    }
    c.send(command::evaluate("counter * 2 + pos.x", 0, thread));
    c.expect("evaluation_return");
    c.send(command::plain("step", thread));
    c.expect("debug_exit");
    c.expect("debug_enter");
    c.send(command::plain("get_stack_dump", thread));
    c.expect("stack_dump");
    // 4.4 has no step-out: the game warns and stays stopped.
    c.send(command::plain("out", thread));
    c.expect("error");
    // Clear the breakpoint so `continue` lets the game run on.
    c.send(command::breakpoint(
        "res://debug_game.gd",
        i64::from(BREAK_LINE),
        false,
    ));
    c.send(command::plain("continue", thread));
    c.expect("debug_exit");
    c.expect("output");
    c.send(command::force_break());
    c.expect("debug_enter");
    c.send(command::plain("continue", thread));
    c.expect("debug_exit");
    c.finish();
}
