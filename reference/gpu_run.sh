#!/usr/bin/env bash
# Runs the reference's single-GPU scenarios for real on a CUDA GPU (vramref/gpu_measure.py) and
# writes JSON lines; run it on the GPU machine with a Python that has torch, transformers, peft
# and torchao (the versions used are in each file's first line). Example:
#   reference/gpu_run.sh --output /tmp/run1.jsonl --workers 2 --seconds 330 --skip DeepSeek-V3/
# then, here: reference/gpu_dataset.sh /tmp/run1.jsonl [more runs...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
export PYTHONUNBUFFERED=1 PYTHONHASHSEED=0
exec "${PYTHON:-python3}" -m vramref.gpu_measure "$@"
