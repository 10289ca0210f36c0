#!/usr/bin/env bash
# Runs DeepSpeed's, accelerate's and llm-analysis's estimators on the reference scenarios and
# writes data/measurements/peer_estimates.json (each peer's bytes or why not, time per estimate).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -x "$here/.venv/bin/python" ] || "$here/setup.sh"
exec nice -n 10 "$here/.venv/bin/python" "$here/peers/estimates.py" "$@"
