//! Parse a generated 10,000-node scene repeatedly and report wall-clock and CPU time
//! per parse. CPU time (this process's user+system time from /proc/self/stat) is the
//! number that holds on a loaded machine, where wall-clock includes waiting for a core.
//!
//! ```sh
//! cargo run --release -p godot-mcp-formats --example parse_cpu
//! ```

use std::time::Instant;

fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime) are the 12th and 13th after the comm.
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    get(11) + get(12)
}

fn main() {
    let text = godot_mcp_formats::testing::generate_scene_text(10_000);
    let runs = 50;
    // Warm up.
    for _ in 0..3 {
        let _ = godot_mcp_formats::parse_scene(&text).unwrap();
    }
    let t0 = Instant::now();
    let c0 = cpu_ticks();
    for _ in 0..runs {
        let scene = godot_mcp_formats::parse_scene(&text).unwrap();
        assert_eq!(scene.nodes.len(), 10_000);
    }
    let wall = t0.elapsed().as_secs_f64() * 1e3 / runs as f64;
    // Clock ticks are 1/100 s on Linux.
    let cpu = (cpu_ticks() - c0) as f64 * 10.0 / runs as f64;
    println!(
        "10,000-node scene ({} bytes): wall {wall:.1} ms/parse, CPU {cpu:.1} ms/parse over {runs} parses",
        text.len()
    );
}
