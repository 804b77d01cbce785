#!/usr/bin/env bash
# What an agent runs before and after each task (the 2026-12-06 runs gave agents these two
# commands, so every task's times and server were handled the same way in both arms):
#
#   agent-task.sh begin OUT ARM TASK_ID   stamps the start (date +%T >> OUT/ARM/TASK/wall.txt)
#                                         and prints the working folder and the task's text;
#                                         in the mcp arm starts the sandbox's server
#                                         (runner.sh serve) and prints what an MCP client
#                                         shows the model when it connects: the server's
#                                         instructions and its tools (mcp-call --start)
#   agent-task.sh end OUT ARM TASK_ID     stamps the end; in the mcp arm stops the server
#
# The server finds Godot as runner.sh serve does (GODOT_BIN: give it the renderer build and
# a DISPLAY so game screenshots work, as the agents' own `godot` has). mcp-call runs in
# GODOT_MCP_PYTHON (default: the venv tests/clients/run.sh makes, target/clients/venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -eq 4 ]] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
what=$1 out=$2 arm=$3 id=$4
box="$out/$arm/$id"
[[ -d "$box/project" ]] || { echo "agent-task.sh: no sandbox $box" >&2; exit 2; }
case "$what" in
    begin)
        date +%T >>"$box/wall.txt"
        echo "started $id at $(tail -n 1 "$box/wall.txt"); working folder: $box/project"
        echo
        echo "The task:"
        cat "$box/instruction.md"
        if [[ "$arm" == mcp ]]; then
            url=$("$here/runner.sh" serve "$out" "$id")
            echo
            echo "The godot-mcp server for this project is at $url; your MCP client (mcp-call) connected:"
            echo
            python=${GODOT_MCP_PYTHON:-$here/../../target/clients/venv/bin/python}
            # Through the sandbox's session (mcp-call starts it), which the agent's calls
            # then use, as a built-in client keeps its connection.
            (cd "$box/project" && "$python" "$here/mcp-call" --start)
        fi
        ;;
    end)
        date +%T >>"$box/wall.txt"
        if [[ "$arm" == mcp ]]; then
            pkill -f -- "mcp-call --session $box " || true
            "$here/runner.sh" stop "$out" "$id" || true
        fi
        echo "ended $id at $(tail -n 1 "$box/wall.txt")"
        ;;
    *) echo "agent-task.sh: begin or end, not $what" >&2; exit 2 ;;
esac
