#!/usr/bin/env bash
# The HTTP API as a client meets it: starts the real `vramplan serve --port 0` on 127.0.0.1, hits
# every endpoint with curl, checks that /api/estimate is exactly `vramplan estimate --format json`,
# walks through every error case (bad JSON, wrong shapes, invalid scenarios, refused model paths,
# oversized and deeply nested bodies, unknown routes, wrong methods, bad sweeps, malformed HTTP,
# stalled clients), and checks the server is still alive after all of them. Also: serve's own
# bad flags, a port in use, --quiet, and a clean exit on SIGTERM. /api/infer is exactly
# `vramplan infer --format json`; Hub models ("model": "org/name", GET /api/hub/...) are fetched
# from the fixture Hub (tests/hub/fixture_server.py): success, gated (no token sent unless
# --hub-token), missing, invalid ids, timeouts, an unreachable Hub and HF_HUB_OFFLINE.
#
# usage: bash tests/api/api_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

SERVER_PID=""
HUB_PID=""
cleanup() {
  [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  [[ -n "$HUB_PID" ]] && kill "$HUB_PID" 2>/dev/null && wait "$HUB_PID" 2>/dev/null
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

# start_server LOG_PREFIX ARGS...: starts `vramplan serve ARGS` in the background and sets
# SERVER_PID and PORT once it prints its URL (stdout in $1.out, stderr in $1.err).
start_server() {
  local prefix="$1"
  shift
  : >"$prefix.out"
  "$VRAMPLAN" serve "$@" >"$prefix.out" 2>"$prefix.err" &
  SERVER_PID=$!
  PORT=""
  for _ in $(seq 1 100); do
    PORT=$(sed -n 's#^vramplan: serving http://127\.0\.0\.1:\([0-9]*\)/ (Ctrl-C to stop)$#\1#p' \
      "$prefix.out")
    [[ -n "$PORT" ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "server did not start: $(cat "$prefix.out" "$prefix.err")" >&2
  exit 1
}

start_server "$TEST_TMP/server" --port 0
BASE="http://127.0.0.1:$PORT"
HEADERS_FILE="$TEST_TMP/headers"

# request METHOD PATH [BODY_FILE] [CURL_ARGS...]: sets RUN_RC to the HTTP status, the body in
# $RUN_OUT_FILE / RUN_OUT (so lib.sh's expect_json works on it) and the headers in $HEADERS_FILE.
request() {
  local method="$1" path="$2" body="${3:-}"
  shift 3 2>/dev/null || shift $#
  local args=(-s -S --noproxy '*' --max-time 30 -X "$method" -o "$RUN_OUT_FILE" -D "$HEADERS_FILE"
    -w '%{http_code}')
  [[ -n "$body" ]] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  RUN_CMD="curl -X $method $BASE$path${body:+ --data-binary @$body}"
  RUN_RC=$(curl "${args[@]}" "$@" "$BASE$path" 2>"$RUN_ERR_FILE")
  RUN_OUT="$(cat "$RUN_OUT_FILE")"
  RUN_ERR="$(cat "$RUN_ERR_FILE")"
}

# post PATH JSON_TEXT: POSTs the text as the body.
post() {
  printf '%s' "$2" >"$TEST_TMP/body.json"
  request POST "$1" "$TEST_TMP/body.json"
}

expect_status() { expect_exit "$1"; }  # RUN_RC holds the HTTP status

expect_header() {
  if grep -qi -- "^$1: $2"$'\r'"\?$" "$HEADERS_FILE"; then
    pass
  else
    fail "header $1" "$2" "$(cat "$HEADERS_FILE")"
  fi
}

# expect_error STATUS FIELD: the documented error object, naming FIELD (one python3 run).
expect_error() {
  expect_status "$1"
  expect_header Content-Type application/json
  local problem
  problem=$(python3 -c 'import json, sys
try:
    e = json.load(open(sys.argv[1], encoding="utf-8"))["error"]
except Exception as x:
    sys.exit(f"not an error object: {x}")
keys = {"field", "value", "accepted", "reason", "message"}
if set(e) != keys:
    sys.exit(f"keys {sorted(e)}, expected {sorted(keys)}")
if e["field"] != sys.argv[2]:
    sys.exit(f"field {e['field']!r}, expected {sys.argv[2]!r}")
if not e["message"]:
    sys.exit("empty message")' "$RUN_OUT_FILE" "$2" 2>&1)
  if [[ -z "$problem" ]]; then pass; else fail "error naming $2" "$2" "$problem; body: $RUN_OUT"; fi
}

# same_json WHAT FILE_A FILE_B: the two files hold equal JSON.
same_json() {
  if python3 -c 'import json, sys
a, b = (json.load(open(p, encoding="utf-8")) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)' "$2" "$3"; then
    pass
  else
    fail "$1" "equal JSON" "$(diff <(python3 -m json.tool --sort-keys "$2") \
      <(python3 -m json.tool --sort-keys "$3") | head -20)"
  fi
}

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
# Every flag of `vramplan estimate --help` is an option (model_config is the API-only one).
cp "$RUN_OUT_FILE" "$TEST_TMP/options.json"
"$VRAMPLAN" estimate --help >"$TEST_TMP/help.txt"
missing=$(python3 -c 'import json, re, sys
flags = {o["flag"] for o in json.load(open(sys.argv[1]))["options"]}
helped = set(re.findall(r"^\s+(--[a-z0-9-]+)", open(sys.argv[2]).read(), re.M))
ignored = {"--help", "--scenario", "--format", "--color", "--width"}
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
ignored = {"--help", "--scenario", "--format", "--color", "--width"}
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

# ---------------------------------------------------------------------------------------------
# Errors: each a JSON error naming the field, and the server keeps serving.
case_name "bad JSON"
post /api/estimate '{"model": "Llama-3.1-8B",'
expect_error 400 body
expect_json "'not valid JSON' in d['error']['reason']"

case_name "not an object"
post /api/estimate '[{"model": "Llama-3.1-8B"}]'
expect_error 400 body
post /api/estimate '42'
expect_error 400 body

case_name "empty body"
request POST /api/estimate
expect_error 400 body
: >"$TEST_TMP/empty.json"
request POST /api/estimate "$TEST_TMP/empty.json" -H 'Content-Length: 0'
expect_error 400 body
post /api/estimate '  '
expect_error 400 body

case_name "invalid UTF-8"
printf '{"model": "\xff\xfe"}' >"$TEST_TMP/utf8.json"
request POST /api/estimate "$TEST_TMP/utf8.json"
expect_error 400 body

case_name "unknown key"
post /api/estimate '{"model": "Llama-3.1-8B", "sequence_length": 8192}'
expect_error 400 sequence_length
expect_json "'seq_len' in d['error']['accepted']"

case_name "invalid value"
post /api/estimate '{"model": "Llama-3.1-8B", "seq_len": "long"}'
expect_error 400 seq_len
expect_json "d['error']['value'] == 'long'"
post /api/estimate '{"model": "Llama-3.1-8B", "recompute": "sometimes"}'
expect_error 400 recompute
expect_json "'selective' in d['error']['accepted']"
post /api/estimate '{"model": "Llama-3.1-8B", "micro_batch": -1}'
expect_error 400 micro_batch

case_name "invalid layout"
post /api/estimate '{"model": "Llama-3.1-8B", "tp": 3}'
expect_error 400 tp
expect_json "'divisible' in d['error']['reason']"
post /api/estimate '{"model": "Llama-3.1-8B", "gpus": 8, "tp": 3}'
expect_status 400
post /api/estimate '{"model": "Llama-3.1-8B", "pp": 5}'
expect_status 400

case_name "unknown model"
post /api/estimate '{"model": "Llama-9-1T"}'
expect_error 400 model
request GET /api/models/Llama-9-1T
expect_error 404 name

case_name "model paths are refused, never read"
cp "$VRAMPLAN_SOURCE_DIR/data/models/gpt2.json" "$TEST_TMP/config.json"
for path in "$TEST_TMP/config.json" ./config.json ../config.json "~/config.json" /etc/passwd; do
  post /api/estimate "{\"model\": \"$path\"}"
  expect_error 400 model
  expect_json "'does not read files' in d['error']['reason'] and 'model_config' in d['error']['accepted']"
done

case_name "infer errors name the setting"
post /api/infer '{"model": "Llama-3.1-8B", "tp": 3}'
expect_error 400 tp
post /api/infer '{"model": "Llama-3.1-8B", "kv_dtype": "fp9"}'
expect_error 400 kv_dtype
expect_json "'int8' in d['error']['accepted']"
post /api/infer '{"model": "Llama-3.1-8B", "weight_dtype": "q4_k"}'
expect_error 400 weight_dtype
post /api/infer '{"model": "Llama-3.1-8B", "gpu_memory_utilization": 1.5}'
expect_error 400 gpu_memory_utilization
post /api/infer '{"model": "Llama-3.1-8B", "context": "long"}'
expect_error 400 context
post /api/infer '{"model": "Llama-3.1-8B", "seq_len": 4096}'
expect_error 400 seq_len
expect_json "'context' in d['error']['accepted']"
post /api/infer '{"model": "Llama-3.1-8B", "gpu": "tpu-v5"}'
expect_error 400 gpu
post /api/infer '{"model": "/etc/passwd"}'
expect_error 400 model
expect_json "'does not read files' in d['error']['reason']"
post /api/infer '[1]'
expect_error 400 body
request GET /api/infer
expect_error 405 method
expect_header Allow POST
post /api/infer/options '{}'
expect_error 405 method

case_name "Hub ids that are not ids are refused without network"
post /api/estimate '{"model": "org/na..me"}'
expect_error 400 model
post /api/infer '{"model": "https://evil.example/org/name"}'
expect_error 400 model
request GET /api/hub/org/na..me
expect_error 400 model
request GET /api/hub/Llama-3.1-8B
expect_error 400 model
request GET /api/hub
expect_error 404 path

case_name "oversized body"
python3 -c 'import sys; sys.stdout.write("{\"model\": \"" + "x" * (2 << 20) + "\"}")' \
  >"$TEST_TMP/big.json"
request POST /api/estimate "$TEST_TMP/big.json"
expect_error 413 body
request POST /api/estimate "$TEST_TMP/big.json" -H 'Transfer-Encoding: chunked'
expect_error 413 body

case_name "deeply nested body"
python3 -c 'import sys; sys.stdout.write("{\"model_config\": " + "[" * 200000 + "]" * 200000 + "}")' \
  >"$TEST_TMP/deep.json"
request POST /api/estimate "$TEST_TMP/deep.json"
expect_error 400 body

case_name "unknown routes"
request GET /api/nope
expect_error 404 path
expect_json "'POST /api/estimate' in d['error']['accepted']"
post /api/estimates '{}'
expect_error 404 path

case_name "wrong methods"
request GET /api/estimate
expect_error 405 method
expect_header Allow POST
request DELETE /api/models
expect_error 405 method
post /api/gpus '{}'
expect_error 405 method
post / '{}'
expect_error 405 method

case_name "bad sweeps"
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "sequence", "values": [1]}'
expect_error 400 vary
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "seq_len", "from": 1,
  "to": 100000, "step": 1}'
expect_error 400 step
expect_json "'10000' in d['error']['accepted']"
python3 -c 'import json; print(json.dumps({"scenario": {"model": "gpt2"}, "vary": "seq_len",
  "values": list(range(1, 10002))}))' >"$TEST_TMP/many.json"
request POST /api/sweep "$TEST_TMP/many.json"
expect_error 400 values
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "recompute", "from": 1, "to": 3,
  "step": 1}'
expect_error 400 from
post /api/sweep '{"vary": "tp", "values": [1]}'
expect_error 400 scenario
post /api/sweep '{"scenario": {"model": "Llama-3.1-8B"}, "vary": "tp", "values": [1], "by": 2}'
expect_error 400 by

case_name "malformed HTTP and stalled clients"
malformed=$(python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GARBAGE\r\n\r\n")
print(s.recv(4096).split(b"\r\n")[0].decode())' "$PORT")
check "a malformed request line gets 400 (got: $malformed)" test "$malformed" = "HTTP/1.1 400 Bad Request"
# A client that sends half a request and stalls holds one worker, not the server.
python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /api/estimate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
time.sleep(3)' "$PORT" &
stalled=$!
sleep 0.5
request GET /api/health
expect_status 200
kill "$stalled" 2>/dev/null
wait "$stalled" 2>/dev/null

case_name "still alive after every error"
check "server process is running" kill -0 "$SERVER_PID"
request GET /api/health
expect_status 200
post /api/estimate '{"model": "Llama-3.1-8B"}'
expect_status 200

case_name "one log line per request"
log="$(cat "$TEST_TMP/server.err")"
check "stderr logs method, path, status and microseconds" \
  grep -Eq '^vramplan: POST /api/estimate 200 [0-9]+ us$' "$TEST_TMP/server.err"
check "stderr logs the 413" grep -Eq '^vramplan: POST /api/estimate 413 ' "$TEST_TMP/server.err"

case_name "SIGTERM stops it cleanly"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
rc=$?
SERVER_PID=""
check "exit code 0 after SIGTERM (got $rc)" test "$rc" = 0
check "says it stopped" grep -q 'vramplan: stopped' "$TEST_TMP/server.err"

# ---------------------------------------------------------------------------------------------
case_name "--quiet logs nothing per request"
start_server "$TEST_TMP/quiet" --port 0 --quiet
BASE="http://127.0.0.1:$PORT"
request GET /api/health
expect_status 200
QUIET_PORT="$PORT"

case_name "port in use"
run serve --port "$QUIET_PORT"
expect_exit 2
expect_stderr_contains "--port = $QUIET_PORT"
expect_stderr_contains "in use"
kill -INT "$SERVER_PID"
wait "$SERVER_PID"
SERVER_PID=""
check "quiet server logged no requests" test -z "$(grep -v -e stopping -e stopped "$TEST_TMP/quiet.err")"

case_name "bad serve flags"
run serve --port 70000
expect_exit 2
expect_stderr_contains "--port"
run serve --port http
expect_exit 2
run serve --host no-such-host.invalid --port 0
expect_exit 2
expect_stderr_contains "--host = no-such-host.invalid"
run serve --host 192.0.2.1 --port 0  # an address this machine does not have
expect_exit 2
expect_stderr_contains "--port"

# ---------------------------------------------------------------------------------------------
# Hub models against the fixture Hub. Nothing from the machine's own Hugging Face set-up may leak
# in; the host HAS a token (HF_TOKEN), which the server must not send unless --hub-token.
unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_TOKEN_PATH HF_HUB_OFFLINE TRANSFORMERS_OFFLINE \
  HF_HUB_DISABLE_IMPLICIT_TOKEN HF_HUB_CACHE HUGGINGFACE_HUB_CACHE VRAMPLAN_HUB_REFRESH \
  VRAMPLAN_HUB_TIMEOUT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE
export HF_HOME="$TEST_TMP/hf" VRAMPLAN_CACHE_DIR="$TEST_TMP/vramplan"
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
FIXTURE_DIR="$VRAMPLAN_SOURCE_DIR/tests/hub"
python3 "$FIXTURE_DIR/fixture_server.py" --slow 4 >"$TEST_TMP/hub_urls.json" &
HUB_PID=$!
for _ in $(seq 100); do
  [[ -s "$TEST_TMP/hub_urls.json" ]] && break
  sleep 0.1
done
HUB=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hub"])' "$TEST_TMP/hub_urls.json")
check "the fixture Hub started" test -n "$HUB"
hub_log() { curl -s --noproxy '*' "$HUB/__log"; }
curl -s --noproxy '*' "$HUB/__clear" >/dev/null

case_name "serve fetches Hub models without the host's token"
HF_ENDPOINT="$HUB" HF_TOKEN=hf_fixture_valid_token VRAMPLAN_HUB_TIMEOUT=2 \
  start_server "$TEST_TMP/hub_server" --port 0
BASE="http://127.0.0.1:$PORT"
request GET /api/health
expect_json "d['hub']['endpoint'] == '$HUB' and d['hub']['sends_token'] is False"

case_name "GET /api/hub: commit, config, checkpoint and notes"
request GET /api/hub/tiny-org/tiny-llama
expect_status 200
expect_json "len(d['commit']) == 40 and d['model'] == 'tiny-org/tiny-llama'"
expect_json "d['config'] == json.load(open('$FIXTURE_DIR/repos/tiny-org/tiny-llama/main/config.json'))"
expect_json "d['parameters']['total'] == 106816 and d['checkpoint']['params'] == 106816"
expect_json "d['checkpoint']['commit'] == d['commit'] and d['model_error'] is None"
expect_json "any('downloaded from $HUB' in n for n in d['notes'])"
COMMIT=$(json_value "d['commit']")
request GET /api/hub/tiny-org/tiny-llama@v1.0
expect_status 200
expect_json "d['commit'] != '$COMMIT'"
request GET /api/hub/tiny-org%2Ftiny-llama
expect_status 200

case_name "a Hub model in /api/estimate and /api/infer is what the CLI prints"
post /api/estimate '{"model": "tiny-org/tiny-llama", "seq_len": 512}'
expect_status 200
expect_json "d['checkpoint']['available'] and d['parameters']['total'] == 106816"
expect_json "any('config.json of tiny-org/tiny-llama (commit ${COMMIT:0:12})' in w for w in d['warnings'])"
HF_ENDPOINT="$HUB" "$VRAMPLAN" estimate --model tiny-org/tiny-llama --seq-len 512 --format json \
  >"$TEST_TMP/hub_cli.json"
same_json "/api/estimate = vramplan estimate for a Hub model" "$RUN_OUT_FILE" "$TEST_TMP/hub_cli.json"
post /api/infer '{"model": "tiny-org/tiny-llama", "context": 256, "gpu_memory_utilization": 0.5}'
expect_status 200
expect_json "d['checkpoint']['available'] and d['max_kv_tokens'] > 0"
HF_ENDPOINT="$HUB" "$VRAMPLAN" infer --model tiny-org/tiny-llama --context 256 \
  --gpu-memory-utilization 0.5 --format json >"$TEST_TMP/hub_infer_cli.json"
same_json "/api/infer = vramplan infer for a Hub model" "$RUN_OUT_FILE" "$TEST_TMP/hub_infer_cli.json"

case_name "gated: 403, and the host's token was never sent"
request GET /api/hub/gated-org/gated-llama
expect_error 403 model
expect_json "'gated or private' in d['error']['reason'] and '--hub-token' in d['error']['reason']"
post /api/estimate '{"model": "gated-org/gated-llama"}'
expect_error 403 model
hub_log >"$TEST_TMP/hub_log.json"
check "no request carried a token" python3 -c 'import json, sys
log = json.load(open(sys.argv[1]))
sys.exit(0 if log and all(not r.get("authorization") for r in log) else 1)' "$TEST_TMP/hub_log.json"

case_name "missing repository, revision and config: 404"
request GET /api/hub/tiny-org/no-such-repo
expect_error 404 model
request GET /api/hub/tiny-org/tiny-llama@no-such-branch
expect_error 404 model
expect_json "'no-such-branch' in d['error']['reason']"
post /api/infer '{"model": "tiny-org/no-config"}'
expect_error 404 model

case_name "answers that are not the Hub's: 502; too slow: 504"
request GET /api/hub/tiny-org/not-json
expect_error 502 model
post /api/estimate '{"model": "tiny-org/server-error"}'
expect_error 502 model
post /api/estimate '{"model": "tiny-org/slow"}'
expect_error 504 model
expect_json "'VRAMPLAN_HUB_TIMEOUT' in d['error']['reason']"
post /api/estimate '{"model": "tiny-org/tiny-llama", "tp": 3}'
expect_error 400 tp

case_name "--hub-token sends the host's token"
HUB_SERVER_PID=$SERVER_PID
HF_ENDPOINT="$HUB" HF_TOKEN=hf_fixture_valid_token start_server "$TEST_TMP/token_server" --port 0 \
  --hub-token
TOKEN_PID=$SERVER_PID
BASE="http://127.0.0.1:$PORT"
request GET /api/health
expect_json "d['hub']['sends_token'] is True"
curl -s --noproxy '*' "$HUB/__clear" >/dev/null
request GET /api/hub/gated-org/gated-llama
expect_status 200
expect_json "d['config']['model_type'] == 'llama'"
check "the token went to the Hub" python3 -c 'import json, sys
log = json.load(sys.stdin)
sys.exit(0 if any(r.get("authorization") == "Bearer hf_fixture_valid_token" for r in log) else 1)' \
  < <(hub_log)
kill "$TOKEN_PID"
wait "$TOKEN_PID" 2>/dev/null
SERVER_PID=$HUB_SERVER_PID

case_name "serve --hub-token without a token, and a bad HF_ENDPOINT, exit 2"
run serve --port 0 --hub-token
expect_exit 2
expect_stderr_contains "--hub-token"
expect_stderr_contains "no Hugging Face token"
HF_ENDPOINT="ftp://hub" run serve --port 0
expect_exit 2
expect_stderr_contains "HF_ENDPOINT = ftp://hub"

case_name "the Hub unreachable: 502, models in the cache still work"
kill "$HUB_PID"
wait "$HUB_PID" 2>/dev/null
HUB_PID=""
BASE="http://127.0.0.1:$(sed -n 's#^vramplan: serving http://127\.0\.0\.1:\([0-9]*\)/.*#\1#p' \
  "$TEST_TMP/hub_server.out")"
post /api/estimate '{"model": "tiny-org/tiny-sharded"}'
expect_error 502 model
expect_json "'cannot reach' in d['error']['reason']"
post /api/estimate '{"model": "tiny-org/tiny-llama", "seq_len": 512}'
expect_status 200
request GET /api/hub/tiny-org/tiny-llama
expect_status 200
expect_json "any('read from the Hugging Face cache' in n for n in d['notes'])"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null

case_name "HF_HUB_OFFLINE: 503 for a model not in the cache"
HF_ENDPOINT="$HUB" HF_HUB_OFFLINE=1 start_server "$TEST_TMP/offline_server" --port 0
BASE="http://127.0.0.1:$PORT"
request GET /api/health
expect_json "d['hub']['offline'] is True"
request GET /api/hub/tiny-org/tiny-sharded
expect_error 503 model
expect_json "'HF_HUB_OFFLINE' in d['error']['reason']"
post /api/infer '{"model": "tiny-org/tiny-llama"}'
expect_status 200
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""

finish
