#!/usr/bin/env bash
# Judge one project copy with one task's validator, as docs/AGENT-TRIALS practice says:
# the validator files in, a short editor load so scripts, classes and uids register and
# images import, then the validator scene. Prints the validator's one verdict line and
# exits 0 on PASSED, 1 on FAILED, 2 when there is no verdict (a crash, a hang, a parse
# error in the project that stopped the validator).
#
#   bench/agent-tasks/validate.sh TASK_DIR COPY_DIR
#
# COPY_DIR is changed (validator/ is added, the godot_mcp add-on is removed): pass a copy.
# GODOT_BIN names the Godot 4.4+ editor binary. BENCH_LOAD=auto skips the editor load
# when the copy holds nothing it would change (no importable file, no class_name, no
# autoload, no editor plugin); check.sh uses it on the start projects. Default: always.
set -euo pipefail
task=$(cd "$1" && pwd)
copy=$(cd "$2" && pwd)
: "${GODOT_BIN:?GODOT_BIN must name a Godot 4.4+ editor binary}"
timeout_s=${BENCH_TIMEOUT:-120}

# The add-on is the agent's tool, not part of the answer.
rm -rf "$copy/addons/godot_mcp"
rm -rf "$copy/validator"
cp -R "$task/validator" "$copy/validator"

needs_load() {
    [[ "${BENCH_LOAD:-always}" != auto ]] && return 0
    # Files the editor imports (images, audio, models, fonts, translations).
    if find "$copy" -path "$copy/.godot" -prune -o -type f \( -iname '*.svg' -o -iname '*.png' \
        -o -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.webp' -o -iname '*.bmp' -o -iname '*.tga' \
        -o -iname '*.hdr' -o -iname '*.exr' -o -iname '*.wav' -o -iname '*.ogg' -o -iname '*.mp3' \
        -o -iname '*.glb' -o -iname '*.gltf' -o -iname '*.obj' -o -iname '*.fbx' -o -iname '*.blend' \
        -o -iname '*.dae' -o -iname '*.ttf' -o -iname '*.otf' -o -iname '*.woff' -o -iname '*.woff2' \
        -o -iname '*.fnt' -o -iname '*.csv' \) -print -quit | grep -q .; then
        return 0
    fi
    # Global classes, uids the editor would assign, autoloads and plugins.
    grep -rqsE --include='*.gd' '^[[:space:]]*class_name[[:space:]]' "$copy" && return 0
    grep -rqs --include='*.tscn' --include='*.tres' --include='*.godot' 'uid://' "$copy" && return 0
    grep -qsE '^\[(autoload|editor_plugins)\]' "$copy/project.godot" && return 0
    return 1
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if needs_load; then
    # --import: open the editor, scan and import everything, then quit (Godot 4.3+).
    timeout "$timeout_s" "$GODOT_BIN" --headless --import --path "$copy" >"$log" 2>&1 || true
fi
out=$(timeout "$timeout_s" "$GODOT_BIN" --headless --path "$copy" res://validator/validate.tscn 2>"$log" || true)
verdict=$(grep -E '^(PASSED|FAILED): ' <<<"$out" || true)
if [[ $(grep -c . <<<"$verdict") -ne 1 ]]; then
    echo "NO VERDICT: the validator printed $(grep -c . <<<"$verdict") verdict lines; its output:"
    tail -n 30 <<<"$out"
    tail -n 30 "$log"
    exit 2
fi
echo "$verdict"
[[ "$verdict" == PASSED:* ]]
