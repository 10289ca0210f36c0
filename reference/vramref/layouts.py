"""Data, fully sharded and tensor/sequence parallel layouts, applied with PyTorch's own APIs.

The plans follow torchtitan's `parallelize_llama.py` (`apply_tp`, `apply_fsdp`) on the Hugging
Face module names: embedding row-wise with a sequence-sharded output, norms `SequenceParallel`,
the attention and MLP inputs gathered by `PrepareModuleInput`, Q/K/V and gate/up column-wise,
O and down row-wise back to sequence shards, the LM head column-wise from the sequence shards
with a replicated output (torchtitan without loss parallelism). FSDP2 wraps every decoder
layer, then the root, as torchtitan does.
"""

from __future__ import annotations

import torch

from .models import decoder_layers

# HF projection names of each family's dense decoder layer, grouped by role
ATTN_COLWISE = ("q_proj", "k_proj", "v_proj")
ATTN_ROWWISE = ("o_proj",)
MLP_COLWISE = ("gate_proj", "up_proj")
MLP_ROWWISE = ("down_proj",)
NORMS = ("input_layernorm", "post_attention_layernorm")


def apply_ddp(model, mesh_dp, tracker=None):
    """Data parallelism with PyTorch's FSDP2-based `replicate` (every decoder layer, then the
    root, as torchtitan wraps them). `nn.parallel.DistributedDataParallel` cannot run here: its
    C++ Reducer reads the data pointers of its gradient buckets, which fake tensors do not have."""
    from torch.distributed._composable.replicate_with_fsdp import replicate

    for layer in decoder_layers(model):
        replicate(layer, mesh=mesh_dp)
    replicate(model, mesh=mesh_dp)
    _tag_fsdp_buffers(tracker)
    return model


def apply_fsdp(model, mesh_dp, reshard_after_forward=True, mixed_precision=False, tracker=None):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if mixed_precision else None
    kwargs = {"mesh": mesh_dp, "reshard_after_forward": reshard_after_forward}
    if mp is not None:
        kwargs["mp_policy"] = mp
    layers = decoder_layers(model)
    for i, layer in enumerate(layers):
        # torchtitan: the last layer is not resharded, the root's backward needs it at once
        last = i == len(layers) - 1
        fully_shard(layer, **{**kwargs, "reshard_after_forward": reshard_after_forward and not last})
    fully_shard(model, **kwargs)
    _tag_fsdp_buffers(tracker)
    return model


def _tag_fsdp_buffers(tracker):
    """FSDP2's all-gather outputs and unsharded parameters count as parameters, its
    reduce-scatter inputs/outputs as gradients (vramplan's "unsharded params + grads" rows)."""
    if tracker is None:
        return
    from torch.distributed.fsdp._fully_shard import _fsdp_param_group as pg

    cls = pg.FSDPParamGroup
    if getattr(cls, "_vramref_tagged", False):
        cls._vramref_tracker[0] = tracker
        return
    cls._vramref_tagged = True
    cls._vramref_tracker = [tracker]

    def wrap(name, tag):
        original = getattr(cls, name)

        def wrapped(self, *args, **kwargs):
            with cls._vramref_tracker[0].tagging(tag):
                return original(self, *args, **kwargs)

        setattr(cls, name, wrapped)

    wrap("unshard", "parameters")
    wrap("wait_for_unshard", "parameters")
    wrap("post_backward", "gradients")


def apply_tp(model, mesh_tp, sequence_parallel=True):
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
        parallelize_module,
    )

    seq = Shard(1) if sequence_parallel else Replicate()
    base = model.get_decoder()
    top_plan = {
        "embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=seq),
    }
    if sequence_parallel:
        top_plan["norm"] = SequenceParallel()
    parallelize_module(base, mesh_tp, top_plan)
    parallelize_module(
        model,
        mesh_tp,
        {"lm_head": ColwiseParallel(input_layouts=seq, output_layouts=Replicate(), use_local_output=True)},
    )
    for layer in decoder_layers(model):
        plan = {}
        if sequence_parallel:
            for norm in NORMS:
                plan[norm] = SequenceParallel()
            plan["self_attn"] = PrepareModuleInput(
                input_kwarg_layouts={"hidden_states": seq},
                desired_input_kwarg_layouts={"hidden_states": Replicate()},
            )
            plan["mlp"] = PrepareModuleInput(input_layouts=(seq,), desired_input_layouts=(Replicate(),))
        for name in ATTN_COLWISE:
            plan[f"self_attn.{name}"] = ColwiseParallel()
        for name in ATTN_ROWWISE:
            plan[f"self_attn.{name}"] = RowwiseParallel(output_layouts=seq)
        for name in MLP_COLWISE:
            plan[f"mlp.{name}"] = ColwiseParallel()
        for name in MLP_ROWWISE:
            plan[f"mlp.{name}"] = RowwiseParallel(output_layouts=seq)
        parallelize_module(layer, mesh_tp, plan)
    # parallelize_module gives each module's weight a new DTensor Parameter, so a tied LM head
    # (tie_word_embeddings) comes out with a copy of its own. Both plans shard the vocabulary
    # dimension (Shard(0)): tie them again, as the model was defined.
    if getattr(model.config, "tie_word_embeddings", False):
        model.lm_head.weight = base.embed_tokens.weight
    return model


def tp_supported(model):
    """The plan above names Llama-style modules; other layouts of the layer are refused."""
    layer = decoder_layers(model)[0]
    names = {n for n, _ in layer.named_modules()}
    needed = {f"self_attn.{n}" for n in ATTN_COLWISE + ATTN_ROWWISE} | {f"mlp.{n}" for n in MLP_COLWISE + MLP_ROWWISE}
    return needed <= names and all(n in names for n in NORMS)
