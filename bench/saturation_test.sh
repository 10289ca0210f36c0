#!/usr/bin/env bash
# Saturation test of `vramplan serve`'s limits (docs/server.md, "Limits"), loopback only: for
# SECONDS, wrk floods POST /api/plan (far more connections than search slots) while other wrk
# instances hit POST /api/estimate and GET /api/health; the server's RSS is sampled each second.
# Prints per endpoint: requests, 200s, 429s, anything else, p50/p99/max latency; and RSS at the
# start, its peak and at the end. Asserts nothing about time (docs/performance.md has a run).
#
# usage: bench/saturation_test.sh [path/to/vramplan] [seconds]   (default build/vramplan, 60 s)
#   PLAN_CONNECTIONS (default 16), MAX_SEARCHES (default: the server's), SEARCH_SECONDS (30)
set -euo pipefail
cd "$(dirname "$0")/.."
vramplan="${1:-build/vramplan}"
seconds="${2:-60}"
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "saturation_test.sh: $tool is not installed (scripts/setup.sh)" >&2; exit 1; }
done
[[ -x "$vramplan" ]] || { echo "saturation_test.sh: no $vramplan (scripts/build.sh first)" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/vramplan-saturation.XXXXXX")"
server_args=(serve --host 127.0.0.1 --port 0 --quiet --search-seconds "${SEARCH_SECONDS:-30}")
[[ -n "${MAX_SEARCHES:-}" ]] && server_args+=(--max-searches "$MAX_SEARCHES")
"$vramplan" "${server_args[@]}" >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's#^vramplan: serving http://127\.0\.0\.1:\([0-9]*\)/.*#\1#p' "$tmp/serve.out")
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || { echo "saturation_test.sh: the server did not start: $(cat "$tmp/serve.err")" >&2; exit 1; }
base="http://127.0.0.1:$port"
limit=$(curl -s --noproxy '*' "$base/api/health" | python3 -c 'import json,sys; print(json.load(sys.stdin)["searches"]["limit"])')
echo "== machine: $(nproc) CPUs; $seconds s; search slots: $limit; plan connections: ${PLAN_CONNECTIONS:-16}"

rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
rss_start=$(rss)

flood() {  # LABEL METHOD PATH CONNECTIONS BODY
  VRAMPLAN_METHOD="$2" VRAMPLAN_BODY="$5" wrk -t1 -c"$4" -d"${seconds}s" --timeout 60s \
    -s bench/saturation.lua "$base$3" | grep '^RESULT' >"$tmp/$1.result"
}
flood plan POST /api/plan "${PLAN_CONNECTIONS:-16}" \
  '{"model": "Llama-3.1-70B", "gpus": 512, "global_batch": 1024, "seq_len": 4096}' &
floods=($!)
flood estimate POST /api/estimate 4 \
  '{"model": "DeepSeek-V3", "gpus": 1024, "tp": 2, "pp": 16, "ep": 64, "seq_len": 4096, "global_batch": 2048, "first_stage_layers": 4, "last_stage_layers": 1}' &
floods+=($!)
flood health GET /api/health 2 '' &
floods+=($!)
peak=$rss_start
for _ in $(seq 1 "$seconds"); do
  sleep 1
  now=$(rss)
  ((now > peak)) && peak=$now
done
wait "${floods[@]}"
rss_end=$(rss)

for endpoint in plan estimate health; do
  line=$(cat "$tmp/$endpoint.result")
  # shellcheck disable=SC2086
  local_vars="${line#RESULT }"
  eval "$local_vars"
  printf '%-9s %7s req  %7s req/s  200: %6s  429: %6s  other: %s  socket errors: %s  timeouts: %s  p50 %8s us  p99 %9s us  max %9s us\n' \
    "$endpoint" "$requests" "$rps" "$ok" "$refused" "$other" "$socket_errors" "$timeouts" \
    "$p50_us" "$p99_us" "$max_us"
done
curl -s --noproxy '*' "$base/api/health" | python3 -c '
import json, sys
s = json.load(sys.stdin)["searches"]
print("searches: " + ", ".join(f"{k} {v}" for k, v in s.items()))'
echo "server RSS: start $((rss_start / 1024)) MiB, peak $((peak / 1024)) MiB, end $((rss_end / 1024)) MiB"
