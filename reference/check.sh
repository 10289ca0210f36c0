#!/usr/bin/env bash
# Regenerates the reference dataset into a temporary file and fails if it differs from the
# committed data/measurements/pytorch_reference.json. Also runs the harness's own tests.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
committed="$here/../data/measurements/pytorch_reference.json"
[ -x "$here/.venv/bin/python" ] || "$here/setup.sh"
(cd "$here" && .venv/bin/black --check --quiet . && .venv/bin/python -m pytest -q tests)
fresh="$(mktemp --suffix=.json)"
trap 'rm -f "$fresh"' EXIT
"$here/run.sh" --output "$fresh" "$@"
# byte counts may differ by a few bytes between runs (compare_rows.py says why); all else exactly
subset=""
[ "$#" -gt 0 ] && subset="--subset"  # --only / --limit: compare the rows produced
"$here/.venv/bin/python" "$here/compare_rows.py" "$committed" "$fresh" $subset
echo "pytorch_reference.json matches a fresh run"
