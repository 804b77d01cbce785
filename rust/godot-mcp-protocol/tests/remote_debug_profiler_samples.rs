//! The scripts profiler's messages, decoded from packets a real Godot 4.4.1 game sent
//! while `profiler:servers` was on, captured by `examples/capture_profiler.rs` into
//! `tests/fixtures/godot-4.4.1/remote_debug_profiler/` (never written by hand). The
//! game runs `tests/samples/profile_game.gd`: `_process` (`func` on line 6, body from
//! line 7) calls `crunch` (line 11, body from 12) 20 times a frame.

use std::collections::BTreeMap;
use std::path::PathBuf;

use godot_mcp_protocol::remote_debug::{
    FunctionSignature, Message, PacketReader, ProfileFrame, command,
};
use godot_mcp_protocol::variant_wire::Variant;

fn messages() -> Vec<Message> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/godot-4.4.1/remote_debug_profiler");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 8,
        "the captured samples are missing from {}",
        dir.display()
    );
    files
        .iter()
        .map(|p| {
            let packet = std::fs::read(p).unwrap();
            let mut r = PacketReader::default();
            r.push(&packet);
            let m = Message::from_body(&r.next_body().unwrap().unwrap()).unwrap();
            assert_eq!(m.to_packet(), packet, "{} re-encodes", p.display());
            m
        })
        .collect()
}

#[test]
fn function_signatures_name_file_line_and_function() {
    let sigs: Vec<FunctionSignature> = messages()
        .iter()
        .filter(|m| m.name == "servers:function_signature")
        .map(|m| FunctionSignature::parse(m).expect("a signature"))
        .collect();
    let crunch = FunctionSignature {
        id: 0,
        file: "res://profile_game.gd".into(),
        line: 12,
        function: "crunch".into(),
    };
    let process = FunctionSignature {
        id: 1,
        file: "res://profile_game.gd".into(),
        line: 7,
        function: "_process".into(),
    };
    // The line is the first line of the function's body, not its `func` line.
    assert_eq!(sigs[..2], [crunch, process]);
    // Ids count up from 0 within one profiling run, each function once.
    for (i, s) in sigs.iter().enumerate() {
        assert_eq!(s.id, i as i64);
    }
}

#[test]
fn profile_frames_carry_per_function_calls_and_times() {
    let all = messages();
    let frames: Vec<ProfileFrame> = all
        .iter()
        .filter(|m| m.name == "servers:profile_frame")
        .map(|m| ProfileFrame::parse(m).expect("a profile frame"))
        .collect();
    assert!(frames.len() >= 3);
    // Frames count up one by one, and every one after the first (where the profiler
    // started mid-frame) has both functions: crunch 20 times, _process once.
    for w in frames.windows(2) {
        assert_eq!(w[1].frame, w[0].frame + 1);
    }
    for f in &frames[1..] {
        assert!(!f.total);
        let by_sig: BTreeMap<i64, _> = f.functions.iter().map(|x| (x.signature, x)).collect();
        assert_eq!(by_sig[&0].calls, 20, "{f:?}");
        assert_eq!(by_sig[&1].calls, 1, "{f:?}");
        // _process's total time holds crunch's; its own time does not.
        assert!(by_sig[&1].total_s >= by_sig[&0].total_s, "{f:?}");
        assert!(by_sig[&1].self_s < by_sig[&1].total_s, "{f:?}");
        for x in &f.functions {
            assert!(x.self_s >= 0.0 && x.self_s <= x.total_s, "{x:?}");
            assert_eq!(x.internal_s, 0.0, "native calls were not asked for");
        }
    }
    // Frames with the physics servers' entries parse as well as those without.
    assert!(
        all.iter()
            .filter(|m| m.name == "servers:profile_frame")
            .any(|m| m.data.len() > 30)
    );
}

#[test]
fn the_disable_sends_the_accumulated_total() {
    let all = messages();
    let totals: Vec<ProfileFrame> = all
        .iter()
        .filter_map(ProfileFrame::parse)
        .filter(|f| f.total)
        .collect();
    assert_eq!(totals.len(), 1);
    let last_frame = all
        .iter()
        .filter(|m| m.name == "servers:profile_frame")
        .filter_map(ProfileFrame::parse)
        .map(|f| f.frame)
        .max()
        .unwrap();
    assert!(totals[0].frame > last_frame);
    let crunch = totals[0]
        .functions
        .iter()
        .find(|f| f.signature == 0)
        .unwrap();
    assert!(crunch.calls >= 20 * 3, "{crunch:?}");
}

#[test]
fn other_messages_are_not_profile_data() {
    for m in messages() {
        if !m.name.starts_with("servers:") {
            assert_eq!(ProfileFrame::parse(&m), None);
            assert_eq!(FunctionSignature::parse(&m), None);
        }
    }
}

#[test]
fn the_toggle_is_what_the_editor_sends() {
    // ScriptEditorDebugger::_profiler_activate: [enable, [max functions, native]] on,
    // [enable] off.
    let on = command::profiler("servers", true, Some((512, false)));
    assert_eq!(on.name, "profiler:servers");
    assert_eq!(on.thread, 1);
    assert_eq!(
        on.data,
        [
            Variant::Bool(true),
            Variant::array(vec![Variant::Int(512), Variant::Bool(false)])
        ]
    );
    let off = command::profiler("servers", false, None);
    assert_eq!(off.data, [Variant::Bool(false)]);
}
