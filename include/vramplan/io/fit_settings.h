// The "what fits" questions' settings: what `vramplan fit` flags and POST /api/fit bodies hold.
#pragma once

#include <nlohmann/json.hpp>

#include "vramplan/base/error.h"
#include "vramplan/io/scenario_io.h"
#include "vramplan/plan/fit_search.h"

namespace vramplan {

// A question from settings: fit_options() (question is required), the scenario keys (see
// scenario_io.h) and, for the GPU-count question, plan_options() (the planner's settings;
// global_batch is then required, as for `plan`). headroom applies to every question; the other
// planner keys only to the GPU-count one. The value searched may not be given too (micro_batch
// for the micro-batch question, ...): each such error names it.
Result<FitRequest> fit_request_from_settings(const nlohmann::json& settings,
                                             const FileReader& read_file);
Result<FitAnswer> fit_from_settings(const nlohmann::json& settings, const FileReader& read_file);

}  // namespace vramplan
