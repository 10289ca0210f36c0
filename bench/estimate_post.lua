-- wrk script for bench/load_test.sh: POST /api/estimate with one scenario, then one summary line
-- that the shell script parses (requests/s and latency percentiles in microseconds).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("VRAMPLAN_SCENARIO") or
  '{"model": "Llama-3.1-8B", "gpu": "h100-80gb", "gpus": 8, "seq_len": 8192, ' ..
  '"global_batch": 64, "fsdp": "full_shard", "recompute": "selective"}'

local non_200 = 0
function response(status, headers, body)
  if status ~= 200 then non_200 = non_200 + 1 end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d seconds=%.2f rps=%.0f p50_us=%d p90_us=%d p99_us=%d max_us=%d errors=%d\n",
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency.max,
    summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.status + summary.errors.timeout))
end
