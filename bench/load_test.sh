#!/usr/bin/env bash
# Load test of `vramplan serve` on loopback: requests/s and latency percentiles of
# POST /api/estimate and POST /api/infer under wrk (keep-alive connections), then the wall time
# of a 1,000-point POST /api/sweep measured with curl. Prints numbers; asserts nothing about time.
#
# usage: bench/load_test.sh [path/to/vramplan] [seconds]   (default build/vramplan, 10 s)
#   WRK_CONNECTIONS (default 8), WRK_THREADS (default 2), SERVER_THREADS (default: vramplan's)
set -euo pipefail
cd "$(dirname "$0")/.."
vramplan="${1:-build/vramplan}"
seconds="${2:-10}"
connections="${WRK_CONNECTIONS:-8}"
for tool in wrk curl; do
  command -v "$tool" >/dev/null || { echo "load_test.sh: $tool is not installed (scripts/setup.sh)" >&2; exit 1; }
done
[[ -x "$vramplan" ]] || { echo "load_test.sh: no $vramplan (scripts/build.sh first)" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/vramplan-load.XXXXXX")"
server_args=(serve --host 127.0.0.1 --port 0 --quiet)
[[ -n "${SERVER_THREADS:-}" ]] && server_args+=(--threads "$SERVER_THREADS")
"$vramplan" "${server_args[@]}" >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's#^vramplan: serving http://127\.0\.0\.1:\([0-9]*\)/.*#\1#p' "$tmp/serve.out")
  [[ -n "$port" ]] && break
  sleep 0.1
done
[[ -n "$port" ]] || { echo "load_test.sh: the server did not start: $(cat "$tmp/serve.err")" >&2; exit 1; }
base="http://127.0.0.1:$port"

echo "== machine: $(nproc) CPUs; server: $vramplan on $base; wrk: ${WRK_THREADS:-2} threads," \
  "$connections connections, ${seconds}s"

bench_estimate() {
  local label="$1" scenario="$2" endpoint="${3:-/api/estimate}"
  local line
  line=$(VRAMPLAN_SCENARIO="$scenario" wrk -t"${WRK_THREADS:-2}" -c"$connections" -d"${seconds}s" \
    -s bench/estimate_post.lua "$base$endpoint" | grep '^RESULT')
  # shellcheck disable=SC2086
  local $(echo "${line#RESULT }")
  printf '%-44s %8s req/s   p50 %6s us   p90 %6s us   p99 %6s us   max %7s us   errors %s\n' \
    "$label" "$rps" "$p50_us" "$p90_us" "$p99_us" "$max_us" "$errors"
}

echo "== POST /api/estimate (full JSON with formulas, fit over the catalog)"
bench_estimate "Llama-3.1-8B, 8 GPUs, FSDP (dense)" \
  '{"model": "Llama-3.1-8B", "gpu": "h100-80gb", "gpus": 8, "seq_len": 8192, "global_batch": 64, "fsdp": "full_shard", "recompute": "selective"}'
bench_estimate "DeepSeek-V3, 1024 GPUs, pp 16 (MoE, MLA)" \
  '{"model": "DeepSeek-V3", "gpus": 1024, "tp": 2, "pp": 16, "ep": 64, "seq_len": 4096, "global_batch": 2048, "first_stage_layers": 4, "last_stage_layers": 1}'

echo "== POST /api/infer (serving memory, capacity at a fraction, fit over the catalog)"
bench_estimate "Llama-3.1-70B, TP 4, fp8 KV, vLLM at 0.9" \
  '{"model": "Llama-3.1-70B", "tp": 4, "kv_dtype": "fp8", "context": 32768, "gpu_memory_utilization": 0.9}' \
  /api/infer
bench_estimate "DeepSeek-V3, TP 8, fp8-block, SGLang 0.88" \
  '{"model": "DeepSeek-V3", "tp": 8, "weight_dtype": "fp8-block", "mem_fraction_static": 0.88, "gpu": "h200-141gb"}' \
  /api/infer

echo "== POST /api/sweep, 1,000 points (seq_len 128..128000 step 128), 5 runs"
sweep='{"scenario": {"model": "Llama-3.1-8B", "gpus": 8, "fsdp": "full_shard"}, "vary": "seq_len", "from": 128, "to": 128000, "step": 128}'
times=()
for _ in 1 2 3 4 5; do
  times+=("$(curl -s --noproxy '*' -o "$tmp/sweep.json" -w '%{time_total}' -X POST \
    -H 'Content-Type: application/json' --data-binary "$sweep" "$base/api/sweep")")
done
python3 - "$tmp/sweep.json" "${times[@]}" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
t = sorted(float(x) * 1000 for x in sys.argv[2:])
print(f"{d['count']} points ({d['errors']} errors), {len(json.dumps(d)) // 1024} KiB: "
      f"min {t[0]:.0f} ms, median {statistics.median(t):.0f} ms, max {t[-1]:.0f} ms")
PY
