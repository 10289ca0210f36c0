#!/usr/bin/env bash
# `vramplan infer` and `vramplan validate --serving` through the real binary: the four output
# formats, the stable JSON keys, KV cache arithmetic for GQA/MLA/sliding models, weight formats,
# vLLM and SGLang capacity, scenario files, invariants of the numbers, and every bad input
# (exit 2, one stderr line naming the flag, the value and what is accepted).
#
# usage: bash tests/cli/infer_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LLAMA=(infer --model Llama-3.1-8B --context 8192)

keep() { cp "$RUN_OUT_FILE" "$TEST_TMP/$1.json"; }

# compare_json WHAT PYTHON_EXPRESSION FILE...: the expression over a, b, ... (the files' JSON).
compare_json() {
  local what="$1" expr="$2"
  shift 2
  local result
  if result=$(python3 -c '
import json, sys
docs = [json.load(open(p, encoding="utf-8")) for p in sys.argv[2:]]
try:
    value = eval("(" + sys.argv[1] + "\n)", dict(zip("abcdefgh", docs)))
except Exception as e:
    print(f"{type(e).__name__}: {e}")
    sys.exit(1)
if not value:
    print("false")
    sys.exit(1)
' "$expr" "$@" 2>&1); then
    pass
  else
    fail "$what: $expr" "true" "$result"
  fi
}

row() { echo "sum(r['bytes'] for r in d['rows'] if r['component'].startswith('$1'))"; }

# ---------------------------------------------------------------------------------------------
case_name "help"
run infer --help
expect_exit 0
for flag in --model --tp --pp --ep --gpu --context --batch --weight-dtype --kv-dtype \
  --gpu-memory-utilization --mem-fraction-static --format --attention-dtype --experts-dtype; do
  expect_stdout_contains "$flag"
done

case_name "default table"
run "${LLAMA[@]}"
expect_exit 0
expect_stderr_empty
expect_stdout_contains "serving memory per GPU"
expect_stdout_contains "KV cache"
expect_stdout_contains "activation peak"
expect_stdout_contains "131072 B per token"
expect_stdout_contains "h100-80gb"
expect_no_nonfinite

case_name "JSON keys"
run "${LLAMA[@]}" --format json
expect_exit 0
expect_json_sane
expect_json 'd["kv_bytes_per_token"] == 131072'
expect_json 'd["kv_bytes_per_sequence"] == 131072 * 8192'
expect_json 'd["weights_bytes"] == 2 * 8030261248 + 131072 * 128 * 2'
expect_json 'd["max_kv_tokens"] is None and d["max_sequences"] is None and d["capacity"] is None'
expect_json 'all(set(r) == {"component", "bytes", "counts_toward", "formula", "source"} for r in d["rows"])'
expect_json 'all(r["formula"] and r["source"] for r in d["rows"])'
expect_json 'd["device_bytes"] == sum(r["bytes"] for r in d["rows"])'
expect_json 'd["allocated_bytes"] == sum(r["bytes"] for r in d["rows"] if r["counts_toward"] == "allocated")'
expect_json 'd["fit"][0]["gpu"] == "h100-80gb" and d["fit"][0]["verdict"] == "fits"'
keep llama

case_name "vLLM capacity at 0.9"
run "${LLAMA[@]}" --gpu-memory-utilization 0.9 --gpu-memory-gib 79.18 --format json
expect_exit 0
expect_json_sane
expect_json 'd["max_kv_tokens"] > 0 and d["max_kv_tokens"] % 16 == 0'
expect_json 'd["max_sequences"] == d["max_kv_tokens"] // 8192'
expect_json 'd["capacity"]["engine"] == "vllm"'
expect_json 'abs(d["capacity"]["kv_budget_bytes"] / 2**30 - 51.38) < 0.5'  # vLLM V1 logs 51.38
expect_json 'd["capacity"]["max_kv_tokens"] == d["capacity"]["kv_budget_bytes"] // (16 * 131072) * 16'
keep at90
run "${LLAMA[@]}" --gpu-memory-utilization 0.8 --gpu-memory-gib 79.18 --format json
keep at80
compare_json "a lower utilization leaves fewer tokens" 'b["max_kv_tokens"] < a["max_kv_tokens"]' \
  "$TEST_TMP/at90.json" "$TEST_TMP/at80.json"
run "${LLAMA[@]}" --gpu-memory-utilization 0.9
expect_exit 0
expect_stdout_contains "capacity · vllm at 0.90"
expect_stdout_contains "KV tokens"

case_name "vLLM's Llama-3-8B log (PR 10511)"
# total 79.22 GiB, V0 profile of 256 sequences; weights 14.96 GiB as vLLM logs them.
run infer --model Llama-3.1-8B --context 8192 --gpu-memory-gib 79.22 \
  --gpu-memory-utilization 0.9 --max-num-seqs 256 --non-torch-gib 1.79 --format json
expect_json 'abs(d["capacity"]["requested_bytes"] / 2**30 - 71.29) < 0.01'
expect_json 'abs(d["capacity"]["kv_budget_bytes"] / 2**30 - 53.29) < 0.1'

case_name "SGLang capacity"
run "${LLAMA[@]}" --mem-fraction-static 0.88 --format json
expect_exit 0
expect_json 'd["capacity"]["engine"] == "sglang" and d["scenario"]["block_size"] == 1'
expect_json 'd["max_kv_tokens"] == d["capacity"]["kv_budget_bytes"] // 131072'

case_name "no room for the KV cache"
run infer --model Qwen3-32B --gpu-memory-utilization 0.5 --format json
expect_exit 0
expect_json_sane
expect_json 'd["max_kv_tokens"] == 0 and d["capacity"]["shortfall_bytes"] > 0'
expect_json 'any("No available memory" in w for w in d["warnings"])'

case_name "tensor parallel and KV heads"
run "${LLAMA[@]}" --tp 2 --format json
expect_json 'd["kv_bytes_per_token"] == 65536'
expect_json 'any(r["component"] == "NCCL buffers" for r in d["rows"])'
keep tp2
compare_json "tp 2 halves the linear weights" \
  'abs(a["weights_bytes"] / b["weights_bytes"] - 2) < 0.01' "$TEST_TMP/llama.json" "$TEST_TMP/tp2.json"

case_name "pipeline ranks"
run "${LLAMA[@]}" --pp 3 --format json
expect_exit 0
expect_json 'len(d["ranks"]) == 3 and [r["layers"] for r in d["ranks"]] == [11, 11, 10]'

case_name "KV dtypes"
run "${LLAMA[@]}" --kv-dtype fp8 --format json
expect_json 'd["kv_bytes_per_token"] == 65536'
run "${LLAMA[@]}" --kv-dtype int4 --format json
expect_json 'd["kv_bytes_per_token"] == 2 * 32 * 8 * (64 + 4)'

case_name "MLA latent cache"
run infer --model DeepSeek-V3 --context 4096 --tp 8 --format json
expect_exit 0
expect_json 'd["kv_bytes_per_token"] == 70272'
expect_json 'd["scenario"]["weights"]["experts"]["format"] == "fp8-block"'
expect_json 'd["scenario"]["weights"]["embedding"]["format"] == "bf16"'

case_name "sliding windows"
run infer --model gemma-2-9b --context 8192 --format json
expect_json 'd["kv_bytes_per_sequence"] == 8192 * (21 * 8192 + 21 * 4096)'
run infer --model gpt-oss-20b --context 8192 --format json
expect_json 'd["kv_bytes_per_sequence"] == 2048 * (12 * 8192 + 12 * 128)'
expect_json 'any(r["component"] == "expert weights (mxfp4)" for r in d["rows"])'
expect_json 'any(r["component"] == "attention weights (bf16)" for r in d["rows"])'

case_name "weight formats"
run "${LLAMA[@]}" --weight-dtype int4 --format json
expect_exit 0
expect_json "$(row 'MLP weights (int4)') > 0"
expect_json "$(row 'embedding (bf16)') == 128256 * 4096 * 2"
keep int4
compare_json "int4 MLP weights are 4.156/16 of bf16 (AWQ/GPTQ group 128)" \
  'abs(sum(r["bytes"] for r in b["rows"] if r["component"].startswith("MLP")) / sum(r["bytes"] for r in a["rows"] if r["component"].startswith("MLP")) - 4.15625 / 16) < 1e-6' \
  "$TEST_TMP/llama.json" "$TEST_TMP/int4.json"
run "${LLAMA[@]}" --weight-dtype nf4 --format json
expect_json 'abs(d["scenario"]["weights"]["mlp"]["bits_per_weight"] - 4.127) < 0.001'
run "${LLAMA[@]}" --weight-dtype fp8 --lm-head-dtype fp8-channel --embedding-dtype fp16 --format json
expect_json 'd["scenario"]["weights"]["lm_head"]["format"] == "fp8-channel"'
expect_json 'd["scenario"]["weights"]["embedding"]["format"] == "fp16"'
run infer --model gpt-oss-20b --weight-dtype bf16 --format json
expect_json 'd["scenario"]["weights"]["experts"]["format"] == "bf16"'

case_name "expert parallelism"
run infer --model Qwen3-30B-A3B --context 4096 --tp 4 --format json
keep tp4
run infer --model Qwen3-30B-A3B --context 4096 --tp 4 --dp 2 --ep 8 --format json
expect_exit 0
keep ep8
compare_json "EP over tp·dp halves the experts per GPU" \
  'abs(sum(r["bytes"] for r in a["rows"] if r["component"].startswith("expert")) / sum(r["bytes"] for r in b["rows"] if r["component"].startswith("expert")) - 2) < 0.01' \
  "$TEST_TMP/tp4.json" "$TEST_TMP/ep8.json"

case_name "more sequences never need less memory"
run "${LLAMA[@]}" --batch 4 --format json
keep batch4
compare_json "batch 4 adds 3 sequences of KV" \
  'b["device_bytes"] - a["device_bytes"] == 3 * a["kv_bytes_per_sequence"]' \
  "$TEST_TMP/llama.json" "$TEST_TMP/batch4.json"
run "${LLAMA[@]}" --batch 2000 --format json
expect_json 'any("max_num_seqs" in w for w in d["warnings"])'

case_name "eager mode drops the CUDA graph row"
run "${LLAMA[@]}" --no-cuda-graphs --format json
expect_json 'not any(r["component"] == "CUDA graphs" for r in d["rows"])'

case_name "other formats"
run "${LLAMA[@]}" --format csv
expect_exit 0
expect_stdout_contains "component,bytes,gib,counts_toward,formula,source"
expect_stdout_contains "KV cache,1073741824"
run "${LLAMA[@]}" --format markdown --gpu-memory-utilization 0.9
expect_exit 0
expect_stdout_contains "| component | GiB | bytes | counts toward | formula | source |"
expect_stdout_contains "## Capacity (vllm at 0.90)"

case_name "scenario file"
printf '{"model": "Llama-3.1-8B", "context": 8192, "kv_dtype": "fp8", "tp": 2}' >"$TEST_TMP/serve.json"
run infer --scenario "$TEST_TMP/serve.json" --format json
expect_exit 0
expect_json 'd["kv_bytes_per_token"] == 32768'
run infer --scenario "$TEST_TMP/serve.json" --tp 1 --format json
expect_json 'd["kv_bytes_per_token"] == 65536'

case_name "custom architecture"
run infer --hidden-size 4096 --num-layers 32 --num-heads 32 --num-kv-heads 8 --ffn-size 14336 \
  --vocab-size 128256 --context 4096 --format json
expect_exit 0
expect_json 'd["kv_bytes_per_token"] == 131072'

case_name "every preset"
while read -r preset; do
  run infer --model "$preset" --context 4096 --gpu-memory-utilization 0.9 --format json
  expect_exit 0
  expect_json_sane
done < <(ls "$VRAMPLAN_SOURCE_DIR/data/models" | sed 's/\.json$//')

case_name "validate --serving"
run validate --serving
expect_exit 0
expect_stdout_contains "vllm-pr10511-llama3-8b-tp1"
expect_stdout_contains "median|e|"
run validate --serving --format json
expect_exit 0
expect_json_sane
expect_json 'any(r["id"] == "vllm-pr10511-llama3-8b-tp1" and r["quantity"] == "weights" and abs(r["predicted"] - 14.96) < 0.005 for r in d["rows"])'
expect_json 'all(r["source"].startswith("https://") for r in d["rows"])'

# ---------------------------------------------------------------------------------------------
# Bad input: exit 2, nothing on stdout, one line naming the flag, the value and what is accepted.
bad_input() {
  local spec="$1"
  shift
  case_name "$spec <- infer$(printf " %q" "$@")"
  run infer "$@"
  expect_exit 2
  expect_stdout_empty
  expect_stderr_lines 1
  expect_stderr_contains "vramplan: error: $spec"
  expect_stderr_contains "accepted"
}
M=(--model Llama-3.1-8B)
bad_input '--kv-dtype = int3' "${M[@]}" --kv-dtype int3
bad_input '--weight-dtype = q4_k' "${M[@]}" --weight-dtype q4_k
bad_input '--attention-dtype = int2' "${M[@]}" --attention-dtype int2
bad_input '--experts-dtype = fp6' --model Mixtral-8x7B-v0.1 --experts-dtype fp6
bad_input '--tp = 3' "${M[@]}" --tp 3
bad_input '--tp = 0' "${M[@]}" --tp 0
bad_input '--tp = 12' "${M[@]}" --tp 12 --num-heads 48     # neither divides nor is divided by 8
bad_input '--ep = 2' "${M[@]}" --ep 2
bad_input '--ep = 3' --model Mixtral-8x7B-v0.1 --ep 3 --tp 3 --num-heads 30 --num-kv-heads 6
bad_input '--ep = 4' --model Mixtral-8x7B-v0.1 --ep 4 --tp 2
bad_input '--pp = 1000' "${M[@]}" --pp 1000
bad_input '--dp = 0' "${M[@]}" --dp 0
bad_input '--context = 0' "${M[@]}" --context 0
bad_input '--context = 99999999999' "${M[@]}" --context 99999999999
bad_input '--context = abc' "${M[@]}" --context abc
bad_input '--batch = -1' "${M[@]}" --batch -1
bad_input '--block-size = 0' "${M[@]}" --block-size 0
bad_input '--max-num-seqs = 0' "${M[@]}" --max-num-seqs 0
bad_input '--max-num-batched-tokens = 0' "${M[@]}" --max-num-batched-tokens 0
bad_input '--quant-group-size = 0' "${M[@]}" --weight-dtype int4 --quant-group-size 0
bad_input '--gpu-memory-utilization = 1.5' "${M[@]}" --gpu-memory-utilization 1.5
bad_input '--gpu-memory-utilization = 0' "${M[@]}" --gpu-memory-utilization 0
bad_input '--gpu-memory-utilization = abc' "${M[@]}" --gpu-memory-utilization abc
bad_input '--gpu-memory-utilization = nan' "${M[@]}" --gpu-memory-utilization nan
bad_input '--mem-fraction-static = -0.5' "${M[@]}" --mem-fraction-static -0.5
bad_input '--gpu-memory-utilization = 0.9' "${M[@]}" --engine sglang --gpu-memory-utilization 0.9
bad_input '--mem-fraction-static = 0.8' "${M[@]}" --engine vllm --mem-fraction-static 0.8
bad_input '--engine = tgi' "${M[@]}" --engine tgi
bad_input '--gpu = h300' "${M[@]}" --gpu h300
bad_input '--gpu-memory-gib = 0' "${M[@]}" --gpu-memory-gib 0
bad_input '--cuda-graph-gib = 100' "${M[@]}" --cuda-graph-gib 100
bad_input '--non-torch-gib = -1' "${M[@]}" --non-torch-gib -1
bad_input '--sampler-bytes-per-logit = -3' "${M[@]}" --sampler-bytes-per-logit -3
bad_input '--nf4-double-quant = maybe' "${M[@]}" --nf4-double-quant maybe
bad_input '--cuda-graphs = sometimes' "${M[@]}" --cuda-graphs sometimes
bad_input '--model = NoSuchModel' --model NoSuchModel
bad_input '--num-layers = 0' "${M[@]}" --num-layers 0
printf '{"model": "Llama-3.1-8B", "seq_len": 4096}' >"$TEST_TMP/training.json"
bad_input '--seq-len = 4096: unknown setting' --scenario "$TEST_TMP/training.json"
printf '{"model": "Llama-3.1-8B", "model_config": {"hidden_size": 1}, "weight_dtype": "fp8"}' \
  >"$TEST_TMP/both.json"
printf '{"architectures": ["X"], "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 1000,
  "quantization_config": {"quant_method": "gptq", "bits": 3}}' >"$TEST_TMP/gptq3.json"
bad_input 'config.quantization_config.bits = 3' --model "$TEST_TMP/gptq3.json"

bad_input '--context = 0' --hidden-size 64 --num-layers 2 --num-heads 4 --ffn-size 128 \
  --vocab-size 100

case_name "training flags are not infer flags"
run infer "${M[@]}" --seq-len 4096
expect_exit 2
expect_stdout_empty
expect_stderr_contains "--seq-len"

finish
