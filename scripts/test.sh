#!/usr/bin/env bash
# The whole test suite, as README.md states it and .ci/run runs it.
#
#   1. formatting and lints (rustfmt, clippy -D warnings) over every crate;
#   2. every Rust test but the real-Godot ones: unit, crate integration, end-to-end (the
#      real `godot-mcp` binary driven over stdio and HTTP by real MCP clients), crash and
#      fault tests (journal failpoints on);
#   3. the client matrix (tests/clients/run.sh): the debug binary built above, driven by
#      the official TypeScript SDK client, the MCP Inspector CLI and the official Python
#      SDK (pinned; installed there with npm ci and a venv; needs Node.js 20+, npm, python3);
#   4. the real-Godot tier: the add-on's load checks in a real editor
#      (tests/godot/run_editor_tests.sh), then every Rust test named `real_godot_*`, one
#      at a time, with its output shown. They run when GODOT_BIN names a Godot 4.4+ editor
#      binary (GODOT_RENDER_BIN adds the renderer tier, under Xvfb) and print SKIPPED
#      otherwise; with GODOT_MCP_REQUIRE_GODOT=1 (CI) a skip is a failure.
#
# One target dir is shared by every step, and every cargo call uses the same flags, so
# nothing is built twice.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export INSTA_UPDATE=no
cargo_flags=(--workspace --all-features --locked)
# Every cargo test summary line is kept, to close with one total for the whole suite.
results=$(mktemp)
trap 'rm -f "$results"' EXIT
counted() { # runs a test command, keeping its output for the closing count
    "$@" 2>&1 | tee -a "$results"
}

echo "==> cargo fmt --check"
cargo fmt --all -- --check
echo "==> cargo clippy"
cargo clippy "${cargo_flags[@]}" --all-targets -- -D warnings
echo "==> cargo build (the add-on library and the stand-in godot, used by the tests)"
cargo build "${cargo_flags[@]}"
echo "==> cargo test"
counted cargo test "${cargo_flags[@]}" -- --skip real_godot_

echo "==> client matrix (tests/clients/run.sh)"
counted tests/clients/run.sh

echo "==> real-Godot tier"
export GODOT_MCP_TEST_PREBUILT=1
bash tests/godot/run_editor_tests.sh --load-checks-only
real_tier=(cargo test "${cargo_flags[@]}" -- real_godot_ --test-threads=1 --nocapture)
before=$(grep -c '^test result:' "$results" || true)
if [[ -n "${GODOT_RENDER_BIN:-}" && -z "${DISPLAY:-}" ]]; then
    counted scripts/with-xvfb.sh "${real_tier[@]}"
else
    counted "${real_tier[@]}"
fi
real_passed=$(grep '^test result:' "$results" | tail -n +"$((before + 1))" | awk '{ for (i = 1; i < NF; i++) if ($(i+1) ~ /^passed/) p += $i } END { print p + 0 }')
if [[ "${GODOT_MCP_REQUIRE_GODOT:-}" == 1 && "$real_passed" -eq 0 ]]; then
    echo "FAILED: GODOT_MCP_REQUIRE_GODOT=1 but no real_godot_* test ran" >&2
    exit 1
fi

# One closing line for the whole run (every step above stops the script on a failure):
# cargo's `test result:` lines and node --test's closing `ℹ pass N` / `ℹ fail N`.
awk '/^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     /^ℹ pass [0-9]+$/ { p += $3 } /^ℹ fail [0-9]+$/ { f += $3 }
     END { printf "total: %d passed, %d failed\n", p, f }' "$results"
