#!/usr/bin/env bash
# The server's limits (docs/server.md, "Limits") against the real `vramplan serve` on 127.0.0.1:
# a flood of layout searches gets one slot and 429s with Retry-After, /api/health answers while
# the search runs, a search whose client goes away is cancelled, one past --search-seconds answers
# 503, and a declared Content-Length over the limit is answered 413 before any body is sent.
#
# usage: bash tests/api/api_limits_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# A search that runs for many seconds on one thread (DeepSeek-V3 with 120 layers over 4,096 GPUs,
# with the space view, which turns off the search's shortcuts for slow layouts: about 15 s here
# on an idle machine; 61 layers took under 6 s, which a loaded machine's health checks outlasted),
# so that it is still running while the checks below look at it.
SLOW_PLAN='{"model": "DeepSeek-V3", "num_layers": 120, "gpus": 4096, "global_batch": 4096, "seq_len": 4096, "threads": 1, "space": 1500}'
printf '%s' "$SLOW_PLAN" >"$TEST_TMP/slow.json"

# health_json EXPR: GET /api/health (at most 2 s) and evaluate EXPR over it as `d`; prints the
# value ("" when health did not answer).
health_json() {
  curl -s --noproxy '*' --max-time 2 "$BASE/api/health" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null
}

# wait_for EXPR VALUE: polls health for up to 30 s until EXPR prints VALUE.
wait_for() {
  for _ in $(seq 1 300); do
    [[ "$(health_json "$1")" == "$2" ]] && return 0
    sleep 0.1
  done
  return 1
}

# ---------------------------------------------------------------------------------------------
case_name "a flood of searches: one runs, one waits, the rest get 429, health answers"
start_server "$TEST_TMP/limits" --port 0 --quiet --max-searches 1 --search-seconds 120 --threads 8 \
  --search-queue-seconds 1
BASE="http://127.0.0.1:$PORT"
request GET /api/health
expect_status 200
expect_json 'd["searches"]["limit"] == 1 and d["searches"]["running"] == 0'

curl -s --noproxy '*' --max-time 200 -o "$TEST_TMP/slow.out" -H 'Content-Type: application/json' \
  --data-binary "@$TEST_TMP/slow.json" "$BASE/api/plan" &
SLOW_CURL=$!
check "the first search takes the slot" wait_for 'd["searches"]["running"]' 1

pids=()
for i in $(seq 1 12); do
  curl -s --noproxy '*' --max-time 20 -o "$TEST_TMP/flood$i.out" -D "$TEST_TMP/flood$i.headers" \
    -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$TEST_TMP/slow.json" \
    "$BASE/api/plan" >"$TEST_TMP/flood$i.status" &
  pids+=($!)
done
# Health during the flood, with the search running: every one answers (curl gives up after 2 s).
answered=0
for _ in $(seq 1 20); do
  [[ "$(health_json 'd["status"]')" == ok ]] && answered=$((answered + 1))
done
check "health answered 20 of 20 times within 2 s each while the search ran" test "$answered" = 20
for pid in "${pids[@]}"; do wait "$pid"; done
refused=0
for i in $(seq 1 12); do
  if [[ "$(cat "$TEST_TMP/flood$i.status")" == 429 ]] &&
    grep -qi '^Retry-After: 2' "$TEST_TMP/flood$i.headers" &&
    python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['error']; sys.exit(e['field'] != 'request')" \
      "$TEST_TMP/flood$i.out"; then
    refused=$((refused + 1))
  fi
done
check "12 of 12 flood requests answered 429 with Retry-After and an error naming the request" \
  test "$refused" = 12
request GET /api/health
expect_json 'd["searches"]["running"] == 1 and d["searches"]["refused"] == 12'

case_name "a search whose client goes away is cancelled"
kill "$SLOW_CURL" 2>/dev/null
wait "$SLOW_CURL" 2>/dev/null
check "the search stopped and counted as cancelled" wait_for \
  '(d["searches"]["running"], d["searches"]["cancelled"])' "(0, 1)"
# The slot is free again: a small search is answered.
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64, "threads": 1}'
expect_status 200
expect_json 'len(d["candidates"]) > 0'

case_name "a search replacing one whose client went away gets the slot (the browser's way)"
curl -s --noproxy '*' --max-time 200 -o /dev/null -H 'Content-Type: application/json' \
  --data-binary "@$TEST_TMP/slow.json" "$BASE/api/plan" &
SLOW_CURL=$!
check "the slow search takes the slot" wait_for 'd["searches"]["running"]' 1
kill "$SLOW_CURL" 2>/dev/null
wait "$SLOW_CURL" 2>/dev/null
# At once, as a browser sends its new search right after aborting the old one.
post /api/plan '{"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64, "threads": 1}'
expect_status 200
request GET /api/health
expect_json 'd["searches"]["cancelled"] == 2 and d["searches"]["waiting"] == 0'

# read_response(sock): the whole HTTP answer (headers, then Content-Length bytes of body), which
# TCP may deliver in several pieces; "timeout" when nothing came.
cat >"$TEST_TMP/read_response.py" <<'PY'
import socket


def read_response(s):
    """The whole answer: headers, then Content-Length bytes of body (TCP may split them)."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        while len(body) < length:
            chunk = s.recv(4096)
            if not chunk:
                break
            body += chunk
        return (head + b"\r\n\r\n" + body).decode("latin-1") if data else "timeout"
    except socket.timeout:
        return data.decode("latin-1") or "timeout"
PY

case_name "a declared Content-Length over the limit is answered 413 before the body"
# Headers only, then the client waits: the answer must come at once, not after the 10 s read
# timeout (curl gives up after 3 s).
python3 - "$PORT" "$TEST_TMP" >"$TEST_TMP/413.out" <<'PY'
import socket, sys
sys.path.insert(0, sys.argv[2])
from read_response import read_response
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
s.sendall(b"POST /api/estimate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 50000000\r\n\r\n{")
print(read_response(s))
PY
check "413 without waiting for the body" grep -q '^HTTP/1.1 413' "$TEST_TMP/413.out"
check "the 413 names the body" grep -q '"field":"body"' "$TEST_TMP/413.out"
# The same with Expect: 100-continue (curl's way for large bodies): 413 instead of 100 Continue.
python3 - "$PORT" "$TEST_TMP" >"$TEST_TMP/413e.out" <<'PY'
import socket, sys
sys.path.insert(0, sys.argv[2])
from read_response import read_response
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
s.sendall(b"POST /api/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Expect: 100-continue\r\nContent-Length: 50000000\r\n\r\n")
print(read_response(s))
PY
check "413 instead of 100 Continue" grep -q '^HTTP/1.1 413' "$TEST_TMP/413e.out"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""

# ---------------------------------------------------------------------------------------------
case_name "a search past --search-seconds stops and answers 503"
start_server "$TEST_TMP/budget" --port 0 --quiet --search-seconds 0.5
BASE="http://127.0.0.1:$PORT"
request POST /api/plan "$TEST_TMP/slow.json"
expect_status 503
expect_json 'd["error"]["field"] == "search" and "0.5 s" in d["error"]["reason"]'
request GET /api/health
expect_json 'd["searches"]["timed_out"] == 1 and d["searches"]["running"] == 0'

case_name "bad limit flags"
run serve --max-searches 0
expect_exit 2
expect_stderr_contains "--max-searches"
run serve --search-seconds -1
expect_exit 2
expect_stderr_contains "--search-seconds"
run serve --search-queue-seconds -1
expect_exit 2
expect_stderr_contains "--search-queue-seconds"
run serve --max-body-bytes 10
expect_exit 2
expect_stderr_contains "--max-body-bytes"

finish
