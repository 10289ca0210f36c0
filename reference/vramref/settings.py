"""A scenario in vramplan's scenario-file vocabulary (`vramplan estimate --scenario FILE`).

The settings say what was run, not what would make vramplan agree: the dtypes the tensors had,
the optimizer, the layout as PyTorch applied it, and whose model code ran (`model_code:
transformers`: vramplan's conventions for Hugging Face transformers' modeling code, e.g. its
fp32 RMSNorm upcasts and F.cross_entropy on fp32 logits). What vramplan has no key for goes into
the notes.
"""

from __future__ import annotations

from . import finetune
from .models import preset_dict, text_config_dict
from .scenario import PRECISIONS, Scenario

OPTIMIZER_KEYS = {
    "adamw-foreach": "adamw",
    "adamw-fused": "adamw",
    "sgd": "sgd",
    "sgd-momentum": "sgd-momentum",
    "adafactor": "adafactor",
}
MOE_FAMILIES = {"mixtral", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss"}
MLA_FAMILIES = {"deepseek_v2", "deepseek_v3"}


def framework_of(sc: Scenario):
    """torchtitan for PyTorch-native distributed layouts (FSDP2 / DTensor TP / pipelining as
    torchtitan applies them); hf-trainer for autocast mixed precision (the Trainer's --bf16);
    none (explicit keys only) for plain PyTorch loops in one dtype."""
    if sc.layout != "single" or sc.model_code == "torchtitan":
        return "torchtitan"
    if sc.precision == "amp-bf16":
        return "hf-trainer"
    return None


def to_settings(sc: Scenario, family: str):
    """Returns (settings dict, notes list, in_target bool)."""
    notes = []
    in_target = True
    param_dtype, autocast, fsdp_mixed = PRECISIONS[sc.precision]
    s = {
        "model": sc.preset,
        "num_layers": sc.num_layers,
        "seq_len": sc.seq_len,
        "micro_batch": sc.micro_batch,
        "global_batch": sc.micro_batch * sc.microbatches * sc.dp,
        "gpus": sc.world,
        "dp": sc.dp,
        "tp": sc.tp,
        "pp": sc.pp,
        "flash_attention": True,
    }
    raw = text_config_dict(preset_dict(sc.preset))
    # the modules run in training mode: the config's dropout probabilities apply (GPT-2: 0.1)
    if any(raw.get(k) for k in ("attn_pdrop", "resid_pdrop", "embd_pdrop", "attention_dropout", "hidden_dropout")):
        s["dropout"] = True
    fw = framework_of(sc)
    if fw:
        s["framework"] = fw
    if sc.tp > 1:
        s["sequence_parallel"] = sc.sequence_parallel
        # the plan's LM head returns replicated logits (torchtitan without loss parallelism)
        s["loss_parallel"] = False
    if sc.pp > 1:
        s["vpp"] = sc.vpp
        s["schedule"] = sc.schedule
    if sc.cp > 1:
        s["cp"] = sc.cp
    # --- precision: the dtypes the tensors had
    if sc.precision == "fp32":
        s.update(param_dtype="fp32", grad_dtype="fp32", activation_dtype="fp32", optimizer_dtype="fp32")
    elif sc.precision == "bf16":
        s.update(param_dtype="bf16", grad_dtype="bf16", activation_dtype="bf16", optimizer_dtype="bf16")
    elif sc.precision == "amp-bf16":
        s.update(param_dtype="fp32", grad_dtype="fp32", activation_dtype="bf16", optimizer_dtype="fp32")
    elif sc.precision == "fsdp-mixed":
        s.update(param_dtype="fp32", grad_dtype="fp32", activation_dtype="bf16", optimizer_dtype="fp32")
        s.update(fsdp_mixed_precision=True, reduce_dtype="fp32")
    s.update(master_weights=False, fp32_grad_accum=False, lazy_gradients=True)
    torchtune = sc.model_code == "torchtune"
    if sc.method in ("lora", "qlora") and not torchtune:
        # PEFT keeps adapters in fp32 (autocast_adapter_dtype=True); so are their states
        s["optimizer_dtype"] = "fp32"
        s["grad_dtype"] = "fp32"
    # --- model depth as transformers builds it
    if raw.get("first_k_dense_replace", 0) >= sc.num_layers:
        notes.append(
            f"the harness lowers first_k_dense_replace to 1 so {sc.num_layers} layers hold an MoE layer;"
            " vramplan keeps the preset's dense layers and has no key for it"
        )
        in_target = False
    if raw.get("num_nextn_predict_layers"):
        notes.append(
            "transformers' class has no multi-token-prediction module; vramplan counts the preset's"
            " num_nextn_predict_layers and has no key to leave it out"
        )
        in_target = False
    # --- the model code: Hugging Face transformers' modeling classes ran; vramplan derives what
    # they keep (fp32 RMSNorm upcasts, unfused gated MLP, F.cross_entropy on fp32 logits) from
    # this key, not from numbers the harness would pick for it
    # torchtune rows ran torchtune's own modules and loss (torchtune_run.py): model_code
    # torchtune, whose chunked loss vramplan reads from the same key
    # torchtitan rows ran torchtitan's own model: its framework's conventions, no model_code key
    if sc.model_code != "torchtitan":
        s["model_code"] = "torchtune" if torchtune else "transformers"
    else:
        notes.append(
            "torchtitan 0.3.0's own model (fused wqkv, varlen attention: flex cannot run a backward on"
            " the CPU), FSDP2 wrapping and uncompiled CrossEntropyLoss; F.rms_norm as CUDA's fused kernel"
        )
    # --- optimizer
    s["optimizer"] = OPTIMIZER_KEYS[sc.optimizer]
    if sc.optimizer in ("adamw-foreach", "adafactor"):
        # torch's foreach implementations (the grid runs Adafactor with foreach=True): AdamW's
        # sqrt(v) temporary, Adafactor's row_var @ col_var estimates of every matrix at once
        s["optimizer_foreach_temporaries"] = True
    # --- recompute
    if sc.recompute == "selective-op" and (family in MOE_FAMILIES or family in MLA_FAMILIES):
        # vramplan refuses selective-op for MoE and MLA layers: the row keeps what ran in its
        # harness block and note, the settings leave recompute out, and it is out of target
        notes.append("op-level selective recompute on an MoE/MLA model: vramplan has no such setting")
        in_target = False
    elif sc.recompute != "none":
        s["recompute"] = sc.recompute
        if sc.recompute == "full" and sc.recompute_every > 1:
            s["recompute_layers"] = sc.num_layers // sc.pp // sc.vpp // sc.recompute_every
            notes.append(f"every {sc.recompute_every}-th layer checkpointed (torchtitan selective_ac_option)")
    # --- layout
    if sc.layout in ("fsdp", "fsdp+tp"):
        s["fsdp"] = "full_shard" if sc.reshard_after_forward else "shard_grad_op"
    elif sc.layout == "hsdp":
        s["fsdp"] = "hybrid_shard"
        s["fsdp_shard_group"] = 2
    if sc.model_code == "torchtitan":
        # apply_fsdp_to_decoder runs on one GPU too (FSDP over one rank: the bf16 unsharded
        # copies exist); the embedding and norm + LM head are units of their own
        s["fsdp"] = "full_shard" if sc.reshard_after_forward else "shard_grad_op"
    elif sc.layout in ("fsdp", "fsdp+tp", "hsdp"):
        # layouts.apply_fsdp wraps the decoder layers and the root only: the embedding, final
        # norm and LM head are the root's unit (torchtitan wraps them as units of their own)
        s["fsdp_root_unit"] = True
    elif sc.layout == "ddp":
        s["fsdp"] = "no_shard"
        notes.append(
            "data parallel with PyTorch's FSDP2-based replicate (nn.parallel.DDP's C++ reducer cannot run"
            " on fake tensors): unsharded parameters are all-gathered into a second copy; no vramplan key"
        )
        in_target = False
    elif sc.layout == "pp":
        s["fsdp"] = "none"
    elif sc.layout in ("tp", "cp"):
        s["fsdp"] = "none"
    # --- fine-tuning
    if sc.method in ("lora", "qlora"):
        s["finetune"] = sc.method
        s["lora_rank"] = sc.lora_rank
        # the module names PEFT was given (finetune.target_modules), as a user's adapter config
        # holds them: vramplan matches them by name as PEFT does (q_proj, v_proj on MLA: q only)
        s["lora_targets"] = (
            sc.lora_targets if sc.lora_targets == "all-linear" else ",".join(finetune.target_modules(sc.lora_targets))
        )
        s["adapter_dtype"] = "fp32"
        if torchtune:
            from .torchtune_run import lora_module_names

            # torchtune's builders' module names, as a recipe's lora_attn_modules (and
            # apply_lora_to_mlp) give them; the adapters are built in the recipe's bf16
            s["lora_targets"] = ",".join(lora_module_names(sc.lora_targets))
            s["adapter_dtype"] = "bf16"
        if sc.method == "qlora" and torchtune:
            notes.append("QLoRA as torchtune's qlora_* builders make it: LoRALinear(quantize_base=True), torchao NF4")
        elif sc.method == "qlora":
            notes.append("QLoRA base: torchao NF4 (torchtune), adapters trained with torch AdamW, not paged 8-bit")
            if family == "gpt2":
                notes.append("GPT-2's Conv1D projections are not nn.Linear: they stay bf16, not NF4")
                in_target = False
        if family in MOE_FAMILIES:
            notes.append(
                "transformers keeps MoE experts as 3-D parameters, not nn.Linear: PEFT wraps them"
                " (ParamWrapper) only on the types it converts (Mixtral and Qwen2-MoE style),"
                " elsewhere LoRA adds no expert adapters; QLoRA leaves the experts bf16"
            )
            if sc.method == "qlora":
                in_target = False  # vramplan's QLoRA quantizes every base weight, experts included
    elif sc.method == "frozen":
        s["freeze_embeddings"] = sc.freeze_embeddings
        s["freeze_first_layers"] = sc.freeze_first_layers
    if autocast:
        notes.append("autocast runs on CPU tensors: its op lists differ from CUDA's only for ops that keep fp32 here")
    return s, notes, in_target
