"""Activation recomputation as PyTorch runs it: non-reentrant `torch.utils.checkpoint` around
whole decoder layers (full, or every N-th layer), or op-level selective checkpointing with
torchtitan's policy (save the outputs of matmuls except every second one, and of attention,
recompute the rest; `torchtitan/distributed/activation_checkpoint.py`, `_apply_op_sac`)."""

from __future__ import annotations

from collections import defaultdict

import torch
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

from .models import decoder_layers

_SAVE_ALWAYS = {
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    torch.ops.aten.max.default,
}


def _sac_policy():
    counts = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        key = f"{mode}_mm_count"
        if func == torch.ops.aten.mm.default:
            counts[key] += 1
        # torchtitan saves every matmul but every second one (mm counts 1, 3, 5... are saved)
        to_save = func in _SAVE_ALWAYS and not (func == torch.ops.aten.mm.default and counts[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if to_save else CheckpointPolicy.PREFER_RECOMPUTE

    return policy


class CheckpointedLayer(torch.nn.Module):
    def __init__(self, inner, selective):
        super().__init__()
        self.inner = inner
        self.selective = selective

    def forward(self, *args, **kwargs):
        context_fn = (lambda: create_selective_checkpoint_contexts(_sac_policy())) if self.selective else None
        kw = {"context_fn": context_fn} if context_fn else {}
        return checkpoint(self.inner, *args, use_reentrant=False, preserve_rng_state=False, **kw, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.inner, name)


def apply_recompute(model, mode, every=1):
    """mode: none | full | selective-op.

    full with every == 1 is Hugging Face's own `gradient_checkpointing_enable` (non-reentrant);
    every N > 1 checkpoints the N-th, 2N-th... layer (torchtitan's `selective_ac_option = N`).
    Returns the number of layers checkpointed."""
    if mode == "none":
        return 0
    layers = decoder_layers(model)
    if mode == "full" and every == 1:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        return len(layers)
    count = 0
    for i in range(len(layers)):
        if mode == "full" and (i + 1) % every != 0:
            continue
        layers[i] = CheckpointedLayer(layers[i], selective=(mode == "selective-op"))
        count += 1
    return count
