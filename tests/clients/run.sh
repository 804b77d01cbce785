#!/usr/bin/env bash
# The client matrix: the real `godot-mcp serve` driven by the clients people use.
#
#   - the official TypeScript SDK client (ts_sdk.test.mjs), over stdio and streamable HTTP;
#   - the TypeScript SDK's 2026 client (@modelcontextprotocol/client, ts_2026.test.mjs) on
#     protocol 2026-07-28: a listen stream, and run_tests as a task (the stand-in godot,
#     built beside the binary by `cargo build --workspace`, plays Godot);
#   - the MCP Inspector CLI (inspector.test.mjs): tools/list and tools/call, as a user runs it;
#   - the official Python SDK (python_sdk.py, run by python_sdk.test.mjs), stdio and HTTP.
#
# rmcp's client (the stack Codex uses) drives the server in the Rust tests (tests/*.rs).
# Versions are pinned: package-lock.json (npm) and requirements.txt (PyPI). node_modules
# is installed here with `npm ci` and the venv made when either changes, so a fresh
# machine needs only Node.js 20+, npm and python3; nothing is fetched at run time of
# the product.
#
#   tests/clients/run.sh        (scripts/test.sh runs it after building the binary)
#
# Environment: GODOT_MCP_BIN  the binary under test (default: $CARGO_TARGET_DIR/debug/godot-mcp,
#              else target/debug/godot-mcp);
#              GODOT_MCP_CLIENTS_VENV  where the Python venv lives (default:
#              $CARGO_TARGET_DIR/clients/venv, else target/clients/venv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
repo=$(cd ../.. && pwd)
target="${CARGO_TARGET_DIR:-$repo/target}"
export GODOT_MCP_BIN="${GODOT_MCP_BIN:-$target/debug/godot-mcp}"
venv="${GODOT_MCP_CLIENTS_VENV:-$target/clients/venv}"

if [[ ! -x "$GODOT_MCP_BIN" ]]; then
    echo "FAILED: no godot-mcp binary at $GODOT_MCP_BIN (cargo build -p godot-mcp-server first)" >&2
    exit 1
fi
if [[ ! -x "$(dirname "$GODOT_MCP_BIN")/godot-standin" ]]; then
    echo "FAILED: no stand-in godot beside $GODOT_MCP_BIN (cargo build -p godot-mcp-standin first)" >&2
    exit 1
fi
for tool in node npm python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "FAILED: the client matrix needs Node.js 20 or newer, npm and python3; $tool is not on PATH" >&2
        exit 1
    fi
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 20)); then
    echo "FAILED: the client matrix needs Node.js 20 or newer; node is $(node --version)" >&2
    exit 1
fi

# npm ci installs exactly package-lock.json; redone when the lock changes.
if ! cmp -s package-lock.json node_modules/.installed-package-lock.json; then
    echo "==> npm ci (tests/clients/package-lock.json)"
    # The Inspector declares node >=22.7.5; its CLI runs on Node 20 (this test is the proof).
    npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
    cp package-lock.json node_modules/.installed-package-lock.json
fi
if ! cmp -s requirements.txt "$venv/requirements.txt"; then
    echo "==> python venv $venv (tests/clients/requirements.txt)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
    cp requirements.txt "$venv/requirements.txt"
fi
export GODOT_MCP_PYTHON="$venv/bin/python"

echo "==> client matrix: $(node --version), @modelcontextprotocol/sdk $(node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version'), @modelcontextprotocol/client $(node -p 'require("./node_modules/@modelcontextprotocol/client/package.json").version'), @modelcontextprotocol/inspector $(node -p 'require("./node_modules/@modelcontextprotocol/inspector/package.json").version'), $("$GODOT_MCP_PYTHON" -m pip list --disable-pip-version-check 2>/dev/null | awk '$1 == "mcp" { print "mcp " $2 }')"
# The spec reporter's closing lines (`ℹ pass N`, `ℹ fail N`) are counted by scripts/test.sh;
# a failing test exits non-zero.
node --test --test-reporter=spec ts_sdk.test.mjs ts_2026.test.mjs inspector.test.mjs python_sdk.test.mjs
