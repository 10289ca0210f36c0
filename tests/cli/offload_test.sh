#!/usr/bin/env bash
# Offload and host memory (docs/offload.md): the flags, host rows, the node's RAM check, errors.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case_name "ZeRO-3 + CPU offload of a 70B model on one node: GPU and host memory with formulas"
run estimate --model Llama-3.1-70B --gpus 8 --zero 3 --offload-optimizer cpu --offload-params cpu --format json
expect_exit 0
expect_json "d['scenario']['offload'] == {'optimizer': 'cpu', 'params': 'cpu', 'optimizer_fraction': 1.0, 'activations': False}"
expect_json "all(r['formula'] and r['source'] for r in d['stages'][0]['rows'] if r['counts_toward'] == 'host')"
expect_json "d['peak']['host_bytes'] == d['stages'][0]['host_bytes'] > 100 * 2**30"
expect_json "d['fit'][0]['gpu'] == 'h100-80gb' and d['fit'][0]['host']['gpus_per_node'] == 8"
expect_json "d['fit'][0]['host']['node_bytes'] == 8 * d['peak']['host_bytes']"
expect_json "d['fit'][0]['host']['memory_bytes'] == 2048 * 2**30"
expect_json "not any(r['component'] == 'optimizer states' for r in d['stages'][0]['rows'])"

case_name "the table shows host rows and the node check"
run estimate --model Llama-3.1-70B --gpus 8 --zero 3 --offload-optimizer cpu --offload-params cpu
expect_exit 0
expect_stdout_contains "optimizer states (offloaded)"
expect_stdout_contains "total host"
expect_stdout_contains "host memory"
expect_stdout_contains "node RAM"

case_name "--host-memory-gib below the need is oom for the node"
run estimate --model Llama-3.1-70B --gpus 8 --zero 3 --offload-optimizer cpu --host-memory-gib 64 --format json
expect_exit 0
expect_json "d['fit'][0]['host']['verdict'] == 'oom'"

case_name "NVMe rows count toward disk"
run estimate --model Llama-3.1-70B --gpus 8 --zero 3 --offload-optimizer nvme --offload-params nvme --format json
expect_exit 0
expect_json "d['peak']['disk_bytes'] > 0"

case_name "params offload without ZeRO-3 or FSDP is an error naming the flag"
run estimate --model Llama-3.1-8B --gpus 8 --zero 2 --offload-params cpu
expect_exit 2
expect_stderr_contains "--offload-params"

case_name "a fraction outside (0, 1] is an error"
run estimate --model Llama-3.1-8B --gpus 8 --distributed-optimizer --offload-optimizer cpu --optimizer-offload-fraction 1.5
expect_exit 2
expect_stderr_contains "--optimizer-offload-fraction"

case_name "an unknown tier is an error listing the accepted ones"
run estimate --model Llama-3.1-8B --gpus 8 --zero 3 --offload-optimizer disk
expect_exit 2
expect_stderr_contains "none, cpu, nvme"

case_name "plan with offload settings searches the shardings that run them"
run plan --model Llama-3.1-8B --gpus 2 --global-batch 16 --offload-optimizer cpu --top 3 --format json
expect_exit 0
expect_json "d['candidates'] and all(c['offload']['optimizer'] == 'cpu' for c in d['candidates'])"
expect_json "all(c['parallel']['zero'] > 0 or c['parallel']['fsdp'] != 'none' or c['parallel']['distributed_optimizer'] for c in d['candidates'])"
expect_json "all(c['scenario']['offload_optimizer'] == 'cpu' and c['step_time']['offload_s'] > 0 for c in d['candidates'])"
expect_json "d['offload_search']['ran'] is False"

case_name "plan: when nothing fits on the GPU alone, it searches with offload and says so"
run plan --model Llama-3.1-8B --gpus 1 --gpu a100-40gb --global-batch 8 --top 3 --format json
expect_exit 0
expect_json "d['offload_search']['ran'] and 'No layout fits with everything on the GPU' in d['why']"
expect_json "all(c['offload']['optimizer'] != 'none' for c in d['candidates'])"
expect_json "all(0 < c['peak']['host_bytes'] and c['peak']['device_bytes'] <= d['limit_bytes'] for c in d['candidates'])"

case_name "a candidate's scenario estimates to the same peak, with its offload"
run plan --model Llama-3.1-8B --gpus 1 --gpu a100-40gb --global-batch 8 --top 1 --format json
expect_exit 0
python3 -c "import json,sys; json.dump(json.load(open('$RUN_OUT_FILE'))['candidates'][0]['scenario'], open('$TEST_TMP/scenario.json','w'))"
peak=$(python3 -c "import json; print(json.load(open('$RUN_OUT_FILE'))['candidates'][0]['peak']['device_bytes'])")
run estimate --scenario "$TEST_TMP/scenario.json" --format json
expect_exit 0
expect_json "d['peak']['device_bytes'] == $peak and d['peak']['host_bytes'] > 0"

case_name "plan --offload-search never reports that nothing fits"
run plan --model Llama-3.1-8B --gpus 1 --gpu a100-40gb --global-batch 8 --offload-search never
expect_exit 0
expect_stdout_contains "No layout fits."

case_name "plan: a node with little RAM leaves only NVMe offload, and the note says why"
run plan --model Llama-3.1-8B --gpus 2 --gpu a100-40gb --global-batch 8 --host-memory-gib 64 --top 2 --format json
expect_exit 0
expect_json "all(c['offload']['optimizer'] == 'nvme' for c in d['candidates'])"
expect_json "'not the node' in d['offload_search']['note'] and d['stats']['host_over'] > 0"

case_name "offload bandwidths are checked"
run plan --model Llama-3.1-8B --gpus 8 --global-batch 64 --host-link-gbps 0
expect_exit 2
expect_stderr_contains "--host-link-gbps"

finish
