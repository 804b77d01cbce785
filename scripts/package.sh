#!/usr/bin/env bash
# Builds the release package of the add-on for one platform:
#   dist/godot_mcp-<version>-<platform>.zip
# laid out for the Godot Asset Library (unpack it into a project's root folder).
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: scripts/package.sh [--platform NAME] [--profile NAME] [--no-build] [--lib FILE]
                          [--server FILE] [--out DIR]

Builds (cargo build --release --locked) the add-on's GDExtension library and the godot-mcp
server for this machine, and writes dist/godot_mcp-<version>-<platform>.zip:

  addons/godot_mcp/plugin.cfg, plugin.gd, godot_mcp.gdextension, LICENSE, icon.svg, probe/
  addons/godot_mcp/bin/<platform>/<library>     the path godot_mcp.gdextension names
  addons/godot_mcp/bin/<platform>/godot-mcp     the server (godot-mcp.exe on Windows)

<platform> is one of linux-x86_64, linux-arm64, windows-x86_64, macos-universal; several
platforms' zips unpack into one project side by side. <version> is the workspace version.

  --platform NAME  package for NAME instead of this machine (with --lib and --server).
  --profile NAME   the cargo profile to build and package (default: release). Tests pass
                   `--profile dev --no-build` to pack the debug build scripts/test.sh
                   already made; a release is always packaged from the release profile.
  --no-build       do not run cargo; take the build of that profile already in the
                   target dir.
  --lib FILE       the GDExtension library to package (e.g. a lipo-merged universal one).
  --server FILE    the server binary to package.
  --out DIR        write the zip into DIR (default: dist/ in the repository).
  -h, --help       show this help.

On macOS, build the library and the server for aarch64-apple-darwin and x86_64-apple-darwin,
merge each pair with `lipo -create`, and pass the results with --lib and --server
(.github/workflows/release.yml does this): a single-architecture build is never labelled
universal.

Environment: CARGO_TARGET_DIR, CARGO as for cargo; SOURCE_DATE_EPOCH fixes the time
stamps in the zip (default: 1980-01-01, so the same inputs give the same zip).
USAGE
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
platform=""
profile=release
build=1
lib=""
server=""
out="$repo_root/dist"

die() { echo "error: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --platform | --profile | --lib | --server | --out)
            [[ $# -ge 2 ]] || die "$1 needs a value"
            case "$1" in
                --platform) platform="$2" ;;
                --profile) profile="$2" ;;
                --lib) lib="$2" ;;
                --server) server="$2" ;;
                --out) out="$2" ;;
            esac
            shift
            ;;
        --no-build) build=0 ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
    shift
done

if [[ -z "$platform" ]]; then
    case "$(uname -s)" in
        Linux*) os=linux ;;
        Darwin*) os=macos ;;
        MINGW* | MSYS* | CYGWIN*) os=windows ;;
        *) die "unsupported OS $(uname -s)" ;;
    esac
    case "$(uname -m)" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=arm64 ;;
        *) die "unsupported CPU $(uname -m)" ;;
    esac
    if [[ $os == macos ]]; then
        [[ -n "$lib" && -n "$server" ]] ||
            die "on macOS pass lipo-merged universal binaries with --lib and --server (see --help)"
        platform=macos-universal
    else
        platform="$os-$arch"
    fi
fi
case "$platform" in
    linux-x86_64 | linux-arm64) lib_name=libgodot_mcp_editor.so; server_name=godot-mcp ;;
    windows-x86_64) lib_name=godot_mcp_editor.dll; server_name=godot-mcp.exe ;;
    macos-universal) lib_name=libgodot_mcp_editor.dylib; server_name=godot-mcp ;;
    *) die "unknown platform $platform (linux-x86_64, linux-arm64, windows-x86_64, macos-universal)" ;;
esac

manifest="$repo_root/addons/godot_mcp/godot_mcp.gdextension"
grep -q "\"res://addons/godot_mcp/bin/$platform/$lib_name\"" "$manifest" ||
    die "$manifest does not name bin/$platform/$lib_name"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo_root/Cargo.toml" | head -n 1)"
[[ -n "$version" ]] || die "no version in Cargo.toml [workspace.package]"
grep -q "^version=\"$version\"$" "$repo_root/addons/godot_mcp/plugin.cfg" ||
    die "addons/godot_mcp/plugin.cfg version differs from Cargo.toml's $version"

[[ "$profile" =~ ^[A-Za-z0-9_-]+$ ]] || die "bad --profile $profile"
# cargo puts the dev profile's output in debug/, every other profile's in a folder of its name.
profile_dir="$profile"
[[ $profile == dev ]] && profile_dir=debug
target_dir="${CARGO_TARGET_DIR:-$repo_root/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo_root/$target_dir"
if [[ -z "$lib" || -z "$server" ]]; then
    if [[ $build -eq 1 ]]; then
        echo "==> cargo build --profile $profile --locked -p godot-mcp-editor -p godot-mcp-server"
        (cd "$repo_root" && CARGO_TARGET_DIR="$target_dir" "${CARGO:-cargo}" build --profile "$profile" \
            --locked -p godot-mcp-editor -p godot-mcp-server)
    fi
    lib="${lib:-$target_dir/$profile_dir/$lib_name}"
    server="${server:-$target_dir/$profile_dir/$server_name}"
fi
[[ -f "$lib" ]] || die "library not found: $lib"
[[ -f "$server" ]] || die "server binary not found: $server"

python=""
for candidate in python3 python; do
    if command -v "$candidate" >/dev/null; then python="$candidate"; break; fi
done
[[ -n "$python" ]] || die "python3 is required to write the zip"

stage="$(mktemp -d "${TMPDIR:-/tmp}/godot-mcp-package.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
addon="$stage/addons/godot_mcp"
mkdir -p "$addon"
# The add-on as the repository holds it, minus whatever a developer installed into bin/.
(cd "$repo_root/addons/godot_mcp" && tar cf - --exclude=./bin .) | (cd "$addon" && tar xf -)
mkdir -p "$addon/bin/$platform"
cp "$lib" "$addon/bin/$platform/$lib_name"
cp "$server" "$addon/bin/$platform/$server_name"
chmod 755 "$addon/bin/$platform/$server_name"

mkdir -p "$out"
zip_path="$(cd "$out" && pwd)/godot_mcp-$version-$platform.zip"
rm -f "$zip_path"
# Python's zipfile rather than zip(1): present on every CI runner, Windows included.
# Sorted entries, fixed time stamps and the files' mode bits (the server stays executable).
# A dev build (~250 MB of debug binaries, packed by tests) is deflated at level 1: 4x faster.
level=6
[[ $profile == release ]] || level=1
"$python" - "$stage" "$zip_path" "$level" <<'PY'
import os, sys, time, zipfile
stage, dest, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
stamp = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800))[:6]
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(stage):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            info = zipfile.ZipInfo(os.path.relpath(path, stage).replace(os.sep, "/"), stamp)
            info.external_attr = (0o100755 if os.access(path, os.X_OK) else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(info, f.read(), compresslevel=level)
PY
echo "packaged $zip_path"
