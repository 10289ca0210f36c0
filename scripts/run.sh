#!/usr/bin/env bash
# The main job: install what is missing, build, and estimate Llama-3.1-8B on 8x H100 80GB.
# Any arguments replace the default scenario's flags.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build
if [ $# -gt 0 ]; then
  exec build/vramplan estimate "$@"
fi
exec build/vramplan estimate --model Llama-3.1-8B --gpu h100-80gb --gpus 8 --seq-len 8192 \
  --micro-batch 1 --global-batch 64 --fsdp full_shard --recompute selective
