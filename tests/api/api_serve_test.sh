#!/usr/bin/env bash
# `vramplan serve` itself and the Hub behind it: --quiet, a port in use, bad flags; Hub models
# ("model": "org/name", GET /api/hub/...) from the fixture Hub (tests/hub/fixture_server.py):
# success, gated (no token sent unless --hub-token), missing, invalid ids, timeouts, an
# unreachable Hub and HF_HUB_OFFLINE.
#
# usage: bash tests/api/api_serve_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

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

case_name "the token never appears in an answer or the server's log"
: >"$TEST_TMP/answers"
keep_answer() { cat "$HEADERS_FILE" "$RUN_OUT_FILE" >>"$TEST_TMP/answers"; }
request GET /api/health
keep_answer
request GET /api/hub/gated-org/gated-llama
keep_answer
post /api/estimate '{"model": "gated-org/gated-llama", "seq_len": 512}'
expect_status 200
keep_answer
request GET /api/hub/gated-org/no-such-model
keep_answer
post /api/plan '{"model": "gated-org/gated-llama", "gpus": 0}'
keep_answer
check "the answers were kept" test -s "$TEST_TMP/answers"
check "no answer holds the token" bash -c "! grep -q hf_fixture_valid_token '$TEST_TMP/answers'"
check "the server's log does not hold the token" \
  bash -c "! grep -q hf_fixture_valid_token '$TEST_TMP/token_server.out' '$TEST_TMP/token_server.err'"
check "the server logged the requests (the log was looked at)" \
  grep -q 'GET /api/hub/gated-org/gated-llama 200' "$TEST_TMP/token_server.err"
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
