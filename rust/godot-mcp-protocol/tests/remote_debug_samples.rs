//! The remote-debug decoder on packets a real Godot 4.4.1 game sent, captured by
//! `examples/capture_remote_debug.rs` into `tests/fixtures/godot-4.4.1/remote_debug/`
//! (never written by hand). Each one decodes, re-encodes to the same bytes, and says
//! what the game really had at the breakpoint in `tests/samples/debug_game.gd`.

use std::path::PathBuf;

use godot_mcp_protocol::remote_debug::{
    DebugEnter, ErrorReport, Message, PacketReader, StackVar, VarScope, parse_frame_var_count,
    parse_stack_dump,
};
use godot_mcp_protocol::variant_wire::{self, Variant};

fn samples() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/godot-4.4.1/remote_debug");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 20,
        "the captured samples are missing from {}",
        dir.display()
    );
    out
}

fn message(packet: &[u8]) -> Message {
    let mut r = PacketReader::default();
    r.push(packet);
    let body = r.next_body().unwrap().expect("a whole packet");
    assert_eq!(r.next_body().unwrap(), None, "one packet per sample");
    Message::from_body(&body).unwrap()
}

fn by_name(name: &str) -> Vec<Message> {
    samples()
        .iter()
        .map(|(_, p)| message(p))
        .filter(|m| m.name == name)
        .collect()
}

#[test]
fn every_captured_packet_decodes_and_re_encodes_to_the_same_bytes() {
    for (file, packet) in samples() {
        let m = message(&packet);
        assert_eq!(
            m.to_packet(),
            packet,
            "{file} does not re-encode byte for byte"
        );
        assert_eq!(m.thread, 1, "{file}: the main thread is 1");
        let (v, used) = variant_wire::decode(&packet[4..]).unwrap();
        assert_eq!(used, packet.len() - 4);
        assert_eq!(variant_wire::encode(&v), packet[4..]);
    }
}

#[test]
fn debug_enter_at_the_breakpoint_and_at_a_forced_break() {
    let enters: Vec<DebugEnter> = by_name("debug_enter")
        .iter()
        .map(|m| DebugEnter::parse(m).unwrap())
        .collect();
    assert_eq!(enters.len(), 3);
    assert_eq!(enters[0].error, "Breakpoint");
    assert!(enters[0].can_continue && enters[0].has_stack);
    assert_eq!(enters[0].thread, 1);
    // A break forced while no script runs stops outside any script.
    assert_eq!(enters[2].error, "");
    assert!(!enters[2].has_stack);
}

#[test]
fn the_stack_dump_names_the_breakpoint_line_then_the_stepped_into_line() {
    let dumps: Vec<_> = by_name("stack_dump")
        .iter()
        .map(|m| parse_stack_dump(m).unwrap())
        .collect();
    assert_eq!(dumps.len(), 2);
    let top = &dumps[0][0];
    assert_eq!(
        (top.file.as_str(), top.line, top.function.as_str()),
        ("res://debug_game.gd", 14, "_process")
    );
    let stepped = &dumps[1][0];
    assert_eq!((stepped.line, stepped.function.as_str()), (20, "tick"));
    assert_eq!(dumps[1][1].line, 14, "the caller is the next frame");
}

#[test]
fn the_frame_variables_are_the_locals_and_members_with_their_values() {
    let count = parse_frame_var_count(&by_name("stack_frame_vars")[0]).unwrap();
    let vars: Vec<StackVar> = by_name("stack_frame_var")
        .iter()
        .map(|m| StackVar::parse(m).unwrap())
        .collect();
    assert_eq!(vars.len(), count);
    let get = |name: &str, scope: VarScope| {
        vars.iter()
            .find(|v| v.name == name && v.scope == scope)
            .unwrap_or_else(|| panic!("no {name} in {vars:?}"))
    };
    assert_eq!(
        get("pos", VarScope::Local).value,
        Variant::Vector2([1.5, -2.0])
    );
    assert_eq!(
        get("tags", VarScope::Local).value,
        Variant::PackedStringArray(vec!["a".into(), "bc".into()])
    );
    assert_eq!(
        get("color", VarScope::Local).value,
        Variant::Color([0.5, 0.25, 1.0, 1.0])
    );
    assert_eq!(get("color", VarScope::Local).type_name, "Color");
    let path = get("path", VarScope::Local).value.to_json();
    assert_eq!(path["path"], "/root/Main:position");
    let info = get("info", VarScope::Local).value.to_json();
    assert_eq!(info["name"], "dbg");
    assert_eq!(
        get("label", VarScope::Member).value,
        Variant::String("dbg".into())
    );
    assert!(matches!(get("counter", VarScope::Member).value, Variant::Int(n) if n >= 1));
    assert!(matches!(get("self", VarScope::Member).value, Variant::Object(id) if id != 0));
}

#[test]
fn evaluation_return_carries_the_expression_and_its_value() {
    let ret = StackVar::parse(&by_name("evaluation_return")[0]).unwrap();
    assert_eq!(ret.scope, VarScope::Evaluation);
    assert_eq!(ret.name, "counter * 2 + pos.x");
    let counter = by_name("stack_frame_var")
        .iter()
        .filter_map(StackVar::parse)
        .find(|v| v.name == "counter")
        .and_then(|v| v.value.as_int())
        .unwrap();
    assert_eq!(ret.value, Variant::Float(counter as f64 * 2.0 + 1.5));
}

#[test]
fn an_engine_error_names_its_source_and_text() {
    let errors: Vec<ErrorReport> = by_name("error")
        .iter()
        .map(|m| ErrorReport::parse(m).unwrap())
        .collect();
    let e = &errors[0];
    assert_eq!(e.error, "No renderers available.");
    assert_eq!(
        (e.file.as_str(), e.function.as_str()),
        ("main/main.cpp", "setup")
    );
    assert!(e.line > 0 && !e.warning);
    // Godot 4.4's stop loop has no step-out: it warns, and the game stays stopped.
    let out = errors
        .iter()
        .find(|e| e.error.contains(": out."))
        .expect("the answer to `out`");
    assert_eq!(out.error, "Unknown message received from debugger: out.");
    assert!(out.warning, "{out:?}");
}
