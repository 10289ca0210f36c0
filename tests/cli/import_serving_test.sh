#!/usr/bin/env bash
# infer --from: a vLLM or SGLang launch read from its own command line, script, `docker run` or
# pasted terminal session, and infer --emit vllm|sglang writing it back (docs/importers.md).
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
FIXTURES="$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports"

# round_trip_infer FORMAT ARGS...: infer ARGS, then infer --from (infer ARGS --emit FORMAT); the KV
# capacity (tokens, sequences) and the peak (allocated, device) must be the same.
round_trip_infer() {
  local format="$1"
  shift
  case_name "round trip $format: $*"
  run infer "$@" --format json
  expect_exit 0
  local direct
  direct="$(json_value "[d['max_kv_tokens'], d['max_sequences'], d['allocated_bytes'], d['device_bytes']]")"
  run infer "$@" --emit "$format"
  expect_exit 0
  expect_stderr_empty
  local written="$TEST_TMP/emitted.$format"
  printf '%s\n' "$RUN_OUT" >"$written"
  run infer --from "$written" --format json
  expect_exit 0
  expect_json "d['imported']['format'] == '$format' and not d['imported']['warnings']"
  local read_back
  read_back="$(json_value "[d['max_kv_tokens'], d['max_sequences'], d['allocated_bytes'], d['device_bytes']]")"
  if [[ -n "$direct" && "$direct" == "$read_back" ]]; then
    pass
  else
    fail "same KV capacity and peak as the run it was written from" "$direct" "$read_back"
  fi
}

case_name "a vLLM recipe script"
run infer --from "$FIXTURES/vllm/qwen3_235b_ep.sh" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'vllm'"
expect_json "d['scenario']['tp'] == 8 and d['scenario']['ep'] == 8 and d['scenario']['context'] == 32768"
expect_json "d['scenario']['max_num_seqs'] == 512 and d['max_kv_tokens'] > 0"
expect_json "any(k['key'] == '--enable-expert-parallel' and k['setting'] == 'ep = tp·dp = 8' for k in d['imported']['understood'])"
expect_json "any(k['key'] == '--enable-prefix-caching' and k['reason'].startswith('no effect on memory') for k in d['imported']['ignored'])"

case_name "the table lists what was read"
run infer --from "$FIXTURES/vllm/llama_api_server.sh"
expect_exit 0
expect_stdout_contains "read from vllm:"
expect_stdout_contains "--kv-cache-dtype fp8"
expect_stdout_contains "swap_space_gib = 16.0"
expect_stdout_contains "CPU swap space (preempted KV blocks)"

case_name "docker run of vllm/vllm-openai, from standard input"
run_with_input "$FIXTURES/vllm/docker_gpt_oss.sh" infer --from - --format json
expect_exit 0
expect_json "d['scenario']['model']['name'] == 'gpt-oss-120b' and d['scenario']['tp'] == 2"
expect_json "d['scenario']['cuda_graph_in_budget'] is True"

case_name "a pasted vLLM V0 session: the engine and the GPU total from its log"
run infer --from "$FIXTURES/vllm/v0_session.txt" --format json
expect_exit 0
expect_json "d['scenario']['max_num_seqs'] == 256"
expect_json "abs(d['scenario']['gpu_total_bytes'] - 79.22 * 2**30) < 2**20"
expect_json "any('vLLM V0' in w for w in d['warnings'])"

case_name "SGLang: memory and scheduling flags, docker, docs commands"
run infer --from "$FIXTURES/sglang/qwen3_moe.sh" --format json
expect_exit 0
expect_json "d['imported']['format'] == 'sglang' and d['scenario']['engine'] == 'sglang'"
expect_json "d['scenario']['mem_fraction_static'] == 0.85 and d['scenario']['max_num_batched_tokens'] == 4096"
expect_json "d['capacity']['engine'] == 'sglang'"
run infer --from "$FIXTURES/sglang/docker_llama.sh" --format json
expect_exit 0
expect_json "any(k['key'] == 'HF_TOKEN' and k['value'] == '(not shown)' for k in d['imported']['ignored'])"
run infer --from "$FIXTURES/sglang/deepseek_v3.sh" --format json
expect_exit 0
expect_json "d['scenario']['tp'] == 8 and d['max_kv_tokens'] is None"
expect_json "any('--mem-fraction-static' in w for w in d['warnings'])"

case_name "flags beside the file win"
run infer --from "$FIXTURES/vllm/qwen3_235b_ep.sh" --gpu h200-141gb --context 8192 --format json
expect_exit 0
expect_json "d['scenario']['context'] == 8192 and d['fit'][0]['gpu'] == 'h200-141gb'"

round_trip_infer vllm --model Llama-3.1-8B --gpu-memory-utilization 0.9
round_trip_infer vllm --model Llama-3.1-70B --tp 4 --context 32768 --kv-dtype fp8 --weight-dtype fp8 \
  --gpu-memory-utilization 0.92
round_trip_infer vllm --model Qwen3-30B-A3B --tp 2 --dp 2 --ep 4 --gpu h200-141gb --batch 8 \
  --gpu-memory-utilization 0.85 --max-num-seqs 256 --max-num-batched-tokens 4096
round_trip_infer vllm --model gpt-oss-120b --tp 2 --no-cuda-graphs --block-size 32 \
  --gpu-memory-gib 79.18 --gpu-memory-utilization 0.9
round_trip_infer vllm --model Qwen3-8B --pp 2 --dtype fp16 --cuda-graph-in-budget --non-torch-gib 0.2 \
  --gpu-memory-utilization 0.8
round_trip_infer sglang --model Qwen3-8B --tp 2 --mem-fraction-static 0.85
round_trip_infer sglang --model Qwen3-235B-A22B --tp 8 --ep 8 --context 40960 --kv-dtype fp8 \
  --weight-dtype fp8 --mem-fraction-static 0.9 --no-cuda-graphs
round_trip_infer sglang --model Llama-3.1-8B --engine sglang --dp 2 --gpu a100-80gb \
  --mem-fraction-static 0.88

case_name "stdout holds the command alone"
run infer --model Qwen3-8B --tp 2 --gpu-memory-utilization 0.9 --emit vllm
expect_exit 0
expect_stdout_contains "vllm serve Qwen/Qwen3-8B"
expect_stdout_contains "--tensor-parallel-size 2"
expect_stdout_not_contains "serving memory per GPU"
run infer --model Qwen3-8B --mem-fraction-static 0.9 --emit sglang
expect_exit 0
expect_stdout_contains "python3 -m sglang.launch_server"
expect_stdout_contains "--model-path Qwen/Qwen3-8B"

case_name "what the engine cannot express is an error naming --emit"
run infer --model Qwen3-30B-A3B --tp 4 --ep 2 --emit vllm
expect_exit 2
expect_stderr_contains "--emit = vllm"
expect_stderr_contains "tp·dp"
run infer --model Qwen3-8B --mem-fraction-static 0.9 --emit vllm
expect_exit 2
expect_stderr_contains "--emit = vllm"
run infer --model Qwen3-8B --weight-dtype nf4 --emit vllm
expect_exit 2
expect_stderr_contains "--emit = vllm"
run infer --model Qwen3-8B --kv-dtype int8 --emit sglang --engine sglang
expect_exit 2
expect_stderr_contains "--emit = sglang"
run estimate --model Llama-3.1-8B --emit vllm
expect_exit 2
expect_stderr_contains "a training format"

case_name "errors name the flag as the command writes it"
printf 'vllm serve Qwen/Qwen3-8B -tp two\n' >"$TEST_TMP/bad.sh"
run infer --from "$TEST_TMP/bad.sh"
expect_exit 2
expect_stderr_contains "-tp = two"
printf 'vllm serve Qwen/Qwen3-8B --tensor-parallel-size 3\n' >"$TEST_TMP/heads.sh"
run infer --from "$TEST_TMP/heads.sh"
expect_exit 2
expect_stderr_contains "--tensor-parallel-size = 3"
printf 'vllm serve Qwen/Qwen3-8B --max-num-seqs 512 --max-num-batched-tokens 256\n' >"$TEST_TMP/step.sh"
run infer --from "$TEST_TMP/step.sh"
expect_exit 2
expect_stderr_contains "--max-num-batched-tokens = 256"
printf 'python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --mem-fraction-static 2\n' \
  >"$TEST_TMP/fraction.sh"
run infer --from "$TEST_TMP/fraction.sh"
expect_exit 2
expect_stderr_contains "--mem-fraction-static = 2"
printf 'vllm serve --tensor-parallel-size 2\n' >"$TEST_TMP/nomodel.sh"
run infer --from "$TEST_TMP/nomodel.sh"
expect_exit 2
expect_stderr_contains "names no model"

case_name "a training config for infer, a serving command for estimate"
run infer --from "$FIXTURES/megatron/llama3_8b_pretrain.sh"
expect_exit 2
expect_stderr_contains "a serving config"
run estimate --from "$FIXTURES/vllm/qwen3_235b_ep.sh"
expect_exit 2
expect_stderr_contains "a training config"

finish
