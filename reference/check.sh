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
if [ "$#" -gt 0 ]; then
    # a subset (--only/--limit): compare only the rows it produced
    "$here/.venv/bin/python" "$here/compare_rows.py" "$committed" "$fresh"
else
    if ! diff -q "$committed" "$fresh" >/dev/null; then
        echo "pytorch_reference.json differs from a fresh run:" >&2
        diff <(python3 -m json.tool "$committed") <(python3 -m json.tool "$fresh") | head -40 >&2
        exit 1
    fi
fi
echo "pytorch_reference.json matches a fresh run"
