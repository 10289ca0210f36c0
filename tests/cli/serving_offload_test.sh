#!/usr/bin/env bash
# Serving offload (docs/offload.md, "Serving"): vLLM / SGLang --cpu-offload-gb, vLLM --swap-space
# and --kv-offloading-size, SGLang's hierarchical cache; host rows, KV tiers, the node check and
# the errors, from flags and from a pasted engine command.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case_name "--cpu-offload-gib moves layer weights to the host and frees KV budget"
run infer --model Llama-3.1-8B --gpu-memory-utilization 0.9 --cpu-offload-gib 4 --format json
expect_exit 0
expect_json "abs(d['host_bytes'] - 4 * 2**30) < 64"
expect_json "[r for r in d['rows'] if r['counts_toward'] == 'host'][0]['component'] == 'weights offloaded to CPU (pinned)'"
expect_json "all(r['formula'] and r['source'] for r in d['rows'] if r['counts_toward'] == 'host')"
expect_json "d['scenario']['offload']['cpu_offload_bytes'] == 4 * 2**30"
expect_json "d['kv_tiers'][0]['tier'] == 'gpu' and d['kv_tiers'][0]['tokens'] == d['max_kv_tokens']"
expect_json "d['fit'][0]['host']['gpus_per_node'] == 1"
# Every decode step reads the offloaded 4 GiB over PCIe 5.0 x16 at 80% of 64 GB/s.
expect_json "d['decode_weight_reads']['gpu'] == 'h100-80gb' and abs(d['decode_weight_reads']['host_link_s'] - 4 * 2**30 / 51.2e9) < 1e-9"
expect_json "d['decode_weight_reads']['host_link_s'] > 10 * d['decode_weight_reads']['hbm_s']"
expect_json "any('at least 83.9 ms per step' in w for w in d['warnings'])"

case_name "KV offload and swap space are host tiers with their tokens"
run infer --model Llama-3.1-8B --tp 2 --gpu-memory-utilization 0.9 --kv-offload-gib 64 --swap-space-gib 4 --format json
expect_exit 0
expect_json "[t['tier'] for t in d['kv_tiers']] == ['gpu', 'host: swap space', 'host: KV offload']"
expect_json "d['kv_tiers'][2]['bytes'] == 32 * 2**30 and d['kv_tiers'][2]['tokens'] > 0"
expect_json "d['host_bytes'] == sum(t['bytes'] for t in d['kv_tiers'][1:])"
expect_json "d['device_bytes'] == sum(r['bytes'] for r in d['rows'] if r['counts_toward'] != 'host')"

case_name "the table shows the tiers, the host total and the node check"
run infer --model Llama-3.1-8B --gpu-memory-utilization 0.9 --kv-offload-gib 48 --host-memory-gib 56
expect_exit 0
expect_stdout_contains "KV cache offloaded to CPU"
expect_stdout_contains "total host"
expect_stdout_contains "KV cache tiers"
expect_stdout_contains "node RAM"
expect_stdout_contains "tight"

case_name "SGLang's hierarchical cache: the host pool is the ratio of the GPU pool"
run infer --model Llama-3.1-8B --mem-fraction-static 0.85 --enable-hierarchical-cache --hicache-ratio 3 --format json
expect_exit 0
expect_json "d['kv_tiers'][1]['tier'] == 'host: HiCache' and d['kv_tiers'][1]['tokens'] == 3 * d['max_kv_tokens'] + 1"

case_name "more offload than the weights is an error naming the flag"
run infer --model Llama-3.1-8B --cpu-offload-gib 40
expect_exit 2
expect_stderr_contains "--cpu-offload-gib"
expect_stderr_contains "decoder layers' weights"

case_name "a negative size is an error"
run infer --model Llama-3.1-8B --kv-offload-gib -1
expect_exit 2
expect_stderr_contains "--kv-offload-gib"

case_name "an engine's setting on the other engine is an error"
run infer --model Llama-3.1-8B --engine sglang --swap-space-gib 4
expect_exit 2
expect_stderr_contains "--swap-space-gib"

case_name "a pasted vllm serve command with its offload flags"
echo "vllm serve Qwen/Qwen3-8B --cpu-offload-gb 2 --kv-offloading-size 16 --kv-offloading-backend native" >"$TEST_TMP/serve.sh"
run infer --from "$TEST_TMP/serve.sh" --format json
expect_exit 0
expect_json "d['imported']['settings']['cpu_offload_gib'] == 2 and d['imported']['settings']['kv_offload_gib'] == 16"
expect_json "17.99 * 2**30 < d['host_bytes'] <= 18 * 2**30"

case_name "--emit writes the offload flags back"
run infer --model Llama-3.1-8B --cpu-offload-gib 2 --kv-offload-gib 16 --emit vllm
expect_exit 0
expect_stdout_contains "--cpu-offload-gb 2"
expect_stdout_contains "--kv-offloading-size 16"

case_name "an SGLang launch written by --emit reads back to the same host memory"
run infer --model Llama-3.1-8B --mem-fraction-static 0.85 --enable-hierarchical-cache --hicache-ratio 3 --cpu-offload-gib 1 --host-memory-gib 512 --format json
expect_exit 0
cp "$RUN_OUT_FILE" "$TEST_TMP/direct.json"
run infer --model Llama-3.1-8B --mem-fraction-static 0.85 --enable-hierarchical-cache --hicache-ratio 3 --cpu-offload-gib 1 --host-memory-gib 512 --emit sglang
expect_exit 0
expect_stdout_contains "--enable-hierarchical-cache"
cp "$RUN_OUT_FILE" "$TEST_TMP/launch.sh"
run infer --from "$TEST_TMP/launch.sh" --format json
expect_exit 0
expect_json "d['host_bytes'] == json.load(open('$TEST_TMP/direct.json'))['host_bytes'] > 0"
expect_json "d['fit'][0]['host']['memory_bytes'] == 512 * 2**30"

finish
