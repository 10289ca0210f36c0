#!/usr/bin/env bash
# The HTTP API's errors: each a JSON error naming the field, and the server keeps serving (bad
# JSON, wrong shapes, invalid scenarios, refused model paths, oversized and deeply nested bodies,
# unknown routes, wrong methods, bad sweeps, malformed HTTP, stalled clients); one log line per
# request, and a clean exit on SIGTERM.
#
# usage: bash tests/api/api_errors_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve_on_free_port

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

finish
