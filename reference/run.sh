#!/usr/bin/env bash
# Regenerates data/measurements/pytorch_reference.json (every scenario of vramref/grid.py).
# Extra arguments go to the harness (e.g. --workers 1, --only Llama-3.1-8B, --output FILE).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -x "$here/.venv/bin/python" ] || "$here/setup.sh"
cd "$here"
# fixed string hashing: the reasons of refused scenarios print Python sets (PEFT's messages)
export PYTHONHASHSEED=0
exec nice -n 10 "$here/.venv/bin/python" -m vramref.dataset "$@"
