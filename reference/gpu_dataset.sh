#!/usr/bin/env bash
# Merges GPU runs (JSON lines from gpu_run.sh, oldest first) into
# data/measurements/gpu_measured.json. The committed file came from gpu_runs/*.jsonl:
#   reference/gpu_dataset.sh reference/gpu_runs/h200-2026-11-26-*.jsonl
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runs=()
for f in "$@"; do runs+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
cd "$here"
exec "${PYTHON:-python3}" -m vramref.gpu_dataset "${runs[@]}"
