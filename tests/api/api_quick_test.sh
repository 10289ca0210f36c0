#!/usr/bin/env bash
# POST /api/quick and GET /api/quick/options (docs/web-api.md): the same JSON as
# `vramplan quick --format json`, byte for byte with ?pretty, and the house errors with 400.
#
# usage: bash tests/api/api_quick_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

serve_on_free_port

case_name "options: every quick flag and the examples"
request GET /api/quick/options
expect_status 200
expect_json "all(set(o) == {'key', 'flag', 'kind', 'group', 'default', 'help', 'choices'} for o in d['options'])"
expect_json "[o['flag'] for o in d['options'] if o['key'] == 'seq_len'] == ['--seq-len']"
expect_json "[e['name'] for e in d['examples']] == ['medium-training', 'serving', 'large-finetune']"

same_as_cli() {
  local name="$1" body="$2"
  shift 2
  "$VRAMPLAN" quick "$@" --format json >"$TEST_TMP/$name.cli.json"
  printf '%s' "$body" >"$TEST_TMP/body.json"
  request POST "/api/quick?pretty=1" "$TEST_TMP/body.json"
  expect_status 200
  check "$name: ?pretty is byte for byte the CLI's output" cmp -s "$RUN_OUT_FILE" "$TEST_TMP/$name.cli.json"
}

case_name "the same JSON as the CLI"
same_as_cli medium '{"params": "700M", "layers": 32, "hidden": 4096, "batch": 8, "seq_len": 2048, "grad_dtype": "fp32"}' \
  --params 700M --layers 32 --hidden 4096 --batch 8 --seq-len 2048 --grad-dtype fp32
for name in medium-training serving large-finetune; do
  same_as_cli "$name" "{\"example\": \"$name\"}" --example "$name"
done
same_as_cli typed '{"params": 1300000000, "layers": "40", "hidden": 5120, "mode": "inference", "kv_cache": true}' \
  --params 1.3B --layers 40 --hidden 5120 --mode inference --kv-cache

case_name "json rows and total"
post /api/quick '{"example": "medium-training"}'
expect_status 200
expect_json_sane
expect_json "d['total_bytes'] == sum(r['bytes'] for r in d['rows']) and len(d['rows']) == 7"

case_name "bad input: 400 naming the field"
post /api/quick '{"params": "lots", "layers": 32, "hidden": 4096}'
expect_status 400
expect_json "d['error']['field'] == 'params' and d['error']['value'] == 'lots' and '700M' in d['error']['accepted']"
post /api/quick '{"params": "700M", "layers": 32, "hidden": 4096, "tp": 2}'
expect_status 400
expect_json "d['error']['field'] == 'tp'"
post /api/quick '[1]'
expect_status 400
expect_json "d['error']['field'] == 'body'"
request GET /api/quick
expect_status 405

finish
