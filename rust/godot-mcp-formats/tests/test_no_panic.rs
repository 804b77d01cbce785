//! Whatever the input, the parsers return `Ok` or `Err`; they never panic.

use godot_mcp_formats::{parse_project, parse_resource, parse_scene, parse_value};
use proptest::prelude::*;

const SCENE: &str = include_str!("../../../godot_project/scenes/main_2d.tscn");
const PROJECT: &str = include_str!("../../../godot_project/project.godot");

fn all_parsers(text: &str) {
    let _ = parse_scene(text);
    let _ = parse_resource(text);
    let _ = parse_project(text);
    let _ = parse_value(text);
}

/// Bytes that matter to the grammar, to make mutations bite.
const INTERESTING: &[u8] = b"[]{}()\"'=,:;&^\\\n -.0123456789eE_aZ\xc3\xa9";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        all_parsers(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_grammar_soup_never_panics(
        picks in proptest::collection::vec(0..INTERESTING.len(), 0..256)
    ) {
        let bytes: Vec<u8> = picks.iter().filter_map(|&i| INTERESTING.get(i).copied()).collect();
        all_parsers(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_scene_never_panics(
        edits in proptest::collection::vec((0..SCENE.len(), 0..INTERESTING.len(), 0..3u8), 1..8)
    ) {
        let mut bytes = SCENE.as_bytes().to_vec();
        for (at, pick, op) in edits {
            let at = at.min(bytes.len());
            let b = INTERESTING.get(pick).copied().unwrap_or(b' ');
            match op {
                0 if at < bytes.len() => { bytes.remove(at); }
                1 => bytes.insert(at, b),
                _ if at < bytes.len() => bytes[at] = b,
                _ => {}
            }
        }
        all_parsers(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn every_truncation_of_a_valid_scene_is_an_error_or_a_complete_scene(cut in 0..SCENE.len()) {
        if let Some(prefix) = SCENE.get(..cut) {
            // A prefix either fails or (when cut between sections) is a valid
            // smaller scene; it never panics.
            if let Ok(scene) = parse_scene(prefix) {
                prop_assert!(scene.nodes.len() <= 9);
            }
        }
    }

    #[test]
    fn mutated_project_never_panics(at in 0..PROJECT.len(), pick in 0..INTERESTING.len()) {
        let mut bytes = PROJECT.as_bytes().to_vec();
        if let Some(b) = INTERESTING.get(pick) {
            bytes[at] = *b;
        }
        let _ = parse_project(&String::from_utf8_lossy(&bytes));
    }
}
