"""Turns the JSON lines of GPU runs (gpu_measure.py) into data/measurements/gpu_measured.json.

Several runs may be merged (a run stopped by its time limit is continued by another with
--skip): for each scenario id the last measured row wins; an error is kept only where no run
measured the scenario. Rows sorted by id, no timestamps: the same inputs give the same file.

A row is left out, and listed under "not_run" with the figures, when its worker still held
memory of an earlier scenario when it started (an out-of-memory error's traceback kept that
scenario's tensors alive): then the allocator's peak is not this scenario's.
"""

from __future__ import annotations

import argparse
import json
import sys

from pathlib import Path

from .grid import all_scenarios
from .settings import to_settings

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUT = REPO_ROOT / "data" / "measurements" / "gpu_measured.json"
FAKE_REFERENCE = REPO_ROOT / "data" / "measurements" / "pytorch_reference.json"
# Allocated at the start beyond the scenario's own parameters: cuBLAS keeps its workspaces
# (2 x 32 MiB on Hopper) from an earlier scenario of the same worker, plus allocator rounding.
# More than this is memory another scenario left behind.
LEFTOVER_LIMIT = 1 << 30
NOTES = [
    "Measured on a real GPU with the fake-tensor harness's model code, methods, recompute and "
    "optimizers (reference/vramref/gpu_measure.py): peak_allocated_bytes is "
    "torch.cuda.max_memory_allocated over two training steps, reset after the model and the "
    "optimizer exist; phase_peaks is the same per phase; peak_reserved_bytes is "
    "max_memory_reserved over the steps.",
    "tracker: the dispatcher-level tracker of the fake-tensor harness, run beside on the real "
    "tensors (its peak, phase and categories). The allocator's figure minus the tracker's is "
    "what no ATen tensor holds: cuBLAS workspaces (allocated once per process, so also in "
    "allocated_at_start_bytes after a worker's first scenario) and the caching allocator's rounding.",
    "fake_reference_peak_bytes: the committed fake-tensor row of the same id "
    "(pytorch_reference.json), where one exists.",
    "Two worker processes shared the GPU (each limited to 47.5% of its memory); a scenario that "
    "ran out of memory there was run again alone. DeepSeek-V3 was skipped: two layers of it "
    "(one MoE layer of 256 experts) do not fit one GPU with AdamW.",
]


def read_runs(paths):
    """(environment of the last run, {id: row})."""
    env, rows = None, {}
    for path in paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if "environment" in r:
                    env = r["environment"]
                elif "error" not in r or r["id"] not in rows or "error" in rows[r["id"]]:
                    rows[r["id"]] = r
    return env, rows


def leftover_bytes(row):
    """Allocated at the start beyond the scenario's own parameters and buffers."""
    return row["gpu"]["allocated_at_start_bytes"] - row["at_peak"]["parameters"]


# nvidia-smi's name -> vramplan's GPU catalog id (data/gpus.json)
GPU_IDS = {"NVIDIA H200": "h200-141gb", "NVIDIA H100 80GB HBM3": "h100-80gb"}


def current_settings():
    """{id: settings} of the grid with today's settings rules (settings.py), so
    that a rule changed after a GPU run applies to its rows without running them again. The
    attention kernel's part (transformers' eager models) is kept from the run's own row."""
    out = {}
    for family, sc in all_scenarios():
        out[sc.id()] = to_settings(sc, family)[0]
    return out


def shape_row(row, fake, gpu_id, rules=None):
    """The measured row in the dataset's shape: the allocator's figures at the top level."""
    gpu = row["gpu"]
    out = {k: row[k] for k in ("id", "family", "method", "settings", "world", "rank", "harness")}
    settings = dict(row["settings"])
    if rules and row["id"] in rules:
        flash = settings.get("flash_attention", True)
        settings = {**rules[row["id"]], "flash_attention": flash}
    out["settings"] = {**settings, "gpu": gpu_id}
    out["peak_allocated_bytes"] = gpu["peak_allocated_bytes"]
    out["phase_peaks"] = gpu["phase_peaks_allocated"]
    out["peak_reserved_bytes"] = gpu["peak_reserved_bytes"]
    out["allocated_at_start_bytes"] = gpu["allocated_at_start_bytes"]
    out["tracker"] = {
        "peak_allocated_bytes": row["tracker_peak_allocated_bytes"],
        "peak_phase": row["peak_phase"],
        "peak_step": row["peak_step"],
        "phase_peaks": row["phase_peaks"],
        "at_peak": row["at_peak"],
    }
    ref = fake.get(row["id"])
    out["fake_reference_peak_bytes"] = ref["peak_allocated_bytes"] if ref else None
    out["in_target"] = row["in_target"]
    out["note"] = row["note"]
    return out


def build(paths, fake_path=FAKE_REFERENCE):
    env, rows = read_runs(paths)
    with open(fake_path) as f:
        fake = {r["id"]: r for r in json.load(f)["rows"]}
    kept, not_run = [], []
    rules = current_settings()
    for rid in sorted(rows):
        row = rows[rid]
        if "error" in row:
            not_run.append({"id": rid, "reason": row["error"]})
        elif leftover_bytes(row) > LEFTOVER_LIMIT:
            left = leftover_bytes(row) / 2**30
            not_run.append({"id": rid, "reason": f"the worker still held {left:.1f} GiB of an earlier scenario"})
        else:
            kept.append(shape_row(row, fake, GPU_IDS[env["gpu"]], rules))
    return {
        "command": "reference/gpu_run.sh on a GPU machine, then reference/gpu_dataset.sh RUN.jsonl...",
        "environment": env,
        "notes": NOTES,
        "rows": kept,
        "not_run": not_run,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="JSON lines written by gpu_measure.py, oldest first")
    ap.add_argument("--output", default=str(OUTPUT))
    args = ap.parse_args(argv)
    data = build(args.runs)
    with open(args.output, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(f"{len(data['rows'])} rows, {len(data['not_run'])} not run -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
