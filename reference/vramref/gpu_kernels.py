"""The GPU's attention kernel for fake tensors on a machine without a GPU.

`F.scaled_dot_product_attention` picks its backend in C++ from the GPU's properties
(`sdp_utils.cpp`, `select_sdp_backend`). Without a GPU (and for CPU tensors) it picks the math
backend, which materialises the s x s scores and softmax (memory no H100 run has), or the CPU
flash kernel. On an H100 with bf16/fp16 inputs, head_dim <= 256 and no explicit mask, PyTorch picks FlashAttention-2
(`_scaled_dot_product_flash_attention`, which also accepts fewer key/value heads than query
heads, so `enable_gqa` needs no copy); with an explicit mask or fp32 inputs it picks the
memory-efficient kernel (`_scaled_dot_product_efficient_attention`), except for fewer key/value
heads without a mask, which only flash takes: there it runs the math kernel. Both ops have meta
functions that run on fake tensors of any device, so their outputs and the tensors their
autograd formulas save (query, key, value, output, logsumexp; plus the mask for the efficient
kernel) are exactly the GPU kernel's. `emulate_cuda_sdpa` installs that choice; nested
tensors and extra arguments fall back to the original function (counted in `calls`).

What a dispatcher-level tracker cannot see: memory a kernel allocates inside itself. On the
GPU, FlashAttention-2's backward (`mha_bwd`) allocates an fp32 dQ accumulator, fp32 softmax
sums and, for GQA, dK/dV expanded to all query heads; the caching allocator counts them in
`max_memory_allocated`, the reference does not (reference/README.md states the bound).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F

FLASH_MAX_HEAD_DIM = 256
_state = {"fallbacks": [], "calls": {"flash": 0, "efficient": 0, "math": 0, "fallback": 0}}


def _pad_last(t, multiple=8):
    d = t.shape[-1]
    if d % multiple == 0:
        return t
    return F.pad(t, (0, multiple - d % multiple))


def _gpu_sdpa(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
    **extra,
):
    if extra or query.is_nested:
        _state["calls"]["fallback"] += 1
        return _original(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa=enable_gqa, **extra)
    device = query.device.type
    if torch.is_autocast_enabled(device):
        # CUDA's autocast casts SDPA's inputs to its dtype before the backend is chosen
        # (scaled_dot_product_attention is on its lower-precision list), so the kernel is picked
        # for bf16 inputs (flash for grouped-query heads without a mask), as on the GPU. Here the
        # choice runs in Python above the dispatcher: the cast is made here, as autocast would.
        dtype = torch.get_autocast_dtype(device)
        query, key, value = (t.to(dtype) for t in (query, key, value))
        if attn_mask is not None and attn_mask.is_floating_point():
            attn_mask = attn_mask.to(dtype)
    d = query.shape[-1]
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    if not enable_gqa and key.shape[-3] != query.shape[-3]:
        raise ValueError("key heads differ from query heads without enable_gqa")
    half = query.dtype in (torch.bfloat16, torch.float16)
    if attn_mask is None and half and d <= FLASH_MAX_HEAD_DIM:
        _state["calls"]["flash"] += 1
        # sdp's flash path pads the head dim to a multiple of 8 and slices the output back
        q, k, v = _pad_last(query), _pad_last(key), _pad_last(value)
        out = _flash(q, k, v, dropout_p, is_causal, None, scale)
        return out[..., :d] if out.shape[-1] != d else out
    if key.shape[-3] != query.shape[-3] and attn_mask is None:
        # fewer K/V heads (enable_gqa) where flash cannot run: the memory-efficient kernel takes
        # equal head counts only (sdp_utils.cpp, check_batch_size_and_num_heads_dense with
        # supports_gqa false), so CUDA runs the math kernel; its composite saves the same tensors
        # on any device (K, V repeated, scaled Q and K, the s x s probabilities). Seen on an H200:
        # data/measurements/gpu_measured.json
        _state["calls"]["math"] += 1
        return torch.ops.aten._scaled_dot_product_attention_math(
            query, key, value, None, dropout_p, is_causal, None, scale=scale, enable_gqa=True
        )[0]
    # H100 runs the memory-efficient kernel (fp32, explicit masks, head dims over 256); it
    # saves the same q, k, v, output, logsumexp and mask, and needs equal head counts
    _state["calls"]["efficient"] += 1
    if key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        attn_mask = torch.zeros_like(attn_mask, dtype=query.dtype).masked_fill_(~attn_mask, float("-inf"))
    return _flash(query, key, value, dropout_p, is_causal and attn_mask is None, attn_mask, scale)


def _flash(q, k, v, dropout_p, is_causal, attn_mask, scale):
    """The H100's kernel. Its meta function runs on fake tensors of any device, and its
    autograd formula saves what the CUDA kernel saves (q, k, v, output, logsumexp, mask)."""
    if attn_mask is not None:
        return torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, attn_mask, True, dropout_p, is_causal, scale=scale
        )[0]
    return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, False, scale=scale)[0]


_original = F.scaled_dot_product_attention


@contextmanager
def emulate_cuda_sdpa():
    """Route SDPA on fake CUDA tensors to the kernel an H100 would run."""
    F.scaled_dot_product_attention = _gpu_sdpa
    torch.nn.functional.scaled_dot_product_attention = _gpu_sdpa
    try:
        yield _state
    finally:
        F.scaled_dot_product_attention = _original


@contextmanager
def hf_unpacked_sequences():
    """Hugging Face decides from the *values* of `position_ids` whether a batch packs several
    sequences (`masking_utils.find_packed_sequence_indices`); on fake tensors it cannot read
    them and assumes packing, building an explicit mask that sends SDPA to another kernel. The
    harness feeds one unpacked sequence per row (positions 0..s-1), for which that function
    returns None on a GPU; this context makes it return that value."""
    import transformers.masking_utils as masking

    original = masking.find_packed_sequence_indices
    masking.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        masking.find_packed_sequence_indices = original


class _FusedRmsNorm(torch.autograd.Function):
    """What CUDA's `_fused_rms_norm` returns and saves: the output in the input's dtype and the
    fp32 rstd per row; its backward keeps the input, the rstd and the weight
    (tools/autograd/derivatives.yaml, `_fused_rms_norm`). On the CPU the same call decomposes
    into the composite, which upcasts and keeps fp32 copies: the CUDA kernel keeps none. Values
    are never read (fake tensors): only shapes and dtypes are produced."""

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, eps):
        rows = x.shape[: x.dim() - len(normalized_shape)] + (1,) * len(normalized_shape)
        rstd = x.new_empty(rows, dtype=torch.float32)
        ctx.has_weight = weight is not None
        ctx.save_for_backward(x, rstd, weight if weight is not None else rstd)
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, grad):
        x, _rstd, weight = ctx.saved_tensors
        grad_x = torch.empty_like(x) if ctx.needs_input_grad[0] else None
        grad_w = torch.empty_like(weight) if ctx.has_weight and ctx.needs_input_grad[2] else None
        return grad_x, None, grad_w, None


_original_rms_norm = F.rms_norm


def _gpu_rms_norm(x, normalized_shape, weight=None, eps=None):
    # layer_norm.cpp rms_norm_symint: CUDA runs _fused_rms_norm when the weight's dtype is the
    # input's (or there is none); otherwise the composite, the same on both devices
    if weight is None or weight.dtype == x.dtype:
        _state["calls"]["fused_rms_norm"] = _state["calls"].get("fused_rms_norm", 0) + 1
        return _FusedRmsNorm.apply(x, tuple(normalized_shape), weight, eps)
    return _original_rms_norm(x, normalized_shape, weight, eps)


@contextmanager
def emulate_cuda_rms_norm():
    """Route F.rms_norm on fake tensors to what CUDA runs (`_FusedRmsNorm` above)."""
    F.rms_norm = _gpu_rms_norm
    try:
        yield _state
    finally:
        F.rms_norm = _original_rms_norm
