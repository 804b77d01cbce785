#!/usr/bin/env bash
# Runs a command with an X server: starts Xvfb on a free display, waits until it is ready
# (Xvfb writes its display number to -displayfd once it accepts connections: no sleep),
# exports DISPLAY, runs the command and stops Xvfb again. For the renderer tier
# (GODOT_RENDER_BIN, a Godot build with X11 + OpenGL 3 and Mesa's llvmpipe).
#
#   scripts/with-xvfb.sh COMMAND [ARGS...]
#
# Needs Debian's xvfb and libgl1-mesa-dri. XVFB_SCREEN overrides the screen
# (default 1280x720x24).
set -euo pipefail
if [[ $# -eq 0 || "$1" == -h || "$1" == --help ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit $(($# == 0 ? 2 : 0))
fi
command -v Xvfb >/dev/null || { echo "with-xvfb.sh: Xvfb is not installed (apt-get install xvfb libgl1-mesa-dri)" >&2; exit 1; }

fifo_dir=$(mktemp -d)
mkfifo "$fifo_dir/display"
Xvfb -displayfd 3 -screen 0 "${XVFB_SCREEN:-1280x720x24}" -nolisten tcp -noreset \
    3>"$fifo_dir/display" >"$fifo_dir/xvfb.log" 2>&1 &
xvfb=$!
cleanup() {
    kill "$xvfb" 2>/dev/null || true
    wait "$xvfb" 2>/dev/null || true
    rm -rf "$fifo_dir"
}
trap cleanup EXIT
# Blocks until Xvfb is ready (it writes the number) or exits (EOF: empty read).
read -r display <"$fifo_dir/display" || true
if [[ -z "${display:-}" ]]; then
    echo "with-xvfb.sh: Xvfb did not start:" >&2
    cat "$fifo_dir/xvfb.log" >&2
    exit 1
fi
export DISPLAY=":$display"
echo "==> Xvfb ready on DISPLAY=$DISPLAY"
status=0
"$@" || status=$?
exit "$status"
