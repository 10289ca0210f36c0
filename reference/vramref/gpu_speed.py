"""Step time on a real GPU: what the kernels of a training step reach, measured, not assumed.

vramplan's step-time model (src/perf, docs/roofline.md) prices a GEMM at a fraction of the GPU's
peak less a per-kernel cost, flash attention at another fraction, element-wise work at a fraction
of HBM bandwidth, and adds a CPU cost per kernel. This module measures each of those on the GPU at
hand, with PyTorch's own kernels (cuBLAS through `F.linear`, SDPA's flash / cuDNN backends,
`torch._scaled_mm` for fp8), and times whole training steps of Hugging Face models on one GPU with
a kernel trace (torch.profiler) that splits the step into GEMM, attention, element-wise and
optimizer kernels and the time the GPU waits for the CPU.

Output: JSON lines, one per measurement, kinds "environment", "gemm", "attention", "step"; written
as each finishes so that a time limit keeps what ran. `--device cpu --smoke` runs every code path
with tiny shapes and measures nothing of use.

    python -m vramref.gpu_speed --output /tmp/speed.jsonl --seconds 300
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time

from .gpu_cli import measurement_parser, measurement_run

# (name, hidden, ffn, heads, kv heads, head dim) of the dense presets whose GEMMs are swept
GEMM_MODELS = [
    ("Llama-3.2-1B", 2048, 8192, 32, 8, 64),
    ("Llama-3.1-8B", 4096, 14336, 32, 8, 128),
    ("Llama-3.1-70B", 8192, 28672, 64, 8, 128),
    ("Llama-3.1-405B", 16384, 53248, 128, 8, 128),
]
# (name, hidden, expert ffn): one expert's GEMMs at a few tokens per expert
EXPERT_MODELS = [
    ("Qwen3-30B-A3B", 2048, 768),
    ("DeepSeek-V3", 7168, 2048),
    ("Mixtral-8x7B", 4096, 14336),
]
TOKENS = (1024, 4096, 16384)
EXPERT_TOKENS = (128, 512, 2048, 8192)
# (heads, kv heads, head dim) per GPU after tensor parallelism, and sequence lengths
ATTENTION_SHAPES = [
    (32, 8, 64),
    (32, 8, 128),
    (8, 1, 128),
    (64, 8, 128),
    (16, 2, 128),
    (128, 128, 128),
]
ATTENTION_SEQS = (1024, 2048, 4096, 8192, 16384, 32768)

# Whole training steps: (preset, layers or None for all, seq, micro-batch, precision, recompute)
STEPS = [
    ("Llama-3.2-1B", None, 4096, 1, "bf16", "none"),
    ("Llama-3.2-1B", None, 2048, 1, "bf16", "none"),
    ("Llama-3.2-1B", None, 8192, 1, "bf16", "none"),
    ("Llama-3.2-1B", None, 4096, 2, "bf16", "none"),
    ("Llama-3.2-1B", None, 4096, 1, "bf16", "full"),
    ("Llama-3.2-1B", None, 4096, 1, "amp-bf16", "none"),
    ("Llama-3.2-3B", None, 4096, 1, "bf16", "none"),
    ("Qwen3-1.7B", None, 4096, 1, "bf16", "none"),
    ("Llama-3.1-8B", None, 4096, 1, "bf16", "none"),
    ("Llama-3.1-70B", 4, 4096, 1, "bf16", "none"),
    ("Qwen3-30B-A3B", 6, 4096, 1, "bf16", "none"),
    ("Llama-3.1-8B", None, 8192, 1, "bf16", "none"),
]


def _timer(torch, device):
    """Seconds per call of fn: median over enough calls to fill about `budget` seconds."""

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def run(fn, budget=0.04, most=50):
        fn()
        sync()
        t = time.perf_counter()
        fn()
        sync()
        once = max(time.perf_counter() - t, 1e-6)
        reps = int(min(most, max(3, budget / once)))
        times = []
        if device == "cuda":
            for _ in range(reps):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
        else:
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
        return statistics.median(times)

    return run


def gemm_shapes(smoke=False):
    """(model, op, tp, M, K, N) of every GEMM swept: forward shapes of Linear layers (y = x·Wᵀ)."""
    if smoke:
        return [("tiny", "gate_up", 1, 64, 128, 256)]
    out = []
    for name, h, f, a, g, d in GEMM_MODELS:
        for tp in (1, 2, 4, 8):
            if name == "Llama-3.1-405B" and tp < 8:
                continue
            ops = [
                ("qkv", h, (a + 2 * g) * d // tp),
                ("o", a * d // tp, h),
                ("gate_up", h, 2 * f // tp),
                ("down", f // tp, h),
            ]
            for m in TOKENS:
                out.extend((name, op, tp, m, k, n) for op, k, n in ops)
    for name, h, f in EXPERT_MODELS:
        for m in EXPERT_TOKENS:
            out.extend([(name, "expert_gate_up", 1, m, h, 2 * f), (name, "expert_down", 1, m, f, h)])
    return out


def measure_gemms(torch, device, emit, deadline, smoke=False):
    import torch.nn.functional as F

    timer = _timer(torch, device)
    fp8 = device == "cuda" and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")
    for model, op, tp, m, k, n in gemm_shapes(smoke):
        if time.time() > deadline:
            return
        row = dict(kind="gemm", model=model, op=op, tp=tp, m=m, k=k, n=n)
        try:
            x = torch.randn(m, k, device=device, dtype=torch.bfloat16)
            w = torch.randn(n, k, device=device, dtype=torch.bfloat16)
            g = torch.randn(m, n, device=device, dtype=torch.bfloat16)
            flops = 2.0 * m * n * k
            row["forward_s"] = timer(lambda: F.linear(x, w))
            row["input_grad_s"] = timer(lambda: g @ w)  # dX = dY·W
            row["weight_grad_s"] = timer(lambda: g.t() @ x)  # dW = dYᵀ·X
            if fp8 and k % 16 == 0 and n % 16 == 0:
                x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
                one = torch.ones((), device=device)
                row["fp8_forward_s"] = timer(lambda: torch._scaled_mm(x8, w8.t(), one, one, out_dtype=torch.bfloat16))
            row["tflops"] = {key[:-2]: flops / v / 1e12 for key, v in row.items() if key.endswith("_s")}
            del x, w, g
        except Exception as e:  # one shape's failure (memory, kernel) must not end the sweep
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        emit(row)


def measure_attention(torch, device, emit, deadline, smoke=False):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    timer = _timer(torch, device)
    shapes = [(4, 2, 32)] if smoke else ATTENTION_SHAPES
    seqs = (64,) if smoke else ATTENTION_SEQS
    backends = [("default", None)]
    if device == "cuda":
        backends += [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    for a, kv, d in shapes:
        for s in seqs:
            for name, backend in backends:
                if time.time() > deadline:
                    return
                row = dict(kind="attention", heads=a, kv_heads=kv, head_dim=d, seq=s, batch=1, backend=name)
                try:
                    q = torch.randn(1, a, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
                    k = torch.randn(1, kv, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
                    v = torch.randn(1, kv, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
                    ctx = sdpa_kernel(backend) if backend is not None else _null()
                    with ctx:
                        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != a)
                        out = fwd()
                        grad = torch.randn_like(out)
                        row["forward_s"] = timer(fwd)

                        def both():
                            o = fwd()
                            torch.autograd.grad(o, (q, k, v), grad)

                        row["forward_backward_s"] = timer(both)
                    row["backward_s"] = row["forward_backward_s"] - row["forward_s"]
                    # causal: half of the s² scores; forward 2 GEMMs of 2·s²·d/2 per head
                    fwd_flops = 2.0 * 2 * s * s * d * a / 2
                    row["forward_tflops"] = fwd_flops / row["forward_s"] / 1e12
                    row["backward_tflops"] = 2.5 * fwd_flops / max(row["backward_s"], 1e-9) / 1e12
                    del q, k, v, out, grad
                except Exception as e:
                    row["error"] = f"{type(e).__name__}: {e}"[:300]
                emit(row)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


KERNEL_KINDS = [
    ("attention", re.compile(r"flash|fmha|attention|cudnn|sdpa", re.I)),
    ("optimizer", re.compile(r"adam|FusedOptimizer", re.I)),
    ("gemm", re.compile(r"gemm|nvjet|xmma|cutlass|cublas|splitk|gemv", re.I)),
]


def kernel_kind(name):
    for kind, pattern in KERNEL_KINDS:
        if pattern.search(name):
            return kind
    return "elementwise"


def _busy_seconds(intervals):
    """Length of the union of (start, end) intervals, in the trace's µs, as seconds."""
    total, end_seen = 0.0, None
    for start, end in sorted(intervals):
        if end_seen is None or start > end_seen:
            total += end - start
            end_seen = end
        elif end > end_seen:
            total += end - end_seen
            end_seen = end
    return total / 1e6


def trace_summary(path):
    """GPU kernel time by kind, busy time and the top kernels, from a chrome trace."""
    events = json.load(open(path)).get("traceEvents", [])
    kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    by_kind, by_name, intervals = {}, {}, []
    for e in kernels:
        kind = kernel_kind(e["name"])
        by_kind[kind] = by_kind.get(kind, 0.0) + e["dur"] / 1e6
        c, t = by_name.get(e["name"], (0, 0.0))
        by_name[e["name"]] = (c + 1, t + e["dur"] / 1e6)
        intervals.append((e["ts"], e["ts"] + e["dur"]))
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:25]
    return {
        "kernels": len(kernels),
        "kernel_seconds_by_kind": by_kind,
        "gpu_busy_seconds": _busy_seconds(intervals),
        "top_kernels": [dict(name=n[:120], kind=kernel_kind(n), count=c, seconds=t) for n, (c, t) in top],
    }


def measure_step(torch, device, spec, smoke=False):
    from .models import build_config, build_model
    from .recompute import apply_recompute
    from .train import _base

    preset, layers, seq, mb, precision, recompute = spec
    if smoke:
        layers, seq = 1, 64
    config = build_config(preset, num_layers=layers)
    config._attn_implementation = "sdpa"
    dtype = torch.float32 if precision == "amp-bf16" else torch.bfloat16
    model = build_model(config, dtype, device=device)
    apply_recompute(_base(model), recompute, 1)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=device == "cuda")
    ids = torch.randint(0, config.vocab_size, (mb, seq), device=device)
    amp = torch.autocast(device, dtype=torch.bfloat16) if precision == "amp-bf16" else _null()

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def step():
        marks = [time.perf_counter()]
        with amp:
            loss = model(input_ids=ids, labels=ids).loss
        sync()
        marks.append(time.perf_counter())
        loss.backward()
        sync()
        marks.append(time.perf_counter())
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        marks.append(time.perf_counter())
        return [b - a for a, b in zip(marks, marks[1:])]

    def loop_step():  # no synchronisation inside, as a training loop runs a step
        with amp:
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):  # warm-up: optimizer states, cuBLAS heuristics, allocator pool
        step()
    runs = [step() for _ in range(3 if smoke else 5)]
    # One more step, unsynchronised between phases as a training loop runs it, under the profiler.
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        t = time.perf_counter()
        loop_step()
        sync()
        traced = time.perf_counter() - t
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = trace_summary(f.name)
    # Unsynchronised steps, as a training loop runs them
    sync()
    t = time.perf_counter()
    for _ in range(3):
        loop_step()
    sync()
    free_running = (time.perf_counter() - t) / 3
    phases = [statistics.median(r[i] for r in runs) for i in range(3)]
    row = dict(
        kind="step",
        model=preset,
        num_layers=layers or config.num_hidden_layers,
        seq_len=seq,
        micro_batch=mb,
        precision=precision,
        optimizer="adamw-fused" if device == "cuda" else "adamw-foreach",
        recompute=recompute,
        attention="sdpa",
        experts_implementation=getattr(config, "_experts_implementation", None),
        parameters=sum(p.numel() for p in model.parameters()),
        forward_s=phases[0],
        backward_s=phases[1],
        optimizer_s=phases[2],
        step_s=free_running,
        traced_step_s=traced,
        tokens_per_s=mb * seq / free_running,
        peak_allocated_bytes=torch.cuda.max_memory_allocated() if device == "cuda" else None,
        trace=trace,
    )
    del model, opt, params, ids
    return row


def measure_launch_cost(torch, device, emit, smoke=False):
    """The CPU's cost per kernel in eager PyTorch: back-to-back tiny element-wise ops (dispatch
    and launch only), and a Hugging Face training step too short to keep the GPU busy (a 1B
    model at 256 tokens), whose wall time divided by its kernels is what each launch costs a
    real step (Python, autograd and dispatch included)."""
    x = torch.ones(16, device=device)

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    for n in (100, 2000):
        for _ in range(n // 10):
            x.add_(1.0)
        sync()
        t = time.perf_counter()
        for _ in range(n):
            x.add_(1.0)
        sync()
        emit(
            dict(
                kind="launch",
                what="tensor.add_ on 16 values",
                ops=n,
                seconds_per_op=(time.perf_counter() - t) / n,
            )
        )
    for seq in (256, 1024):
        row = measure_step(torch, device, ("Llama-3.2-1B", None, seq, 1, "bf16", "none"), smoke)
        row["kind"] = "launch"
        row["what"] = "a training step too short to keep the GPU busy"
        row["seconds_per_kernel"] = row["step_s"] / max(row["trace"]["kernels"], 1)
        emit(row)


def main(argv=None):
    args = measurement_parser(__doc__, 300, "steps,gemm,attention").parse_args(argv)
    import gc

    import torch

    with measurement_run(args, torch) as (emit, deadline):
        for part in args.parts.split(","):
            if part == "gemm":
                measure_gemms(torch, args.device, emit, deadline, args.smoke)
            elif part == "attention":
                measure_attention(torch, args.device, emit, deadline, args.smoke)
            elif part == "launch":
                measure_launch_cost(torch, args.device, emit, args.smoke)
            elif part == "steps":
                for spec in STEPS[:2] if args.smoke else STEPS:
                    if time.time() > deadline:
                        break
                    try:
                        if args.device == "cuda":
                            torch.cuda.reset_peak_memory_stats()
                        emit(measure_step(torch, args.device, spec, args.smoke))
                    except Exception as e:
                        emit(
                            dict(
                                kind="step",
                                model=spec[0],
                                spec=list(spec),
                                error=f"{type(e).__name__}: {e}"[:300],
                            )
                        )
                    gc.collect()
                    if args.device == "cuda":
                        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
