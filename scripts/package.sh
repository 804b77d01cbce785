#!/usr/bin/env bash
# Builds the release package of the add-on for one platform:
#   dist/godot_mcp-<version>-<platform>.zip       (unpack it into a project's root folder)
# or, with --asset-library, merges per-platform zips into the Asset Library package:
#   dist/godot_mcp-<version>-asset-library.zip    (what the editor's AssetLib installs)
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: scripts/package.sh [--platform NAME] [--profile NAME] [--no-build] [--lib FILE]
                          [--server FILE] [--out DIR]
       scripts/package.sh --asset-library [--partial] [--out DIR] ZIP...

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

--asset-library merges per-platform zips made by this script (same version, one per
platform) into dist/godot_mcp-<version>-asset-library.zip: every platform's bin/<platform>/
in one zip whose entries all start with "./addons/godot_mcp/". Its one root folder is "./",
so the editor's installer lands every file in res://addons/godot_mcp/ whether "Ignore asset
root" strips that root (the Asset Library's download) or not (AssetLib > Import): see
docs/packaging.md. It needs all four platforms unless --partial is given (tests, which can
build only this machine's). The add-on's files must be identical in every zip. It deflates at
level 6, or at level 1 with --profile dev (as a dev zip).

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
asset_library=0
partial=0
zips=()

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
        --asset-library) asset_library=1 ;;
        --partial) partial=1 ;;
        -h | --help) usage; exit 0 ;;
        -*) die "unknown argument: $1 (see --help)" ;;
        *) zips+=("$1") ;;
    esac
    shift
done

python=""
for candidate in python3 python; do
    if command -v "$candidate" >/dev/null; then python="$candidate"; break; fi
done
[[ -n "$python" ]] || die "python3 is required to write the zip"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo_root/Cargo.toml" | head -n 1)"
[[ -n "$version" ]] || die "no version in Cargo.toml [workspace.package]"
[[ "$profile" =~ ^[A-Za-z0-9_-]+$ ]] || die "bad --profile $profile"
# A dev build (~250 MB of debug binaries, packed by tests) is deflated at level 1: 4x faster.
level=6
[[ $profile == release ]] || level=1

if [[ $asset_library -eq 1 ]]; then
    [[ ${#zips[@]} -gt 0 ]] || die "--asset-library needs the per-platform zips (see --help)"
    mkdir -p "$out"
    zip_path="$(cd "$out" && pwd)/godot_mcp-$version-asset-library.zip"
    rm -f "$zip_path"
    # Each input's entries are addons/godot_mcp/...; the output's are ./addons/godot_mcp/...,
    # with the inputs' mode bits, sorted, at the fixed time stamp.
    "$python" - "$zip_path" "$version" "$partial" "$level" "${zips[@]}" <<'PY' || { rm -f "$zip_path"; exit 2; }
import os, re, sys, time, zipfile
dest, version, partial, level, inputs = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), sys.argv[5:]
platforms = ["linux-x86_64", "linux-arm64", "windows-x86_64", "macos-universal"]
stamp = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800))[:6]
def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)
common, files, seen = None, {}, set()
for path in inputs:
    m = re.fullmatch(rf"godot_mcp-{re.escape(version)}-(.+)\.zip", os.path.basename(path))
    if not m or m.group(1) not in platforms:
        die(f"{path} is not a package.sh zip of version {version} for one of {', '.join(platforms)}")
    platform = m.group(1)
    if platform in seen:
        die(f"two zips for {platform}")
    seen.add(platform)
    shared = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name = info.filename
            if not name.startswith("addons/godot_mcp/") or name.endswith("/") or ".." in name.split("/"):
                die(f"{path}: unexpected entry {name}")
            data = (z.read(info), info.external_attr)
            if name.startswith("addons/godot_mcp/bin/"):
                if not name.startswith(f"addons/godot_mcp/bin/{platform}/"):
                    die(f"{path}: {name} is not in bin/{platform}/")
                files[name] = data
            else:
                shared[name] = data
    if common is None:
        common = shared
    elif shared != common:
        diff = sorted(set(shared.items()) ^ set(common.items()))
        die(f"{path}: the add-on's files differ from the other zips' ({diff[0][0]}); package every platform from one commit")
    if not any(n.startswith(f"addons/godot_mcp/bin/{platform}/") for n in files):
        die(f"{path}: no bin/{platform}/")
missing = [p for p in platforms if p not in seen]
if missing and not partial:
    die(f"no zip for {', '.join(missing)} (pass every platform's zip, or --partial)")
files.update(common)
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(files):
        data, attr = files[name]
        info = zipfile.ZipInfo("./" + name, stamp)
        info.external_attr = attr
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, data, compresslevel=level)
print(f"platforms: {', '.join(p for p in platforms if p in seen)}")
PY
    echo "packaged $zip_path"
    exit 0
fi
[[ ${#zips[@]} -eq 0 ]] || die "unexpected argument: ${zips[0]} (zips are merged only with --asset-library)"

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
grep -q "^version=\"$version\"$" "$repo_root/addons/godot_mcp/plugin.cfg" ||
    die "addons/godot_mcp/plugin.cfg version differs from Cargo.toml's $version"

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
