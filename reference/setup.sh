#!/usr/bin/env bash
# Creates reference/.venv with the exact package versions of requirements.txt (PyTorch with its
# CUDA wheels is several GB; it is installed once and only here: vramplan never needs it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), f"Python 3.11 needed, found {sys.version}"'
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
# Every package is pinned in requirements.txt, dependencies included, and installed without
# the resolver: llm-analysis 0.2.2 declares huggingface-hub<0.15, which transformers 5 cannot
# use; it runs with the newer one for what the peers script calls.
"$venv/bin/pip" install --progress-bar off --no-deps -r "$here/requirements.txt"
# DeepSpeed's setup imports torch, so it is built against the environment above, ops unbuilt
DS_BUILD_OPS=0 "$venv/bin/pip" install --progress-bar off --no-deps --no-build-isolation \
    -r "$here/requirements-build-against-torch.txt"
"$venv/bin/python" -c 'import torch, transformers, peft, torchao; print("reference env ready: torch", torch.__version__, "transformers", transformers.__version__)'
