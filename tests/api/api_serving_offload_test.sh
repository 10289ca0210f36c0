#!/usr/bin/env bash
# Serving offload on POST /api/infer (docs/offload.md, "Serving"): the settings as API fields,
# host rows, KV tiers and the node check exactly as `vramplan infer` prints them, and 400 errors
# naming the field.
#
# usage: bash tests/api/api_serving_offload_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve_on_free_port

case_name "options: the offload settings are serving inputs"
request GET /api/infer/options
expect_status 200
expect_json "{'cpu_offload_gib', 'swap_space_gib', 'kv_offload_gib', 'enable_hierarchical_cache', \
'hicache_ratio', 'hicache_size_gb', 'host_memory_gib'} <= {o['key'] for o in d['options']}"

case_name "vLLM weight and KV offload: host rows, tiers, the node check; equal to the CLI"
post /api/infer '{"model": "Llama-3.1-8B", "gpu_memory_utilization": 0.9, "cpu_offload_gib": 2, "kv_offload_gib": 16, "host_memory_gib": 64}'
expect_status 200
expect_json "17.99 * 2**30 < d['host_bytes'] <= 18 * 2**30 and d['kv_tiers'][1]['tier'] == 'host: KV offload'"
expect_json "d['fit'][0]['host']['memory_bytes'] == 64 * 2**30"
cp "$RUN_OUT_FILE" "$TEST_TMP/api.json"
"$VRAMPLAN" infer --model Llama-3.1-8B --gpu-memory-utilization 0.9 --cpu-offload-gib 2 \
  --kv-offload-gib 16 --host-memory-gib 64 --format json >"$TEST_TMP/cli.json"
same_json "/api/infer = vramplan infer" "$TEST_TMP/api.json" "$TEST_TMP/cli.json"

case_name "SGLang's hierarchical cache with a size in GB"
post /api/infer '{"model": "Llama-3.1-8B", "mem_fraction_static": 0.85, "enable_hierarchical_cache": true, "hicache_size_gb": 50}'
expect_status 200
expect_json "d['kv_tiers'][1]['tier'] == 'host: HiCache' and d['host_bytes'] >= 50e9 - 131072"

case_name "errors name the field with 400"
post /api/infer '{"model": "Llama-3.1-8B", "cpu_offload_gib": 100}'
expect_error 400 cpu_offload_gib
post /api/infer '{"model": "Llama-3.1-8B", "swap_space_gib": -4}'
expect_error 400 swap_space_gib
post /api/infer '{"model": "Llama-3.1-8B", "engine": "sglang", "hicache_ratio": 2}'
expect_error 400 hicache_ratio

finish
