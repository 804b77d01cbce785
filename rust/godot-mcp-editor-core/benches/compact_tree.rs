//! Size and encode time of a 10,000-node scene tree read in compact form.
//! Run: `cargo bench -p godot-mcp-editor-core --bench compact_tree`.

use std::time::Instant;

use godot_mcp_editor_core::tree::{generated, page};

fn main() {
    for n in [1_000usize, 10_000] {
        let nodes = generated(n);
        let start = Instant::now();
        let mut bytes = 0;
        let rounds = 50;
        for _ in 0..rounds {
            bytes = serde_json::to_vec(&page("res://big.tscn", &nodes, 0, n))
                .unwrap()
                .len();
        }
        let per = start.elapsed() / rounds;
        println!(
            "compact tree: {n} nodes -> {bytes} bytes ({:.1} KB, {:.1} bytes/node), encode {per:?}",
            bytes as f64 / 1024.0,
            bytes as f64 / n as f64
        );
    }
}
