"""Kernel efficiency by shape on a real GPU: GEMMs, grouped (MoE) GEMMs and attention, GPU-bound.

`gpu_speed.py` timed one call per CUDA-event pair, so a kernel shorter than PyTorch's launch
(tens of microseconds of Python and dispatch) was timed as the launch. Here every call is
captured in a CUDA graph of `reps` back-to-back calls and the graph is replayed, so what is timed
is the GPU's own work: what a training step sees when the CPU runs ahead. Attention's forward and
backward are captured the same way (autograd inside the capture, as
`torch.cuda.make_graphed_callables` does); where capture fails the row says `"timing": "loop"`
and the calls are queued back to back without synchronising instead.

Output: JSON lines, kinds "environment", "gemm_shape", "grouped_gemm", "attention_shape", "memory"
(element-wise kernels' HBM rate) and "optimizer" (an AdamW step's), written as each finishes. `--device cpu --smoke` runs every code path with tiny shapes and measures nothing.

    python -m vramref.gpu_shapes --output /tmp/shapes.jsonl --seconds 240
"""

from __future__ import annotations

import statistics
import sys
import time

from .gpu_cli import measurement_parser, measurement_run

# GEMM y = x·Wᵀ with x of m × k and W of n × k: the k and n of the presets' layers and experts
# after tensor parallelism (Llama 1B-405B, Qwen3 MoE, DeepSeek-V3, gpt-oss, Mixtral), and m tokens.
GEMM_KN = (512, 768, 1024, 1536, 2048, 2880, 4096, 5760, 7168, 8192, 14336, 16384)
GEMM_M = (256, 1024, 4096, 16384)
# grouped GEMMs: (model, hidden, expert ffn) and local experts × tokens per expert
GROUPED_MODELS = [
    ("Qwen3-30B-A3B", 2048, 768),
    ("Qwen3-235B-A22B", 4096, 1536),
    ("DeepSeek-V3", 7168, 2048),
    ("gpt-oss-120b", 2880, 2880),
]
GROUPED_EXPERTS = (1, 4, 16, 64)
GROUPED_TOKENS = (64, 256, 1024, 4096, 16384)
GROUPED_MAX_ROWS = 131072
# attention: (heads, kv heads, head dim) per GPU and sequence lengths, batch 1, causal
ATTENTION_HEADS = [(1, 1), (4, 1), (8, 1), (16, 2), (32, 4), (64, 8)]
ATTENTION_DIMS = (64, 128)
ATTENTION_SEQS = (1024, 2048, 4096, 8192, 16384)
TARGET_S = 0.004  # GPU time per timed replay


def _sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def time_per_call(torch, device, fn, estimate_s, graph=True):
    """Median GPU seconds per call of fn, and how it was timed ("graph" or "loop")."""
    reps = int(min(200, max(1, TARGET_S / max(estimate_s, 1e-7))))
    if device != "cuda":
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t) / reps, "cpu"
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    _sync(torch, device)
    how = "loop"
    run = None
    if graph:
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(reps):
                    fn()
            run = g.replay
            how = "graph"
        except Exception:
            _sync(torch, device)
            run = None
    if run is None:

        def run():
            for _ in range(reps):
                fn()

    run()
    _sync(torch, device)
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times), how


def measure_gemm_shapes(torch, device, emit, deadline, smoke=False):
    import torch.nn.functional as F

    fp8 = device == "cuda" and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")
    kn = (64, 96) if smoke else GEMM_KN
    ms = (32,) if smoke else GEMM_M
    for m in ms:
        for k in kn:
            for n in kn:
                if time.time() > deadline:
                    return
                row = dict(kind="gemm_shape", m=m, k=k, n=n)
                try:
                    x = torch.randn(m, k, device=device, dtype=torch.bfloat16)
                    w = torch.randn(n, k, device=device, dtype=torch.bfloat16)
                    flops = 2.0 * m * n * k
                    row["forward_s"], row["timing"] = time_per_call(torch, device, lambda: F.linear(x, w), flops / 6e14)
                    row["tflops"] = flops / row["forward_s"] / 1e12
                    if fp8 and k % 16 == 0 and n % 16 == 0:
                        x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
                        one = torch.ones((), device=device)
                        row["fp8_forward_s"], _ = time_per_call(
                            torch,
                            device,
                            lambda: torch._scaled_mm(x8, w8.t(), one, one, out_dtype=torch.bfloat16),
                            flops / 1.2e15,
                        )
                        row["fp8_tflops"] = flops / row["fp8_forward_s"] / 1e12
                        del x8, w8
                    del x, w
                except Exception as e:  # one shape's failure must not end the sweep
                    row["error"] = f"{type(e).__name__}: {e}"[:300]
                emit(row)


def measure_grouped(torch, device, emit, deadline, smoke=False):
    models = [("tiny", 64, 32)] if smoke else GROUPED_MODELS
    experts = (2,) if smoke else GROUPED_EXPERTS
    tokens = (16,) if smoke else GROUPED_TOKENS
    have = hasattr(torch, "_grouped_mm")
    for name, h, f in models:
        for op, k, n in (("gate_up", h, 2 * f), ("down", f, h)):
            for e in experts:
                for t in tokens:
                    if e * t > GROUPED_MAX_ROWS or time.time() > deadline:
                        continue
                    row = dict(kind="grouped_gemm", model=name, op=op, experts=e, tokens_per_expert=t, k=k, n=n)
                    flops = 2.0 * e * t * k * n
                    try:
                        x = torch.randn(e * t, k, device=device, dtype=torch.bfloat16)
                        w = torch.randn(e, n, k, device=device, dtype=torch.bfloat16)
                        if have and device == "cuda":
                            offs = torch.arange(t, e * t + 1, t, device=device, dtype=torch.int32)
                            wt = w.transpose(-2, -1)  # (e, k, n), column-major as the kernel wants
                            fn = lambda: torch._grouped_mm(x, wt, offs=offs)
                            row["implementation"] = "torch._grouped_mm"
                        else:
                            xs = x.view(e, t, k)
                            fn = lambda: torch.bmm(xs, w.transpose(-2, -1))
                            row["implementation"] = "bmm"
                        row["forward_s"], row["timing"] = time_per_call(torch, device, fn, flops / 6e14)
                        row["tflops"] = flops / row["forward_s"] / 1e12
                        # the same rows as one dense GEMM: what perfect grouping would reach
                        wd = w[0]
                        row["dense_s"], _ = time_per_call(
                            torch, device, lambda: torch.nn.functional.linear(x, wd), flops / 6e14
                        )
                        del x, w
                    except Exception as ex:
                        row["error"] = f"{type(ex).__name__}: {ex}"[:300]
                    emit(row)


def measure_attention_shapes(torch, device, emit, deadline, smoke=False, dims_override=()):
    import torch.nn.functional as F

    backends = [("default", None)]
    if device == "cuda":
        from torch.nn.attention import SDPBackend

        backends += [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    heads = [(2, 1)] if smoke else ATTENTION_HEADS
    dims = (16,) if smoke else ATTENTION_DIMS
    seqs = (64,) if smoke else ATTENTION_SEQS
    if dims_override:
        dims = dims_override
        if not smoke:
            heads, seqs = ATTENTION_HEADS[-3:], ATTENTION_SEQS[-3:]
    for d in dims:
        for a, kv in heads:
            for s in seqs:
                for name, backend in backends:
                    if time.time() > deadline:
                        return
                    row = dict(kind="attention_shape", heads=a, kv_heads=kv, head_dim=d, seq=s, batch=1, backend=name)
                    try:
                        _attention_row(torch, F, device, backend, row, a, kv, d, s)
                    except Exception as ex:
                        row["error"] = f"{type(ex).__name__}: {ex}"[:300]
                    emit(row)


def _attention_row(torch, F, device, backend, row, a, kv, d, s):
    from contextlib import nullcontext

    if backend is not None:
        from torch.nn.attention import sdpa_kernel

        ctx = lambda: sdpa_kernel(backend)
    else:
        ctx = nullcontext
    q = torch.randn(1, a, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(1, kv, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(1, kv, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(1, a, s, d, device=device, dtype=torch.bfloat16)
    fwd_flops = 2.0 * 2 * s * s * d * a / 2  # causal: half of the s² scores, two GEMMs
    estimate = fwd_flops / 2e14

    def fwd():
        with ctx():
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != a)

    def both():
        with ctx():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != a)
        return torch.autograd.grad(o, (q, k, v), grad)

    row["forward_s"], row["timing"] = time_per_call(torch, device, lambda: fwd(), estimate)
    row["forward_backward_s"], row["timing_backward"] = time_per_call(torch, device, both, 3.5 * estimate)
    row["backward_s"] = row["forward_backward_s"] - row["forward_s"]
    row["forward_tflops"] = fwd_flops / row["forward_s"] / 1e12
    row["backward_tflops"] = 2.5 * fwd_flops / max(row["backward_s"], 1e-9) / 1e12


# memory-bound kernels: elements per tensor, and the parameter shapes an optimizer step updates
MEMORY_ELEMENTS = (1 << 22, 1 << 24, 1 << 26, 1 << 28)
OPTIMIZER_SHAPES = [(4096, 4096)] * 4 + [(14336, 4096)] * 3 + [(4096,)] * 2  # one Llama-8B layer
OPTIMIZER_LAYERS = (2, 8)


def measure_memory(torch, device, emit, deadline, smoke=False):
    """HBM rates of the element-wise kernels a step runs and of the optimizer step."""
    import torch.nn.functional as F

    sizes = (4096,) if smoke else MEMORY_ELEMENTS
    for n in sizes:
        if time.time() > deadline:
            return
        a = torch.randn(n, device=device, dtype=torch.bfloat16)
        b = torch.randn(n, device=device, dtype=torch.bfloat16)
        rows = n // 4096 if n >= 4096 else 1
        x = a.view(rows, -1)
        w = torch.ones(x.shape[-1], device=device, dtype=torch.bfloat16)

        def rms_eager():  # transformers' LlamaRMSNorm.forward, op for op
            h = x.to(torch.float32)
            var = h.pow(2).mean(-1, keepdim=True)
            h = h * torch.rsqrt(var + 1e-6)
            return w * h.to(torch.bfloat16)

        cases = [
            ("copy", lambda: a.clone(), 4),
            ("add", lambda: a + b, 6),
            ("silu_mul", lambda: F.silu(a) * b, 10),
            ("rms_norm_eager", rms_eager, 36),
        ]
        if hasattr(F, "rms_norm"):
            cases.append(("rms_norm_fused", lambda: F.rms_norm(x, (x.shape[-1],), w, 1e-6), 6))
        for name, fn, bytes_per in cases:
            row = dict(kind="memory", op=name, elements=n, bytes=bytes_per * n)
            try:
                row["seconds"], row["timing"] = time_per_call(torch, device, fn, bytes_per * n / 2.5e12)
                row["gbps"] = row["bytes"] / row["seconds"] / 1e9
            except Exception as ex:
                row["error"] = f"{type(ex).__name__}: {ex}"[:300]
            emit(row)
        del a, b, x
    measure_optimizer(torch, device, emit, deadline, smoke)


def measure_optimizer(torch, device, emit, deadline, smoke=False):
    shapes = [(64, 64), (64,)] if smoke else OPTIMIZER_SHAPES
    for layers in (1,) if smoke else OPTIMIZER_LAYERS:
        for dtype in (torch.bfloat16, torch.float32):
            for impl in ("fused", "foreach"):
                if time.time() > deadline:
                    return
                row = dict(
                    kind="optimizer", optimizer="adamw", implementation=impl, layers=layers, dtype=str(dtype)[6:]
                )
                try:
                    params = [
                        torch.nn.Parameter(torch.randn(*shape, device=device, dtype=dtype))
                        for _ in range(layers)
                        for shape in shapes
                    ]
                    for p in params:
                        p.grad = torch.randn_like(p)
                    kwargs = {"fused": True} if impl == "fused" else {"foreach": True}
                    if device != "cuda":
                        kwargs = {"foreach": False}
                    opt = torch.optim.AdamW(params, lr=1e-4, **kwargs)
                    row["parameters"] = sum(p.numel() for p in params)
                    row["tensors"] = len(params)
                    # p, m, v read and written, g read: 7 accesses of the parameters' dtype
                    row["bytes"] = 7 * row["parameters"] * params[0].element_size()
                    row["seconds"], row["timing"] = time_per_call(
                        torch, device, opt.step, row["bytes"] / 2.5e12, graph=False
                    )
                    row["gbps"] = row["bytes"] / row["seconds"] / 1e9
                    del opt, params
                except Exception as ex:
                    row["error"] = f"{type(ex).__name__}: {ex}"[:300]
                emit(row)


PARTS = {
    "memory": measure_memory,
    "attention": measure_attention_shapes,
    "grouped": measure_grouped,
    "gemm": measure_gemm_shapes,
}


def main(argv=None):
    ap = measurement_parser(__doc__, 240, "attention,grouped,gemm,memory")
    ap.add_argument(
        "--head-dims", default="", help="attention only at these head dimensions (e.g. 64,128,256), 16-64 heads"
    )
    args = ap.parse_args(argv)
    import torch

    with measurement_run(args, torch) as (emit, deadline):
        for part in args.parts.split(","):
            if part == "attention" and args.head_dims:
                dims = tuple(int(x) for x in args.head_dims.split(","))
                measure_attention_shapes(torch, args.device, emit, deadline, args.smoke, dims)
            else:
                PARTS[part](torch, args.device, emit, deadline, args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
