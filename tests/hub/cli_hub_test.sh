#!/usr/bin/env bash
# `vramplan estimate --model org/name[@revision]` as a user meets it, against the local fixture
# Hub (tests/hub/fixture_server.py on 127.0.0.1): downloads into the Hugging Face cache layout,
# the checkpoint report, offline use of the cache with the server gone, a cache laid out by
# transformers, and each error with its exit code.
#
# usage: bash tests/hub/cli_hub_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TINY_PARAMS=106816  # see the fixture's config: src/hub/hub_client_test.cc works it out

# Nothing from the machine's own Hugging Face set-up may leak in: no token, no real cache.
unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_TOKEN_PATH HF_HUB_OFFLINE TRANSFORMERS_OFFLINE \
  HF_HUB_DISABLE_IMPLICIT_TOKEN HF_HUB_CACHE HUGGINGFACE_HUB_CACHE VRAMPLAN_HUB_REFRESH \
  VRAMPLAN_HUB_TIMEOUT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE
export HF_HOME="$TEST_TMP/hf" VRAMPLAN_CACHE_DIR="$TEST_TMP/vramplan"
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
CACHE="$HF_HOME/hub"

# Starts the fixture Hub; sets HUB, HTTPS_HUB, CA and SERVER_PID.
SERVER_PID=""
start_server() {
  local urls="$TEST_TMP/urls.json"
  python3 "$HERE/fixture_server.py" --https --slow 4 >"$urls" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    [[ -s "$urls" ]] && break
    sleep 0.1
  done
  read -r HUB HTTPS_HUB CA < <(python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))
print(u["hub"], u["https"], u["ca"])' "$urls")
  export HF_ENDPOINT="$HUB"
}
stop_server() {
  [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
}
trap 'stop_server; rm -rf "$TEST_TMP"' EXIT

requests() { curl -s "$HUB/__log" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
clear_log() { curl -s "$HUB/__clear" >/dev/null; }

# json_check WHAT PYTHON_EXPRESSION: the expression over d (the last stdout as JSON) is true.
json_check() {
  local result
  if result=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[2]))
sys.exit(0 if eval(sys.argv[1]) else 1)' "$2" "$RUN_OUT_FILE" 2>&1); then
    pass
  else
    fail "$1: $2" "true" "${result:-false}"
  fi
}

# bad_model TEXT MODEL [ENV=VALUE...]: exits 2 with one line naming --model and TEXT.
bad_model() {
  local text="$1" model="$2"
  shift 2
  case_name "--model $model ${*:-}"
  run_env "$@" -- estimate --model "$model"
  expect_exit 2
  expect_stderr_contains "vramplan: error: --model = $model"
  expect_stderr_contains "$text"
  expect_stderr_lines 1
  expect_stdout_empty
}

# run_env ENV=VALUE... -- ARGS...: `run` with extra environment variables.
run_env() {
  local vars=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do
    vars+=("$1")
    shift
  done
  shift
  RUN_CMD="${vars[*]:-} vramplan$(printf ' %q' "$@")"
  env "${vars[@]}" timeout "$RUN_TIMEOUT" "$VRAMPLAN" "$@" >"$RUN_OUT_FILE" 2>"$RUN_ERR_FILE"
  RUN_RC=$?
  RUN_OUT="$(cat "$RUN_OUT_FILE")"
  RUN_ERR="$(cat "$RUN_ERR_FILE")"
}

start_server
check "the fixture Hub started" test -n "$HUB"

case_name "first run downloads config.json into the Hugging Face cache"
run estimate --model tiny-org/tiny-llama
expect_exit 0
expect_stdout_contains "config.json of tiny-org/tiny-llama (commit"
expect_stdout_contains "downloaded from $HUB"
expect_stdout_contains "the same as vramplan's parameter count"
REPO="$CACHE/models--tiny-org--tiny-llama"
COMMIT="$(cat "$REPO/refs/main" 2>/dev/null)"
check "refs/main holds a commit" test "${#COMMIT}" = 40
check "the snapshot links into blobs" test -L "$REPO/snapshots/$COMMIT/config.json"
check "the snapshot holds the fixture's config" \
  cmp -s "$REPO/snapshots/$COMMIT/config.json" "$HERE/repos/tiny-org/tiny-llama/main/config.json"

case_name "JSON output carries the checkpoint beside the computed count"
clear_log
run estimate --model tiny-org/tiny-llama --format json
expect_exit 0
json_check "checkpoint" "d['checkpoint']['available'] and d['checkpoint']['params'] == $TINY_PARAMS"
json_check "dtypes" "d['checkpoint']['dtypes'] == {'BF16': $TINY_PARAMS}"
json_check "stored bytes" "d['checkpoint']['total_bytes'] == 2 * $TINY_PARAMS"
json_check "computed count" "d['parameters']['total'] == d['checkpoint']['params']"
json_check "source" "d['checkpoint']['source'] == 'model.safetensors header'"
json_check "notes" "any('read from the Hugging Face cache' in w for w in d['warnings'])"
check "a cached model and checkpoint need no request" test "$(requests)" = 0

case_name "sharded checkpoint: index plus shard headers, two dtypes"
run estimate --model tiny-org/tiny-sharded --format json
expect_exit 0
json_check "dtypes" "d['checkpoint']['dtypes'] == {'BF16': $TINY_PARAMS - 320, 'F32': 320}"
json_check "files" "d['checkpoint']['files'] == 2"

case_name "a revision"
run estimate --model tiny-org/tiny-llama@v1.0 --format json
expect_exit 0
json_check "four layers at v1.0" "d['scenario']['model']['num_layers'] == 4"
check "refs/v1.0 recorded" test -f "$REPO/refs/v1.0"

case_name "a model without safetensors still estimates, with a note"
run estimate --model tiny-org/no-weights
expect_exit 0
expect_stdout_contains "checkpoint size and dtypes not available: no safetensors weights"

case_name "a preset's Hub id stays offline"
clear_log
run estimate --model meta-llama/Llama-3.1-8B --format json
expect_exit 0
check "no request for a preset" test "$(requests)" = 0

case_name "a local file of that name wins over the Hub"
mkdir -p "$TEST_TMP/work/tiny-org"
sed 's/"hidden_size": 64/"hidden_size": 128/' "$HERE/repos/tiny-org/tiny-llama/main/config.json" \
  >"$TEST_TMP/work/tiny-org/tiny-llama"
clear_log
pushd "$TEST_TMP/work" >/dev/null
run estimate --model tiny-org/tiny-llama --format json
popd >/dev/null
expect_exit 0
json_check "the local config was read" "d['scenario']['model']['hidden'] == 128 and 'checkpoint' not in d"
check "no request for a local file" test "$(requests)" = 0

case_name "gated repository"
bad_model "gated-org/gated-llama is gated or private (HTTP 401)" gated-org/gated-llama
expect_stderr_contains "set HF_TOKEN or run \`huggingface-cli login\`"
bad_model "the token from HF_TOKEN was refused (HTTP 403)" gated-org/gated-llama HF_TOKEN=hf_wrong
case_name "gated repository with the right token"
run_env HF_TOKEN=hf_fixture_valid_token -- estimate --model gated-org/gated-llama
expect_exit 0
case_name "the token file huggingface-cli login writes"
rm -rf "$CACHE/models--gated-org--gated-llama"
mkdir -p "$HF_HOME" && printf 'hf_fixture_valid_token\n' >"$HF_HOME/token"
run estimate --model gated-org/gated-llama
expect_exit 0
rm -rf "$CACHE/models--gated-org--gated-llama"
bad_model "gated or private (HTTP 401)" gated-org/gated-llama HF_HUB_DISABLE_IMPLICIT_TOKEN=1
rm -f "$HF_HOME/token"

bad_model "no model repository tiny-org/nope on $HUB" tiny-org/nope
bad_model "has no revision 'no-such-branch'" tiny-org/tiny-llama@no-such-branch
bad_model "tiny-org/no-config has no config.json" tiny-org/no-config
bad_model "is not JSON (text/html" tiny-org/not-json
bad_model "more than 10 MiB" tiny-org/huge
bad_model "within 1 s" tiny-org/slow VRAMPLAN_HUB_TIMEOUT=1
# (a model not yet cached: the cache would answer without asking any endpoint)
bad_model "TLS failure talking to $HTTPS_HUB" tiny-org/big-header HF_ENDPOINT="$HTTPS_HUB"
case_name "TLS with the certificate trusted"
run_env HF_ENDPOINT="$HTTPS_HUB" CURL_CA_BUNDLE="$CA" -- estimate --model tiny-org/big-header
expect_exit 0
expect_stdout_contains "downloaded from $HTTPS_HUB"

case_name "ids that are not Hub ids never reach the network"
clear_log
bad_model "a URL" "https://huggingface.co/tiny-org/tiny-llama"
bad_model "more than one '/'" tiny-org/tiny-llama/extra
bad_model 'cannot contain "--" or ".."' tiny-org/tiny..llama
bad_model "organisation or user" NoSuchPreset
check "no request for bad ids" test "$(requests)" = 0

case_name "bad Hub settings name the variable"
run_env HF_ENDPOINT=ftp://example.org -- estimate --model tiny-org/other
expect_exit 2
expect_stderr_contains "HF_ENDPOINT = ftp://example.org"
run_env VRAMPLAN_HUB_TIMEOUT=soon -- estimate --model tiny-org/other
expect_exit 2
expect_stderr_contains "VRAMPLAN_HUB_TIMEOUT = soon"
run_env HF_ENDPOINT=ftp://example.org -- estimate --model Llama-3.1-8B
expect_exit 0  # settings are read only when the Hub is needed

stop_server

case_name "offline with the server gone: the cache answers"
run_env HF_HUB_OFFLINE=1 -- estimate --model tiny-org/tiny-llama --format json
expect_exit 0
json_check "checkpoint kept by commit" "d['checkpoint']['params'] == $TINY_PARAMS"
bad_model "HF_HUB_OFFLINE is set and config.json of tiny-org/never-fetched" tiny-org/never-fetched \
  HF_HUB_OFFLINE=1
case_name "server gone, not offline: cached revisions still work, others say how to go offline"
run estimate --model tiny-org/tiny-llama@v1.0
expect_exit 0
bad_model "cannot reach $HUB" tiny-org/never-fetched
expect_stderr_contains "HF_HUB_OFFLINE=1"

case_name "a cache laid out by transformers is found without network"
TF_CACHE="$TEST_TMP/transformers-cache"
TF_REPO="$TF_CACHE/models--someone--downloaded"
TF_COMMIT=4444444444444444444444444444444444444444
mkdir -p "$TF_REPO/blobs" "$TF_REPO/refs" "$TF_REPO/snapshots/$TF_COMMIT"
cp "$HERE/repos/tiny-org/tiny-llama/main/config.json" "$TF_REPO/blobs/0a1b2c3d"
ln -s ../../blobs/0a1b2c3d "$TF_REPO/snapshots/$TF_COMMIT/config.json"
printf '%s' "$TF_COMMIT" >"$TF_REPO/refs/main"
run_env HF_HUB_CACHE="$TF_CACHE" HF_HUB_OFFLINE=1 -- estimate --model someone/downloaded --format json
expect_exit 0
json_check "the cached config was read" "d['parameters']['total'] == $TINY_PARAMS"
json_check "no checkpoint offline without weights" "d['checkpoint']['available'] == False"

finish
