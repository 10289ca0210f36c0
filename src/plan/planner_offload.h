// The planner's offload pass (PlanRequest::offload_search): when no layout fits with everything
// on the GPU, the space is searched again with each rung of an offload ladder — activations, the
// optimizer, the parameters, to the host and then to NVMe — and what fits is ranked by the same
// step time, which pays for the transfers and the CPU optimizer step (perf/step_time_offload.h).
#pragma once

#include <string>

#include "plan/planner_search.h"

namespace vramplan {

struct OffloadSearch {
  SearchResult found;  // every rung's layouts together (their offload in PlanLayout::offload)
  std::string note;    // what was tried and what fitted, in words
};

// REQUIRES: request.base offloads nothing; `timer` times layouts that offload.
OffloadSearch search_with_offload(const PlanRequest& request, const Scenario& neutral,
                                  const LayoutTimer& timer, int64_t limit_bytes);

}  // namespace vramplan
