import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode

from vramref.gpu_kernels import emulate_cuda_sdpa
from vramref.tracker import MemoryTracker, saved_tensor_marking


def _attention_bytes(dtype, mask, autocast=False):
    tracker = MemoryTracker("cpu")
    b, h, kv, s, d = 1, 8, 2, 1024, 64
    with FakeTensorMode(), tracker, emulate_cuda_sdpa() as state:
        q = torch.empty(b, h, s, d, dtype=dtype, requires_grad=True)
        k = torch.empty(b, kv, s, d, dtype=dtype, requires_grad=True)
        v = torch.empty(b, kv, s, d, dtype=dtype, requires_grad=True)
        m = torch.ones(s, s, dtype=torch.bool).tril() if mask else None
        before = tracker.live
        amp = torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast)
        with saved_tensor_marking(tracker), amp:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=m is None, enable_gqa=True)
        kept = tracker.live - before
        calls = dict(state["calls"])
        state["calls"].update(flash=0, efficient=0, math=0, fallback=0)
        del out
    return kept, calls, (b, h, s, d)


def test_bf16_without_mask_runs_flash_and_keeps_output_and_logsumexp():
    kept, calls, (b, h, s, d) = _attention_bytes(torch.bfloat16, mask=False)
    assert calls["flash"] == 1
    # the output (bf16) and the fp32 logsumexp; no s x s scores
    assert kept == b * h * s * d * 2 + b * h * s * 4 + 16 + 8  # + the philox seed/offset scalars


def test_mask_takes_the_memory_efficient_kernel_and_never_the_scores():
    kept, calls, (b, h, s, d) = _attention_bytes(torch.bfloat16, mask=True)
    assert calls["efficient"] == 1
    assert kept < b * h * s * s * 2  # nothing of the size of the attention scores stays


def test_fp32_with_fewer_kv_heads_and_no_mask_runs_the_math_kernel_and_keeps_the_probabilities():
    # CUDA's memory-efficient kernel takes equal head counts only; flash takes no fp32: SDPA runs
    # its math kernel, which keeps the b x h x s x s probabilities (seen on an H200)
    kept, calls, (b, h, s, d) = _attention_bytes(torch.float32, mask=False)
    assert calls["math"] == 1 and calls["efficient"] == 0
    assert kept >= b * h * s * s * 4


def test_fp32_with_a_mask_stays_on_the_memory_efficient_kernel():
    kept, calls, (b, h, s, d) = _attention_bytes(torch.float32, mask=True)
    assert calls["efficient"] == 1 and calls["math"] == 0
    assert kept < b * h * s * s * 4


def test_fp32_inputs_under_autocast_are_cast_first_and_run_flash():
    # CUDA's autocast casts SDPA's inputs to bf16 before the backend is chosen: fp32 q, k, v with
    # fewer K/V heads and no mask run flash on bf16 copies (kept for backward), as on an H200
    kept, calls, (b, h, s, d) = _attention_bytes(torch.float32, mask=False, autocast=True)
    assert calls["flash"] == 1 and calls["math"] == 0
    kv = 2
    # the bf16 copies of q, k and v, the bf16 output and the fp32 logsumexp; no s x s scores
    assert kept == (b * h * s * d + 2 * b * kv * s * d) * 2 + b * h * s * d * 2 + b * h * s * 4 + 16 + 8
