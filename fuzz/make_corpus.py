#!/usr/bin/env python3
"""Seeds and dictionaries for the fuzz targets (fuzz/fuzz_main.cc), drawn from the repository.

usage: fuzz/make_corpus.py SOURCE_DIR OUT_DIR

Writes OUT_DIR/<target>/seed-* (inputs the target accepts or nearly accepts: presets, import
fixtures, request bodies like the tests') and OUT_DIR/<target>.dict (libFuzzer dictionaries of
the keys each reader knows: the option registry's keys, config.json fields, importers' flags).
Regression inputs (fuzz/regressions/<target>/) are replayed by scripts/fuzz.sh, not seeded here.
"""
import glob
import hashlib
import json
import os
import re
import struct
import sys

IMPORT_FIXTURES = {
    "megatron": ["megatron/*.sh"],
    "megatron_yaml": ["megatron/moe_functional_test.yaml"],
    "megatron_recipe": ["megatron/bridge_deepseek_v3_style.yaml"],
    "megatron_overrides": [],
    "torchtitan": ["torchtitan/*.toml"],
    "torchtitan_command": [],
    "vllm": ["vllm/*"],
    "sglang": ["sglang/*"],
    "torchtune": ["torchtune/*"],
    "axolotl": ["axolotl/*"],
    "accelerate": ["accelerate/*"],
    "deepspeed": ["deepspeed/*.json", "deepspeed/*.sh"],
    "hf_trainer": ["hf/*.yaml", "hf/*.txt"],
}
# Inputs written here for the formats without a fixture file (from the importers' tests).
EXTRA_IMPORTS = {
    "megatron_overrides": [
        "model.tensor_model_parallel_size=4 model.pipeline_model_parallel_size=2 "
        "train.global_batch_size=512 train.micro_batch_size=1 model.seq_length=4096",
    ],
    "torchtitan_command": [
        "torchrun --nproc_per_node 8 -m torchtitan.train --model.name llama3 --model.flavor 8B "
        "--parallelism.tensor_parallel_degree 2 --training.local_batch_size 2 "
        "--training.seq_len 8192 --activation_checkpoint.mode selective",
    ],
    "megatron": [
        "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
        "--micro-batch-size 1 --global-batch-size 128 --tensor-model-parallel-size 2 --bf16",
    ],
}


def write(out, target, name, data):
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    digest = hashlib.sha1(data).hexdigest()[:12]
    with open(os.path.join(folder, f"{name}-{digest}"), "wb") as f:
        f.write(data)


def write_dict(out, target, words):
    with open(os.path.join(out, f"{target}.dict"), "w") as f:
        for word in sorted(set(words)):
            if 0 < len(word) <= 64 and all(32 <= ord(c) < 127 for c in word):
                f.write('"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"\n')


def json_keys(value, keys):
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            json_keys(v, keys)
    elif isinstance(value, list):
        for v in value:
            json_keys(v, keys)


def literals(paths, pattern=r'"([A-Za-z_][A-Za-z0-9_.\-]{1,48})"'):
    words = set()
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            words.update(re.findall(pattern, f.read()))
    return words


def main():
    src, out = sys.argv[1], sys.argv[2]
    presets = sorted(glob.glob(os.path.join(src, "data/models/*.json")))
    configs = presets + sorted(
        glob.glob(os.path.join(src, "tests/hub/repos/**/config.json"), recursive=True)
    )
    option_keys = literals([os.path.join(src, "src/io/options.cc")], r'\{"([a-z_0-9]+)", K::')
    config_keys = set()
    for path in configs:
        with open(path) as f:
            text = f.read()
        write(out, "hf_config", "preset", text)
        json_keys(json.loads(text), config_keys)
    config_keys |= literals(glob.glob(os.path.join(src, "src/model/*.cc")))
    write_dict(out, "hf_config", config_keys | {"null", "true", "false", "1e308", "-1"})

    names = [os.path.basename(p)[:-5] for p in presets]
    small = names[:6]
    bodies = []
    for name in names:
        bodies.append({"model": name})
    bodies += [
        {
            "model": "Llama-3.1-8B",
            "tp": 2,
            "pp": 2,
            "dp": 2,
            "micro_batch": 2,
            "seq_len": 4096,
            "global_batch": 64,
            "zero": "1",
            "recompute": "selective",
            "gpu": "h100-80gb",
        },
        {"model": "Mixtral-8x7B-v0.1", "ep": 8, "tp": 1, "dp": 8, "framework": "megatron"},
        {"model": "Qwen3-0.6B", "finetune": "lora", "lora_rank": 16, "gpu_memory_gib": 24},
        {"model": "Llama-3.1-8B", "framework": "fsdp", "fsdp": "full_shard", "dp": 8},
        {"model_config": json.load(open(presets[0])), "tp": 1},
    ]
    for fixture in sorted(glob.glob(os.path.join(src, "tests/fixtures/imports/torchtitan/*"))):
        bodies.append({"from": open(fixture).read(), "from_format": "torchtitan"})
    for body in bodies:
        write(out, "api_estimate", "body", json.dumps(body))
        write(out, "roofline", "body", json.dumps(body))
    infer = [{"model": n} for n in names] + [
        {"model": "Llama-3.1-8B", "tp": 2, "max_model_len": 8192, "engine": "vllm"},
        {"model": "Qwen3-0.6B", "engine": "sglang", "quantization": "fp8", "batch": 32},
    ]
    for fixture in sorted(glob.glob(os.path.join(src, "tests/fixtures/imports/vllm/*"))):
        infer.append({"from": open(fixture).read()})
    for body in infer:
        write(out, "api_infer", "body", json.dumps(body))
    for name in small:
        write(
            out,
            "api_plan",
            "body",
            json.dumps({"model": name, "gpus": 8, "global_batch": 64, "seq_len": 2048}),
        )
    write(
        out,
        "api_plan",
        "body",
        json.dumps(
            {"model": "Mixtral-8x7B-v0.1", "gpus": 16, "global_batch": 128, "tp": 2, "top": 3}
        ),
    )
    for name in small:
        write(
            out,
            "api_sweep",
            "body",
            json.dumps({"scenario": {"model": name}, "vary": "micro_batch", "values": [1, 2, 4]}),
        )
        write(
            out,
            "api_sweep",
            "body",
            json.dumps(
                {
                    "scenario": {"model": name, "tp": 2},
                    "vary": "seq_len",
                    "from": 1024,
                    "to": 8192,
                    "step": 1024,
                }
            ),
        )
        write(
            out,
            "api_sweep",
            "body",
            json.dumps(
                {
                    "scenario": {"model": name},
                    "vary": "global_batch",
                    "from": 8,
                    "to": 512,
                    "multiply": 2,
                }
            ),
        )
    api_words = option_keys | {
        "from",
        "from_format",
        "model_config",
        "emit",
        "vary",
        "values",
        "scenario",
        "step",
        "multiply",
        "to",
        "gpus",
        "threads",
        "top",
    }
    api_words |= literals(glob.glob(os.path.join(src, "src/server/*.cc")))
    api_words |= set(names) | {"null", "true", "false"}
    for target in ("api_estimate", "api_infer", "api_plan", "api_sweep", "roofline"):
        write_dict(out, target, api_words)

    # Hub answers: byte 0 picks the reader (hub_fuzz.cc): 0 file, 1 header, 2 index, 3 model id.
    header = json.dumps(
        {
            "__metadata__": {"format": "pt"},
            "model.embed_tokens.weight": {
                "dtype": "BF16",
                "shape": [128, 64],
                "data_offsets": [0, 16384],
            },
            "lm_head.weight": {"dtype": "F32", "shape": [64], "data_offsets": [16384, 16640]},
        }
    )
    write(out, "hub", "file", b"\0" + struct.pack("<Q", len(header)) + header.encode())
    write(out, "hub", "header", b"\1" + header.encode())
    index = json.dumps(
        {
            "metadata": {"total_size": 16640},
            "weight_map": {
                "a": "model-00001-of-00002.safetensors",
                "b": "model-00002-of-00002.safetensors",
            },
        }
    )
    write(out, "hub", "index", b"\2" + index.encode())
    for ref in ("meta-llama/Llama-3.1-8B", "org/name@main", "Qwen/Qwen3-0.6B@" + "a" * 40):
        write(out, "hub", "id", b"\3" + ref.encode())
    write_dict(
        out,
        "hub",
        {
            "dtype",
            "shape",
            "data_offsets",
            "__metadata__",
            "metadata",
            "total_size",
            "weight_map",
            "BF16",
            "F16",
            "F32",
            "F8_E4M3",
            "I8",
            "U8",
            "I64",
            "BOOL",
            ".safetensors",
            "@",
            "/",
            "..",
        },
    )

    fixtures = os.path.join(src, "tests/fixtures/imports")
    for target, patterns in IMPORT_FIXTURES.items():
        for pattern in patterns:
            for path in sorted(glob.glob(os.path.join(fixtures, pattern))):
                if path.endswith(".md"):
                    continue
                with open(path, "rb") as f:
                    write(out, f"import_{target}", "fixture", f.read())
        for text in EXTRA_IMPORTS.get(target, []):
            write(out, f"import_{target}", "example", text)
    for path in sorted(glob.glob(os.path.join(src, "data/measurements/serving_commands/*.txt"))):
        engine = "sglang" if "sglang" in os.path.basename(path) else "vllm"
        with open(path, "rb") as f:
            write(out, f"import_{engine}", "measured", f.read())
    interop = glob.glob(os.path.join(src, "src/interop/**/*.cc"), recursive=True)
    import_words = literals(interop) | literals(interop, r'"(--[a-z0-9\-]{2,48})"')
    for target in IMPORT_FIXTURES:
        write_dict(out, f"import_{target}", import_words | option_keys)


if __name__ == "__main__":
    main()
