"""The reference's single-GPU scenarios run for real on a CUDA GPU, where one is at hand.

The fake-tensor harness (train.py) counts live ATen storages on the CPU; this module runs the
same scenarios on a real GPU with the same model code, fine-tuning methods, recompute policies
and optimizers, and reads what the caching allocator itself reports:
`torch.cuda.max_memory_allocated` per phase (forward, backward, optimizer step) and
`torch.cuda.max_memory_reserved`. The dispatcher-level tracker runs beside it on the real
tensors, so each row says how far the allocator's figure is from the tensors' (allocator
rounding, cuBLAS workspaces, FlashAttention's backward scratch), and the committed fake-tensor
row of the same id can be compared with both.

Differences from the fake-tensor harness, on purpose:
  * the model is built on the GPU by transformers (its own initialisation), so MoE routers route
    real values, and PyTorch picks its real CUDA kernels (SDPA flash / memory-efficient);
  * autocast is CUDA's;
  * peaks are reset after the model and the optimizer exist, where the harness resets the
    tracker, so both count from the same point.

Output: one JSON line per scenario (written as each finishes, so a time limit keeps what ran),
turned into data/measurements/gpu_measured.json by `gpu_dataset.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import multiprocessing as mp
import sys
import time
from dataclasses import replace
from importlib import metadata

from .grid import PRESETS, single_gpu
from .scenario import PRECISIONS

PHASES = ("forward", "backward", "optimizer")
# The order in which scenario kinds are run: a time limit keeps a spread over families and
# methods rather than every kind of the first family. Each entry picks from grid.single_gpu by
# the scenario's fields.
KIND_ORDER = [
    dict(precision="bf16", optimizer="adamw-fused", method="full", recompute="none", microbatches=1, micro_batch=1),
    dict(precision="amp-bf16", optimizer="adamw-foreach", method="full", recompute="none"),
    dict(method="lora", lora_rank=16),
    dict(method="qlora", lora_rank=16),
    dict(method="full", recompute="full", recompute_every=1),
    dict(method="full", recompute="selective-op"),
    dict(method="frozen"),
    dict(method="lora", lora_rank=64),
    dict(precision="bf16", optimizer="adamw-fused", method="full", recompute="none", microbatches=2),
    dict(precision="bf16", optimizer="adamw-fused", method="full", recompute="none", micro_batch=2),
    dict(precision="fp32", optimizer="adamw-foreach", method="full"),
    dict(precision="bf16", optimizer="sgd-momentum"),
    dict(precision="bf16", optimizer="adafactor"),
    dict(precision="amp-bf16", optimizer="adamw-fused", method="full", recompute="none"),
    dict(method="lora", lora_rank=8),
    dict(method="qlora", lora_rank=64),
    dict(method="full", recompute="full", recompute_every=2),
    dict(precision="bf16", optimizer="adamw-foreach", method="full", recompute="none", microbatches=1),
    dict(precision="bf16", optimizer="sgd"),
]


def _matches(sc, fields):
    return all(getattr(sc, k) == v for k, v in fields.items())


def ordered_scenarios(only=None):
    """(family, scenario) of every single-GPU scenario, in KIND_ORDER rounds over the presets."""
    per_preset = [(family, p, single_gpu(p, family)) for family, presets in PRESETS.items() for p in presets]
    seen, out = set(), []
    for fields in KIND_ORDER:
        for family, _, scenarios in per_preset:
            for sc in scenarios:
                if sc.id() not in seen and _matches(sc, fields):
                    seen.add(sc.id())
                    out.append((family, sc))
    for family, _, scenarios in per_preset:  # whatever no kind named, last
        out.extend((family, sc) for sc in scenarios if sc.id() not in seen)
    if only:
        out = [it for it in out if only in it[1].id()]
    return out


class PhasePeaks:
    """Per-phase `max_memory_allocated`: the peak is read and reset at each phase change."""

    def __init__(self, torch, device):
        self.torch = torch
        self.on_gpu = device == "cuda"  # a CPU smoke run (--device cpu) reads nothing
        self.baseline = 0
        self.allocated = dict.fromkeys(PHASES, 0)
        self.reserved = 0
        self.phase = None

    def start(self):
        if not self.on_gpu:
            return
        self.torch.cuda.synchronize()
        self.torch.cuda.reset_peak_memory_stats()
        self.baseline = self.torch.cuda.memory_allocated()

    def switch(self, phase):
        if self.phase is not None and self.on_gpu:
            cuda = self.torch.cuda
            self.allocated[self.phase] = max(self.allocated[self.phase], cuda.max_memory_allocated())
            self.reserved = max(self.reserved, cuda.max_memory_reserved())
            cuda.reset_peak_memory_stats()
        self.phase = phase


def measure(family, sc, with_tracker=True, device="cuda"):
    """Runs two training steps of `sc` on the GPU; returns the row's measured figures."""
    import torch

    from . import finetune, recompute, train
    from .models import build_config, build_model
    from .tracker import MemoryTracker, saved_tensor_marking

    if sc.layout != "single":
        raise train.NotRunnable("one GPU runs single-GPU scenarios only")
    param_dtype_name, autocast, _ = PRECISIONS[sc.precision]
    dtype = train.DTYPES[param_dtype_name]
    config = build_config(sc.preset, num_layers=sc.num_layers)
    model = build_model(config, dtype, device=device)
    model = train._apply_method(sc, model)
    base = train._base(model)
    facts = {"model_class": type(base).__name__, "attn_implementation": base.config._attn_implementation}
    if sc.method == "qlora":
        facts["nf4_linears"] = finetune.quantize_nf4(base)
    facts["recomputed_layers"] = recompute.apply_recompute(base, sc.recompute, sc.recompute_every)
    optimizer = train.make_optimizer(sc.optimizer, finetune.trainable(model))
    tracker = MemoryTracker(device) if with_tracker else None
    if tracker:
        tracker.mark_parameters(model)
        tracker.watch_optimizer(optimizer)
        tracker.reset_peak()
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    peaks = PhasePeaks(torch, device)
    peaks.start()
    ids = torch.randint(0, config.vocab_size, (sc.micro_batch, sc.seq_len), device=device)
    amp = torch.autocast(device, dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    mode = tracker if tracker else contextlib.nullcontext()
    marking = (lambda: saved_tensor_marking(tracker)) if tracker else contextlib.nullcontext
    t0 = time.time()
    with mode:
        for step in (1, 2):
            for _ in range(sc.microbatches):
                peaks.switch("forward")
                if tracker:
                    tracker.set_phase("forward", step)
                with amp, marking():
                    out = model(input_ids=ids, labels=ids)
                loss = out.loss / sc.microbatches
                del out
                peaks.switch("backward")
                if tracker:
                    tracker.set_phase("backward", step)
                loss.backward()
                del loss
            peaks.switch("optimizer")
            if tracker:
                tracker.set_phase("optimizer", step)
            optimizer.step()
            if tracker:
                tracker.check_now()
                tracker.resolve_peak()
            optimizer.zero_grad(set_to_none=True)
        peaks.switch(None)
        if tracker:
            tracker.set_phase("done")
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.time() - t0
    gpu = {
        "peak_allocated_bytes": max(peaks.allocated.values()),
        "phase_peaks_allocated": peaks.allocated,
        "peak_reserved_bytes": peaks.reserved,
        "allocated_at_start_bytes": peaks.baseline,
        "two_steps_seconds": round(seconds, 3),
    }
    report = tracker.report if tracker else None
    del model, base, optimizer, tracker, ids
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return gpu, report, facts


def _release(device):
    import torch

    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def run_one(item):
    family, sc, device = item
    import torch

    from .dataset import make_row

    _release(device)  # what an earlier scenario's exception kept alive (traceback cycles)
    try:
        try:
            gpu, report, facts = measure(family, sc, with_tracker=True, device=device)
            tracker_error = None
        except torch.cuda.OutOfMemoryError:
            raise
        except Exception as e:  # the tracker on real tensors: measure without it
            tracker_error = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}" if str(e) else type(e).__name__
            _release(device)
            gpu, report, facts = measure(family, sc, with_tracker=False, device=device)
    except Exception as e:
        first = str(e).splitlines()[0][:300] if str(e) else ""
        error = {"id": sc.id(), "error": f"{type(e).__name__}: {first}"}
        if isinstance(e, torch.cuda.OutOfMemoryError):
            error["oom"] = True
        e.__traceback__ = None
        del e
        _release(device)
        return error
    if report is None:
        from .tracker import PeakReport

        report = PeakReport(peak_bytes=0)
    row = make_row(family, sc, report, {**facts, "sdpa_calls": {}})
    row["harness"]["attention"] = f"{facts.get('attn_implementation')} (CUDA kernels)"
    row["harness"]["kernels"] = "cuda"
    row["tracker_peak_allocated_bytes"] = row.pop("peak_allocated_bytes") if report.peak_bytes else None
    if tracker_error:
        row["tracker_error"] = tracker_error
    row["gpu"] = gpu
    return row


def _init_worker(fraction, device):
    import logging
    import warnings

    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    import torch

    if device == "cuda":
        torch.cuda.set_per_process_memory_fraction(fraction)


def environment(device):
    import torch

    out = {"python": sys.version.split()[0], "device": device}
    for name in ("torch", "transformers", "peft", "torchao", "accelerate"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        out["gpu"] = props.name
        out["gpu_memory_bytes"] = props.total_memory
        out["cuda"] = torch.version.cuda
        out["driver"] = _driver()
    return out


def _driver():
    import subprocess

    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", required=True, help="JSON lines: an environment line, then a line per scenario")
    ap.add_argument("--workers", type=int, default=2, help="processes sharing the GPU")
    ap.add_argument("--seconds", type=float, default=420, help="start no scenario after this many seconds")
    ap.add_argument("--only", default=None, help="scenarios whose id contains this text")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--skip", action="append", default=[], help="leave out scenarios whose id contains this")
    ap.add_argument("--device", default="cuda", help="cpu: a smoke run of the code paths, measuring nothing")
    ap.add_argument("--seq-len", type=int, default=None, help="override every scenario's sequence (smoke runs)")
    args = ap.parse_args(argv)
    items = [it for it in ordered_scenarios(args.only) if not any(x in it[1].id() for x in args.skip)]
    items = items[: args.limit]
    if args.seq_len:
        items = [(f, replace(sc, seq_len=args.seq_len)) for f, sc in items]
    t0 = time.time()
    with open(args.output, "w") as out:
        out.write(json.dumps({"environment": environment(args.device), "scenarios": len(items)}) + "\n")
        out.flush()
        ctx = mp.get_context("spawn")
        todo = [(f, sc) for f, sc in items]
        oom = _run_pool(ctx, args, todo, args.workers, out, t0)
        if oom:  # scenarios too large for a share of the GPU: once more, alone on it
            print(f"{len(oom)} out of memory with {args.workers} workers: again with the whole GPU", flush=True)
            _run_pool(ctx, args, oom, 1, out, t0, last=True)
    return 0


def _run_pool(ctx, args, todo, workers, out, t0, last=False):
    """Runs `todo` in `workers` processes sharing the GPU; writes each row as it finishes.
    Returns the scenarios that ran out of memory (written only when `last` or alone)."""
    oom, todo = [], list(todo)
    fraction = 0.95 / workers
    with ctx.Pool(workers, initializer=_init_worker, initargs=(fraction, args.device)) as pool:
        pending = []
        while todo or pending:
            while todo and len(pending) < workers and time.time() - t0 < args.seconds:
                item = todo.pop(0)
                pending.append((item, pool.apply_async(run_one, ((*item, args.device),))))
            if not pending:
                break
            time.sleep(0.05)
            for item, job in [p for p in pending if p[1].ready()]:
                pending.remove((item, job))
                row = job.get()
                if row.get("oom") and not last and workers > 1:
                    oom.append(item)
                    continue
                out.write(json.dumps(row) + "\n")
                out.flush()
                status = row.get("error") or row["gpu"]["peak_allocated_bytes"]
                print(f"[{time.time() - t0:6.1f} s] {row['id']} {str(status)[:160]}", flush=True)
    for _, sc in todo:
        out.write(json.dumps({"id": sc.id(), "error": "not started: time limit"}) + "\n")
    return oom


if __name__ == "__main__":
    sys.exit(main())
