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
#   runner.sh kit OUT
#       the agents' commands, with this shell's GODOT_BIN (the servers' Godot), AGENT_GODOT
#       (the agents' `godot`, default GODOT_BIN) and DISPLAY baked in: OUT/bin/<arm>/
#       begin-task and end-task ID (agent-task.sh begin/end), godot, and in the mcp arm
#       mcp-call (the command-line MCP client, in GODOT_MCP_PYTHON or the clients' venv).
#   runner.sh prompt OUT ARM TASK_ID...
#       the prompt for one agent doing those tasks in that arm (prompt.md filled in).
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

cmd_kit() {
    local out=${1:?runner.sh kit OUT}
    : "${GODOT_BIN:?GODOT_BIN must name the Godot the servers run}"
    out=$(cd "$out" && pwd)
    # Where tests/clients/run.sh makes it: under CARGO_TARGET_DIR when that is set.
    local python=${GODOT_MCP_PYTHON:-${CARGO_TARGET_DIR:-$here/../../target}/clients/venv/bin/python}
    [[ -x "$python" ]] || die "no python with the MCP SDK at $python (tests/clients/run.sh makes it)"
    python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python")
    local arm
    for arm in shell mcp; do
        local bin="$out/bin/$arm"
        mkdir -p "$bin"
        printf '#!/bin/sh\nDISPLAY=%q exec %q "$@"\n' "${DISPLAY:-}" "${AGENT_GODOT:-$GODOT_BIN}" >"$bin/godot"
        for what in begin end; do
            printf '#!/bin/sh\n[ $# -eq 1 ] || { echo "usage: %s-task TASK_ID" >&2; exit 2; }\nGODOT_BIN=%q DISPLAY=%q GODOT_MCP_PYTHON=%q exec %q %s %q %s "$1"\n' \
                "$what" "$GODOT_BIN" "${DISPLAY:-}" "$python" "$here/agent-task.sh" "$what" "$out" "$arm" >"$bin/$what-task"
        done
        if [[ "$arm" == mcp ]]; then
            printf '#!/bin/sh\nexec %q %q "$@"\n' "$python" "$here/mcp-call" >"$bin/mcp-call"
        fi
        chmod +x "$bin"/*
    done
    echo "$out/bin/shell $out/bin/mcp"
}

cmd_prompt() {
    local out=${1:?runner.sh prompt OUT ARM TASK_ID...} arm=${2:?runner.sh prompt OUT ARM TASK_ID...}
    shift 2
    [[ $# -gt 0 ]] || die "runner.sh prompt OUT ARM TASK_ID...: name the tasks"
    out=$(cd "$out" && pwd)
    python3 - "$here/prompt.md" "$out" "$arm" "$@" <<'PY'
import sys
template, out, arm, *tasks = sys.argv[1:]
mcp = arm == "mcp"
bin_ = f"{out}/bin/{arm}"
fill = {
    "{TASKS}": ", ".join(tasks),
    "{BIN}": bin_,
    "{OUT}": out,
    "{ARM}": arm,
    "{MCP_BEGIN}": (" It also starts the project's godot-mcp server and prints what your MCP"
                    " client shows you when it connects: the server's instructions and its"
                    " tools (names, descriptions, input schemas).") if mcp else "",
    "{MCP_TOOLS}": (f" You also have that godot-mcp server, through the MCP client"
                    f" `{bin_}/mcp-call` (run it from the working folder):"
                    " `mcp-call TOOL '{\"key\": value}'` calls a tool (the arguments as one JSON"
                    " object, `@FILE` or `@-` for one in a file or on standard input, or as key=value pairs, where `key=@FILE` passes FILE's text and `key=@-` standard input's);"
                    " `mcp-call --list` shows the tools listed now, and after a call that"
                    " changes the list it prints the tools that came.") if mcp else "",
    "{MCP_COUNT}": (", mcp-call included; and a line `mcp N`: how many of those were"
                    " mcp-call") if mcp else "",
}
text = open(template).read()
for k, v in fill.items():
    text = text.replace(k, v)
print(text, end="")
PY
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

def calls_of(box):
    """The agent's own count: calls.txt (`shell N`, `mcp N`: mcp-call runs among the
    shell commands, `view N`, `edit N`; total = shell + view + edit), else the older
    shell_calls.txt (one number: shell commands only)."""
    f = box / "calls.txt"
    if f.is_file():
        c = {"shell": 0, "mcp": 0, "view": 0, "edit": 0}
        for line in f.read_text().splitlines():
            parts = line.replace(":", " ").split()
            if len(parts) >= 2 and parts[0] in c and parts[1].isdigit():
                c[parts[0]] = int(parts[1])
        c["total"] = c["shell"] + c["view"] + c["edit"]
        return c
    f = box / "shell_calls.txt"
    if f.is_file() and f.read_text().strip().isdigit():
        n = int(f.read_text().strip())
        return {"shell": n, "mcp": 0, "view": 0, "edit": 0, "total": n}
    return None

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
        agent = calls_of(box)
        rows.append((box.name, passed, calls, errors, server_ms, agent, wall(box)))
    if not rows:
        continue
    solved = [r for r in rows if r[1]]
    print(f"\n## {arm.name}: {len(solved)} of {len(rows)} passed\n")
    print("| task | verdict | MCP calls (trace) | refused+errors | server ms | agent calls (shell / of them mcp-call / view / edit) | wall s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        a = r[5]
        shown = "" if a is None else f"{a['total']} ({a['shell']} / {a['mcp']} / {a['view']} / {a['edit']})"
        print(f"| {r[0]} | {'PASSED' if r[1] else 'FAILED'} | {r[2]} | {r[3]} | {r[4]:.0f} | {shown} | {'' if r[6] is None else int(r[6])} |")
    if solved:
        def stats(vals):
            vals = sorted(v for v in vals if v is not None)
            if not vals:
                return "-"
            n = len(vals)
            median = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
            return f"mean {sum(vals) / n:.1f}, median {median:.1f} (n={n})"
        print(f"\nper solved task: agent calls {stats([r[5] and r[5]['total'] for r in solved])}; "
              f"MCP calls (trace) {stats([r[2] for r in solved])}; wall s {stats([r[6] for r in solved])}")
    if codes:
        print("\ntop refusals and errors (tool: code, count):")
        for k, n in codes.most_common(10):
            print(f"- {k}: {n}")
PY
}

case "${1:-}" in
    setup | serve | stop | kit | prompt | score)
        cmd=$1
        shift
        "cmd_$cmd" "$@"
        ;;
    *) sed -n '2,36p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
