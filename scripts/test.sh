#!/usr/bin/env bash
# The whole test suite, as README.md states it and .ci/run runs it.
#
#   1. formatting and lints (rustfmt, clippy -D warnings) over every crate, `cargo doc`
#      with warnings denied, the server's layers and every crate's file circles
#      (scripts/check-layers.sh: no cycle between the server's modules, none between a
#      crate's files but those scripts/file_cycles.allow still lists; needs
#      cargo-modules 0.27.0, which .ci/run installs);
#   2. every Rust test but the real-Godot ones: unit, crate integration, end-to-end (the
#      real `godot-mcp` binary driven over stdio and HTTP by real MCP clients), crash and
#      fault tests (journal failpoints on);
#   3. the client matrix (tests/clients/run.sh): the debug binary built above, driven by
#      the official TypeScript SDK client, the MCP Inspector CLI and the official Python
#      SDK (pinned; installed there with npm ci and a venv; needs Node.js 20+, npm, python3);
#   4. the real-Godot tier: the add-on's load checks in a real editor
#      (tests/godot/run_editor_tests.sh), then every Rust test named `real_godot_*`, one
#      at a time, with its output shown, then bench/agent-tasks/check.sh (every task's
#      validator fails on its start project and passes on its solution). They run when
#      GODOT_BIN names a Godot 4.4+ editor binary (GODOT_RENDER_BIN adds the renderer
#      tier, under Xvfb) and print SKIPPED otherwise; with GODOT_MCP_REQUIRE_GODOT=1 (CI)
#      a skip is a failure.
#      GODOT_MCP_ENGINES (editor binaries, `:`-separated) names every engine of the run:
#      GODOT_BIN runs the whole tier, each other one the cross-engine part (the list in
#      `cross_engine` below). GODOT_MCP_TEST_ADDONS (a folder holding gut-<v>/ and
#      gdunit4-<v>/) gives run_tests the frameworks matched to each engine.
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
# The docs build with no warning (a broken or private intra-doc link, unclosed HTML), in
# the same target dir.
echo "==> cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc "${cargo_flags[@]}" --no-deps
echo "==> layers (scripts/check-layers.sh: no cycle between the server's modules, nor between a crate's files)"
scripts/check-layers.sh
# --tests (with --lib --bins --examples) resolves features as `cargo test` does, dev-
# dependencies included: a plain `cargo build` resolves them without, so every crate below
# rmcp (libc, tokio, godot-core, ...) would be built a second time by `cargo test`.
echo "==> cargo build (the add-on library and the stand-in godot, used by the tests, and the tests)"
cargo build "${cargo_flags[@]}" --lib --bins --tests --examples
echo "==> cargo test"
counted cargo test "${cargo_flags[@]}" -- --skip real_godot_

# The official MCP conformance suite (pinned in tests/conformance/, installed there
# with npm ci) against the HTTP server built above.
echo "==> MCP conformance suite"
tests/conformance/run.sh "$CARGO_TARGET_DIR/debug/godot-mcp"

echo "==> client matrix (tests/clients/run.sh)"
counted tests/clients/run.sh

echo "==> real-Godot tier"
export GODOT_MCP_TEST_PREBUILT=1
# Each step's passed count, for GODOT_MCP_REQUIRE_GODOT=1: a step that ran nothing fails.
passed_since() { # first summary line index (1-based) of the step
    grep '^test result:' "$results" | tail -n +"$1" | awk '{ for (i = 1; i < NF; i++) if ($(i+1) ~ /^passed/) p += $i } END { print p + 0 }'
}
summaries() { grep -c '^test result:' "$results" || true; }
require_ran() { # passed, what
    if [[ "${GODOT_MCP_REQUIRE_GODOT:-}" == 1 && "$1" -eq 0 ]]; then
        echo "FAILED: GODOT_MCP_REQUIRE_GODOT=1 but no real_godot_* test ran $2" >&2
        exit 1
    fi
}
# run_tests' frameworks for the engine in GODOT_BIN: GUT 9.4 and gdUnit4 5.1 on 4.4,
# GUT 9.6 and gdUnit4 6.0 on 4.5+ (their own version tables).
frameworks_for_engine() {
    [[ -n "${GODOT_MCP_TEST_ADDONS:-}" ]] || return 0
    local dir minor
    dir=$(cd "$GODOT_MCP_TEST_ADDONS" && pwd)
    minor=$("$GODOT_BIN" --headless --version 2>/dev/null | tail -n 1 | cut -d. -f2)
    no_gdunit4=""
    if [[ "$minor" =~ ^[0-9]+$ ]] && ((minor <= 4)); then
        export GUT_DIR="$dir/gut-9.4.0" GDUNIT4_DIR="$dir/gdunit4-5.1.1"
    elif ((minor == 5)); then
        export GUT_DIR="$dir/gut-9.6.0" GDUNIT4_DIR="$dir/gdunit4-6.0.3"
    else
        # gdUnit4 6.0.3 does not parse on 4.6+: it calls FileAccess.get_as_text(true),
        # and 4.6 dropped that argument. No gdUnit4 for 4.6 is in the folder yet.
        export GUT_DIR="$dir/gut-9.6.0"
        unset GDUNIT4_DIR
        no_gdunit4="no gdUnit4 release for Godot 4.6+ in $dir (6.0.3 calls FileAccess.get_as_text(true), which 4.6 removed)"
    fi
    echo "==> run_tests frameworks: $GUT_DIR, ${GDUNIT4_DIR:-$no_gdunit4}"
}
frameworks_for_engine
bash tests/godot/run_editor_tests.sh --load-checks-only
real_tier=(cargo test "${cargo_flags[@]}" -- real_godot_ --test-threads=1 --nocapture)
before=$(summaries)
if [[ -n "${GODOT_RENDER_BIN:-}" && -z "${DISPLAY:-}" ]]; then
    counted scripts/with-xvfb.sh "${real_tier[@]}"
else
    counted "${real_tier[@]}"
fi
require_ran "$(passed_since "$((before + 1))")" "with GODOT_BIN"
# The agent benchmark's tasks measure something: every validator fails on its start
# project and passes on its reference solution (a skip without GODOT_BIN fails under
# GODOT_MCP_REQUIRE_GODOT=1).
echo "==> agent benchmark tasks (bench/agent-tasks/check.sh)"
bench/agent-tasks/check.sh

# The other engines: what touches the engine's own behaviour — the add-on's load and
# switch, the editor plane's edits and undo to the byte, the probe and runtime tools, the
# debugger, --doctool, --check-only and parse errors, --import and export, run_tests,
# and the corpus oracle (each engine's own loader against the reader; 4.6+ names the
# files it cannot load for what the text-only slice left out).
# (The canonicalisation tests are engine-independent once one engine agrees; the
# renderer tier has one build.) engine_exits already ran every engine.
cross_engine=(
    --test editor_real --test godot_runtime --test runtime_game
    --test debugger --test classref --test scripts --test package --test run_tests
    --test corpus --test authoring --test recipes --test disk_edits --test disk_reads
    --test values_real --test visual_shader --test resource_props --test playtest
)
if [[ -n "${GODOT_MCP_ENGINES:-}" && -n "${GODOT_BIN:-}" ]]; then
    primary=$GODOT_BIN
    IFS=: read -r -a engines <<<"$GODOT_MCP_ENGINES"
    for engine in "${engines[@]}"; do
        [[ "$engine" -ef "$primary" ]] && continue
        echo "==> real-Godot tier, cross-engine part, on $("$engine" --headless --version 2>/dev/null | tail -n 1) ($engine)"
        (
            export GODOT_BIN="$engine"
            unset GODOT_RENDER_BIN
            frameworks_for_engine
            bash tests/godot/run_editor_tests.sh --load-checks-only
        )
        before=$(summaries)
        (
            export GODOT_BIN="$engine"
            unset GODOT_RENDER_BIN
            frameworks_for_engine
            skip=(--skip real_godot_render_)
            [[ -z "${no_gdunit4:-}" ]] || skip+=(--skip real_godot_run_tests_gdunit4)
            cargo test "${cargo_flags[@]}" "${cross_engine[@]}" -- real_godot_ "${skip[@]}" \
                --test-threads=1 --nocapture
        ) 2>&1 | tee -a "$results"
        require_ran "$(passed_since "$((before + 1))")" "on $engine"
    done
fi

# One closing line for the whole run (every step above stops the script on a failure):
# cargo's `test result:` lines and node --test's closing `ℹ pass N` / `ℹ fail N`.
awk '/^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     /^ℹ pass [0-9]+$/ { p += $3 } /^ℹ fail [0-9]+$/ { f += $3 }
     END { printf "total: %d passed, %d failed\n", p, f }' "$results"
