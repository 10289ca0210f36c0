// The planner's settings: what `vramplan plan` flags and POST /api/plan bodies hold.
#pragma once

#include <nlohmann/json.hpp>
#include <span>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/planner.h"

namespace vramplan {

// A plan from settings as the CLI and the HTTP API pass them: scenario keys (see scenario_io.h)
// plus plan_options(). Scenario keys that describe the layout (tp, pp, micro_batch, zero, ...)
// fix that dimension; global_batch is required.
Result<PlanRequest> plan_request_from_settings(const nlohmann::json& settings,
                                               const FileReader& read_file);
Result<PlanResult> plan_from_settings(const nlohmann::json& settings, const FileReader& read_file);

}  // namespace vramplan
