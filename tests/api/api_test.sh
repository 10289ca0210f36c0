#!/usr/bin/env bash
# The HTTP API as a client meets it: starts the real `vramplan serve --port 0` on 127.0.0.1, hits
# every endpoint with curl, checks that /api/estimate is exactly `vramplan estimate --format json`,
# walks through every error case (bad JSON, wrong shapes, invalid scenarios, refused model paths,
# oversized and deeply nested bodies, unknown routes, wrong methods, bad sweeps, malformed HTTP,
# stalled clients), and checks the server is still alive after all of them. Also: serve's own
# bad flags, a port in use, --quiet, and a clean exit on SIGTERM.
#
# usage: bash tests/api/api_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

SERVER_PID=""
cleanup() {
  [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
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

finish
