#!/usr/bin/env bash
# The agent benchmark's sandboxes, servers and scores (bench/agent-tasks/run.md says how
# a run goes; the agents themselves are started by whoever runs the benchmark).
#
#   runner.sh setup OUT --package ZIP [--arms shell,mcp] [TASK_ID...]
#       one sandbox per task per arm: OUT/<arm>/<task>/project/, the task's start project
#       (its files only: no validator, no solution, no hidden files), imported once so
#       .godot/ exists; in the mcp arm also the release zip (scripts/package.sh) unpacked
#       into it and the plugin enabled, as a user installs it. OUT/<arm>/<task>/
#       instruction.md is the text the agent is given.
#   runner.sh serve OUT TASK_ID
#       starts the sandbox's own server from its package, as a client would start it
#       (the default tool list; --editor: its managed editor warm before the first call):
#       godot-mcp serve --project OUT/mcp/<task>/project
#       --http 127.0.0.1:0 --editor --trace OUT/mcp/<task>/trace.jsonl; prints its URL and writes it
#       to OUT/mcp/<task>/url (its pid to server.pid, its stderr to server.log).
#   runner.sh stop OUT TASK_ID
#       stops that server (SIGTERM: a normal stop; it stops any game or editor it runs).
#   runner.sh score OUT
#       judges every sandbox with its task's validator (validate.sh, on a copy: the start
#       project, the sandbox's files over it, the add-on removed) into
#       OUT/<arm>/<task>/verdict.txt, sums each trace, and prints one table per arm:
#       passed, calls, errors by code, server time, and wall time (from
#       OUT/<arm>/<task>/wall.txt: two `date +%T` lines, before and after the task).
#
# Environment: GODOT_BIN (a Godot 4.4+ editor binary) for setup's import and for score.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
    echo "runner.sh: $*" >&2
    exit 2
}

all_tasks() {
    for d in "$here"/*/; do
        [[ -f "$d/instruction.md" ]] && basename "$d"
    done
}

# Copies a folder's files, leaving out hidden files and folders (.godot/, .git, notes).
copy_visible() { # from to
    mkdir -p "$2"
    (cd "$1" && find . -path '*/.*' -prune -o -type f -print0 | xargs -0 -r cp --parents -p -t "$2")
}

platform() {
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) echo linux-x86_64 ;;
        Linux-aarch64) echo linux-arm64 ;;
        Darwin-*) echo macos-universal ;;
        *) die "no package platform for $(uname -s)-$(uname -m)" ;;
    esac
}

cmd_setup() {
    local out="" package="" arms="shell,mcp" tasks=()
    out=${1:?runner.sh setup OUT --package ZIP [--arms shell,mcp] [TASK_ID...]}
    shift
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --package) package=$2; shift 2 ;;
            --arms) arms=$2; shift 2 ;;
            -*) die "unknown option $1" ;;
            *) tasks+=("$1"); shift ;;
        esac
    done
    [[ ${#tasks[@]} -gt 0 ]] || mapfile -t tasks < <(all_tasks)
    if [[ ",$arms," == *,mcp,* ]]; then
        [[ -f "$package" ]] || die "the mcp arm needs --package ZIP (scripts/package.sh's dist/godot_mcp-<version>-<platform>.zip)"
        package=$(cd "$(dirname "$package")" && pwd)/$(basename "$package")
    fi
    : "${GODOT_BIN:?GODOT_BIN must name a Godot 4.4+ editor binary (the start projects are imported once)}"
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    IFS=, read -r -a arm_list <<<"$arms"
    for arm in "${arm_list[@]}"; do
        [[ "$arm" == shell || "$arm" == mcp ]] || die "unknown arm $arm (shell, mcp)"
        for id in "${tasks[@]}"; do
            [[ -f "$here/$id/instruction.md" ]] || die "no task $id"
            local box="$out/$arm/$id"
            [[ -e "$box" ]] && die "$box exists: use a fresh OUT"
            copy_visible "$here/$id/start" "$box/project"
            cp "$here/$id/instruction.md" "$box/instruction.md"
            if [[ "$arm" == mcp ]]; then
                (cd "$box/project" && unzip -q "$package")
                printf '\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/godot_mcp/plugin.cfg")\n' \
                    >>"$box/project/project.godot"
            fi
            timeout 300 "$GODOT_BIN" --headless --import --path "$box/project" >"$box/import.log" 2>&1 || true
            [[ -d "$box/project/.godot" ]] || die "$box/project was not imported (see $box/import.log)"
            echo "$arm/$id"
        done
    done
}

cmd_serve() {
    local out=${1:?runner.sh serve OUT TASK_ID} id=${2:?runner.sh serve OUT TASK_ID}
    local box="$out/mcp/$id"
    [[ -d "$box/project" ]] || die "no mcp sandbox $box (runner.sh setup first)"
    local server="$box/project/addons/godot_mcp/bin/$(platform)/godot-mcp"
    [[ -x "$server" ]] || die "no server in the sandbox's package: $server"
    if [[ -f "$box/server.pid" ]] && kill -0 "$(cat "$box/server.pid")" 2>/dev/null; then
        die "a server already runs for $id (pid $(cat "$box/server.pid"), $(cat "$box/url"))"
    fi
    mkdir -p "$box/state"
    # Created here, not by the background shell's redirect: the wait below reads it at once.
    : >"$box/server.log"
    # As a client starts it: the default tool list, the sandbox's own state dir.
    env -u GODOT_MCP_TOOLSETS -u GODOT_MCP_PROJECT -u GODOT_MCP_TRACE \
        GODOT_MCP_STATE_DIR="$box/state" \
        "$server" serve --project "$box/project" --http 127.0.0.1:0 --editor --trace "$box/trace.jsonl" \
        </dev/null >/dev/null 2>"$box/server.log" &
    echo $! >"$box/server.pid"
    local url=""
    for _ in $(seq 1 300); do
        url=$(sed -n 's/^godot-mcp serve: listening on //p' "$box/server.log" | head -n 1)
        [[ -n "$url" ]] && break
        kill -0 "$(cat "$box/server.pid")" 2>/dev/null || die "the server exited: $(tail -n 5 "$box/server.log")"
        sleep 0.1
    done
    [[ -n "$url" ]] || die "the server printed no URL in 30 s (see $box/server.log)"
    echo "$url" >"$box/url"
    echo "$url"
}

cmd_stop() {
    local out=${1:?runner.sh stop OUT TASK_ID} id=${2:?runner.sh stop OUT TASK_ID}
    local pidfile="$out/mcp/$id/server.pid"
    [[ -f "$pidfile" ]] || die "no server was started for $id"
    local pid
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    rm -f "$pidfile"
}

cmd_score() {
    local out=${1:?runner.sh score OUT}
    : "${GODOT_BIN:?GODOT_BIN must name a Godot 4.4+ editor binary}"
    out=$(cd "$out" && pwd)
    for box in "$out"/*/*/; do
        box=${box%/}
        [[ -d "$box/project" ]] || continue
        local id arm work
        id=$(basename "$box")
        arm=$(basename "$(dirname "$box")")
        work=$(mktemp -d)
        # The start project, the sandbox's files over it, the add-on out of it.
        cp -R "$here/$id/start/." "$work/"
        copy_visible "$box/project" "$work"
        rm -rf "$work/addons/godot_mcp"
        sed -i '/^enabled=PackedStringArray("res:\/\/addons\/godot_mcp\/plugin.cfg")$/d' "$work/project.godot"
        BENCH_LOAD=always "$here/validate.sh" "$here/$id" "$work" >"$box/verdict.txt" 2>&1 || true
        rm -rf "$work"
        echo "$arm/$id: $(head -n 1 "$box/verdict.txt")"
    done
    python3 - "$out" <<'PY'
import collections, json, pathlib, sys, datetime

out = pathlib.Path(sys.argv[1])

def wall(box):
    """Seconds between the two `date +%T` lines of wall.txt (None if absent)."""
    f = box / "wall.txt"
    if not f.is_file():
        return None
    t = [l.strip() for l in f.read_text().splitlines() if l.strip()]
    if len(t) < 2:
        return None
    a, b = (datetime.datetime.strptime(x, "%H:%M:%S") for x in (t[0], t[-1]))
    s = (b - a).total_seconds()
    return s + 86400 if s < 0 else s

for arm in sorted(p for p in out.iterdir() if p.is_dir()):
    rows, codes = [], collections.Counter()
    for box in sorted(p for p in arm.iterdir() if (p / "project").is_dir()):
        verdict = (box / "verdict.txt").read_text().splitlines()[:1] if (box / "verdict.txt").is_file() else []
        passed = bool(verdict) and verdict[0].startswith("PASSED:")
        calls = errors = 0
        server_ms = 0.0
        trace = box / "trace.jsonl"
        if trace.is_file():
            for line in trace.read_text().splitlines():
                if not line.strip():
                    continue
                c = json.loads(line)
                calls += 1
                server_ms += c["duration_ms"]
                if c["outcome"] != "ok":
                    errors += 1
                    codes[f'{c["tool"]}: {c["error_code"]}'] += 1
        shell = (box / "shell_calls.txt").read_text().strip() if (box / "shell_calls.txt").is_file() else ""
        rows.append((box.name, passed, calls, errors, server_ms, shell, wall(box)))
    solved = [r for r in rows if r[1]]
    print(f"\n## {arm.name}: {len(solved)} of {len(rows)} passed\n")
    print("| task | verdict | MCP calls | refused+errors | server ms | shell calls | wall s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {'PASSED' if r[1] else 'FAILED'} | {r[2]} | {r[3]} | {r[4]:.0f} | {r[5]} | {'' if r[6] is None else int(r[6])} |")
    if solved:
        def per(i):
            vals = [r[i] for r in solved if r[i] is not None and r[i] != ""]
            return f"{sum(float(v) for v in vals) / len(vals):.1f}" if vals else "-"
        print(f"\nper solved task: MCP calls {per(2)}, shell calls {per(5)}, wall {per(6)} s")
    if codes:
        print("\ntop refusals and errors (tool: code, count):")
        for k, n in codes.most_common(10):
            print(f"- {k}: {n}")
PY
}

case "${1:-}" in
    setup | serve | stop | score)
        cmd=$1
        shift
        "cmd_$cmd" "$@"
        ;;
    *) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
