#!/usr/bin/env bash
# Every task measures something: its validator FAILS on the start project and PASSES on
# the start project with the reference solution copied over it, judged by a real Godot
# (GODOT_BIN) through validate.sh, each in a fresh temp copy.
#
#   bench/agent-tasks/check.sh [TASK_ID...]     (default: every task)
#
# Without GODOT_BIN it prints SKIPPED and exits 0 (1 with GODOT_MCP_REQUIRE_GODOT=1).
# Tasks run in parallel, BENCH_JOBS at a time (default: the number of cores). Godot
# starts: each check loads the editor only when its copy holds something the load would
# change (BENCH_LOAD=auto, see validate.sh; BENCH_LOAD=always to load every copy), then
# runs the validator: one or two starts per check.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -z "${GODOT_BIN:-}" ]]; then
    echo "bench/agent-tasks/check.sh: SKIPPED (GODOT_BIN is not set)"
    [[ "${GODOT_MCP_REQUIRE_GODOT:-}" == 1 ]] && {
        echo "FAILED: GODOT_MCP_REQUIRE_GODOT=1 but GODOT_BIN is not set" >&2
        exit 1
    }
    exit 0
fi
export GODOT_BIN
python3 "$here/make_tasks.py" --check

if [[ $# -gt 0 ]]; then
    tasks=("$@")
else
    tasks=()
    for d in "$here"/*/; do
        [[ -f "$d/instruction.md" ]] && tasks+=("$(basename "$d")")
    done
fi

check_one() { # task id -> one line: ok or the reason
    local id=$1 dir="$here/$1" work out
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    cp -R "$dir/start/." "$work/"
    if out=$(BENCH_LOAD=${BENCH_LOAD:-auto} "$here/validate.sh" "$dir" "$work" 2>&1); then
        echo "BAD $id: the validator passes on the start project: $out"
        return
    elif [[ "$out" != FAILED:* ]]; then
        echo "BAD $id: no verdict on the start project: $out"
        return
    fi
    local start_verdict=$out
    rm -rf "$work" && mkdir "$work"
    cp -R "$dir/start/." "$work/"
    cp -R "$dir/solution/." "$work/"
    if ! out=$(BENCH_LOAD=${BENCH_LOAD:-auto} "$here/validate.sh" "$dir" "$work" 2>&1); then
        echo "BAD $id: the validator does not pass on the solution: $out"
        return
    fi
    echo "ok $id | start: $start_verdict | solution: $out"
}
export -f check_one
export here

results=$(printf '%s\n' "${tasks[@]}" | xargs -P "${BENCH_JOBS:-$(nproc)}" -I{} bash -c 'check_one "$@"' _ {})
sort <<<"$results"
bad=$(grep -c '^BAD ' <<<"$results" || true)
good=$(grep -c '^ok ' <<<"$results" || true)
echo "bench/agent-tasks/check.sh: $good of ${#tasks[@]} tasks fail on start and pass on their solution ($("$GODOT_BIN" --headless --version 2>/dev/null | tail -n 1))"
[[ "$bad" -eq 0 && "$good" -eq ${#tasks[@]} ]]
