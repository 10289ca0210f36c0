# Helpers of the HTTP API tests (tests/api/*_test.sh), sourced after `set -u`: the CLI tests'
# lib.sh, plus starting `vramplan serve` (and the fixture Hub) and requests with curl.
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

# serve_on_free_port: starts the server every test script shares and sets BASE.
serve_on_free_port() {
  start_server "$TEST_TMP/server" --port 0
  BASE="http://127.0.0.1:$PORT"
}
HEADERS_FILE="$TEST_TMP/headers"
