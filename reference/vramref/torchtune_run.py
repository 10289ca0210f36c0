"""torchtune's own stack on fake tensors: its model builders (TransformerDecoder with chunked
output), LoRA / QLoRA adapters as its builders make them, CEWithChunkedOutputLoss, and its
recipes' training loop (recipes/full_finetune_single_device.py, lora_finetune_single_device.py).

torchtune 0.6.1 (the latest on PyPI) imports `torchao.dtypes.nf4tensor`, which torchao 0.18 has
moved to `torchao.quantization.quantize_.workflows.nf4.nf4_tensor` (same NF4Tensor, to_nf4 and
linear_nf4); `import_torchtune` points the old name at the new module. `torchtune.training`'s
own `__init__` imports quantizer names torchao no longer has, so the harness does what
`training.set_activation_checkpointing` does with torch's function directly (it is a wrapper
around `apply_activation_checkpointing` with a ModuleWrapPolicy), and does not use
`OffloadActivations` (it needs CUDA streams; reference/README.md).
"""

from __future__ import annotations

import sys

import torch

# preset -> (torchtune module, full builder, LoRA builder, QLoRA builder or None)
BUILDERS = {
    "Llama-3.2-1B": ("torchtune.models.llama3_2", "llama3_2_1b", "lora_llama3_2_1b", "qlora_llama3_2_1b"),
    "Llama-3.1-8B": ("torchtune.models.llama3_1", "llama3_1_8b", "lora_llama3_1_8b", "qlora_llama3_1_8b"),
    "Mistral-7B-v0.1": ("torchtune.models.mistral", "mistral_7b", "lora_mistral_7b", "qlora_mistral_7b"),
    "Qwen2.5-7B": ("torchtune.models.qwen2_5", "qwen2_5_7b_base", "lora_qwen2_5_7b_base", None),
}
# vramplan's --lora-targets sets -> torchtune's builder arguments
ATTENTION_MODULES = {
    "q,v": ["q_proj", "v_proj"],
    "attention": ["q_proj", "k_proj", "v_proj", "output_proj"],
    "all-linear": ["q_proj", "k_proj", "v_proj", "output_proj"],
}
NUM_OUTPUT_CHUNKS = 8  # CEWithChunkedOutputLoss's default; the recipes set the model's to match


def import_torchtune():
    from torchao.quantization.quantize_.workflows.nf4 import nf4_tensor

    sys.modules.setdefault("torchao.dtypes.nf4tensor", nf4_tensor)
    import torchtune  # noqa: F401


def lora_module_names(targets):
    """The adapted linears as torchtune names them (its lora_attn_modules, and w1/w2/w3 with
    apply_lora_to_mlp)."""
    names = list(ATTENTION_MODULES[targets])
    if targets == "all-linear":
        names += ["w1", "w2", "w3"]
    return names


def build(sc):
    """The model as the recipe's builder makes it, on the meta device, in bf16 (the recipes build
    under `training.set_default_dtype(dtype)`, so adapters are bf16 too), cut to `num_layers`
    decoder layers, with the RoPE cache initialised (real tensors: its Llama 3.1 scaling reads
    values) and chunked output. The QLoRA builders (quantize_base=True) make every decoder
    linear NF4: LoRALinear where an adapter sits, FrozenNF4Linear elsewhere."""
    import importlib

    import_torchtune()
    module, full, lora, qlora = BUILDERS[sc.preset]
    builders = importlib.import_module(module)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("meta"):
            if sc.method == "full":
                model = getattr(builders, full)()
            else:
                model = getattr(builders, lora if sc.method == "lora" else qlora)(
                    lora_attn_modules=ATTENTION_MODULES[sc.lora_targets],
                    apply_lora_to_mlp=sc.lora_targets == "all-linear",
                    lora_rank=sc.lora_rank,
                    lora_alpha=2 * sc.lora_rank,
                )
    finally:
        torch.set_default_dtype(previous)
    model.layers = model.layers[: sc.num_layers]
    model.num_layers = sc.num_layers
    for m in model.modules():
        if hasattr(m, "rope_init"):
            m.rope_init()
    model.set_num_output_chunks(NUM_OUTPUT_CHUNKS)
    if sc.method in ("lora", "qlora"):
        from torchtune.modules.peft import get_adapter_params, set_trainable_params

        set_trainable_params(model, get_adapter_params(model))
    return model


def materialize_fake(model):
    """Meta-device module -> fake tensors on the CPU device (call under FakeTensorMode). The
    QLoRA builders' NF4 weights (LoRALinear and FrozenNF4Linear with quantize_base=True) are
    NF4Tensors on the meta device already: each is rebuilt from fake copies of its inner
    tensors (NF4Tensor's own empty_like keeps them on the meta device)."""

    def fake(t):
        if type(t) is torch.Tensor or not hasattr(t, "__tensor_flatten__"):
            return torch.empty_like(t, device="cpu")
        names, meta = t.__tensor_flatten__()
        inner = {name: fake(getattr(t, name)) for name in names}
        return type(t).__tensor_unflatten__(inner, meta, t.size(), t.stride())

    model._apply(fake)
    return model


def apply_recompute(model, mode):
    """The recipes' `enable_activation_checkpointing: True`:
    training.set_activation_checkpointing(model, auto_wrap_policy={TransformerSelfAttentionLayer}),
    i.e. torch's apply_activation_checkpointing (non-reentrant checkpoint_wrapper) per layer."""
    if mode == "none":
        return 0
    if mode != "full":
        raise ValueError(f"torchtune rows run recompute none or full, not {mode}")
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    from torchtune.modules import TransformerSelfAttentionLayer

    apply_activation_checkpointing(model, auto_wrap_policy=ModuleWrapPolicy({TransformerSelfAttentionLayer}))
    return len(model.layers)


def loss_and_labels(ids):
    """The recipes' loss (CEWithChunkedOutputLoss) and their shifted labels (the last position
    ignored)."""
    from torchtune.modules.loss import CEWithChunkedOutputLoss

    loss_fn = CEWithChunkedOutputLoss(num_output_chunks=NUM_OUTPUT_CHUNKS)
    ignore = torch.full((ids.shape[0], 1), loss_fn.ignore_index, dtype=ids.dtype)
    labels = torch.hstack((ids[..., 1:], ignore))
    return loss_fn, labels
