-- wrk script for bench/saturation_test.sh: one endpoint (VRAMPLAN_METHOD, VRAMPLAN_BODY), the
-- answers counted by status across wrk's threads (200, 429, anything else), then one summary line
-- the shell script parses (requests/s and latency percentiles in microseconds).
wrk.method = os.getenv("VRAMPLAN_METHOD") or "POST"
if wrk.method == "POST" then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = os.getenv("VRAMPLAN_BODY")
end

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  ok, refused, other = 0, 0, 0
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
  elseif status == 429 then
    refused = refused + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local all_ok, all_refused, all_other = 0, 0, 0
  for _, thread in ipairs(threads) do
    all_ok = all_ok + thread:get("ok")
    all_refused = all_refused + thread:get("refused")
    all_other = all_other + thread:get("other")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d rps=%.1f p50_us=%d p99_us=%d max_us=%d ok=%d refused=%d other=%d " ..
    "socket_errors=%d timeouts=%d\n",
    summary.requests, summary.requests / seconds, latency:percentile(50),
    latency:percentile(99), latency.max, all_ok, all_refused, all_other,
    summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout))
end
