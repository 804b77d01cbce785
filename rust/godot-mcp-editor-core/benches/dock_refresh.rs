//! What the dock costs per editor frame: when nothing changed (one atomic load and a
//! compare, what `Dock::refresh` does before returning) and when the feed moved (the whole
//! view: 20 journal rows, a quarantine, five client snippets).
//! Run: `cargo bench -p godot-mcp-editor-core --bench dock_refresh`.

use std::hint::black_box;
use std::time::Instant;

use godot_mcp_editor_core::dock::{DockContext, Feed, Link, ServerBinary, view};
use godot_mcp_protocol::{GateState, QuarantinedRow, RecentAction, ServerStatus};

fn main() {
    let feed = Feed::default();
    feed.update(|d| {
        d.link = Link::Connected {
            server_version: "0.1.0".into(),
        };
        d.status = Some(ServerStatus {
            server_version: "0.1.0".into(),
            project_root: "/home/ana/game".into(),
            write_gate: GateState::Closed {
                quarantined: vec![QuarantinedRow {
                    transaction_id: "0f6b".into(),
                    reason: "unprovable".into(),
                }],
            },
            recent: (0..20)
                .map(|i| RecentAction {
                    transaction_id: format!("txn-{i}"),
                    tool: "node.set_property".into(),
                    class: "editor_runtime".into(),
                    status: "committed".into(),
                    undoable: Some(true),
                    files: Vec::new(),
                })
                .collect(),
        });
    });
    let ctx = DockContext {
        addon_version: "0.1.0".into(),
        project_root: "/home/ana/game".into(),
        server: ServerBinary::Bundled(
            "/home/ana/game/addons/godot_mcp/bin/linux-x86_64/godot-mcp".into(),
        ),
    };

    let shown = Some(feed.version());
    let frames = 10_000_000u32;
    let start = Instant::now();
    let mut unchanged = 0u32;
    for _ in 0..frames {
        if black_box(shown) == Some(black_box(&feed).version()) {
            unchanged += 1;
        }
    }
    let idle = start.elapsed() / frames;
    assert_eq!(unchanged, frames);
    println!("dock, idle frame (nothing changed): {idle:?} per frame, no allocation");

    let rounds = 2_000u32;
    let start = Instant::now();
    for _ in 0..rounds {
        black_box(view(&feed.get(), &ctx));
    }
    println!(
        "dock, changed frame (read the feed, build every text): {:?}",
        start.elapsed() / rounds
    );
}
