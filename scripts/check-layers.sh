#!/usr/bin/env bash
# The server crate's modules import one way: no cycle between its modules, at any depth
# (docs/architecture.md, "Layers"). Then no crate's files import each other in a circle
# (scripts/file_cycles.py over every rust/*/src), except the crates still listed in
# scripts/file_cycles.allow (none now), whose circles are printed as a note;
# a listed crate with no circle left fails until its line is removed. Last, no source file
# over 800 non-test lines and no function over 150 lines (scripts/sizes.py; its allowlist
# scripts/sizes.allow is empty and only shrinks). Then no tool domain (a folder or file
# under rust/godot-mcp-server/src/tools, except kit/ and registry) imports another, and
# kit and registry import no domain (scripts/domain_imports.py; its allowlist
# scripts/domain_imports.allow, `X -> Y  # reason`, only shrinks). scripts/test.sh runs
# this; a finding fails the suite.
#
#   scripts/check-layers.sh              check rust/godot-mcp-server, then every crate's files
#   scripts/check-layers.sh --print      also print the module graph's layers
#
# The graph is cargo-modules' (0.27.0, pinned: `cargo install --locked cargo-modules
# --version 0.27.0`; .ci/run installs it). It resolves every `use`, re-export and
# signature through rust-analyzer; its items are folded into their modules
# (--no-fns --no-types --no-traits). scripts/module_cycles.py adds the `crate::` paths
# written out in function bodies, which cargo-modules does not see, and looks for cycles.
#
# Why not `cargo modules dependencies --acyclic` itself: that flag looks for cycles among
# items, and a type and its own constructor (`fn new() -> Self`, or clap's derived
# `from_arg_matches`) are one — it fails on any crate with a constructor.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.27.0
if ! have=$(cargo modules --version 2>/dev/null); then
    echo "check-layers: cargo-modules is not installed; install it with" >&2
    echo "    cargo install --locked cargo-modules --version $version" >&2
    exit 1
fi
if [[ "$have" != "cargo-modules $version" ]]; then
    echo "check-layers: $have found, $version wanted (cargo install --locked cargo-modules --version $version)" >&2
    exit 1
fi

graph=$(mktemp)
trap 'rm -f "$graph"' EXIT
cargo modules dependencies -p godot-mcp-server --lib --all-features \
    --no-externs --no-sysroot --no-fns --no-types --no-traits --layout dot >"$graph"
python3 scripts/module_cycles.py "$graph" rust/godot-mcp-server/src godot_mcp_server "$@"
echo "file circles (scripts/file_cycles.py, every crate; allowlist scripts/file_cycles.allow):"
python3 scripts/file_cycles.py --allow scripts/file_cycles.allow rust/*/src
echo "sizes (scripts/sizes.py: files over 800 non-test lines, functions over 150; allowlist scripts/sizes.allow):"
python3 scripts/sizes.py --allow scripts/sizes.allow
echo "domain imports (scripts/domain_imports.py: no tool domain imports another; allowlist scripts/domain_imports.allow):"
python3 scripts/domain_imports.py --allow scripts/domain_imports.allow
