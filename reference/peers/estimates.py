"""Other projects' memory estimators on the reference scenarios.

For every row of data/measurements/pytorch_reference.json, each peer's own estimate of the
same scenario (bytes per GPU), or why it does not apply; and each peer's time per estimate,
measured in this run on this machine. Writes data/measurements/peer_estimates.json.

Peers:
- DeepSpeed `estimate_zero2_model_states_mem_needs` / `estimate_zero3_model_states_mem_needs`
  (deepspeed.runtime.zero): model states only (parameters, gradients, Adam states) under ZeRO-2 /
  ZeRO-3 with no offload; applied to the FSDP rows (ZeRO-3 for full shard, ZeRO-2 for
  reshard-after-forward off) and the DDP rows (ZeRO-2 over a world of one is plain DDP).
- accelerate `estimate-memory` (`accelerate.commands.estimate.estimate_training_usage`, the
  "Training using Adam" column: the largest of its model / gradients / optimizer / step terms)
  over the model's size from `calculate_maximum_sizes` of the same meta model; the CLI fetches the
  model from the Hub, which this machine cannot reach, so the meta model is built from the preset.
  Single-GPU AdamW rows in fp32 or bf16 mixed precision.
- llm-analysis `train()` (its `(weight+op_state+grad+act)_memory_per_gpu`), with the preset
  written in its ModelConfig format; dense models without pipeline interleaving.
- Megatron-core: its theoretical memory report (`report_theoretical_memory`) lives in Megatron-LM's
  `megatron/training/theoretical_memory_usage.py`, which the megatron-core wheel does not ship;
  listed as not applicable for every row.
"""

from __future__ import annotations

import io
import json
import logging
import sys
import tempfile
import time
import warnings
from contextlib import redirect_stdout
from importlib import metadata
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))

from vramref.models import build_config, build_model, decoder_layers, family_of  # noqa: E402

REFERENCE = ROOT / "data" / "measurements" / "pytorch_reference.json"
OUTPUT = ROOT / "data" / "measurements" / "peer_estimates.json"
MEGATRON_NOTE = (
    "megatron-core's wheel has no megatron/training/theoretical_memory_usage.py (Megatron-LM's"
    " training package); its report cannot run from the package"
)


class Timer:
    def __init__(self):
        self.total = {}
        self.count = {}

    def run(self, name, fn):
        t0 = time.perf_counter()
        out = fn()
        self.total[name] = self.total.get(name, 0.0) + time.perf_counter() - t0
        self.count[name] = self.count.get(name, 0) + 1
        return out

    def per_estimate_ms(self):
        return {k: round(1000 * self.total[k] / self.count[k], 3) for k in sorted(self.total)}


_model_cache = {}


def model_sizes(preset, num_layers):
    key = (preset, num_layers)
    if key not in _model_cache:
        model = build_model(build_config(preset, num_layers=num_layers), torch.float32, device="meta")
        total = sum(p.numel() for p in model.parameters())
        largest = max(sum(p.numel() for p in layer.parameters()) for layer in decoder_layers(model))
        largest = max(largest, model.get_input_embeddings().weight.numel())
        _model_cache[key] = (model, total, largest)
    return _model_cache[key]


def deepspeed_estimate(row, timer):
    s = row["settings"]
    if row["method"] != "full" or s["optimizer"] != "adamw":
        return None, "DeepSpeed's estimators assume full training with Adam"
    fsdp = s.get("fsdp")
    if fsdp not in ("full_shard", "shard_grad_op", "no_shard"):
        return None, "DeepSpeed's estimators cover ZeRO-2/3 data parallelism only"
    if s.get("tp", 1) > 1 or s.get("pp", 1) > 1:
        return None, "DeepSpeed's estimators have no tensor or pipeline parallelism"
    _, total, largest = model_sizes(s["model"], s["num_layers"])
    gpus = row["world"]
    if fsdp == "full_shard":
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

        _, gpu_mem, _ = timer.run(
            "deepspeed",
            lambda: estimate_zero3_model_states_mem_needs(
                total, largest, num_gpus_per_node=gpus, num_nodes=1, cpu_offload=False, cpu_offload_params=False
            ),
        )
        return int(gpu_mem), "ZeRO-3 model states (no offload)"
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    _, gpu_mem = timer.run(
        "deepspeed",
        lambda: estimate_zero2_model_states_mem_needs(total, num_gpus_per_node=gpus, num_nodes=1, cpu_offload=False),
    )
    return int(gpu_mem), "ZeRO-2 model states (no offload)"


def accelerate_estimate(row, timer):
    s = row["settings"]
    if row["world"] != 1 or row["method"] != "full" or s["optimizer"] != "adamw":
        return None, "accelerate's estimate covers full training with Adam on one GPU"
    if s["param_dtype"] == "fp32" and s.get("activation_dtype") == "fp32":
        precision = "float32"
    elif s["param_dtype"] == "fp32":
        precision = "bfloat16"  # its mixed precision: fp32 weights, bf16 compute
    else:
        return None, "accelerate models bf16 only as mixed precision over fp32 weights"
    from accelerate.commands.estimate import estimate_training_usage
    from accelerate.utils import calculate_maximum_sizes

    model, _, _ = model_sizes(s["model"], s["num_layers"])

    def estimate():
        total_size, _ = calculate_maximum_sizes(model)
        return max(estimate_training_usage(total_size, precision).values())

    return int(timer.run("accelerate", estimate)), f"estimate-memory {precision}, Training using Adam"


def llm_analysis_config(preset, num_layers, folder):
    config = build_config(preset, num_layers=num_layers)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    heads = text.num_attention_heads
    # GPT-2 names its FFN width n_inner, None meaning 4 h
    ffn = getattr(text, "intermediate_size", None) or getattr(text, "n_inner", None) or 4 * text.hidden_size
    entry = {
        "name": f"{preset}-L{num_layers}",
        "num_layers": num_layers,
        "n_head": heads,
        "hidden_dim": text.hidden_size,
        "vocab_size": text.vocab_size,
        "max_seq_len": getattr(text, "max_position_embeddings", 4096),
        "num_key_value_heads": getattr(text, "num_key_value_heads", heads) or heads,
        "ffn_embed_dim": ffn,
        # given with the FFN size, so its divisibility assertion (SwiGLU sizes are not
        # multiples of the hidden size) is not reached
        "expansion_ratio": ffn / text.hidden_size,
        "model_type": text.model_type,
    }
    path = Path(folder) / f"{entry['name']}.json"
    path.write_text(json.dumps(entry))
    return path


def llm_analysis_estimate(row, timer, folder):
    s = row["settings"]
    family = row["family"]
    if family in ("mixtral", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss"):
        return None, "MoE: llm-analysis's ModelConfig has no expert FFN size or shared experts"
    if s["optimizer"] != "adamw":
        return None, "llm-analysis models Adam's optimizer states"
    if row["method"] != "full" or s.get("vpp", 1) > 1 or s.get("fsdp") == "hybrid_shard":
        return None, "llm-analysis has no LoRA/QLoRA, interleaving or hybrid sharding"
    try:
        path = llm_analysis_config(s["model"], s["num_layers"], folder)
    except AssertionError as e:
        return None, f"llm-analysis refuses the config: {e}"
    from llm_analysis.analysis import train

    zero = {"full_shard": 3, "shard_grad_op": 2, "no_shard": 0}.get(s.get("fsdp"), 0)
    recompute = {"none": 0, "selective-op": 1, "full": 4}[s.get("recompute", "none")]
    dtype = "w32a32e32" if s["param_dtype"] == "fp32" and s.get("activation_dtype") == "fp32" else "w16a16e16"
    if dtype == "w32a32e32":
        return None, "llm-analysis ships no fp32 dtype config"

    def estimate():
        with redirect_stdout(io.StringIO()):
            return train(
                model_name=str(path),
                gpu_name="h100-sxm-80gb",
                dtype_name=dtype,
                batch_size_per_gpu=s["micro_batch"],
                global_batch_size=s["global_batch"],
                seq_len=s["seq_len"],
                activation_recomputation=recompute,
                ds_zero=zero,
                tp_size=s.get("tp", 1),
                pp_size=s.get("pp", 1),
                total_num_gpus=row["world"],
                flash_attn=True,
                mlp_gated_linear_units=family != "gpt2",
                # pure bf16: no fp32 master copy, AdamW's two states in bf16
                master_weights_dtype_bytes=2 if s["param_dtype"] == "bf16" else 4,
                other_op_bytes=4 if s["optimizer_dtype"] == "bf16" else 8,
                log_level="ERROR",
            )

    try:
        out = timer.run("llm-analysis", estimate)
    except Exception as e:  # its own refusal (e.g. does not fit its GPU), kept as the reason
        return None, f"llm-analysis refused: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return int(out["(weight+op_state+grad+act)_memory_per_gpu"]), f"dtype {dtype}, ZeRO {zero}"


def time_vramplan(binary, settings, folder, timer):
    import subprocess

    path = Path(folder) / "scenario.json"
    path.write_text(json.dumps(settings))
    cmd = [binary, "estimate", "--scenario", str(path), "--format", "json"]
    timer.run("vramplan (one process per estimate)", lambda: subprocess.run(cmd, capture_output=True, check=True))


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", default=str(REFERENCE))
    ap.add_argument("--output", default=str(OUTPUT))
    ap.add_argument(
        "--vramplan",
        default=None,
        help="a vramplan binary: also time `vramplan estimate --scenario` per row (a whole process"
        " each), for the time comparison; its estimates are not recorded here",
    )
    args = ap.parse_args(argv)
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    data = json.loads(Path(args.reference).read_text())
    timer = Timer()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for row in data["rows"]:
            entry = {"id": row["id"], "reference_bytes": row["peak_allocated_bytes"]}
            for name, fn in (
                ("deepspeed", deepspeed_estimate),
                ("accelerate", accelerate_estimate),
                ("llm_analysis", lambda r, t: llm_analysis_estimate(r, t, folder)),
            ):
                value, why = fn(row, timer)
                entry[name] = {"bytes": value, "note": why} if value is not None else {"not_applicable": why}
            entry["megatron_core"] = {"not_applicable": MEGATRON_NOTE}
            rows.append(entry)
            if args.vramplan:
                time_vramplan(args.vramplan, row["settings"], folder, timer)
    versions = {n: metadata.version(n) for n in ("deepspeed", "accelerate", "llm-analysis", "megatron-core")}
    out = {
        "command": "reference/peers/run.sh",
        "reference": "data/measurements/pytorch_reference.json",
        "versions": versions,
        "notes": [
            "bytes per GPU as each peer estimates the row's scenario; compare with reference_bytes"
            " (peak allocated of that rank). DeepSpeed counts model states only, no activations.",
            "time_per_estimate_ms: mean wall time of one estimate call in the run that wrote this"
            " file (machine-dependent; not part of the regenerated comparison)",
        ],
        "time_per_estimate_ms": timer.per_estimate_ms(),
        "rows": rows,
    }
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    applicable = {k: sum(1 for r in rows if "bytes" in r[k]) for k in ("deepspeed", "accelerate", "llm_analysis")}
    print(f"{len(rows)} rows; estimates per peer: {applicable}; ms per estimate: {timer.per_estimate_ms()}")


if __name__ == "__main__":
    main()
