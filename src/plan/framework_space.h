// The planner's search space restricted to what the scenario's --framework runs.
#pragma once

#include <nlohmann/json.hpp>

#include "vramplan/base/error.h"
#include "vramplan/plan/planner.h"

namespace vramplan {

// `space` restricted to what the scenario's framework runs (none: unchanged). A dimension the
// settings fixed (a key present in `settings`) must be one the framework runs, else an Error
// naming the key, the value and what the framework accepts; the others take its list.
Result<PlanSpace> restrict_to_framework(PlanSpace space, const nlohmann::json& settings,
                                        const Scenario& scenario);

}  // namespace vramplan
