#!/usr/bin/env bash
# Compile checks for the desktop targets this Linux machine cannot run: macOS (x86_64,
# arm64) and Windows (MSVC, GNU). What runs there is tested natively in the workflow's
# matrix (.github/workflows/ci.yml); here it is only made sure to compile.
#
#   scripts/cross-check.sh          the OS seam and the pure-Rust crates, every target;
#                                   the whole workspace for Windows (MSVC)
#   scripts/cross-check.sh --full   also the journal, server and add-on for macOS
#
# .ci/run uses the short form. It compiles the dependency tree once more (Windows
# MSVC: 201 s from cold, 111 s after a change to the server, measured on the shared
# 2-core machine), which fits CI's 30-minute budget; the --full checks compile it
# twice more (two macOS targets), which does not; the workflow matrix builds macOS
# natively instead.
#
# Checked, per target:
#   - godot-mcp-os (the OS seam: process table, boundary, host path rules), with its
#     tests, under clippy -D warnings: all four targets;
#   - the pure-Rust crates (protocol, formats, editor-core): all four targets;
#   - the whole workspace (journal, server, add-on, stand-in, every test and bench):
#     x86_64-pc-windows-msvc;
#   - with --full, macOS only: the journal, the server and the add-on, all targets.
# The workspace's C (the bundled SQLite, criterion's alloca) needs a macOS SDK or MSVC
# this machine does not have; `cargo check` never links, so the C compiler is stubbed
# with `true` and the archiver with a stub that creates the (empty) archive it is
# asked for (cc-rs copies an MSVC archive after creating it), and only the Rust is
# checked.
#
# Prints "cross-check SKIPPED: <why>" and succeeds when a target cannot be installed
# (no rustup, or a registry without rustup's target components).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

targets=(x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc x86_64-pc-windows-gnu)
skip() {
    echo "cross-check SKIPPED: $*"
    exit 0
}
command -v rustup >/dev/null || skip "rustup is not installed"
for t in "${targets[@]}"; do
    # Bounded: a machine whose network cannot reach rustup's server must not stall CI.
    if ! out=$(timeout 180 rustup target add "$t" 2>&1); then
        skip "rustup target add $t failed: $(tail -n 1 <<<"$out")"
    fi
done

stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
cat >"$stubs/ar" <<'EOF'
#!/bin/sh
# An archiver that archives nothing: creates the archive it is named (`ar crs X.a`,
# or MSVC's `lib -out:X.lib`) empty.
for a in "$@"; do
    case "$a" in -out:*) a=${a#-out:} ;; esac
    case "$a" in *.a | *.lib) : >"$a" ;; esac
done
EOF
chmod +x "$stubs/ar"
# Runs cargo for target $1 (the rest: cargo's arguments) with the C tools stubbed.
stubbed_c() {
    local t=$1 env_t=${1//-/_}
    shift
    env "CC_$env_t=true" "CXX_$env_t=true" "AR_$env_t=$stubs/ar" cargo "$@" --target "$t"
}

for t in "${targets[@]}"; do
    echo "==> cross-check $t: godot-mcp-os (clippy, tests included), protocol, formats, editor-core"
    cargo clippy -p godot-mcp-os --all-targets --locked --target "$t" -- -D warnings
    cargo check -p godot-mcp-protocol -p godot-mcp-formats -p godot-mcp-editor-core --locked --target "$t"
done

echo "==> cross-check x86_64-pc-windows-msvc: the workspace (Rust only; C stubbed)"
stubbed_c x86_64-pc-windows-msvc check --workspace --all-targets --all-features --locked

full=false
[[ "${1:-}" == --full ]] && full=true
for t in x86_64-apple-darwin aarch64-apple-darwin; do
    $full || break
    echo "==> cross-check $t: journal, server, add-on (Rust only; C stubbed)"
    stubbed_c "$t" check -p godot-mcp-journal -p godot-mcp-server -p godot-mcp-editor \
        --all-targets --all-features --locked
done
echo "cross-check: ${targets[*]} compile"
