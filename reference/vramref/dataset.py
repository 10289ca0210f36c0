"""Runs every scenario of the grid and writes data/measurements/pytorch_reference.json.

Rows are sorted by id and carry no timestamps, so the same versions give the same file.
Each scenario runs in a worker process of its own pool slot; a scenario that cannot run is
listed under "not_run" with the reason, never silently dropped.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import sys
import time
import warnings
from importlib import metadata

from .grid import all_scenarios
from .models import REPO_ROOT, parameter_count, preset_names
from .scenario import PRECISIONS, Scenario
from .settings import to_settings

OUTPUT = REPO_ROOT / "data" / "measurements" / "pytorch_reference.json"
PACKAGES = ("torch", "transformers", "peft", "torchao", "accelerate", "torchtune", "torchtitan")
NOTES = [
    "Peak allocated bytes of rank `rank` (world `world`), counted at the ATen dispatcher: every "
    "live tensor storage once. This is what torch.cuda.max_memory_allocated counts, less the "
    "caching allocator's rounding (512 B blocks), cuBLAS/NCCL workspaces and the CUDA context.",
    "Models are Hugging Face transformers classes built from the preset's config.json with "
    "`num_layers` decoder layers of the real widths; tensors are fake (FakeTensorMode), on the "
    "CPU device, with SDPA routed to the kernel an H100 runs (FlashAttention-2, or the "
    "memory-efficient kernel when a mask is passed); see reference/README.md. Rows whose id has "
    "/torchtune/ run torchtune's own model builders, CEWithChunkedOutputLoss and recipe loop "
    "instead (vramref/torchtune_run.py); rows with /torchtitan/ torchtitan's own model, FSDP2 "
    "wrapping, activation checkpointing and loss (vramref/torchtitan_run.py).",
    "Two optimizer steps run; peak_step is the first step reaching the peak.",
    "at_peak splits the peak: parameters (incl. FSDP unsharded copies), gradients (.grad and "
    "FSDP reduce buffers), optimizer_states, activations (created in a forward and alive), "
    "temporaries (the rest: backward and optimizer-step intermediates).",
]


def versions():
    out = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        out[name] = metadata.version(name)
    return out


def _quiet():
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")


def run_one(item):
    family, sc = item
    _quiet()
    from .train import NotRunnable, run

    try:
        report, facts = run(sc)
    except NotRunnable as e:
        return {"id": sc.id(), "error": str(e)}
    except Exception as e:  # a scenario the real code refuses: keep the reason
        return {"id": sc.id(), "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
    return make_row(family, sc, report, facts)


def describe(family, sc: Scenario, attn_implementation, kernel):
    """The row's vramplan settings, note and in_target, from the scenario and the attention
    that ran (`kernel`: flash, efficient or eager)."""
    settings, notes, in_target = to_settings(sc, family)
    if attn_implementation == "eager":
        settings["flash_attention"] = False
        notes.append("transformers' default attention for this model is eager (scores materialised)")
    if kernel == "math":
        notes.append("fp32 (or heads over 256) with grouped-query heads and no mask: SDPA's math kernel")
    if kernel == "efficient":
        notes.append("SDPA gets an explicit mask (sliding window / local attention): memory-efficient kernel")
    return settings, notes, in_target


def make_row(family, sc: Scenario, report, facts):
    calls = facts.get("sdpa_calls", {})
    kernel = next((k for k in ("flash", "efficient", "math") if calls.get(k)), "eager")
    settings, notes, in_target = describe(family, sc, facts.get("attn_implementation"), kernel)
    param_dtype, autocast, fsdp_mixed = PRECISIONS[sc.precision]
    precision = {
        "fp32": "fp32",
        "bf16": "pure bf16 (bf16 params, grads, optimizer states)",
        "amp-bf16": "fp32 params, torch.autocast bf16",
        "fsdp-mixed": "FSDP2 MixedPrecisionPolicy(param bf16, reduce fp32) over fp32 params",
    }[sc.precision]
    return {
        "id": sc.id(),
        "family": family,
        "method": sc.method,
        "settings": settings,
        "world": sc.world,
        "rank": sc.rank,
        "harness": {
            "model_code": f"{sc.model_code} {facts.get('model_class', '')}".strip(),
            "attention": f"{facts.get('attn_implementation')} -> {kernel}",
            "layout": _layout_text(sc),
            "precision": precision,
            "optimizer": sc.optimizer,
            "recompute": sc.recompute if sc.recompute_every == 1 else f"{sc.recompute} every {sc.recompute_every}",
            "kernels": "cpu-fake (attention: H100 kernel's meta function)"
            + ("; F.rms_norm: CUDA's fused kernel" if sc.model_code == "torchtitan" else ""),
        },
        "peak_allocated_bytes": report.peak_bytes,
        "peak_phase": report.peak_phase,
        "peak_step": report.peak_step,
        "phase_peaks": {k: report.phase_peaks.get(k, 0) for k in ("forward", "backward", "optimizer")},
        "at_peak": report.at_peak,
        "in_target": in_target,
        "note": "; ".join(notes),
    }


def _layout_text(sc):
    if sc.layout == "single":
        return "single GPU"
    if sc.layout == "ddp":
        return f"replicate (FSDP2-based DDP) dp={sc.dp}"
    if sc.layout in ("fsdp", "hsdp"):
        kind = "FSDP2 fully_shard" if sc.layout == "fsdp" else "HSDP (replicate x shard 2)"
        return f"{kind} dp={sc.dp}, reshard_after_forward={sc.reshard_after_forward}"
    if sc.layout == "tp":
        return f"DTensor TP={sc.tp} sequence_parallel={sc.sequence_parallel} (torchtitan plan)"
    if sc.layout == "fsdp+tp":
        return f"FSDP2 dp={sc.dp} x DTensor TP={sc.tp} (torchtitan plan)"
    if sc.layout == "cp":
        return f"context parallel cp={sc.cp} (PyTorch's ring attention)"
    if sc.layout == "pp":
        return f"torch.distributed.pipelining pp={sc.pp} vpp={sc.vpp} {sc.schedule}, {sc.microbatches} microbatches"
    return sc.layout


def run_scenarios(workers, items):
    """(rows sorted by id, not_run sorted by id) of the scenarios `items`, run in `workers`
    processes."""
    t0 = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_quiet, maxtasksperchild=20) as pool:
        results = []
        for i, r in enumerate(pool.imap_unordered(run_one, items, chunksize=1)):
            results.append(r)
            print(
                f"[{i + 1}/{len(items)}] {r['id']} {'ERROR ' + r['error'] if 'error' in r else r['peak_allocated_bytes']}",
                file=sys.stderr,
                flush=True,
            )
    rows = sorted((r for r in results if "error" not in r), key=lambda r: r["id"])
    not_run = sorted(({"id": r["id"], "reason": r["error"]} for r in results if "error" in r), key=lambda r: r["id"])
    print(f"{len(rows)} rows, {len(not_run)} not run, {time.time() - t0:.0f} s", file=sys.stderr)
    return rows, not_run


def parameter_counts():
    """(counts of every preset whose model type this transformers knows, presets it refused)."""
    counts, refused = [], []
    for preset in preset_names():
        try:
            counts.append(parameter_count(preset))
        except Exception as e:  # a model type newer than the pinned transformers: say so
            refused.append({"preset": preset, "reason": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"})
    return counts, refused


def merge(path, rows, not_run):
    """The committed dataset at `path` with `rows` / `not_run` replacing those of the same ids."""
    with open(path) as f:
        data = json.load(f)
    ids = {r["id"] for r in rows} | {r["id"] for r in not_run}
    data["rows"] = sorted([r for r in data["rows"] if r["id"] not in ids] + rows, key=lambda r: r["id"])
    kept = [r for r in data["not_run"] if r["id"] not in ids]
    data["not_run"] = sorted(kept + not_run, key=lambda r: r["id"])
    data["versions"] = versions()
    data["notes"] = NOTES
    return data


def build(workers, limit=None, only=None):
    items = all_scenarios()
    if only:
        items = [it for it in items if only in it[1].id()]
    if limit:
        items = items[:limit]
    rows, not_run = run_scenarios(workers, items)
    counts, refused = parameter_counts()
    return {
        "command": "reference/run.sh",
        "versions": versions(),
        "notes": NOTES,
        "parameter_counts": counts,
        "parameter_counts_not_run": refused,
        "rows": rows,
        "not_run": not_run,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--output", default=str(OUTPUT))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="first N scenarios only (for trying)")
    ap.add_argument("--only", default=None, help="scenarios whose id contains this text")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="run only the --only scenarios and replace their rows in the existing --output file",
    )
    args = ap.parse_args(argv)
    _quiet()
    if args.merge:
        if not args.only:
            ap.error("--merge needs --only")
        items = [it for it in all_scenarios() if args.only in it[1].id()]
        data = merge(args.output, *run_scenarios(args.workers, items))
    else:
        data = build(args.workers, args.limit, args.only)
    with open(args.output, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
