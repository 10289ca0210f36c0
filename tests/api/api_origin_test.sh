#!/usr/bin/env bash
# Where requests may come from and the headers every answer carries (docs/web-api.md, "Origin
# and headers"), against the real `vramplan serve` on 127.0.0.1: a page of another site cannot
# make a visitor's browser POST to the server, the server's own pages and clients without an
# Origin can, and the app and the API answer with a Content-Security-Policy.
#
# usage: bash tests/api/api_origin_test.sh path/to/vramplan
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
serve_on_free_port
ESTIMATE='{"model": "Llama-3.1-8B", "seq_len": 1024}'

case_name "the app and the API carry a Content-Security-Policy and no framing"
for path in / /api/health /api/nothing-here; do
  request GET "$path"
  expect_header Content-Security-Policy "default-src 'self'; script-src 'self'; style-src 'self'.*"
  expect_header X-Frame-Options DENY
  expect_header X-Content-Type-Options nosniff
  expect_header Referrer-Policy no-referrer
done
check "one nosniff header, not two" test "$(grep -ci '^X-Content-Type-Options' "$HEADERS_FILE")" = 1

case_name "a POST from another site's page is refused 403 naming the origin"
post_from() {
  printf '%s' "$ESTIMATE" >"$TEST_TMP/body.json"
  request POST /api/estimate "$TEST_TMP/body.json" "$@"
}
post_from -H 'Origin: http://evil.example'
expect_error 403 origin
expect_json "d['error']['value'] == 'http://evil.example'"
expect_json "'http://127.0.0.1:$PORT' in d['error']['accepted']"
post_from -H "Origin: http://127.0.0.1:$((PORT == 65535 ? PORT - 1 : PORT + 1))"
expect_error 403 origin
post_from -H 'Origin: null'
expect_error 403 origin
post_from -H 'Sec-Fetch-Site: cross-site'
expect_error 403 origin
# A plan search from another site never starts: the refusal comes before the search slot.
printf '%s' '{"model": "Llama-3.1-8B", "gpus": 8, "global_batch": 64}' >"$TEST_TMP/plan.json"
request POST /api/plan "$TEST_TMP/plan.json" -H 'Origin: http://evil.example'
expect_error 403 origin

case_name "the server's own pages, and clients sending no Origin, are answered"
post_from -H "Origin: http://127.0.0.1:$PORT" -H 'Sec-Fetch-Site: same-origin'
expect_status 200
expect_json "d['peak']['device_bytes'] > 0"
post_from
expect_status 200
# Reading is allowed from anywhere (nothing is changed, and the browser keeps the answer from a
# page of another site unless CORS allows it, which this server never does).
request GET /api/health "" -H 'Origin: http://evil.example'
expect_status 200
check "no CORS header lets another site read answers" \
  bash -c "! grep -qi '^Access-Control-Allow-Origin' '$HEADERS_FILE'"

finish
