"""Hugging Face model classes built from vramplan's presets (data/models/<preset>.json).

The preset file is the model's own `config.json`; transformers' `AutoConfig.for_model` reads it
as the Hub would, so the module tree, shapes and forward code are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PRESET_DIR = REPO_ROOT / "data" / "models"

# model_type of the preset -> family name used in the dataset
FAMILIES = {
    "llama": "llama",
    "mistral": "mistral",
    "mixtral": "mixtral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "deepseek_v2": "deepseek_v2",
    "deepseek_v3": "deepseek_v3",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "phi3": "phi3",
    "gpt2": "gpt2",
    "gpt_oss": "gpt_oss",
    "olmo2": "olmo2",
}

_LAYER_KEYS = ("num_hidden_layers", "n_layer")


def preset_names():
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def preset_dict(preset):
    return json.loads((PRESET_DIR / f"{preset}.json").read_text())


def text_config_dict(raw):
    """Gemma 3's multimodal file nests the language model's config under text_config."""
    if raw.get("model_type") == "gemma3" and "text_config" in raw:
        text = dict(raw["text_config"])
        text.setdefault("model_type", "gemma3_text")
        text["model_type"] = "gemma3_text"
        return text
    return raw


def family_of(preset):
    return FAMILIES[text_config_dict(preset_dict(preset))["model_type"]]


def num_layers_of(raw):
    for key in _LAYER_KEYS:
        if key in raw:
            return raw[key]
    raise KeyError("no layer count in config")


def build_config(preset, num_layers=None, attn_implementation=None):
    from transformers import AutoConfig

    raw = text_config_dict(preset_dict(preset))
    raw = {k: v for k, v in raw.items() if k not in ("transformers_version", "torch_dtype", "dtype")}
    if num_layers is not None:
        for key in _LAYER_KEYS:
            if key in raw:
                raw[key] = num_layers
        _shorten_layer_lists(raw, num_layers)
    model_type = raw.pop("model_type")
    raw.pop("quantization_config", None)  # gpt-oss ships MXFP4 experts; we train in bf16
    config = AutoConfig.for_model(model_type, **raw)
    config.use_cache = False
    if attn_implementation:
        config._attn_implementation = attn_implementation
    return config


def _shorten_layer_lists(raw, n):
    """Per-layer lists (layer_types, mlp_only_layers...) must match a reduced depth."""
    if isinstance(raw.get("layer_types"), list):
        raw["layer_types"] = raw["layer_types"][:n]
    # DeepSeek's first_k_dense_replace: keep one dense layer when the model has any, so a
    # reduced model still holds both kinds
    if "first_k_dense_replace" in raw and raw["first_k_dense_replace"] >= n:
        raw["first_k_dense_replace"] = min(raw["first_k_dense_replace"], 1)


def build_model(config, dtype, device="cpu"):
    """The causal-LM class of `config`, with weights of `dtype` on `device` (fake under the caller's FakeTensorMode)."""
    from transformers import AutoModelForCausalLM

    import torch  # here, so that reading presets needs no PyTorch (gpu_dataset.py)

    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.train()
    return model


def decoder_layers(model):
    base = model.base_model  # LlamaModel, GPT2Model...: the decoder under the LM head
    for name in ("layers", "h"):
        if hasattr(base, name):
            return getattr(base, name)
    raise AttributeError("no decoder layer list")


def parameter_count(preset):
    """Total and per-module parameter counts of the real class, built on the meta device."""
    config = build_config(preset)
    import torch

    model = build_model(config, torch.bfloat16, device="meta")
    counts = {"preset": preset, "model_type": config.model_type, "total": 0}
    embed = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    tied = head is not None and head.weight is embed
    counts["total"] = sum(p.numel() for p in model.parameters())  # parameters() dedups tied weights
    counts["embedding"] = embed.numel()
    counts["lm_head"] = 0 if tied or head is None else head.weight.numel()
    counts["tied_embeddings"] = bool(tied)
    layers = decoder_layers(model)
    per_layer = [sum(p.numel() for p in layer.parameters()) for layer in layers]
    counts["num_layers"] = len(per_layer)
    counts["per_layer"] = _run_lengths(per_layer)
    counts["layer_modules"] = _module_counts(layers[-1])
    counts["other"] = counts["total"] - counts["embedding"] - counts["lm_head"] - sum(per_layer)
    if len(set(per_layer)) > 1:
        counts["first_layer_modules"] = _module_counts(layers[0])
    return counts


def _run_lengths(values):
    """[a, a, b] -> [{"params": a, "layers": 2}, {"params": b, "layers": 1}]."""
    out = []
    for v in values:
        if out and out[-1]["params"] == v:
            out[-1]["layers"] += 1
        else:
            out.append({"params": v, "layers": 1})
    return out


def _module_counts(layer):
    counts = {}
    for name, child in layer.named_children():
        n = sum(p.numel() for p in child.parameters())
        if n:
            counts[name] = n
    direct = sum(p.numel() for p in layer.parameters(recurse=False))
    if direct:
        counts["(direct)"] = direct
    return counts


def materialize_fake(model, device="cpu"):
    """Meta-device module -> the same module on fake tensors of `device`; call under FakeTensorMode.

    Modules are built (and PEFT adapters added) on the meta device first, because converting
    parameters that are already fake (`Module.to`) needs `swap_tensors`, which fake tensors
    refuse. Tied weights are tied again afterwards."""
    import torch

    model._apply(lambda t: torch.empty_like(t, device=device))
    if getattr(model.config, "tie_word_embeddings", False) or _ties(model):
        model.get_output_embeddings().weight = model.get_input_embeddings().weight
    return model


def _ties(model):
    text = getattr(model.config, "get_text_config", lambda: model.config)()
    return bool(getattr(text, "tie_word_embeddings", False))
