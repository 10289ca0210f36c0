#!/usr/bin/env bash
# POST /api/roofline as a client meets it: the real `vramplan serve --port 0` answers exactly what
# `vramplan roofline --format json` prints for the same settings (scenario keys and the cluster
# keys), and bad input is a 400 JSON error naming the field as the request wrote it, its value
# and what is accepted.
#
# usage: bash tests/api/api_roofline_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve_on_free_port

# same_as_cli BODY FLAGS...: POST BODY; the answer equals `vramplan roofline FLAGS --format json`.
same_as_cli() {
  local body="$1"
  shift
  post /api/roofline "$body"
  expect_status 200
  expect_header Content-Type application/json
  cp "$RUN_OUT_FILE" "$TEST_TMP/roofline_api.json"
  "$VRAMPLAN" roofline "$@" --format json >"$TEST_TMP/roofline_cli.json" 2>/dev/null
  same_json "/api/roofline $body = vramplan roofline $* --format json" \
    "$TEST_TMP/roofline_api.json" "$TEST_TMP/roofline_cli.json"
}

case_name "dense model: the CLI's JSON"
same_as_cli '{"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64}' \
  --model Llama-3.1-8B --gpus 8 --global-batch 64
expect_json "d['gpu']['id'] == 'h100-80gb' and d['cluster']['gpus_per_node'] == 8"
expect_json "all(op['bound'] in ('memory', 'compute') for s in d['sections'] for op in s['ops'])"
expect_json "0 < d['step_time']['mfu'] < 1 and d['step_time']['step_time_s'] > 0"
expect_json "isinstance(d['warnings'], list)"

case_name "text values, another GPU, tensor parallelism and the cluster keys"
same_as_cli '{"model": "Llama-3.1-8B", "gpus": "8", "tp": 4, "gpu": "mi300x-192gb",
  "gpus_per_node": 4, "intra_node_gbps": "100", "inter_node_gbps": 12.5, "nvme_gbps": 40}' \
  --model Llama-3.1-8B --gpus 8 --tp 4 --gpu mi300x-192gb --gpus-per-node 4 \
  --intra-node-gbps 100 --inter-node-gbps 12.5 --nvme-gbps 40
expect_json "d['cluster'] == {'gpus_per_node': 4, 'intra_node_gbps': 100, 'inter_node_gbps': 12.5, 'host_link_gbps': 64, 'host_memory_gbps': 922, 'nvme_gbps': 40}"
expect_json "d['gpu']['matmul_tflops'] == 1307.4"

case_name "MoE with MLA"
same_as_cli '{"model": "DeepSeek-V2-Lite", "gpus": 8, "ep": 8}' \
  --model DeepSeek-V2-Lite --gpus 8 --ep 8
expect_json "any(op['op'] == 'MLA kv down-projection' for s in d['sections'] for op in s['ops'])"

case_name "?pretty is the CLI's text byte for byte"
printf '%s' '{"model": "Llama-3.1-8B", "gpus": 8}' >"$TEST_TMP/body.json"
request POST "/api/roofline?pretty=1" "$TEST_TMP/body.json"
expect_status 200
"$VRAMPLAN" roofline --model Llama-3.1-8B --gpus 8 --format json >"$TEST_TMP/cli.txt" 2>/dev/null
check "pretty body = CLI stdout" cmp -s "$RUN_OUT_FILE" "$TEST_TMP/cli.txt"

# bad BODY FIELD VALUE: a 400 JSON error naming FIELD with VALUE, with what is accepted.
bad() {
  case_name "bad: $1"
  post /api/roofline "$1"
  expect_error 400 "$2"
  expect_json "d['error']['value'] == '$3' and d['error']['accepted']"
}
LLAMA='"model": "Llama-3.1-8B"'
bad "{$LLAMA, \"gpus_per_node\": 0}" gpus_per_node 0
bad "{$LLAMA, \"gpus_per_node\": \"many\"}" gpus_per_node many
bad "{$LLAMA, \"intra_node_gbps\": 0}" intra_node_gbps 0
bad "{$LLAMA, \"inter_node_gbps\": -1}" inter_node_gbps -1
bad "{$LLAMA, \"gpu\": \"nope\"}" gpu nope
bad "{$LLAMA, \"gpu_memory_gib\": 80}" gpu_memory_gib 80
bad "{$LLAMA, \"tp\": 3}" tp 3
bad "{$LLAMA, \"seq_lenn\": 4096}" seq_lenn 4096
bad '{"model": "./config.json"}' model ./config.json
case_name "bad: not JSON"
post /api/roofline '{"model": '
expect_error 400 body

case_name "GET is refused with Allow: POST"
request GET /api/roofline
expect_status 405
expect_header Allow POST

case_name "the server still answers"
post /api/roofline '{"model": "Llama-3.1-8B"}'
expect_status 200

finish
