// POST /api/plan and GET /api/plan/options: the layout planner over HTTP (docs/web-api.md). The
// answer is plan_to_json(), exactly what `vramplan plan --format json` prints.
#pragma once

#include <cstdint>

#include "server/api.h"
#include "vramplan/report/plan_report.h"

namespace vramplan::server {

// A search grows with the GPU count's divisors and the model's dimensions (DeepSeek-V3: 66
// million layouts, 15 s of one core, on 4,096 GPUs; 24 s on 16,384) and runs inside a request,
// so the server bounds it: at most kMaxPlanGpus GPUs and kMaxPlanThreads search threads per
// request (the CLI has neither limit). Larger values are refused with 400, never clamped.
inline constexpr int64_t kMaxPlanGpus = 4096;
inline constexpr int kMaxPlanThreads = 4;

Response handle_plan(const Request& request);
Response handle_plan_options(const Request& request);

}  // namespace vramplan::server
