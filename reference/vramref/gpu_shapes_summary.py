"""What a `gpu_shapes` run shows, as the tables docs/roofline.md ("Kernel shapes") quotes.

    python -m vramref.gpu_shapes_summary gpu_runs/h100-2026-11-27-shapes.jsonl \
        gpu_runs/h100-2026-11-27-shapes-memory.jsonl

For each kind of kernel it prints the measured fraction of the GPU's peak by shape, and how far
the step-time model's pricing of that kernel is from the measurement with and without the shape
terms (src/perf/step_time_sections.cc): attention bounded by its longest 128-query tile when its
tiles are fewer than the SMs, the head dimension's measured rate relative to d = 128, grouped
GEMMs padded to 128-row tiles per expert. Only kernel rates are compared here: the fitted
constants of the step-time model are not, since they also stand for work the model does not count.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys

TILE_ROWS = 128


def load(paths):
    rows, env = [], {}
    for path in paths:
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                if row["kind"] == "environment":
                    env = row
                elif "error" not in row:
                    rows.append(row)
    return env, rows


def spread(errors):
    """Median and p90 of |error| and the median signed error, in %."""
    if not errors:
        return (float("nan"),) * 3
    a = sorted(abs(e) for e in errors)
    return 100 * statistics.median(a), 100 * a[min(len(a) - 1, int(0.9 * len(a)))], 100 * statistics.median(errors)


def dim_scale(d):
    """attention_dim_scale in src/perf/roofline_ops.cc: the measured rates, linear between."""
    dims, rates = (64, 96, 128, 192, 256), (0.77, 0.79, 1.0, 0.69, 0.81)
    if d <= dims[0]:
        return rates[0]
    if d >= dims[-1]:
        return rates[-1]
    i = max(j for j in range(len(dims)) if dims[j] <= d)
    if dims[i] == d:
        return rates[i]
    t = (d - dims[i]) / (dims[i + 1] - dims[i])
    return rates[i] + t * (rates[i + 1] - rates[i])


def attention_time(row, rate, backward, sm_count, shaped):
    """Seconds the model's formula gives one attention call at `rate` FLOP/s for d = 128."""
    s, d, heads = row["seq"], row["head_dim"], row["heads"]
    flops = 2.0 * 2 * s * s * d * heads / 2 * (2.5 if backward else 1)
    if not shaped:
        return flops / rate
    tiles = row["batch"] * heads * math.ceil(s / TILE_ROWS) / 2
    return flops / (rate * dim_scale(d)) * max(1.0, sm_count / tiles)


def attention_report(rows, peak, sm_count, backend="cudnn", out=sys.stdout):
    rows = [r for r in rows if r["kind"] == "attention_shape" and r["backend"] == backend]
    if not rows:
        return
    big = [r for r in rows if r["head_dim"] == 128 and r["heads"] >= 16 and r["seq"] >= 8192]
    rate = statistics.median(3.5 * r["forward_tflops"] * 1e12 * r["forward_s"] / r["forward_backward_s"] for r in big)
    print(f"attention ({backend}): d = 128 plateau {rate / peak:.2f} of peak, forward + backward", file=out)
    for shaped in (False, True):
        errors = []
        for r in rows:
            for backward, key in ((False, "forward_s"), (True, "backward_s")):
                errors.append(attention_time(r, rate, backward, sm_count, shaped) / r[key] - 1)
        label = "with the tile bound and d scale" if shaped else "one rate for every shape"
        print("  %-34s median %5.1f%%  p90 %5.1f%%  bias %+5.1f%%" % ((label,) + spread(errors)), file=out)


def gemm_report(rows, peak, hbm, out=sys.stdout):
    rows = [r for r in rows if r["kind"] == "gemm_shape"]
    if not rows:
        return
    print("GEMMs (bf16, forward), fraction of peak by m (median over k, n):", file=out)
    for m in sorted({r["m"] for r in rows}):
        eff = [r["tflops"] * 1e12 / peak for r in rows if r["m"] == m]
        fp8 = [r["fp8_tflops"] / r["tflops"] for r in rows if r["m"] == m and "fp8_tflops" in r]
        extra = f", fp8/bf16 {statistics.median(fp8):.2f}" if fp8 else ""
        print(f"  m = {m:6d}: {statistics.median(eff):.2f} (p10 {sorted(eff)[len(eff) // 10]:.2f}){extra}", file=out)


def grouped_report(rows, peak, out=sys.stdout):
    rows = [r for r in rows if r["kind"] == "grouped_gemm"]
    if not rows:
        return
    print("grouped GEMMs (torch._grouped_mm), fraction of peak by tokens per expert:", file=out)
    for t in sorted({r["tokens_per_expert"] for r in rows}):
        sel = [r for r in rows if r["tokens_per_expert"] == t]
        eff = statistics.median(r["tflops"] * 1e12 / peak for r in sel)
        padded = math.ceil(t / TILE_ROWS) * TILE_ROWS / t
        print(f"  {t:6d}: {eff:.2f} (the model's padding alone: x{1 / padded:.2f})", file=out)


def memory_report(rows, hbm, out=sys.stdout):
    mem = [r for r in rows if r["kind"] == "memory" and r["elements"] >= 1 << 26]
    if mem:
        print("element-wise kernels, 64M+ elements, fraction of HBM peak:", file=out)
        for op in sorted({r["op"] for r in mem}):
            v = [r["gbps"] * 1e9 / hbm for r in mem if r["op"] == op]
            print(f"  {op:16s} {min(v):.2f}-{max(v):.2f}", file=out)
    opt = [r for r in rows if r["kind"] == "optimizer"]
    if opt:
        print("AdamW step, fraction of HBM peak at 7 accesses per parameter:", file=out)
        for r in opt:
            print(
                f"  {r['implementation']:8s} {r['dtype']:9s} {r['parameters'] / 1e9:4.2f} B params: {r['gbps'] * 1e9 / hbm:.2f}",
                file=out,
            )


# Dense bf16 peak and HBM bandwidth of the GPUs these runs were made on (data/gpus.json).
GPUS = {"NVIDIA H100 80GB HBM3": (989e12, 3.35e12, 132), "NVIDIA H200": (989e12, 4.8e12, 132)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args(argv)
    env, rows = load(args.runs)
    peak, hbm, sms = GPUS.get(env.get("gpu", ""), GPUS["NVIDIA H100 80GB HBM3"])
    sms = env.get("sm_count", sms)
    print(f"{env.get('gpu', 'unknown GPU')}, torch {env.get('torch')}, {len(rows)} measurements")
    gemm_report(rows, peak, hbm)
    grouped_report(rows, peak)
    attention_report(rows, peak, sms)
    memory_report(rows, hbm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
