#!/usr/bin/env bash
# POST /api/fit and GET /api/fit/options (docs/web-api.md): the same JSON as
# `vramplan fit --format json` (but for "seconds"), the server's GPU bound on the GPU-count
# question, and the house errors with 400.
#
# usage: bash tests/api/api_fit_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve_on_free_port

case_name "options"
request GET /api/fit/options
expect_status 200
expect_json "[o['key'] for o in d['options']] == ['question', 'up_to', 'seq_multiple']"
expect_json "d['limits']['max_gpus'] == 4096"

# The CLI's JSON, "seconds" aside (and the planner's own seconds inside "plan").
same_as_cli() {
  local name="$1" body="$2"
  shift 2
  "$VRAMPLAN" fit "$@" --format json >"$TEST_TMP/$name.cli.json"
  printf '%s' "$body" >"$TEST_TMP/body.json"
  request POST /api/fit "$TEST_TMP/body.json"
  expect_status 200
  cp "$RUN_OUT_FILE" "$TEST_TMP/$name.api.json"
  for f in "$TEST_TMP/$name.cli.json" "$TEST_TMP/$name.api.json"; do
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d.pop("seconds")
if d.get("plan"):
    d["plan"]["stats"].pop("seconds"); d["plan"]["stats"].pop("threads")
json.dump(d, open(sys.argv[1], "w"), sort_keys=True)' "$f"
  done
  same_json "$name: the CLI's JSON" "$TEST_TMP/$name.cli.json" "$TEST_TMP/$name.api.json"
}

case_name "the same JSON as the CLI"
# The CLI passes its flags as text, and each answer's scenario echoes the settings: the bodies
# give the same text.
same_as_cli micro_batch '{"question": "micro_batch", "model": "Llama-3.1-8B", "dp": "8", "zero": "3", "recompute": "full", "seq_len": "8192"}' \
  micro-batch --model Llama-3.1-8B --dp 8 --zero 3 --recompute full --seq-len 8192
same_as_cli seq_len '{"question": "seq_len", "model": "Llama-3.1-8B", "tp": "2", "sequence_parallel": "true", "cp": "2", "dp": "2", "zero": "3", "seq_multiple": "1024"}' \
  seq-len --model Llama-3.1-8B --tp 2 --sequence-parallel --cp 2 --dp 2 --zero 3 --seq-multiple 1024
same_as_cli global_batch '{"question": "global_batch", "model": "Llama-3.1-8B", "tp": "2", "pp": "4", "dp": "1", "schedule": "gpipe", "micro_batch": "2"}' \
  global-batch --model Llama-3.1-8B --tp 2 --pp 4 --dp 1 --schedule gpipe --micro-batch 2
same_as_cli gpus '{"question": "gpus", "model": "Llama-3.1-8B", "gpu_memory_gib": "8", "seq_len": "2048", "global_batch": "96", "threads": "1", "up_to": "4096"}' \
  gpus --model Llama-3.1-8B --gpu-memory-gib 8 --seq-len 2048 --global-batch 96 --threads 1 --up-to 4096
expect_json "d['fits'] and d['value'] > 8 and d['scenario']['gpus'] == d['value']"

case_name "nothing fits: 200 with fits false"
post /api/fit '{"question": "micro_batch", "model": "Llama-3.1-70B"}'
expect_status 200
expect_json "d['fits'] is False and d['value'] is None"

case_name "bad input: 400 naming the field"
post /api/fit '{"model": "Llama-3.1-8B"}'
expect_error 400 question
post /api/fit '{"question": "largest", "model": "Llama-3.1-8B"}'
expect_error 400 question
post /api/fit '{"question": "micro_batch", "model": "Llama-3.1-8B", "micro_batch": 4}'
expect_error 400 micro_batch
post /api/fit '{"question": "seq_len", "model": "Llama-3.1-8B", "up_to": -1}'
expect_error 400 up_to
post /api/fit '{"question": "gpus", "model": "Llama-3.1-8B", "global_batch": 64, "up_to": 8192}'
expect_error 400 up_to
post /api/fit '{"question": "gpus", "model": "Llama-3.1-8B", "global_batch": 64, "threads": 64}'
expect_error 400 threads
post /api/fit '{"question": "micro_batch", "model": "/etc/passwd"}'
expect_error 400 model
post /api/fit '[1]'
expect_error 400 body
request GET /api/fit
expect_status 405

finish
