#!/usr/bin/env bash
# Real-editor tests of the godot-mcp add-on (tier 5 in ARCHITECTURE.md).
#
# Builds and installs the add-on into a temporary COPY of godot_project/ (the checked-in
# project is never modified), then runs the headless Godot editor twice on it:
#   1. plugin disabled in Project Settings: the library loads, the Rust EditorPlugin enters
#      the tree, and the executor stays OFF;
#   2. plugin enabled: the GDScript plugin turns the executor switch ON and the Rust plugin
#      applies it.
# Each run must exit 0 with no panic and no error line about the add-on.
#
# Needs GODOT_BIN (a Godot 4.4+ editor binary); without it the tests are skipped, loudly,
# or fail when GODOT_MCP_REQUIRE_GODOT=1 (as in CI).
#
#   --load-checks-only   runs 1 and 2 only (scripts/test.sh runs the Rust real-Godot tests,
#                        tests/editor_real.rs among them, in a step of its own)
# Options via environment:
#   GODOT_MCP_RELEASE=1        install a release build instead of a debug build
#   GODOT_MCP_QUIT_AFTER=N     frames each editor run lasts (default 300; ~2 s at ~145 Hz)
#   GODOT_MCP_KEEP_TMP=1       keep the temporary project and logs for inspection
#   CARGO_TARGET_DIR           as for cargo (passed through to scripts/install-addon.sh)
set -euo pipefail

load_checks_only=0
case "${1:-}" in
    --load-checks-only) load_checks_only=1 ;;
    "") ;;
    *) echo "usage: $0 [--load-checks-only]" >&2; exit 2 ;;
esac

if [[ -z "${GODOT_BIN:-}" ]]; then
    if [[ "${GODOT_MCP_REQUIRE_GODOT:-}" == 1 ]]; then
        echo "FAILED: GODOT_MCP_REQUIRE_GODOT=1 but GODOT_BIN is not set (real-editor tests need a Godot 4 binary)" >&2
        exit 1
    fi
    echo "SKIPPED: GODOT_BIN is not set (real-editor tests need a Godot 4 binary)"
    exit 0
fi

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source_project="$repo_root/godot_project"
quit_after="${GODOT_MCP_QUIT_AFTER:-300}"
plugin_cfg='res://addons/godot_mcp/plugin.cfg'
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

die() {
    echo "error: $*" >&2
    exit 1
}

[[ -x "$GODOT_BIN" ]] || command -v "$GODOT_BIN" >/dev/null || die "GODOT_BIN=$GODOT_BIN is not an executable"
[[ -f "$source_project/project.godot" ]] || die "$source_project/project.godot not found"

# --- Godot version: the add-on needs 4.4 or newer (its manifest's compatibility_minimum).
godot_version="$("$GODOT_BIN" --headless --version 2>/dev/null | tail -n 1 | tr -d '\r')"
IFS=. read -r major minor _ <<<"$godot_version"
if ! [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || ((major != 4 || minor < 4)); then
    die "GODOT_BIN reports version '$godot_version'; the add-on needs Godot 4.4 or newer 4.x"
fi
echo "==> Godot $godot_version ($GODOT_BIN)"

# --- A throw-away copy of the project with the add-on installed.
workdir="$(mktemp -d "${TMPDIR:-/tmp}/godot-mcp-editor-tests.XXXXXX")"
if [[ "${GODOT_MCP_KEEP_TMP:-0}" == 1 ]]; then
    echo "==> keeping $workdir"
else
    trap 'rm -rf "$workdir"' EXIT
fi
project="$workdir/project"
cp -R "$source_project" "$project"
# Start from a clean state: no import cache, no previously installed add-on.
rm -rf "$project/.godot" "$project/addons/godot_mcp"

install_args=(--project "$project")
[[ "${GODOT_MCP_RELEASE:-0}" == 1 ]] && install_args+=(--release)
# scripts/test.sh built the library already, with the flags of the whole suite.
[[ "${GODOT_MCP_TEST_PREBUILT:-0}" == 1 ]] && install_args+=(--no-build)
"$repo_root/scripts/install-addon.sh" "${install_args[@]}"

# --- Project Settings > Plugins, edited in the copy's project.godot.
set_plugin_enabled() { # true|false
    local want="$1" file="$project/project.godot"
    # Drop our entry wherever it is, then add it back if wanted.
    awk -v cfg="\"$plugin_cfg\"" '
        /^enabled=PackedStringArray\(/ {
            i = index($0, cfg)
            if (i > 0) {
                rest = substr($0, i + length(cfg)); sub(/^, */, "", rest)
                $0 = substr($0, 1, i - 1) rest
                sub(/, *\)$/, ")")
            }
        }
        { print }' "$file" >"$file.tmp"
    mv "$file.tmp" "$file"
    [[ "$want" == true ]] || return 0
    awk -v cfg="\"$plugin_cfg\"" '
        function add_line() { print "enabled=PackedStringArray(" cfg ")"; done = 1 }
        /^\[/ { if (in_section && !done) { add_line(); print "" } in_section = ($0 == "[editor_plugins]"); if (in_section) seen = 1 }
        in_section && /^enabled=PackedStringArray\(/ {
            if ($0 ~ /\(\)$/) { $0 = "enabled=PackedStringArray(" cfg ")" }
            else { sub(/\(/, "(" cfg ", ") }
            done = 1
        }
        { print }
        END {
            if (in_section && !done) add_line()
            if (!seen) { print ""; print "[editor_plugins]"; print ""; add_line() }
        }' "$file" >"$file.tmp"
    mv "$file.tmp" "$file"
}

run_godot() { # log-file, args...
    local log="$1"
    shift
    local -a cmd=("$GODOT_BIN" "$@")
    if command -v timeout >/dev/null; then
        cmd=(timeout 600 "${cmd[@]}")
    fi
    echo "==> ${cmd[*]}"
    local status=0
    "${cmd[@]}" >"$log" 2>&1 || status=$?
    return "$status"
}

show_log() {
    echo "----- $1 (last 150 lines) -----" >&2
    tail -n 150 "$1" >&2
    echo "----- end of $1 -----" >&2
}

# Error lines that concern the add-on: Godot prints `ERROR: message` and, on the next line,
# `at: function (file:line)`, so the pair is tested together.
addon_errors() {
    awk -v pat='godot_mcp|godot-mcp|GodotMcp|gdext|godot-rust|plugin\\.gd' '
        pending != "" { if ((pending " " $0) ~ pat) print pending " | " $0; pending = "" }
        /^(USER |SCRIPT )?ERROR:/ { pending = $0 }
        END { if (pending != "" && pending ~ pat) print pending }' "$1"
}

expect_line() { # log, fixed string, description
    grep -qF -- "$2" "$1" || fail "$3: no line containing '$2' in $1"
}

reject_line() { # log, fixed string, description
    ! grep -qF -- "$2" "$1" || fail "$3: unexpected line containing '$2' in $1"
}

check_common() { # log, status
    local log="$1" status="$2" errors
    ((status == 0)) || fail "Godot exited with status $status"
    expect_line "$log" "godot-mcp: extension loaded (add-on" "the GDExtension library was not initialised"
    expect_line "$log" "godot-mcp: editor plugin entered the tree" "GodotMcpEditorPlugin.enter_tree did not run"
    if grep -qi 'panic' "$log"; then
        fail "a panic was logged:"
        grep -i 'panic' "$log" >&2
    fi
    errors="$(addon_errors "$log")"
    if [[ -n "$errors" ]]; then
        fail "errors about the add-on were logged:"
        echo "$errors" >&2
    fi
    grep -qF "godot-mcp: editor plugin left the tree" "$log" ||
        echo "note: no exit_tree line in $log (Godot may not print during shutdown)"
}

# --- First open: import the project so the editor runs below start from a scanned project
# (.godot/extension_list.cfg written, scripts' global classes known).
set_plugin_enabled false
status=0
run_godot "$workdir/import.log" --headless --path "$project" --import || status=$?
if ((status != 0)); then
    show_log "$workdir/import.log"
    die "godot --import failed with status $status"
fi

# --- Run 1: plugin disabled in Project Settings: the executor must stay off.
before=$failures
status=0
run_godot "$workdir/editor-disabled.log" --headless --editor --path "$project" --quit-after "$quit_after" || status=$?
check_common "$workdir/editor-disabled.log" "$status"
reject_line "$workdir/editor-disabled.log" "godot-mcp: executor enabled" "the executor ran although the plugin is disabled"
reject_line "$workdir/editor-disabled.log" "godot-mcp: plugin enabled" "plugin.gd ran although the plugin is disabled"
((failures == before)) && echo "ok: plugin disabled -> library loaded, executor off" || show_log "$workdir/editor-disabled.log"

# --- Run 2: plugin enabled: plugin.gd turns the switch on, the Rust plugin applies it.
set_plugin_enabled true
before=$failures
status=0
run_godot "$workdir/editor-enabled.log" --headless --editor --path "$project" --quit-after "$quit_after" || status=$?
check_common "$workdir/editor-enabled.log" "$status"
expect_line "$workdir/editor-enabled.log" "godot-mcp: plugin enabled; executor switch on" "plugin.gd did not turn the switch on"
expect_line "$workdir/editor-enabled.log" "godot-mcp: executor enabled" "the Rust plugin did not apply the switch"
((failures == before)) && echo "ok: plugin enabled -> executor on" || show_log "$workdir/editor-enabled.log"

if ((load_checks_only)); then
    if ((failures > 0)); then
        echo "FAILED: $failures add-on load check(s) failed" >&2
        exit 1
    fi
    echo "PASSED: add-on load checks in the real editor (Godot $godot_version)"
    exit 0
fi

# --- Run 3: the editor plane end to end: the real server, the real editor, every executor,
# undo/redo byte-identity, batches, a connection lost mid-batch (tests/editor_real.rs).
before=$failures
echo "==> cargo test -p godot-mcp-server --test editor_real"
if (cd "$repo_root" && "${CARGO:-cargo}" test -p godot-mcp-server --test editor_real -- --nocapture real_godot_); then
    echo "ok: editor plane against the real editor"
else
    fail "the editor-plane tests against the real editor failed"
fi

if ((failures > 0)); then
    echo "FAILED: $failures real-editor check(s) failed" >&2
    exit 1
fi
echo "PASSED: real-editor tests (Godot $godot_version)"
