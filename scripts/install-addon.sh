#!/usr/bin/env bash
# Builds the godot-mcp editor add-on and installs it into addons/ and godot_project/.
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: scripts/install-addon.sh [--release] [--project DIR] [--no-build]

Builds the Rust GDExtension (cargo build -p godot-mcp-editor), copies the library into
addons/godot_mcp/bin/<platform>/, then copies the whole add-on (addons/godot_mcp/) into a Godot
project, by default this repository's godot_project/.

  --release      build with --release (default: debug build). Either build is installed
                 under the same file name, so the editor loads whichever was installed last.
  --project DIR  install into DIR/addons/godot_mcp/ instead (DIR must hold project.godot).
  --no-build     skip cargo; install the library already in the target directory.
  -h, --help     show this help.

Environment:
  CARGO_TARGET_DIR  where cargo puts build output (default: <repo>/target); honoured both
                    by the build and when looking for the built library.
  CARGO             the cargo binary to run (default: cargo).

Afterwards open the project in Godot 4.4+ and enable "Godot MCP" in
Project Settings > Plugins; that switch turns the add-on's executor on. The library is
loaded once per editor session (reloadable = false): restart the editor after reinstalling.
USAGE
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
profile=debug
project="$repo_root/godot_project"
build=1

while [[ $# -gt 0 ]]; do
    case "$1" in
        --release) profile=release ;;
        --project)
            [[ $# -ge 2 ]] || { echo "error: --project needs a directory" >&2; exit 2; }
            project="$2"
            shift
            ;;
        --no-build) build=0 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "error: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

if [[ ! -f "$project/project.godot" ]]; then
    echo "error: $project has no project.godot; not a Godot project" >&2
    exit 1
fi

case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "error: unsupported CPU $(uname -m)" >&2; exit 1 ;;
esac
# The bin/<platform>/ folder godot_mcp.gdextension names for this machine. On macOS that is
# the universal slot; a local build of one architecture serves this machine from it.
case "$(uname -s)" in
    Linux*) lib_name=libgodot_mcp_editor.so; platform="linux-$arch" ;;
    Darwin*) lib_name=libgodot_mcp_editor.dylib; platform=macos-universal ;;
    MINGW* | MSYS* | CYGWIN*) lib_name=godot_mcp_editor.dll; platform="windows-$arch" ;;
    *) echo "error: unsupported OS $(uname -s)" >&2; exit 1 ;;
esac

target_dir="${CARGO_TARGET_DIR:-$repo_root/target}"
# A relative CARGO_TARGET_DIR is relative to where cargo runs; we run it from the repo root.
[[ "$target_dir" = /* ]] || target_dir="$repo_root/$target_dir"

if [[ $build -eq 1 ]]; then
    cargo_args=(build -p godot-mcp-editor)
    [[ $profile == release ]] && cargo_args+=(--release)
    echo "==> (cd $repo_root && ${CARGO:-cargo} ${cargo_args[*]})"
    (cd "$repo_root" && CARGO_TARGET_DIR="$target_dir" "${CARGO:-cargo}" "${cargo_args[@]}")
fi

built="$target_dir/$profile/$lib_name"
if [[ ! -f "$built" ]]; then
    echo "error: built library not found at $built (build first, or check CARGO_TARGET_DIR)" >&2
    exit 1
fi

addon_src="$repo_root/addons/godot_mcp"
bin_dir="$addon_src/bin/$platform"
echo "==> $built -> $bin_dir/$lib_name"
mkdir -p "$bin_dir"
# Copy to a temporary name and rename, so an editor never sees a half-written library.
cp "$built" "$bin_dir/.$lib_name.tmp"
mv -f "$bin_dir/.$lib_name.tmp" "$bin_dir/$lib_name"

addon_dst="$project/addons/godot_mcp"
if [[ "$(cd "$addon_src" && pwd -P)" != "$(mkdir -p "$addon_dst" && cd "$addon_dst" && pwd -P)" ]]; then
    echo "==> $addon_src/ -> $addon_dst/"
    # Replace the installed add-on wholesale so files removed from the add-on disappear too.
    rm -rf "$addon_dst"
    mkdir -p "$addon_dst"
    cp -R "$addon_src/." "$addon_dst/"
fi

echo "installed godot-mcp add-on ($profile) into $addon_dst"
