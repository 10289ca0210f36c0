"""Fine-tuning methods: PEFT LoRA, QLoRA with torchao's NF4 base (as torchtune builds it), and
frozen embeddings / first layers."""

from __future__ import annotations

import torch

from .models import decoder_layers

# vramplan's --lora-targets names -> HF projection names per architecture style
TARGET_NAMES = {
    "q": ("q_proj",),
    "k": ("k_proj",),
    "v": ("v_proj",),
    "o": ("o_proj",),
    "gate": ("gate_proj",),
    "up": ("up_proj",),
    "down": ("down_proj",),
}
TARGET_SETS = {
    "q,v": ("q", "v"),
    "attention": ("q", "k", "v", "o"),
    "all-linear": ("q", "k", "v", "o", "gate", "up", "down"),
}


def target_modules(targets):
    names = []
    for short in TARGET_SETS[targets]:
        names.extend(TARGET_NAMES[short])
    return names


def apply_lora(model, rank, targets):
    """PEFT's LoRA with its defaults (alpha 2r irrelevant to memory, dropout 0 keeps no mask).
    PEFT's `autocast_adapter_dtype=True` (its default) keeps the adapters in fp32 over a bf16
    base."""
    from peft import LoraConfig, get_peft_model

    # "all-linear" is PEFT's own selector: every nn.Linear (or GPT-2 Conv1D) but the LM head
    modules = "all-linear" if targets == "all-linear" else target_modules(targets)
    config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules=modules)
    return get_peft_model(model, config)


def quantize_nf4(model):
    """torchtune's QLoRA base: every decoder linear's weight becomes torchao's NF4Tensor
    (`to_nf4`, block 64, scaler block 256), frozen; embeddings, norms and the LM head stay bf16."""
    from torchao.quantization.quantize_.workflows.nf4.nf4_tensor import to_nf4

    count = 0
    for layer in decoder_layers(model):
        for module in layer.modules():
            # the frozen base linears; PEFT's lora_A / lora_B are Linears too, and train
            if isinstance(module, torch.nn.Linear) and not module.weight.requires_grad:
                nf4 = to_nf4(module.weight.detach())
                module.weight = torch.nn.Parameter(nf4, requires_grad=False)
                count += 1
    return count


def freeze(model, embeddings=False, first_layers=0):
    if embeddings:
        model.get_input_embeddings().weight.requires_grad_(False)
    for layer in list(decoder_layers(model))[:first_layers]:
        for p in layer.parameters():
            p.requires_grad_(False)


def trainable(model):
    return [p for p in model.parameters() if p.requires_grad]
