#!/usr/bin/env bash
# The HTTP API as a client meets it: starts the real `vramplan serve --port 0` on 127.0.0.1 and
# hits every endpoint with curl: /api/estimate is exactly `vramplan estimate --format json`,
# /api/infer exactly `vramplan infer --format json`, /api/plan exactly `vramplan plan`, options,
# models, GPUs, sweeps and the web UI.
#
# usage: bash tests/api/api_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve_on_free_port

# ---------------------------------------------------------------------------------------------
case_name "health"
request GET /api/health
expect_status 200
expect_header Content-Type application/json
expect_json "d['status'] == 'ok' and d['version']"

case_name "options: every CLI input"
request GET /api/options
expect_status 200
expect_json "len(d['options']) > 40"
expect_json "all(set(o) == {'key', 'flag', 'kind', 'group', 'default', 'help', 'choices'} \
for o in d['options'])"
expect_json "[o for o in d['options'] if o['key'] == 'seq_len'][0]['flag'] == '--seq-len'"
expect_json "[o for o in d['options'] if o['key'] == 'fsdp'][0]['choices'][1] == 'full_shard'"
# Every flag of `vramplan estimate --help` is an option, or an output setting (--formulas;
# model_config is the API-only option).
expect_json "[o['key'] for o in d['output']] == ['formulas']"
cp "$RUN_OUT_FILE" "$TEST_TMP/options.json"
"$VRAMPLAN" estimate --help >"$TEST_TMP/help.txt"
missing=$(python3 -c 'import json, re, sys
answer = json.load(open(sys.argv[1]))
flags = {o["flag"] for o in answer["options"] + answer["output"]}
helped = set(re.findall(r"^\s+(--[a-z0-9-]+)", open(sys.argv[2]).read(), re.M))
ignored = {"--help", "--scenario", "--format", "--color", "--width", "--emit"}  # emit: a request key
print(" ".join(sorted(f for f in helped - flags - ignored if not f.startswith("--no-"))))' \
  "$TEST_TMP/options.json" "$TEST_TMP/help.txt")
check "every estimate flag is in /api/options (missing: $missing)" test -z "$missing"

case_name "models: what \`vramplan models --format json\` prints"
request GET /api/models
expect_status 200
cp "$RUN_OUT_FILE" "$TEST_TMP/models_api.json"
"$VRAMPLAN" models --format json >"$TEST_TMP/models_cli.json"
same_json "/api/models = vramplan models --format json" "$TEST_TMP/models_api.json" \
  "$TEST_TMP/models_cli.json"
expect_json "[m for m in d if m['name'] == 'Llama-3.1-8B'][0]['total'] == 8030261248"
expect_json "all(set(m) == {'name', 'hub_id', 'model_type', 'total', 'active'} for m in d)"

case_name "gpus: what \`vramplan gpus --format json\` prints"
request GET /api/gpus
expect_status 200
cp "$RUN_OUT_FILE" "$TEST_TMP/gpus_api.json"
"$VRAMPLAN" gpus --format json >"$TEST_TMP/gpus_cli.json"
same_json "/api/gpus = vramplan gpus --format json" "$TEST_TMP/gpus_api.json" \
  "$TEST_TMP/gpus_cli.json"
expect_json "any(g['id'] == 'h100-80gb' for g in d)"

case_name "model config by name, Hub id and percent-encoded Hub id"
request GET /api/models/Llama-3.1-8B
expect_status 200
expect_json "d['hidden_size'] == 4096 and d['num_hidden_layers'] == 32"
cp "$RUN_OUT_FILE" "$TEST_TMP/config_by_name.json"
request GET /api/models/meta-llama/Llama-3.1-8B
expect_status 200
same_json "by Hub id" "$TEST_TMP/config_by_name.json" "$RUN_OUT_FILE"
request GET /api/models/meta-llama%2FLlama-3.1-8B
expect_status 200
same_json "by encoded Hub id" "$TEST_TMP/config_by_name.json" "$RUN_OUT_FILE"
request GET /api/models/llama-3.1-8b
expect_status 200

# estimate_matches NAME JSON: /api/estimate on JSON equals `vramplan estimate --scenario FILE
# --format json`, and ?pretty gives exactly the CLI's bytes.
estimate_matches() {
  case_name "estimate = CLI: $1"
  printf '%s' "$2" >"$TEST_TMP/$1.scenario.json"
  "$VRAMPLAN" estimate --scenario "$TEST_TMP/$1.scenario.json" --format json \
    >"$TEST_TMP/$1.cli.json"
  request POST /api/estimate "$TEST_TMP/$1.scenario.json"
  expect_status 200
  expect_json_sane
  same_json "/api/estimate = vramplan estimate --format json" "$RUN_OUT_FILE" "$TEST_TMP/$1.cli.json"
  request POST "/api/estimate?pretty=1" "$TEST_TMP/$1.scenario.json"
  check "?pretty is byte for byte the CLI's output" cmp -s "$RUN_OUT_FILE" "$TEST_TMP/$1.cli.json"
}
estimate_matches llama '{"model": "Llama-3.1-8B", "tp": 2, "seq_len": 8192}'
estimate_matches moe '{"model": "Qwen3-30B-A3B", "gpus": 16, "ep": 8, "seq_len": "8192",
  "global_batch": 256, "distributed_optimizer": true, "recompute": "selective"}'
estimate_matches pipeline '{"model": "Llama-3.1-70B", "gpus": 64, "tp": 8, "pp": 4, "vpp": 2,
  "global_batch": 512, "gpu": "a100-80gb"}'
estimate_matches custom '{"hidden_size": 2048, "num_layers": 16, "num_heads": 16,
  "ffn_size": 8192, "vocab_size": 32000, "gpu_memory_gib": 24, "fsdp": "full_shard", "gpus": 4}'
estimate_matches inline "{\"model_config\": $(cat "$VRAMPLAN_SOURCE_DIR/data/models/gpt2.json"),
  \"micro_batch\": 4}"
# "formulas": false (--no-formulas): rows without formula strings, the same numbers.
estimate_matches no_formulas '{"model": "Llama-3.1-8B", "tp": 2, "formulas": false}'
expect_json "all(r['formula'] == '' for s in d['stages'] for r in s['rows'])"

case_name "estimate from a framework's config: the text in \"from\""
python3 -c 'import json, sys
print(json.dumps({"from": open(sys.argv[1]).read(), "model": "Llama-3.1-8B", "gpus": sys.argv[2]}))' \
  "$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports/deepspeed/ds_config_zero2.json" 8 \
  >"$TEST_TMP/from.json"
request POST /api/estimate "$TEST_TMP/from.json"
expect_status 200
expect_json "d['imported']['format'] == 'deepspeed' and d['scenario']['parallel']['zero'] == 2"
expect_json "any(k['key'] == 'zero_optimization.reduce_bucket_size' for k in d['imported']['understood'])"
python3 -c 'import json, sys
print(json.dumps({"from": open(sys.argv[1]).read(), "model": "Llama-3.1-8B", "gpus": sys.argv[2]}))' \
  "$VRAMPLAN_SOURCE_DIR/tests/fixtures/imports/deepspeed/ds_config_zero2.json" 16 \
  >"$TEST_TMP/from_bad.json"
request POST /api/estimate "$TEST_TMP/from_bad.json"
expect_error 400 train_batch_size

case_name "plan = CLI: vramplan plan --format json"
# On one thread the search is deterministic but for its timing (stats.seconds).
printf '%s' '{"model": "Llama-3.1-8B", "gpus": 16, "gpu": "h100-80gb", "seq_len": 4096,
  "global_batch": 64, "top": 4, "threads": 1}' >"$TEST_TMP/plan.scenario.json"
"$VRAMPLAN" plan --scenario "$TEST_TMP/plan.scenario.json" --format json >"$TEST_TMP/plan.cli.json"
request POST /api/plan "$TEST_TMP/plan.scenario.json"
expect_status 200
expect_json_sane
expect_json "len(d['candidates']) == 4 and d['evaluated'] > 0 and d['why']"
untimed() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8")); del d["stats"]["seconds"]
json.dump(d, open(sys.argv[2], "w", encoding="utf-8"))' "$1" "$2"; }
untimed "$RUN_OUT_FILE" "$TEST_TMP/plan.api.untimed.json"
untimed "$TEST_TMP/plan.cli.json" "$TEST_TMP/plan.cli.untimed.json"
same_json "/api/plan = vramplan plan --format json" "$TEST_TMP/plan.api.untimed.json" \
  "$TEST_TMP/plan.cli.untimed.json"
# The winner's scenario, estimated, has the peak the planner reported for it.
python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1]))["candidates"][0]["scenario"]))' "$RUN_OUT_FILE" \
  >"$TEST_TMP/plan.top.json"
TOP_DEVICE=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["candidates"][0]["peak"]["device_bytes"])' "$RUN_OUT_FILE")
request POST /api/estimate "$TEST_TMP/plan.top.json"
expect_status 200
expect_json "d['peak']['device_bytes'] == $TOP_DEVICE"

case_name "plan options"
request GET /api/plan/options
expect_status 200
expect_json "[o['key'] for o in d['options']][:2] == ['gpus', 'gpus_per_node']"
expect_json "d['limits']['max_gpus'] == 4096 and d['limits']['max_threads'] >= 1"

case_name "plan errors name the field"
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 0, "global_batch": 64}'
expect_error 400 gpus
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 16}'
expect_error 400 global_batch
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 16, "global_batch": 64, "tp": 3}'
expect_error 400 tp
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 16, "global_batch": 64, "top": 0}'
expect_error 400 top
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 8192, "global_batch": 64}'
expect_error 400 gpus
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 16, "global_batch": 64, "threads": 64}'
expect_error 400 threads
post /api/plan '{"model": "/etc/passwd", "gpus": 16, "global_batch": 64}'
expect_error 400 model
post /api/plan 'not json'
expect_error 400 body
request GET /api/plan
expect_error 405 method

case_name "sweep over listed values, one invalid"
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "tp", "values": [1, 2, 3, 4]}'
expect_status 200
expect_json_sane
expect_json "d['vary'] == 'tp' and d['count'] == 4 and d['errors'] == 1"
expect_json "[p['value'] for p in d['points']] == [1, 2, 3, 4]"
expect_json "d['points'][2]['error']['field'] == 'tp' and 'peak' not in d['points'][2]"
expect_json "d['points'][0]['peak']['allocated_bytes'] > d['points'][1]['peak']['allocated_bytes']"
expect_json "d['points'][1]['fit']['gpu'] == 'h100-80gb'"

case_name "sweep point = single estimate"
post /api/estimate '{"model": "Llama-3.1-8B", "tp": 2}'
cp "$RUN_OUT_FILE" "$TEST_TMP/tp2.json"
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "tp", "values": [2]}'
python3 -c 'import json, sys
single = json.load(open(sys.argv[1])); point = json.load(open(sys.argv[2]))["points"][0]
sys.exit(0 if point["peak"] == single["peak"] and point["fit"] == single["fit"][0] else 1)' \
  "$TEST_TMP/tp2.json" "$RUN_OUT_FILE" && pass || fail "sweep peak = estimate peak" "equal" "differ"

case_name "sweep over a range of 1,000 points"
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B", "gpus": 8}, "vary": "seq_len",
  "from": 128, "to": 128000, "step": 128}'
expect_status 200
expect_json "d['count'] == 1000 and d['errors'] == 0 and len(d['points']) == 1000"
expect_json "all(a['peak']['allocated_bytes'] < b['peak']['allocated_bytes'] \
for a, b in zip(d['points'], d['points'][1:]))"

case_name "sweep by factor"
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "seq_len", "from": 1024,
  "to": 32768, "multiply": 2}'
expect_status 200
expect_json "[p['value'] for p in d['points']] == [1024, 2048, 4096, 8192, 16384, 32768]"

case_name "infer options: every serving input, in the shape of /api/options"
request GET /api/infer/options
expect_status 200
expect_json "all(set(o) == {'key', 'flag', 'kind', 'group', 'default', 'help', 'choices'} \
for o in d['options'])"
expect_json "[o for o in d['options'] if o['key'] == 'kv_dtype'][0]['choices'][0] == 'auto'"
expect_json "[o for o in d['options'] if o['key'] == 'gpu_memory_utilization'][0]['kind'] == 'number'"
cp "$RUN_OUT_FILE" "$TEST_TMP/infer_options.json"
"$VRAMPLAN" infer --help >"$TEST_TMP/infer_help.txt"
missing=$(python3 -c 'import json, re, sys
flags = {o["flag"] for o in json.load(open(sys.argv[1]))["options"]}
helped = set(re.findall(r"^\s+(--[a-z0-9-]+)", open(sys.argv[2]).read(), re.M))
ignored = {"--help", "--scenario", "--format", "--color", "--width", "--emit"}  # emit: a request key
print(" ".join(sorted(f for f in helped - flags - ignored if not f.startswith("--no-"))))' \
  "$TEST_TMP/infer_options.json" "$TEST_TMP/infer_help.txt")
check "every infer flag is in /api/infer/options (missing: $missing)" test -z "$missing"

# infer_matches NAME JSON: /api/infer on JSON equals `vramplan infer --scenario FILE --format
# json`, and ?pretty gives exactly the CLI's bytes.
infer_matches() {
  case_name "infer = CLI: $1"
  printf '%s' "$2" >"$TEST_TMP/$1.infer.json"
  "$VRAMPLAN" infer --scenario "$TEST_TMP/$1.infer.json" --format json >"$TEST_TMP/$1.infer.cli.json"
  request POST /api/infer "$TEST_TMP/$1.infer.json"
  expect_status 200
  expect_json_sane
  same_json "/api/infer = vramplan infer --format json" "$RUN_OUT_FILE" "$TEST_TMP/$1.infer.cli.json"
  request POST "/api/infer?pretty=1" "$TEST_TMP/$1.infer.json"
  check "?pretty is byte for byte the CLI's output" cmp -s "$RUN_OUT_FILE" "$TEST_TMP/$1.infer.cli.json"
}
infer_matches llama '{"model": "Llama-3.1-8B", "tp": 2, "context": 8192, "gpu_memory_utilization": 0.9}'
infer_matches fp8 '{"model": "Llama-3.1-70B", "tp": 4, "weight_dtype": "fp8", "kv_dtype": "fp8",
  "context": 32768, "batch": 8}'
infer_matches sglang '{"model": "Qwen3-30B-A3B", "tp": 2, "ep": 2, "mem_fraction_static": 0.85,
  "gpu": "a100-80gb"}'
infer_matches pipeline '{"model": "Llama-3.1-8B", "pp": 2, "attention_dtype": "int4",
  "mlp_dtype": "nf4", "gpu_memory_gib": 24, "gpu_memory_utilization": "0.9"}'
infer_matches inline "{\"model_config\": $(cat "$VRAMPLAN_SOURCE_DIR/data/models/gpt2.json"),
  \"batch\": 4, \"kv_dtype\": \"int8\"}"
request POST /api/infer "$TEST_TMP/llama.infer.json"
expect_json "d['max_kv_tokens'] > 0 and d['max_sequences'] == d['capacity']['max_sequences']"
expect_json "d['kv_bytes_per_token'] == 2 * 32 * (8 // 2) * 128 * 2"  # 2·L·(g/t)·d·bytes

case_name "web UI"
request GET /
expect_status 200
expect_header Content-Type "text/html; charset=utf-8"
expect_header Cache-Control no-cache
cp "$RUN_OUT_FILE" "$TEST_TMP/index.html"
request GET /some/app/route
expect_status 200
check "app routes serve the same page as /" cmp -s "$RUN_OUT_FILE" "$TEST_TMP/index.html"
request HEAD / "" -I
expect_status 200
request GET /assets/no-such-file.js
expect_status 404

finish
