//! Parse time of a generated, realistic 10,000-node `.tscn` (target: ≤ 50 ms
//! in release), plus the fixture project's files for scale.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use godot_mcp_formats::{parse_project, parse_scene, testing::generate_scene_text};

fn bench_parse(c: &mut Criterion) {
    let text = generate_scene_text(10_000);
    let mut group = c.benchmark_group("parse_scene");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(30);
    group.bench_function("10k_nodes", |b| {
        b.iter(|| {
            let scene = parse_scene(black_box(&text)).expect("generated scene parses");
            black_box(scene.nodes.len())
        });
    });
    group.finish();

    let project = include_str!("../../../godot_project/project.godot");
    c.bench_function("parse_project/fixture", |b| {
        b.iter(|| parse_project(black_box(project)).expect("fixture parses"));
    });
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
