//! Indexes the published tool list, and links the server's executables (the `godot-mcp`
//! binary, the floor example and the benches) as position-dependent executables on Linux
//! with the GNU toolchain.
//!
//! A position-independent executable is relocated by the dynamic loader at every start:
//! for `godot-mcp` that is about 20,000 relative relocations, and writing them dirties
//! every page of `.data.rel.ro` (350 KiB) and reads `.rela.dyn` (470 KiB). A client
//! starts a stdio server with every session, so this is paid all the time: measured, a
//! warm start is about 0.35 ms faster and takes about 100 page faults fewer without it
//! (docs/performance.md, "Linked without PIE"). The code is still compiled
//! position-independent (only the final link changes); shared libraries, the stack, the
//! heap and every mapping but the executable's own stay randomised.
//!
//! The index: `(name, start, end)` of every entry of `src/tool_list.json` (one tool per
//! line, read by `entry_of`, shared with the crate), written to
//! `$OUT_DIR/tool_list_index.rs`, so the registry gives each tool its entry without
//! scanning the list at every start (src/tools/registry/tool_list.rs).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    index_tool_list();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        for kind in ["bins", "examples", "benches"] {
            println!("cargo::rustc-link-arg-{kind}=-no-pie");
        }
    }
}

include!("src/tools/registry/tool_list_entry.rs");

fn index_tool_list() {
    println!("cargo::rerun-if-changed=src/tool_list.json");
    println!("cargo::rerun-if-changed=src/tools/registry/tool_list_entry.rs");
    let list = std::fs::read_to_string("src/tool_list.json").expect("src/tool_list.json");
    let mut out = String::from("&[\n");
    let mut start = 0;
    for line in list.split_inclusive('\n') {
        if let Some((name, entry)) = entry_of(line.strip_suffix('\n').unwrap_or(line)) {
            out.push_str(&format!(
                "    ({name:?}, {start}, {}),\n",
                start + entry.len()
            ));
        }
        start += line.len();
    }
    out.push_str("]\n");
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(std::path::Path::new(&dir).join("tool_list_index.rs"), out)
        .expect("write the tool list's index");
}
