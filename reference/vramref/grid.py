"""The scenarios the dataset covers. Reduced depth (real widths) keeps each run to seconds."""

from __future__ import annotations

from dataclasses import replace

from .scenario import Scenario

# one or two presets per family; `num_layers` 2 of the real dimensions (4 where a layout needs
# more layers than that), sequence 4096 unless the model has fewer positions
PRESETS = {
    "llama": ["Llama-3.1-8B", "Llama-3.2-1B"],
    "mistral": ["Mistral-7B-v0.3", "Mistral-7B-v0.1"],
    "mixtral": ["Mixtral-8x7B-v0.1"],
    "qwen2": ["Qwen2.5-7B", "Qwen2.5-3B"],
    "qwen3": ["Qwen3-8B", "Qwen3-0.6B"],
    "qwen3_moe": ["Qwen3-30B-A3B"],
    "deepseek_v2": ["DeepSeek-V2-Lite"],
    "deepseek_v3": ["DeepSeek-V3"],
    "gemma2": ["gemma-2-9b", "gemma-2-2b"],
    "gemma3": ["gemma-3-1b-it"],
    "phi3": ["Phi-3-mini-4k-instruct"],
    "gpt2": ["gpt2"],
    "gpt_oss": ["gpt-oss-20b"],
    "olmo2": ["OLMo-2-1124-7B"],
}
SEQ_LEN = {"gpt2": 1024}
# families whose attention projects Q|K|V (and gate|up) in one fused linear: per-projection
# LoRA targets have no module to attach to, so their LoRA rows target all-linear
FUSED_PROJECTION_FAMILIES = ("phi3", "gpt2")
# dense families whose decoder layer has Llama-style projections (the TP plan's names)
TP_FAMILIES = ("llama", "mistral", "qwen2", "qwen3")
PP_FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "olmo2")
# dense families whose attention runs SDPA's flash kernel without a mask at 4,096 tokens (ring
# attention shards the flash op; a mask or eager attention it does not take)
CP_FAMILIES = ("llama", "qwen2", "qwen3", "olmo2")


def single_gpu(preset, family):
    seq = SEQ_LEN.get(family, 4096)
    base = Scenario(preset, num_layers=2, seq_len=seq, precision="bf16", optimizer="adamw-fused")
    out = []
    for precision, optimizer in [
        ("bf16", "adamw-fused"),
        ("bf16", "adamw-foreach"),
        ("fp32", "adamw-foreach"),
        ("amp-bf16", "adamw-foreach"),
        ("amp-bf16", "adamw-fused"),
        ("bf16", "sgd"),
        ("bf16", "sgd-momentum"),
        ("bf16", "adafactor"),
    ]:
        out.append(replace(base, precision=precision, optimizer=optimizer))
    out.append(replace(base, recompute="full"))
    out.append(replace(base, recompute="selective-op"))
    out.append(replace(base, num_layers=4, recompute="full", recompute_every=2))
    out.append(replace(base, seq_len=seq // 2, micro_batch=2))
    out.append(replace(base, microbatches=2))
    fused = family in FUSED_PROJECTION_FAMILIES
    out.append(replace(base, method="lora", lora_rank=16, lora_targets="all-linear" if fused else "q,v"))
    out.append(replace(base, method="lora", lora_rank=64, lora_targets="all-linear"))
    out.append(
        replace(base, method="lora", lora_rank=8, lora_targets="all-linear" if fused else "attention", recompute="full")
    )
    out.append(replace(base, method="qlora", lora_rank=16, lora_targets="all-linear" if fused else "q,v"))
    out.append(replace(base, method="qlora", lora_rank=64, lora_targets="all-linear"))
    out.append(replace(base, method="frozen", freeze_embeddings=True, freeze_first_layers=1))
    return out


def data_parallel(preset, family):
    seq = SEQ_LEN.get(family, 4096)
    base = Scenario(preset, num_layers=2, seq_len=seq, precision="fsdp-mixed", optimizer="adamw-fused")
    out = [
        replace(base, layout="fsdp", world=4, dp=4),
        replace(base, layout="fsdp", world=8, dp=8, recompute="full"),
        replace(base, layout="fsdp", world=4, dp=4, reshard_after_forward=False),
        replace(base, layout="hsdp", world=4, dp=4),
        replace(base, layout="ddp", world=2, dp=2, precision="bf16"),
        replace(base, layout="fsdp", world=4, dp=4, precision="bf16", method="lora", lora_targets="all-linear"),
    ]
    return out


def tensor_parallel(preset, family):
    seq = SEQ_LEN.get(family, 4096)
    base = Scenario(preset, num_layers=2, seq_len=seq, precision="bf16", optimizer="adamw-fused", layout="tp")
    return [
        replace(base, world=2, tp=2),
        replace(base, world=4, tp=4),
        replace(base, world=2, tp=2, sequence_parallel=False),
        replace(base, world=2, tp=2, recompute="full"),
        replace(base, layout="fsdp+tp", world=4, dp=2, tp=2, precision="fsdp-mixed"),
        replace(base, layout="fsdp+tp", world=8, dp=2, tp=4, precision="fsdp-mixed", recompute="full"),
    ]


def pipeline(preset, family):
    seq = SEQ_LEN.get(family, 4096)
    base = Scenario(preset, num_layers=4, seq_len=seq, precision="bf16", optimizer="adamw-fused", layout="pp")
    out = []
    # torchtitan's split counts the embedding and the head as layers: 4 layers make two even
    # stages, 6 layers four (interleaved, 2 per rank)
    for schedule, pp, vpp, layers, microbatches, recompute in [
        ("1f1b", 2, 1, 4, 4, "none"),
        ("1f1b", 2, 1, 4, 8, "full"),
        ("gpipe", 2, 1, 4, 4, "none"),
        ("interleaved", 2, 2, 6, 4, "none"),
    ]:
        for rank in range(pp):
            out.append(
                replace(
                    base,
                    num_layers=layers,
                    world=pp,
                    pp=pp,
                    vpp=vpp,
                    schedule=schedule,
                    microbatches=microbatches,
                    rank=rank,
                    recompute=recompute,
                )
            )
    return out


def torchtune(preset):
    """torchtune's own builders, chunked loss and recipe loop (torchtune_run.py): full training,
    LoRA and QLoRA as its single-device recipes run them, with and without activation
    checkpointing, micro-batches and gradient accumulation."""
    base = Scenario(preset, num_layers=2, precision="bf16", optimizer="adamw-fused", model_code="torchtune")
    out = [
        base,
        replace(base, recompute="full"),
        replace(base, seq_len=2048, micro_batch=2),
        replace(base, microbatches=2),
        replace(base, method="lora", lora_rank=16, lora_targets="q,v"),
        replace(base, method="lora", lora_rank=64, lora_targets="all-linear"),
        replace(base, method="lora", lora_rank=8, lora_targets="attention", recompute="full"),
    ]
    if TORCHTUNE_QLORA.get(preset, False):
        out.append(replace(base, method="qlora", lora_rank=64, lora_targets="all-linear"))
        out.append(replace(base, method="qlora", lora_rank=16, lora_targets="q,v", recompute="full"))
    return out


def context_parallel(preset, family):
    """PyTorch's context parallelism (ring attention over the cp ranks, the sequence sharded in
    load-balanced chunks), as torchtitan applies it to SDPA models."""
    seq = SEQ_LEN.get(family, 4096)
    base = Scenario(preset, num_layers=2, seq_len=seq, precision="bf16", optimizer="adamw-fused", layout="cp")
    return [
        replace(base, world=2, cp=2),
        replace(base, world=4, cp=4),
        replace(base, world=2, cp=2, recompute="full"),
    ]


def torchtitan(preset):
    """torchtitan's own model, FSDP2 wrapping, activation checkpointing and loss
    (torchtitan_run.py), with its trainer's mixed precision: one GPU and FSDP2."""
    base = Scenario(preset, num_layers=2, precision="fsdp-mixed", optimizer="adamw-fused", model_code="torchtitan")
    return [
        base,
        replace(base, recompute="full"),
        replace(base, microbatches=2),
        replace(base, layout="fsdp", world=4, dp=4),
        replace(base, layout="fsdp", world=8, dp=8, recompute="full"),
        replace(base, layout="fsdp", world=4, dp=4, reshard_after_forward=False),
    ]


# torchtune's presets with a model builder (torchtune_run.BUILDERS), and whether it has a
# QLoRA builder
TORCHTUNE_QLORA = {"Llama-3.2-1B": True, "Llama-3.1-8B": True, "Mistral-7B-v0.1": True, "Qwen2.5-7B": False}
TORCHTUNE_FAMILY = {
    "Llama-3.2-1B": "llama",
    "Llama-3.1-8B": "llama",
    "Mistral-7B-v0.1": "mistral",
    "Qwen2.5-7B": "qwen2",
}


def all_scenarios():
    out = []
    for family, presets in PRESETS.items():
        for i, preset in enumerate(presets):
            out.extend((family, sc) for sc in single_gpu(preset, family))
            if i == 0:
                out.extend((family, sc) for sc in data_parallel(preset, family))
            if family in TP_FAMILIES:
                out.extend((family, sc) for sc in tensor_parallel(preset, family))
            if family in PP_FAMILIES and i == 0:
                out.extend((family, sc) for sc in pipeline(preset, family))
            if family in CP_FAMILIES and i == 0:
                out.extend((family, sc) for sc in context_parallel(preset, family))
    for preset, family in TORCHTUNE_FAMILY.items():
        out.extend((family, sc) for sc in torchtune(preset))
    for preset in ("Llama-3.2-1B", "Llama-3.1-8B"):
        out.extend(("llama", sc) for sc in torchtitan(preset))
    return out
