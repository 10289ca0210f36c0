"""Turns gpu_speed.py runs (JSON lines) into data/measurements/gpu_step_time.csv.

One row per measured training step: the layout in vramplan's vocabulary (model, layers, sequence,
micro-batch, precision, recompute; one GPU, Hugging Face transformers' eager model code, SDPA
attention, fused AdamW), the measured step time and tokens/s, the phases timed with a
synchronisation between them, and the GPU kernel time by kind from a torch.profiler trace of one
more step. Rows sorted by id; the same runs give the same file.

    python -m vramref.gpu_speed_dataset reference/gpu_runs/h200-2026-11-27-speed.jsonl \
        reference/gpu_runs/h100-2026-11-27-speed.jsonl
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUT = REPO_ROOT / "data" / "measurements" / "gpu_step_time.csv"
# The GPU's name as torch reports it -> vramplan's catalog id
CATALOG = {"NVIDIA H200": "h200-141gb", "NVIDIA H100 80GB HBM3": "h100-80gb"}
COLUMNS = [
    "id",
    "gpu",
    "model",
    "num_layers",
    "seq_len",
    "micro_batch",
    "precision",
    "recompute",
    "optimizer",
    "model_code",
    "attention",
    "tokens_per_s",
    "step_s",
    "forward_s",
    "backward_s",
    "optimizer_s",
    "gpu_busy_s",
    "gemm_kernel_s",
    "attention_kernel_s",
    "elementwise_kernel_s",
    "optimizer_kernel_s",
    "kernels",
    "torch",
    "transformers",
    "source",
]


def _seconds(x):
    return f"{x:.6f}"


def rows_of(path):
    lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    env = next(r for r in lines if r["kind"] == "environment")
    gpu = CATALOG.get(env.get("gpu"), env.get("gpu"))
    for r in lines:
        if r["kind"] != "step" or "error" in r:
            continue
        kinds = r["trace"]["kernel_seconds_by_kind"]
        row = {
            "gpu": gpu,
            "model": r["model"],
            "num_layers": r["num_layers"],
            "seq_len": r["seq_len"],
            "micro_batch": r["micro_batch"],
            "precision": r["precision"],
            "recompute": r["recompute"],
            "optimizer": r["optimizer"],
            "model_code": "transformers",
            "attention": "sdpa",
            "tokens_per_s": f"{r['tokens_per_s']:.1f}",
            "step_s": _seconds(r["step_s"]),
            "forward_s": _seconds(r["forward_s"]),
            "backward_s": _seconds(r["backward_s"]),
            "optimizer_s": _seconds(r["optimizer_s"]),
            "gpu_busy_s": _seconds(r["trace"]["gpu_busy_seconds"]),
            "gemm_kernel_s": _seconds(kinds.get("gemm", 0.0)),
            "attention_kernel_s": _seconds(kinds.get("attention", 0.0)),
            "elementwise_kernel_s": _seconds(kinds.get("elementwise", 0.0)),
            "optimizer_kernel_s": _seconds(kinds.get("optimizer", 0.0)),
            "kernels": r["trace"]["kernels"],
            "torch": env.get("torch"),
            "transformers": env.get("transformers"),
            "source": f"reference/gpu_runs/{Path(path).name}",
        }
        row["id"] = (
            f"{gpu}/{r['model']}/L{row['num_layers']}/s{r['seq_len']}/b{r['micro_batch']}/"
            f"{r['precision']}/{r['recompute']}"
        )
        yield row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="gpu_speed.py outputs, oldest first (a later row wins)")
    ap.add_argument("--output", default=str(OUTPUT))
    args = ap.parse_args(argv)
    by_id = {}
    for path in args.runs:
        for row in rows_of(path):
            by_id[row["id"]] = row
    with open(args.output, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        out.writeheader()
        for key in sorted(by_id):
            out.writerow(by_id[key])
    print(f"{len(by_id)} rows -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
