// The GPU-count question of fit_search.h: the smallest GPU count on which plan() finds a layout
// that fits.
#pragma once

#include "vramplan/plan/fit_search.h"

namespace vramplan {

// The largest GPU count the question searches to when no cap is given.
inline constexpr int64_t kFitMaxGpus = 16384;

// Counts tried, in order: powers of two below one node, then whole nodes by doubling; once a
// count fits, every node count between the last that did not and it. REQUIRES: a.limit_bytes,
// gpu and headroom are filled from request.plan.
Result<FitAnswer> fit_gpu_count(const FitRequest& request, FitAnswer a);

}  // namespace vramplan
