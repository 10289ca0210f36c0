"""The step-time model against training steps measured on a GPU here (`validate --throughput`,
key `gpu_measured`; data/measurements/gpu_step_time.csv for the kernel split)."""

import csv
from pathlib import Path

from .markdown import cell, pct, signed_pct, table
from .published_section import compared_rows, summary_cells

MEASURED = Path(__file__).resolve().parents[2] / "data" / "measurements" / "gpu_step_time.csv"


def kernel_split(path=MEASURED):
    """id -> the share of GPU kernel time in GEMMs, attention and element-wise kernels."""
    if not path.exists():
        return {}
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            parts = {
                k: float(r[f"{k}_kernel_s"])
                for k in ("gemm", "attention", "elementwise", "optimizer")
            }
            total = sum(parts.values())
            if total > 0:
                out[r["id"]] = {k: v / total for k, v in parts.items()}
    return out


def _row(r, split):
    share = split.get(r["id"])
    t = r.get("step_time", {})
    return [
        cell(r["id"]),
        f"{r['measured_tok_s_gpu']:.0f}",
        f"{r['predicted_tok_s_gpu']:.0f}",
        signed_pct(r["tok_error_pct"]),
        f"{1e3 * t.get('cpu_bound_s', 0):.0f}",
        " / ".join(pct(100 * share[k]) for k in ("gemm", "attention", "elementwise"))
        if share
        else "—",
    ]


def gpu_step_section(measured, split=None):
    if not measured or not measured.get("rows"):
        return []
    split = kernel_split() if split is None else split
    summaries = [summary_cells(s, skipped=False) for s in measured.get("summaries", [])]
    rows = sorted(compared_rows(measured), key=lambda r: r["id"])
    return [
        [
            "## Step time measured on a GPU",
            "",
            "Training steps this project ran on one H100 and one H200 "
            "(`reference/vramref/gpu_speed.py`, data/measurements/gpu_step_time.csv): Hugging Face "
            "transformers' eager model code, SDPA attention (cuDNN's kernel, which PyTorch picks "
            "on Hopper), fused AdamW, random tokens, the median of five steps after two warm-up "
            "steps. `vramplan validate --throughput` predicts each with `--model-code "
            "transformers` on its catalog GPU; no constant was fitted on these rows. A torch."
            "profiler trace of one more step splits the GPU's kernel time into GEMMs, attention "
            "and element-wise kernels (the last column), to compare with the model's own terms "
            '(docs/roofline.md, "Measured on a GPU").',
            "",
            table(
                ["group", "rows", "median |error|", "p90 |error|", "bias", "ρ tokens/s"],
                summaries,
                "lrrrrr",
            ),
            "",
            table(
                [
                    "step",
                    "measured tok/s",
                    "predicted",
                    "error",
                    "predicted CPU-bound ms",
                    "measured GEMM / attention / element-wise",
                ],
                [_row(r, split) for r in rows],
                "lrrrrr",
            ),
        ]
    ]
