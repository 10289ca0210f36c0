#!/usr/bin/env bash
# The main job: install what is missing, build the program (web UI + C++), estimate Llama-3.1-8B
# on 8x H100 80GB, then serve the web app and JSON API on http://127.0.0.1:8080/ with that
# scenario loaded, in the foreground until Ctrl-C. VRAMPLAN_PORT=N picks another port (0: any
# free one). Any arguments replace the default scenario's flags and only print the estimate.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what running needs: no test or benchmark tools, no test binaries (scripts/test.sh adds
# them to the same build dir).
scripts/setup.sh run
VRAMPLAN_TARGET=vramplan scripts/build.sh build -DBUILD_TESTING=OFF -DVRAMPLAN_BUILD_BENCH=OFF
if [ $# -gt 0 ]; then
  exec build/vramplan estimate "$@"
fi
build/vramplan estimate --model Llama-3.1-8B --gpu h100-80gb --gpus 8 --seq-len 8192 \
  --micro-batch 1 --global-batch 64 --fsdp full_shard --recompute selective
port="${VRAMPLAN_PORT:-8080}"
query="?model=Llama-3.1-8B&gpu=h100-80gb&gpus=8&seq_len=8192&micro_batch=1&global_batch=64"
query+="&fsdp=full_shard&recompute=selective"
echo
if [ "$port" != 0 ]; then
  echo "vramplan: open http://127.0.0.1:${port}/${query} for this scenario in the web app"
else
  echo "vramplan: add ${query} to the URL below for this scenario in the web app"
fi
exec build/vramplan serve --host 127.0.0.1 --port "$port"
