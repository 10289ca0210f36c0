#!/usr/bin/env bash
# `vramplan roofline` and `vramplan validate --throughput` through the real binary: the table,
# JSON and CSV forms, the cluster flags and a user catalog, and bad input (exit code 2, one
# stderr line naming the flag).
#
# usage: bash tests/cli/roofline_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LLAMA=(--model Llama-3.1-8B --gpus 8 --global-batch 64)

case_name "table"
run roofline "${LLAMA[@]}"
expect_exit 0
expect_stdout_contains "Roofline on h100-80gb (bf16): 989.4 TFLOP/s matmul"
expect_stdout_contains "dense layer, full attention (×32)"
expect_stdout_contains "QKV projection"
expect_stdout_contains "attention (flash)"
expect_stdout_contains "cross-entropy loss"
expect_stdout_matches "MFU +[0-9]+\.[0-9]%"
expect_no_nonfinite
expect_stderr_empty

case_name "json"
run roofline "${LLAMA[@]}" --format json
expect_exit 0
expect_json_sane
expect_json "d['gpu']['id'] == 'h100-80gb' and abs(d['gpu']['matmul_ridge'] - 989.4e12 / 3350e9) < 1e-6"
expect_json "d['cluster'] == {'gpus_per_node': 8, 'intra_node_gbps': 450, 'inter_node_gbps': 50, 'host_link_gbps': 64, 'host_memory_gbps': 614, 'nvme_gbps': 25}"
expect_json "0 < d['step_time']['mfu'] < 1 and d['step_time']['tokens_per_s_per_gpu'] > 0"
expect_json "all(op['bound'] == ('memory' if op['intensity'] < op['ridge'] else 'compute') for s in d['sections'] for op in s['ops'])"
expect_json "[op['bound'] for op in d['sections'][0]['ops'] if op['op'] == 'MLP down projection'] == ['compute', 'compute']"
expect_json "[op['bound'] for op in d['sections'][0]['ops'] if op['op'] == 'norms + residual adds'] == ['memory', 'memory']"
# 2·n·h·(a+2g)·d = 2·4096·4096·48·128 forward, twice that backward.
expect_json "[op['flops'] for op in d['sections'][0]['ops'] if op['op'] == 'QKV projection'] == [2*4096*4096*48*128, 4*4096*4096*48*128]"
one_gpu=$(json_value "[op['flops'] for op in d['sections'][0]['ops'] if op['op'] == 'QKV projection'][0]")

case_name "tensor parallelism divides the per-GPU FLOPs"
run roofline "${LLAMA[@]}" --tp 4 --format json
expect_exit 0
expect_json "[op['flops'] for op in d['sections'][0]['ops'] if op['op'] == 'QKV projection'][0] * 4 == $one_gpu"

case_name "csv"
run roofline "${LLAMA[@]}" --format csv
expect_exit 0
expect_stdout_contains "section,layers,op,kind,pass,flops,bytes,intensity,ridge,bound,roofline_s,formula"
expect_stdout_contains "dense layer,"
check "one line per operation" test "$(printf '%s\n' "$RUN_OUT" | grep -c 'dense layer, full attention')" -ge 14

case_name "cluster flags"
run roofline "${LLAMA[@]}" --gpus-per-node 4 --intra-node-gbps 100 --inter-node-gbps 12.5 --format json
expect_exit 0
expect_json "d['cluster'] == {'gpus_per_node': 4, 'intra_node_gbps': 100, 'inter_node_gbps': 12.5, 'host_link_gbps': 64, 'host_memory_gbps': 614, 'nvme_gbps': 25}"

case_name "a scenario that offloads pays for it in the step"
run roofline "${LLAMA[@]}" --zero 3 --offload-optimizer cpu --offload-params cpu --format json
expect_exit 0
expect_json "d['step_time']['offload_s'] > 0"
run roofline "${LLAMA[@]}" --zero 3 --offload-optimizer cpu --host-memory-gbps 0
expect_exit 2
expect_stderr_contains "--host-memory-gbps"

case_name "tensor parallelism across nodes is slower"
run roofline --model Llama-3.1-8B --tp 8 --gpus 8 --format json
fast=$(json_value "d['step_time']['tp_comm_s']")
run roofline --model Llama-3.1-8B --tp 8 --gpus 8 --gpus-per-node 4 --format json
slow=$(json_value "d['step_time']['tp_comm_s']")
check "tp_comm across nodes ($slow) > inside one ($fast)" python3 -c "import sys; sys.exit(not $slow > $fast)"

case_name "MoE and MLA"
run roofline --model DeepSeek-V2-Lite --gpus 8 --ep 8
expect_exit 0
expect_stdout_contains "MLA kv down-projection"
expect_stdout_contains "routed experts gate+up (grouped)"
expect_stdout_contains "MoE layer, full attention (×26)"
expect_no_nonfinite

case_name "another GPU"
run roofline "${LLAMA[@]}" --gpu mi300x-192gb --format json
expect_exit 0
expect_json "d['gpu']['matmul_tflops'] == 1307.4"

case_name "user catalog"
cat >"$TEST_TMP/catalog.json" <<'JSON'
{"gpus": [{"id": "my-gpu", "name": "Mine", "nominal_gb": 80, "usable_mib": 81000,
           "bf16_tflops": 500, "hbm_gbps": 2000, "nvlink_gbps": 200, "inter_node_gbps": 25}]}
JSON
run roofline "${LLAMA[@]}" --gpu-catalog "$TEST_TMP/catalog.json" --gpu my-gpu --format json
expect_exit 0
expect_json "d['gpu']['id'] == 'my-gpu' and d['gpu']['matmul_ridge'] == 250"

# bad ARGS...: exit 2, nothing on stdout, one line on stderr containing $EXPECT.
bad() {
  case_name "bad: $*"
  run roofline "$@"
  expect_exit 2
  expect_stdout_empty
  expect_stderr_lines 1
  expect_stderr_contains "$EXPECT"
}
EXPECT="--tp = 3" bad --model Llama-3.1-8B --tp 3
EXPECT="--gpu = v100-32gb" bad "${LLAMA[@]}" --gpu v100-32gb
EXPECT="--gpu = nope" bad "${LLAMA[@]}" --gpu nope
EXPECT="--gpu-memory-gib = 80" bad "${LLAMA[@]}" --gpu-memory-gib 80
EXPECT="--intra-node-gbps = 0" bad "${LLAMA[@]}" --intra-node-gbps 0
EXPECT="--inter-node-gbps = -1" bad "${LLAMA[@]}" --inter-node-gbps -1
EXPECT="--gpus-per-node = 0" bad "${LLAMA[@]}" --gpus-per-node 0
case_name "bad --format"
run roofline "${LLAMA[@]}" --format yaml
expect_exit 2
expect_stderr_contains "--format: yaml not in {table,json,csv}"
EXPECT="--gpu-catalog" bad "${LLAMA[@]}" --gpu-catalog "$TEST_TMP/missing.json"
echo '{"gpus": [{"id": "x", "name": "X", "nominal_gb": 80, "usable_mib": 81000, "hbm_gbps": -5}]}' \
  >"$TEST_TMP/bad.json"
EXPECT="gpus[0].hbm_gbps = -5" bad "${LLAMA[@]}" --gpu-catalog "$TEST_TMP/bad.json" --gpu x
echo '{"gpus": [{"id": "x", "name": "X", "nominal_gb": 80, "usable_mib": 81000}]}' \
  >"$TEST_TMP/slow.json"
EXPECT="--gpu = x" bad "${LLAMA[@]}" --gpu-catalog "$TEST_TMP/slow.json" --gpu x

case_name "validate --throughput"
run validate --throughput --no-rows --check
expect_exit 0
expect_stdout_contains "held out"
expect_stdout_matches "^all +[0-9]+"
run validate --throughput --format json
expect_exit 0
expect_json "len(d['rows']) == 1758 and [s['model'] for s in d['summaries']] == ['1B', '3B', '8B', '80B', 'all']"
# Every target met, or open (not met yet) and no worse than its committed figure.
expect_json "all(t['passes'] for t in d['targets']) and all(t['met'] or 'committed' in t for t in d['targets'])"
expect_json "len(d['group_rankings']) >= 20 and all(-1 <= g['spearman_tok'] <= 1 for g in d['group_rankings'])"
expect_json "len(d['published']['rows']) >= 200 and d['published']['summaries'][0]['group'] == 'all'"
expect_json "all(r['reason'] for r in d['published']['rows'] if r['skipped'])"

case_name "validate --calibrate-published"
# A search of a few thousand step-time evaluations: about a second in Release, 100 s in the
# sanitized build with the fuzzer's coverage hooks (scripts/test.sh), over the default 60.
RUN_TIMEOUT=300 run validate --calibrate-published --format json
expect_exit 0
expect_json "d['calibration']['rows'] > 0 and d['calibration']['objective'] <= d['calibration']['start_objective']"
expect_json "[s['group'] for s in d['summaries']][:3] == ['all', 'held out', 'the rest']"
run validate --calibrate-published --dataset megatron
expect_exit 2

finish
