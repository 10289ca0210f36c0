"""torchtitan's own stack on fake tensors: its model (torchtitan.models.llama3: fused Q|K|V
projection, complex RoPE buffer, its RMSNorm and FeedForward), its FSDP2 wrapping
(distributed/fsdp.py apply_fsdp_to_decoder: the embedding and norm + LM head as units of their
own, MixedPrecisionPolicy bf16 / fp32, applied on one GPU too), its full activation
checkpointing (FullAC) and loss (components/loss.py CrossEntropyLoss), in the trainer's order
(trainer.py _forward_backward_body: pred = model(...); loss; del pred; loss.backward()).

torchtitan 0.3.0 no longer runs SDPA for language models (flex, flex_flash or varlen); flex
attention refuses a backward on the CPU (torch/nn/attention/flex_attention.py
_validate_device), so the rows run its varlen backend, whose metadata (document boundaries,
data-dependent) is built from real position tensors before the fake forward.
"""

from __future__ import annotations

import dataclasses

import torch

# preset -> torchtitan's flavor in torchtitan.models.llama3.llama3_configs
FLAVORS = {"Llama-3.2-1B": "1B", "Llama-3.1-8B": "8B"}
ATTENTION_BACKEND = "varlen"


def build(sc):
    """The flavor's model on the meta device, cut to `num_layers` blocks, fp32 parameters (the
    trainer's default; FSDP's policy casts to bf16 for compute), RoPE caches as the trainer
    sizes them."""
    from torchtitan.models.llama3 import llama3_configs

    config = llama3_configs[FLAVORS[sc.preset]](attn_backend=ATTENTION_BACKEND)
    config.layers = config.layers[: sc.num_layers]
    # Decoder.Config.update_from_config: the trainer sizes each layer's RoPE cache to the
    # training sequence (one cache per layer, seq_len × d/2 complex64)
    for layer in config.layers:
        layer.attention.rope = dataclasses.replace(layer.attention.rope, max_seq_len=sc.seq_len)
    with torch.device("meta"):
        return config.build()


def apply_recompute(model, mode):
    if mode == "none":
        return 0
    if mode != "full":
        raise ValueError(f"torchtitan rows run recompute none or full, not {mode}")
    from torchtitan.distributed.activation_checkpoint import FullAC

    FullAC(FullAC.Config()).apply(model)
    return len(model.layers)


def apply_fsdp(model, mesh, reshard_after_forward):
    """torchtitan's apply_fsdp_to_decoder, as parallelize_llama calls it (always, also on one
    GPU: with one rank it installs the mixed-precision policy)."""
    from torchtitan.distributed.fsdp import apply_fsdp_to_decoder

    apply_fsdp_to_decoder(
        model,
        mesh,
        param_dtype=torch.bfloat16,
        reduce_dtype=torch.float32,
        pp_enabled=False,
        reshard_after_forward_policy="default" if reshard_after_forward else "never",
    )
    return model


def attention_masks(model, batch, seq_len):
    """(positions, varlen metadata) of unpacked sequences, built on real tensors (call with the
    fake mode off): the metadata finds document starts with nonzero, which fake tensors cannot
    answer."""
    positions = torch.arange(seq_len).unsqueeze(0).expand(batch, seq_len)
    return positions, model.get_attention_masks(positions=positions)


def loss_fn():
    from torchtitan.components.loss import CrossEntropyLoss

    return CrossEntropyLoss(CrossEntropyLoss.Config())
